"""numbagrad.func against torch.func: the same scripts, run with ``lib`` = numbagrad or torch,
give the same results (structure, shapes, dtypes, requires_grad, values) and errors; NumPy
arrays and Python floats in give NumPy arrays and Python floats out, compared with torch.func
on the same values as tensors."""

import numpy as np
import pytest
from test_functional import DTYPES, V3, V23, A, B, M, T, assert_same, check

import numbagrad as ng
import numbagrad.func  # noqa: F401 - binds ng.func
import numbagrad.func.transforms as tr

torch = pytest.importorskip("torch")
torch_func = pytest.importorskip("torch.func")

C = np.array([0.3, -1.2, 0.8])


def f(x, y):
    """(3,), (2, 3) -> scalar."""
    return (x.sin() * (y ** 2).sum(dim=0)).sum() + (x ** 3).sum()


def two_out(x, y):
    return (y * x.exp()).sum(dim=1), (x * x).sum()


def catch(call):
    """The result, or the error as a string (ValueError too, which oracle.both lets through)."""
    try:
        return call()
    except (RuntimeError, TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}"


def numpy_vs_torch(transform, fn, *args, **kw):
    """``transform`` of ``fn`` applied to NumPy/float ``args`` with numbagrad, and to the same
    values as tensors with torch.func; Python floats become float64 tensors there."""
    ours = getattr(ng.func, transform)(fn, **kw)(*args)
    as_t = [torch.tensor(a, dtype=torch.float64) if isinstance(a, float) else
            torch.from_numpy(np.array(a)) for a in args]
    theirs = getattr(torch_func, transform)(fn, **kw)(*as_t)
    assert_same(ours, theirs)
    return ours


# ---- grad, grad_and_value, value_and_grad on tensors ----------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_tensors(dtype):
    def run(lib):
        fn = lib.func
        x, y = T(lib, A, dtype), T(lib, B, dtype)
        return (fn.grad(f)(x, y),
                fn.grad(f, argnums=1)(x, y),
                fn.grad(f, argnums=(0, 1))(x, y),
                fn.grad(f, argnums=(-1, 0))(x, y),
                fn.grad(lambda a, b: (f(a, b), a * 2), has_aux=True)(x, y),
                fn.grad_and_value(f)(x, y),
                fn.grad_and_value(lambda a, b: (f(a, b), (a.sum(), b)), argnums=(0, 1),
                                  has_aux=True)(x, y),
                fn.grad(lambda a, scale: (a * scale).sum())(x, scale=T(lib, V3, dtype)),
                repr(x.grad), x.requires_grad)
    check(run)


def test_grad_of_pytrees_and_independent_arguments():
    def run(lib):
        fn = lib.func
        p = {"w": T(lib, B), "b": T(lib, A)}
        loss = lambda p, x: ((p["w"] @ x + p["b"][:2]).tanh() ** 2).sum()
        return (fn.grad(loss)(p, T(lib, V3)),
                fn.grad(lambda xs: (xs[0] * xs[1][0]).sum())((T(lib, A), [T(lib, V3)])),
                fn.grad(lambda a, b: (a * 2).sum(), argnums=(0, 1))(T(lib, A), T(lib, B)),
                fn.grad(lambda a: T(lib, 1.5))(T(lib, A)))  # output independent of a: zeros
    check(run)


def test_grad_errors():
    def run(lib):
        g = lib.func.grad
        x = T(lib, A)
        return tuple(catch(c) for c in (
            lambda: g(lambda a: a * 2)(x),
            lambda: g(lambda a: 1.0)(x),
            lambda: g(lambda a: a.sum(), has_aux=True)(x),
            lambda: g(lambda a: a.sum(), argnums=2)(x),
            lambda: g(lambda a: a.sum(), argnums=(0, 0))(x),
            lambda: g(lambda a: a.sum(), argnums=())(x),
            lambda: g(lambda a: a.sum(), argnums=[0])(x),
            lambda: g(lambda a: a.sum(), argnums=(0.5,))(x),
            lambda: g(lambda a: a * 2)(1),
            lambda: g(lambda a: a.sum())(T(lib, [1, 2])),
            lambda: lib.func.grad_and_value(lambda a: a.sum(-1))(T(lib, B)),
        ))
    ours = check(run)
    assert ours[0] == ("RuntimeError: grad_and_value(f)(*args): Expected f(*args) to return a "
                       "scalar Tensor, got tensor with 1 dims. Maybe you wanted to use the vjp "
                       "or jacrev APIs instead?")


# ---- NumPy and Python floats in, NumPy and Python floats out ----------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grad_numpy_in_numpy_out(dtype):
    x, y = A.astype(dtype), B.astype(dtype)
    x0, y0 = x.copy(), y.copy()
    g = numpy_vs_torch("grad", f, x, y)
    assert type(g) is np.ndarray and g.dtype == dtype and g.shape == (3,)
    gx, gy = numpy_vs_torch("grad", f, x, y, argnums=(0, 1))
    assert gy.dtype == dtype and gy.shape == (2, 3)
    grads, value = numpy_vs_torch("grad_and_value", f, x, y, argnums=(0, 1))
    assert type(value) is float
    numpy_vs_torch("grad", lambda a, b: (f(a, b), a * 2), x, y, has_aux=True)
    np.testing.assert_array_equal(x, x0)  # the inputs are not touched
    np.testing.assert_array_equal(y, y0)


def test_value_and_grad_is_grad_and_value_in_jax_order():
    value, g = ng.func.value_and_grad(f, argnums=(0, 1))(A, B)
    g2, value2 = ng.func.grad_and_value(f, argnums=(0, 1))(A, B)
    assert value == value2 and type(value) is float
    assert_same(g, torch_func.grad(f, argnums=(0, 1))(torch.tensor(A), torch.tensor(B)))
    (value, aux), g = ng.func.value_and_grad(lambda a: ((a ** 2).sum(), a + 1), has_aux=True)(A)
    np.testing.assert_allclose(aux, A + 1)
    np.testing.assert_allclose(g, 2 * A)
    vt, gt = ng.func.value_and_grad(lambda a: (a ** 2).sum())(T(ng, A))
    assert isinstance(vt, ng.Tensor) and isinstance(gt, ng.Tensor) and not gt.requires_grad


def test_python_floats_and_numpy_scalars():
    sq = lambda a: a * a.sin()
    g = numpy_vs_torch("grad", sq, 0.7)
    assert type(g) is float
    g = ng.func.grad(sq)(np.float32(0.7))
    assert type(g) is np.float32
    assert_same(g, torch_func.grad(sq)(torch.tensor(0.7, dtype=torch.float32)))
    g = ng.func.grad(sq)(np.array(0.7))
    assert type(g) is np.ndarray and g.shape == ()
    # a NumPy array not differentiated reaches the function as a Tensor
    g = numpy_vs_torch("grad", lambda a, w: (a @ w).sum(), C, M)
    assert type(g) is np.ndarray


# ---- vjp ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_vjp_tensors(dtype):
    def run(lib):
        x, y = T(lib, A, dtype), T(lib, B, dtype)
        out, vjp_fn = lib.func.vjp(two_out, x, y)
        cot = (T(lib, V23[0, :2], dtype), T(lib, 2.0, dtype))
        out1, vjp_fn1 = lib.func.vjp(lambda a: a.exp() * a, x)
        out2, vjp_fn2, aux = lib.func.vjp(lambda a: (a.sin(), {"s": a.sum()}), x, has_aux=True)
        return (out, vjp_fn(cot), vjp_fn(cot), out1, vjp_fn1(T(lib, V3, dtype)), out2, aux,
                vjp_fn2(T(lib, V3, dtype)))
    check(run)


def test_vjp_errors():
    def run(lib):
        vjp = lib.func.vjp
        x = T(lib, A)
        _, fn2 = vjp(lambda a: (a * 2, a.sum()), x)
        _, fn1 = vjp(lambda a: a * 2, x)
        return tuple(catch(c) for c in (
            lambda: fn2(T(lib, V3)),
            lambda: fn1((T(lib, V3),)),
            lambda: fn1(T(lib, V23)),
            lambda: vjp(lambda a: 3.0, x),
            lambda: vjp(lambda a: None, x),
            lambda: vjp(lambda a: (), x),
            lambda: vjp(lambda a: (a > 0).long(), x),
            lambda: vjp(lambda a: a, x, has_aux=True),
            lambda: vjp(lambda a: a, 2),
        ))
    check(run)


def test_vjp_numpy_in_numpy_out():
    out, fn = ng.func.vjp(two_out, A, B)
    t_out, t_fn = torch_func.vjp(two_out, torch.tensor(A), torch.tensor(B))
    assert_same(out, t_out)
    cot = (V23[0, :2], 2.0)
    assert_same(fn(cot), t_fn((torch.tensor(V23[0, :2]), torch.tensor(2.0, dtype=torch.float64))))
    assert type(out[1]) is float


# ---- jacrev, jacfwd ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_tensors(name, dtype):
    def run(lib):
        jac = getattr(lib.func, name)
        x, y = T(lib, A, dtype), T(lib, B, dtype)
        return (jac(lambda a: a.exp() * a)(x),
                jac(lambda b: b @ T(lib, M, dtype))(y),           # (2,3) -> (2,3)
                jac(two_out)(x, y),                               # tuple out
                jac(two_out, argnums=(0, 1))(x, y),               # tuple out x tuple in
                jac(lambda a, b: {"p": a * b[0], "q": b.sum()}, argnums=1)(x, y),  # dict out
                jac(lambda a, b: a * 2, argnums=(0, 1))(x, y),    # independent of b: zeros
                jac(f)(x, y),                                     # scalar out
                repr(x.grad))
    check(run)


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_has_aux_and_errors(name):
    def run(lib):
        jac = getattr(lib.func, name)
        x = T(lib, A)
        aux_kw = {"has_aux": True}
        return (jac(lambda a: (a.sin(), (a.cos(), a.sum())), **aux_kw)(x),
                catch(lambda: jac(lambda a: a, **aux_kw)(x)),
                catch(lambda: jac(lambda a: 3.0)(x)),
                catch(lambda: jac(lambda a: a, argnums=1)(x)))
    check(run)
    for lib in (ng, torch):
        with pytest.raises(ValueError, match="`chunk_size` should be greater than 0"):
            lib.func.jacrev(f, chunk_size=0)


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jacobians_numpy_in_numpy_out(name, dtype):
    x, y = A.astype(dtype), B.astype(dtype)
    j = numpy_vs_torch(name, two_out, x, y, argnums=(0, 1))
    assert all(type(b) is np.ndarray and b.dtype == dtype for blocks in j for b in blocks)
    numpy_vs_torch(name, lambda a: a.sin() * 2, x)
    j = numpy_vs_torch(name, lambda a: a * a, 0.5)  # scalar in, scalar out: a Python float
    assert type(j) is float


def test_jacfwd_runs_forward_mode(monkeypatch):
    """jacfwd is one forward-mode pass per input element (no backward at all), and falls
    back to reverse mode around a transform inside f (hessian's jacrev), equal to torch."""
    def no_backward(*args, **kwargs):
        raise AssertionError("jacfwd ran a backward")
    x = np.linspace(-1.0, 1.0, 5)
    with monkeypatch.context() as m:
        m.setattr(tr, "_autograd_grad", no_backward)
        j = ng.func.jacfwd(lambda a: (a.tanh() * a[0]).cumsum(0))(ng.tensor(x))
    t = torch.func.jacfwd(lambda a: (a.tanh() * a[0]).cumsum(0))(torch.tensor(x))
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-12)
    h = ng.func.jacfwd(ng.func.jacrev(lambda a: (a ** 3).prod()))(ng.tensor(x))
    th = torch.func.jacfwd(torch.func.jacrev(lambda a: (a ** 3).prod()))(torch.tensor(x))
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-10)


# ---- higher order (these need create_graph=True in numbagrad.autograd.grad) ------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_hessian_tensors(dtype):
    def run(lib):
        x, y = T(lib, A, dtype), T(lib, B, dtype)
        return (lib.func.hessian(f)(x, y),
                lib.func.hessian(f, argnums=(0, 1))(x, y),  # tuple of tuples
                lib.func.hessian(lambda a: (a.tanh() ** 2).sum())(x))
    check(run)


def test_hessian_numpy_in_numpy_out():
    h = numpy_vs_torch("hessian", f, A, B, argnums=(0, 1))
    assert h[0][1].shape == (3, 2, 3)
    assert type(numpy_vs_torch("hessian", lambda a: a.sin() * a, 0.4)) is float


@pytest.mark.parametrize("dtype", DTYPES)
def test_jvp_tensors(dtype):
    def run(lib):
        x, y = T(lib, A, dtype), T(lib, B, dtype)
        return (lib.func.jvp(two_out, (x, y), (T(lib, V3, dtype), T(lib, V23, dtype))),
                lib.func.jvp(lambda a: a.exp() * a, (x,), (T(lib, V3, dtype),)),
                lib.func.jvp(lambda a: (a.sin(), a * 2), (x,), (T(lib, V3, dtype),),
                             has_aux=True),
                lib.func.jvp(lambda a, b: (a * 2, b.detach()), (x, y),
                             (T(lib, V3, dtype), T(lib, V23, dtype))))
    check(run)


def test_jvp_errors():
    def run(lib):
        jvp = lib.func.jvp
        x = T(lib, A)
        return tuple(catch(c) for c in (
            lambda: jvp(lambda a: a, x, (T(lib, V3),)),
            lambda: jvp(lambda a: a, (x,), (T(lib, V3),), has_aux=True),
            lambda: jvp(lambda a: 3.0, (x,), (T(lib, V3),)),
            lambda: jvp(lambda a: a.detach(), (x,), (T(lib, V3),), strict=True),
        ))
    check(run)
    # torch prints its TreeSpec objects there; the message starts the same way
    msg = catch(lambda: ng.func.jvp(lambda a: a, (T(ng, A),), T(ng, V3)))
    assert msg.startswith("RuntimeError: jvp(f, primals, tangents): Expected primals and "
                          "tangents to have the same python structure.")


def test_jvp_numpy_in_numpy_out():
    out, tan = ng.func.jvp(two_out, (A, B), (V3, V23))
    t_out, t_tan = torch_func.jvp(two_out, (torch.tensor(A), torch.tensor(B)),
                                  (torch.tensor(V3), torch.tensor(V23)))
    assert_same((out, tan), (t_out, t_tan))


def test_nested_transforms():
    def run(lib):
        fn = lib.func
        x, y, c = T(lib, A), T(lib, B), T(lib, C)
        g = lambda a: (a.sin() * a ** 2).sum()
        return (fn.grad(lambda a: fn.grad(g)(a).sum())(x),
                fn.jacrev(fn.grad(g))(x),
                fn.jacfwd(fn.jacrev(f, argnums=1), argnums=0)(x, y),
                fn.grad(lambda a: fn.grad(lambda b: (a * b ** 2).sum())(c).sum())(x),  # closure
                fn.grad(lambda a: fn.vjp(lambda b: b.exp() * a, c)[1](c)[0].sum())(x))
    check(run)


def test_nested_transforms_numpy():
    g = lambda a: (a.sin() * a ** 2).sum()
    ours = ng.func.grad(ng.func.grad(lambda a: g(a)))(0.3)
    assert type(ours) is float
    assert_same(ours, torch_func.grad(torch_func.grad(g))(torch.tensor(0.3, dtype=torch.float64)))
    assert_same(ng.func.jacrev(ng.func.grad(g))(A), torch_func.jacrev(torch_func.grad(g))(
        torch.tensor(A)))


def test_tensor_requiring_grad_keeps_its_graph_through_the_transform():
    def run(lib):
        x = T(lib, A, requires_grad=True)
        g, value = lib.func.grad_and_value(lambda a: (a ** 3).sum())(x)
        gx, = lib.autograd.grad((g * T(lib, V3)).sum() + value, x)
        return g.requires_grad, value.requires_grad, gx, repr(x.grad)
    check(run)
