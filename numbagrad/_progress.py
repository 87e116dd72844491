"""Progress for Numba compiles of numbagrad's kernels.

Numba compiles a function on its first call, silently: the first ``backward()`` on a new
machine (or after an upgrade) can sit for a minute or two compiling the sweep, which looks
like a hang, in a notebook above all. This module listens to Numba's ``numba:compile``
events, which fire only on real compiles (a load from Numba's on-disk cache fires none), and
when a compile of a numbagrad function has run for ``NUMBAGRAD_PROGRESS_AFTER`` seconds
(default 1) it says on stderr what is compiling and why, then how long it has taken so far:
the same line rewritten in a terminal, a line every 15 s elsewhere (Jupyter, logs), and a
last line when the compile ends. ``NUMBAGRAD_PROGRESS=0`` turns it off.

Only the outermost compile is reported: compiling the sweep compiles dozens of kernels it
calls, nested inside the sweep's own compile event.
"""

import os
import sys
import threading
import time

from numba.core import event

_EVERY = 15.0  # seconds between lines when the line cannot be rewritten in place
# how to pay the compile ahead of time (the warmup itself clears it)
HINT = " (`python -m numbagrad warmup` does this ahead of time)"


def _describe(dispatcher):
    fn = getattr(dispatcher, "py_func", None)
    module = getattr(fn, "__module__", "") or ""
    if not module.startswith("numbagrad"):
        return None
    name = getattr(fn, "__name__", "?")
    if module.startswith("numbagrad_sweep_"):
        # the sweep itself, or one of the parallel kernels for large nodes (each compiled
        # on its first use, a few seconds)
        return "the backward sweep" if name == "sweep" else f"the backward kernel {name}"
    if module.startswith("numbagrad_replay"):
        return f"the compiled replay of every op ({name})"
    if module.startswith("numbagrad_scalar_"):
        return f"the compiled replay's scalar instruction stream ({name})"
    return f"{module}.{name}"


class CompileProgress(event.Listener):
    """Report the outermost compile of a numbagrad function on ``stream`` (stderr) once it
    has run for ``after`` seconds."""

    def __init__(self, after=1.0, stream=None):
        self.after = after
        self.stream = stream
        self.local = threading.local()  # compile depth per thread: events nest
        self.count_on_line = False  # a rewritable count is on the line

    def _out(self):
        return self.stream if self.stream is not None else sys.stderr

    def on_start(self, ev):
        depth = getattr(self.local, "depth", 0)
        self.local.depth = depth + 1
        if depth:
            return
        what = _describe(ev.data.get("dispatcher"))
        if what is None:
            self.local.job = None
            return
        job = self.local.job = {"what": what, "t0": time.perf_counter(), "shown": False,
                                "done": threading.Event()}
        threading.Thread(target=self._watch, args=(job,), daemon=True,
                         name="numbagrad-compile-progress").start()

    def on_end(self, ev):
        self.local.depth = getattr(self.local, "depth", 1) - 1
        if self.local.depth:
            return
        job = getattr(self.local, "job", None)
        self.local.job = None
        if job is None:
            return
        job["done"].set()
        if job["shown"]:
            took = time.perf_counter() - job["t0"]
            # (Event.is_failed is inverted in Numba 0.68: read the exception itself)
            exc = getattr(ev, "_exc_details", None)
            if exc and exc[0] is not None:
                self._write(f"numbagrad: failed to compile {job['what']} after {took:.1f} s")
            else:
                self._write(f"numbagrad: compiled {job['what']} in {took:.1f} s (saved to "
                            "Numba's cache: later runs load it)")

    def _watch(self, job):
        if job["done"].wait(self.after):
            return
        job["shown"] = True
        self._write(f"numbagrad: compiling {job['what']} for this machine, once{HINT}...")
        tty = hasattr(self._out(), "isatty") and self._out().isatty()
        while not job["done"].wait(1.0 if tty else _EVERY):
            took = time.perf_counter() - job["t0"]
            self._write(f"numbagrad:   ... {took:.0f} s", rewrite=tty)

    def _write(self, text, rewrite=False):
        """A line; with ``rewrite``, a running count that the next write replaces (the
        final line, longer, covers it)."""
        out = self._out()
        try:
            out.write("\r" + text if rewrite else ("\r" if self.count_on_line else "") +
                      text + "\n")
            out.flush()
        except (ValueError, OSError):  # stream closed (interpreter exit)
            pass
        self.count_on_line = rewrite


_listener = None


def install():
    """Register the listener with Numba (once), unless ``NUMBAGRAD_PROGRESS=0``."""
    global _listener
    if _listener is not None or os.environ.get("NUMBAGRAD_PROGRESS", "1") == "0":
        return
    _listener = CompileProgress(float(os.environ.get("NUMBAGRAD_PROGRESS_AFTER", "1.0")))
    event.register("numba:compile", _listener)
