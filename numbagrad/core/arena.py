"""A tape's value arena: one float64 NumPy buffer the recorded values are copied into,
grown by doubling and handed from a dying tape to the next one (core/tape.py owns what the
offsets mean)."""

import os
import sys

import numpy as np


class Arena:
    """A tape's float64 value arena: a NumPy buffer grown by doubling, with its length.

    Not an ``array.array``: that grows by ~6% per resize, into fresh memory, so appending a
    (64, 256) activation (128 KB) to a growing arena cost 50-130 us of copies and page
    faults, several times the op. Here a tape that dies hands its buffer to the next one
    (``_spare``), so a training loop's arena is written in place, step after step."""

    # cells: a memoryview of buf, for one number at a time (a tenth of NumPy's item assignment);
    # n: the values given offsets; pending: the arrays of the last of those, from offset
    # start, not yet written into buf (flush)
    # placed: offsets given to adjoints alone (Tape.place_unwritten), no value's
    __slots__ = ("buf", "n", "cells", "pending", "start", "placed")

    def __init__(self):
        try:
            self.buf = _spare.pop()  # atomic: two threads never get one buffer
        except IndexError:
            self.buf = np.empty(_ARENA_START)
        self.cells = memoryview(self.buf)
        self.n = 0
        self.pending = []
        self.start = 0
        self.placed = 0

    def __len__(self):
        return self.n

    def array(self):
        """The values as a float64 array (a view: valid until the arena grows)."""
        if self.pending:
            self.flush()
        return self.buf[:self.n]

    def flush(self):
        """Write the pending arrays into their places, flattened in C order, as float64."""
        n = self.n
        if n > len(self.buf):
            self._grow(n)
        # (unsafe: what assigning each array into its slice did, float16 and all)
        np.concatenate(self.pending, axis=None, out=self.buf[self.start:n], casting="unsafe")
        self.pending = []

    def keep(self, value, size):
        """Give array ``value`` of ``size`` elements the next offsets, its copy pending
        (written with the others, 64 at a time, by flush)."""
        pending = self.pending
        n = self.n
        if not pending:
            self.start = n
        elif len(pending) >= _FLUSH_AT:
            self.flush()
            self.start = n
            pending = self.pending
        pending.append(value)
        self.n = n + size

    def write_at(self, at, value):
        """Write array ``value`` at offset ``at``, given out before (an adjoint's place a
        backward gave a node whose value was not kept: see Tape.need)."""
        if self.pending:
            self.flush()
        end = at + value.size
        if end > len(self.buf):
            self._grow(end)
        self.buf[at:end] = value.reshape(-1)

    def append(self, x):
        if self.pending:
            self.flush()
        n = self.n
        if n >= len(self.buf):
            self._grow(n + 1)
        self.cells[n] = x
        self.n = n + 1

    def _grow(self, need):
        size = max(need, 2 * len(self.buf))
        buf = None
        if need < _last_large:
            # a loop whose tapes outgrow the spares: straight to the size the last one
            # reached, not doubling into fresh memory a dozen times; into the last one's
            # own buffer if it was kept (fresh pages cost the kernel's zeroing, page by page)
            try:
                buf = _large.pop()
            except IndexError:
                pass
            else:
                global _large_idle
                _large_idle = 0
                if len(buf) < need:
                    buf = None
            if buf is None:
                try:
                    buf = np.empty(_last_large)
                except MemoryError:  # (the hint is only a hint)
                    buf = np.empty(size)
        else:
            buf = np.empty(size)
        written = min(self.start if self.pending else self.n, len(self.buf))
        buf[:written] = self.buf[:written]
        self.buf = buf
        self.cells = memoryview(buf)

    def release(self):
        """Hand the buffer on for reuse, if nothing views it (the tape is dying)."""
        buf = self.buf
        self.cells = None  # (it holds a reference to buf)
        self.pending = []
        if _spare is None:  # interpreter shutdown: module globals are already cleared
            return
        # references: this attribute, the local name, getrefcount's argument; a NumPy view
        # anywhere would add its own
        global _large_idle
        if len(buf) > _SPARE_LARGEST:
            global _last_large
            n = self.n - self.placed
            _last_large = n + (n >> 3)
            if len(buf) <= _LARGE_MAX and sys.getrefcount(buf) == 3:
                _large[:] = [buf]
                _large_idle = 0
            return
        if _large:  # kept for the next large tape; let go after tapes that did not need it
            _large_idle += 1
            if _large_idle > _LARGE_IDLE_MAX:
                _large.clear()
        if len(_spare) < _SPARE_MAX and sys.getrefcount(buf) == 3:
            _spare.append(buf)


_ARENA_START = 1024
# pending arrays written at once (Arena.flush): while they are still in cache
_FLUSH_AT = 64
_SPARE_MAX = 4  # buffers kept for new tapes (list append/pop: atomic across threads)
_SPARE_LARGEST = 1 << 23  # 64 MB: a larger arena is let go
_spare = []
# the values the last tape too large for a spare held, and an eighth more: the size a tape
# that outgrows its spare grows to at once
_last_large = 0
# The last such tape's buffer, kept for the next one (a training loop's tapes): at most one,
# of at most an eighth of the machine's memory, let go once this many tapes died without
# taking it
_large = []
_large_idle = 0
_LARGE_IDLE_MAX = 8
try:
    _LARGE_MAX = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 8 // 8
except (ValueError, OSError, AttributeError):  # (no sysconf: a fixed 256 MB of values)
    _LARGE_MAX = 1 << 25
