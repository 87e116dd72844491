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


def test_warmup_of_a_script_compiles_what_it_needs_for_later_processes(tmp_path):
    import os
    import subprocess
    import sys
    script = tmp_path / "train.py"
    script.write_text("import sys\nimport numbagrad as ng\n"
                      "x = ng.tensor([0.5, 1.0], requires_grad=True)\n"
                      "(ng.sinh(x) * x).sum().backward()\n"
                      "print('grad', x.grad.tolist(), sys.argv[1:])\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nb"),
               NUMBAGRAD_CACHE_DIR=str(tmp_path / "ng"), NUMBAGRAD_PROGRESS="1")
    first = subprocess.run([sys.executable, "-m", "numbagrad", "warmup", str(script), "--lr",
                            "1"], env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert "grad" in first.stdout and "['--lr', '1']" in first.stdout  # it ran, with its args
    newly = int(first.stdout.split("s; ")[1].split(" kernel modules")[0])
    assert newly >= 1, first.stdout
    later = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, timeout=600)
    assert later.returncode == 0, later.stderr
    assert "compiling" not in later.stderr + later.stdout  # everything loads from the cache
    bad = subprocess.run([sys.executable, "-m", "numbagrad", "warmup", str(tmp_path / "no.py")],
                         env=env, capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and "no such script" in bad.stderr
