"""``python -m numbagrad``: a short tour with real gradients and timings.
``python -m numbagrad warmup SCRIPT [ARGS]``: run a script once so that the kernels it needs
are compiled and cached; ``python -m numbagrad warmup`` alone: every kernel (long: each op's
kernels compile on their own). ``python -m numbagrad --help`` lists these."""

import os
import subprocess
import sys
import time

import numpy as np

import numbagrad
from numbagrad.compiler import fusion
from numbagrad.core import progress
from numbagrad.engine import codecache, fast_push, gemm, kernel_tables, registry
from numbagrad.ops.elementwise import forward
from numbagrad.ops.nn import conv, pool2d
from numbagrad.optim import _kernels as optim_kernels
from numbagrad.seed_examples import SCRIPTS, run_script


def _timeit(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def scalar_graph(lib, leaves, n_ops, seed=0):
    """A random graph of ``n_ops`` scalar ops over ``leaves`` (same graph for any lib)."""
    rng = np.random.default_rng(seed)
    kinds = rng.integers(0, 5, n_ops)
    picks = rng.integers(0, 1 << 30, (n_ops, 2))
    vals = list(leaves)
    for k, (i, j) in zip(kinds, picks):
        a, b = vals[i % len(vals)], vals[j % len(vals)]
        if k == 0:
            v = a * b
        elif k == 1:
            v = a + b
        elif k == 2:
            v = lib.tanh(a)
        elif k == 3:
            v = a - b * 0.5
        else:
            v = lib.sin(a) * 0.9
        vals.append(v)
    total = vals[-1]
    for v in vals[-100:-1]:
        total = total + v
    return total


def tour():
    t_start = time.perf_counter()
    torch = numbagrad  # the tour reads as the torch code it runs

    print("numbagrad tour: torch's autograd API, backward compiled with Numba")
    print("(on a new machine each op's kernels compile the first time a graph uses the op,"
          "\n with progress shown past a second; later runs load them from Numba's disk cache)\n")
    for name in ("000-example-2", "001-simple", "001-loop", "002-pow", "002-nonscalar"):
        source, _ = SCRIPTS[name]
        print(f"# seed {name}")
        for line in source.strip().splitlines():
            print(("... " if line.startswith(" ") else ">>> ") + line)
        t0 = time.perf_counter()
        print(run_script(source, torch), end="")
        print(f"# ({(time.perf_counter() - t0) * 1e3:.1f} ms)\n")

    n_ops, n_leaves = 10_000, 100
    print(f"A random graph of {n_ops:,} scalar ops over {n_leaves} leaves (float64):")
    rng = np.random.default_rng(0)
    init = rng.uniform(-1, 1, n_leaves)

    def build():
        leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in init]
        return leaves, scalar_graph(torch, leaves, n_ops)

    leaves, out = build()
    out.backward()  # warm: compile or load the sweep
    fwd = _timeit(lambda: build(), 3)
    bwd = float("inf")
    for _ in range(5):
        leaves, out = build()
        t0 = time.perf_counter()
        out.backward()
        bwd = min(bwd, time.perf_counter() - t0)
    np_leaves = [np.float64(v) for v in init]
    np_fwd = _timeit(lambda: scalar_graph(np, np_leaves, n_ops), 3)
    total = n_ops + 99
    recorder = ("nodes written in C" if fast_push.unavailable is None else
                f"all in Python, no C recorder: {fast_push.unavailable}")
    print(f"  numbagrad forward (recording): {fwd / total * 1e9:8.0f} ns/op ({recorder})")
    print(f"  numbagrad backward (one @njit sweep): {bwd / total * 1e9:5.0f} ns/op")
    print(f"  plain NumPy scalar forward, no gradient: {np_fwd / total * 1e9:5.0f} ns/op")
    print(f"  -> the whole backward costs {bwd / np_fwd:.2f}x one plain NumPy evaluation")
    grad0 = leaves[0].grad.item()
    print(f"  d out / d leaf[0] = {grad0:.6f}")
    _higher_order_tour(torch)
    _compiled_tour(torch, init, n_ops)
    print(f"\ntour done in {time.perf_counter() - t_start:.1f} s")


def _higher_order_tour(torch):
    """create_graph: derivatives of derivatives, and a Hessian-vector product."""
    print("\nHigher order (create_graph=True):")
    x = torch.tensor(2.0, requires_grad=True)
    (d1,) = torch.autograd.grad(x ** 3, x, create_graph=True)
    (d2,) = torch.autograd.grad(d1, x, create_graph=True)
    (d3,) = torch.autograd.grad(d2, x)
    print(f"  d/dx x^3 = {d1.item():g}, d2 = {d2.item():g}, d3 = {d3.item():g}  (at x = 2)")
    rng = np.random.default_rng(0)
    x0, v = rng.uniform(-1, 1, 1000), torch.tensor(rng.standard_normal(1000))

    def hvp():
        z = torch.tensor(x0, requires_grad=True)
        f = (100.0 * (z[1:] - z[:-1] ** 2) ** 2 + (1.0 - z[:-1]) ** 2).sum()
        (g,) = torch.autograd.grad(f, z, create_graph=True)
        return torch.autograd.grad((g * v).sum(), z)[0]

    hv = hvp()
    t = _timeit(hvp, 9)
    print(f"  Rosenbrock n=1000: Hessian-vector product in {t * 1e3:.2f} ms, "
          f"|Hv| = {float(hv.norm()):.4f}")


def _compiled_tour(torch, init, n_ops):
    """numbagrad.compile: trace once, replay forward and backward inside one Numba call."""
    print("\nCompiled replay (numbagrad.compile; first use loads the replay modules):")
    t0 = time.perf_counter()
    vg = torch.compile(torch.func.value_and_grad(
        lambda v: scalar_graph(torch, [v[i] for i in range(v.shape[0])], n_ops)))
    value, grad = vg(init)
    trace = time.perf_counter() - t0
    t = _timeit(lambda: vg(init), 21)
    print(f"  the same {n_ops:,}-op graph: traced in {trace:.2f} s, then value and gradient "
          f"in {t * 1e6:.0f} us ({t / n_ops * 1e9:.1f} ns/op), d out / d leaf[0] = "
          f"{grad[0]:.6f}")

    def rosenbrock(x):
        return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()
    x0 = np.full(1000, 0.5)
    rosen_vg = torch.compile(torch.func.value_and_grad(rosenbrock))
    rosen_vg(x0)
    t = _timeit(lambda: rosen_vg(x0), 51)
    print(f"  Rosenbrock n=1000 value_and_grad: {t * 1e6:.0f} us per call")
    torch.optimize.minimize(rosenbrock, x0, method="L-BFGS-B")  # imports scipy.optimize
    t0 = time.perf_counter()
    res = torch.optimize.minimize(rosenbrock, x0, method="L-BFGS-B")
    print(f"  numbagrad.optimize.minimize(L-BFGS-B): f = {res.fun:.2e} after {res.nit} "
          f"iterations, {res.nfev} gradients, in {(time.perf_counter() - t0) * 1e3:.0f} ms "
          "(trace included)")


def warmup():
    """Compile every op's kernels and the engine's own (or load them from Numba's cache):
    optional, for a machine that will run offline or must not pay first-use compiles.
    The ops are shared between this process and a second one (Numba compiles on one core)."""
    t0 = time.perf_counter()
    print("numbagrad warmup: compiling (or loading from Numba's cache) every op's kernels, "
          "the sweeps, the optimizers' and the convolutions' kernels", flush=True)
    other = subprocess.Popen([sys.executable, "-m", "numbagrad", "warmup-part", "1"])
    try:
        _warm_part(0)
    finally:
        status = other.wait()
    if status != 0:
        raise SystemExit(f"numbagrad warmup: the second process failed ({status})")
    print(f"numbagrad warmup: done in {time.perf_counter() - t0:.1f} s", flush=True)


def _warm_part(part):
    """Half of ``warmup``: the kernels of every other op, and one half of the rest."""
    progress.HINT = ""  # the compile-progress lines need not point at this very command
    torch = numbagrad

    t0 = time.perf_counter()
    ops = [op for op in registry.OPS if op.code % 2 == part]
    for op in ops:
        kernel_tables.ensure_all([op.code], kernel_tables.KINDS)
    forward.warmup(ops)
    print(f"  kernels of {len(ops)} ops ready in {time.perf_counter() - t0:.1f} s", flush=True)
    t1 = time.perf_counter()
    if part == 0:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()  # the eager sweep
        optim_kernels.warmup()
        conv.warmup()
        pool2d.warmup()
        gemm.warmup()
        print(f"  sweep, optimizer, convolution and product kernels ready in "
              f"{time.perf_counter() - t1:.1f} s", flush=True)
    else:
        vg = torch.compile(torch.func.value_and_grad(lambda v: (v * v).sum()))
        vg(np.ones(3))  # the replay's entry points
        vg = torch.compile(torch.func.value_and_grad(lambda v: (torch.tanh(v) * v).sum()))
        vg(np.ones(fusion.FUSE_MIN))  # a fused region
        x = torch.ones(3, requires_grad=True)
        torch.compile(lambda v: v * v)(x).sum().backward()  # a compiled function of Tensors
        print(f"  compiled replay's entry points ready in {time.perf_counter() - t1:.1f} s",
              flush=True)


def warmup_script(argv):
    """Run script ``argv[0]`` (with its arguments) as ``__main__``: every kernel it uses
    compiles now, with progress lines, and Numba's cache keeps it for later processes."""
    import runpy

    progress.HINT = ""
    path = argv[0]
    if not os.path.isfile(path):
        raise SystemExit(f"numbagrad warmup: no such script: {path}")
    before = _kernels_cached()
    t0 = time.perf_counter()
    print(f"numbagrad warmup: running {path} to compile the kernels it uses", flush=True)
    saved_argv = sys.argv
    sys.argv = list(argv)
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved_argv
    print(f"numbagrad warmup: {path} ran in {time.perf_counter() - t0:.1f} s; "
          f"{_kernels_cached() - before} kernel modules newly in the cache", flush=True)


def _kernels_cached():
    return sum(1 for _ in codecache.cache_dir().glob("numbagrad_*.py"))


USAGE = "usage: python -m numbagrad [-h] [warmup [SCRIPT [ARGS...]]]"

HELP = USAGE + """

numbagrad: torch's autograd API on NumPy arrays, backward compiled with Numba.

commands:
  (none)                   a short tour: torch-style examples run with numbagrad, with
                           real gradients and timings (on a new machine the kernels it
                           uses compile as it goes, with progress shown past a second)
  warmup SCRIPT [ARGS...]  run SCRIPT as __main__ with ARGS, once, so that the kernels it
                           uses compile now and Numba's disk cache keeps them for later
                           processes
  warmup                   compile (or load from Numba's cache) every op's kernels and the
                           engine's own, in two processes (long: minutes to an hour)

options:
  -h, --help               show this message and exit

Compile progress messages are INFO records of the "numbagrad" logger;
NUMBAGRAD_PROGRESS=0 turns them off (docs/guide/configuration.md)."""


def main(argv):
    if argv[:1] in (["-h"], ["--help"], ["help"]) or argv[:2] in (["warmup", "-h"],
                                                                  ["warmup", "--help"]):
        print(HELP)
    elif argv[:1] == ["warmup"] and len(argv) > 1:
        warmup_script(argv[1:])
    elif argv[:1] == ["warmup"]:
        warmup()
    elif argv[:2] == ["warmup-part", "1"]:  # warmup's second process
        _warm_part(1)
    elif not argv:
        tour()
    else:
        print(f"{USAGE}\npython -m numbagrad: unknown command {argv[0]!r} (--help lists the "
              "commands)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
