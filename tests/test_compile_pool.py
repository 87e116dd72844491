"""Compiles shared with worker processes (core/compile_pool): every job runs in this process
in the end, workers only do some first; a worker that fails or dies costs nothing but time."""

import os
import pathlib
import subprocess
import sys
import textwrap
import time

import pytest

from numbagrad.core import compile_pool

HERE = pathlib.Path(__file__).parent


@pytest.fixture
def jobs_env(monkeypatch, tmp_path):
    # the workers import tests/pool_jobs.py
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(HERE), os.environ.get("PYTHONPATH")) if p))
    sys.path.insert(0, str(HERE))
    yield tmp_path
    sys.path.remove(str(HERE))


def _jobs(directory, n, mode="slow"):
    return [("pool_jobs", "mark", str(directory), f"job{k}", os.getpid(), mode)
            for k in range(n)]


def _runs(directory):
    """{job name: set of pids that ran it}"""
    out = {}
    for f in directory.iterdir():
        name, pid = f.name.split(".")
        out.setdefault(name, set()).add(int(pid))
    return out


def _run_with_one_worker(directory, n):
    """Run n jobs on a pool of one worker; {job name: pids that ran it}."""
    pool = compile_pool.Pool(workers=1)
    try:
        pool.run(_jobs(directory, n))
    finally:
        pool.close()
    return _runs(directory)


def test_jobs_are_shared_with_a_worker_and_all_run_here(jobs_env):
    # 24 jobs of 0.4 s: time for the worker to start (a second idle, several on a loaded
    # machine) before this process has run them all
    runs = _run_with_one_worker(jobs_env, 24)
    assert sorted(runs) == sorted(f"job{k}" for k in range(24))
    assert all(os.getpid() in pids for pids in runs.values())  # each ran here in the end
    by_worker = [name for name, pids in runs.items() if pids - {os.getpid()}]
    assert by_worker, "no job ran in the worker"
    assert len(by_worker) < 24, "this process took none of the jobs"


@pytest.mark.parametrize("mode", ["raise", "die"])
def test_a_failing_or_dying_worker_leaves_its_jobs_to_this_process(jobs_env, mode):
    pool = compile_pool.Pool(workers=1)
    try:
        pool.prefetch(_jobs(jobs_env, 6, mode))  # the worker takes them, then fails
        pool.run(_jobs(jobs_env, 6, mode))
        pool.run(_jobs(jobs_env, 3, mode))  # again, after the loss: a new worker, same end
    finally:
        pool.close()
    runs = _runs(jobs_env)
    assert sorted(runs) == [f"job{k}" for k in range(6)]
    assert all(pids == {os.getpid()} for pids in runs.values())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("mode", ["stop", "hang"])
def test_a_stopped_or_stalled_worker_is_abandoned(jobs_env, mode, monkeypatch):
    """A worker stopped (SIGSTOP) or sleeping inside a job: its job is compiled here after
    a bounded wait (a short stall limit for the test), not after WAIT_LIMIT."""
    monkeypatch.setattr(compile_pool, "STALL_LIMIT", 3.0)
    pool = compile_pool.Pool(workers=1)
    try:
        jobs = _jobs(jobs_env, 2, mode)
        pool.prefetch(jobs)  # the worker takes the last one first, then stalls in it
        deadline = time.monotonic() + 60
        while not pool.busy and time.monotonic() < deadline:
            time.sleep(0.05)
        started = time.monotonic()
        pool.run(jobs)
        took = time.monotonic() - started
        assert not pool.workers  # killed and forgotten
    finally:
        pool.close()
    assert took < 30, took
    runs = _runs(jobs_env)
    assert sorted(runs) == ["job0", "job1"]
    assert all(pids == {os.getpid()} for pids in runs.values())


def test_prefetch_hands_jobs_to_the_worker_and_run_waits_for_them(jobs_env):
    pool = compile_pool.Pool(workers=1)
    try:
        jobs = _jobs(jobs_env, 2)
        pool.prefetch(jobs)
        pool.run(jobs)
    finally:
        pool.close()
    runs = _runs(jobs_env)
    assert sorted(runs) == ["job0", "job1"]
    assert all(os.getpid() in pids for pids in runs.values())


def test_no_workers_when_turned_off(jobs_env, monkeypatch):
    monkeypatch.setenv("NUMBAGRAD_COMPILE_WORKERS", "0")
    pool = compile_pool.Pool()
    assert pool.workers_wanted == 0
    pool.prefetch(_jobs(jobs_env, 2))
    pool.run(_jobs(jobs_env, 4))
    assert pool.workers == []
    assert all(pids == {os.getpid()} for pids in _runs(jobs_env).values())


def test_a_cold_compiled_replay_shares_its_kernels_with_a_worker(tmp_path):
    """The first compiled Rosenbrock on empty caches: a worker compiles some kernels (this
    process loads them from Numba's cache), and the result is the one computed alone."""
    script = textwrap.dedent("""
        import numpy as np, numbagrad as ng
        from numbagrad.engine import kernel_tables
        def f(x):  # three ops: kernels enough to share, few to compile twice cold
            return (ng.sin(x) * x).sum()
        v, g = ng.compile(ng.func.value_and_grad(f))(np.linspace(-1, 1, 50))
        loaded = sum(k.cache_hits > 0 for k in kernel_tables._cfuncs.values())
        print(repr(float(v)), repr(float(g.sum())), loaded)
    """)
    outs = []
    for workers in ("1", "0"):
        env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / f"nb{workers}"),
                   NUMBAGRAD_CACHE_DIR=str(tmp_path / f"ng{workers}"),
                   NUMBAGRAD_COMPILE_WORKERS=workers, NUMBAGRAD_PROGRESS="0")
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout.split())
    (v1, g1, loaded1), (v0, g0, loaded0) = outs
    assert (v1, g1) == (v0, g0)
    assert int(loaded1) > 0 and int(loaded0) == 0


def test_a_module_planted_in_the_working_directory_is_not_imported_by_a_worker(
        jobs_env, tmp_path_factory, monkeypatch):
    planted = tmp_path_factory.mktemp("planted")
    marker = planted / "payload_ran"
    (planted / "numpy.py").write_text(f"open({str(marker)!r}, 'w').close()\n"
                                      "raise ImportError('planted')\n")
    monkeypatch.chdir(planted)
    runs = _run_with_one_worker(jobs_env, 12)
    assert [name for name, pids in runs.items() if pids - {os.getpid()}], \
        "no job ran in the worker"
    assert not marker.exists()
