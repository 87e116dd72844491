"""Special functions (lgamma, digamma, polygamma, erfinv, mvlgamma) against torch and SciPy:
values over wide ranges including poles and negative non-integers, dtypes, gradients, second
derivatives, grad_fn names and errors."""

import numpy as np
import pytest

import numbagrad as ng
from tests.torch_oracle import same_as_torch

torch = pytest.importorskip("torch")
special = pytest.importorskip("scipy.special")

_RNG = np.random.default_rng(0)
# wide range: negative non-integers, the poles themselves, tiny and huge magnitudes
WIDE = np.concatenate([
    _RNG.uniform(-30, 30, 3000), _RNG.uniform(0, 5, 3000), 10 ** _RNG.uniform(-10, 15, 500),
    -(10 ** _RNG.uniform(-3, 3, 500)),
    [0.0, -0.0, -1.0, -2.0, -3.0, -1e300, 1e300, 1e-300, 1e17, 2e17, 10.0, 0.5, -0.5,
     np.inf, -np.inf, np.nan]])

FUNCTIONS = {
    "lgamma": lambda lib, x: lib.lgamma(x),
    "digamma": lambda lib, x: lib.digamma(x),
    "polygamma0": lambda lib, x: lib.polygamma(0, x),
    "polygamma1": lambda lib, x: lib.polygamma(1, x),
    "polygamma2": lambda lib, x: lib.polygamma(2, x),
    "polygamma5": lambda lib, x: lib.polygamma(5, x),
    "mvlgamma3": lambda lib, x: lib.mvlgamma(x, 3),
}


def _close(a, b, tol):
    """Equal where torch is inf / nan, within tol * (|b| + 1) elsewhere (relative, and
    absolute next to the zeros of the functions)."""
    assert np.array_equal(np.isnan(a), np.isnan(b))
    finite = np.isfinite(b)
    assert np.array_equal(a[~finite & ~np.isnan(b)], b[~finite & ~np.isnan(b)])
    err = np.abs(a[finite] - b[finite]) / (np.abs(b[finite]) + 1.0)
    assert err.max(initial=0.0) <= tol, err.max()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_values_match_torch_over_a_wide_range(name):
    f = FUNCTIONS[name]
    ours = f(ng, ng.tensor(WIDE)).numpy()
    theirs = f(torch, torch.tensor(WIDE)).numpy()
    _close(ours, theirs, 4e-15)


@pytest.mark.parametrize("name,reference", [
    ("lgamma", special.gammaln), ("digamma", special.psi),
    ("polygamma2", lambda x: special.polygamma(2, x)),
    ("polygamma5", lambda x: special.polygamma(5, x))])
def test_values_match_scipy_on_the_positive_axis(name, reference):
    x = WIDE[(WIDE > 0) & np.isfinite(WIDE)]
    _close(FUNCTIONS[name](ng, ng.tensor(x)).numpy(), reference(x), 4e-15)


def test_trigamma_is_torch_s_asymptotic_series():
    # torch's trigamma stops its series early: 1e-9 from the true value, as ours
    x = WIDE[(WIDE > 0.1) & (WIDE < 1e10)]
    _close(ng.polygamma(1, ng.tensor(x)).numpy(), special.polygamma(1, x), 1e-9)


def test_erfinv_matches_torch_and_scipy_to_the_tails():
    y = np.concatenate([_RNG.uniform(-1, 1, 4000), 1 - 10 ** _RNG.uniform(-16, -1, 500),
                        -1 + 10 ** _RNG.uniform(-16, -1, 500), 10 ** _RNG.uniform(-300, 0, 200),
                        [1.0, -1.0, 1.5, -2.0, 0.0, -0.0, np.nan, 1 - 2.0 ** -53]])
    ours = ng.erfinv(ng.tensor(y)).numpy()
    for theirs in (torch.erfinv(torch.tensor(y)).numpy(), special.erfinv(y)):
        _close(ours, theirs, 1e-15)
    assert np.array_equal(np.signbit(ours[y == 0]), np.signbit(y[y == 0]))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float32_values_and_dtype(name):
    x = np.concatenate([_RNG.uniform(0.05, 8, 200), _RNG.uniform(-8, -0.05, 50)]).astype(
        np.float32)
    ours = FUNCTIONS[name](ng, ng.tensor(x))
    theirs = FUNCTIONS[name](torch, torch.tensor(x))
    assert ours.dtype is ng.float32
    a, b = ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64)
    finite = np.isfinite(b) & (np.abs(b) < 1e6)  # float32 near a pole: both huge
    positive = finite & (x > 0)
    np.testing.assert_allclose(a[positive], b[positive], rtol=2e-5, atol=2e-5)
    # torch's float32 reflection (sinf, tanf of pi x) loses digits ours, in float64, keeps
    np.testing.assert_allclose(a[finite], b[finite], rtol=2e-3, atol=2e-5)


@pytest.mark.parametrize("call", [
    "lib.lgamma(lib.tensor([1, 2, 5]))", "lib.digamma(lib.tensor([1, 2, 5]))",
    "lib.polygamma(1, lib.tensor([1, 2]))", "lib.erfinv(lib.tensor([0, 1]))",
    "lib.mvlgamma(lib.tensor([3, 4]), 2)", "lib.lgamma(lib.tensor([True, False]))",
    "lib.tensor([0.5, 2.0], dtype=lib.float64).lgamma()",
    "lib.tensor([0.5, 2.0], dtype=lib.float64).digamma()",
    "lib.tensor([0.5, 2.0], dtype=lib.float64).polygamma(3)",
    "lib.tensor([0.5, -0.2], dtype=lib.float64).erfinv()",
    "lib.tensor([2.5, 3.0], dtype=lib.float64).mvlgamma(p=2)",
    "lib.polygamma(n=2, input=lib.tensor([0.7]))", "lib.lgamma(input=lib.tensor([0.7]))",
    "lib.lgamma(lib.tensor([]))", "lib.digamma(lib.tensor(3.5))",
])
def test_integer_inputs_methods_and_keywords(call):
    # (float32 results: torch rounds each step in float32, ours once from float64)
    same_as_torch(lambda lib: eval(call, {"lib": lib}), decimals=5)  # noqa: S307


@pytest.mark.parametrize("call", [
    "lib.polygamma(-1, lib.tensor([1.0]))", "lib.polygamma(1.5, lib.tensor([1.0]))",
    "lib.polygamma(lib.tensor([1.0]), 2)", "lib.mvlgamma(lib.tensor([3.0]), 0)",
    "lib.mvlgamma(lib.tensor([3.0]), 1.5)", "lib.lgamma([1.0])",
])
def test_errors_match_torch(call):
    same_as_torch(lambda lib: eval(call, {"lib": lib}))  # noqa: S307


@pytest.mark.parametrize("name,grad_fn", [
    ("lgamma", "LgammaBackward0"), ("digamma", "DigammaBackward0"),
    ("polygamma0", "PolygammaBackward0"), ("polygamma2", "PolygammaBackward0"),
    ("mvlgamma3", "MvlgammaBackward0")])
def test_gradients_match_torch(name, grad_fn):
    x = np.array([0.3, 1.7, 2.5, 6.0, 11.0, -0.4, -2.7])
    if name == "mvlgamma3":
        x = x[x > 1.01] + 0.1
    f = FUNCTIONS[name]
    xs = [lib.tensor(x, requires_grad=True) for lib in (ng, torch)]
    outs = [f(lib, t) for lib, t in zip((ng, torch), xs)]
    assert outs[0].grad_fn.name() == outs[1].grad_fn.name() == grad_fn
    g = np.linspace(0.5, 1.5, x.size)
    outs[0].backward(ng.tensor(g))
    outs[1].backward(torch.tensor(g))
    np.testing.assert_allclose(xs[0].grad.numpy(), xs[1].grad.numpy(), rtol=1e-13)


def test_erfinv_gradient_and_grad_fn():
    y = np.array([-0.99, -0.3, 0.0, 0.5, 0.9])
    a, b = ng.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    oa, ob = ng.erfinv(a), torch.erfinv(b)
    assert oa.grad_fn.name() == ob.grad_fn.name() == "ErfinvBackward0"
    oa.sum().backward()
    ob.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-13)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma2", "mvlgamma3", "erfinv"])
def test_second_derivatives(name):
    f = (lambda lib, x: lib.erfinv(x)) if name == "erfinv" else FUNCTIONS[name]
    x0 = np.array([0.3, -0.45, 0.6]) if name == "erfinv" else np.array([1.3, 2.6, 4.2])
    x = ng.tensor(x0, requires_grad=True)
    assert ng.autograd.gradcheck(lambda t: f(ng, t), (x,))
    assert ng.autograd.gradgradcheck(lambda t: f(ng, t), (x,))
    # and the second derivative's value is torch's
    values = []
    for lib in (ng, torch):
        t = lib.tensor(x0, requires_grad=True)
        (g,) = lib.autograd.grad(f(lib, t).sum(), t, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), t)
        values.append(h.numpy())
    np.testing.assert_allclose(values[0], values[1], rtol=1e-12)
