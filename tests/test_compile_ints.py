"""numbagrad.compile with integer array arguments (labels): new values of the same shapes
replay one trace when the function only feeds them to ops with recipes (nll_loss,
cross_entropy, embedding), and trace again by value otherwise; every call equals eager and torch."""

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.func  # noqa: F401 - binds ng.func

F = ng.nn.functional
rng = np.random.default_rng(0)

LOSSES = {
    "cross_entropy": lambda lib, z, y: lib.nn.functional.cross_entropy(z, y),
    "cross_entropy_sum_ignore": lambda lib, z, y: lib.nn.functional.cross_entropy(
        z, y, reduction="sum", ignore_index=1),
    "cross_entropy_none": lambda lib, z, y: (lib.nn.functional.cross_entropy(
        z, y, reduction="none") * lib.arange(1.0, 9.0, dtype=z.dtype)).sum(),
    "cross_entropy_weight": lambda lib, z, y: lib.nn.functional.cross_entropy(
        z, y, weight=lib.arange(1.0, 6.0, dtype=z.dtype)),
    "nll_loss_ignore": lambda lib, z, y: lib.nn.functional.nll_loss(
        lib.log_softmax(z, 1), y, ignore_index=2),
    "embedding": lambda lib, z, y: (lib.nn.functional.embedding(y, z) ** 2).sum(),
    "embedding_padding": lambda lib, z, y: (lib.nn.functional.embedding(
        y, z, padding_idx=2) ** 2).sum(),
}
# uses of the labels without a recipe: their values stay part of the signature
BY_VALUE = {
    "mask": lambda lib, z, y: (lib.nn.functional.cross_entropy(z, y, reduction="none")
                               * (y > 1)).sum(),
    "index": lambda lib, z, y: z[lib.arange(8), y].sum(),
    "as_float": lambda lib, z, y: (z.sum(1) * y.to(z.dtype)).sum(),
}


def _model(lib, loss):
    def f(p, x, y):
        h = lib.tanh(lib.as_tensor(x) @ p[0] + p[1])
        return loss(lib, h @ p[2], lib.as_tensor(y))
    return f


def _params(dtype):
    return [rng.standard_normal(s).astype(dtype) for s in ((6, 4), (4,), (4, 5))]


def _torch_grads(torch, loss, params, x, y):
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    value = _model(torch, loss)(ps, torch.tensor(x), torch.tensor(y))
    value.backward()
    return value.item(), [p.grad.numpy() for p in ps]


@pytest.mark.parametrize("name,dtype", [(n, d) for n in sorted(LOSSES)
                                        for d in (np.float64, np.float32)]
                         + [(n, np.float64) for n in sorted(BY_VALUE)])
def test_new_labels_follow_eager_and_torch(name, dtype):
    torch = pytest.importorskip("torch")
    loss = {**LOSSES, **BY_VALUE}[name]
    params, x = _params(dtype), rng.standard_normal((8, 6)).astype(dtype)
    eager = ng.func.value_and_grad(_model(ng, loss))
    compiled = ng.compile(eager)
    calls = 4
    for _ in range(calls):
        y = rng.integers(0, 5, 8)
        value, grads = compiled(params, x, y)
        e_value, e_grads = eager(params, x, y)
        assert value == e_value
        for g, e in zip(grads, e_grads):
            np.testing.assert_array_equal(g, e)
        t_value, t_grads = _torch_grads(torch, loss, params, x, y)
        tol = 1e-5 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(value, t_value, rtol=tol)
        for g, t in zip(grads, t_grads):
            np.testing.assert_allclose(g, t, rtol=tol, atol=tol)
    # labels with recipes: the first trace and one to compare it with, then no more
    assert len(compiled.traces) == (2 if name in LOSSES else calls)


def test_labels_as_tensors_replay_one_trace():
    params, x = _params(np.float64), rng.standard_normal((8, 6))
    f = _model(ng, LOSSES["cross_entropy"])
    compiled = ng.compile(ng.func.grad(f))
    for _ in range(4):
        y = rng.integers(0, 5, 8)
        got = compiled([ng.tensor(p) for p in params], ng.tensor(x), ng.tensor(y))
        want = ng.func.grad(f)([ng.tensor(p) for p in params], ng.tensor(x), ng.tensor(y))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert len(compiled.traces) == 2


def test_a_label_out_of_range_gives_eagers_error_at_replay():
    params, x = _params(np.float64), rng.standard_normal((8, 6))
    compiled = ng.compile(ng.func.value_and_grad(_model(ng, LOSSES["cross_entropy"])))
    for _ in range(3):
        compiled(params, x, rng.integers(0, 5, 8))
    bad = np.array([0, 1, 2, 7, 1, 0, 3, 4])
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        compiled(params, x, bad)
    value, _ = compiled(params, x, np.zeros(8, np.int64))  # the trace is still good
    assert value == ng.func.value_and_grad(_model(ng, LOSSES["cross_entropy"]))(
        params, x, np.zeros(8, np.int64))[0]


def test_every_label_ignored_gives_eagers_value():
    params, x = _params(np.float64), rng.standard_normal((8, 6))
    f = _model(ng, lambda lib, z, y: lib.nn.functional.cross_entropy(z, y, ignore_index=3))
    compiled = ng.compile(ng.func.value_and_grad(f))
    for _ in range(3):
        compiled(params, x, rng.integers(0, 5, 8))
    value, grads = compiled(params, x, np.full(8, 3))
    e_value, e_grads = ng.func.value_and_grad(f)(params, x, np.full(8, 3))
    np.testing.assert_array_equal(value, e_value)
    for g, e in zip(grads, e_grads):
        np.testing.assert_array_equal(g, e)


def test_a_new_label_shape_traces_again():
    params = _params(np.float64)
    compiled = ng.compile(ng.func.value_and_grad(_model(ng, LOSSES["cross_entropy"])))
    for n in (8, 8, 8, 5, 5, 5):
        x = rng.standard_normal((n, 6))
        y = rng.integers(0, 5, n)
        value, _ = compiled(params, x, y)
        assert value == ng.func.value_and_grad(_model(ng, LOSSES["cross_entropy"]))(
            params, x, y)[0]
    assert len(compiled.traces) == 4
