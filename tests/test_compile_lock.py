"""numbagrad.core.compile_lock: two processes missing the same cache entry compile it once;
the other waits and loads it. A failed compile lets go of the lock at once."""

import importlib
import os
import subprocess
import sys
import textwrap

import numba
import pytest

from numbagrad.core import compile_lock, safe_cache

fcntl = pytest.importorskip("fcntl")

pytestmark = pytest.mark.skipif(not compile_lock.ENABLED, reason="no compile lock here")

_MODULE = """
from numba import njit

@njit(cache=True)
def twice_plus_one(x):
    return 2.0 * x + 1.0

@njit(cache=True)
def does_not_type(x):
    return x + "a string"
"""


def _load_module(tmp_path, name):
    """A module of its own per test (its functions' cache under this test's directory)."""
    (tmp_path / f"{name}.py").write_text(_MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))
    for f in (mod.twice_plus_one, mod.does_not_type):
        safe_cache.guard(f)
    return mod


def _held_elsewhere(index_path):
    with open(index_path + ".lock", "a+b") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


def test_a_second_process_waits_for_the_compile_and_loads_it(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(cache))
    mod = _load_module(tmp_path, "lockmod_wait")
    index = mod.twice_plus_one._cache._cache_file._index_path
    os.makedirs(os.path.dirname(index), exist_ok=True)
    assert compile_lock.acquire(index, "twice_plus_one") is False  # free: held here now
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numbagrad  # noqa: F401  (the progress logger prints to stderr)
        from numbagrad.core import safe_cache
        import lockmod_wait
        f = safe_cache.guard(lockmod_wait.twice_plus_one)
        assert f(3.0) == 7.0
        print(sum(f.stats.cache_misses.values()), sum(f.stats.cache_hits.values()))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), NUMBAGRAD_COMPILE_WORKERS="0")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        # the child says it waits (after a second of waiting) while this process holds the lock
        line = child.stderr.readline()
        while line and "waiting for another process" not in line:
            line = child.stderr.readline()
        assert "twice_plus_one" in line
        assert mod.twice_plus_one(1.0) == 3.0  # compiled and saved here, which lets go
        out, err = child.communicate(timeout=120)
    finally:
        compile_lock.release(index)
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    misses, hits = map(int, out.split())
    assert (misses, hits) == (0, 1)  # it loaded what this process compiled


def test_a_failed_compile_lets_go_of_its_lock(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(cache))
    mod = _load_module(tmp_path, "lockmod_fail")
    with pytest.raises(numba.core.errors.TypingError):
        mod.does_not_type(1.0)
    index = mod.does_not_type._cache._cache_file._index_path
    assert not _held_elsewhere(index)
    assert mod.twice_plus_one(2.0) == 5.0
    assert not _held_elsewhere(mod.twice_plus_one._cache._cache_file._index_path)
