"""One compile of a function at a time across processes that share Numba's cache directory.

Processes started together on a cold cache (pytest-xdist workers, Dask workers, a notebook
beside a script) each miss the same entries and compile the same kernels side by side, every
one paying the whole compile. With this lock, a process that misses an entry takes the
function's lock file (beside its cache index) before compiling and lets go once the entry is
saved (or the compile failed); another process that misses it meanwhile waits, then loads
what the first saved. The lock is an advisory ``flock``: the system drops it when its holder
exits, even killed. A wait ends after ``WAIT_LIMIT`` seconds (a holder stopped in a
debugger), and the waiter compiles the function itself, as it would have without the lock.
No lock on systems without ``fcntl`` (Windows), or with ``NUMBAGRAD_COMPILE_LOCK=0``.
"""

import os
import threading
import time

from numba.core import event

try:
    import fcntl
except ImportError:  # not on Unix
    fcntl = None

from . import progress

ENABLED = fcntl is not None and os.environ.get("NUMBAGRAD_COMPILE_LOCK", "1") != "0"
WAIT_LIMIT = 60.0  # seconds
_POLL = 0.02
_held = {}  # lock path -> open file, while this process compiles that function
_local = threading.Lock()


def acquire(index_path, name):
    """Take the compile lock of the function whose cache index is ``index_path`` (``name``
    for the message shown while waiting). Returns True if another process held it (its
    compile may now be in the cache: load again), False if it was free or is held here
    already. On any error (a read-only cache directory), no lock: False."""
    path = index_path + ".lock"
    with _local:
        if path in _held:
            return False
        try:
            f = open(path, "a+b")
        except OSError:
            return False
        waited, start, told = False, time.monotonic(), False
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = True
                waiting = time.monotonic() - start
                if waiting > WAIT_LIMIT:
                    f.close()
                    return True  # compile here anyway
                if not told and waiting > 1.0:
                    told = True
                    progress.logger.info("numbagrad: waiting for another process that is "
                                         "compiling %s (Numba's cache)...", name)
                time.sleep(_POLL)
            except OSError:
                f.close()
                return False
        _held[path] = f
        return waited


def release(index_path):
    """Let go of the lock taken by ``acquire`` (no-op if not held)."""
    with _local:
        f = _held.pop(index_path + ".lock", None)
    if f is not None:
        try:
            fcntl.flock(f, fcntl.LOCK_UN)
        finally:
            f.close()


class _ReleaseOnFailure(event.Listener):
    """A compile that raised saves nothing: its lock goes at once, not at the process's exit."""

    def on_start(self, ev):
        pass

    def on_end(self, ev):
        cache_file = getattr(getattr(ev.data.get("dispatcher"), "_cache", None), "_cache_file",
                             None)
        if cache_file is not None and progress.failed(ev):
            release(cache_file._index_path)


if ENABLED:
    event.register("numba:compile", _ReleaseOnFailure())
