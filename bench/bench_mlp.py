"""One SGD training step of an MLP 784-256-256-10 (ReLU, cross-entropy), batch 64, float32:
forward, backward, optimizer step, zero_grad; numbagrad vs torch, 1 and 2 threads.

Run: python bench/bench_mlp.py
"""

import numpy as np
import torch
from common import median_time, row, set_threads

import numbagrad


def setup(lib, x, y):
    lib.manual_seed(0)
    nn = lib.nn
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


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    print("| benchmark | numbagrad | torch 2.13 | ratio |")
    print("|---|---|---|---|")
    for threads in (1, 2):
        set_threads(threads)
        steps = {lib: setup(lib, x, y) for lib in (numbagrad, torch)}
        for step in steps.values():
            for _ in range(10):
                step()
        ours = median_time(steps[numbagrad], repeat=51)
        theirs = median_time(steps[torch], repeat=51)
        print(row(f"MLP 784-256-256-10 SGD step, batch 64, float32, {threads} thread(s)",
                  ours, theirs))


if __name__ == "__main__":
    main()
