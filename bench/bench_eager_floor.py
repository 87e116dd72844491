"""A floor for eager recording in Python: the RNN forward of bench_eager.py as NumPy calls
with one list append and one small object per op and no checks, against torch eager (forward;
forward and backward), 1 thread, medians of 15 rounds.

Run: taskset -c 1 python bench/bench_eager_floor.py
"""

import statistics
import time

import numpy as np
import torch

HIDDEN, INPUTS, STEPS = 32, 16, 100
rng = np.random.default_rng(0)
XS = rng.standard_normal((STEPS, 1, INPUTS)).astype(np.float32)
PARAMS = [(rng.standard_normal(s) * 0.2).astype(np.float32)
          for s in ((HIDDEN, INPUTS), (HIDDEN, HIDDEN), (HIDDEN,))]


class Node:
    __slots__ = ("d", "n", "g")

    def __init__(self, d, n):
        self.d, self.n, self.g = d, n, None


tape = []


def rec(code, out, *args):
    tape.append((code, out, args))
    return Node(out, len(tape) - 1)


def floor_forward():
    del tape[:]
    w_ih, w_hh, b = (Node(p, -1) for p in PARAMS)
    h = Node(np.zeros((1, HIDDEN), np.float32), -1)
    for t in range(STEPS):
        x = rec(1, XS[t])
        a = rec(2, w_ih.d.T, w_ih)
        m1 = rec(3, x.d @ a.d, x, a)
        c = rec(2, w_hh.d.T, w_hh)
        m2 = rec(3, h.d @ c.d, h, c)
        s1 = rec(4, m1.d + m2.d, m1, m2)
        s2 = rec(4, s1.d + b.d, s1, b)
        h = rec(5, np.tanh(s2.d), s2)
    sq = rec(6, h.d * h.d, h, h)
    return rec(7, sq.d.sum(), sq)


XS_TORCH = torch.tensor(XS)


def torch_forward(xs=XS_TORCH):
    w_ih, w_hh, b = (torch.tensor(a, requires_grad=True) for a in PARAMS)
    h = torch.zeros((1, HIDDEN), dtype=torch.float32)
    for t in range(STEPS):
        h = torch.tanh(xs[t] @ w_ih.T + h @ w_hh.T + b)
    return (h * h).sum()


def torch_forward_backward():
    torch_forward().backward()


def main():
    torch.set_num_threads(1)
    runs = {"floor forward (NumPy, a list append per op, no checks)": floor_forward,
            "torch forward": torch_forward, "torch forward + backward": torch_forward_backward}
    times = {name: [] for name in runs}
    for _ in range(15):
        for name, run in runs.items():
            t0 = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t0)
    for name, xs in times.items():
        print(f"{name}: {statistics.median(xs) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
