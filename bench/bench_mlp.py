"""One SGD training step of an MLP 784-256-256-10 (ReLU, cross-entropy), batch 64, float32:
forward, backward, optimizer step, zero_grad; numbagrad vs torch, 1 and 2 threads, and the
same step written by hand in NumPy (no autograd) for reference.

Run: python bench/bench_mlp.py
"""

import numpy as np
import torch
from common import interleaved_medians, row, set_threads

import numbagrad


def setup(lib, x, y, model=None):
    """The step (zero_grad, forward, cross-entropy, backward, SGD step) of ``model``, by
    default the 784-256-256-10 MLP."""
    lib.manual_seed(0)
    nn = lib.nn
    if model is None:
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                              nn.Linear(256, 10))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    xb, yb = lib.tensor(x), lib.tensor(y)

    def step(_=None):
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        return loss
    return step


def numpy_step(x, y):
    """The same step written by hand in NumPy, no autograd: the floor an autograd of NumPy
    arrays approaches (the issue quotes it), reported beside torch."""
    rng = np.random.default_rng(0)

    def layer(n_in, n_out):
        bound = 1 / np.sqrt(n_in)
        return (rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32),
                rng.uniform(-bound, bound, n_out).astype(np.float32))

    params = [*layer(784, 256), *layer(256, 256), *layer(256, 10)]
    rows = np.arange(len(y))
    lr = np.float32(0.01)

    def step(_=None):
        w1, b1, w2, b2, w3, b3 = params
        h1 = x @ w1.T + b1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ w2.T + b2
        a2 = np.maximum(h2, 0)
        out = a2 @ w3.T + b3
        z = out - out.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss = -logp[rows, y].mean()
        g = np.exp(logp)
        g[rows, y] -= 1
        g /= len(y)
        g3w, g3b = g.T @ a2, g.sum(axis=0)
        g2 = (g @ w3) * (h2 > 0)
        g2w, g2b = g2.T @ a1, g2.sum(axis=0)
        g1 = (g2 @ w2) * (h1 > 0)
        g1w, g1b = g1.T @ x, g1.sum(axis=0)
        for p, gp in zip(params, (g1w, g1b, g2w, g2b, g3w, g3b)):
            p -= lr * gp
        return loss
    return step


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    print("| benchmark | numbagrad | torch 2.13 | ratio |")
    print("|---|---|---|---|")
    for threads in (1, 2):
        set_threads(threads)
        steps = {lib: setup(lib, x, y) for lib in (numbagrad, torch)}
        if threads == 1:  # NumPy's BLAS pool at one thread too (set_threads)
            steps[np] = numpy_step(x, y)
        for step in steps.values():
            for _ in range(10):
                step()
        # the steps take turns, so a slow spell of this shared machine hits all alike
        ours, theirs, *by_hand = interleaved_medians(list(steps.values()))
        print(row(f"MLP 784-256-256-10 SGD step, batch 64, float32, {threads} thread(s)",
                  ours, theirs))
        if by_hand:
            floor = row("the same step in hand-written NumPy (no autograd), 1 thread",
                        by_hand[0], theirs)
    print("\nFor reference, measured in the same run as the 1-thread row above:\n")
    print("| benchmark | NumPy by hand | torch 2.13 | ratio |")
    print("|---|---|---|---|")
    print(floor)

if __name__ == "__main__":
    main()
