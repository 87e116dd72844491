"""The C recorder of a scalar graph's op (engine/_push0d.c) writes what the Python pair it
replaces writes (Tape.push_0d and _make), hands every other case to that pair, and the
package uses it wherever a C compiler was there at install."""

import shutil
import sysconfig

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.__main__ import scalar_graph
from numbagrad.core import tape as tape_mod
from numbagrad.engine import record, scalar_push

torch = pytest.importorskip("torch")
compiled = scalar_push._push0d
needs_ext = pytest.mark.skipif(compiled is None, reason="the C extension was not built")


def test_extension_is_built_where_a_compiler_is():
    if shutil.which(sysconfig.get_config_var("CC").split()[0] or "cc") is None:
        pytest.skip("no C compiler on this machine: the Python recorder is used")
    assert compiled is not None, scalar_push.unavailable
    assert record.push_make is compiled.push_make


def _program(lib, leaves, n_ops):
    """A random scalar graph, then ops that take the other paths: a small array op (its
    value pending in the arena), a unary op with a float attribute, numbers on both sides."""
    y = scalar_graph(lib, leaves, n_ops)
    arr = lib.tensor(np.linspace(0.1, 0.9, 5), requires_grad=True)
    s = (arr * 2.0).sum()  # pending in the arena when the next scalar op comes
    z = y * s + lib.clamp(leaves[0], -0.5, 0.5) * 3 - 2.0 / (1.5 + leaves[1] * leaves[1])
    return z + 0.25 * lib.nn.functional.leaky_relu(leaves[2], 0.1), arr


def _run(lib, recorder=None, n_ops=3000):
    old = record.push_make
    if recorder is not None:
        record.push_make = recorder
    try:
        init = np.random.default_rng(3).uniform(-1, 1, 50)
        leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in init]
        y, arr = _program(lib, leaves, n_ops)
        tape = getattr(y, "_tape", None)
        snapshot = None if tape is None else (
            bytes(tape.nodes), bytes(tape.args), bytes(tape.fat), tape.val.array().tobytes())
        y.backward()
        grads = [np.nan if t.grad is None else t.grad.item() for t in leaves]
        return y.item(), grads, arr.grad.numpy().copy(), snapshot
    finally:
        record.push_make = old


@needs_ext
def test_records_equal_the_python_pair():
    """Node for node, byte for byte (records, arguments, attributes, values), through the
    arena's and the node array's growth and a pending array value."""
    handed = []

    def counting(*args):
        handed.append(args[2])
        return scalar_push.push_make_python(*args)

    compiled.setup(ng.Tensor, scalar_push.TENSOR_SLOTS, tape_mod.Tape, scalar_push.TAPE_SLOTS,
                   scalar_push.Arena, scalar_push.ARENA_SLOTS, scalar_push.LAYOUT,
                   scalar_push.array("q", [1]), counting)
    try:
        ours = _run(ng, compiled.push_make, 10_000)
    finally:
        scalar_push.setup(compiled)
    # both ways taken: C for most ops, Python where a buffer was full or a value pending
    assert 10 < len(handed) < 2_000
    python = _run(ng, scalar_push.push_make_python, 10_000)
    assert ours[3] == python[3]
    assert ours[:2] == python[:2]
    np.testing.assert_array_equal(ours[2], python[2])
    theirs = _run(torch, None, 10_000)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-10)


@needs_ext
def test_tensor_equals_make():
    a = ng.tensor(0.5, dtype=ng.float64, requires_grad=True) * 2.0
    tape = a._tape
    n = len(tape)
    t = compiled.push_make(tape, 5, np.float64(3.0), a._node, -1, ())
    ref = scalar_push.push_make_python(tape, 5, np.float64(3.0), a._node, -1, ())
    for name in scalar_push.TENSOR_SLOTS:
        if name != "_node":
            got, want = getattr(t, name), getattr(ref, name)
            assert got is want or type(got) is type(want) and got == want, name
    assert t._node == ref._node - 1 == n
    assert not hasattr(t, "_view") and not hasattr(ref, "_view")


@needs_ext
def test_a_viewed_buffer_takes_the_python_path():
    """A tape whose node buffer is viewed cannot grow: the op goes to a new tape (the
    BufferError path), as the Python pair does, and gradients still reach the leaves."""
    results = []
    for lib in (ng, torch):
        a = lib.tensor(0.3, dtype=lib.float64, requires_grad=True)
        b = a * a
        view = memoryview(b._tape.nodes) if lib is ng else None
        c = b * 3.0 + b.sin()
        if view is not None:
            assert c._tape is not b._tape
            view.release()
        c.backward()
        results.append((c.item(), a.grad.item()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-14)


@needs_ext
def test_bad_arguments_are_python_errors():
    a = ng.tensor(0.5, dtype=ng.float64, requires_grad=True) * 2.0
    n = len(a._tape)
    with pytest.raises(TypeError):
        compiled.push_make(a._tape, 5, np.float64(1.0), a._node)
    with pytest.raises(TypeError):
        compiled.push_make(a._tape, "code", np.float64(1.0), a._node, -1, ())
    with pytest.raises(TypeError):
        compiled.push_make(a._tape, 5, "value", a._node, -1, ())
    assert len(a._tape) == n  # nothing written


@needs_ext
def test_setup_refuses_what_it_cannot_write():
    """Names that are not slots are refused, and a refused setup leaves push_make on the
    Python pair (still right) until a setup succeeds."""
    try:
        with pytest.raises(TypeError, match="not a slot"):
            compiled.setup(ng.Tensor, ("_data",) * 10 + ("shape",), tape_mod.Tape,
                           scalar_push.TAPE_SLOTS, scalar_push.Arena, scalar_push.ARENA_SLOTS,
                           scalar_push.LAYOUT, scalar_push.array("q", [1]),
                           scalar_push.push_make_python)
        a = ng.tensor(0.5, dtype=ng.float64, requires_grad=True)
        y = a * a * 3.0
        y.backward()
        assert (y.item(), a.grad.item()) == (0.75, 3.0)
    finally:
        scalar_push.setup(compiled)
    assert _run(ng, compiled.push_make, 200)[3] == _run(ng, scalar_push.push_make_python, 200)[3]
