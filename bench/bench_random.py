"""Drawing 10,000,000 numbers from torch's CPU streams: numbagrad (draws this large run its
compiled kernels: torch's mt19937 and transforms in Numba) against torch, 1 thread, the calls
interleaved, medians of rounds.

Run: python bench/bench_random.py
"""

import torch
from common import interleaved_medians, row, set_threads

import numbagrad

N = 10_000_000

CASES = [
    ("rand float32", lambda lib: lib.rand(N)),
    ("randn float32", lambda lib: lib.randn(N)),
    ("rand float64", lambda lib: lib.rand(N, dtype=lib.float64)),
    ("randn float64", lambda lib: lib.randn(N, dtype=lib.float64)),
    ("randint(0, 1000) int64", lambda lib: lib.randint(0, 1000, (N,))),
]


def main():
    set_threads(1)
    numbagrad.manual_seed(0)
    torch.manual_seed(0)
    print(f"| {N:,} draws, 1 thread | numbagrad | torch | ratio |")
    print("|---|---|---|---|")
    for name, draw in CASES:
        ours, theirs = interleaved_medians([lambda: draw(numbagrad), lambda: draw(torch)],
                                           rounds=5, block=4)
        print(row(name, ours, theirs))


if __name__ == "__main__":
    main()
