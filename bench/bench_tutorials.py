"""Two workloads of the public tutorials against torch eager, in one run: the time-sequence
example's LSTMCell loop (999 steps, batch 97, forward and backward) and torch.func.jacfwd of
a 2048 x 32 Jacobian. Each library's result is checked against torch's first; the libraries
take turns in blocks, round after round; medians of the rounds (bench_eager.run).

Run: taskset -c 1 python bench/bench_tutorials.py
"""

import time

import numpy as np
from bench_eager import run

STEPS, BATCH, HIDDEN = 999, 97, 51


def lstm_cell(lib):
    rng = np.random.default_rng(0)
    xs = lib.tensor(rng.standard_normal((STEPS, BATCH, HIDDEN)) * 0.1)
    lib.manual_seed(0)
    cell = lib.nn.LSTMCell(HIDDEN, HIDDEN).double()
    init = [rng.standard_normal(tuple(p.shape)) * 0.1 for p in cell.parameters()]
    for p, a in zip(cell.parameters(), init):  # the same weights in both libraries
        p.data = lib.tensor(a)

    def step():
        t0 = time.perf_counter()
        cell.zero_grad()
        h = c = lib.zeros(BATCH, HIDDEN, dtype=lib.float64)
        for t in range(STEPS):
            h, c = cell(xs[t], (h, c))
        loss = (h * h).sum()
        loss.backward()
        t1 = time.perf_counter()
        step.result = loss.item(), [p.grad.numpy().copy() for p in cell.parameters()]
        return (t1 - t0,)
    return step


def jacfwd(lib):
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((2048, 32)))
    x = lib.tensor(rng.standard_normal(32))
    fn = lib.func.jacfwd(lambda v: lib.tanh(a @ v) * v.sum())

    def step():
        t0 = time.perf_counter()
        j = fn(x)
        t1 = time.perf_counter()
        step.result = float(j.sum()), [j.numpy()]
        return (t1 - t0,)
    return step


WORKLOADS = [
    (("LSTMCell(51, 51) loop, 999 steps of batch 97, forward + backward, float64",),
     lstm_cell, 1e-9, 3, 1),
    (("jacfwd of tanh(A @ v) * sum(v), A 2048 x 32, float64",), jacfwd, 1e-9, 5, 5),
]

if __name__ == "__main__":
    import numbagrad.func  # noqa: F401 - binds numbagrad.func
    run([1], None, WORKLOADS)
