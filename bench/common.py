"""Timing helpers shared by the benchmarks: medians of repeated runs, thread settings."""

import statistics
import time


def median_time(fn, repeat=7, setup=None):
    """Median wall time of ``fn(state)`` where ``state = setup()`` is rebuilt (untimed) per run."""
    times = []
    for _ in range(repeat):
        state = setup() if setup else None
        t0 = time.perf_counter()
        fn(state)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved_medians(fns, rounds=15, block=21):
    """Median wall time of each of ``fns`` (no arguments), run in blocks of ``block`` calls
    that take turns round after round, so that a slow spell of a shared machine falls on
    all of them alike rather than on whichever one was running then. The first call of a
    block is not counted: it finds the caches holding the other function's data, where a
    program running alone would find its own."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, ts in zip(fns, times):
            fn()
            for _ in range(block - 1):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
    return [statistics.median(ts) for ts in times]


def set_threads(n):
    """n threads for torch, Numba and the BLAS pools (NumPy's and SciPy's: the hand-written
    NumPy rows use them; numbagrad holds them at one thread in its own products anyway)."""
    import torch

    import numbagrad
    torch.set_num_threads(n)
    numbagrad.set_num_threads(n)  # (numba's, and the most numbagrad fits to a busy machine)
    numbagrad.set_blas_threads(n)


def row(name, ours, theirs, unit="ms", scale=1e3):
    ratio = ours / theirs if theirs else float("nan")
    return f"| {name} | {ours * scale:.3f} {unit} | {theirs * scale:.3f} {unit} | {ratio:.2f}x |"
