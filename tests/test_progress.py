"""Compile progress: a first compile of a numbagrad kernel says what is compiling and how long
it took; other libraries' compiles and cache loads say nothing."""

import io

import numba
import numpy as np
import pytest
from numba.core import event

from numbagrad.core.progress import CompileProgress


def _jit(py_func, module):
    py_func.__module__ = module  # as if defined there (Numba reports the defining module)
    return numba.njit(py_func)


@pytest.fixture
def listener():
    out = io.StringIO()
    progress = CompileProgress(after=0.0, stream=out)
    event.register("numba:compile", progress)
    yield progress, out
    event.unregister("numba:compile", progress)


def test_a_numbagrad_compile_is_reported_once_with_its_time(listener):
    _, out = listener

    def inner(v):
        return np.tanh(v) * 2.0

    inner_jit = _jit(inner, "numbagrad.probe")

    def outer(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += inner_jit(x[i])
        return s

    outer_jit = _jit(outer, "numbagrad.probe")
    assert outer_jit(np.ones(3)) == pytest.approx(3 * 2 * np.tanh(1.0))
    lines = out.getvalue().splitlines()
    # the nested compile of inner() is part of outer's: one report
    # not cached by Numba (no cache=True): the lines say so rather than promise a next time
    assert [ln for ln in lines if "compiling" in ln] == \
        ["numbagrad: compiling numbagrad.probe.outer..."]
    assert lines[-1].startswith("numbagrad: compiled numbagrad.probe.outer in ")
    assert lines[-1].endswith("(not cached: a new process compiles it again)")
    before = out.getvalue()
    outer_jit(np.ones(4))  # same signature: no compile, no word
    assert out.getvalue() == before


def test_other_modules_and_failures(listener):
    _, out = listener

    def theirs(x):
        return x + 1

    _jit(theirs, "someone_else")(1.0)
    assert out.getvalue() == ""

    def broken(x):
        return undefined_name + x  # noqa: F821 - fails to type, on purpose

    with pytest.raises(numba.core.errors.TypingError):
        _jit(broken, "numbagrad.probe")(1.0)
    assert "numbagrad: failed to compile numbagrad.probe.broken" in out.getvalue()


def test_short_compiles_stay_quiet():
    out = io.StringIO()
    progress = CompileProgress(after=60.0, stream=out)
    event.register("numba:compile", progress)
    try:
        def quick(x):
            return x * 3

        _jit(quick, "numbagrad.probe")(2.0)
    finally:
        event.unregister("numba:compile", progress)
    assert out.getvalue() == ""
