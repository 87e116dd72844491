"""Python's cyclic garbage collector paused while Numba compiles.

A compile allocates hundreds of thousands of short-lived objects, and the full collections
they set off walk every object of the process (Numba's, NumPy's, the user's). Paused for the
length of each outermost compile, the collector's time during the first compiled Rosenbrock
gradient on empty caches went from 0.97 s (0.8 s of it full collections) to 0.5 s, of ~8 s
(one process, gc.callbacks, 2 runs each). What a compile leaves behind is collected by the
first collection after it.
"""

import contextlib
import gc
import threading

from numba.core import event

_lock = threading.Lock()
_depth = 0  # compiles under way (events nest: a kernel's compile compiles its helpers)
_was_enabled = False
_listener = None


def pause():
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1


def resume():
    global _depth
    with _lock:
        _depth = max(_depth - 1, 0)
        if _depth == 0 and _was_enabled:
            gc.enable()


@contextlib.contextmanager
def paused():
    """The collector paused for the block (a compile Numba's events do not show: a cfunc)."""
    pause()
    try:
        yield
    finally:
        resume()


class _Pause(event.Listener):
    def on_start(self, ev):
        pause()

    def on_end(self, ev):
        resume()


def install():
    """Pause the collector during every Numba compile of this process (once)."""
    global _listener
    if _listener is None:
        _listener = _Pause()
        event.register("numba:compile", _listener)
