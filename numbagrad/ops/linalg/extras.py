"""torch.linalg's triangular solve, the ``*_ex`` forms (inv_ex, cholesky_ex, solve_ex), which
report a failure in an ``info`` tensor instead of raising, and torch's composites (diagonal,
vander, tensorinv, tensorsolve, cond) written with recorded ops as torch writes them."""

import math

import numpy as np

from ...engine.record import shape_error_broadcast
from ..elementwise.math_api import nan_to_num
from ..elementwise.pointwise import where
from ..scan.records import cumprod
from ..shape.api import movedim
from ..shape.gather import diagonal as _diagonal
from ..shape.gather import tril
from ..shape.join import cat
from ..shape.movement import narrow, reshape
from ..vjp import unbroadcast
from .common import check_square, const, lapack_info, return_type
from .decomp import svdvals
from .node import LinAlgError, record_node
from .norms import matrix_norm
from .solvers import cholesky_named, inv_named, is_vector_rhs, solve_named

InvExResult = return_type("linalg_inv_ex", ["inverse", "info"])
CholeskyExResult = return_type("linalg_cholesky_ex", ["L", "info"])
SolveExResult = return_type("linalg_solve_ex", ["result", "info"])


def _triangle(n, upper, unit, dtype):
    mask = np.triu(np.ones((n, n))) if upper else np.tril(np.ones((n, n)))
    if unit:
        mask -= np.eye(n)
    return mask.astype(dtype)


def solve_triangular(input, B, *, upper, left=True, unitriangular=False):  # noqa: N803 - torch's
    """The solution ``X`` of ``A @ X = B`` (or ``X @ A = B``) for triangular ``A``.

    Same as ``torch.linalg.solve_triangular``.
    """
    check_square(input, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    if input.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {input.dtype.scalar_name} and B of type "
                           f"{B.dtype.scalar_name} instead")
    a, b = input._array(), B._array()
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        shape_b = f"{b.shape[-2]}x{b.shape[-1]}"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and {shape_b})")
    err = shape_error_broadcast(a.shape[:-2], b.shape[:-2])
    if err is not None:
        raise err
    # only the triangle is read (and a unit diagonal assumed with unitriangular)
    tri = a * _triangle(n, upper, unitriangular, a.dtype)
    if unitriangular:
        tri = tri + np.eye(n, dtype=a.dtype)
    value = _triangular_value(tri, b, upper, left)
    return record_node("LinalgSolveTriangularBackward0", [value], [input, B],
                       _solve_triangular_rule, options=(upper, left, unitriangular))[0]


def _triangular_value(tri, b, upper, left):
    from scipy.linalg import solve_triangular as scipy_solve  # lazily: SciPy's import cost

    if not left:  # X T = B: T^T X^T = B^T
        return np.swapaxes(_triangular_value(np.swapaxes(tri, -1, -2), np.swapaxes(b, -1, -2),
                                             not upper, True), -1, -2).copy()
    batch = np.broadcast_shapes(tri.shape[:-2], b.shape[:-2])
    tb = np.broadcast_to(tri, batch + tri.shape[-2:]).reshape(-1, *tri.shape[-2:])
    bb = np.broadcast_to(b, batch + b.shape[-2:]).reshape(-1, *b.shape[-2:])
    out = np.empty(bb.shape, b.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(tb.shape[0]):
            if bb[k].size:
                out[k] = _substitute(tb[k], bb[k], upper, scipy_solve)
    return out.reshape(batch + b.shape[-2:])


def _substitute(t, b, upper, scipy_solve):
    if np.all(np.diagonal(t) != 0):
        return scipy_solve(t, b, lower=not upper, check_finite=False)
    # a zero on the diagonal: the substitution's own infinities and NaNs (as torch's)
    n = t.shape[0]
    x = np.zeros(b.shape, b.dtype)
    rows = range(n - 1, -1, -1) if upper else range(n)
    for i in rows:
        rest = t[i, i + 1:] @ x[i + 1:] if upper else t[i, :i] @ x[:i]
        x[i] = (b[i] - rest) / t[i, i]
    return x


def _solve_triangular_rule(ctx, grads):
    (g,) = grads
    upper, left, unit = ctx.options
    a, b = ctx.inputs
    x = ctx.outputs[0]
    # left: X = T^-1 B, gB = T^-T gX, gT = -gB X^T; right: X = B T^-1, gB = gX T^-T,
    # gT = -X^T gB; gT kept to the triangle that was read
    g_b = solve_triangular(a.mT, g, upper=not upper, left=left, unitriangular=unit)
    g_t = -(g_b @ x.mT) if left else -(x.mT @ g_b)
    g_t = g_t * const(_triangle(a.shape[-1], upper, unit, a._data.dtype), a._data.dtype)
    return [unbroadcast(g_t, a.shape), unbroadcast(g_b, b.shape)]


# ---- the *_ex forms: info instead of an error ------------------------------------------------
def _info(value_shape, infos):
    return const(np.array(infos, np.int32).reshape(value_shape), np.int32)


def _no_errors(m):
    return _info(m.shape[:-2], np.zeros(m.shape[:-2], np.int32))


def inv_ex(A, *, check_errors=False):  # noqa: N803 - torch's keyword name
    """The inverse of (each) square matrix and an ``info`` code, as ``(inverse, info)``.

    Same as ``torch.linalg.inv_ex``.
    """
    check_square(A, "linalg.inv_ex")
    try:
        return InvExResult(inv_named(A, "linalg.inv_ex"), _no_errors(A))
    except LinAlgError:
        if check_errors:
            raise
    a = A._array()
    infos = [max(i, 0) for i in lapack_info(a, "getrf")]
    return InvExResult(const(_nan_where_failed(a, infos, np.linalg.inv), a.dtype),
                       _info(a.shape[:-2], infos))


def _nan_where_failed(a, infos, fn):
    """``fn`` of each matrix of ``a``, NaN for the ones that failed (torch's are garbage)."""
    mats = a.reshape(-1, *a.shape[-2:])
    out = np.full(mats.shape, np.nan, a.dtype)
    for k, info in enumerate(infos):
        if info == 0:
            out[k] = fn(mats[k])
    return out.reshape(a.shape)


def cholesky_ex(input, *, upper=False, check_errors=False):  # noqa: N803 - torch's keyword names
    """The Cholesky factor of (each) positive-definite matrix and an ``info`` code: ``(L, info)``.

    Same as ``torch.linalg.cholesky_ex``.
    """
    check_square(input, "linalg.cholesky_ex")
    try:
        return CholeskyExResult(cholesky_named(input, upper, "linalg.cholesky_ex"),
                                _no_errors(input))
    except LinAlgError:
        if check_errors:
            raise
    a = input._array()
    infos = [max(i, 0) for i in lapack_info(a, "potrf")]
    low = _nan_where_failed(a, infos, np.linalg.cholesky)
    value = np.swapaxes(low, -1, -2).copy() if upper else low
    return CholeskyExResult(const(value, a.dtype), _info(a.shape[:-2], infos))


def solve_ex(A, B, *, left=True, check_errors=False):  # noqa: N803 - torch's keyword names
    """``solve``'s solution and an ``info`` code, as ``(result, info)``.

    Same as ``torch.linalg.solve_ex``.
    """
    try:
        result = solve_named(A, B, left, "linalg.solve_ex")
    except LinAlgError:
        if check_errors:
            raise
        a = A._array()
        infos = [max(i, 0) for i in lapack_info(a, "getrf")]
        if is_vector_rhs(A, B):
            shape = np.broadcast_shapes(a.shape[:-2], B.shape[:-1]) + (a.shape[-1],)
        else:
            shape = np.broadcast_shapes(a.shape[:-2], B.shape[:-2]) + tuple(B.shape[-2:])
        value = np.full(shape, np.nan, a.dtype)
        return SolveExResult(const(value, a.dtype), _info(a.shape[:-2], infos))
    return SolveExResult(result, _no_errors(A))


# ---- composites: torch's own compositions of differentiable ops ------------------------------
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):  # noqa: N803 - torch's keyword name
    """The diagonals of (each) matrix: torch.diagonal with dims -2, -1 by default.

    Same as ``torch.linalg.diagonal``.

    Args:
        A: a tensor of at least 2 dimensions.
        offset: which diagonal: 0 the main one, positive above it, negative below
            (default 0).
        dim1: the first dimension of the matrices (default -2).
        dim2: the second dimension of the matrices (default -1).

    Returns:
        A view of ``A`` without ``dim1`` and ``dim2``, the diagonal as its last dimension.
    """
    return _diagonal(A, offset, dim1, dim2)


def vander(x, *, N=None):  # noqa: N803 - torch's keyword name
    """The Vandermonde matrix with columns x**0, x**1, ..., x**(N-1).

    Same as ``torch.linalg.vander`` (a cumprod after a column of ones, as torch builds it).
    """
    if x.dtype.scalar_name == "Bool":
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, "
                           "but got Bool")
    x_ = x.unsqueeze(-1) if x.ndim == 0 else x
    n = x_.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    return increasing_powers(x_, n)


def increasing_powers(x, n):
    """Columns ``x ** 0``, ..., ``x ** (n - 1)`` (``n >= 1``) for each element of ``x``, built
    as torch builds both its Vandermonde matrices: a column of ones, then a cumprod of ``x``."""
    powers = cumprod(x.unsqueeze(-1).expand(*x.shape, n - 1), -1)
    ones = const(np.ones((*x.shape, 1)), powers._data.dtype)
    return cat([ones, powers], -1)


def tensorinv(A, ind=2):  # noqa: N803 - torch's keyword name
    """The inverse of ``A`` seen as a matrix of its first ``ind`` dims by the rest.

    Same as ``torch.linalg.tensorinv``.
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    head, tail = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(head), math.prod(tail)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    # torch words a singular input as inv's own error
    return reshape(inv_named(reshape(A, (rows, cols)), "inv"), tail + head)


def tensorsolve(A, B, dims=None):  # noqa: N803 - torch's keyword names
    """X with ``tensordot(A, X, X.ndim) == B``; ``dims``: A's dims moved to the end first.

    Same as ``torch.linalg.tensorsolve``.
    """
    a = A
    if dims is not None:
        dims = tuple(dims)
        a = movedim(a, dims, tuple(range(A.ndim - len(dims), A.ndim)))
    result_shape = tuple(a.shape[B.ndim:])
    n, nb = math.prod(result_shape), math.prod(B.shape)
    if n != nb:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]"
                           f") == prod(self.shape[:other.ndim]), but got {n} != {nb}")
    x = solve_named(reshape(a, (n, n)), reshape(B, (-1,)), True, "linalg.solve")
    return reshape(x, result_shape)


def cond(input, p=None):  # noqa: A002 - torch's keyword name (its schema's, not its docs' A)
    """The condition number of (each) matrix for the norm ``p`` (None: the 2-norm).

    Same as ``torch.linalg.cond``.
    """
    A = input  # noqa: N806 - the docs' name
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord_ = 2 if p is None else p
    if isinstance(ord_, str):
        if ord_ not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {ord_}")
        check_square(A, f"linalg.cond(ord={ord_})")
    else:
        if ord_ not in (1, -1, 2, -2, math.inf, -math.inf):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {_ord_text(ord_)}")
        if abs(ord_) != 2:
            check_square(A, f"linalg.cond(ord={_ord_text(ord_)})")
    if A.numel() == 0:  # NumPy leaves it undefined; torch returns zeros
        return const(np.zeros(A.shape[:-2]), A._data.dtype)
    if ord_ in (2, -2):
        s = svdvals(A)
        s_max, s_min = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (s_min / s_max if ord_ == -2 else s_max / s_min).squeeze(-1)
    if ord_ == "nuc":  # from the singular values: matrix_norm("nuc") refuses infinities
        s = svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    inverse, info = inv_ex(A)
    failed = info._array() > 0
    if failed.any():  # torch fills a singular matrix's inverse with inf
        mask = const(np.broadcast_to(failed[..., None, None], A.shape), np.bool_)
        inverse = where(mask, const(np.inf, A._data.dtype), inverse)
    result = matrix_norm(A, ord_) * matrix_norm(inverse, ord_)
    # 0 * inf: NaN, which torch turns to inf (NumPy's convention)
    return nan_to_num(result, math.inf, math.inf, -math.inf)


def _ord_text(p):
    """An ord as torch's message shows it (C++'s std::to_string of an int or a double)."""
    if isinstance(p, float):
        return str(p) if math.isinf(p) or math.isnan(p) else f"{p:.6f}"
    return str(p)


# ---- Householder products ---------------------------------------------------------------------
def householder_product(input, tau):  # noqa: A002 - torch's keyword names (its schema's)
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with v_i A's column i below
    the diagonal after a 1 (LAPACK's orgqr).

    Same as ``torch.linalg.householder_product``.
    """
    A = input  # noqa: N806 - the docs' name
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    rows, cols = A.shape[-2:]
    if rows < cols:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {A.ndim}")
    k = tau.shape[-1] if tau.ndim else 0
    if cols < k:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype.scalar_name} does not match input "
                           f"dtype {A.dtype.scalar_name}")
    if not A.dtype.is_floating_point:
        raise NotImplementedError(f'"orgqr_cpu" not implemented for \'{A.dtype.scalar_name}\'')
    value = _orgqr(A._array(), tau._array())
    return record_node("LinalgHouseholderProductBackward0", [value], [A, tau],
                       _householder_rule)[0]


def _orgqr(a, tau):
    from scipy.linalg import lapack  # lazily: SciPy's import cost

    rows, cols = a.shape[-2:]
    k = tau.shape[-1]
    out = np.broadcast_to(np.eye(rows, cols, dtype=a.dtype), a.shape).copy()
    if not (k and a.size):
        return out
    orgqr = lapack.get_lapack_funcs("orgqr", (a,))
    flat_a, flat_t, flat_o = a.reshape(-1, rows, cols), tau.reshape(-1, k), out.reshape(-1, rows,
                                                                                       cols)
    for i in range(flat_a.shape[0]):
        # orgqr reads as many reflectors as tau has: zero taus past k leave them identities
        t = np.zeros(cols, a.dtype)
        t[:k] = flat_t[i]
        flat_o[i] = orgqr(flat_a[i], t)[0]
    return out


def _householder_rule(ctx, grads):
    (g,) = grads
    a, tau = ctx.inputs
    rows, cols = a.shape[-2:]
    k = tau.shape[-1]
    dt = a._data.dtype
    if k == 0:
        return [_zeros_of(a), _zeros_of(tau)]
    vs = tril(narrow(a, -1, 0, k), -1) + const(np.eye(rows, k), dt)
    # the forward again, X_i = H_i X_{i+1} from X_k = I, keeping each X_{i+1}
    xs = [const(np.broadcast_to(np.eye(rows, cols), a.shape), dt)]
    for i in range(k - 1, 0, -1):
        v, t = narrow(vs, -1, i, 1), narrow(tau, -1, i, 1).unsqueeze(-1)
        xs.append(xs[-1] - t * (v @ (v.mT @ xs[-1])))
    xs.reverse()  # xs[i] = X_{i+1}
    g_vs, g_taus = [], []
    for i in range(k):
        v, t, x = narrow(vs, -1, i, 1), narrow(tau, -1, i, 1).unsqueeze(-1), xs[i]
        w, vg = v.mT @ x, v.mT @ g
        # H X = X - t v (v^T X): gt = -<v^T G, v^T X>, gv = -t (G X^T v + X G^T v), gX = H G
        g_taus.append(-(vg * w).sum(-1))
        g_vs.append(-t * (g @ w.mT + x @ vg.mT))
        g = g - t * (v @ vg)
    g_a = tril(cat(g_vs, -1), -1)
    if k < cols:
        g_a = cat([g_a, const(np.zeros((*a.shape[:-1], cols - k)), dt)], -1)
    return [g_a, cat(g_taus, -1)]


def _zeros_of(t):
    return const(np.zeros(t.shape), t._data.dtype)
