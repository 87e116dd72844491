"""How long Numba's idle OpenMP threads spin before they sleep.

GNU OpenMP (Numba's threading layer on Linux unless TBB is installed) keeps a thread that
has finished its share of a parallel region spinning, by default for 300,000 iterations,
so that the next region starts without a wake-up. On a busy machine those spinning threads
take the cores that the region's other threads wait for, and a kernel on two threads can
take many times its one-thread time (bench/bench_load.py measures it). numbagrad starts
Numba's threads with a short spin instead, unless ``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY``
is set, and puts the environment back once they are started: the setting reaches Numba's
OpenMP only, not child processes or another library's OpenMP loaded later."""

import os

from numba.np.ufunc import parallel

SPINCOUNT = "1000"  # the values tried and their times: bench/RESULTS.md (threads under load)


def install():
    """Wrap Numba's thread launch (on first use: importing numbagrad starts no threads)."""
    if "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        return
    launch = parallel._launch_threads
    if getattr(launch, "short_spin", False):
        return

    def launch_with_short_spin():
        if parallel._is_initialized:
            return launch()
        os.environ["GOMP_SPINCOUNT"] = SPINCOUNT  # read by GNU OpenMP when it loads
        try:
            return launch()
        finally:
            os.environ.pop("GOMP_SPINCOUNT", None)

    launch_with_short_spin.short_spin = True
    parallel._launch_threads = launch_with_short_spin
