"""numbagrad.distributed against one process: the value and gradient of a logistic regression's
negative log-likelihood on 4M x 32 float64 rows (1 GB), per call, with Dask LocalClusters of
1 and 2 worker processes (one Numba thread each), against one-process numbagrad (compiled),
torch eager and jax.jit in the same run; and the Dask overhead per call, measured on a tiny
problem, and a bare Dask round trip. Every result is checked equal to numbagrad's one-process
value before timing.

Run: python bench/bench_distributed.py [--rows 4000000] [--repeat 5]
"""

import argparse
import os
import statistics
import time

import numpy as np
import torch
from common import set_threads

import numbagrad as ng
from numbagrad import distributed as nd
from numbagrad import func

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = None


def nll(w, shard):
    """The shard's part of the negative log-likelihood (labels y in {0, 1}, as floats)."""
    x, y = shard
    z = x @ w
    return (ng.nn.functional.softplus(z) - y * z).sum()


def _identity(x):
    return x


def torch_value_and_grad(x, y):
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def vg(w):
        wt = torch.from_numpy(w).requires_grad_()
        z = xt @ wt
        loss = (torch.nn.functional.softplus(z) - yt * z).sum()
        loss.backward()
        return loss.item(), wt.grad.numpy()
    return vg


def jax_value_and_grad(x, y):
    xj, yj = jnp.asarray(x), jnp.asarray(y)

    @jax.jit
    def f(w):
        z = xj @ w
        return (jax.nn.softplus(z) - yj * z).sum()
    jitted = jax.jit(jax.value_and_grad(f))

    def vg(w):
        value, grad = jitted(w)
        return float(value), np.asarray(grad)
    return vg


def timed(vg, w, repeat):
    """(first call, median of ``repeat`` later calls), in seconds."""
    t0 = time.perf_counter()
    vg(w)
    first = time.perf_counter() - t0
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        vg(w)
        times.append(time.perf_counter() - t0)
    return first, statistics.median(times)


def check(name, vg, w, ref_value, ref_grad):
    value, grad = vg(w)
    assert np.isclose(value, ref_value, rtol=1e-10), (name, value, ref_value)
    assert np.allclose(grad, ref_grad, rtol=1e-9, atol=1e-9 * abs(ref_grad).max()), name


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--cols", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.rows, args.cols))
    y = (rng.random(args.rows) < 1 / (1 + np.exp(-x @ rng.standard_normal(args.cols)))
         ).astype(np.float64)
    w = rng.standard_normal(args.cols) * 0.1
    cores = os.cpu_count()
    print(f"logistic regression NLL, {args.rows:,} x {args.cols} float64 "
          f"({x.nbytes / 2**30:.2f} GiB), {cores} cores, median of {args.repeat} calls")

    rows = []  # (name, first call s, per call s)
    for threads in (1, cores):
        set_threads(threads)
        local = ng.compile(func.value_and_grad(nll))
        first, per = timed(lambda p: local(p, (x, y)), w, args.repeat)
        rows.append((f"numbagrad.compile, one process, {threads} thread(s)", first, per))
    ref_value, ref_grad = local(w, (x, y))
    set_threads(cores)
    vg = torch_value_and_grad(x, y)
    check("torch", vg, w, ref_value, ref_grad)
    rows.append((f"torch eager, {cores} threads", *timed(vg, w, args.repeat)))
    if jax is not None:
        vg = jax_value_and_grad(x, y)
        check("jax", vg, w, ref_value, ref_grad)
        rows.append(("jax.jit (XLA's threads)", *timed(vg, w, args.repeat)))

    overhead = bare = None
    for workers in (1, 2):
        client = nd.local_client(workers)
        try:
            t0 = time.perf_counter()
            vg = nd.value_and_grad(nll, nd.split(x, y, n=workers), client)
            scatter = time.perf_counter() - t0
            first, per = timed(vg, w, args.repeat)
            check(f"{workers} workers", vg, w, ref_value, ref_grad)
            rows.append((f"distributed, {workers} worker process(es) x 1 thread "
                         f"(scatter {scatter:.1f} s)", first, per))
            if workers == 2:  # the same calls on 2 shards of 16 rows: all overhead
                tiny = nd.value_and_grad(nll, nd.split(x[:32], y[:32], n=2), client)
                overhead = timed(tiny, w, 50)[1]
                # a bare Dask round trip: one task that returns its argument
                bare = timed(lambda p: client.submit(_identity, p, pure=False).result(), w,
                             50)[1]
        finally:
            client.close()
            client.cluster.close()

    base = rows[0][2]
    print("\n| how | first call | per call | vs one process, 1 thread | vs torch eager |")
    print("|---|---|---|---|---|")
    torch_per = next(per for name, _, per in rows if name.startswith("torch"))
    for name, first, per in rows:
        print(f"| {name} | {first:.2f} s | {per * 1e3:.0f} ms | {per / base:.2f}x | "
              f"{per / torch_per:.2f}x |")
    print(f"\nDask overhead per call (2 workers, 2 shards of 16 rows): {overhead * 1e3:.1f} ms")
    print(f"a bare Dask round trip (one task returning its argument): {bare * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
