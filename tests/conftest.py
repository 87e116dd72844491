"""Hypothesis profiles, the `fuzz` marker's opt-in, the fuzzer's program count, and no
compile workers beside xdist's.

Profiles (pick one with `--hypothesis-profile=NAME`; "ci" is loaded otherwise):
* ci: few examples, no deadline (Numba compiles on first use), derandomized so that a CI
  run is reproducible. Tests that set max_examples themselves keep their count.
* long: a long fuzzing run (tests/test_fuzz.py); bound it with `timeout`, fix the examples
  with `--hypothesis-seed`.

Tests marked `fuzz` (long-running) are skipped unless selected: `-m fuzz` (any -m
expression naming fuzz) or NUMBAGRAD_FUZZ=1.
"""

import os
import sys
import time

# under pytest-xdist every core already runs a test process: compile workers (core/
# compile_pool) could only add processes; tests/test_compile_pool.py sets them up itself
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("NUMBAGRAD_COMPILE_WORKERS", "0")
    # nor BLAS threads beside them: two workers with 2-thread OpenBLAS pools each made the
    # suite about twice as slow (tests/test_blas_threads.py runs its own processes without it)
    os.environ.setdefault("NUMBAGRAD_BLAS_THREADS", "1")

# tests choose their thread counts: not fitted to what other processes (the other xdist
# worker) leave free; tests/test_fit_threads.py turns the fitting on itself
os.environ.setdefault("NUMBAGRAD_FIT_THREADS", "0")

import pytest  # noqa: E402
from hypothesis import HealthCheck, Phase, settings  # noqa: E402

_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True,
                          suppress_health_check=_SLOW)
# no explain phase: it traces every line of a shrunk example again, minutes for a program
settings.register_profile("long", max_examples=100_000, deadline=None,
                          suppress_health_check=_SLOW,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
settings.load_profile("ci")  # --hypothesis-profile, handled after this file, overrides it


def pytest_collection_modifyitems(config, items):
    for item in items:  # a test may say which of its parametrizations are exhaustive
        when = getattr(getattr(item, "function", None), "exhaustive_when", None)
        if when is not None and hasattr(item, "callspec") and when(item.callspec.params):
            item.add_marker(pytest.mark.exhaustive)
    markexpr = config.getoption("markexpr") or ""
    for marker, env, reason in (
            ("fuzz", "NUMBAGRAD_FUZZ", "long fuzzing run: select it with -m fuzz"),
            ("exhaustive", "NUMBAGRAD_EXHAUSTIVE",
             "float32 twin of a generated float64 case (the same generated kernel source): "
             "select it with -m exhaustive")):
        if marker in markexpr or os.environ.get(env):
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if item.get_closest_marker(marker):
                item.add_marker(skip)


def _torch_globals(torch):
    return (torch.get_default_dtype(), torch.is_grad_enabled(),
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
            len(torch.overrides._get_current_function_mode_stack()))


@pytest.fixture(autouse=True)
def _torch_globals_restored():
    """Tests run the same expression on numbagrad and on torch, and some of those set a torch
    global (set_default_device installs a function mode, under which torch's l1_loss drops
    `weight`): put torch back so that the next test on this worker sees its defaults."""
    torch = sys.modules.get("torch")
    before = _torch_globals(torch) if torch is not None else None
    yield
    if before is None or _torch_globals(torch) == before:
        return
    dtype, grad, deterministic, warn_only, modes = before
    torch.set_default_dtype(dtype)
    torch.set_grad_enabled(grad)
    torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
    if len(torch.overrides._get_current_function_mode_stack()) > modes:
        torch.set_default_device(None)


class FuzzStats(dict):
    def __repr__(self):  # hypothesis prints a failing example's arguments: not the counters
        return "FuzzStats(...)"


@pytest.fixture(scope="session")
def fuzz_stats(pytestconfig):
    """Counters the fuzzer adds to (programs tried, steps, ...), printed at the end."""
    stats = getattr(pytestconfig, "_fuzz_stats", None)
    if stats is None:
        stats = pytestconfig._fuzz_stats = FuzzStats(started=time.time())
    return stats


def pytest_sessionfinish(session):
    # an xdist worker hands its counters to the controller (pytest_testnodedown)
    stats = getattr(session.config, "_fuzz_stats", None)
    if stats and hasattr(session.config, "workeroutput"):
        session.config.workeroutput["fuzz_stats"] = dict(stats)  # execnet sends plain types


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    stats = getattr(node, "workeroutput", {}).get("fuzz_stats")
    if stats:
        mine = getattr(node.config, "_fuzz_stats", None)
        if mine is None:
            mine = node.config._fuzz_stats = {"started": stats["started"]}
        for k, v in stats.items():
            if k == "started":
                mine[k] = min(mine[k], v)
            else:
                mine[k] = mine.get(k, 0) + v


def pytest_terminal_summary(terminalreporter, config):
    stats = getattr(config, "_fuzz_stats", None)
    if stats and stats.get("programs"):
        counts = ", ".join(f"{v} {k}" for k, v in stats.items() if k != "started")
        terminalreporter.write_line(
            f"fuzz: {counts} in {time.time() - stats['started']:.0f} s")
