"""The garbage collector is paused while Numba compiles and comes back as it was."""

import gc

import numpy as np
from numba import njit
from numba.core import event

import numbagrad  # noqa: F401  (installs the pause)
from numbagrad.core import gc_pause


class _Seen(event.Listener):
    def __init__(self):
        self.enabled = []

    def on_start(self, ev):
        self.enabled.append(gc.isenabled())

    def on_end(self, ev):
        pass


def _compile_something(k):
    @njit
    def f(x):
        return x * k + 1.0
    return f(np.ones(3))


def test_the_collector_is_off_during_a_compile_and_back_on_after():
    seen = _Seen()
    event.register("numba:compile", seen)
    try:
        assert gc.isenabled()
        _compile_something(2.0)
    finally:
        event.unregister("numba:compile", seen)
    assert seen.enabled and not any(seen.enabled)
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off():
    gc.disable()
    try:
        _compile_something(3.0)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_paused_restores_the_collector_when_the_block_raises():
    try:
        with gc_pause.paused():
            assert not gc.isenabled()
            raise ValueError("a failed compile")
    except ValueError:
        pass
    assert gc.isenabled()
