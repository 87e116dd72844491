"""The README's table: numbagrad against torch (eager and torch.compile) and jax.jit in one
run, 1 thread, on four workloads. Every library's result is checked equal to numbagrad's
before timing; first calls (tracing and compiling) are reported apart, and per-call times
are interleaved medians (common.interleaved_medians).

Run: python bench/bench_peers.py   (a peer that is not installed, or fails to compile,
shows as "—" with the reason printed)
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import functools  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from common import interleaved_medians, set_threads  # noqa: E402

import numbagrad as ng  # noqa: E402
from numbagrad.__main__ import scalar_graph  # noqa: E402

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:  # the table shows "—" for JAX
    jax = jnp = None


# ---- the workloads, written once for any array library ------------------------------------
def rosenbrock(lib, x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def elementwise(lib, x, w, b):
    return (lib.tanh(x * w + b) * lib.exp(-x * x) + 0.5 * (w - b) ** 2).sum()


def scalar_10k(lib, v):
    return scalar_graph(lib, [v[i] for i in range(100)], 10_000)


def mlp_loss(lib, params, x, y):
    """784-256-256-10 ReLU MLP, mean cross-entropy; params = (w1, b1, w2, b2, w3, b3)."""
    w1, b1, w2, b2, w3, b3 = params
    h = lib.maximum(x @ w1 + b1, 0.0) if lib is jnp else (x @ w1 + b1).relu()
    h = lib.maximum(h @ w2 + b2, 0.0) if lib is jnp else (h @ w2 + b2).relu()
    z = h @ w3 + b3
    if lib is jnp:
        logp = jax.nn.log_softmax(z, axis=1)
        return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()
    return lib.nn.functional.cross_entropy(z, y)


# ---- each library's value_and_grad of f(*arrays) -> (value, grads) -------------------------
def torch_eager(f):
    def vg(*xs):
        ts = [torch.tensor(a, requires_grad=True) for a in xs]
        v = f(torch, *ts)
        v.backward()
        return v.item(), [t.grad.numpy() for t in ts]
    return vg


def torch_compiled(f):
    fc = torch.compile(lambda *ts: f(torch, *ts), dynamic=False)

    def vg(*xs):
        ts = [torch.tensor(a, requires_grad=True) for a in xs]
        v = fc(*ts)
        v.backward()
        return v.item(), [t.grad.numpy() for t in ts]
    return vg


def jax_jit(f):
    def vg(*xs):
        if vg.fn is None:
            argnums = tuple(range(len(xs)))
            vg.fn = jax.jit(jax.value_and_grad(lambda *a: f(jnp, *a), argnums=argnums))
        v, gs = vg.fn(*xs)
        return float(v), [np.asarray(g) for g in gs]
    vg.fn = None
    return vg


def ng_compiled(f):
    def call(*xs):
        if call.fn is None:
            argnums = tuple(range(len(xs)))
            call.fn = ng.compile(ng.func.value_and_grad(lambda *ts: f(ng, *ts), argnums))
        v, gs = call.fn(*xs)
        return v, list(gs)
    call.fn = None
    return call


def ng_eager(f):
    def vg(*xs):
        ts = [ng.tensor(a, requires_grad=True) for a in xs]
        v = f(ng, *ts)
        v.backward()
        return v.item(), [t.grad.numpy() for t in ts]
    return vg


def first_call(fn, args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def measure(name, f, args, makers, rtol):
    """One table row: the per-call time of each maker's value_and_grad of f, as a ratio
    to torch eager's, with first-call times."""
    fns, firsts, ref = {}, {}, None
    for label, make in makers.items():
        try:
            fn = make(f)
            (v, gs), t_first = first_call(fn, args)
        except Exception as e:  # a peer that cannot run this workload: "—", reason printed
            print(f"  ({name}: {label} skipped: {type(e).__name__}: {str(e)[:120]})")
            continue
        if ref is None:
            ref = (v, gs)
        assert np.isclose(v, ref[0], rtol=rtol), (name, label, v, ref[0])
        for g, r in zip(gs, ref[1]):
            np.testing.assert_allclose(g, r, rtol=rtol, atol=rtol * 1e-3)
        fns[label], firsts[label] = fn, t_first
    times = dict(zip(fns, interleaved_medians([lambda fn=fn: fn(*args) for fn in fns.values()],
                                              rounds=7, block=5)))
    return times, firsts


def ratio(r):
    return f"{r:.2f}x" if r >= 0.01 else f"{r:.4f}x"


def fmt(t):
    return f"{t * 1e3:.2f} ms" if t >= 1e-3 else f"{t * 1e6:.0f} µs"


def main():
    set_threads(1)
    rng = np.random.default_rng(0)
    makers = {"numbagrad.compile": ng_compiled, "numbagrad eager": ng_eager,
              "torch eager": torch_eager, "torch.compile": torch_compiled}
    if jax is not None:
        makers["jax.jit"] = jax_jit
    n4m = 4_000_000
    x784 = (rng.standard_normal((64, 784)) * 0.5).astype(np.float32)
    sizes = ((784, 256), (256,), (256, 256), (256,), (256, 10), (10,))
    params = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in sizes]
    labels = rng.integers(0, 10, 64)
    workloads = [
        ("Rosenbrock n = 1000, value and gradient", rosenbrock,
         (rng.standard_normal(1000),), 1e-10, makers),
        ("3 x 4,000,000 elementwise, value and 3 gradients", elementwise,
         tuple(rng.standard_normal(n4m) for _ in range(3)), 1e-9, makers),
        ("10,000 scalar ops over 100 inputs, value and gradient", scalar_10k,
         (rng.uniform(-1, 1, 100),), 1e-9,
         {k: v for k, v in makers.items() if k in ("numbagrad.compile", "numbagrad eager",
                                                   "torch eager")}),
    ]
    rows = []
    for name, f, args, rtol, mk in workloads:
        rows.append((name, *measure(name, f, args, mk, rtol)))
    mlp_makers = {k: functools.partial(mlp_grads, v) for k, v in makers.items()}
    rows.append(("MLP 784-256-256-10 float32, batch 64, loss and gradients",
                 *measure("MLP", mlp_loss_flat, (*params, x784, labels), mlp_makers, 2e-4)))
    labels_ = list(makers)
    print("\n| workload (1 thread) | " + " | ".join(labels_) + " |")
    print("|---|" + "---|" * len(labels_))
    for name, times, _ in rows:
        base = times.get("torch eager")
        cells = [f"{fmt(times[k])} ({ratio(times[k] / base)})" if k in times else "—"
                 for k in labels_]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\nFirst call in this process (tracing and compiling; kernels of numbagrad from "
          "its disk cache when warm):")
    for name, _, firsts in rows:
        print(f"- {name}: " + ", ".join(f"{k} {v:.2f} s" for k, v in firsts.items()))


def mlp_loss_flat(lib, *a):
    return mlp_loss(lib, a[:6], a[6], a[7])


def mlp_grads(make, f):
    """value_and_grad over the 6 parameters only: x (float32) and y (int64) are data."""
    if make is jax_jit:
        fn = jax.jit(jax.value_and_grad(lambda p, x, y: f(jnp, *p, x, y)))

        def vg(*a):
            v, gs = fn(tuple(a[:6]), a[6], a[7])
            return float(v), [np.asarray(g) for g in gs]
        return vg
    if make is ng_compiled:
        # the integer labels reach the function as a Tensor; their values are part of the
        # trace's signature (new labels: a new trace)
        fn = ng.compile(ng.func.value_and_grad(lambda p, x, y: f(ng, *p, x, y)))

        def vg(*a):
            v, gs = fn(tuple(a[:6]), a[6], a[7])
            return v, list(gs)
        return vg
    lib = torch if make in (torch_eager, torch_compiled) else ng
    body = (torch.compile(lambda *t: f(torch, *t), dynamic=False) if make is torch_compiled
            else (lambda *t: f(lib, *t)))

    def vg(*a):
        ps = [lib.tensor(p, requires_grad=True) for p in a[:6]]
        v = body(*ps, lib.tensor(a[6]), lib.tensor(a[7]))
        v.backward()
        return v.item(), [p.grad.numpy() for p in ps]
    return vg


if __name__ == "__main__":
    main()
