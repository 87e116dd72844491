"""Hessian-vector products of a 1,000-parameter function, by double backward, against torch.

f(x) = extended Rosenbrock (n = 1000) + a small softmax-regression term; the HVP is
grad(<grad(f, x, create_graph=True), v>, x): the first backward is recorded (create_graph),
the second runs the compiled sweep over the recorded gradient graph. Both also reported:
an eager scalar-graph HVP (100 parameters, one op per term) where per-op costs dominate.

The same HVP through numbagrad.compile is reported beside them: the transform
``grad(x -> <grad(f)(x), v>)`` traced once, each call one replay of forward, first backward
(recorded) and second backward inside Numba, on NumPy arrays.

Run: python bench/bench_hvp.py
"""

import numpy as np
import torch
from common import median_time, row, set_threads

import numbagrad

N = 1000


def rosenbrock(lib, x, a):
    # x: (N,), a: (20, N): sum of 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2, plus logsumexp(a @ x)
    r = (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()
    return r + (a @ x).logsumexp(0)


def hvp(lib, f, x0, v, *extra):
    x = lib.tensor(x0, requires_grad=True)
    (g,) = lib.autograd.grad(f(lib, x, *extra), x, create_graph=True)
    (hv,) = lib.autograd.grad((g * v).sum(), x)
    return hv


def scalar_f(lib, xs):
    out = xs[0] * 0.0
    for i in range(len(xs) - 1):
        out = out + 100.0 * (xs[i + 1] - xs[i] * xs[i]) ** 2 + (1.0 - xs[i]) ** 2
    return out


def scalar_hvp(lib, x0, v):
    xs = [lib.tensor(float(c), dtype=lib.float64, requires_grad=True) for c in x0]
    gs = lib.autograd.grad(scalar_f(lib, xs), xs, create_graph=True)
    s = gs[0] * float(v[0])
    for g, c in zip(gs[1:], v[1:]):
        s = s + g * float(c)
    return lib.autograd.grad(s, xs)


def compiled_hvp(a):
    """numbagrad.compile(func.grad(x, v -> <grad(f)(x), v>)): NumPy x, v in, Hv out."""
    fn = numbagrad.func
    a_t = numbagrad.tensor(a)

    def f(x):
        return rosenbrock(numbagrad, x, a_t)

    return numbagrad.compile(fn.grad(lambda x, v: (fn.grad(f)(x) * v).sum()))


def main():
    rng = np.random.default_rng(0)
    x0, v = rng.uniform(-1, 1, N), rng.standard_normal(N)
    a = rng.standard_normal((20, N)) / np.sqrt(N)
    ours = hvp(numbagrad, rosenbrock, x0, numbagrad.tensor(v), numbagrad.tensor(a)).numpy()
    theirs = hvp(torch, rosenbrock, x0, torch.tensor(v), torch.tensor(a)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)
    hvp_c = compiled_hvp(a)
    np.testing.assert_allclose(hvp_c(x0, v), theirs, rtol=1e-9, atol=1e-9)
    xs0, vs = x0[:100], v[:100]
    s_ours = np.array([t.item() for t in scalar_hvp(numbagrad, xs0, vs)])
    s_theirs = np.array([t.item() for t in scalar_hvp(torch, xs0, vs)])
    np.testing.assert_allclose(s_ours, s_theirs, rtol=1e-9, atol=1e-9)
    print("| benchmark (float64) | numbagrad | torch | ratio |")
    print("|---|---|---|---|")
    for threads in (1, 2):
        set_threads(threads)
        args_n = (numbagrad.tensor(v), numbagrad.tensor(a))
        args_t = (torch.tensor(v), torch.tensor(a))
        t_n = median_time(lambda _: hvp(numbagrad, rosenbrock, x0, *args_n), repeat=21)
        t_t = median_time(lambda _: hvp(torch, rosenbrock, x0, *args_t), repeat=21)
        print(row(f"HVP, vectorized Rosenbrock+logsumexp n=1000, {threads} thread(s)", t_n, t_t))
        t_c = median_time(lambda _: hvp_c(x0, v), repeat=201)
        print(row(f"same HVP, numbagrad.compile (vs torch eager), {threads} thread(s)", t_c,
                  t_t))
    set_threads(1)
    t_n = median_time(lambda _: scalar_hvp(numbagrad, xs0, vs), repeat=5)
    t_t = median_time(lambda _: scalar_hvp(torch, xs0, vs), repeat=5)
    print(row("HVP, scalar graph (100 leaves, ~900 ops), 1 thread", t_n, t_t))


if __name__ == "__main__":
    main()
