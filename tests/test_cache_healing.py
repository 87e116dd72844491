"""Numba cache files that are truncated, emptied, filled with garbage or swapped between two
kernels: the next process sets the entry aside with a warning naming it, compiles again and
computes the right answer (each case in fresh processes on caches of their own)."""

import os
import re
import shutil
import subprocess
import sys

import pytest

PROGRAM = """
import math
import numbagrad as torch
x = torch.tensor(0.5, requires_grad=True)
s, t = torch.sin(x), torch.tanh(x)
(s * t).backward()
v = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
(v.sin() * v).backward(torch.ones(3, dtype=torch.float64))
assert abs(s.item() - math.sin(0.5)) < 1e-7, s.item()
assert abs(t.item() - math.tanh(0.5)) < 1e-7, t.item()
want = math.cos(0.5) * math.tanh(0.5) + math.sin(0.5) * (1 - math.tanh(0.5) ** 2)
assert abs(x.grad.item() - want) < 1e-6, x.grad.item()
assert all(abs(g - (math.cos(a) * a + math.sin(a))) < 1e-12
           for g, a in zip(v.grad.tolist(), [0.5, 1.0, 2.0])), v.grad.tolist()
print("ok")
"""


def run(cache, numba_dir=True):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache / "nb"),
               NUMBAGRAD_CACHE_DIR=str(cache / "ng"), NUMBAGRAD_PROGRESS="0")
    if not numba_dir:  # Numba caches beside the code: generated kernels in ng/__pycache__
        del env["NUMBA_CACHE_DIR"]
    return subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                          text=True, timeout=600)


def warm(cache, numba_dir=True):
    """Fill ``cache`` by a first run (it compiles)."""
    first = run(cache, numba_dir)
    assert first.returncode == 0 and "ok" in first.stdout, first.stderr
    return cache


@pytest.fixture
def warm_cache(tmp_path_factory):
    """``warm_cache(numba_dir)``: a warm cache of this test's own, always at one path of this
    worker's: Numba keys the generated kernels' entries on their directory, so a cache works
    where it was filled. Filled by one cold run per worker, then restored from a copy
    (mtimes kept: they are part of Numba's keys)."""
    def make(numba_dir=True):
        base = tmp_path_factory.getbasetemp() / f"healing-{'nb' if numba_dir else 'pycache'}"
        cache, template = base / "cache", base / "template"
        if template.exists():
            shutil.rmtree(cache, ignore_errors=True)
            shutil.copytree(template, cache, symlinks=True)
        else:
            warm(cache, numba_dir)
            shutil.copytree(cache, template, symlinks=True)
        return cache
    return make


def entries(cache, suffix):
    found = sorted(p for p in cache.rglob(f"*{suffix}"))
    assert found, f"no {suffix} files under {cache}"
    return found


def test_a_warm_cache_loads_without_warnings(warm_cache):
    second = run(warm_cache())
    assert second.returncode == 0 and "ok" in second.stdout, second.stderr
    assert "set aside" not in second.stderr, second.stderr


@pytest.mark.parametrize("damage", ["truncate", "empty", "garbage"])
def test_a_damaged_cache_file_is_set_aside_and_compiled_again(warm_cache, damage):
    cache = warm_cache()
    # every other entry loses its index, the others their data file
    damaged = entries(cache, ".nbi")[::2] + entries(cache, ".nbc")[1::2]
    for path in damaged:
        data = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(data[:len(data) // 2])
        elif damage == "empty":
            path.write_bytes(b"")
        else:
            path.write_bytes(os.urandom(len(data)))
    healed = run(cache)
    assert healed.returncode == 0 and "ok" in healed.stdout, healed.stderr[-3000:]
    named = {line.split("entry ")[1].split(" for ")[0]
             for line in healed.stderr.splitlines() if "set aside" in line}
    assert named and named <= {str(p) for p in damaged}, (named, damaged)
    again = run(cache)  # the entries written by the recompile load cleanly
    assert again.returncode == 0 and "ok" in again.stdout, again.stderr
    assert "set aside" not in again.stderr, again.stderr


def test_swapped_kernels_are_detected(warm_cache):
    # the one-value forward kernels of sin and tanh have the same signature: swapped, each
    # file would load as the other's code
    cache = warm_cache()
    sin = [p for p in entries(cache, ".nbc") if "numbagrad_op_sin_" in p.name and "_sc_" in p.name]
    tanh = [p for p in entries(cache, ".nbc")
            if "numbagrad_op_tanh_" in p.name and "_sc_" in p.name]
    assert len(sin) == 1 and len(tanh) == 1, (sin, tanh)
    a, b = sin[0].read_bytes(), tanh[0].read_bytes()
    sin[0].write_bytes(b)
    tanh[0].write_bytes(a)
    healed = run(cache)
    assert healed.returncode == 0 and "ok" in healed.stdout, healed.stderr[-3000:]
    assert "another function's code" in healed.stderr


def test_an_entry_whose_data_is_not_written_yet_is_a_quiet_miss(warm_cache):
    # Numba writes an entry's index before its data: a process that reads in between (a
    # compile worker writing it now) finds no data file. Numba reads that as a miss, and
    # the guard must not report it as damage
    cache = warm_cache()
    for path in entries(cache, ".nbc"):
        path.unlink()
    again = run(cache)
    assert again.returncode == 0 and "ok" in again.stdout, again.stderr[-3000:]
    assert "set aside" not in again.stderr, again.stderr
    assert entries(cache, ".nbc")  # compiled and written again


def test_the_package_functions_entries_are_keyed_on_the_package_source(monkeypatch):
    """Numba keys an entry on its function's own file and bytecode: a changed constant of
    another module (a node field's offset) would leave it stale. numbagrad's own functions
    add a hash of the package's source to the key, and the machine-dependent constants
    they compile in (gemm's choice of one sgemm call); generated kernels hash their
    inputs."""
    from numbagrad.autograd import sweep
    from numbagrad.core import safe_cache
    from numbagrad.engine import gemm

    fn = sweep.kernels_needed
    sig, codegen = sweep.entry_signature("kernels_needed"), fn.targetctx.codegen()
    key = fn._cache._index_key(sig, codegen)
    assert key[-2] == safe_cache.package_fingerprint()
    assert key[-1] == (("sgemm_whole", gemm.SGEMM_WHOLE), ("split_parts", gemm.SPLIT_PARTS))
    monkeypatch.setattr(safe_cache, "package_fingerprint", lambda: "another source")
    assert fn._cache._index_key(sig, codegen)[:-2] == key[:-2]
    assert fn._cache._index_key(sig, codegen)[-2] == "another source"
    monkeypatch.setitem(safe_cache.KEY_PARTS, "sgemm_whole", not gemm.SGEMM_WHOLE)
    assert fn._cache._index_key(sig, codegen)[-1] != key[-1]


class _Payload:
    """Unpickled, it creates the file ``marker``: code another user planted, running."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _plant(directory, marker):
    import pickle
    planted = entries(directory, ".nbi")
    for path in planted:
        path.write_bytes(pickle.dumps(_Payload(str(marker))))
    return planted


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
@pytest.mark.parametrize("how", ["writable", "owned"])
@pytest.mark.parametrize("where", ["NUMBA_CACHE_DIR", "__pycache__"])
def test_files_planted_where_other_users_can_write_never_run(tmp_path, warm_cache, where,
                                                            how):
    numba_dir = where == "NUMBA_CACHE_DIR"
    cache = warm_cache(numba_dir)
    shared = cache / "nb" if numba_dir else cache / "ng" / "__pycache__"
    marker = tmp_path / "payload_ran"
    _plant(shared, marker)
    if how == "writable":
        os.chmod(shared, 0o777)  # a lab's shared directory, not sticky
        problem = f"other users can write to {shared}"
    else:  # another user's directory (nobody's), as only root can arrange here
        if os.getuid() != 0:
            pytest.skip("giving a directory to another user needs root")
        os.chown(shared, 65534, 65534)
        problem = f"{shared} belongs to another user"
    second = run(cache, numba_dir)
    assert second.returncode == 0 and "ok" in second.stdout, second.stderr
    assert not marker.exists(), "a planted cache file was unpickled"
    assert "not loading compiled code from Numba's cache directory" in second.stderr
    assert problem in second.stderr


def test_a_directory_where_a_kernel_module_goes_is_set_aside(warm_cache):
    cache = warm_cache()
    modules = sorted((cache / "ng").glob("numbagrad_op_sin*.py"))
    assert modules, sorted(p.name for p in (cache / "ng").iterdir())
    for path in modules:
        path.unlink()
        path.mkdir()
    second = run(cache)
    assert second.returncode == 0 and "ok" in second.stdout, second.stderr
    assert "set aside" in second.stderr and "a directory stood where" in second.stderr
    assert all(p.is_file() for p in modules)
    third = run(cache)  # healed: nothing left to set aside
    assert third.returncode == 0 and "set aside" not in third.stderr, third.stderr


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_the_fallback_directories_of_a_process_are_removed_when_it_exits(tmp_path):
    """Cache directories others can write to are not used: the kernels compile into private
    temporary directories for the process, which go when it exits (none piles up in /tmp)."""
    for name in ("nb", "ng"):
        (tmp_path / name).mkdir()
        os.chmod(tmp_path / name, 0o777)  # a lab's shared directory, not sticky
    result = run(tmp_path)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr
    named = re.findall(r"(?:Kernels compile into|cached in) (\S+?)(?: for this process|;)",
                       result.stderr)
    assert len(named) == 2, result.stderr  # numbagrad's generated modules, Numba's cache
    for path in named:
        assert not os.path.exists(path), f"{path} outlived its process"
