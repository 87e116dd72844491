"""Per-op kernels: a graph compiles the kernels of its own ops and nothing else; editing an
op's formula recompiles that op's kernels only; the code cache is private and heals."""

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.extend
from numbagrad.engine import codecache, kernel_tables, kernelgen, registry

GRAPH = """
import numbagrad as torch
from numbagrad.engine import registry
{edit}
x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
y = torch.tensor([1.5, 0.25, -3.0], dtype=torch.float64, requires_grad=True)
(torch.sin(x) * y + y).sum().backward()
print(x.grad.tolist())
"""


def _run(cache, edit=""):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache / "numba"),
           "NUMBAGRAD_CACHE_DIR": str(cache / "numbagrad"), "NUMBAGRAD_PROGRESS": "0"}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(GRAPH.format(edit=edit))],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout


def _compiled(cache):
    """{generated module name: the Numba cache files of its functions, with their mtimes}."""
    modules = {p.stem: {} for p in (cache / "numbagrad").glob("numbagrad_*.py")}
    for f in (cache / "numba").rglob("numbagrad_*.nbc"):
        module = f.name.split(".")[0]
        modules.setdefault(module, {})[f.name] = f.stat().st_mtime_ns
    return modules


def _op(module):
    return module[len("numbagrad_op_"):].rsplit("_", 1)[0]


def test_a_graph_compiles_the_kernels_of_its_own_ops_only(tmp_path):
    grads = _run(tmp_path)
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -3.0])
    np.testing.assert_allclose(eval(grads), np.cos(x) * y, rtol=1e-15)
    first = _compiled(tmp_path)
    # sum of a 3-element product: sin, mul, add, sum; nothing else was generated
    assert sorted(_op(m) for m in first) == ["add", "mul", "sin", "sum"], sorted(first)
    assert all(files for files in first.values()), "every op module compiled something"

    # the same graph again: everything loads from the caches, nothing is rewritten
    _run(tmp_path)
    assert _compiled(tmp_path) == first

    # sin's formula edited: sin's module is new and compiles; the others load as they were
    edit = 'registry.BY_NAME["sin"].grads = ("g * cos(a) * 1.0",)'
    _run(tmp_path, edit)
    second = _compiled(tmp_path)
    new = set(second) - set(first)
    assert [_op(m) for m in new] == ["sin"], new
    assert second[new.pop()], "the edited op's kernels compiled"
    for module, files in first.items():
        assert second[module] == files, f"{module} was recompiled"


def test_editing_a_helper_renames_only_the_modules_that_reach_it(monkeypatch):
    def name(op):
        return kernel_tables.generated_name("m_", kernelgen.op_source(op), kernel_tables._bindings(op))

    ops = [registry.BY_NAME[n] for n in ("sum", "mul", "amax")]
    before = {op.name: name(op) for op in ops}
    helper = kernel_tables._helper_namespace()["sum_all_bw"]  # sum's backward kernel
    monkeypatch.setitem(codecache._sources, helper, "def sum_all_bw(): pass  # edited")
    after = {op.name: name(op) for op in ops}
    assert after["sum"] != before["sum"]
    assert after["mul"] == before["mul"] and after["amax"] == before["amax"]
    # the key reaches a kernel's helpers in other modules too (kernels -> gemm)
    assert "def product" in codecache.dispatcher_sources(
        kernel_tables._helper_namespace()["mm_bw"])


def test_the_generated_code_is_run_from_memory_not_from_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(codecache, "_dir", tmp_path)
    source = "VALUE = 1\n"
    name = codecache.module_name("numbagrad_test_", source)
    (tmp_path / (name + ".py")).write_text("VALUE = 666\n")  # planted or corrupted
    mod = codecache.load(name, source)
    assert mod.VALUE == 1
    assert (tmp_path / (name + ".py")).read_text() == source  # and the file is mended
    del sys.modules[name]


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_cache_directory_others_can_write_is_not_used(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # world-writable, as a planted /tmp directory would be
    monkeypatch.setenv("NUMBAGRAD_CACHE_DIR", str(shared))
    monkeypatch.setattr(codecache, "_dir", None)
    with pytest.warns(UserWarning, match="other users can write to it"):
        chosen = codecache.cache_dir()
    assert chosen != shared
    st = chosen.stat()
    assert st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    monkeypatch.setattr(codecache, "_dir", None)


def test_sweep_hands_an_uncompiled_op_back_and_resumes():
    # a fresh op (declared here) is compiled at its first backward, inside that backward
    op = registry.BY_NAME.get("test_cube") or ng.extend.defop(
        "test_cube", "TestCubeBackward0", 1, grads=("g * 3.0 * a * a",), fwd="a * a * a",
        forward=lambda a: a * a * a)
    assert kernel_tables.table("bw_small")[op.code] == 0
    x = ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True)
    (ng.extend.unary("test_cube", x) * 2.0).sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    assert kernel_tables.table("bw_small")[op.code] != 0
    assert Path(kernel_tables.module(op).__file__).name.startswith("numbagrad_op_test_cube_")
