"""Compile progress goes through the ``numbagrad`` logger: INFO records with the lines' text,
silenced by the logger's level; a script that configured no logging sees them on stderr, and
once it configures logging they go to its handlers alone."""

import logging
import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from numba.core import event

from numbagrad.core import progress


def _jit(py_func, module):
    py_func.__module__ = module  # as if defined there (Numba reports the defining module)
    return numba.njit(py_func)


@pytest.fixture
def listener(monkeypatch):
    """A listener reporting every compile at once through the logger; the one numbagrad
    installed waits long enough to stay out of these tests' records."""
    if progress._listener is not None:
        monkeypatch.setattr(progress._listener, "after", 1e9)
    ours = progress.CompileProgress(after=0.0)
    event.register("numba:compile", ours)
    yield ours
    event.unregister("numba:compile", ours)


def _records(caplog):
    return [r for r in caplog.records if r.name == "numbagrad"]


def test_a_compile_is_an_info_record_of_the_numbagrad_logger(listener, caplog):
    caplog.set_level(logging.INFO, logger="numbagrad")

    def probe_logged(x):
        return np.tanh(x) * 2.0

    assert _jit(probe_logged, "numbagrad.probe")(1.0) == pytest.approx(2 * np.tanh(1.0))
    records = _records(caplog)
    assert [r.levelno for r in records] == [logging.INFO, logging.INFO]
    assert records[0].getMessage() == "numbagrad: compiling numbagrad.probe.probe_logged..."
    assert records[1].getMessage().startswith("numbagrad: compiled numbagrad.probe.probe_logged"
                                              " in ")


def test_the_loggers_level_silences_it(listener, caplog):
    caplog.set_level(logging.INFO)  # the root's: records below WARNING would be captured
    ng_logger = logging.getLogger("numbagrad")
    before = ng_logger.level
    ng_logger.setLevel(logging.WARNING)
    try:
        def probe_silenced(x):
            return x * 3.0

        assert _jit(probe_silenced, "numbagrad.probe")(2.0) == 6.0
    finally:
        ng_logger.setLevel(before)
    assert _records(caplog) == []

    def probe_heard(x):  # the same listener, the level back: heard again
        return x * 4.0

    caplog.set_level(logging.INFO, logger="numbagrad")
    _jit(probe_heard, "numbagrad.probe")(2.0)
    assert any("probe_heard" in r.getMessage() for r in _records(caplog))


SCRIPT = textwrap.dedent("""
    import logging, sys
    import numba
    import numbagrad

    def compile_one(name):
        def f(x):
            return x + 1.0
        f.__name__ = f.__qualname__ = name
        f.__module__ = "numbagrad.probe"
        numba.njit(f)(1.0)

    compile_one("unconfigured")
    logging.basicConfig(stream=sys.stdout, format="LOG %(name)s %(levelname)s %(message)s")
    compile_one("configured")
    logging.getLogger("numbagrad").setLevel(logging.WARNING)
    compile_one("silenced")
""")


def test_a_script_sees_the_lines_on_stderr_until_it_configures_logging(tmp_path):
    env = dict(os.environ, NUMBAGRAD_PROGRESS="1", NUMBAGRAD_PROGRESS_AFTER="0",
               NUMBA_CACHE_DIR=str(tmp_path / "nb"))
    run = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "numbagrad: compiling numbagrad.probe.unconfigured...\n" in run.stderr
    assert "numbagrad: compiled numbagrad.probe.unconfigured in " in run.stderr
    # configured: the root's handler shows it, stderr no longer (no line twice)
    assert ("LOG numbagrad INFO numbagrad: compiling numbagrad.probe.configured..."
            in run.stdout)
    assert "configured" not in run.stderr.replace("unconfigured", "")
    assert "silenced" not in run.stdout + run.stderr
