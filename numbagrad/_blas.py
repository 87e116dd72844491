"""The BLAS libraries' thread pools (NumPy's and SciPy's OpenBLAS, MKL, BLIS: those
threadpoolctl reaches), and what numbagrad changes in them.

Importing numbagrad changes nothing, unless ``NUMBAGRAD_BLAS_THREADS=n`` is set: then it sets
every pool to ``n`` threads, as ``set_blas_threads(n)`` does.

numbagrad's own matrix products and convolutions run BLAS on one thread. The products call
numbagrad's own copy of OpenBLAS (engine/gemm.py), whose pool is always one thread and is
left out of everything here (``keep_private``). While one of its calls computes with the
user's libraries (an eager product of ``gemm.BLAS_THREADS_MIN`` multiply-adds or more when
the products fall back on NumPy's OpenBLAS: that pool; an eager convolution, a backward
through a tape holding a convolution, or a product in that fallback, a compiled call whose
trace holds one: every pool), the pools are held at one thread, and put back to what they
were when the call ends. Its parallelism comes from its own threads (Numba's), beside which
BLAS's threads oversubscribe the cores: measured on a
2-core machine at Numba's default of two threads, a 784-256-256-10 MLP's SGD step (batch
64, float32) took 1.1 ms with the hold and 128 ms without (NumPy's pool at two threads), a
small CNN's, which alternates NumPy's and SciPy's pools, 29 ms against 186 ms. And
OpenBLAS's result depends on its thread count (64x784 @ 784x256 comes out with other bits on
two threads): held, eager and replay give the same bits whatever the pools' sizes.

Only calls made on the main thread hold the pools: threadpoolctl lets only the first thread
that set an OpenBLAS pool set it again and ignores the others (its documented rule), so a
hold released in another thread could leave a pool at one thread. numbagrad's calls in
other threads run with the pools as the user left them.
"""

import functools
import os
import sys
import threading
from contextlib import nullcontext

_SCIPY_BLAS = "scipy.linalg.cython_blas"  # what Numba's np.dot calls (the convolutions)
_lock = threading.Lock()
_found = None  # (SciPy's BLAS loaded then, [threadpoolctl's BLAS controllers])
_held = 0  # numbagrad calls holding the pools at one thread now, in all threads
_hold = {}  # library path -> (controller, threads to put back) while _held
_before = {}  # library path -> threads before set_blas_threads first changed it
_NO_LIMIT = nullcontext()
_MAIN = threading.main_thread()
_private = set()  # paths of numbagrad's own BLAS copies: one thread always, never set here


def keep_private(path):
    """Leave the library at ``path`` (numbagrad's own, on one thread) out of the pools that
    holds and ``set_blas_threads`` change."""
    global _found
    with _lock:
        _private.add(os.path.realpath(path))
        _found = None


def _load(scipy):
    """Import threadpoolctl (on first use: numbagrad's import does not pay for it) and, with
    ``scipy``, SciPy's BLAS. Outside ``_lock``: an import may take a while."""
    import threadpoolctl  # noqa: F401

    if scipy and _SCIPY_BLAS not in sys.modules:
        try:
            __import__(_SCIPY_BLAS)
        except ImportError:  # without SciPy nothing of numbagrad's calls its BLAS
            pass


def _blas_controllers(refresh=False):
    """threadpoolctl's controllers of the BLAS libraries loaded (after ``_load``): looked
    up once, again when SciPy's BLAS has been loaded since, or on ``refresh``."""
    global _found
    with_scipy = _SCIPY_BLAS in sys.modules
    if _found is None or _found[0] != with_scipy or refresh:
        import threadpoolctl

        libs = [c for c in
                threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
                if os.path.realpath(c.filepath) not in _private]
        _found = (with_scipy, libs)
    return _found[1]


class OneThread:
    """``with``: the BLAS pools at one thread for the block, then back as they were. Nested
    and concurrent blocks share one hold, which the last to end releases.

    ``scipy`` loads SciPy's BLAS first, to hold it too (the calls that reach it through
    Numba's np.dot); ``symbol`` holds only the libraries exporting it (an eager product
    holds the one its gemm comes from: 3 us a call here, against 5 us for two libraries)."""

    __slots__ = ("scipy", "symbol", "_picked")

    def __init__(self, scipy=False, symbol=None):
        self.scipy, self.symbol = scipy, symbol
        self._picked = (None, ())  # (the controllers picked from, those exporting symbol)

    def _libraries(self):
        libs = _blas_controllers()
        if self.symbol is None:
            return libs
        if self._picked[0] is not libs:
            self._picked = (libs, [c for c in libs
                                   if getattr(c.dynlib, self.symbol, None) is not None])
        return self._picked[1]

    def __enter__(self):
        global _held
        if threading.current_thread() is not _MAIN:
            return self  # threadpoolctl ignores other threads' changes (module doc)
        if _found is None or (self.scipy and not _found[0]):
            _load(self.scipy)
        with _lock:
            for c in self._libraries():
                if c.filepath not in _hold:
                    n = c.get_num_threads()
                    _hold[c.filepath] = (c, n)
                    if n != 1:
                        c.set_num_threads(1)
            _held += 1
        return self

    def __exit__(self, *exc):
        global _held
        if threading.current_thread() is not _MAIN:
            return
        with _lock:
            _held -= 1
            if not _held:
                for c, n in _hold.values():
                    if n != 1:
                        c.set_num_threads(n)
                _hold.clear()



_ALL = OneThread()


def one_thread(when=True):
    """A context manager holding every BLAS pool loaded at one thread (``when`` false:
    doing nothing), for numbagrad's calls that run BLAS."""
    return _ALL if when else _NO_LIMIT


def on_one_thread(scipy=False):
    """A decorator: the function runs with every BLAS pool held at one thread, SciPy's
    loaded first with ``scipy``."""
    hold = OneThread(scipy=scipy)

    def wrap(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            with hold:
                return fn(*args, **kwargs)
        return call
    return wrap


class BlasThreads(dict):
    """BLAS thread counts by library path, as ``set_blas_threads`` returns them (the counts
    before its call). In a ``with`` statement, puts them back when the block ends."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        set_blas_threads(self)


def set_blas_threads(n):
    """Set the thread pool of every BLAS library loaded in this process that threadpoolctl
    can reach (NumPy's and SciPy's OpenBLAS, MKL, BLIS; SciPy's BLAS is loaded first so that
    it is among them) to ``n`` threads. Nothing else changes: not Numba's threads
    (``numba.set_num_threads``), not OpenMP's, not a BLAS loaded later.

    ``n`` is a positive int; ``None`` puts back the counts the pools had before numbagrad
    first changed them (this function, or ``NUMBAGRAD_BLAS_THREADS`` at import); a dict as
    returned here sets those counts. Returns the counts before the call, a ``BlasThreads``
    dict {library path: threads}; in a ``with`` statement it puts them back at the end::

        with numbagrad.set_blas_threads(1):
            ...  # NumPy's and SciPy's BLAS on one thread here

    While one of numbagrad's own calls holds the pools at one thread (see numbagrad/_blas.py),
    the change takes effect when that call ends.

    Args:
        n: a positive int, None, or a dict from an earlier call (see above).

    Returns:
        The counts before the call, a ``BlasThreads`` dict {library path: threads}.
    """
    if n is not None and not isinstance(n, dict):
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"set_blas_threads(): n must be an int, None or a dict from a "
                            f"previous call, got {type(n).__name__}")
        if n < 1:
            raise ValueError(f"set_blas_threads(): n must be at least 1, got {n}")
    _load(scipy=True)
    with _lock:
        libs = _blas_controllers(refresh=True)
        previous = BlasThreads()
        for c in libs:
            held = _hold.get(c.filepath)
            previous[c.filepath] = held[1] if held else c.get_num_threads()
        if n is None:
            wanted = dict(_before)
            _before.clear()
        else:
            wanted = n if isinstance(n, dict) else dict.fromkeys(previous, n)
            for path, count in previous.items():
                if path in wanted:
                    _before.setdefault(path, count)
        for c in libs:
            count = wanted.get(c.filepath)
            if count is None or count == previous[c.filepath]:
                continue
            if c.filepath in _hold:  # held at one thread by numbagrad: set when released
                _hold[c.filepath] = (c, int(count))
            else:
                c.set_num_threads(int(count))
    return previous


def configure():
    """At import: ``NUMBAGRAD_BLAS_THREADS=n`` (n >= 1) sets the pools to n threads; unset,
    empty or 0 leaves them as they are."""
    value = os.environ.get("NUMBAGRAD_BLAS_THREADS", "").strip()
    if value in ("", "0"):
        return
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 1:
        raise ValueError(f"NUMBAGRAD_BLAS_THREADS must be a whole number of threads (0 leaves "
                         f"the BLAS pools as they are), got {value!r}")
    set_blas_threads(n)
