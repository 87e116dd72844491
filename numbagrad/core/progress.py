"""Progress for Numba compiles of numbagrad's kernels.

Numba compiles a function on its first call, silently: a first use of a large op on a new
machine (a convolution, a fused region) can sit for seconds compiling, which looks like a
hang, in a notebook above all. This module listens to Numba's ``numba:compile``
events, which fire only on real compiles (a load from Numba's on-disk cache fires none), and
when a compile of a numbagrad function has run for ``NUMBAGRAD_PROGRESS_AFTER`` seconds
(default 1) it says what is compiling and why, then how long it has taken so far: a line
every 15 s (in a terminal, the same line rewritten each second), and a last line when the
compile ends. ``NUMBAGRAD_PROGRESS=0`` turns it off.

The lines are INFO records of the ``numbagrad`` logger, so a program controls them with
``logging`` as it does torch's and JAX's:
``logging.getLogger("numbagrad").setLevel(logging.WARNING)`` silences them. The logger's level
is INFO unless the program set one, and a script that configured no logging still sees the
lines on stderr: a handler on the ``numbagrad`` logger prints them while the root logger and
the ``numbagrad`` logger have no other handlers; once the program adds one (``basicConfig``,
pytest's log capture), the records go there alone.

Only the outermost compile is reported: a kernel's compile compiles the helpers it calls,
nested inside its own.
"""

import contextlib
import logging
import os
import sys
import threading
import time

from numba.core import event

logger = logging.getLogger("numbagrad")

_EVERY = 15.0  # seconds between lines when the line cannot be rewritten in place
# how to pay the compile ahead of time (the warmup itself clears it)
HINT = (" (`python -m numbagrad warmup your_script.py` compiles what a script needs ahead of "
        "time)")


def _describe(dispatcher):
    """(what is compiling, whether Numba caches it on disk), or None for others' code."""
    fn = getattr(dispatcher, "py_func", None)
    module = getattr(fn, "__module__", "") or ""
    if not module.startswith("numbagrad"):
        return None
    name = getattr(fn, "__name__", "?")
    cached = type(getattr(dispatcher, "_cache", None)).__name__ not in ("NullCache", "NoneType")
    if module.startswith("numbagrad_op_"):
        op = module[len("numbagrad_op_"):].rsplit("_", 1)[0]
        return f"a kernel of op {op} ({name})", cached
    if module.startswith("numbagrad_scalar_"):
        return f"the compiled replay's scalar instruction stream ({name})", cached
    if module.startswith("numbagrad_fused_"):
        return f"a fused elementwise region ({name})", cached
    return f"{module}.{name}", cached


class _ScriptHandler(logging.Handler):
    """The records of the ``numbagrad`` logger as bare lines on the current ``sys.stderr``
    (a notebook's too), for a program that configured no logging; it stands aside as soon
    as another handler would show them. A running count it may rewrite in place."""

    def __init__(self):
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))
        self.count_on_line = False  # a rewritable count is on the line

    def active(self):
        return not logging.getLogger().handlers and all(h is self for h in logger.handlers)

    def handle(self, record):
        return super().handle(record) if self.active() else False

    def emit(self, record):
        rewrite = getattr(record, "numbagrad_rewrite", False)
        out = sys.stderr
        if out is None:
            return
        self.count_on_line = _write_line(out, self.format(record), rewrite, self.count_on_line)

    def tty(self):
        return self.active() and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()


def _write_line(out, text, rewrite, count_on_line):
    """Write ``text`` to ``out`` as a line, or with ``rewrite`` as a count the next line
    replaces; returns whether a rewritable count is now on the line."""
    try:
        out.write("\r" + text if rewrite else ("\r" if count_on_line else "") + text + "\n")
        out.flush()
    except (ValueError, OSError):  # stream closed (interpreter exit)
        pass
    return rewrite


_script_handler = _ScriptHandler()


def failed(ev):
    """Whether a ``numba:compile`` event ended in an exception (Event.is_failed is inverted
    in Numba 0.68: read the exception itself)."""
    exc = getattr(ev, "_exc_details", None)
    return bool(exc and exc[0] is not None)


class CompileProgress(event.Listener):
    """Report the outermost compile of a numbagrad function once it has run for ``after``
    seconds: as records of the ``numbagrad`` logger, or, given a ``stream``, as lines
    written to it."""

    def __init__(self, after=1.0, stream=None):
        self.after = after
        self.stream = stream
        self.local = threading.local()  # compile depth per thread: events nest
        self.count_on_line = False  # a rewritable count is on the line

    def on_start(self, ev):
        depth = getattr(self.local, "depth", 0)
        self.local.depth = depth + 1
        if depth:
            return
        described = _describe(ev.data.get("dispatcher"))
        self.local.job = None if described is None else self.start(*described)

    def on_end(self, ev):
        self.local.depth = getattr(self.local, "depth", 1) - 1
        if self.local.depth:
            return
        job = getattr(self.local, "job", None)
        self.local.job = None
        if job is not None:
            self.end(job, failed=failed(ev))

    def start(self, what, cached):
        """Begin watching a compile of ``what``: a line once it has run ``after`` seconds."""
        job = {"what": what, "cached": cached, "t0": time.perf_counter(), "shown": False,
               "done": threading.Event()}
        threading.Thread(target=self._watch, args=(job,), daemon=True,
                         name="numbagrad-compile-progress").start()
        return job

    def end(self, job, failed=False):
        job["done"].set()
        if job["shown"]:
            took = time.perf_counter() - job["t0"]
            if failed:
                self._write(f"numbagrad: failed to compile {job['what']} after {took:.1f} s")
            elif job.get("loaded"):
                self._write(f"numbagrad: loaded {job['what']} from Numba's cache in "
                            f"{took:.1f} s")
            elif job["cached"]:
                self._write(f"numbagrad: compiled {job['what']} in {took:.1f} s (saved to "
                            "Numba's cache: later runs load it)")
            else:
                self._write(f"numbagrad: compiled {job['what']} in {took:.1f} s (not cached: "
                            "a new process compiles it again)")

    def _watch(self, job):
        if job["done"].wait(self.after):
            return
        job["shown"] = True
        where = f" for this machine{HINT}" if job["cached"] else ""
        self._write(f"numbagrad: compiling {job['what']}{where}...")
        if self.stream is None:
            tty = _script_handler.tty()
        else:
            tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        while not job["done"].wait(1.0 if tty else _EVERY):
            took = time.perf_counter() - job["t0"]
            self._write(f"numbagrad:   ... {took:.0f} s", rewrite=tty)

    def _write(self, text, rewrite=False):
        """A line; with ``rewrite``, a running count that the next write replaces (the
        final line, longer, covers it)."""
        if self.stream is None:
            logger.info("%s", text, extra={"numbagrad_rewrite": rewrite})
            return
        self.count_on_line = _write_line(self.stream, text, rewrite, self.count_on_line)


_listener = None


def install():
    """Register the listener with Numba (once), unless ``NUMBAGRAD_PROGRESS=0``."""
    global _listener
    if _listener is not None or os.environ.get("NUMBAGRAD_PROGRESS", "1") == "0":
        return
    if logger.level == logging.NOTSET:  # seen by default, as the stderr lines always were
        logger.setLevel(logging.INFO)
    if _script_handler not in logger.handlers:
        logger.addHandler(_script_handler)
    _listener = CompileProgress(float(os.environ.get("NUMBAGRAD_PROGRESS_AFTER", "1.0")))
    event.register("numba:compile", _listener)


@contextlib.contextmanager
def compiling(what, cached=True):
    """Report a compile that Numba's events do not show (a ``@cfunc``) as the others.
    Yields a dict (or None): set its "loaded" when the code came from Numba's cache."""
    if _listener is None:
        yield None
        return
    local = _listener.local
    depth = getattr(local, "depth", 0)
    local.depth = depth + 1  # the helpers it compiles are part of it, not compiles of their own
    job = _listener.start(what, cached) if depth == 0 else None
    failed = True
    try:
        yield job
        failed = False
    finally:
        local.depth = depth
        if job is not None:
            _listener.end(job, failed)
