"""One optimizer step over the parameters of an MLP 784-256-256-10 (float32, 269,322 values):
SGD with momentum and Adam, numbagrad against torch, 1 and 2 threads. Then the same over a
wider MLP 1024-1024-1024-10 (2.1M values), above the size from which numbagrad splits a
group's update over threads (optimizer.PARALLEL_MIN).

The gradients are fixed random arrays (the step's cost does not depend on their values), so
a step is timed alone: gathering the group, the update kernel, the version counters.

Run: python bench/bench_optim.py
"""

import numpy as np
import torch
from common import median_time, row, set_threads

import numbagrad
import numbagrad.optim

MODELS = {"MLP 784-256-256-10": [(256, 784), (256,), (256, 256), (256,), (10, 256), (10,)],
          "MLP 1024-1024-1024-10": [(1024, 1024), (1024,), (1024, 1024), (1024,), (10, 1024),
                                    (10,)]}
CASES = [("SGD momentum=0.9", "SGD", {"lr": 0.01, "momentum": 0.9}),
         ("Adam", "Adam", {"lr": 1e-3})]


def make(lib, optim, name, kw, arrays, grads):
    params = [lib.tensor(a, requires_grad=True) for a in arrays]
    for p, g in zip(params, grads):
        p.grad = lib.tensor(g)
    opt = getattr(optim, name)(params, **kw)
    opt.step()  # state created, kernels compiled
    return params, opt


def check(name, kw, arrays, grads):
    """The two libraries' parameters after 5 steps agree (float32 rounding)."""
    ours, o1 = make(numbagrad, numbagrad.optim, name, kw, arrays, grads)
    theirs, o2 = make(torch, torch.optim, name, kw, arrays, grads)
    for _ in range(4):
        o1.step()
        o2.step()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def main():
    print("| model | step | threads | numbagrad | torch 2.13 | ratio |")
    print("|---|---|---|---|---|---|")
    for model, shapes in MODELS.items():
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal(s).astype(np.float32) * 0.05 for s in shapes]
        grads = [rng.standard_normal(s).astype(np.float32) * 0.01 for s in shapes]
        n = sum(a.size for a in arrays)
        for _label, name, kw in CASES:
            check(name, kw, arrays, grads)
        for threads in (1, 2):
            set_threads(threads)
            for label, name, kw in CASES:
                _, o1 = make(numbagrad, numbagrad.optim, name, kw, arrays, grads)
                _, o2 = make(torch, torch.optim, name, kw, arrays, grads)
                ours = median_time(lambda _, o=o1: o.step(), repeat=51)
                theirs = median_time(lambda _, o=o2: o.step(), repeat=51)
                print(row(f"{model} ({n:,} float32) | {label} | {threads}", ours, theirs))


if __name__ == "__main__":
    main()
