"""numbagrad at 1 and 2 Numba threads on a busy machine: one process spinning on every core
while the MLP step and the large elementwise arrays run (each eager, and as a compiled
value_and_grad), torch beside them at the same thread counts (bench_eager.py's interleaving
and checks). A parallel kernel whose threads wait on busy cores takes many times its
one-thread time; numbagrad's target is at most 1.3x. jax.jit's rows (the MLP's
value_and_grad and the elementwise workload, jitted) run in processes of their own, one per
thread count and round, alternating, under the same spinners: XLA's threads are fixed when a
process starts.

Run: python bench/bench_load.py               (the spinners are started and stopped here)
     python bench/bench_load.py --idle        (the same rows without them)
"""

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time

import numba
import numpy as np

import numbagrad as ng

# Numba's threads start before torch is imported: torch loads GNU OpenMP into the process's
# global scope, and Numba would share that runtime, already started with the default spin
# (docs/guide/configuration.md); started first, the two libraries share numbagrad's
numba.get_num_threads()
from bench_eager import _mlp_init, elementwise, mlp, run  # noqa: E402
from bench_peers import elementwise as elementwise_sum  # noqa: E402
from bench_peers import mlp_loss_flat  # noqa: E402


def compiled_mlp(lib):
    """value_and_grad of the MLP's mean cross-entropy over its 6 parameters: numbagrad.compile
    (torch's column: torch eager, the same function with autograd.grad)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    params = [np.ascontiguousarray(a.T) if a.ndim == 2 else a for a in _mlp_init()]
    if lib is ng:
        fn = ng.compile(ng.func.value_and_grad(lambda p, x, y: mlp_loss_flat(ng, *p, x, y)))

        def call():
            v, g = fn(params, x, y)
            return float(v), [np.asarray(a) for a in g]
    else:
        ps = [lib.tensor(a, requires_grad=True) for a in params]
        xt, yt = lib.tensor(x), lib.tensor(y)

        def call():
            v = mlp_loss_flat(lib, *ps, xt, yt)
            g = lib.autograd.grad(v, ps)
            return v.item(), [a.numpy() for a in g]

    def step():
        t0 = time.perf_counter()
        step.result = call()
        return (time.perf_counter() - t0,)
    return step


def compiled_elementwise(lib):
    """value_and_grad of the 3 x 4M elementwise sum over its 3 arrays: numbagrad.compile's
    fused loop (torch's column: torch eager, with autograd.grad)."""
    arrays = [np.random.default_rng(0).standard_normal(4_000_000) for _ in range(3)]
    if lib is ng:
        fn = ng.compile(ng.func.value_and_grad(lambda *a: elementwise_sum(ng, *a),
                                               argnums=(0, 1, 2)))

        def call():
            v, g = fn(*arrays)
            return float(v), [np.asarray(a) for a in g]
    else:
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]

        def call():
            v = elementwise_sum(lib, *ts)
            return v.item(), [a.numpy() for a in lib.autograd.grad(v, ts)]

    def step():
        t0 = time.perf_counter()
        step.result = call()
        return (time.perf_counter() - t0,)
    return step


WORKLOADS = [
    (("MLP 784-256-256-10 float32, batch 64, SGD step (eager)",), mlp, 2e-4, 7, 20),
    (("same, value_and_grad: numbagrad.compile (torch eager)",), compiled_mlp, 2e-4, 7, 20),
    (("3 x 4M float64 elementwise, forward + backward (eager)",), elementwise, 1e-9, 5, 2),
    (("same, value_and_grad: numbagrad.compile (torch eager)",), compiled_elementwise, 1e-9,
     5, 2),
]


JAX_ROWS = """
import json, statistics, sys, time
import numpy as np
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
sys.path.insert(0, BENCH)
from bench_eager import _mlp_init
from bench_peers import elementwise, mlp_loss_flat

def timed(fn, args, rounds, block):
    fn(*args)[0].block_until_ready()
    ts = []
    for _ in range(rounds * block):
        t0 = time.perf_counter()
        fn(*args)[0].block_until_ready()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)

rng = np.random.default_rng(0)
x = rng.standard_normal((64, 784)).astype(np.float32)
y = rng.integers(0, 10, 64)
params = [np.ascontiguousarray(a.T) if a.ndim == 2 else a for a in _mlp_init()]
mlp = jax.jit(jax.value_and_grad(lambda p, x, y: mlp_loss_flat(jnp, *p, x, y)))
arrays = [rng.standard_normal(4_000_000) for _ in range(3)]
ew = jax.jit(jax.value_and_grad(lambda *a: elementwise(jnp, *a), argnums=(0, 1, 2)))
print(json.dumps([timed(mlp, (params, x, y), 7, 20), timed(ew, arrays, 5, 2)]))
"""


def jax_rows(threads, rounds=3):
    """jax.jit's medians (MLP, elementwise) at 1 thread and at XLA's default (a thread per
    core): a process per count and round, alternating; None when JAX is not installed."""
    try:
        import jax  # noqa: F401
    except ImportError:
        return None
    source = JAX_ROWS.replace("BENCH", repr(os.path.dirname(os.path.abspath(__file__))))
    out = {n: [] for n in threads}
    for _ in range(rounds):
        for n in threads:
            env = dict(os.environ)
            env.pop("XLA_FLAGS", None)  # XLA's own pool: one thread per core
            if n == 1:
                env["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false "
                                    "intra_op_parallelism_threads=1")
            run_ = subprocess.run([sys.executable, "-c", source], env=env, check=True,
                                  capture_output=True, text=True)
            out[n].append(json.loads(run_.stdout.strip().splitlines()[-1]))
    return {n: [statistics.median(r[k] for r in rs) for k in range(2)]
            for n, rs in out.items()}


def _spin(seconds):
    end = time.time() + seconds
    while time.time() < end:
        pass


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--idle", action="store_true", help="no spinning processes")
    a = p.parse_args()
    spinners = [] if a.idle else [multiprocessing.Process(target=_spin, args=(3600,), daemon=True)
                                  for _ in range(os.cpu_count() or 1)]
    for s in spinners:
        s.start()
    try:
        print("busy: one spinning process per core" if spinners else "idle")
        run([1, 2], set(), WORKLOADS)
        jx = jax_rows([1, 2])
        if jx is not None:
            print("\n| jax.jit | 1 thread | 2 threads | 2 / 1 threads |\n|---|---|---|---|")
            for k, name in enumerate(("MLP value_and_grad", "3 x 4M elementwise")):
                print(f"| {name} | {jx[1][k] * 1e3:.2f} ms | {jx[2][k] * 1e3:.2f} ms | "
                      f"{jx[2][k] / jx[1][k]:.2f}x |")
    finally:
        for s in spinners:
            s.terminate()


if __name__ == "__main__":
    main()
