"""Eager mode against torch eager on the everyday workloads, in one run: scalar graphs
(recording and backward per op: a random graph, and neurons of 0-d leaf weights), an MLP
SGD step, an Elman RNN, Rosenbrock, and large elementwise arrays. Each library's result is
checked against torch's before timing; the libraries (and, with several thread counts, the
counts) take turns in blocks, round after round; medians of the rounds.

Run: taskset -c 1 python bench/bench_eager.py      (1 thread, pinned to one core)
     python bench/bench_eager.py --threads 1,2     (1 and 2 threads interleaved, both cores)
     python bench/bench_eager.py --rounds 40       (more rounds than each workload's own)
"""

import argparse
import statistics
import time

import numpy as np
import torch
from common import set_threads

import numbagrad as ng
from numbagrad.__main__ import scalar_graph

LIBS = {"numbagrad": ng, "torch": torch}
N_OPS, N_LEAVES = 10_000, 100


# ---- the workloads: make(lib) -> step() returning the seconds of each measure ---------------
def scalar(lib):
    init = np.random.default_rng(0).uniform(-1, 1, N_LEAVES)
    total = N_OPS + N_LEAVES - 1

    def step():
        t0 = time.perf_counter()
        leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in init]
        y = scalar_graph(lib, leaves, N_OPS)
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        step.result = y.item(), [np.nan if t.grad is None else t.grad.item() for t in leaves]
        return (t1 - t0) / total, (t2 - t1) / total
    return step


def neurons(lib, n_out=16, n_in=32, samples=8):
    """A scalar network as micrograd's users write it: tanh neurons whose weights are 0-d
    leaves, times each sample's inputs (Python floats), one op at a time."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((n_out, n_in)).tolist()
    xs = rng.standard_normal((samples, n_in)).tolist()
    total = samples * n_out * (2 * n_in + 1)

    def step():
        t0 = time.perf_counter()
        ws = [[lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in row] for row in w]
        loss = 0.0
        for x in xs:
            for row in ws:
                act = row[0] * x[0]
                for wi, xi in zip(row[1:], x[1:]):
                    act = act + wi * xi
                loss = loss + lib.tanh(act)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        step.result = loss.item(), [[t.grad.item() for t in row] for row in ws]
        return (t1 - t0) / total, (t2 - t1) / total
    return step


def mlp(lib):
    """784-256-256-10 ReLU MLP, float32, batch 64: zero_grad, forward, cross-entropy,
    backward, SGD step (as bench_mlp.py)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    # the same initial weights in both libraries
    for p, a in zip(model.parameters(), _mlp_init()):
        p.data = lib.tensor(a)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    xb, yb = lib.tensor(x), lib.tensor(y)

    def step():
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        opt.step()
        t1 = time.perf_counter()
        step.result = loss.item(), [p.grad.numpy().copy() for p in model.parameters()]
        return (t1 - t0,)
    return step


def _mlp_init():
    rng = np.random.default_rng(1)
    out = []
    for n_in, n_out in ((784, 256), (256, 256), (256, 10)):
        b = 1 / np.sqrt(n_in)
        out += [rng.uniform(-b, b, (n_out, n_in)).astype(np.float32),
                rng.uniform(-b, b, n_out).astype(np.float32)]
    return out


def rnn(lib, hidden=32, inputs=16, steps=100):
    """Elman RNN h = tanh(x_t W_ih^T + h W_hh^T + b), loss |h_T|^2, float32 (bench_compile.py)."""
    rng = np.random.default_rng(0)
    xs = lib.tensor(rng.standard_normal((steps, 1, inputs)).astype(np.float32))
    params = [(rng.standard_normal(s) * 0.2).astype(np.float32)
              for s in ((hidden, inputs), (hidden, hidden), (hidden,))]

    def step():
        t0 = time.perf_counter()
        w_ih, w_hh, b = ps = [lib.tensor(a, requires_grad=True) for a in params]
        h = lib.zeros((1, hidden), dtype=lib.float32)
        for t in range(steps):
            h = lib.tanh(xs[t] @ w_ih.T + h @ w_hh.T + b)
        loss = (h * h).sum()
        loss.backward()
        t1 = time.perf_counter()
        step.result = loss.item(), [p.grad.numpy() for p in ps]
        return (t1 - t0,)
    return step


def rosenbrock(lib, n=1000):
    x0 = np.random.default_rng(0).standard_normal(n)

    def step():
        t0 = time.perf_counter()
        x = lib.tensor(x0, requires_grad=True)
        v = (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        v.backward()
        t1 = time.perf_counter()
        step.result = v.item(), [x.grad.numpy()]
        return (t1 - t0,)
    return step


def elementwise(lib, n=4_000_000):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(n) for _ in range(3)]

    def step():
        t0 = time.perf_counter()
        x, w, b = ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        v = (lib.tanh(x * w + b) * lib.exp(-x * x) + 0.5 * (w - b) ** 2).sum()
        v.backward()
        t1 = time.perf_counter()
        step.result = v.item(), [t.grad.numpy() for t in ts]
        return (t1 - t0,)
    return step


# (row names, make, rtol of the check against torch, rounds, calls per block)
WORKLOADS = [
    (("10,000 scalar ops over 100 leaves, forward (recording) per op",
      "same, backward per op"), scalar, 1e-9, 15, 2),
    (("tanh neurons of 0-d leaf weights (16 x 32, 8 samples), forward (recording) per op",
      "same, backward per op"), neurons, 1e-9, 15, 2),
    (("MLP 784-256-256-10 float32, batch 64, SGD step",), mlp, 2e-4, 7, 30),
    (("Elman RNN h=32, T=100, float32, forward + backward",), rnn, 1e-4, 7, 10),
    (("Rosenbrock n=1000, value and gradient",), rosenbrock, 1e-10, 7, 100),
    (("3 x 4M float64 elementwise, forward + backward",), elementwise, 1e-9, 5, 3),
]


def check(name, ref, got, rtol):
    v_ref, g_ref = ref
    v, g = got
    assert np.isclose(v, v_ref, rtol=rtol), (name, v, v_ref)
    for a, b in zip(g, g_ref):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-2, err_msg=name)


def run(thread_counts, only, workloads=WORKLOADS):
    """Every workload at each thread count in ``thread_counts``: the libraries and the thread
    counts take turns block by block (the counts in alternating order), so the counts are
    compared in the same conditions."""
    rows = []
    for names, make, rtol, rounds, block in workloads:
        if only and make.__name__ not in only:
            continue
        steps = {label: make(lib) for label, lib in LIBS.items()}
        for n in thread_counts:
            set_threads(n)
            for s in steps.values():  # warm-up: compiles, or loads numbagrad's kernels
                for _ in range(3):
                    s()
        check(names[0], steps["torch"].result, steps["numbagrad"].result, rtol)
        samples = {(label, n): [] for n in thread_counts for label in steps}
        for r in range(rounds):
            # the counts' order alternates: each count follows the other as often
            for n in thread_counts if r % 2 == 0 else thread_counts[::-1]:
                set_threads(n)
                for label, s in steps.items():
                    s()  # not counted: it finds the caches holding the other one's data
                    for _ in range(block):
                        samples[label, n].append(s())
        for k, name in enumerate(names):
            med = {key: statistics.median(x[k] for x in xs) for key, xs in samples.items()}
            rows.append((name, med))
    print(f"\ntorch {torch.__version__}, numbagrad {ng.__version__}; ratio: numbagrad / torch")
    head = " | ".join(f"{n} thread(s): numbagrad | torch | ratio" for n in thread_counts)
    extra = f" | numbagrad at {thread_counts[-1]} / at {thread_counts[0]} threads" \
        if len(thread_counts) > 1 else ""
    print(f"| workload | {head}{extra} |")
    print("|---|" + "---|---|---|" * len(thread_counts) + ("---|" if extra else ""))
    for name, med in rows:
        cells = " | ".join(f"{fmt(med['numbagrad', n])} | {fmt(med['torch', n])} | "
                           f"{med['numbagrad', n] / med['torch', n]:.2f}x" for n in thread_counts)
        if extra:
            ours = [med["numbagrad", n] for n in (thread_counts[-1], thread_counts[0])]
            cells += f" | {ours[0] / ours[1]:.2f}x"
        print(f"| {name} | {cells} |")
    return rows


def fmt(t):
    if t >= 1e-3:
        return f"{t * 1e3:.2f} ms"
    if t >= 1e-6:
        return f"{t * 1e6:.2f} µs"
    return f"{t * 1e9:.1f} ns"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", default="1", help="comma-separated thread counts")
    p.add_argument("--only", default="", help="comma-separated workloads (scalar, mlp, ...)")
    p.add_argument("--rounds", type=int, default=0,
                   help="rounds of every workload (default: each workload's own, 5-15)")
    a = p.parse_args()
    only = set(filter(None, a.only.split(",")))
    workloads = [(n, m, r, a.rounds or k, b) for n, m, r, k, b in WORKLOADS]
    run([int(n) for n in a.threads.split(",")], only, workloads)


if __name__ == "__main__":
    main()
