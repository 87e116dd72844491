"""The LU family (linalg.lu_factor(_ex), linalg.lu, lu_unpack, linalg.lu_solve, torch.lu,
torch.lu_solve, torch.triangular_solve) and torch.linalg's composites (diagonal, vander,
tensorinv, tensorsolve) against torch: values, pivots, grad_fn names, gradients (torch's and
finite differences), float32, batches, errors."""

import warnings

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)
SHAPES = [(4, 4), (2, 3, 3), (3, 5), (5, 3), (2, 1, 4, 6)]


def _pair(a, requires_grad=True):
    return (ng.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _close(ours, theirs, tol=1e-10):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)


def _grads(outs, ins, lib, weights):
    loss = sum((o * lib.tensor(w)).sum() for o, w in zip(outs, weights) if w is not None)
    mod = ng.autograd if lib is ng else torch.autograd
    return mod.grad(loss, ins, retain_graph=True)


def _quiet():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


# ---- factorizations ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
def test_lu_factor_ex_matches_torch(shape):
    a = rng.standard_normal(shape)
    na, ta = _pair(a)
    ours, theirs = ng.linalg.lu_factor_ex(na), torch.linalg.lu_factor_ex(ta)
    assert type(theirs).__name__ == type(ours).__name__ == "linalg_lu_factor_ex"
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    assert ours.pivots.dtype is ng.int32 and ours.info.dtype is ng.int32
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    _close(ours.LU, theirs.LU)
    assert type(ours.LU.grad_fn).__name__ == type(theirs.LU.grad_fn).__name__
    assert not ours.pivots.requires_grad
    w = rng.standard_normal(theirs.LU.shape)
    (g1,), (g2,) = _grads([ours.LU], [na], ng, [w]), _grads([theirs.LU], [ta], torch, [w])
    _close(g1, g2)
    lu, piv = ng.linalg.lu_factor(na)
    _close(lu, theirs.LU)
    np.testing.assert_array_equal(piv.numpy(), theirs.pivots.numpy())


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("which", ["L", "U", "LU"])
def test_lu_matches_torch(shape, which):
    a = rng.standard_normal(shape)
    na, ta = _pair(a)
    ours, theirs = ng.linalg.lu(na), torch.linalg.lu(ta)
    assert type(ours).__name__ == "linalg_lu"
    for u, v in zip(ours, theirs):
        _close(u, v)
    assert not ours.P.requires_grad
    assert type(ours.L.grad_fn).__name__ == type(theirs.L.grad_fn).__name__
    # A = P L U
    np.testing.assert_allclose((ours.P @ ours.L @ ours.U).detach().numpy(), a, atol=1e-12)
    ws = [None, rng.standard_normal(theirs.L.shape) if "L" in which else None,
          rng.standard_normal(theirs.U.shape) if "U" in which else None]
    (g1,), (g2,) = _grads(ours, [na], ng, ws), _grads(theirs, [ta], torch, ws)
    _close(g1, g2)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2)])
def test_lu_gradients_finite_differences(shape):
    a = rng.standard_normal(shape)
    x = ng.tensor(a, requires_grad=True)
    assert gradcheck(lambda t: ng.linalg.lu(t)[1:], (x,))
    assert gradcheck(lambda t: ng.linalg.lu_factor(t).LU, (x,))
    lu = ng.tensor(ng.linalg.lu_factor(ng.tensor(a)).LU.numpy(), requires_grad=True)
    piv = ng.linalg.lu_factor(ng.tensor(a)).pivots
    assert gradcheck(lambda t: ng.lu_unpack(t, piv)[1:], (lu,))
    if shape[0] == shape[1]:
        assert gradgradcheck(lambda t: ng.linalg.lu(t).U, (x,))


def test_lu_float32_within_torchs_tolerance():
    a = rng.standard_normal((3, 5, 5)).astype(np.float32)
    na, ta = _pair(a)
    ours, theirs = ng.linalg.lu_factor(na), torch.linalg.lu_factor(ta)
    assert ours.LU.dtype is ng.float32
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    _close(ours.LU, theirs.LU, tol=1e-5)
    w = rng.standard_normal(a.shape).astype(np.float32)
    (g1,), (g2,) = _grads([ours.LU], [na], ng, [w]), _grads([theirs.LU], [ta], torch, [w])
    assert g1.dtype is ng.float32
    _close(g1, g2, tol=1e-3)


def test_lu_unpack_matches_torch():
    a = rng.standard_normal((2, 4, 6))
    lu_t, piv_t = torch.linalg.lu_factor(torch.tensor(a))
    nl, tl = _pair(lu_t.numpy())
    npiv = ng.tensor(piv_t.numpy())
    ours, theirs = ng.lu_unpack(nl, npiv), torch.lu_unpack(tl, piv_t)
    assert type(ours).__name__ == "lu_unpack"
    for u, v in zip(ours, theirs):
        _close(u, v)
    assert type(ours.L.grad_fn).__name__ == type(theirs.L.grad_fn).__name__ == \
        "LuUnpackBackward0"
    ws = [None, rng.standard_normal(theirs.L.shape), rng.standard_normal(theirs.U.shape)]
    (g1,), (g2,) = _grads(ours, [nl], ng, ws), _grads(theirs, [tl], torch, ws)
    _close(g1, g2)
    for kw in ({"unpack_data": False}, {"unpack_pivots": False}):
        for u, v in zip(ng.lu_unpack(nl, npiv, **kw), torch.lu_unpack(tl, piv_t, **kw)):
            _close(u, v)


# ---- solving ----------------------------------------------------------------------------------
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("shapes", [((4, 4), (4, 2)), ((2, 3, 3), (2, 3, 4)),
                                    ((3, 3), (2, 3, 5))])
def test_lu_solve_matches_torch(left, adjoint, shapes):
    ashape, bshape = shapes
    a = rng.standard_normal(ashape) + 3 * np.eye(ashape[-1])
    b = rng.standard_normal(bshape if left else (*bshape[:-2], bshape[-1], bshape[-2]))
    lu_t, piv_t = torch.linalg.lu_factor(torch.tensor(a))
    nl, tl = _pair(lu_t.numpy())
    nb, tb = _pair(b)
    npiv = ng.tensor(piv_t.numpy())
    ours = ng.linalg.lu_solve(nl, npiv, nb, left=left, adjoint=adjoint)
    theirs = torch.linalg.lu_solve(tl, piv_t, tb, left=left, adjoint=adjoint)
    _close(ours, theirs)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    w = rng.standard_normal(theirs.shape)
    for u, v in zip(_grads([ours], [nl, nb], ng, [w]), _grads([theirs], [tl, tb], torch, [w])):
        _close(u, v, 1e-9)
    assert gradcheck(lambda x, y: ng.linalg.lu_solve(x, npiv, y, left=left, adjoint=adjoint),
                     (nl, nb))


def test_deprecated_lu_and_lu_solve():
    a = rng.standard_normal((2, 3, 3))
    b = rng.standard_normal((2, 3, 2))
    na, ta = _pair(a)
    ctx = _quiet()
    try:
        ours, theirs = ng.lu(na), torch.lu(ta)
        assert type(ours) is tuple and len(ours) == 2
        for u, v in zip(ours, theirs):
            _close(u, v)
        with_info = ng.lu(na, get_infos=True)
        assert type(with_info).__name__ == "_lu_with_info"
        assert type(with_info.LU.grad_fn).__name__ == "LinalgLuFactorExBackward0"
        _close(na.lu()[0], ta.lu()[0])
        x = ng.lu_solve(ng.tensor(b), *ours)
        _close(x, torch.lu_solve(torch.tensor(b), *theirs))
        _close(ng.tensor(b).lu_solve(*ours), x)
    finally:
        ctx.__exit__(None, None, None)
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        ng.lu(na)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_triangular_solve_matches_torch(upper, transpose, unit):
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    na, ta = _pair(a)
    nb, tb = _pair(b)
    ctx = _quiet()
    try:
        ours = ng.triangular_solve(nb, na, upper, transpose, unit)
        theirs = torch.triangular_solve(tb, ta, upper, transpose, unit)
        assert type(ours).__name__ == "triangular_solve"
        for u, v in zip(ours, theirs):
            _close(u, v)
        assert type(ours.solution.grad_fn).__name__ == type(theirs.solution.grad_fn).__name__
        ws = [rng.standard_normal(theirs[0].shape), rng.standard_normal(theirs[1].shape)]
        for u, v in zip(_grads(ours, [na, nb], ng, ws), _grads(theirs, [ta, tb], torch, ws)):
            _close(u, v)
        _close(nb.triangular_solve(na, upper)[0], tb.triangular_solve(ta, upper)[0])
        assert gradcheck(lambda x, y: ng.triangular_solve(y, x, upper, transpose, unit)[0],
                         (na, nb))
    finally:
        ctx.__exit__(None, None, None)


# ---- singular inputs and errors ---------------------------------------------------------------
def test_singular_info_and_errors():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    batch = np.stack([np.eye(2), s])
    ours, theirs = ng.linalg.lu_factor_ex(ng.tensor(batch)), \
        torch.linalg.lu_factor_ex(torch.tensor(batch))
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    assert ours.info.numpy()[1] > 0
    for fn in (lambda lib: lib.linalg.lu_factor(lib.tensor(batch)),
               lambda lib: lib.linalg.lu_factor_ex(lib.tensor(s), check_errors=True)):
        with pytest.raises(RuntimeError) as theirs:
            fn(torch)
        with pytest.raises(RuntimeError, match="is zero and using it on lu_solve") as ours:
            fn(ng)
        assert str(ours.value) == str(theirs.value)
    # linalg.lu and torch.lu do not raise
    for u, v in zip(ng.linalg.lu(ng.tensor(s)), torch.linalg.lu(torch.tensor(s))):
        _close(u, v)


def _same_error(fn):
    ctx = _quiet()
    try:
        with pytest.raises((RuntimeError, NotImplementedError)) as theirs:
            fn(torch)
        # torch's LinAlgError is its own class: numbagrad's is a RuntimeError as well
        expected = NotImplementedError if theirs.type is NotImplementedError else RuntimeError
        with pytest.raises(expected) as ours:
            fn(ng)
    finally:
        ctx.__exit__(None, None, None)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.lu_factor(lib.ones(3)),
    lambda lib: lib.linalg.lu(lib.ones(3)),
    lambda lib: lib.linalg.lu_factor(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.linalg.lu(lib.eye(2), pivot=False),
    lambda lib: lib.linalg.lu_solve(lib.eye(3), lib.ones(3, dtype=lib.int32), lib.ones(2, 1)),
    lambda lib: lib.linalg.lu_solve(lib.ones(2, 3), lib.ones(2, dtype=lib.int32),
                                    lib.ones(2, 1)),
    lambda lib: lib.linalg.lu_solve(lib.eye(2), lib.ones(2, dtype=lib.int64), lib.ones(2, 1)),
    lambda lib: lib.linalg.lu_solve(lib.eye(2), lib.ones(2, dtype=lib.int32), lib.ones(2)),
    lambda lib: lib.linalg.lu_solve(lib.eye(2), lib.ones(2, dtype=lib.int32),
                                    lib.ones(2, 1, dtype=lib.float64)),
    lambda lib: lib.linalg.lu_solve(lib.eye(2), lib.ones(3, dtype=lib.int32), lib.ones(2, 1)),
    lambda lib: lib.linalg.lu_solve(lib.eye(2), lib.ones(2, dtype=lib.int32), lib.ones(2, 3),
                                    left=False),
    lambda lib: lib.lu_unpack(lib.eye(3), lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.lu_unpack(lib.eye(3), lib.tensor([3, 3, 4], dtype=lib.int32)),
    lambda lib: lib.triangular_solve(lib.ones(2, 1), lib.ones(3, 3)),
    lambda lib: lib.triangular_solve(lib.ones(2), lib.ones(2, 2)),
    lambda lib: lib.triangular_solve(lib.ones(2, 1), lib.ones(2, 2, dtype=lib.float64)),
    lambda lib: lib.triangular_solve(lib.ones(2, 1), lib.ones(2, 3)),
    lambda lib: lib.linalg.cond(lib.ones(2, 3), 1),
    lambda lib: lib.linalg.cond(lib.ones(2, 3), 1.0),
    lambda lib: lib.linalg.cond(lib.ones(2, 3), "fro"),
    lambda lib: lib.linalg.cond(lib.ones(2, 3), -float("inf")),
    lambda lib: lib.linalg.cond(lib.ones(3, 3), 3),
    lambda lib: lib.linalg.cond(lib.ones(3, 3), "abc"),
    lambda lib: lib.linalg.cond(lib.ones(3)),
    lambda lib: lib.linalg.vander(lib.tensor([True])),
    lambda lib: lib.linalg.vander(lib.ones(3), N=1),
    lambda lib: lib.linalg.vander(lib.tensor(1.5)),
    lambda lib: lib.linalg.tensorinv(lib.ones(4, 4), ind=0),
    lambda lib: lib.linalg.tensorinv(lib.ones(2, 3, 2)),
    lambda lib: lib.linalg.tensorinv(lib.zeros(2, 2, 2, 2)),
    lambda lib: lib.linalg.tensorsolve(lib.zeros(4, 2, 2), lib.ones(4)),
    lambda lib: lib.linalg.tensorsolve(lib.ones(6, 4, 2, 3), lib.ones(6, 4), dims=(0, 2)),
])
def test_errors_as_torch(call):
    _same_error(call)


# ---- composites -------------------------------------------------------------------------------
def _composite(fn, *arrays, fd=True):
    ours_in = [ng.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    ours, theirs = fn(ng, *ours_in), fn(torch, *theirs_in)
    _close(ours, theirs)
    w = rng.standard_normal(theirs.shape)
    for u, v in zip(_grads([ours], ours_in, ng, [w]), _grads([theirs], theirs_in, torch, [w])):
        _close(u, v, 1e-9)
    if fd:
        assert gradcheck(lambda *xs: fn(ng, *xs), tuple(ours_in))
    return ours, theirs


def test_diagonal_and_vander():
    ours, theirs = _composite(lambda lib, a: lib.linalg.diagonal(a), rng.standard_normal((2, 3, 4)))
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    _composite(lambda lib, a: lib.linalg.diagonal(a, offset=1, dim1=0, dim2=2),
               rng.standard_normal((3, 2, 4)))
    ours, theirs = _composite(lambda lib, x: lib.linalg.vander(x), rng.standard_normal((2, 3)))
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "CatBackward0"
    _composite(lambda lib, x: lib.linalg.vander(x, N=5), rng.standard_normal(3))
    ints = [lib.linalg.vander(lib.tensor([1, 2, 3], dtype=lib.int32), N=4) for lib in (ng, torch)]
    _close(*ints)


def test_tensorinv_and_tensorsolve():
    a = rng.standard_normal((4, 6, 8, 3))
    ours, theirs = _composite(lambda lib, t: lib.linalg.tensorinv(t), a, fd=False)
    _composite(lambda lib, t: lib.linalg.tensorinv(t, ind=1), rng.standard_normal((6, 2, 3)))
    assert type(theirs.grad_fn.next_functions[0][0]).__name__ == \
        type(ours.grad_fn.next_functions[0][0]).__name__ == "LinalgInvExBackward0"
    ours, theirs = _composite(lambda lib, t, b: lib.linalg.tensorsolve(t, b),
                              rng.standard_normal((2, 3, 6)), rng.standard_normal((2, 3)))
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    _composite(lambda lib, t, b: lib.linalg.tensorsolve(t, b, dims=(0, 2)),
               rng.standard_normal((3, 2, 2, 3)), rng.standard_normal((2, 3)))


@pytest.mark.parametrize("p", [None, "fro", "nuc", float("inf"), -float("inf"), 1, -1, 2, -2])
def test_cond_matches_torch(p):
    a = rng.standard_normal((2, 3, 3)) + np.eye(3)
    if p in (None, "nuc", 2, -2):
        ours, theirs = _composite(lambda lib, x: lib.linalg.cond(x, p), a, fd=p is None)
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    else:
        # torch's backward fails there (its masked_fill_ on linalg.inv_ex's saved output):
        # numbagrad's gradient is checked against finite differences instead
        _close(ng.linalg.cond(ng.tensor(a), p), torch.linalg.cond(torch.tensor(a), p))
        x = ng.tensor(a, requires_grad=True)
        assert type(ng.linalg.cond(x, p).grad_fn).__name__ == \
            type(torch.linalg.cond(torch.tensor(a, requires_grad=True), p).grad_fn).__name__
        assert gradcheck(lambda t: ng.linalg.cond(t, p), (x,))
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    if p not in (None, 2, -2, "nuc"):  # the SVD's rounding decides those at a singular matrix
        _close(*[lib.linalg.cond(lib.tensor(singular), p) for lib in (ng, torch)])
    _close(*[lib.linalg.cond(lib.zeros(2, 0, 0, dtype=lib.float64), p) for lib in (ng, torch)])
    if p in (None, 2, -2):
        wide = rng.standard_normal((2, 5))
        _close(*[lib.linalg.cond(lib.tensor(wide), p) for lib in (ng, torch)])


@pytest.mark.parametrize("shapes", [((5, 3), (2,)), ((2, 4, 4), (2, 3)), ((4, 3), (3,)),
                                    ((3, 2), (0,))])
def test_householder_product_matches_torch(shapes):
    a, tau = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    if shapes[1] != (0,):  # no reflectors: the identity's columns, which torch leaves unused
        ours, theirs = _composite(lambda lib, x, t: lib.linalg.householder_product(x, t), a, tau)
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    f32 = [lib.linalg.householder_product(lib.tensor(a, dtype=lib.float32),
                                          lib.tensor(tau, dtype=lib.float32))
           for lib in (ng, torch)]
    _close(*f32, tol=1e-5)


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.householder_product(lib.ones(3, 5), lib.ones(2)),
    lambda lib: lib.linalg.householder_product(lib.ones(5, 3), lib.ones(4)),
    lambda lib: lib.linalg.householder_product(lib.ones(5), lib.ones(1)),
    lambda lib: lib.linalg.householder_product(lib.ones(5, 3), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.linalg.householder_product(lib.ones(2, 5, 3), lib.ones(3, 2)),
    lambda lib: lib.linalg.householder_product(lib.ones(5, 3), lib.ones(2, 2)),
    lambda lib: lib.linalg.householder_product(lib.ones(5, 3, dtype=lib.int64),
                                               lib.ones(2, dtype=lib.int64)),
])
def test_householder_product_errors(call):
    _same_error(call)


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 5)])
def test_ldl_matches_torch(shape):
    a = rng.standard_normal(shape)
    a = a + np.swapaxes(a, -1, -2)
    # zero diagonal and a large coupling: Bunch-Kaufman takes a 2x2 block (negative pivots)
    a[..., 0, 0] = a[..., 1, 1] = 0.0
    a[..., 0, 1] = a[..., 1, 0] = 10.0
    ours = ng.linalg.ldl_factor_ex(ng.tensor(a, requires_grad=True))
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a, requires_grad=True))
    assert type(ours).__name__ == "linalg_ldl_factor_ex"
    _close(ours.LD, theirs.LD)
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    assert (ours.pivots.numpy() < 0).any()
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    assert type(ours.LD.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not"):
        ours.LD.sum().backward()
    ld, piv = ng.linalg.ldl_factor(ng.tensor(a))
    _close(ld, theirs.LD)
    b = rng.standard_normal((*shape[:-1], 2))
    x = ng.linalg.ldl_solve(ld, piv, ng.tensor(b))
    _close(x, torch.linalg.ldl_solve(theirs.LD.detach(), theirs.pivots, torch.tensor(b)))
    np.testing.assert_allclose(a @ x.numpy(), b, atol=1e-10)
    zeros = [lib.linalg.ldl_factor_ex(lib.zeros(2, 2)) for lib in (ng, torch)]
    np.testing.assert_array_equal(zeros[0].info.numpy(), zeros[1].info.numpy())
    with pytest.raises(RuntimeError, match="singular"):
        ng.linalg.ldl_factor(ng.zeros(2, 2))


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.ldl_factor(lib.ones(2, 3)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(2), lib.ones(2, dtype=lib.int32), lib.ones(3, 1)),
])
def test_ldl_errors(call):
    _same_error(call)
