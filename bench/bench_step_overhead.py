"""The Python cost of a training step, without its arithmetic: the MLP step of bench_mlp.py
shrunk to 32-16-16-4, batch 8, with every node on the big-node path the real step's nodes
take (NUMBAGRAD_BIG_THRESHOLD=1), so that what is timed is recording, the backward's
per-node Python, the hand-over to .grad and the optimizer's call, not matrix products.
On this noisy VM it is the steadier measure of that overhead: the 784-256-256-10 step's
~1 ms of products vary by more than the overhead changes being measured.

Run: python bench/bench_step_overhead.py
"""

import os

os.environ.setdefault("NUMBAGRAD_BIG_THRESHOLD", "1")  # before numbagrad is imported

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_mlp import setup  # noqa: E402
from common import interleaved_medians, row, set_threads  # noqa: E402

import numbagrad  # noqa: E402


def tiny_setup(lib, x, y):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                          nn.Linear(16, 4))
    return setup(lib, x, y, model)


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 32)).astype(np.float32)
    y = rng.integers(0, 4, 8)
    set_threads(1)
    steps = [tiny_setup(lib, x, y) for lib in (numbagrad, torch)]
    for step in steps:
        for _ in range(50):
            step()
    ours, theirs = interleaved_medians(steps, rounds=20, block=101)
    print("| benchmark | numbagrad | torch 2.13 | ratio |")
    print("|---|---|---|---|")
    print(row("MLP 32-16-16-4 SGD step, batch 8, float32, every node big, 1 thread", ours,
              theirs, "µs", 1e6))


if __name__ == "__main__":
    main()
