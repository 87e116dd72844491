"""Values no derivative reads are left out of the tape's arena (FLAG_UNWRITTEN): an op
recorded later that reads one writes it then, a backward gives its adjoint a place. The
gradients are torch's through the cases that reach those paths: a retained graph read again,
in-place changes, a recorder racing a backward, the inspection functions."""

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.autograd import graph
from numbagrad.core import tape as tape_mod

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _every_value_late(monkeypatch):
    """Every value of two elements or more is a candidate (the default starts at 2,048)."""
    monkeypatch.setattr(tape_mod, "_LATE_MIN", 2)
    tape_mod._local.tape = None


def _both(fn, *arrays):
    """fn's value and its inputs' gradients in numbagrad and torch."""
    out = []
    for lib in (ng, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        v = fn(lib, *xs)
        v.backward()
        out.append((v.item(), [x.grad.numpy().copy() for x in xs]))
    return out


def _close(got, want):
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


RNG = np.random.default_rng(7)
A, B = RNG.standard_normal((6, 5)), RNG.standard_normal((6, 5))


def test_a_value_read_after_a_retained_backward():
    for lib in (ng, torch):
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        s = a + b  # no derivative reads it: not written
        (s * 2.0).sum().backward(retain_graph=True)
        y = (s * s).sum()  # now one does: written where the backward placed its adjoint
        a.grad = b.grad = None
        y.backward()
        if lib is ng:
            got = (y.item(), a.grad.numpy().copy(), b.grad.numpy().copy())
        else:
            want = (y.item(), a.grad.numpy(), b.grad.numpy())
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_an_unwritten_value_changed_in_place_then_read():
    def fn(lib, a, b):
        s = a + b
        s.mul_(b)  # reads s's old value: written before it changes
        t = s.exp()
        with lib.no_grad():
            s.add_(1.0)  # s's node reads nothing of its own: no error, as torch
        return (t * a).sum() + (a - b).sum()
    got, want = _both(fn, A, B)
    _close(got, want)


def test_a_view_of_an_unwritten_value_read_later():
    def fn(lib, a, b):
        s = a @ b.T  # a product's value: unwritten
        rows = s.chunk(3, 0)  # views: unwritten
        return sum((r.sigmoid() * r).sum() for r in rows)
    got, want = _both(fn, A, B)
    _close(got, want)


def test_lstm_cell_loop_against_torch():
    x = RNG.standard_normal((5, 4, 3))
    init = [RNG.standard_normal(tuple(p.shape)) * 0.3
            for p in torch.nn.LSTMCell(3, 6).parameters()]
    out = []
    for lib in (ng, torch):
        cell = lib.nn.LSTMCell(3, 6).double()
        for p, a in zip(cell.parameters(), init):
            p.data = lib.tensor(a)
        h = c = lib.zeros(4, 6, dtype=lib.float64)
        for t in range(5):
            h, c = cell(lib.tensor(x[t]), (h, c))
        (h * h).sum().backward()
        out.append([p.grad.numpy().copy() for p in cell.parameters()])
    for g, w in zip(*out):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13)


def test_inspection_of_an_unwritten_value():
    a = ng.tensor(A, requires_grad=True)
    s = a + 1.0
    tape = s._tape
    assert tape.unwritten(s._node)
    with pytest.raises(RuntimeError, match="was not kept: no derivative reads it"):
        tape.value(s._node)
    arrays = graph.tape_arrays(s)
    assert arrays["flags"][s._node] & graph.FLAG_UNWRITTEN
    assert arrays["voff"][s._node] == tape_mod.UNSET
    s.exp()  # exp's derivative reads its output, not s: s stays unwritten
    assert tape.unwritten(s._node)
    s.sin()  # sin's reads s: written now
    assert not tape.unwritten(s._node)
    np.testing.assert_array_equal(tape.value(s._node), A + 1.0)


def test_compiled_replay_keeps_every_value():
    f = ng.compile(lambda a, b: ((a + b) * (a - b)).sum())
    for _ in range(2):  # (the trace, then the replay)
        a, b = ng.tensor(A, requires_grad=True), ng.tensor(B, requires_grad=True)
        f(a, b).backward()
        np.testing.assert_allclose(a.grad.numpy(), 2 * A, rtol=1e-12)
        np.testing.assert_allclose(b.grad.numpy(), -2 * B, rtol=1e-12)
