"""numbagrad.autograd.functional against torch.autograd.functional: the same scripts, run with
``lib`` = numbagrad or torch, give the same structure (tuple nesting), shapes, dtypes,
requires_grad, values and error messages."""

import numpy as np
import pytest
from oracle import both

import numbagrad as ng
import numbagrad.autograd.functional  # noqa: F401 - binds ng.autograd.functional

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64"]


# ---- comparison -----------------------------------------------------------------------------
def _tolerances(dtype):
    return (1e-5, 1e-6) if str(dtype).endswith("float32") else (1e-10, 1e-12)


def assert_same(ours, theirs, path="result"):
    """``ours`` (numbagrad, or NumPy/Python numbers for numbagrad.func's NumPy mode) matches
    ``theirs`` (torch): structure, container types, shapes, dtypes, requires_grad, values."""
    if isinstance(ours, str) or isinstance(theirs, str):  # errors, as oracle.both gives them
        assert ours == theirs, path
        return
    if isinstance(theirs, torch.Tensor):
        rtol, atol = _tolerances(theirs.dtype)
        expected = theirs.detach().numpy()
        if isinstance(ours, ng.Tensor):
            assert str(ours.dtype) == str(theirs.dtype), path
            assert tuple(ours.shape) == tuple(theirs.shape), path
            assert ours.requires_grad == theirs.requires_grad, path
            actual = ours.detach().numpy()
        elif isinstance(ours, np.ndarray):
            assert ours.dtype == expected.dtype, path
            assert ours.shape == expected.shape, path
            actual = ours
        else:  # a NumPy scalar or Python float stands for a 0-d tensor
            assert isinstance(ours, (float, np.generic)), (path, type(ours))
            assert theirs.ndim == 0, path
            if isinstance(ours, np.generic):
                assert ours.dtype == expected.dtype, path
            actual = np.asarray(ours)
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=path)
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs), (path, type(ours), type(theirs))
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), path
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{path}[{k!r}]")
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-10, abs=1e-12), path
    else:
        assert ours == theirs, path


def check(run):
    """Run ``run(lib)`` with both libraries and compare everything; returns ours."""
    ours, theirs = both(run)
    assert_same(ours, theirs)
    return ours


# ---- data and functions (the same values for both libraries) ---------------------------------
rng = np.random.default_rng(0)
A = rng.standard_normal(3)
B = rng.standard_normal((2, 3))
M = rng.standard_normal((3, 3)) / 2
V3 = rng.standard_normal(3)
V23 = rng.standard_normal((2, 3))


def T(lib, arr, dtype="float64", **kw):
    return lib.tensor(np.asarray(arr), dtype=getattr(lib, dtype), **kw)


def two_out(a, b):
    """Tuple in, tuple out: a (2,) vector and a scalar."""
    return (b * a.sin()).sum(dim=1), (a.exp() * a).sum()


def scalar_fn(a, b):
    return (a.tanh() * (b ** 2).sum(dim=0)).sum() + (a ** 3).sum()


# ---- vjp ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_vjp_single_input_single_output(dtype):
    def run(lib):
        x = T(lib, A, dtype)
        return lib.autograd.functional.vjp(lambda a: a.exp() * a.sin(), x, T(lib, V3, dtype))
    out, vjp = check(run)
    assert isinstance(vjp, ng.Tensor)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vjp_tuple_inputs_tuple_outputs(dtype):
    def run(lib):
        a, b = T(lib, A, dtype), T(lib, B, dtype)
        v = (T(lib, V23[0, :2], dtype), T(lib, 1.5, dtype))
        return lib.autograd.functional.vjp(two_out, (a, b), v)
    (o1, o2), (g1, g2) = check(run)


def test_vjp_v_none_for_a_single_element_output_and_the_errors_for_v():
    def run(lib):
        f = lib.autograd.functional.vjp
        x = T(lib, A)
        res = [f(lambda a: (a ** 2).sum(), x)]
        for v_call in (
            lambda: f(lambda a: a ** 2, x),                                # v=None, 3 elements
            lambda: f(lambda a: a ** 2, x, T(lib, V23)),                   # wrong size
            lambda: f(lambda a: (a, a.sum()), x, (T(lib, V3),)),           # wrong length
            lambda: f(lambda a: (a, a.sum()), x, (T(lib, V3), T(lib, V23))),  # entry 1 size
            lambda: f(lambda a: a, x, (T(lib, V3), T(lib, V3))),           # single output
            lambda: f(lambda a: a, x, 1.0),                                # not a Tensor
            lambda: f(lambda a: a, (x, 2.0)),                              # input not a Tensor
            lambda: f(lambda a: 3.0, x),                                   # output not a Tensor
        ):
            try:
                v_call()
                res.append("no error")
            except (RuntimeError, TypeError) as e:
                res.append(f"{type(e).__name__}: {e}")
        return tuple(res)
    ours = check(run)
    assert all(r.startswith(("RuntimeError", "TypeError")) for r in ours[1:])


def test_vjp_independent_input_gives_zeros_and_strict_raises():
    def run(lib):
        f = lib.autograd.functional.vjp
        a, b = T(lib, A), T(lib, B)
        res = [f(lambda x, y: x * 2, (a, b), T(lib, V3))]
        for strict_call in (
            lambda: f(lambda x, y: x * 2, (a, b), T(lib, V3), strict=True),
            lambda: f(lambda x, y: (x * 2, y.detach()), (a, b), (T(lib, V3), T(lib, V23)),
                      strict=True),
        ):
            try:
                strict_call()
            except RuntimeError as e:
                res.append(str(e))
        return tuple(res)
    ours = check(run)
    assert "independent of input 1" in ours[1]
    assert "Output 1 of the user-provided function does not require gradients" in ours[2]


def test_vjp_differentiates_the_argument_not_the_captured_tensor():
    # torch issue 32576: the inputs are new tensor objects, so x captured by the function is
    # a constant there
    def run(lib):
        x = T(lib, A)
        out, g = lib.autograd.functional.vjp(lambda a: a * x, x, T(lib, V3))
        return out, g, repr(x.grad), x.requires_grad
    check(run)


def test_inputs_requiring_grad_are_left_alone():
    def run(lib):
        x = T(lib, A, requires_grad=True)
        out, g = lib.autograd.functional.vjp(lambda a: (a ** 2).sum(), x)
        j = lib.autograd.functional.jacobian(lambda a: a.sin(), x)
        return out, g, j, repr(x.grad), x.is_leaf
    check(run)


# ---- jacobian -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_structures(dtype, vectorize):
    def run(lib):
        jac = lib.autograd.functional.jacobian
        a, b = T(lib, A, dtype), T(lib, B, dtype)
        return (
            jac(lambda x: x.exp() * x, a, vectorize=vectorize),               # Tensor
            jac(lambda x: x @ T(lib, M, dtype), b, vectorize=vectorize),      # (2,3) -> (2,3)
            jac(lambda x, y: (y * x).sum(dim=1), (a, b), vectorize=vectorize),  # tuple in
            jac(lambda x: (x.sin(), x.sum()), a, vectorize=vectorize),          # tuple out
            jac(two_out, (a, b), vectorize=vectorize),                          # tuple of tuples
            jac(lambda x: x, a, vectorize=vectorize),                           # identity
            jac(lambda x: (x ** 2).sum(), a, vectorize=vectorize),              # scalar out
        )
    check(run)


def test_jacobian_forward_mode_strategy():
    def run(lib):
        jac = lib.autograd.functional.jacobian
        a, b = T(lib, A), T(lib, B)
        res = [jac(two_out, (a, b), vectorize=True, strategy="forward-mode"),
               jac(lambda x: x.tanh(), a, vectorize=True, strategy="forward-mode")]
        for bad in (dict(vectorize=False), dict(vectorize=True, strict=True),
                    dict(vectorize=True, create_graph=True)):
            try:
                jac(two_out, (a, b), strategy="forward-mode", **bad)
            except (RuntimeError, NotImplementedError) as e:
                res.append(f"{type(e).__name__}: {e}")
        return tuple(res)
    check(run)


def test_jacobian_independent_input_zeros_and_strict_errors():
    def run(lib):
        jac = lib.autograd.functional.jacobian
        a, b = T(lib, A), T(lib, B)
        f = lambda x, y: (x * 2, (x * 3).sum())  # independent of y
        res = [jac(f, (a, b)), jac(f, (a, b), vectorize=True),
               jac(lambda x: T(lib, V3), a)]  # independent output: zeros
        for call in (lambda: jac(f, (a, b), strict=True),
                     lambda: jac(f, (a, b), strict=True, vectorize=True),
                     lambda: jac(lambda x: T(lib, V3), a, strict=True)):
            try:
                call()
            except RuntimeError as e:
                res.append(str(e))
        return tuple(res)
    ours = check(run)
    assert ours[3].startswith("Output 0 of the user-provided function is independent of input 1")


# ---- create_graph (needs create_graph=True in numbagrad.autograd.grad) ----------------------
def test_vjp_create_graph_keeps_the_history_of_inputs():
    def run(lib):
        x = T(lib, A, requires_grad=True)
        out, g = lib.autograd.functional.vjp(lambda a: (a ** 3).sum(), x, create_graph=True)
        gx, = lib.autograd.grad(g.sum(), x)
        return out, g, gx
    check(run)


def test_jacobian_create_graph_and_its_strict_check():
    def run(lib):
        jac = lib.autograd.functional.jacobian
        x = T(lib, A, requires_grad=True)
        j = jac(lambda a: a.sin() * a, x, create_graph=True)
        gx, = lib.autograd.grad(j.sum(), x)
        jv = jac(lambda a: a.exp(), x, create_graph=True, vectorize=True)
        res = [j, gx, jv]
        try:  # the jacobian of a linear function does not depend on the input
            jac(lambda a: a * 2, x, create_graph=True, strict=True)
        except RuntimeError as e:
            res.append(str(e))
        return tuple(res)
    check(run)


# ---- jvp --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_jvp(dtype):
    def run(lib):
        jvp = lib.autograd.functional.jvp
        a, b = T(lib, A, dtype), T(lib, B, dtype)
        return (jvp(lambda x: x.exp() * x, a, T(lib, V3, dtype)),
                jvp(two_out, (a, b), (T(lib, V3, dtype), T(lib, V23, dtype))),
                jvp(lambda x: (x * 3, x.sin()), T(lib, 0.7, dtype)))  # v=None, one element
    check(run)


def test_jvp_errors_before_any_derivative():
    def run(lib):
        jvp = lib.autograd.functional.jvp
        a, b = T(lib, A), T(lib, B)
        res = []
        for call in (lambda: jvp(lambda x: x * 2, a),                       # v=None, 3 elements
                     lambda: jvp(lambda x: x * 2, a, T(lib, V23)),          # wrong size
                     lambda: jvp(two_out, (a, b), (T(lib, V3),)),           # wrong length
                     lambda: jvp(lambda x: x.detach(), a, T(lib, V3), strict=True)):
            try:
                call()
            except RuntimeError as e:
                res.append(str(e))
        return tuple(res)
    check(run)


def test_jvp_independent_output_strict_and_not():
    def run(lib):
        jvp = lib.autograd.functional.jvp
        a, b = T(lib, A), T(lib, B)
        f = lambda x, y: (x * 2, y.detach().sum())
        res = [jvp(f, (a, b), (T(lib, V3), T(lib, V23)))]
        try:
            jvp(lambda x, y: x * y.sum(), (a, b), (T(lib, V3), T(lib, V23)), strict=True)
            res.append("no error")
        except RuntimeError as e:
            res.append(str(e))
        return tuple(res)
    check(run)


# ---- hvp, vhp, hessian ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp(dtype, name):
    def run(lib):
        fn = getattr(lib.autograd.functional, name)
        a, b = T(lib, A, dtype), T(lib, B, dtype)
        return (fn(lambda x: (x.sin() * x ** 2).sum(), a, T(lib, V3, dtype)),
                fn(scalar_fn, (a, b), (T(lib, V3, dtype), T(lib, V23, dtype))),
                fn(lambda x: x.exp() * x, T(lib, 0.3, dtype)))  # v=None, one element
    check(run)


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp_errors_before_any_derivative(name):
    def run(lib):
        fn = getattr(lib.autograd.functional, name)
        a = T(lib, A)
        res = []
        for call in (lambda: fn(lambda x: x.sum(), a),                     # v=None, 3 elements
                     lambda: fn(lambda x: (x.sum(), x.sum()), a, T(lib, V3)),  # tuple output
                     lambda: fn(lambda x: x ** 2, a, T(lib, V3)),          # 3 elements out
                     lambda: fn(lambda x: x.sum(), a, T(lib, V23))):        # wrong size
            try:
                call()
            except RuntimeError as e:
                res.append(str(e))
        return tuple(res)
    check(run)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessian(dtype):
    def run(lib):
        hess = lib.autograd.functional.hessian
        a, b = T(lib, A, dtype), T(lib, B, dtype)
        return (hess(lambda x: (x.sin() * x ** 2).sum(), a),
                hess(scalar_fn, (a, b)),  # tuple of tuples, blocks (x.shape + y.shape)
                hess(scalar_fn, (a, b), vectorize=True),
                hess(scalar_fn, (a, b), vectorize=True, outer_jacobian_strategy="forward-mode"),
                hess(lambda x: (x ** 3).sum().reshape(1), a))  # one-element output, squeezed
    check(run)


def test_hessian_errors_and_strict():
    def run(lib):
        hess = lib.autograd.functional.hessian
        a, b = T(lib, A), T(lib, B)
        res = []
        for call in (lambda: hess(lambda x: x ** 2, a),                     # not one element
                     lambda: hess(lambda x: (x.sum(), x.sum()), a),         # tuple output
                     lambda: hess(lambda x, y: (x * 2).sum(), (a, b), strict=True),
                     lambda: hess(lambda x: (x * 2).sum(), a, strict=True)):  # linear
            try:
                call()
                res.append("no error")
            except RuntimeError as e:
                res.append(str(e))
        return tuple(res)
    check(run)


def test_hvp_create_graph():
    def run(lib):
        x = T(lib, A, requires_grad=True)
        out, h = lib.autograd.functional.hvp(lambda a: (a ** 4).sum(), x, T(lib, V3),
                                             create_graph=True)
        gx, = lib.autograd.grad(h.sum(), x)
        return out, h, gx
    check(run)
