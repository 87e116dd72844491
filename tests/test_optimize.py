"""numbagrad.optimize: scipy.optimize driven by compiled derivatives gives scipy's own results
with analytic derivatives (same iterates, to the last bits the gradients' rounding allows)."""

import numpy as np
import pytest

import numbagrad as ng

so = pytest.importorskip("scipy.optimize")



def rosen(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


X0 = np.array([1.2, -1.0, 1.2, -1.0, 0.8, 1.1, -0.5, 0.3])


METHODS = ["BFGS", "L-BFGS-B", "CG", "Newton-CG", "trust-ncg", "trust-krylov", "trust-exact",
           "dogleg", "trust-constr"]


def _analytic(method, hess, hessp):
    if method in ("Newton-CG", "trust-ncg", "trust-krylov", "trust-constr"):
        return {"hessp": hessp}
    if method in ("trust-exact", "dogleg"):
        return {"hess": hess}
    return {}


@pytest.mark.parametrize("method", METHODS)
def test_minimize_rosenbrock_reaches_scipys_minimum(method):
    # Rosenbrock's valley amplifies last-bit differences of the gradient (ours sums in
    # another order than scipy.optimize.rosen_der): same minimum, not the same path
    x0 = X0 if method != "dogleg" else np.full_like(X0, 1.05)  # dogleg: a PD Hessian at x0
    ours = ng.optimize.minimize(rosen, x0, method=method)
    theirs = so.minimize(so.rosen, x0, method=method, jac=so.rosen_der,
                         **_analytic(method, so.rosen_hess, so.rosen_hess_prod))
    assert ours.success and theirs.success
    assert np.allclose(ours.x, theirs.x, rtol=0, atol=1e-4)
    assert np.allclose(ours.x, 1.0, atol=1e-4)


A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
B = np.array([1.0, -2.0, 0.5])


def smooth(x):
    # strictly convex: 0.5 x'Ax - b'x + log(sum(exp(x))); iterates are stable under rounding
    xa = ng.tensor(A) @ x
    return 0.5 * (x * xa).sum() - (ng.tensor(B) * x).sum() + ng.logsumexp(x, 0)


def smooth_np(x):
    return 0.5 * x @ A @ x - B @ x + np.log(np.exp(x).sum())


def smooth_grad(x):
    s = np.exp(x) / np.exp(x).sum()
    return A @ x - B + s


def smooth_hess(x):
    s = np.exp(x) / np.exp(x).sum()
    return A + np.diag(s) - np.outer(s, s)


@pytest.mark.parametrize("method", METHODS)
def test_minimize_matches_scipy_with_analytic_derivatives(method):
    x0 = np.array([0.3, -0.2, 0.1])
    ours = ng.optimize.minimize(smooth, x0, method=method)
    theirs = so.minimize(smooth_np, x0, method=method, jac=smooth_grad,
                         **_analytic(method, smooth_hess, lambda x, p: smooth_hess(x) @ p))
    assert ours.success and theirs.success
    assert ours.nit == theirs.nit
    assert np.allclose(ours.x, theirs.x, rtol=0, atol=1e-9)
    assert np.isclose(ours.fun, theirs.fun, rtol=1e-12)


def test_minimize_passes_extra_args_and_keeps_x0_shape():
    target = np.array([[1.0, -2.0], [0.5, 3.0]])
    seen = []

    def f(x, t, scale):
        seen.append(tuple(x.shape))
        return scale * ((x - ng.tensor(t)) ** 2).sum()
    res = ng.optimize.minimize(f, np.zeros((2, 2)), args=(target, 3.0), method="BFGS")
    assert np.allclose(res.x.reshape(2, 2), target, atol=1e-6)
    assert set(seen) == {(2, 2)}


def test_hessp_is_the_hessian_times_the_vector():
    from numbagrad.optimize import _hvp
    rng = np.random.default_rng(0)
    x, p = rng.standard_normal(8), rng.standard_normal(8)
    hvp = _hvp(rosen, ng.compile, x.shape)
    assert np.allclose(hvp(x, p), so.rosen_hess(x) @ p, rtol=1e-12, atol=1e-9)


def test_minimize_without_compile_and_errors():
    res = ng.optimize.minimize(lambda x: (x.var() - 1.0) ** 2 + (x.mean() - 2.0) ** 2,
                               np.array([0.0, 1.0, 3.0]), method="BFGS", compile=False)
    assert res.success and abs(res.fun) < 1e-10
    with pytest.raises(TypeError, match="computes jac itself"):
        ng.optimize.minimize(rosen, X0, jac=so.rosen_der)
    from test_compile import Cube
    with pytest.raises(NotImplementedError, match="py_function"):
        ng.optimize.minimize(lambda x: Cube.apply(x).sum(), X0)  # compile names the unsupported op


def _decay_data(m):
    t = np.linspace(0.0, 4.0, m)
    y = 2.5 * np.exp(-1.3 * t) + 0.5 + 0.02 * np.sin(7 * t)
    return t, y


def _resid(p, t, y):
    return p[0] * ng.exp(-p[1] * ng.tensor(t)) + p[2] - ng.tensor(y)


def _resid_np(p, t, y):
    return p[0] * np.exp(-p[1] * t) + p[2] - y


def _jac_np(p, t, y):
    e = np.exp(-p[1] * t)
    return np.stack([e, -p[0] * t * e, np.ones_like(t)], axis=1)


@pytest.mark.parametrize("m", [2, 40])  # fewer residuals than parameters: rows; more: columns
@pytest.mark.parametrize("method", ["trf", "lm", "dogbox"])
def test_least_squares_matches_scipy_with_analytic_jacobian(m, method):
    if method == "lm" and m < 3:
        pytest.skip("scipy's lm needs at least as many residuals as parameters")
    t, y = _decay_data(m)
    x0 = np.array([1.0, 1.0, 0.0])
    ours = ng.optimize.least_squares(_resid, x0, args=(t, y), method=method)
    theirs = so.least_squares(_resid_np, x0, jac=_jac_np, args=(t, y), method=method)
    assert ours.nfev == theirs.nfev and ours.njev == theirs.njev
    assert np.allclose(ours.x, theirs.x, rtol=0, atol=1e-8)
    assert np.allclose(ours.jac, theirs.jac, rtol=1e-12, atol=1e-12)


def test_least_squares_rejects_non_vector_residuals():
    with pytest.raises(ValueError, match="1-D Tensor of residuals"):
        ng.optimize.least_squares(lambda p: (p * p).sum(), np.ones(2))


def test_minimize_takes_a_function_returning_value_and_gradient():
    """jac=True, or a callable marked returns_value_and_grad (numbagrad.distributed's), goes
    to scipy as it is; minimizing one function again reuses its compiled traces."""
    def value_and_grad(x):
        return float(((x - 3.0) ** 2).sum()), 2 * (x - 3.0)
    result = ng.optimize.minimize(value_and_grad, np.zeros(4), jac=True, method="BFGS")
    np.testing.assert_allclose(result.x, 3.0, atol=1e-6)

    class Marked:
        returns_value_and_grad = True

        def __call__(self, x):
            return value_and_grad(x)
    np.testing.assert_allclose(ng.optimize.minimize(Marked(), np.zeros(2)).x, 3.0, atol=1e-6)
    with pytest.raises(TypeError, match="jac=True"):
        ng.optimize.minimize(value_and_grad, np.zeros(2), jac=lambda x: x)

    def f(x):
        return ((x - 1.0) ** 2).sum()
    ng.optimize.minimize(f, np.zeros(3))
    compiled = ng.optimize._value_and_grads[f][True]
    ng.optimize.minimize(f, np.ones(3) * 5)
    assert ng.optimize._value_and_grads[f][True] is compiled and len(compiled.traces) == 1
