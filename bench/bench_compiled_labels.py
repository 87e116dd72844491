"""A training step's gradient with new data at every call: the MLP 784-256-256-10 float32
(batch 64, ReLU, mean cross-entropy), value and gradients over the six parameters, with the
batch and its integer labels passed as arguments and a different batch each call (a pool of
16, cycled). numbagrad.compile against numbagrad eager, torch eager and jax.jit, 1 thread,
interleaved medians; every library's result is checked against torch's first.

Run: taskset -c 1 python bench/bench_compiled_labels.py [--rounds N]
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import itertools  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_peers import mlp_loss  # noqa: E402
from common import interleaved_medians, set_threads  # noqa: E402

import numbagrad as ng  # noqa: E402
import numbagrad.func  # noqa: E402, F401

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = jnp = None


def makers(params):
    def ng_compiled():
        fn = ng.compile(ng.func.value_and_grad(lambda p, x, y: mlp_loss(ng, p, x, y)))
        return lambda x, y: fn(tuple(params), x, y)

    def ng_eager():
        def step(x, y):
            ps = [ng.tensor(p, requires_grad=True) for p in params]
            v = mlp_loss(ng, ps, ng.tensor(x), ng.tensor(y))
            v.backward()
            return v.item(), [p.grad.numpy() for p in ps]
        return step

    def torch_eager():
        def step(x, y):
            ps = [torch.tensor(p, requires_grad=True) for p in params]
            v = mlp_loss(torch, ps, torch.tensor(x), torch.tensor(y))
            v.backward()
            return v.item(), [p.grad.numpy() for p in ps]
        return step

    def jax_jit():
        fn = jax.jit(jax.value_and_grad(lambda p, x, y: mlp_loss(jnp, p, x, y)))

        def step(x, y):
            v, gs = fn(tuple(params), x, y)
            return float(v), [np.asarray(g) for g in gs]
        return step

    out = {"numbagrad.compile": ng_compiled, "numbagrad eager": ng_eager,
           "torch eager": torch_eager}
    if jax is not None:
        out["jax.jit"] = jax_jit
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    opts = ap.parse_args()
    set_threads(1)
    rng = np.random.default_rng(0)
    sizes = ((784, 256), (256,), (256, 256), (256,), (256, 10), (10,))
    params = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in sizes]
    batches = [((rng.standard_normal((64, 784)) * 0.5).astype(np.float32),
                rng.integers(0, 10, 64)) for _ in range(16)]
    steps, firsts = {}, {}
    for name, make in makers(params).items():
        step = make()
        t0 = time.perf_counter()
        for x, y in batches[:3]:  # the first calls: tracing, and a second trace to compare
            step(x, y)
        firsts[name] = time.perf_counter() - t0
        steps[name] = step
    for x, y in batches[:4]:  # each library's value and gradients against torch's
        want_v, want_g = steps["torch eager"](x, y)
        for name, step in steps.items():
            v, g = step(x, y)
            assert np.isclose(v, want_v, rtol=1e-4), (name, v, want_v)
            for a, b in zip(g, want_g):
                np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)

    def caller(step):
        it = itertools.cycle(batches)
        return lambda: step(*next(it))

    times = dict(zip(steps, interleaved_medians([caller(s) for s in steps.values()],
                                                rounds=opts.rounds, block=9)))
    base = times["jax.jit"] if "jax.jit" in times else times["torch eager"]
    print("| library | per step, new batch each call | vs jax.jit | first 3 calls |")
    print("|---|---|---|---|")
    for name, t in times.items():
        print(f"| {name} | {t * 1e3:.3f} ms | {t / base:.2f}x | {firsts[name]:.2f} s |")


if __name__ == "__main__":
    main()
