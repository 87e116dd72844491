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


def set_threads(n):
    import numba
    import torch
    torch.set_num_threads(n)
    numba.set_num_threads(n)


def row(name, ours, theirs, unit="ms", scale=1e3):
    ratio = ours / theirs if theirs else float("nan")
    return f"| {name} | {ours * scale:.3f} {unit} | {theirs * scale:.3f} {unit} | {ratio:.2f}x |"
