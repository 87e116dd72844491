"""A big node's gradient handed on to an input without a copy (add's operands, sub's first):
the gradients are torch's, every tensor's ``.grad`` is its own memory, and an adjoint that is
read after the sweep (retain_grad, autograd.grad's inputs, hooks, retain_graph) is never
given away."""

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.core.tape import BIG

torch = pytest.importorskip("torch")

N = BIG + 7  # big nodes: differentiated by their ops' own kernels, not in the serial sweep


def _arrays(k, dtype=np.float64):
    rng = np.random.default_rng(k)
    return [rng.standard_normal(N).astype(dtype) for _ in range(3)]


def _program(lib, x, w, b):
    u = x * w + b          # add: both operands could take u's adjoint
    v = u - w              # sub: the first operand could
    z = (v + x).tanh()     # x, used again, already has an adjoint by then
    return (z * u + (w - b) ** 2).sum(), u, v


def _run(lib, arrays, **kw):
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    y, u, v = _program(lib, *xs)
    if kw.get("retain"):
        u.retain_grad()
        v.retain_grad()
    y.backward(retain_graph=kw.get("twice", False))
    if kw.get("twice"):
        y.backward()
    grads = [x.grad for x in xs]
    kept = [u.grad, v.grad] if kw.get("retain") else []
    return grads, kept


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("retain", [False, True])
@pytest.mark.parametrize("twice", [False, True])
def test_gradients_match_torch_and_own_their_memory(dtype, retain, twice):
    arrays = _arrays(0, dtype)
    got, got_kept = _run(ng, arrays, retain=retain, twice=twice)
    want, want_kept = _run(torch, arrays, retain=retain, twice=twice)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for g, t in zip(got + got_kept, want + want_kept):
        assert g.dtype == getattr(ng, str(t.dtype).split(".")[1])
        np.testing.assert_allclose(g.numpy(), t.numpy(), **tol)
    bufs = [g.numpy() for g in got + got_kept]
    for i in range(len(bufs)):
        for j in range(i + 1, len(bufs)):
            assert not np.shares_memory(bufs[i], bufs[j])


def test_autograd_grad_of_a_non_leaf_below_another_input():
    arrays = _arrays(1)
    results = []
    for lib in (ng, torch):
        x, w, b = [lib.tensor(a, requires_grad=True) for a in arrays]
        y, u, v = _program(lib, x, w, b)
        # u is below v: its derivative runs, and its adjoint is read afterwards
        results.append([g.detach().numpy().copy()
                        for g in lib.autograd.grad(y, (v, u, x))])
    for g, t in zip(*results):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


def test_hooks_see_the_gradient_before_it_is_handed_on():
    arrays = _arrays(2)
    seen = {}
    results = []
    for lib in (ng, torch):
        x, w, b = [lib.tensor(a, requires_grad=True) for a in arrays]
        y, u, v = _program(lib, x, w, b)
        u.register_hook(lambda g, lib=lib: seen.update({lib.__name__: g.numpy().copy()}))
        y.backward()
        results.append([t.grad.numpy().copy() for t in (x, w, b)])
    np.testing.assert_allclose(seen["numbagrad"], seen["torch"], rtol=1e-12, atol=1e-12)
    for g, t in zip(*results):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


def test_a_gradient_accumulates_into_an_existing_grad():
    arrays = _arrays(3)
    results = []
    for lib in (ng, torch):
        x, w, b = [lib.tensor(a, requires_grad=True) for a in arrays]
        for _ in range(2):
            (x + w).sum().backward()
            (x - b).mul(3.0).sum().backward()
        results.append([t.grad.numpy().copy() for t in (x, w, b)])
    for g, t in zip(*results):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


def test_a_node_over_a_big_operand_never_hands_its_gradient_into_the_arena():
    """(small).sum() + (big * 2).sum(): the adds are off the arena (their operand is big),
    the small sum is on it; its gradient must arrive in the arena."""
    rng = np.random.default_rng(4)
    small_data, big_data = rng.standard_normal((3, 4)), rng.standard_normal(N)
    results = []
    for lib in (ng, torch):
        small = lib.tensor(small_data, requires_grad=True)
        big = lib.tensor(big_data, requires_grad=True)
        (small.tanh().sum() + (big * 2.0).sum() + (small * small).mean()).backward()
        results.append([small.grad.numpy().copy(), big.grad.numpy().copy()])
    for g, t in zip(*results):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_stored_first_gradient_never_reads_its_buffer(dtype, monkeypatch):
    """A first gradient is stored into an unwritten buffer: filled with NaN here, the
    gradients are still torch's (a kernel that added into it would give NaN)."""
    from numbagrad.autograd import engine

    used = []

    def unwritten(self, size, dt):
        used.append(size)
        return np.full(size, np.nan, dt)
    monkeypatch.setattr(engine._Run, "_unwritten", unwritten)
    arrays = _arrays(5, dtype)
    got, _ = _run(ng, arrays)
    want, _ = _run(torch, arrays)
    assert used  # the program has first gradients to store
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for g, t in zip(got, want):
        np.testing.assert_allclose(g.numpy(), t.numpy(), **tol)


def _shared_program(lib, x, w, b):
    """adds whose operands take one shared gradient, then write into it in turn: p and q
    both flow into x (their sum), r into w and b (leaves that share a gradient too)."""
    p, q = x * 2.0, x.exp()
    s = p + q              # p and q share s's gradient; both then add into x's
    r = w + b              # two leaves
    return (s * r + r.tanh()).sum()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("twice", [False, True])
def test_an_adds_operands_share_its_gradient_and_copy_it_before_writing(dtype, twice):
    """torch gives both operands of an add the same gradient tensor; numbagrad hands them
    one buffer, and whichever writes into it (or keeps it as a .grad) takes a copy first."""
    arrays = _arrays(6, dtype)
    results = []
    for lib in (ng, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        for _ in range(2 if twice else 1):
            _shared_program(lib, *xs).backward()
        results.append([t.grad for t in xs])
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for g, t in zip(*results):
        np.testing.assert_allclose(g.numpy(), t.numpy(), **tol)
    bufs = [g.numpy() for g in results[0]]
    for i in range(len(bufs)):
        for j in range(i + 1, len(bufs)):
            assert not np.shares_memory(bufs[i], bufs[j])
    # an optimizer's in-place step on one leaf's gradient leaves the others as they were
    before = [b.copy() for b in bufs]
    bufs[1] *= 0.0
    np.testing.assert_array_equal(bufs[2], before[2])


def test_a_shared_gradient_is_never_recycled_while_it_is_read(monkeypatch):
    """The buffer p and q share must not be handed out as a spare when p is done: q's
    derivative still reads it (poisoned spares would show it)."""
    from numbagrad.autograd import engine

    real_spare = engine._Run._spare

    def poisoned(self, size, dtype):
        b = real_spare(self, size, dtype)
        if b is not None:
            b.fill(np.nan)
        return b
    monkeypatch.setattr(engine._Run, "_spare", poisoned)
    arrays = _arrays(7)
    results = []
    for lib in (ng, torch):
        x, w, b = [lib.tensor(a, requires_grad=True) for a in arrays]
        p, q = x * w, (x * b).sin()
        ((p + q) * 3.0 + (w * b).cos()).sum().backward()
        results.append([t.grad.numpy().copy() for t in (x, w, b)])
    for g, t in zip(*results):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)
