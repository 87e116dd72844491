"""The BLAS thread pools of NumPy and SciPy (numbagrad's @njit kernels call SciPy's BLAS).

Each wheel bundles its own OpenBLAS, each with a pool of one thread per core that spins
while it waits. Two pools plus Numba's threads oversubscribe the cores: measured on this
project's 2-core machine, a 64x784 @ 784x256 float32 product took 2.3 ms with NumPy's pool
alone and 24 ms once SciPy's was loaded too, against 0.34 ms on one thread. So numbagrad
sets both pools to ``NUMBAGRAD_BLAS_THREADS`` threads (default 1) when it is imported;
``set_blas_threads(n)`` changes it later. Parallelism in numbagrad comes from its own
kernels (Numba's prange), which do not spin.
"""

import ctypes
import os
import re

# OpenBLAS builds name their setter differently (prefix and 64-bit-integer suffix)
_SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads",
            "scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_")


def _openblas_libraries():
    """Paths of the OpenBLAS libraries loaded in this process (Linux: /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as maps:
            return sorted({m.group(1) for line in maps
                           if (m := re.search(r"(/\S*openblas\S*\.so\S*)", line))})
    except OSError:
        return []


def set_blas_threads(n):
    """Set every loaded OpenBLAS pool (NumPy's, SciPy's) to ``n`` threads; returns how many
    pools were set."""
    import scipy.linalg.cython_blas  # noqa: F401 - load SciPy's BLAS so its pool is set too

    count = 0
    for path in _openblas_libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn(int(n))
                count += 1
                break
    return count


def configure():
    """Applied at import: NUMBAGRAD_BLAS_THREADS (default 1); 0 leaves the pools alone."""
    n = int(os.environ.get("NUMBAGRAD_BLAS_THREADS", "1"))
    if n > 0:
        set_blas_threads(n)
