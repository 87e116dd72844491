"""numbagrad.compile against jax.jit (and CasADi on the scalar graph, hand-written NumPy on
Rosenbrock) on the compiled path's everyday workloads, in one run, 1 thread: an MLP's
value_and_grad with integer labels passed as an argument, an Elman RNN (jax: lax.scan),
3 x 4M elementwise arrays (beside the memory floor: the same arrays' traffic as three
copies), 10,000 scalar ops, Rosenbrock. Every result is checked against
numbagrad eager's first; the callers take turns block by block, round after round
(common.interleaved_medians). CasADi is optional (`pip install casadi`): without it its
cell shows "—".

Run: taskset -c 1 python bench/bench_compiled_peers.py [--rounds N] [--only RNN]
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402
from bench_compile import rnn_loss  # noqa: E402
from bench_peers import elementwise, mlp_loss_flat, rosenbrock  # noqa: E402
from common import interleaved_medians, set_threads  # noqa: E402

import numbagrad as ng  # noqa: E402
import numbagrad.func  # noqa: E402, F401
from numbagrad.__main__ import scalar_graph  # noqa: E402

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None
try:
    import casadi
except ImportError:
    casadi = None

N_OPS = 10_000
FLOOR = "memory floor (3 copies)"


def _ng_compiled(f):
    fn = ng.compile(ng.func.value_and_grad(f, argnums=0))
    return lambda *a: fn(*a)


def _ng_eager(f):
    def vg(p, *rest):
        ps = [ng.tensor(q, requires_grad=True) for q in p] if isinstance(p, (tuple, list)) \
            else ng.tensor(p, requires_grad=True)
        v = f(ps, *[ng.tensor(r) for r in rest])
        v.backward()
        g = [q.grad.numpy() for q in ps] if isinstance(ps, list) else ps.grad.numpy()
        return v.item(), g
    return vg


def _jax_jit(f):
    fn = jax.jit(jax.value_and_grad(f, argnums=0))

    def vg(*a):
        v, g = fn(*a)
        jax.block_until_ready(g)
        return float(v), g
    return vg


def _flat(g):
    return [np.asarray(a) for a in (g if isinstance(g, (tuple, list)) else [g])]


def workloads():
    rng = np.random.default_rng(0)
    out = []
    # MLP: the six parameters differentiated, the batch and its int64 labels as arguments
    sizes = ((784, 256), (256,), (256, 256), (256,), (256, 10), (10,))
    params = tuple((rng.standard_normal(s) * 0.05).astype(np.float32) for s in sizes)
    x = (rng.standard_normal((64, 784)) * 0.5).astype(np.float32)
    y = rng.integers(0, 10, 64)
    callers = {"numbagrad.compile": _ng_compiled(lambda p, x, y: mlp_loss_flat(ng, *p, x, y)),
               "numbagrad eager": _ng_eager(lambda p, x, y: mlp_loss_flat(ng, *p, x, y))}
    if jax:
        callers["jax.jit"] = _jax_jit(lambda p, x, y: mlp_loss_flat(jnp, *p, x, y))
    out.append(("MLP 784-256-256-10 float32 b64, value_and_grad, labels as an argument",
                callers, (params, x, y), 2e-4, 1.0))
    # Elman RNN h=32, T=100, float32 (jax: lax.scan over the steps)
    xs = rng.standard_normal((100, 1, 16)).astype(np.float32)
    rp = tuple((rng.standard_normal(s) * 0.2).astype(np.float32)
               for s in ((32, 16), (32, 32), (32,)))
    callers = {"numbagrad.compile": _ng_compiled(lambda p, x: rnn_loss(ng, p, x)),
               "numbagrad eager": _ng_eager(lambda p, x: rnn_loss(ng, p, x))}
    if jax:
        def scanned(p, x):
            w_ih, w_hh, b = p

            def cell(h, x_t):
                return jnp.tanh(x_t @ w_ih.T + h @ w_hh.T + b), None
            h, _ = jax.lax.scan(cell, jnp.zeros((1, 32), jnp.float32), x)
            return (h * h).sum()
        callers["jax.jit"] = _jax_jit(scanned)
    out.append(("Elman RNN h=32 T=100 float32", callers, (rp, xs), 1e-4, 1.0))
    # 3 x 4M float64 elementwise, value and the 3 gradients
    arrays = tuple(rng.standard_normal(4_000_000) for _ in range(3))
    callers = {"numbagrad.compile": _ng_compiled(lambda a: elementwise(ng, *a)),
               "numbagrad eager": _ng_eager(lambda a: elementwise(ng, *a))}
    if jax:
        callers["jax.jit"] = _jax_jit(lambda a: elementwise(jnp, *a))
    # the memory floor, timed in the same rounds: the 3 inputs read and 3 arrays
    # written once (three copies), no arithmetic
    sinks = tuple(np.empty_like(a) for a in arrays)

    def memory_floor(a):
        for src, dst in zip(a, sinks):
            np.copyto(dst, src)
    callers[FLOOR] = memory_floor
    out.append(("3 x 4M float64 elementwise, value and 3 gradients", callers, (arrays,),
                1e-9, 1.0))
    # 10,000 scalar ops over 100 inputs, per op
    v = rng.uniform(-1, 1, 100)
    callers = {"numbagrad.compile": _ng_compiled(
        lambda t: scalar_graph(ng, [t[i] for i in range(100)], N_OPS))}
    if casadi:
        sym = casadi.SX.sym("x", 100)

        class _Lib:
            tanh, sin = staticmethod(casadi.tanh), staticmethod(casadi.sin)
        expr = scalar_graph(_Lib, [sym[i] for i in range(100)], N_OPS)
        fn = casadi.Function("vg", [sym], [expr, casadi.gradient(expr, sym)])

        def casadi_vg(t):
            value, g = fn(t)
            return float(value), np.asarray(g).ravel()
        callers["CasADi SX"] = casadi_vg
    out.append(("10,000 scalar ops over 100 inputs, value and gradient, per op", callers,
                (v,), 1e-9, 1.0 / N_OPS))
    # Rosenbrock n = 1000 against the gradient written by hand in NumPy
    x0 = rng.standard_normal(1000)

    def by_hand(x):
        a, b = x[1:] - x[:-1] ** 2, 1 - x[:-1]
        g = np.zeros_like(x)
        g[1:] += 200.0 * a
        g[:-1] += -400.0 * a * x[:-1] - 2.0 * b
        return float((100.0 * a * a + b * b).sum()), g
    callers = {"numbagrad.compile": _ng_compiled(lambda x: rosenbrock(ng, x)),
               "hand-written NumPy": by_hand}
    if jax:
        callers["jax.jit"] = _jax_jit(lambda x: rosenbrock(jnp, x))
    out.append(("Rosenbrock n=1000, value and gradient", callers, (x0,), 1e-10, 1.0))
    return out


def check(name, reference, got, rtol):
    assert np.isclose(got[0], reference[0], rtol=rtol), (name, got[0], reference[0])
    for a, b in zip(_flat(got[1]), _flat(reference[1])):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-2, err_msg=name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", default="", help="run the workloads whose name contains this "
                                              "(e.g. RNN, MLP, Rosenbrock)")
    opts = ap.parse_args()
    set_threads(1)
    names = ["numbagrad.compile", "numbagrad eager", "jax.jit", "CasADi SX",
             "hand-written NumPy", FLOOR]
    rows = []
    for name, callers, args, rtol, scale in workloads():
        if opts.only not in name:
            continue
        reference = None
        for label, fn in callers.items():
            for _ in range(3):  # first calls: traces and compiles
                got = fn(*args)
            if label == FLOOR:
                continue
            if reference is None:
                reference = got
            else:
                check(f"{name}: {label}", reference, got, rtol)
        first = callers["numbagrad.compile"](*args)
        check(f"{name}: compiled", reference, first, rtol)
        times = interleaved_medians([lambda fn=fn: fn(*args) for fn in callers.values()],
                                    rounds=opts.rounds, block=5 if "4M" in name else 21)
        rows.append((name, {k: t * scale for k, t in zip(callers, times)}))
    print("\n| workload (1 thread) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for name, times in rows:
        ours = times["numbagrad.compile"]
        cells = []
        for k in names:
            if k not in times:
                cells.append("—")
                continue
            t = times[k]
            text = f"{t * 1e9:.1f} ns" if t < 1e-6 else f"{t * 1e6:.1f} µs" if t < 1e-3 \
                else f"{t * 1e3:.2f} ms"
            cells.append(text if k == "numbagrad.compile" else f"{text} ({ours / t:.2f}x)")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n(x): numbagrad.compile's time over that column's")


if __name__ == "__main__":
    main()
