"""F.linear's nodes in a training step: pushed directly (matmul._record_linear), they give
the graph and gradients of record()'s path and of torch; a layer whose product is big keeps
its weight, bias and input as big nodes (their own arrays in their dtype, not float64 arena
copies), other ops' leaves stay where their size puts them, and the compiled replay's
picture of which nodes are big (compiler/eager_nodes.eager_big) is eager's."""

from types import SimpleNamespace

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.compiler import eager_nodes
from numbagrad.core import tape as tape_module
from numbagrad.core.tape import FLAG_BIG, column
from numbagrad.ops.linalg import matmul

torch = pytest.importorskip("torch")

BIG_ROWS = 160  # 160 x 256 = 40,960 elements: big nodes (tape.BIG is 32,768)


@pytest.fixture
def through_record(monkeypatch):
    """A switch: calling it sends every later F.linear through record()'s path."""
    def off():
        monkeypatch.setattr(matmul, "_record_linear", lambda *args: None)
    return off


def _model(lib, sizes, dtype):
    lib.manual_seed(0)
    nn = lib.nn
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    return model.to(getattr(lib, np.dtype(dtype).name))


def _loss_and_grads(lib, sizes, rows, dtype):
    model = _model(lib, sizes, dtype)
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.standard_normal((rows, sizes[0])).astype(dtype))
    y = lib.tensor(rng.integers(0, sizes[-1], rows))
    out = model(x)
    loss = lib.nn.functional.cross_entropy(out, y)
    loss.backward()
    return out, loss, [p.grad.detach().numpy().copy() for p in model.parameters()], model


def _names(fn, depth=0):
    """grad_fn names down the graph, as nested tuples."""
    if fn is None or depth > 12:
        return None
    return (type(fn).__name__, tuple(_names(f, depth + 1) for f, _ in fn.next_functions))


CASES = [((20, 16, 4), 8, np.float64), ((20, 16, 4), 8, np.float32),
         ((300, 256, 256, 10), BIG_ROWS, np.float32), ((300, 256, 10), BIG_ROWS, np.float64)]


@pytest.mark.parametrize("sizes, rows, dtype", CASES)
def test_direct_nodes_match_record_and_torch(sizes, rows, dtype, through_record):
    out, loss, grads, _ = _loss_and_grads(ng, sizes, rows, dtype)
    names = _names(loss.grad_fn)
    through_record()
    out2, loss2, grads2, _ = _loss_and_grads(ng, sizes, rows, dtype)
    assert names == _names(loss2.grad_fn)
    assert _names(out.grad_fn)[0] == "AddmmBackward0"
    tight = 2e-6 if dtype == np.float32 else 1e-13
    for g, g2 in zip(grads, grads2):
        assert g.dtype == g2.dtype == dtype
        np.testing.assert_allclose(g, g2, rtol=tight, atol=tight)
    _, tloss, tgrads, _ = _loss_and_grads(torch, sizes, rows, dtype)
    assert names == _names(tloss.grad_fn)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=tol)
    for g, tg in zip(grads, tgrads):
        np.testing.assert_allclose(g, tg, rtol=tol, atol=tol)


def _big_flags(model, out):
    tape = out._tape
    return [tape.is_big(tape.sources[id(p)]) for p in model.parameters()]


@pytest.mark.parametrize("direct", [True, False])
def test_big_products_keep_weight_and_bias_as_big_nodes(direct, through_record):
    if not direct:
        through_record()
    model = _model(ng, (300, 256, 10), np.float32)
    x = ng.tensor(np.ones((BIG_ROWS, 300), np.float32))
    out = model(x)
    flags = _big_flags(model, out)
    # the first layer's weight (76,800) is big by size; its bias (256), the last layer's
    # weight (2,560) and bias (10) only as leaves of big products, on either path
    assert flags == [True] * 4
    out.sum().backward()
    assert all(p.grad.dtype == ng.float32 for p in model.parameters())


def test_small_graphs_keep_their_leaves_in_the_arena(monkeypatch):
    monkeypatch.setattr(tape_module._local, "tape", None)  # a new graph, not a kept one's
    model = _model(ng, (20, 16, 4), np.float32)
    out = model(ng.tensor(np.ones((8, 20), np.float32)))
    assert _big_flags(model, out) == [False] * 4
    assert not out._tape.has_big


def test_other_big_nodes_leave_small_leaves_in_the_arena(monkeypatch):
    # a parameter a big node meets first may feed many small ops next: as big nodes, each
    # would cost the backward a Python step
    monkeypatch.setattr(tape_module._local, "tape", None)
    w, c, v = (ng.ones(300, dtype=ng.float64, requires_grad=True) for _ in range(3))
    x = ng.tensor(np.ones((BIG_ROWS, 300)))
    y = (x * w + c).sum()
    z = y + sum((w * v + c).sum() for _ in range(3))
    tape = z._tape
    assert tape.is_big(tape.sources[id(x)])
    assert not any(tape.is_big(tape.sources[id(t)]) for t in (w, c, v))
    z.backward()
    for leaf, expected in ((w, BIG_ROWS + 3), (c, BIG_ROWS + 3), (v, 3)):
        np.testing.assert_array_equal(leaf.grad.numpy(), np.full(300, expected, np.float64))


def test_a_weight_applied_twice_and_hooks_take_records_path():
    model = _model(ng, (300, 256, 256), np.float32)
    tmodel = _model(torch, (300, 256, 256), np.float32)
    x = np.random.default_rng(2).standard_normal((BIG_ROWS, 300)).astype(np.float32)
    seen = []
    for lib, m in ((ng, model), (torch, tmodel)):
        m[2].register_forward_hook(lambda mod, args, out: seen.append(out.shape))
        h = m[0](lib.tensor(x))
        out = m[2](m[2](h))  # the second layer's weight twice on one graph
        out.pow(2).mean().backward()
    assert seen == [(BIG_ROWS, 256)] * 4
    for p, tp in zip(model.parameters(), tmodel.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5)


def _eager_picture_matches(out):
    """compiler/eager_nodes.eager_big, run on this eager tape's records, gives its flags."""
    tape = out._tape
    records = tape.records()
    program = SimpleNamespace(nodes=records, args=np.frombuffer(bytes(tape.args), np.int64))
    flags = (column(records, "flags") & FLAG_BIG) != 0
    np.testing.assert_array_equal(eager_nodes.eager_big(program, dict(tape.transposes)), flags)
    return flags


@pytest.mark.parametrize("direct", [True, False])
def test_the_replays_picture_of_big_nodes_is_eagers(direct, through_record, monkeypatch):
    if not direct:
        through_record()
    F = ng.nn.functional
    rng = np.random.default_rng(3)
    p = [ng.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
         for s in ((16, 200), (16,), (10, 16), (10,), (200, 8), (8,))]
    x = ng.tensor(rng.standard_normal((BIG_ROWS * 2, 200)).astype(np.float32))
    monkeypatch.setattr(tape_module._local, "tape", None)
    h = F.linear(x, p[0], p[1]).relu()  # small weights, big products
    out = F.cross_entropy(F.linear(h, p[2], p[3]), ng.tensor(rng.integers(0, 10, BIG_ROWS * 2)))
    out = out + (x @ p[4] + p[5]).mean() + F.linear(p[5].reshape(1, 8), p[2][:, :8]).sum()
    flags = _eager_picture_matches(out)
    assert flags.sum() > 10
    monkeypatch.setattr(tape_module._local, "tape", None)  # a new graph, of small nodes
    small = F.linear(ng.ones(3, 4), p[0][:, :4], p[1]).sum()
    assert not _eager_picture_matches(small).any()


def _shared_bias_loss(lib, arrays):
    x, w1, w2, b, m = (lib.tensor(a, requires_grad=k > 0) for k, a in enumerate(arrays))
    f = lib.nn.functional
    h = f.linear(x, w1, b).tanh() * b.sigmoid()
    # one bias in two big products and another op: the last product's gradient, the first
    # the backward reaches, is stored, the others added
    h = f.linear(h, w2, b)
    out = lib.addmm(m, h, w2) * 0.5  # a full (rows, n) bias: stored without a column sum
    loss = out.square().mean()
    loss.backward()
    return [t.grad.detach().numpy().copy() for t in (w1, w2, b, m)]


def test_a_bias_in_several_big_products_gets_torchs_gradient():
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) * 0.1 for s in
              ((BIG_ROWS, 256), (256, 256), (256, 256), (256,), (BIG_ROWS, 256))]
    got, want = _shared_bias_loss(ng, arrays), _shared_bias_loss(torch, arrays)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
