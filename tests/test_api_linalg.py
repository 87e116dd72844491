"""torch.linalg and the linear algebra functions (det, inverse, einsum, cdist, ...) against
torch: values, grad_fn names, gradients (float64), second derivatives, degenerate points,
errors and the named tuples."""

import warnings

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.autograd import gradcheck, gradgradcheck
from tests.torch_oracle import same_as_torch

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)
SQ = rng.standard_normal((2, 3, 3))
SPD = SQ @ SQ.transpose(0, 2, 1) + 3 * np.eye(3)
TALL = rng.standard_normal((2, 4, 3))
WIDE = rng.standard_normal((3, 5))
RHS = rng.standard_normal((2, 3, 2))
VEC = rng.standard_normal(3)
PTS1, PTS2 = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 4, 3))


def _outputs(r):
    return tuple(r) if isinstance(r, tuple) else (r,)


def _loss(lib, outs, sign_free):
    # |u|^3 does not see the sign of a singular vector or eigenvector (torch's and LAPACK's
    # may differ); u^2 everywhere else
    terms = [(u.abs() ** 3 if sign_free else u * u).sum() for u in outs
             if u.requires_grad]
    return sum(terms[1:], terms[0]) if terms else None


def check(fn, *arrays, sign_free=False, grad_fns=True):
    """fn(lib, *tensors) on numbagrad and torch (float64): values (up to sign with
    ``sign_free``), grad_fn names and the gradients of a loss over the outputs."""
    ours_in = [ng.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _outputs(fn(ng, *ours_in)), _outputs(fn(torch, *theirs_in))
    assert len(ours) == len(theirs)
    for u, v in zip(ours, theirs):
        assert tuple(u.shape) == tuple(v.shape) and str(u.dtype) == str(v.dtype)
        a, b = u.detach().numpy(), v.detach().numpy()
        np.testing.assert_allclose(np.abs(a) if sign_free else a,
                                   np.abs(b) if sign_free else b, rtol=1e-7, atol=1e-9)
        if grad_fns:
            assert (u.grad_fn and u.grad_fn.name()) == (v.grad_fn and v.grad_fn.name())
    lo, lt = _loss(ng, ours, sign_free), _loss(torch, theirs, sign_free)
    if lt is None:
        return
    lo.backward()
    lt.backward()
    for x, t in zip(ours_in, theirs_in):
        if t.grad is None:
            assert x.grad is None or not x.grad.numpy().any()
            continue
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-8)


CASES = {
    "inv": (lambda lib, a: lib.linalg.inv(a), (SQ,)),
    "inverse": (lambda lib, a: lib.inverse(a[0]), (SQ,)),
    "det": (lambda lib, a: lib.linalg.det(a), (SQ,)),
    "torch.det": (lambda lib, a: lib.det(a), (SQ,)),
    "slogdet": (lambda lib, a: tuple(lib.linalg.slogdet(a)), (SQ,)),
    "torch.slogdet": (lambda lib, a: tuple(lib.slogdet(a)), (SQ,)),
    "logdet": (lambda lib, a: lib.logdet(a), (SPD,)),
    "solve": (lambda lib, a, b: lib.linalg.solve(a, b), (SQ, RHS)),
    "solve_vector": (lambda lib, a, b: lib.linalg.solve(a, b), (SQ, VEC)),
    "solve_right": (lambda lib, a, b: lib.linalg.solve(a, b, left=False),
                    (SQ, RHS.transpose(0, 2, 1).copy())),
    "cholesky": (lambda lib, a: lib.linalg.cholesky(a), (SPD,)),
    "cholesky_upper": (lambda lib, a: lib.linalg.cholesky(a, upper=True), (SPD,)),
    "torch.cholesky": (lambda lib, a: lib.cholesky(a), (SPD,)),
    "cholesky_solve": (lambda lib, b, low: lib.cholesky_solve(b, low),
                       (RHS, np.linalg.cholesky(SPD))),
    "cholesky_inverse": (lambda lib, low: lib.cholesky_inverse(low),
                         (np.linalg.cholesky(SPD)[0],)),
    "qr_tall": (lambda lib, a: tuple(lib.linalg.qr(a)), (TALL,)),
    "qr_wide": (lambda lib, a: tuple(lib.linalg.qr(a)), (WIDE,)),
    "qr_complete_wide": (lambda lib, a: tuple(lib.linalg.qr(a, mode="complete")), (WIDE,)),
    "torch.qr": (lambda lib, a: tuple(lib.qr(a)), (TALL,)),
    "svd_reduced_tall": (lambda lib, a: tuple(lib.linalg.svd(a, full_matrices=False)), (TALL,)),
    "svd_reduced_wide": (lambda lib, a: tuple(lib.linalg.svd(a, full_matrices=False)), (WIDE,)),
    "svd_square_full": (lambda lib, a: tuple(lib.linalg.svd(a)), (SQ,)),
    "torch.svd": (lambda lib, a: tuple(lib.svd(a)), (TALL,)),
    "svdvals": (lambda lib, a: lib.linalg.svdvals(a), (TALL,)),
    "eigh": (lambda lib, a: tuple(lib.linalg.eigh(a)), (SPD,)),
    "eigh_upper": (lambda lib, a: tuple(lib.linalg.eigh(a, UPLO="U")), (SPD,)),
    "eigvalsh": (lambda lib, a: lib.linalg.eigvalsh(a), (SPD,)),
    "pinv": (lambda lib, a: lib.linalg.pinv(a), (TALL,)),
    "pinv_wide": (lambda lib, a: lib.linalg.pinv(a), (WIDE,)),
    "lstsq": (lambda lib, a, b: lib.linalg.lstsq(a, b).solution, (TALL, TALL[..., :2].copy())),
    "matrix_exp": (lambda lib, a: lib.linalg.matrix_exp(a), (SQ,)),
    "torch.matrix_exp": (lambda lib, a: lib.matrix_exp(a), (SQ,)),
    "norm": (lambda lib, a: lib.linalg.norm(a), (TALL,)),
    "norm_dim": (lambda lib, a: lib.linalg.norm(a, 3, dim=-1, keepdim=True), (TALL,)),
    "vector_norm": (lambda lib, a: lib.linalg.vector_norm(a, float("inf"), dim=(0, 2)), (TALL,)),
    "matrix_norm_fro": (lambda lib, a: lib.linalg.matrix_norm(a), (TALL,)),
    "matrix_norm_nuc": (lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), (TALL,)),
    "matrix_norm_2": (lambda lib, a: lib.linalg.matrix_norm(a, 2), (TALL,)),
    "matrix_norm_1": (lambda lib, a: lib.linalg.matrix_norm(a, 1, dim=(2, 0)), (TALL,)),
    "matrix_norm_-inf": (lambda lib, a: lib.linalg.matrix_norm(a, -float("inf")), (TALL,)),
    "norm_ord_2d": (lambda lib, a: lib.linalg.norm(a, float("inf")), (WIDE,)),
    "einsum_mm": (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), (WIDE.T.copy(), SQ[0])),
    "einsum_bmm": (lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), (TALL, SQ)),
    "einsum_trace": (lambda lib, a: lib.einsum("ii", a), (SQ[0],)),
    "einsum_sum": (lambda lib, a: lib.einsum("ij->", a), (WIDE,)),
    "einsum_transpose": (lambda lib, a: lib.einsum("ij->ji", a), (WIDE,)),
    "einsum_outer": (lambda lib, a, b: lib.einsum("i,j->ij", a, b), (VEC, VEC)),
    "einsum_ellipsis": (lambda lib, a, b: lib.einsum("...ij,...jk", a, b), (TALL, SQ)),
    "einsum_list": (lambda lib, a, b: lib.einsum("bij,bkj->bik", [a, b]), (TALL, TALL)),
    "einsum_rowdot": (lambda lib, a, b: lib.einsum("ij,ij->i", a, b), (WIDE, WIDE)),
    "einsum_three": (lambda lib, a, b, c: lib.einsum("ij,jk,k->i", a, b, c),
                     (WIDE.T.copy(), SQ[0], VEC)),
    "tensordot": (lambda lib, a, b: lib.tensordot(a, b, dims=([1, 2], [2, 1])),
                  (TALL, TALL.transpose(0, 2, 1).copy())),
    "tensordot_int": (lambda lib, a, b: lib.tensordot(a, b, dims=1), (TALL, SQ[0])),
    "inner": (lambda lib, a, b: lib.inner(a, b), (TALL, SQ[0])),
    "inner_vectors": (lambda lib, a, b: lib.inner(a, b), (VEC, VEC)),
    "kron": (lambda lib, a, b: lib.kron(a, b), (SQ[0], WIDE)),
    "kron_ranks": (lambda lib, a, b: lib.kron(a, b), (VEC, TALL)),
    "vdot": (lambda lib, a, b: lib.vdot(a, b), (VEC, VEC[::-1].copy())),
    "addmv": (lambda lib, c, m, v: lib.addmv(c, m, v, beta=0.5, alpha=2), (VEC[:1].copy(),
                                                                          SQ[0], VEC)),
    "addbmm": (lambda lib, c, a, b: lib.addbmm(c, a, b), (WIDE[:, :3].copy(), SQ, SQ)),
    "baddbmm": (lambda lib, c, a, b: lib.baddbmm(c, a, b, alpha=3, beta=2), (SQ[0], SQ, SQ)),
    "cross": (lambda lib, a, b: lib.cross(a, b, dim=1), (WIDE[:, :3].copy(), SQ[1])),
    "linalg.cross": (lambda lib, a, b: lib.linalg.cross(a, b), (TALL, VEC[None, None])),
    "vecdot": (lambda lib, a, b: lib.linalg.vecdot(a, b), (TALL, VEC)),
    "multi_dot": (lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]), (VEC, SQ[0],
                                                                        WIDE[:, :4].copy())),
    "matrix_power": (lambda lib, a: lib.linalg.matrix_power(a, 3), (SQ[0],)),
    "matrix_power_neg": (lambda lib, a: lib.linalg.matrix_power(a, -2), (SQ[0],)),
    "solve_triangular": (lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
                         (SQ, RHS)),
    "solve_triangular_right_unit": (
        lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False, left=False,
                                                      unitriangular=True),
        (SQ, RHS.transpose(0, 2, 1).copy())),
    "inv_ex": (lambda lib, a: tuple(lib.linalg.inv_ex(a)), (SQ,)),
    "cholesky_ex": (lambda lib, a: tuple(lib.linalg.cholesky_ex(a)), (SPD,)),
    "solve_ex": (lambda lib, a, b: tuple(lib.linalg.solve_ex(a, b)), (SQ, RHS)),
    "linalg.matmul": (lambda lib, a, b: lib.linalg.matmul(a, b), (SQ, RHS)),
    "cdist": (lambda lib, a, b: lib.cdist(a, b), (PTS1, PTS2)),
    "cdist_p1": (lambda lib, a, b: lib.cdist(a, b, p=1), (PTS1, PTS2)),
    "cdist_p3": (lambda lib, a, b: lib.cdist(a, b, p=3), (PTS1, PTS2)),
    "cdist_inf": (lambda lib, a, b: lib.cdist(a, b, p=float("inf")), (PTS1, PTS2)),
    "cdist_p0": (lambda lib, a, b: lib.cdist(a, b, p=0), (PTS1, PTS2)),
}
SIGN_FREE = {"svd_reduced_tall", "svd_reduced_wide", "svd_square_full", "torch.svd", "eigh",
             "eigh_upper"}


@pytest.mark.parametrize("name", list(CASES))
def test_values_names_and_gradients(name):
    fn, arrays = CASES[name]
    check(fn, *arrays, sign_free=name in SIGN_FREE)


# ---- second derivatives (torch supports them for all of these) ---------------------------------
def _sym(x):
    return x + x.mT


SECOND = {
    "inv": lambda x: ng.linalg.inv(x),
    "det": lambda x: ng.linalg.det(x),
    "slogdet": lambda x: ng.linalg.slogdet(x).logabsdet,
    "solve": lambda x: ng.linalg.solve(x, x[..., 0]),
    "cholesky": lambda x: ng.linalg.cholesky(x @ x.mT + ng.eye(3, dtype=ng.float64)),
    "qr": lambda x: ng.linalg.qr(x)[0],
    "svdvals": lambda x: ng.linalg.svdvals(x),
    "eigh": lambda x: ng.linalg.eigh(_sym(x)).eigenvectors.abs(),
    "pinv": lambda x: ng.linalg.pinv(x),
    "matrix_exp": lambda x: ng.linalg.matrix_exp(x),
    "cross": lambda x: ng.linalg.cross(x, x * x + 1),
    "cdist": lambda x: ng.cdist(x, x * 0.5 + 1.0),
    "solve_triangular": lambda x: ng.linalg.solve_triangular(x + 3 * ng.eye(3, dtype=ng.float64),
                                                             x, upper=True),
}


@pytest.mark.parametrize("name", list(SECOND))
def test_gradcheck_and_gradgradcheck(name):
    x = ng.tensor(SQ[0], requires_grad=True)
    assert gradcheck(SECOND[name], (x,))
    assert gradgradcheck(SECOND[name], (x,))


# ---- degenerate points -------------------------------------------------------------------------
def test_det_gradient_of_a_singular_matrix_is_the_cofactor_matrix():
    singular = np.array([[1.0, 2, 3], [2, 4, 6], [0, 1, 1]])
    check(lambda lib, a: lib.linalg.det(a), singular)
    check(lambda lib, a: lib.linalg.det(a), np.zeros((3, 3)))


def _grad(lib, fn, array):
    x = lib.tensor(array, requires_grad=True)
    fn(lib, x).backward()
    return x.grad.numpy()


def test_repeated_eigenvalues_and_singular_values_as_torch():
    repeated = np.diag([2.0, 2.0, 3.0])
    # the values alone: finite; through the vectors: NaN, as torch's
    for fn in (lambda lib, a: (lib.linalg.eigvalsh(a) ** 2).sum(),
               lambda lib, a: (lib.linalg.eigh(a)[0] ** 2).sum(),
               lambda lib, a: lib.linalg.svdvals(a).sum(),
               lambda lib, a: (lib.linalg.eigh(a)[1].abs()).sum() + lib.linalg.eigh(a)[0].sum(),
               lambda lib, a: lib.linalg.svd(a)[0].abs().sum()):
        ours, theirs = _grad(ng, fn, repeated), _grad(torch, fn, repeated)
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
        np.testing.assert_allclose(ours[~np.isnan(ours)], theirs[~np.isnan(theirs)])


def test_norms_at_zero_have_zero_gradient():
    for fn in (lambda lib, a: lib.linalg.vector_norm(a),
               lambda lib, a: lib.linalg.norm(a),
               lambda lib, a: lib.linalg.matrix_norm(a),
               lambda lib, a: lib.cdist(a, a).sum()):
        np.testing.assert_array_equal(_grad(ng, fn, np.zeros((2, 3))),
                                      _grad(torch, fn, np.zeros((2, 3))))


def test_cdist_with_zero_distances():
    pts = np.array([[0.0, 1, 2], [0, 1, 2], [3, 4, 5]])
    for p in (1.0, 2.0, 3.0):
        fn = lambda lib, a, p=p: lib.cdist(a, a, p=p).sum()  # noqa: E731
        np.testing.assert_allclose(_grad(ng, fn, pts), _grad(torch, fn, pts))


# ---- errors ------------------------------------------------------------------------------------
def _linalg_error(fn):
    """numbagrad raises numbagrad.linalg.LinAlgError (a RuntimeError) with torch's message."""
    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        fn(torch)
    with pytest.raises(ng.linalg.LinAlgError) as ours:
        fn(ng)
    assert isinstance(ours.value, RuntimeError)
    assert str(ours.value) == str(theirs.value)


def test_ex_forms_report_failures_in_info():
    singular = np.ones((3, 3))
    for call in ("lib.linalg.inv_ex(x).info", "lib.linalg.cholesky_ex(x).info",
                 "lib.linalg.solve_ex(x, lib.ones(3)).info",
                 "lib.linalg.solve_ex(x, lib.ones(3)).result.shape",
                 "lib.linalg.solve_triangular(lib.zeros(2, 2), lib.ones(2, 1), upper=True).isnan()",
                 "lib.linalg.solve_triangular(lib.zeros(2, 2), lib.ones(2, 1), upper=True).abs() > 1e300",
                 "repr(lib.linalg.slogdet(lib.eye(2)))"):
        same_as_torch(lambda lib, c=call: eval(c, {"lib": lib, "x": lib.tensor(singular)}))
    _linalg_error(lambda lib: lib.linalg.inv_ex(lib.tensor(singular), check_errors=True))
    _linalg_error(lambda lib: lib.linalg.cholesky_ex(lib.tensor(singular), check_errors=True))
    _linalg_error(lambda lib: lib.linalg.solve_ex(lib.tensor(singular), lib.ones(3, 1).double(),
                                                  check_errors=True))


def test_linalg_errors():
    singular = np.ones((3, 3))
    batch = np.stack([np.eye(3), singular])
    _linalg_error(lambda lib: lib.linalg.inv(lib.tensor(singular)))
    _linalg_error(lambda lib: lib.linalg.inv(lib.tensor(batch)))
    _linalg_error(lambda lib: lib.linalg.solve(lib.tensor(singular), lib.tensor(VEC)))
    _linalg_error(lambda lib: lib.linalg.cholesky(lib.tensor(singular)))
    _linalg_error(lambda lib: lib.linalg.cholesky(lib.tensor(batch)))
    _linalg_error(lambda lib: lib.linalg.cholesky(-lib.eye(2)))


@pytest.mark.parametrize("call", [
    "lib.linalg.inv(lib.ones(2, 3))", "lib.linalg.inv(lib.ones(3))",
    "lib.linalg.inv(lib.ones(3, 3, dtype=lib.int64))", "lib.linalg.det(lib.ones(2, 3))",
    "lib.linalg.slogdet(lib.ones(2, 3))", "lib.linalg.solve(lib.eye(3), lib.ones(4))",
    "lib.linalg.solve(lib.eye(3, dtype=lib.float64), lib.ones(3))",
    "lib.linalg.cholesky(lib.ones(2, 3))", "lib.linalg.eigh(lib.ones(2, 3))",
    "lib.linalg.svd(lib.ones(3))", "lib.linalg.qr(lib.ones(3))",
    "lib.linalg.qr(lib.ones(2, 3), mode='x')", "lib.linalg.matrix_exp(lib.ones(2, 3))",
    "lib.linalg.pinv(lib.ones(3))", "lib.linalg.matrix_norm(lib.ones(3))",
    "lib.linalg.matrix_norm(lib.ones(3, 3), 3)", "lib.linalg.norm(lib.ones(2, 2, 2), 2)",
    "lib.linalg.cross(lib.ones(2, 3), lib.ones(3))", "lib.linalg.cross(lib.ones(2), lib.ones(2))",
    "lib.vdot(lib.ones(2, 2), lib.ones(2, 2))", "lib.einsum('ij,jk', lib.ones(2, 3))",
    "lib.einsum('ijk,jk', lib.ones(2, 3), lib.ones(3, 2))",
    "lib.tensordot(lib.ones(2, 3), lib.ones(2, 3), dims=1)",
    "lib.cdist(lib.ones(2, 3), lib.ones(2, 4))",
    "lib.baddbmm(lib.ones(2, 2), lib.ones(2, 2, 3), lib.ones(3, 3, 2))",
    "lib.linalg.multi_dot([lib.ones(2, 3)])",
    "lib.linalg.vector_norm(lib.ones(3), 'fro')",
    "lib.linalg.lstsq(lib.ones(3, 2), lib.ones(3, 1).double())",
    "lib.addbmm(lib.ones(3, 3), lib.ones(2, 3, 2), lib.ones(3, 2, 3))",
    "lib.addbmm(lib.ones(3, 3), lib.ones(2, 3, 2), lib.ones(2, 3, 3))",
    "lib.addbmm(lib.ones(3, 5), lib.ones(2, 3, 2), lib.ones(2, 2, 3))",
    "lib.addmv(lib.ones(4), lib.ones(3, 2), lib.ones(2))",
    "lib.addmv(lib.ones(2, 3), lib.ones(3, 2), lib.ones(2))",
    "lib.baddbmm(lib.ones(2, 3, 5), lib.ones(2, 3, 2), lib.ones(2, 2, 3))",
    "lib.einsum('ij,jk->ik', lib.ones(2, 3), lib.ones(2, 3))",
    "lib.logdet(lib.ones(2, 3))",
])
def test_errors_as_torch(call):
    same_as_torch(lambda lib: eval(call, {"lib": lib}))


# ---- dtypes, named tuples, methods, batches ---------------------------------------------------
def test_float32_results_stay_float32():
    for call in ("lib.linalg.inv(x)", "lib.linalg.det(x)", "lib.linalg.slogdet(x)",
                 "lib.linalg.eigh(x @ x.mT)", "lib.linalg.svd(x)", "lib.linalg.qr(x)",
                 "lib.linalg.matrix_exp(x)", "lib.cdist(x, x)", "lib.linalg.lstsq(x, x)",
                 "lib.linalg.svdvals(x)", "lib.vdot(x[0], x[1])"):
        same_as_torch(lambda lib, c=call: eval(c, {"lib": lib,
                                                  "x": lib.tensor(SQ[0], dtype=lib.float32)}),
                      decimals=4)


def test_named_tuples():
    x = ng.tensor(SQ[0])
    for result, fields, name in (
            (ng.linalg.slogdet(x), ("sign", "logabsdet"), "linalg_slogdet"),
            (ng.slogdet(x), ("sign", "logabsdet"), "slogdet"),
            (ng.linalg.qr(x), ("Q", "R"), "linalg_qr"),
            (ng.linalg.svd(x), ("U", "S", "Vh"), "linalg_svd"),
            (ng.svd(x), ("U", "S", "V"), "svd"),
            (ng.linalg.eigh(x), ("eigenvalues", "eigenvectors"), "linalg_eigh"),
            (ng.linalg.lstsq(x, x), ("solution", "residuals", "rank", "singular_values"),
             "linalg_lstsq")):
        assert result._fields == fields and type(result).__name__ == name


def test_lstsq_drivers_and_rank():
    a, b = TALL[0], TALL[0, :, :2].copy()
    for driver in ("gelsy", "gelsd", "gelss", "gels"):
        same_as_torch(lambda lib, d=driver: tuple(lib.linalg.lstsq(lib.tensor(a), lib.tensor(b),
                                                                   driver=d)), decimals=8)
    same_as_torch(lambda lib: lib.linalg.matrix_rank(lib.tensor(np.ones((2, 3, 3)))))
    same_as_torch(lambda lib: lib.linalg.matrix_rank(lib.tensor(SQ), hermitian=True))


def test_tensor_methods():
    for call in ("x.det()", "x.inverse()", "x.slogdet()", "(x @ x.mT).logdet()",
                 "(x @ x.mT + 3 * lib.eye(3, dtype=lib.float64)).cholesky()", "x.matrix_exp()",
                 "x.cross(x * x + 1, dim=1)",
                 "x.kron(x)", "x.inner(x)", "x[0].vdot(x[1])", "x[0].addmv(x, x[1])",
                 "x.addbmm(x[None], x[None])", "x[None].baddbmm(x[None], x[None])",
                 "x.svd()", "x.qr()", "x.matrix_power(2)", "x.pinverse()"):
        same_as_torch(lambda lib, c=call: eval(c, {"lib": lib, "x": lib.tensor(SQ[0])}),
                      decimals=9)


def test_empty_and_batched_shapes():
    for call in ("lib.linalg.inv(lib.zeros(0, 3, 3))", "lib.linalg.det(lib.zeros(0, 0))",
                 "lib.linalg.solve(lib.eye(3).expand(2, 3, 3), lib.ones(3, 1))",
                 "lib.linalg.svdvals(lib.zeros(2, 0, 3))"):
        same_as_torch(lambda lib, c=call: eval(c, {"lib": lib}))


def test_slogdet_of_a_singular_matrix_has_an_infinite_gradient():
    singular = np.array([[1.0, 2], [2, 4]])
    for lib in (ng, torch):
        x = lib.tensor(singular, requires_grad=True)
        y = lib.linalg.slogdet(x).logabsdet
        assert y.item() == -np.inf
        y.backward()
        assert np.isinf(x.grad.numpy()).all()


def test_saved_input_changed_in_place_is_refused():
    for lib in (ng, torch):
        x = lib.tensor(SQ[0], requires_grad=True)
        y = lib.linalg.det(x)
        with lib.no_grad():
            x.mul_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
        # inv's derivative reads its output only: changing the input is harmless
        x = lib.tensor(SQ[0], requires_grad=True)
        y = lib.linalg.inv(x)
        with lib.no_grad():
            x.mul_(2.0)
        y.sum().backward()
