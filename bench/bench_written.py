"""A recurring graph's backward written out (numbagrad/autograd/written.py): what writing
it costs once, and what it saves at every later step.

* build: the time to write out and compile the backward of a chain of big elementwise
  nodes (paid once, at the graph's second backward), per node written;
* steps: the MLP step of bench_mlp.py with the written backward and with every backward
  interpreted, beside torch's, interleaved in one process (1 thread).

Run: python bench/bench_written.py
"""

import time

import numpy as np
import torch
from bench_mlp import setup
from common import interleaved_medians, set_threads

import numbagrad
from numbagrad.autograd import written


def build_cost(n):
    """(seconds, nodes written) of writing out the backward of a chain of ``n`` steps (an
    add, or a scale and a tanh) on 200 x 200 float32 arrays."""
    built = []
    original = written.build

    def timed(run, log):
        t0 = time.perf_counter()
        fn = original(run, log)
        built.append((time.perf_counter() - t0, len(log)))
        return fn

    written.build = timed
    try:
        x = numbagrad.tensor(np.ones((200, 200), np.float32), requires_grad=True)
        for _ in range(2):  # the second backward of the graph is written out
            h = x
            for i in range(n):
                h = (h * 1.001).tanh() if i % 2 else h + x
            h.sum().backward()
    finally:
        written.build = original
    return built[-1]


class Interpreted:
    """A step run with every backward interpreted (the engine before written.py)."""

    def __init__(self, step):
        self.step = step

    def __call__(self):
        eligible = written.eligible
        written.eligible = lambda *args: False
        try:
            self.step()
        finally:
            written.eligible = eligible


def main():
    set_threads(1)
    print("| big nodes written | build (once) | per node |")
    print("|---|---|---|")
    for n in (10, 100, 300):
        cost, nodes = build_cost(n)
        print(f"| {nodes} | {cost * 1e3:.1f} ms | {cost / nodes * 1e6:.0f} µs |")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    steps = [setup(numbagrad, x, y), Interpreted(setup(numbagrad, x, y)), setup(torch, x, y)]
    for step in steps:
        for _ in range(10):
            step()
    ours, interpreted, theirs = interleaved_medians(steps, rounds=20)
    print("\n| MLP 784-256-256-10 SGD step, batch 64, float32, 1 thread | time | / torch |")
    print("|---|---|---|")
    for name, t in (("numbagrad, backward written out", ours),
                    ("numbagrad, backward interpreted", interpreted), ("torch 2.13", theirs)):
        print(f"| {name} | {t * 1e3:.3f} ms | {t / theirs:.2f}x |")


if __name__ == "__main__":
    main()
