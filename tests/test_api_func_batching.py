"""torch.func's vmap, functional_call, stack_module_state, linearize and autograd.Variable
against torch."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _both(fn):
    """fn(lib) for torch and numbagrad, as NumPy trees."""
    def to_np(x):
        if isinstance(x, (tuple, list)):
            return type(x)(to_np(v) for v in x)
        if isinstance(x, dict):
            return {k: to_np(v) for k, v in x.items()}
        return x.detach().numpy() if hasattr(x, "detach") else x
    return to_np(fn(torch)), to_np(fn(ng))


def _assert_same(a, b, rtol=1e-12):
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y, rtol)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _assert_same(a[k], b[k], rtol)
    else:
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(b, a, rtol=rtol)


X = np.random.default_rng(0).standard_normal((4, 3))
Y = np.random.default_rng(1).standard_normal((3, 4))

VMAPS = {
    "dot rows": lambda lib: lib.func.vmap(lib.dot)(lib.tensor(X), lib.tensor(Y.T)),
    "in_dims (0, 1)": lambda lib: lib.func.vmap(lib.dot, in_dims=(0, 1))(
        lib.tensor(X), lib.tensor(Y)),
    "in_dims None": lambda lib: lib.func.vmap(lambda a, b: a * b, in_dims=(0, None))(
        lib.tensor(X), lib.tensor(Y[:, 0])),
    "out_dims 1": lambda lib: lib.func.vmap(lambda a: a * 2, out_dims=1)(lib.tensor(X)),
    "tuple output": lambda lib: lib.func.vmap(lambda a: (a.sum(), a.exp()))(lib.tensor(X)),
    "nested": lambda lib: lib.func.vmap(lib.func.vmap(lambda a: a.sin()))(lib.tensor(X)),
    "dict input": lambda lib: lib.func.vmap(lambda d: d["a"] + d["b"])(
        {"a": lib.tensor(X), "b": lib.tensor(X * 2)}),
    "per-sample grad": lambda lib: lib.func.vmap(lib.func.grad(lambda w, x: (w * x).sum().sin()),
                                                 in_dims=(None, 0))(lib.tensor(X[0]),
                                                                   lib.tensor(X)),
    "jacrev of rows": lambda lib: lib.func.vmap(lib.func.jacrev(lambda a: a.tanh()))(
        lib.tensor(X)),
}


@pytest.mark.parametrize("name", list(VMAPS))
def test_vmap_as_torch(name):
    theirs, mine = _both(VMAPS[name])
    _assert_same(theirs, mine)


def test_vmap_result_is_differentiable():
    grads = []
    for lib in (torch, ng):
        x = lib.tensor(X, requires_grad=True)
        lib.func.vmap(lambda r: (r * r).sum())(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


ERRORS = {
    "sizes differ": lambda lib: lib.func.vmap(lib.add)(lib.ones(3), lib.ones(4)),
    "in_dim out of range": lambda lib: lib.func.vmap(lib.sin, in_dims=1)(lib.ones(3)),
    "bad randomness": lambda lib: lib.func.vmap(lib.sin, randomness="x")(lib.ones(3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_vmap_errors_as_torch(name):
    caught = []
    for lib in (torch, ng):
        with pytest.raises(Exception) as e:
            ERRORS[name](lib)
        caught.append(type(e.value))
    assert caught[1] is caught[0]


def _linear_pair():
    t = torch.nn.Linear(3, 2).double()
    n = ng.nn.Linear(3, 2).double()
    n.load_state_dict({k: ng.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, n


def test_functional_call_as_torch_and_restores_the_module():
    t, n = _linear_pair()
    w = np.arange(6.0).reshape(2, 3)
    outs = []
    for lib, m in ((torch, t), (ng, n)):
        before = m.weight.detach().numpy().copy()
        weight = lib.tensor(w, requires_grad=True)
        y = lib.func.functional_call(m, {"weight": weight}, (lib.tensor(X[:, :3]),))
        y.sum().backward()
        outs.append((y.detach().numpy(), weight.grad.numpy()))
        np.testing.assert_array_equal(m.weight.detach().numpy(), before)
        assert m.weight.grad is None
    _assert_same(outs[0], outs[1])


def test_functional_call_strict_and_ambiguous_errors():
    _, n = _linear_pair()
    with pytest.raises(RuntimeError, match="Missing key"):
        ng.func.functional_call(n, {"weight": ng.ones(2, 3)}, (ng.ones(1, 3),), strict=True)
    with pytest.raises(ValueError, match="multiple dictionaries"):
        ng.func.functional_call(n, ({"bias": ng.ones(2)}, {"bias": ng.ones(2)}), ng.ones(1, 3))


def test_stack_module_state_and_vmap_over_models_as_torch():
    pairs = [_linear_pair() for _ in range(3)]
    results = []
    for lib, k in ((torch, 0), (ng, 1)):
        models = [p[k] for p in pairs]
        params, buffers = lib.func.stack_module_state(models)
        assert list(params) == ["weight", "bias"] and params["weight"].shape == (3, 2, 3)
        assert params["weight"].requires_grad and params["weight"].is_leaf

        def call(p, b, x, m=models[0], lib=lib):
            return lib.func.functional_call(m, (p, b), (x,))
        results.append(lib.func.vmap(call, in_dims=(0, 0, None))(params, buffers,
                                                                  lib.tensor(X[:, :3]))
                       .detach().numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_linearize_as_torch():
    outs = []
    for lib in (torch, ng):
        out, jvp_fn = lib.func.linearize(lambda a: (a.sin() * a).sum(), lib.tensor(X))
        outs.append((out.detach().numpy(), jvp_fn(lib.tensor(Y.T)).detach().numpy()))
    _assert_same(outs[0], outs[1])


def test_variable_is_the_legacy_wrapper():
    for lib in (torch, ng):
        v = lib.autograd.Variable(lib.ones(2), requires_grad=True)
        assert v.requires_grad and v.is_leaf and isinstance(v, lib.Tensor)
        assert isinstance(lib.ones(1), lib.autograd.Variable)
