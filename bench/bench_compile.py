"""Compiled replay (numbagrad.compile) against torch and hand-written NumPy, 1 thread:
Rosenbrock n = 1000 value_and_grad, the 10,000-op scalar graph of 100 leaves indexing one
input vector (plus trace + compile time of that graph with a warm cache, and a graph whose
every op reaches the output), and an Elman RNN (hidden 32, input 16, 100 steps, float32).

Run: python bench/bench_compile.py  (only the RNN row: python bench/bench_compile.py rnn)
"""

import time

import numpy as np
import torch
from common import median_time, set_threads

import numbagrad as ng
import numbagrad.func  # noqa: F401
from numbagrad.__main__ import scalar_graph


def rosenbrock(lib, x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def rosen_numpy(x):
    a = x[1:] - x[:-1] ** 2
    b = 1 - x[:-1]
    g = np.zeros_like(x)
    g[1:] += 200 * a
    g[:-1] += -400 * a * x[:-1] - 2 * b
    return (100 * a * a + b * b).sum(), g


def torch_value_and_grad(f):
    def vg(x):
        t = torch.tensor(x, requires_grad=True)
        v = f(torch, t)
        v.backward()
        return v.item(), t.grad.numpy()
    return vg


def per_call(fn, x, repeat=2001):
    return median_time(lambda _: fn(x), repeat=repeat)


def main():
    set_threads(1)
    print("| benchmark | numbagrad.compile | torch 2.13 | ratio | hand NumPy |")
    print("|---|---|---|---|---|")
    x = np.random.default_rng(0).standard_normal(1000)
    ours = ng.compile(ng.func.value_and_grad(lambda t: rosenbrock(ng, t)))
    theirs = torch_value_and_grad(rosenbrock)
    v1, g1 = ours(x)
    v2, g2 = theirs(x)
    assert np.isclose(v1, v2) and np.allclose(g1, g2)
    t_ours, t_torch, t_np = per_call(ours, x), per_call(theirs, x), per_call(rosen_numpy, x)
    print(f"| Rosenbrock n=1000 value_and_grad | {t_ours * 1e6:.1f} us | {t_torch * 1e6:.1f} us "
          f"| {t_ours / t_torch:.2f}x | {t_np * 1e6:.1f} us |")

    def graph(lib, v):
        return scalar_graph(lib, [v[i] for i in range(100)], 10_000)
    xs = np.random.default_rng(1).uniform(-1, 1, 100)
    t0 = time.perf_counter()
    ours = ng.compile(ng.func.value_and_grad(lambda t: graph(ng, t)))
    ours(xs)
    trace = time.perf_counter() - t0
    theirs = torch_value_and_grad(graph)
    v1, g1 = ours(xs)
    v2, g2 = theirs(xs)
    assert np.isclose(v1, v2) and np.allclose(g1, g2)
    t_ours, t_torch = per_call(ours, xs, 101), per_call(theirs, xs, 5)
    n_ops = 10_000
    program = next(iter(ours.traces.values()))
    executed = len(program.stream[0]) if program.stream is not None else len(program.nodes)
    print(f"| 10,000-op scalar graph, forward+backward per op | {t_ours / n_ops * 1e9:.1f} ns "
          f"| {t_torch / n_ops * 1e9:.1f} ns | {t_ours / t_torch:.3f}x | — |")
    print(f"| same graph: trace + compile (this process's first call) | {trace:.2f} s | — | — "
          "| — |")
    print(f"| (same graph: {executed:,} of {len(program.nodes):,} recorded nodes reach the "
          f"output; per executed instruction) | {t_ours / executed * 1e9:.1f} ns | — | — "
          "| — |")

    # every op reaches the output: no dead code for the replay to drop
    def live(lib, v):
        return live_scalar_graph(lib, [v[i] for i in range(100)], 5_000)
    ours = ng.compile(ng.func.value_and_grad(lambda t: live(ng, t)))
    theirs = torch_value_and_grad(live)
    v1, g1 = ours(xs)
    v2, g2 = theirs(xs)
    assert np.isclose(v1, v2) and np.allclose(g1, g2)
    program = next(iter(ours.traces.values()))
    executed = len(program.stream[0])
    t_ours, t_torch = per_call(ours, xs, 101), per_call(theirs, xs, 5)
    print(f"| 5,000-op scalar graph, every op live ({executed:,} instructions), per "
          f"instruction | {t_ours / executed * 1e9:.1f} ns | {t_torch / executed * 1e9:.1f} ns "
          f"| {t_ours / t_torch:.3f}x | — |")

    rnn_row()


def rnn_loss(lib, params, xs, hidden=32):
    """Elman RNN: h = tanh(x_t W_ih^T + h W_hh^T + b) over the sequence; loss = |h_T|^2."""
    w_ih, w_hh, b = params
    h = lib.zeros((1, hidden), dtype=lib.float32)
    for t in range(xs.shape[0]):
        h = lib.tanh(xs[t] @ w_ih.T + h @ w_hh.T + b)
    return (h * h).sum()


def rnn_row(hidden=32, inputs=16, steps=100):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((steps, 1, inputs)).astype(np.float32)
    params = tuple((rng.standard_normal(s) * 0.2).astype(np.float32)
                   for s in ((hidden, inputs), (hidden, hidden), (hidden,)))
    ours = ng.compile(ng.func.value_and_grad(lambda p, x: rnn_loss(ng, p, x)))

    def theirs(p, x):
        ps = [torch.tensor(a, requires_grad=True) for a in p]
        loss = rnn_loss(torch, ps, torch.tensor(x))
        loss.backward()
        return loss.item(), [q.grad.numpy() for q in ps]
    v1, g1 = ours(params, xs)
    v2, g2 = theirs(params, xs)
    assert np.isclose(v1, v2, rtol=1e-5) and all(
        np.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(g1, g2))
    t_ours = median_time(lambda _: ours(params, xs), repeat=51)
    t_torch = median_time(lambda _: theirs(params, xs), repeat=11)
    print(f"| Elman RNN h={hidden} in={inputs} T={steps} float32, forward+backward | "
          f"{t_ours * 1e3:.2f} ms | {t_torch * 1e3:.2f} ms | {t_ours / t_torch:.2f}x | — |")


def live_scalar_graph(lib, leaves, n_ops):
    """scalar_graph's ops, then the sum of every value: each op reaches the output."""
    rng = np.random.default_rng(0)
    kinds = rng.integers(0, 5, n_ops)
    picks = rng.integers(0, 1 << 30, (n_ops, 2))
    vals = list(leaves)
    for k, (i, j) in zip(kinds, picks):
        a, b = vals[i % len(vals)], vals[j % len(vals)]
        vals.append([lambda: a * b, lambda: a + b, lambda: lib.tanh(a),
                     lambda: a - b * 0.5, lambda: lib.sin(a) * 0.9][k]())
    total = vals[len(leaves)]
    for v in vals[len(leaves) + 1:]:
        total = total + v
    return total


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["rnn"]:
        set_threads(1)
        rnn_row()
    else:
        main()
