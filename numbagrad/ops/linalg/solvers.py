"""Inverses, determinants, solvers and Cholesky: values from NumPy's LAPACK, derivatives as
rules over numbagrad ops (linalg_node), with torch's grad_fn names, errors and named tuples."""

import warnings

import numpy as np

from ...core import grad_mode
from ...engine.record import shape_error_broadcast
from ..elementwise.pointwise import where
from ..vjp import unbroadcast
from .common import (
    LinAlgError,
    batch_prefix,
    check_square,
    const,
    lapack_info,
    return_type,
    singular_error,
)
from .node import record_node

SlogdetResult = return_type("slogdet", ["sign", "logabsdet"])
LinalgSlogdetResult = return_type("linalg_slogdet", ["sign", "logabsdet"])

_INV_SINGULAR = ("The diagonal element {} is zero, the inversion could not be completed "
                 "because the input matrix is singular.")


# ---- inverse ----------------------------------------------------------------------------------
def inv(A):  # noqa: N803 - torch's keyword names
    """The inverse of (each) square matrix; raises if one is singular.

    Same as ``torch.linalg.inv``.
    """
    return inv_named(A, "linalg.inv")


def inv_named(m, name):
    """linalg.inv, its errors worded as ``name``'s (inv_ex's own)."""
    check_square(m, name)
    a = m._array()
    try:
        value = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        singular_error(a, name, _INV_SINGULAR)
    return record_node("LinalgInvExBackward0", [value], [m], _inv_rule)[0]


def _inv_rule(ctx, grads):
    (g,) = grads
    yt = ctx.outputs[0].mT
    return [-(yt @ g @ yt)]


def inverse(input):
    """torch.inverse (linalg.inv under its own name in errors).

    Args:
        input: a (batch of) invertible square matrix, (*, n, n).

    Returns:
        The inverse(s), of ``input``'s shape.
    """
    return inv(input)


# ---- determinants -----------------------------------------------------------------------------
def det(A):  # noqa: N803 - torch's keyword names
    """The determinant of (each) square matrix.

    Same as ``torch.linalg.det`` (also ``torch.det``).
    """
    check_square(A, "linalg.det")
    value = np.asarray(np.linalg.det(A._array()))
    return record_node("LinalgDetBackward0", [value], [A], _det_rule)[0]


def _cofactors(a):
    """d det(A) / dA, the cofactor matrix, from the SVD A = U S Vh: det(U) det(Vh) U
    diag(prod_{j != i} s_j) Vh, finite and right at singular matrices too (as torch's)."""
    if a.size == 0:
        return np.zeros_like(a)
    u, s, vh = np.linalg.svd(a)
    alpha = np.linalg.det(u) * np.linalg.det(vh)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, -1), -1) for i in range(n)], -1)
    return alpha[..., None, None] * ((u * others[..., None, :]) @ vh)


def _det_rule(ctx, grads):
    (g,) = grads
    m = ctx.inputs[0]
    a = m._array()
    if grad_mode.state.enabled and a.size and np.all(np.linalg.det(a) != 0):
        # create_graph: det(m) m^-T written with recorded ops (differentiable again)
        cof = ctx.outputs[0].unsqueeze(-1).unsqueeze(-1) * inv(m).mT
    else:
        cof = const(_cofactors(a), a.dtype)
    return [g.unsqueeze(-1).unsqueeze(-1) * cof]


def slogdet(input):
    """The sign and the log of the absolute value of the determinant, as ``(sign, logabsdet)``.

    Same as ``torch.slogdet``.

    Args:
        input: a (batch of) square matrix, (*, n, n).

    Returns:
        A named tuple (sign, logabsdet), each of shape (*).
    """
    return _slogdet(input, "linalg.slogdet", SlogdetResult)


def linalg_slogdet(A):  # noqa: N803 - torch's keyword names
    """The sign and the log of the absolute value of the determinant, as ``(sign, logabsdet)``.

    Same as ``torch.linalg.slogdet``.
    """
    return _slogdet(A, "linalg.slogdet", LinalgSlogdetResult)


def _slogdet(m, name, result):
    check_square(m, name)
    sign, logabs = np.linalg.slogdet(m._array())
    sign, logabs = record_node("LinalgSlogdetBackward0", [np.asarray(sign), np.asarray(logabs)],
                               [m], _slogdet_rule)
    return result(sign, logabs)


def _slogdet_rule(ctx, grads):
    g = grads[1]  # the sign is piecewise constant
    if g is None:
        return [None]
    m = ctx.inputs[0]
    try:
        inv_t = inv(m).mT
    except LinAlgError:
        # a singular matrix: log|det| is -inf there and its derivative, cof(A) / det(A),
        # infinite (torch's signs come from its LU's rounding; these are the cofactors')
        a = m._array()
        with np.errstate(divide="ignore", invalid="ignore"):
            inv_t = const(_cofactors(a) / np.linalg.det(a)[..., None, None], a.dtype)
    return [g.unsqueeze(-1).unsqueeze(-1) * inv_t]


def logdet(input):
    """log det(A): NaN for a negative determinant, -inf for a singular matrix (torch's
    composite: a where over slogdet, WhereBackward0)."""
    check_square(input, "logdet")
    sign, logabs = _slogdet(input, "linalg.slogdet", SlogdetResult)
    return where(sign < 0, const(np.nan, logabs._data.dtype), logabs)


# ---- solve ------------------------------------------------------------------------------------
def is_vector_rhs(m, rhs):
    return rhs.ndim == 1 or (rhs.ndim == m.ndim - 1 and tuple(rhs.shape) == tuple(m.shape[:-1]))


def solve(A, B, *, left=True):  # noqa: N803 - torch's keyword names
    """The solution ``X`` of ``A @ X = B`` (``X @ A = B`` if not ``left``) for square ``A``.

    Same as ``torch.linalg.solve``.
    """
    return solve_named(A, B, left, "linalg.solve")


def solve_named(A, B, left, name):  # noqa: N803
    """linalg.solve, its singular error worded as ``name``'s (solve_ex's own)."""
    check_square(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {A.dtype.scalar_name} and B of type {B.dtype.scalar_name} "
                           "instead")
    vector = is_vector_rhs(A, B)
    a, b = A._array(), B._array()
    bm = b[..., None] if vector else b
    if not left:
        if vector:
            raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not "
                               "supported for left=False. In this case linalg.solve is "
                               "equivalent to B / A.squeeze(-1)")
        bm = np.swapaxes(bm, -1, -2)
    n = a.shape[-1]
    if bm.shape[-2] != n:
        shape_b = f"{bm.shape[-2]}x{bm.shape[-1]}" if left else f"{bm.shape[-1]}x{bm.shape[-2]}"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {shape_b})")
    err = shape_error_broadcast(a.shape[:-2], bm.shape[:-2])
    if err is not None:
        raise err
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    ab = np.broadcast_to(a if left else np.swapaxes(a, -1, -2), batch + a.shape[-2:])
    bb = np.broadcast_to(bm, batch + bm.shape[-2:])
    try:
        x = np.linalg.solve(ab, bb) if ab.size and bb.size else np.zeros(bb.shape, a.dtype)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"torch.{name}: The solver failed because the input matrix is "
                          "singular.") from None
    if not left:
        x = np.swapaxes(x, -1, -2)
    if vector:
        x = x[..., 0]
    return record_node("LinalgSolveExBackward0", [np.ascontiguousarray(x)], [A, B], _solve_rule,
                       options=(left, vector))[0]


def _solve_rule(ctx, grads):
    (g,) = grads
    left, vector = ctx.options
    m, rhs = ctx.inputs
    x = ctx.outputs[0]
    # left: x = m^-1 rhs, g_rhs = m^-T gX, g_m = -g_rhs x^T; right: x = rhs m^-1, g_rhs = gX m^-T,
    # g_m = -x^T g_rhs
    g_rhs = solve(m.mT, g, left=left)
    if vector:
        g_m = -(g_rhs.unsqueeze(-1) * x.unsqueeze(-2))
    else:
        g_m = -(g_rhs @ x.mT) if left else -(x.mT @ g_rhs)
    return [unbroadcast(g_m, m.shape), unbroadcast(g_rhs, rhs.shape)]


# ---- Cholesky ---------------------------------------------------------------------------------
def cholesky(input, upper=False):  # noqa: N803 - torch's keyword names
    """torch.linalg.cholesky: the lower factor L of A = L L^T (read from A's lower triangle);
    ``upper``: its transpose."""
    return _cholesky(input, upper, "LinalgCholeskyExBackward0")


def cholesky_named(m, upper, name):
    """linalg.cholesky, its errors worded as ``name``'s (cholesky_ex's own)."""
    return _cholesky(m, upper, "LinalgCholeskyExBackward0", name)


def cholesky_deprecated(input, upper=False):  # noqa: N803 - torch's keyword names
    """torch.cholesky (deprecated in torch, which warns): its own grad_fn name."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=2)
    return _cholesky(input, upper, "CholeskyBackward0")


def _cholesky(m, upper, node_name, name="linalg.cholesky"):
    check_square(m, name)
    a = m._array()
    try:
        low = np.linalg.cholesky(a) if a.size else a.copy()
    except np.linalg.LinAlgError:
        for k, info in enumerate(lapack_info(a, "potrf")):
            if info > 0:
                raise LinAlgError(
                    f"{name}: {batch_prefix(a.shape, k)}The factorization could not be "
                    f"completed because the input is not positive-definite (the leading minor "
                    f"of order {info} is not positive-definite).") from None
        raise
    value = np.ascontiguousarray(np.swapaxes(low, -1, -2)) if upper else low
    return record_node(node_name, [value], [m], _cholesky_rule, options=upper)[0]


def _cholesky_rule(ctx, grads):
    (g,) = grads
    low = ctx.outputs[0]
    if ctx.options:  # upper: U = low^T
        low, g = low.mT, g.mT
    n = low.shape[-1]
    dt = low._data.dtype
    # g_a = sym(low^-T Phi(low^T gL) low^-1), Phi: the lower triangle with the diagonal halved
    phi = (low.mT @ g) * const(np.tril(np.ones((n, n))) - 0.5 * np.eye(n), dt)
    low_inv = inv(low)
    g_a = low_inv.mT @ phi @ low_inv
    return [(g_a + g_a.mT) * 0.5]


def cholesky_solve(input, input2, upper=False):  # noqa: A002 - torch's keyword names
    """X with (L L^T) X = B (``upper``: (U^T U) X = B)."""
    rhs, factor = input, input2
    if rhs.ndim < 2 or factor.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {rhs.ndim} dimensions "
                           "instead" if rhs.ndim < 2 else f"u should have at least 2 dimensions, "
                           f"but has {factor.ndim} dimensions instead")
    if rhs.dtype is not factor.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{rhs.dtype.scalar_name} and A of type "
                           f"{factor.dtype.scalar_name} instead.")
    check_square(factor, "cholesky_solve")
    low = np.swapaxes(factor._array(), -1, -2) if upper else factor._array()
    b = rhs._array()
    batch = np.broadcast_shapes(low.shape[:-2], b.shape[:-2])
    lb = np.broadcast_to(low, batch + low.shape[-2:])
    bb = np.broadcast_to(b, batch + b.shape[-2:])
    a = lb @ np.swapaxes(lb, -1, -2)
    x = np.linalg.solve(a, bb) if a.size and bb.size else np.zeros(bb.shape, b.dtype)
    return record_node("CholeskySolveBackward0", [x], [rhs, factor], _cholesky_solve_rule,
                       options=upper)[0]


def _cholesky_solve_rule(ctx, grads):
    (g,) = grads
    rhs, low = ctx.inputs
    x = ctx.outputs[0]
    upper = ctx.options
    g_rhs = cholesky_solve(g, low, upper)
    common = g_rhs @ x.mT
    common = common + common.mT
    g_low = -(low @ common) if upper else -(common @ low)
    return [unbroadcast(g_rhs, rhs.shape), unbroadcast(g_low, low.shape)]


def cholesky_inverse(input, upper=False):  # noqa: A002 - torch's keyword name
    """(L L^T)^-1 from the Cholesky factor L (``upper``: (U^T U)^-1)."""
    factor = input
    if factor.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    check_square(factor, "cholesky_inverse")
    low = np.swapaxes(factor._array(), -1, -2) if upper else factor._array()
    a = low @ np.swapaxes(low, -1, -2)
    value = np.linalg.inv(a) if a.size else a.copy()
    return record_node("CholeskyInverseBackward0", [value], [factor], _cholesky_inverse_rule,
                       options=upper)[0]


def _cholesky_inverse_rule(ctx, grads):
    (g,) = grads
    low = ctx.inputs[0]
    y = ctx.outputs[0]
    common = y @ (g + g.mT) @ y
    return [-(low @ common) if ctx.options else -(common @ low)]

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"cholesky": "one", "cholesky_inverse": "one", "cholesky_solve": "one", "inverse":
             "one"}
