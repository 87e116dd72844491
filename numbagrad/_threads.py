"""One helper pool for the work numbagrad splits over threads itself: fused replay regions
and optimizer steps over large groups. Each piece is an @njit(nogil=True) kernel, which
releases the GIL, so the pieces run at once.

The pool is made on first use, and again in a forked child: a child inherits the pool
object but not its threads, and would queue its work forever."""

import os
import threading
from concurrent.futures import ThreadPoolExecutor

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
