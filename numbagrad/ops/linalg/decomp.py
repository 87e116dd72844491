"""Decompositions (qr, svd, eigh) and what is built on them (svdvals, eigvalsh, pinv, lstsq,
matrix_rank, matrix_exp): values from NumPy/SciPy, derivatives as torch's formulas written with
numbagrad ops (linalg_node), so that second derivatives record too."""

import numpy as np

from ..shape.join import cat
from ..shape.movement import narrow
from ..vjp import unbroadcast
from .common import check_float, check_matrix, check_square, const, diag_embed, return_type
from .node import record_node
from .solvers import solve

QRResult = return_type("qr", ["Q", "R"])
LinalgQRResult = return_type("linalg_qr", ["Q", "R"])
SVDResult = return_type("svd", ["U", "S", "V"])
LinalgSVDResult = return_type("linalg_svd", ["U", "S", "Vh"])
EighResult = return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
LstsqResult = return_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def _zeros_like(t):
    return const(np.zeros(t.shape), t._data.dtype)


def _tril(x, k=0):
    n, m = x.shape[-2:]
    return x * const(np.tri(n, m, k), x._data.dtype)


# ---- QR ---------------------------------------------------------------------------------------
def qr(A, mode="reduced"):  # noqa: N803 - torch's keyword name
    """The QR decomposition of (each) matrix, as ``(Q, R)``.

    Same as ``torch.linalg.qr``.
    """
    return _qr(A, mode, LinalgQRResult)


def qr_deprecated(input, some=True):  # noqa: A002 - torch's keyword name
    """torch.qr: ``some`` chooses the reduced or the complete factorization."""
    return _qr(input, "reduced" if some else "complete", QRResult)


def _qr(m, mode, result):
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    check_matrix(m, "linalg.qr")
    a = m._array()
    q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = np.zeros((0,), a.dtype)
    q, r = record_node("LinalgQrBackward0", [q, r], [m], _qr_rule, options=mode)
    return result(q, r)


def _qr_rule(ctx, grads):
    mode = ctx.options
    q, r = ctx.outputs
    rows, cols = q.shape[-2] if q.ndim >= 2 else 0, r.shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    if mode == "complete" and rows > cols:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    gq = grads[0] if grads[0] is not None else _zeros_like(q)
    gr = grads[1] if grads[1] is not None else _zeros_like(r)
    if rows >= cols:
        return [_qr_square_backward(gq, gr, q, r)]
    # A = Q [R1 | R2]: the first rows columns by the square rule, the rest is Q R2
    x_rest = narrow(ctx.inputs[0], -1, rows, cols - rows)
    r1, gr1 = narrow(r, -1, 0, rows), narrow(gr, -1, 0, rows)
    gr2 = narrow(gr, -1, rows, cols - rows)
    g_x = _qr_square_backward(gq + x_rest @ gr2.mT, gr1, q, r1)
    return [cat([g_x, q @ gr2], -1)]


def _qr_square_backward(gq, gr, q, r):
    """A = QR with Q (m, n) and R (n, n): gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q,
    copyltu(M) its lower triangle mirrored up."""
    m = r @ gr.mT - gq.mT @ q
    low = _tril(m, -1)
    sym = low + low.mT + m * const(np.eye(m.shape[-1]), m._data.dtype)
    b = gq + q @ sym
    return solve(r, b.mT).mT


# ---- SVD --------------------------------------------------------------------------------------
def svd(A, full_matrices=True, *, driver=None):  # noqa: N803 - torch's keyword name
    """The singular value decomposition of (each) matrix, as ``(U, S, Vh)``.

    Same as ``torch.linalg.svd``.
    """
    check_matrix(A, "linalg.svd")
    u, s, vh = _svd_nodes(A, full_matrices)
    return LinalgSVDResult(u, s, vh)


def svd_deprecated(input, some=True, compute_uv=True):  # noqa: A002 - torch's keyword name
    """torch.svd: (U, S, V) with V = Vh^T (a transpose, as torch's); without ``compute_uv``,
    U and V are zero matrices of shapes (m, m) and (n, n)."""
    check_matrix(input, "linalg.svd")
    if not compute_uv:
        s = svdvals(input)
        dt = input._data.dtype
        rows, cols = input.shape[-2:]
        return SVDResult(const(np.zeros((*input.shape[:-2], rows, rows)), dt), s,
                         const(np.zeros((*input.shape[:-2], cols, cols)), dt))
    u, s, vh = _svd_nodes(input, not some)
    return SVDResult(u, s, vh.mT)


def svdvals(A, *, driver=None):  # noqa: N803 - torch's keyword name
    """The singular values of (each) matrix, in descending order.

    Same as ``torch.linalg.svdvals``.
    """
    check_matrix(A, "linalg.svdvals")
    return _svd_nodes(A, False)[1]


def _svd_nodes(m, full_matrices):
    a = m._array()
    if a.size:
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    else:
        rows, cols = a.shape[-2:]
        k = min(rows, cols)
        batch = a.shape[:-2]
        u = np.zeros((*batch, rows, rows if full_matrices else k), a.dtype)
        s = np.zeros((*batch, k), a.dtype)
        vh = np.zeros((*batch, cols if full_matrices else k, cols), a.dtype)
        u[..., :, :] = np.eye(*u.shape[-2:])
        vh[..., :, :] = np.eye(*vh.shape[-2:])
    return record_node("LinalgSvdBackward0", [u, s, vh], [m], _svd_rule,
                       options=full_matrices)


def _svd_rule(ctx, grads):
    gu, gs, gvh = grads
    u, s, vh = ctx.outputs
    rows, cols = u.shape[-2], vh.shape[-1]
    k = s.shape[-1]
    if ctx.options:  # full_matrices: only the first k singular vectors are determined
        u, vh = narrow(u, -1, 0, k), narrow(vh, -2, 0, k)
        gu = None if gu is None else narrow(gu, -1, 0, k)
        gvh = None if gvh is None else narrow(gvh, -2, 0, k)
    if gu is None and gvh is None:
        if gs is None:
            return [None]
        return [(u * gs.unsqueeze(-2)) @ vh]
    s_row, s_col = s.unsqueeze(-2), s.unsqueeze(-1)
    s2 = s * s
    # E_ij = s_j^2 - s_i^2 off the diagonal, 1 on it (inf at repeated values, as torch)
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + const(np.eye(k), s._data.dtype)
    v, gv = vh.mT, None if gvh is None else gvh.mT
    uhgu = None if gu is None else u.mT @ gu
    vhgv = None if gv is None else vh @ gv
    if uhgu is not None:
        uhgu = uhgu - uhgu.mT
    if vhgv is not None:
        vhgv = vhgv - vhgv.mT
    if uhgu is not None and vhgv is not None:
        core = (uhgu * s_row + s_col * vhgv) / e
    elif uhgu is not None:
        core = (uhgu / e) * s_row
    else:
        core = s_col * (vhgv / e)
    if gs is not None:
        core = core + diag_embed(gs)
    if rows > cols and gu is not None:
        g_a = u @ core
        gu_sinv = gu / s_row
        g_a = (g_a + gu_sinv - u @ (u.mT @ gu_sinv)) @ vh
    elif rows < cols and gv is not None:
        g_a = core @ vh
        gv_sinv = gv / s_row
        g_a = u @ (g_a + gv_sinv.mT - (gv_sinv.mT @ v) @ vh)
    else:
        g_a = u @ (core @ vh)
    return [g_a]


# ---- symmetric eigendecomposition ------------------------------------------------------------
def eigh(input, UPLO="L"):  # noqa: N803 - torch's keyword names
    """The eigenvalues (ascending) and eigenvectors of (each) real symmetric matrix.

    Same as ``torch.linalg.eigh``.
    """
    check_square(input, "linalg.eigh")
    vals, vecs = _eigh_nodes(input, UPLO)
    return EighResult(vals, vecs)


def eigvalsh(input, UPLO="L"):  # noqa: N803 - torch's keyword names
    """The eigenvalues, ascending, of (each) real symmetric matrix.

    Same as ``torch.linalg.eigvalsh``.
    """
    check_square(input, "linalg.eigvalsh")
    return _eigh_nodes(input, UPLO)[0]


def _eigh_nodes(m, uplo):
    if uplo not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    vals, vecs = np.linalg.eigh(m._array(), UPLO=uplo)
    return record_node("LinalgEighBackward0", [vals, vecs], [m], _eigh_rule)


def _eigh_rule(ctx, grads):
    gl, gv = grads
    vals, vecs = ctx.outputs
    n = vals.shape[-1]
    if gv is None:
        if gl is None:
            return [None]
        return [(vecs * gl.unsqueeze(-2)) @ vecs.mT]
    eye = const(np.eye(n), vals._data.dtype)
    # E_ij = l_j - l_i off the diagonal, 1 on it (inf at repeated eigenvalues, as torch)
    e = vals.unsqueeze(-2) - vals.unsqueeze(-1) + eye
    # the skew part of V^T gV: torch's gradient is symmetric (A is taken as symmetric)
    vhgv = vecs.mT @ gv
    inner = (vhgv - vhgv.mT) * 0.5 / e * (1.0 - eye)
    if gl is not None:
        inner = inner + diag_embed(gl)
    return [vecs @ inner @ vecs.mT]


# ---- pseudo-inverse and least squares ---------------------------------------------------------
def pinv(input, *, atol=None, rtol=None, hermitian=False, rcond=None):  # noqa: N803
    """The Moore-Penrose pseudoinverse of (each) matrix.

    Same as ``torch.linalg.pinv``.
    """
    if input.ndim < 2 or not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.pinv({input.dtype.scalar_name}{{{list(input.shape)}}}): "
                           "expected a tensor with 2 or more dimensions of float, double, "
                           "cfloat or cdouble types")
    a = input._array()
    if rcond is not None:
        rtol = rcond
    value = _pinv_value(a, atol, rtol, hermitian)
    return record_node("LinalgPinvBackward0", [value], [input], _pinv_rule)[0]


def _pinv_value(a, atol, rtol, hermitian):
    if not a.size:
        return np.zeros((*a.shape[:-2], a.shape[-1], a.shape[-2]), a.dtype)
    s = np.linalg.svd(a, compute_uv=False) if not hermitian else \
        np.abs(np.linalg.eigvalsh(a))
    smax = s.max(-1, keepdims=True) if s.size else s
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else \
            float(np.finfo(a.dtype).eps) * max(a.shape[-2:])
    tol = np.maximum(atol or 0.0, rtol * smax)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    keep = s > tol
    s_inv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0).astype(a.dtype)
    return np.swapaxes(vh, -1, -2) @ (s_inv[..., :, None] * np.swapaxes(u, -1, -2))


def pinv_vjp(a, p, g):
    """The gradient of A for X = pinv(A) and its gradient G (Golub and Pereyra's derivative):
    -X^T G X^T + (I - A X) G^T X X^T + X^T X G^T (I - X A)."""
    rows, cols = a.shape[-2:]
    dt = a._data.dtype
    pt = p.mT
    first = -(pt @ g @ pt)
    second = (const(np.eye(rows), dt) - a @ p) @ (g.mT @ (p @ pt))
    third = ((pt @ p) @ g.mT) @ (const(np.eye(cols), dt) - p @ a)
    return first + second + third


def _pinv_rule(ctx, grads):
    (g,) = grads
    return [pinv_vjp(ctx.inputs[0], ctx.outputs[0], g)]


def pinverse(input, rcond=1e-15):  # noqa: A002 - torch's keyword name
    """torch.pinverse: linalg.pinv with a relative tolerance ``rcond``."""
    return pinv(input, rtol=rcond)


def lstsq(input, b, rcond=None, *, driver=None):
    """The least-squares solution of ``A @ X = B``, with residuals, rank and singular values.

    Same as ``torch.linalg.lstsq``.
    """
    A, B = input, b  # noqa: N806 - torch's keywords are input and b (its docs say A, B)
    check_float(A, "linalg.lstsq")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {A.dtype.scalar_name} and other's dtype "
                           f"{B.dtype.scalar_name}")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    vector = B.ndim == A.ndim - 1
    if B.ndim < 1 or (not vector and B.ndim < 2):
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size("
                           f"{-1 if vector else -2})")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    a, b = A._array(), B._array()
    bm = b[..., None] if vector else b
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    ab = np.broadcast_to(a, batch + a.shape[-2:]).reshape(-1, *a.shape[-2:])
    bb = np.broadcast_to(bm, batch + bm.shape[-2:]).reshape(-1, *bm.shape[-2:])
    rows, cols = a.shape[-2:]
    if rcond is None:
        rcond = float(np.finfo(a.dtype).eps) * max(rows, cols)
    sols, ranks, svals, res = [], [], [], []
    for am, bmat in zip(ab, bb):
        x, r, rank, sv = np.linalg.lstsq(am, bmat, rcond=rcond)
        sols.append(x)
        ranks.append(rank)
        svals.append(sv)
        res.append(r)
    sol = np.array(sols, a.dtype).reshape(batch + (cols, bm.shape[-1]))
    if vector:
        sol = sol[..., 0]
    # gels assumes full rank and reports none
    rank = np.array(ranks, np.int64).reshape(batch) if driver != "gels" else \
        np.zeros((0,), np.int64)
    svals = np.array(svals, a.dtype).reshape(batch + (min(rows, cols),)) \
        if driver in ("gelsd", "gelss") else np.zeros((0,), a.dtype)
    full = all(rk == min(rows, cols) for rk in ranks)
    if driver != "gelsy" and rows > cols and full:
        residuals = np.array(res, a.dtype).reshape(batch + (bm.shape[-1],))
        if vector:
            residuals = residuals[..., 0]
    else:
        residuals = np.zeros((0,), a.dtype)
    sol, residuals = record_node("LinalgLstsqBackward0", [sol, residuals], [A, B], _lstsq_rule,
                                 [True, False], options=vector)
    return LstsqResult(sol, residuals, const(rank, np.int64), const(svals, a.dtype))


def _lstsq_rule(ctx, grads):
    g = grads[0]
    if g is None:
        return [None, None]
    a, b = ctx.inputs
    p = pinv(a)
    gm, bm = (g.unsqueeze(-1), b.unsqueeze(-1)) if ctx.options else (g, b)
    g_b = p.mT @ gm
    g_a = pinv_vjp(a, p, gm @ bm.mT)
    if ctx.options:
        g_b = g_b.squeeze(-1)
    return [unbroadcast(g_a, a.shape), unbroadcast(g_b, b.shape)]


def matrix_rank(input, *, atol=None, rtol=None, hermitian=False, tol=None):  # noqa: N803
    """The numerical rank of (each) matrix: its singular values above the tolerance.

    Same as ``torch.linalg.matrix_rank``.
    """
    check_matrix(input, "linalg.matrix_rank")
    a = input._array()
    if tol is not None:
        atol, rtol = tol, 0.0
    if not a.size:
        return const(np.zeros(a.shape[:-2], np.int64), np.int64)
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else \
            float(np.finfo(a.dtype).eps) * max(a.shape[-2:])
    limit = np.maximum(atol or 0.0, rtol * s.max(-1, keepdims=True))
    return const((s > limit).sum(-1), np.int64)


# ---- matrix exponential -----------------------------------------------------------------------
def matrix_exp(input):
    """The matrix exponential of (each) square matrix.

    Same as ``torch.linalg.matrix_exp`` (also ``torch.matrix_exp``).

    Args:
        input: a (batch of) square matrix, (*, n, n).

    Returns:
        A tensor of ``input``'s shape.
    """
    check_square(input, "linalg.matrix_exp")
    from scipy.linalg import expm  # lazily: SciPy's import is not free

    a = input._array()
    value = expm(a) if a.size else a.copy()
    return record_node("LinalgMatrixExpBackward0", [np.asarray(value, a.dtype)], [input],
                       _matrix_exp_rule)[0]


def _matrix_exp_rule(ctx, grads):
    (g,) = grads
    a = ctx.inputs[0]
    n = a.shape[-1]
    # the Frechet derivative at A^T applied to G: the top right block of exp([[A^T, G], [0, A^T]])
    at = a.mT
    top = cat([at, g], -1)
    bottom = cat([_zeros_like(at), at], -1)
    block = matrix_exp(cat([top, bottom], -2))
    return [narrow(narrow(block, -2, 0, n), -1, n, n)]

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"svd": "several"}
