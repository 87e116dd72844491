"""10,000 scalar (0-d) ops over 100 leaves: forward (recording) and backward per op, vs torch.

Run: python bench/bench_scalar.py
"""

import numpy as np
import torch
from common import median_time, row, set_threads

import numbagrad
from numbagrad.__main__ import scalar_graph

N_OPS, N_LEAVES = 10_000, 100
TOTAL = N_OPS + 99  # the graph ends with a sum over its last 100 values


def build(lib, init, dtype):
    leaves = [lib.tensor(v, dtype=dtype, requires_grad=True) for v in init]
    return leaves, scalar_graph(lib, leaves, N_OPS)


def measure(lib, dtype, init):
    build(lib, init, dtype)[1].backward()  # warm-up (compiles or loads the sweep)
    fwd = median_time(lambda _: build(lib, init, dtype), repeat=5)
    bwd = median_time(lambda state: state[1].backward(), repeat=5,
                      setup=lambda: build(lib, init, dtype))
    return fwd / TOTAL, bwd / TOTAL


def main():
    set_threads(1)
    init = np.random.default_rng(0).uniform(-1, 1, N_LEAVES)
    # same graph, same gradients: check before timing
    ours = build(numbagrad, init, numbagrad.float64)
    theirs = build(torch, init, torch.float64)
    ours[1].backward()
    theirs[1].backward()
    def grads(leaves):  # a leaf the random graph never uses has no gradient in either library
        return [np.nan if t.grad is None else t.grad.item() for t in leaves]

    np.testing.assert_allclose(grads(ours[0]), grads(theirs[0]), rtol=1e-9)
    print(f"{N_OPS:,} scalar ops, {N_LEAVES} leaves, float64, 1 thread (per op)")
    print("| measure | numbagrad | torch 2.13 | ratio |")
    print("|---|---|---|---|")
    f_ng, b_ng = measure(numbagrad, numbagrad.float64, init)
    f_t, b_t = measure(torch, torch.float64, init)
    print(row("forward (recording)", f_ng, f_t, "us", 1e6))
    print(row("backward", b_ng, b_t, "ns", 1e9))


if __name__ == "__main__":
    main()
