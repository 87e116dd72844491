"""3 float64 vectors of 4,000,000: sum(tanh(x*w+b)*exp(-x*x) + 0.5*(w-b)**2), forward and
backward: numbagrad eager, numbagrad.compile (value_and_grad on NumPy arrays) and torch eager.

Run: python bench/bench_elementwise.py
"""

import numpy as np
import torch
from common import median_time, row, set_threads

import numbagrad

N = 4_000_000


def f(lib, x, w, b):
    return (lib.tanh(x * w + b) * lib.exp(-x * x) + 0.5 * (w - b) ** 2).sum()


def leaves(lib, arrays):
    return [lib.tensor(a, requires_grad=True) for a in arrays]


def measure(lib, arrays):
    def fwd(_):
        return f(lib, *leaves(lib, arrays))

    def setup():
        return f(lib, *leaves(lib, arrays))

    setup().backward()  # warm-up
    t_fwd = median_time(fwd, repeat=5)
    t_bwd = median_time(lambda out: out.backward(), repeat=5, setup=setup)
    return t_fwd, t_bwd


def measure_compiled(arrays):
    """numbagrad.compile(value_and_grad(f, argnums=(0, 1, 2))): one replay call per step."""
    vg = numbagrad.compile(numbagrad.func.value_and_grad(
        lambda x, w, b: f(numbagrad, x, w, b), argnums=(0, 1, 2)))
    value, grads = vg(*arrays)  # trace (and load the replay module)
    return median_time(lambda _: vg(*arrays), repeat=5), value, grads


def main():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(N) for _ in range(3)]
    xs_n, xs_t = leaves(numbagrad, arrays), leaves(torch, arrays)
    f(numbagrad, *xs_n).backward()
    f(torch, *xs_t).backward()
    for a, b in zip(xs_n, xs_t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    for threads in (1, 2):
        set_threads(threads)
        f_ng, b_ng = measure(numbagrad, arrays)
        f_t, b_t = measure(torch, arrays)
        print(f"\n3 x {N:,} float64, {threads} thread(s)")
        print("| measure | numbagrad | torch 2.13 | ratio |")
        print("|---|---|---|---|")
        print(row("forward", f_ng, f_t))
        print(row("backward", b_ng, b_t))
        print(row("forward + backward", f_ng + b_ng, f_t + b_t))
        c_ng, value, grads = measure_compiled(arrays)
        for g, t in zip(grads, xs_t):
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-9, atol=1e-12)
        print(row("forward + backward, numbagrad.compile", c_ng, f_t + b_t))


if __name__ == "__main__":
    main()
