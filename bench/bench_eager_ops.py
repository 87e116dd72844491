"""Eager ops one at a time against torch: the RNN's and Rosenbrock's ops (bench_eager.py),
200 of each on one graph, the libraries taking turns, medians of 7 rounds, 1 thread.

Run: taskset -c 1 python bench/bench_eager_ops.py
"""

import statistics
import time

import numpy as np
import torch

import numbagrad as ng

rng = np.random.default_rng(0)
W = rng.standard_normal((32, 32)).astype(np.float32)
H = rng.standard_normal((1, 32)).astype(np.float32)
X = rng.standard_normal((100, 1, 16)).astype(np.float32)
B = rng.standard_normal(32).astype(np.float32)
R = rng.standard_normal(1000)


def setup(lib):
    w = lib.tensor(W, requires_grad=True)
    h = lib.tensor(H, requires_grad=True) * 1.0
    b = lib.tensor(B, requires_grad=True)
    r = lib.tensor(R, requires_grad=True)
    wt = w.T
    return dict(lib=lib, w=w, h=h, b=b, xs=lib.tensor(X), wt=wt, hw=h @ wt, r=r, r1=r[1:],
                r2=r[:-1])


OPS = {
    "xs[t] (no grad)": lambda e: e["xs"][3],
    "w.T": lambda e: e["w"].T,
    "h @ wt": lambda e: e["h"] @ e["wt"],
    "h + hw": lambda e: e["h"] + e["hw"],
    "h + b": lambda e: e["h"] + e["b"],
    "tanh(h)": lambda e: e["lib"].tanh(e["h"]),
    "r[1:]": lambda e: e["r"][1:],
    "r2 ** 2": lambda e: e["r2"] ** 2,
    "r1 - r2": lambda e: e["r1"] - e["r2"],
    "100.0 * r1": lambda e: 100.0 * e["r1"],
    "1 - r2": lambda e: 1 - e["r2"],
    "r1.sum()": lambda e: e["r1"].sum(),
}


def main():
    torch.set_num_threads(1)
    ng.set_num_threads(1)
    times = {(name, lib): [] for name in OPS for lib in ("numbagrad", "torch")}
    for _ in range(7):
        for label, lib in (("numbagrad", ng), ("torch", torch)):
            for name, op in OPS.items():
                env = setup(lib)
                t0 = time.perf_counter()
                for _ in range(200):
                    op(env)
                times[name, label].append((time.perf_counter() - t0) / 200)
    print("| op | numbagrad | torch | ratio |\n|---|---|---|---|")
    for name in OPS:
        ours, theirs = (statistics.median(times[name, lib]) for lib in ("numbagrad", "torch"))
        print(f"| `{name}` | {ours * 1e6:.1f} µs | {theirs * 1e6:.1f} µs | {ours / theirs:.2f}x |")


if __name__ == "__main__":
    main()
