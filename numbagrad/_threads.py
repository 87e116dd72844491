"""One helper pool for the work numbagrad splits over threads itself: fused replay regions
and optimizer steps over large groups. Each piece is an @njit(nogil=True) kernel, which
releases the GIL, so the pieces run at once.

The pool is made on first use, and again in a forked child: a child inherits the pool
object but not its threads, and would queue its work forever."""

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numba
import numba.np.ufunc.parallel as _numba_parallel

_pool = _pool_pid = None
_lock = threading.Lock()


def _cores():
    """The CPUs this process may run on (its affinity), not the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 2


def in_parallel(calls):
    """Run the zero-argument ``calls``: all but the first on the pool, the first on this
    thread; returns when all are done (re-raising the first error)."""
    global _pool, _pool_pid
    if len(calls) == 1:
        calls[0]()
        return
    with _lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(max(1, _cores() - 1), thread_name_prefix="numbagrad")
            _pool_pid = os.getpid()
        pool = _pool
    futures = [pool.submit(c) for c in calls[1:]]
    try:
        calls[0]()
    finally:
        for f in futures:
            f.result()


# ---- Numba's thread count on a busy machine ---------------------------------------------------
# A parallel region (a prange kernel, a split product) ends when its slowest thread does: where
# other programs keep the cores busy, every region waits for a time slice and takes many times
# its one-thread time. So each thread that runs numbagrad's work looks, at most every
# _SAMPLE_S seconds, at how much of the CPUs it may use the rest of the machine used since
# (/proc/stat less this process's own CPU time), and runs Numba's regions on the cores left
# (at least one, at most the count the user set). NUMBAGRAD_FIT_THREADS=0 turns this off.
_SAMPLE_S = 0.1
_FIT = os.environ.get("NUMBAGRAD_FIT_THREADS", "1") != "0"


class _Fit(threading.local):
    def __init__(self):
        self.next = 0.0  # monotonic time of the next look
        self.last = None  # (monotonic time, busy CPU seconds of the machine, of this process)
        self.wanted = None  # the user's count (numba.get_num_threads() when first seen)
        self.applied = None  # the count this set last
        self.free = None  # the cores the last look found free


_fit = _Fit()
_cpu_lines = None  # the /proc/stat lines of the CPUs this process may run on


def _busy_seconds():
    """CPU seconds the allowed CPUs have spent busy since boot (Linux), or None."""
    global _cpu_lines
    try:
        with open("/proc/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    if _cpu_lines is None:
        _cpu_lines = tuple(f"cpu{c} ".encode() for c in sorted(os.sched_getaffinity(0)))
    busy = 0
    for line in text.splitlines():
        if line.startswith(_cpu_lines):
            # user nice system idle iowait irq softirq steal: all but idle and iowait
            v = line.split()[1:9]
            busy += sum(map(int, v)) - int(v[3]) - int(v[4])
    return busy / _TICKS


try:
    _TICKS = os.sysconf("SC_CLK_TCK")
except (AttributeError, ValueError, OSError):
    _FIT = False


def num_threads():
    """``numba.get_num_threads()``, less the process-wide lock it takes at every call to check
    that its threads were launched: once they were, the threading layer's own count (an
    eager product asks at every call)."""
    count = getattr(_numba_parallel, "_get_num_threads", None)
    if count is None or not getattr(_numba_parallel, "_is_initialized", False):
        return numba.get_num_threads()
    return count()


def busy_cores(last, now):
    """Cores the rest of the machine kept busy between two samples (time, machine busy
    seconds, own CPU seconds)."""
    span = now[0] - last[0]
    return max(0.0, (now[1] - last[1]) - (now[2] - last[2])) / span


def fit_threads():
    """Set this thread's Numba thread count to the cores other programs leave free (see
    above); cheap between looks (a clock read)."""
    f = _fit
    t = time.monotonic()
    if t < f.next or not _FIT:
        return
    f.next = t + _SAMPLE_S
    busy = _busy_seconds()
    if busy is None:
        return
    now = (t, busy, time.process_time())
    last, f.last = f.last, now
    current = numba.get_num_threads()
    if f.applied is None or current != f.applied:
        f.wanted = current  # first look, or the user set a count since
    if last is not None:
        f.free = int(len(_cpu_lines) - busy_cores(last, now) + 0.5)
    _apply(current)


def _apply(current):
    f = _fit
    n = f.wanted if f.free is None else max(1, min(f.wanted, f.free))
    if n != current:
        numba.set_num_threads(n)
    f.applied = n


def wanted(n):
    """The user set ``n`` threads (set_num_threads): the most this thread's count is fitted
    to, fitted at once to what the last look found free."""
    _fit.wanted = n
    if _FIT:
        _apply(n)
    else:
        _fit.applied = n
