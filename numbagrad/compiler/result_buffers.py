"""Arrays for the gradients a compiled call returns, reused once the caller drops them."""

import sys
import threading

import numpy as np


class ResultBuffers:
    """Arrays of ``size`` elements of ``dtype`` for a call's gradients: one an earlier call
    returned, if nothing refers to it any more (the caller dropped every gradient, and the
    views share its base), else a new one. Fresh memory is expensive: writing 3 x 4M new
    float64 costs four times the copy itself in page faults."""

    def __init__(self, size, dtype=np.float64):
        self.size, self.dtype = size, dtype
        self.kept = []  # at most two: a loop that keeps the last result alternates them
        self.lock = threading.Lock()

    def get(self):
        with self.lock:
            for buf in self.kept:
                # references: the list, this loop's name, getrefcount's argument
                if sys.getrefcount(buf) == 3:
                    return buf
            buf = np.empty(self.size, self.dtype)
            if len(self.kept) < 2:
                self.kept.append(buf)
            return buf
