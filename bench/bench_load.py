"""numbagrad at 1 and 2 Numba threads on a busy machine: one process spinning on every core
while the MLP step (eager, and compiled value_and_grad), and the large elementwise arrays run,
torch beside them at the same thread counts (bench_eager.py's interleaving and checks). A
parallel kernel whose threads wait on busy cores takes many times its one-thread time;
numbagrad's target is at most 1.3x. jax.jit is not in this run (its threads are fixed when
the process starts).

Run: python bench/bench_load.py               (the spinners are started and stopped here)
     python bench/bench_load.py --idle        (the same rows without them)
"""

import argparse
import multiprocessing
import os
import time

import numba
import numpy as np

import numbagrad as ng

# Numba's threads start before torch is imported: torch loads GNU OpenMP into the process's
# global scope, and Numba would share that runtime, already started with the default spin
# (docs/guide/configuration.md); started first, the two libraries share numbagrad's
numba.get_num_threads()
from bench_eager import _mlp_init, elementwise, mlp, run  # noqa: E402
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


WORKLOADS = [
    (("MLP 784-256-256-10 float32, batch 64, SGD step (eager)",), mlp, 2e-4, 7, 20),
    (("same, value_and_grad: numbagrad.compile (torch eager)",), compiled_mlp, 2e-4, 7, 20),
    (("3 x 4M float64 elementwise, forward + backward (eager)",), elementwise, 1e-9, 5, 2),
]


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
    finally:
        for s in spinners:
            s.terminate()


if __name__ == "__main__":
    main()
