"""Wrong answers found by fuzzing against torch 2.13, each held to torch as the oracle (and,
for gradients, to finite differences in float64)."""

import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng

torch = pytest.importorskip("torch")


# ---- var and std of equal values --------------------------------------------------------------
# torch's kernels (Welford, or for one output a two-pass sum of squares about its mean) give
# exactly 0 for equal values here; a mean rounded once leaves deviations of an ulp, so a
# std of ~4e-16 and a gradient of 1 / (n - correction) instead of 0. (Values whose mean torch
# itself rounds, 7.77 over 5 elements, give var a gradient of an ulp in torch: not held here.)
_SPREAD = {
    "var": lambda lib, x, kw: x.var(**kw),
    "std": lambda lib, x, kw: x.std(**kw),
    "std_mean": lambda lib, x, kw: lib.std_mean(x, **kw)[0],
    "var_mean": lambda lib, x, kw: lib.var_mean(x, **kw)[0],
}
_KWS = [{}, {"correction": 0}, {"dim": None, "correction": 2}, {"unbiased": False},
        {"dim": 1}, {"dim": -1, "keepdim": True, "correction": 0}, {"dim": 0, "unbiased": True},
        {"dim": (0, 2)}, {"dim": (-1, 0), "keepdim": True, "correction": 2},
        {"dim": (0, 1, 2), "correction": 0}, {"dim": -2, "unbiased": False, "keepdim": True}]
_DTYPES = {"float64": (np.float64, dict(rtol=1e-12, atol=0)),
           "float32": (np.float32, dict(rtol=2e-6, atol=0))}


def _spread_and_grad(lib, name, kw, data, g_seed=0):
    x = lib.tensor(data, requires_grad=True)
    y = _SPREAD[name](lib, x, kw)
    g = np.random.default_rng(g_seed).uniform(0.5, 1.5, tuple(y.shape)).astype(data.dtype)
    y.backward(lib.tensor(g))
    return y.detach().numpy(), x.grad.numpy()


def _same(ours, theirs, tol, grad_scale=False):
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.dtype == b.dtype and a.shape == b.shape
        # atol 0: where torch's value or gradient is exactly 0, ours must be too; but a
        # gradient (x - mean) of random values cancels, to rounding of the largest terms
        scale = tol["rtol"] * np.max(np.abs(b)) if k and grad_scale else 0.0
        np.testing.assert_allclose(a, b, **{**tol, "atol": scale})


@pytest.mark.parametrize("dtype", sorted(_DTYPES))
@pytest.mark.parametrize("kw", _KWS, ids=str)
@pytest.mark.parametrize("name", sorted(_SPREAD))
def test_spread_of_equal_values_is_exactly_zero_with_a_zero_gradient(name, kw, dtype):
    dt, tol = _DTYPES[dtype]
    for value in (2.4, 9.2, 1 / 3):
        data = np.full((3, 5, 4), value, dt)
        _same(_spread_and_grad(ng, name, kw, data), _spread_and_grad(torch, name, kw, data), tol)


@pytest.mark.parametrize("dtype", sorted(_DTYPES))
@pytest.mark.parametrize("kw", _KWS, ids=str)
@pytest.mark.parametrize("name", sorted(_SPREAD))
def test_spread_of_some_equal_groups_and_of_random_values(name, kw, dtype):
    # constant groups among random ones (along every dim, so some reduced groups are equal
    # values), and random values alone: torch's values and gradients to rounding
    dt, tol = _DTYPES[dtype]
    rng = np.random.default_rng(5)
    mixed = rng.standard_normal((3, 5, 4)) * 3 + 1
    mixed[1] = 2.4
    mixed[:, 2] = -0.7
    mixed[:, :, 3] = 7.77
    for data in (mixed.astype(dt), rng.uniform(-4, 9, (3, 5, 4)).astype(dt)):
        _same(_spread_and_grad(ng, name, kw, data), _spread_and_grad(torch, name, kw, data), tol,
              grad_scale=True)


@pytest.mark.parametrize("dtype", sorted(_DTYPES))
@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": 0, "correction": 0}], ids=str)
@pytest.mark.parametrize("name", sorted(_SPREAD))
def test_spread_of_groups_holding_inf_or_nan(name, kw, dtype):
    """An inf or nan in a group leaves torch's x - mean (nan, -inf, ...), not a nan mean."""
    np_dtype, tol = _DTYPES[dtype]
    data = np.array([[np.inf, 1.8, 0.5], [2.0, np.nan, 1.0], [0.25, 3.0, -1.0]], np_dtype)
    ours = _spread_and_grad(ng, name, kw, data)
    theirs = _spread_and_grad(torch, name, kw, data)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, **tol)  # nan where torch's is, inf where torch's is


def test_std_of_equal_values_reproducer():
    for lib in (ng, torch):
        x = lib.full((10,), 2.4, dtype=lib.float64, requires_grad=True)
        s = x.std(correction=0)
        s.backward()
        assert s.item() == 0.0 and x.grad[0].item() == 0.0


def test_var_of_equal_values_with_no_degree_of_freedom_left():
    # torch: NaN at the mean, inf elsewhere; every element is at the mean here
    data = np.full((3, 5, 4), 2.4)
    for kw in ({"correction": 60}, {"correction": 61}):
        _same(_spread_and_grad(ng, "var", kw, data), _spread_and_grad(torch, "var", kw, data),
              dict(rtol=0, atol=0, equal_nan=True))
        grads = []
        for lib in (ng, torch):  # and the differentiable rule's
            x = lib.tensor(data, requires_grad=True)
            grads.append(lib.autograd.grad(x.var(**kw), x, create_graph=True)[0].detach())
        np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("name", sorted(_SPREAD))
def test_spread_gradient_against_finite_differences(name):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((3, 5, 4))
    data[:, 1] = 0.3  # a constant group along dim 1: the value stays differentiable
    for kw in ({"dim": 1}, {"dim": (0, 2), "correction": 2}, {}):
        x = ng.tensor(data, requires_grad=True)
        y = _SPREAD[name](ng, x, kw)
        g = rng.standard_normal(tuple(y.shape))
        y.backward(ng.tensor(g))
        v = rng.standard_normal(data.shape)
        v[:, 1] = 0.0  # the std of a constant group has no derivative (torch gives 0)

        def f(t):
            with ng.no_grad():
                return float(np.sum(_SPREAD[name](ng, ng.tensor(data + t * v), kw).numpy() * g))
        eps = 1e-6
        numeric = (f(eps) - f(-eps)) / (2 * eps)
        assert float(np.sum(x.grad.numpy() * v)) == pytest.approx(numeric, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("dtype", sorted(_DTYPES))
@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": (-1, 0), "keepdim": True,
                                                 "correction": 0}], ids=str)
@pytest.mark.parametrize("name", sorted(_SPREAD))
def test_spread_of_equal_values_in_compiled_replay(name, kw, dtype):
    # the replay's forward (std_fw / var_fw) and backward kernels: a second call replays
    dt, tol = _DTYPES[dtype]

    def loss(x):
        return (_SPREAD[name](ng, x, kw) * 1.5).sum()
    vg = ng.compile(ng.func.value_and_grad(loss))
    values = ng.compile(lambda x: _SPREAD[name](ng, x, kw))
    for value in (9.2, 2.4, 1 / 3):
        data = np.full((3, 5, 4), value, dt)
        tx = torch.tensor(data, requires_grad=True)
        ty = _SPREAD[name](torch, tx, kw)
        (ty * 1.5).sum().backward()
        v, grad = vg(data)
        assert v == (ty * 1.5).sum().item()
        np.testing.assert_allclose(grad, tx.grad.numpy(), **tol)
        x = ng.tensor(data, requires_grad=True)
        y = values(x)
        y.backward(ng.tensor(np.full(tuple(y.shape), 1.25, dt)))
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), **tol)
        assert not np.any(x.grad.numpy())  # torch: exactly 0


@pytest.mark.parametrize("name", sorted(_SPREAD))
def test_spread_of_equal_values_with_create_graph_and_on_the_big_node_path(name, monkeypatch):
    # the differentiable rule (create_graph) and big nodes' kernels, as the small ones
    data = np.full((3, 5, 4), 2.4)
    for kw in ({}, {"dim": 1}, {"dim": (0, 2), "correction": 0}):
        grads = []
        for lib in (ng, torch):
            x = lib.tensor(data, requires_grad=True)
            (gx,) = lib.autograd.grad(_SPREAD[name](lib, x, kw).sum(), x, create_graph=True)
            grads.append(gx.detach().numpy())
        np.testing.assert_array_equal(*grads)
    monkeypatch.setattr(ng.core.tape, "BIG", 1)
    for kw in ({}, {"dim": 1}):
        _same(_spread_and_grad(ng, name, kw, data), _spread_and_grad(torch, name, kw, data),
              dict(rtol=0, atol=0))


# ---- the layout of comparisons and of 3-operand elementwise results -------------------------
# torch lays an elementwise result out in its operands' memory order, the first operand that
# tells two dims apart deciding (TensorIterator); so view() succeeds or fails as in torch
def _t(lib):  # strides (1, 4)
    return lib.arange(16.0).reshape(4, 4).t()


def _perm(lib):  # (2, 3, 4) with strides (1, 8, 2)
    return lib.arange(24.0).reshape(3, 4, 2).permute(2, 0, 1)


def _c(lib, *shape):
    return lib.arange(float(np.prod(shape))).reshape(*shape) / 7 + 1


def _s(lib):  # (2, 1, 4) with strides (1, 2, 2)
    return lib.arange(8.0).reshape(4, 1, 2).permute(2, 1, 0) + 1


_LAYOUTS = {
    "where reproducer": lambda lib: lib.where(_t(lib) > lib.zeros(1, 4, 4), _t(lib),
                                              lib.zeros(1, 4, 4)),
    "gt operator": lambda lib: _t(lib) > _c(lib, 1, 4, 4),
    "lt method": lambda lib: _perm(lib).lt(_c(lib, 2, 3, 4)),
    "eq function": lambda lib: lib.eq(_t(lib), _c(lib, 4, 4)),
    "ge function": lambda lib: lib.ge(_perm(lib), _c(lib, 2, 3, 4)),
    "logical_and": lambda lib: lib.logical_and(_t(lib), _c(lib, 2, 4, 4)),
    "and operator": lambda lib: (_perm(lib) > 3) & (_c(lib, 2, 3, 4) > 1),
    "bitwise_or": lambda lib: lib.bitwise_or(_t(lib).long(), _c(lib, 4, 4).long()),
    "where of logical_or": lambda lib: lib.where(
        lib.logical_or(_t(lib) > 2, _c(lib, 1, 4, 4) > 2), 1.0, 0.0),
    "lerp tensor weight": lambda lib: lib.lerp(_c(lib, 4), _t(lib), _c(lib, 4, 4)),
    "lerp 3d": lambda lib: lib.lerp(_c(lib, 3, 1), _perm(lib), _c(lib, 2, 3, 4)),
    "addcmul": lambda lib: lib.addcmul(_s(lib), _c(lib, 1, 3, 4), _c(lib, 2, 1, 4)),
    "addcdiv": lambda lib: lib.addcdiv(_s(lib), _c(lib, 2, 1, 4), _c(lib, 1, 3, 4)),
    "addcmul ints": lambda lib: lib.addcmul(_c(lib, 4).long(), _t(lib).long(),
                                            _c(lib, 4, 4).long()),
    "clamp tensors": lambda lib: lib.clamp(_c(lib, 4, 1), _c(lib, 4), _t(lib) + 1),
    "clamp tensors 3d": lambda lib: lib.clamp(_s(lib), _c(lib, 3, 1), _perm(lib) + 1),
}


def _stride_order(t):
    """The strides of the dims longer than 1 (the others do not decide whether a view exists)."""
    return [s for s, n in zip(t.stride(), t.shape) if n > 1]


@pytest.mark.parametrize("name", sorted(_LAYOUTS))
def test_elementwise_results_are_laid_out_as_torch_lays_them(name):
    ours, theirs = _LAYOUTS[name](ng), _LAYOUTS[name](torch)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert _stride_order(ours) == _stride_order(theirs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)  # (fused in torch)
    same_as_torch(lambda lib: _LAYOUTS[name](lib).view(-1), decimals=5)
