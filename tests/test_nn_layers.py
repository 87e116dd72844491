"""Embedding, LayerNorm, BatchNorm1d/2d, RNN/GRU/LSTM cells and Bilinear against torch with
copied weights: outputs, gradients of inputs and parameters, grad_fn names, buffers."""

import numpy as np
import pytest
from oracle import both

import numbagrad as ng

torch = pytest.importorskip("torch")


def _name(t):
    return t.grad_fn.name() if hasattr(t.grad_fn, "name") else None


def _compare(make, inputs, dtype="float64", steps=1, tol=1e-10, train=True):
    """Build the module with ``make(lib)``, copy torch's parameters into ours, run ``steps``
    forward/backward passes on ``inputs(lib)``; compare everything observable."""
    torch.manual_seed(0)
    m_t = make(torch).to(getattr(torch, dtype))
    m_n = make(ng).to(getattr(ng, dtype))
    for (n1, p1), (n2, p2) in zip(m_t.named_parameters(), m_n.named_parameters()):
        assert n1 == n2
        p2._array()[...] = p1.detach().numpy()
    m_t.train(train)
    m_n.train(train)
    results = []
    for lib, m in ((ng, m_n), (torch, m_t)):
        rec = []
        for step in range(steps):
            xs = inputs(lib, step)
            out = m(*xs)
            out = out[0] if isinstance(out, tuple) else out
            (out * out).sum().backward()
            rec.append((out.detach().numpy().copy(), _name(out),
                        [x.grad.numpy().copy() for x in xs if getattr(x, "grad", None) is not None],
                        [p.grad.numpy().copy() for p in m.parameters()],
                        [b.numpy().copy() for b in m.buffers()]))
            m.zero_grad()
        results.append(rec)
    ours, theirs = results
    for (o, name, gx, gp, bufs), (o_t, name_t, gx_t, gp_t, bufs_t) in zip(ours, theirs):
        assert name == name_t
        np.testing.assert_allclose(o, o_t, rtol=tol, atol=tol)
        for a, b in zip(gx + gp + bufs, gx_t + gp_t + bufs_t):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
        assert len(gx) == len(gx_t) and len(gp) == len(gp_t) and len(bufs) == len(bufs_t)


def _x(*shape, seed=0, integer=None):
    def make(lib, step):
        rng = np.random.default_rng(seed + step)  # the same data for both libraries
        if integer is not None:
            return (lib.tensor(rng.integers(0, integer, shape)),)
        return (lib.tensor(rng.standard_normal(shape), dtype=lib.float64,
                           requires_grad=True),)
    return make


@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding(padding_idx):
    _compare(lambda lib: lib.nn.Embedding(6, 3, padding_idx=padding_idx),
             _x(4, 5, integer=6))


@pytest.mark.parametrize("kw", [{}, {"elementwise_affine": False}, {"bias": False},
                                {"eps": 1e-2}])
@pytest.mark.parametrize("shape,normalized", [((4, 5), 5), ((2, 3, 4), (3, 4))])
def test_layer_norm(kw, shape, normalized):
    _compare(lambda lib: lib.nn.LayerNorm(normalized, **kw), _x(*shape))


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("kw", [{}, {"affine": False}, {"momentum": None},
                                {"track_running_stats": False}, {"momentum": 0.3, "eps": 1e-3}])
@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)),
                                       ("BatchNorm2d", (3, 2, 4, 4))])
def test_batch_norm_three_steps_with_running_stats(cls, shape, kw, train):
    _compare(lambda lib: getattr(lib.nn, cls)(shape[1], **kw), _x(*shape), steps=3, train=train)


@pytest.mark.parametrize("cell,kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                     ("RNNCell", {"bias": False}), ("GRUCell", {}),
                                     ("GRUCell", {"bias": False}), ("LSTMCell", {})])
def test_recurrent_cells_over_a_few_steps(cell, kw):
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((4, 2, 3))

    def run(lib):
        torch.manual_seed(0)
        m = getattr(lib.nn, cell)(3, 5, **kw).double()
        return m

    m_t, m_n = run(torch), run(ng)
    for p1, p2 in zip(m_t.parameters(), m_n.parameters()):
        p2._array()[...] = p1.detach().numpy()
    outs = []
    for lib, m in ((ng, m_n), (torch, m_t)):
        x = lib.tensor(xs, requires_grad=True)
        h = None
        for t in range(4):
            h = m(x[t], h)
        y = h[0] if isinstance(h, tuple) else h
        (y.sum() + (h[1].sum() if isinstance(h, tuple) else 0)).backward()
        outs.append((y.detach().numpy(), _name(y), x.grad.numpy(),
                     [p.grad.numpy() for p in m.parameters()]))
    (y, name, gx, gp), (y_t, name_t, gx_t, gp_t) = outs
    assert name == name_t
    np.testing.assert_allclose(y, y_t, rtol=1e-10)
    np.testing.assert_allclose(gx, gx_t, rtol=1e-10, atol=1e-12)
    for a, b in zip(gp, gp_t):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_bilinear():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    _compare(lambda lib: lib.nn.Bilinear(3, 2, 5),
             lambda lib, step: (lib.tensor(a, requires_grad=True),
                                lib.tensor(b, requires_grad=True)))


def test_layers_reprs_and_state_dict_keys():
    def run(lib):
        ms = [lib.nn.Embedding(5, 3, padding_idx=0), lib.nn.LayerNorm([2, 3]),
              lib.nn.BatchNorm1d(4, affine=False), lib.nn.BatchNorm2d(3, momentum=None),
              lib.nn.GRUCell(3, 4, bias=False), lib.nn.LSTMCell(3, 4), lib.nn.Bilinear(3, 4, 5),
              lib.nn.RNNCell(3, 4, nonlinearity="relu")]
        return [(repr(m), list(m.state_dict()), [tuple(p.shape) for p in m.parameters()])
                for m in ms]
    ours, theirs = both(run)
    assert ours == theirs


def test_batch_norm_errors_match_torch():
    def run(lib):
        errors = []
        for f in (lambda: lib.nn.BatchNorm1d(3)(lib.ones(1, 3)),
                  lambda: lib.nn.BatchNorm2d(3)(lib.ones(2, 3)),
                  lambda: lib.nn.functional.layer_norm(lib.ones(2, 3), (4,))):
            try:
                f()
            except (ValueError, RuntimeError) as e:
                errors.append(f"{type(e).__name__}: {e}")
        return errors
    ours, theirs = both(run)
    assert ours == theirs
