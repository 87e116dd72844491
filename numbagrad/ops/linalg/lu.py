"""The LU family: linalg.lu_factor(_ex), linalg.lu, lu_unpack, linalg.lu_solve and the deprecated
torch.lu, torch.lu_solve, torch.triangular_solve. Values from LAPACK's getrf/getrs through SciPy
(the pivots torch reports: LAPACK's, 1-based, int32); derivatives follow torch's
FunctionsManual.cpp (linalg_lu_backward, lu_factor_ex_backward, lu_unpack_backward,
linalg_lu_solve's, triangular_solve_backward), written with recorded ops (linalg_node) so that
second derivatives record too."""

import warnings

import numpy as np

from ...engine.record import shape_error_broadcast
from ..shape.gather import tril, triu
from ..shape.join import cat
from ..shape.movement import narrow
from ..vjp import unbroadcast
from .common import batch_prefix, const, return_type
from .extras import _triangle, _triangular_value, solve_triangular
from .node import not_differentiable, record_node

LuFactorResult = return_type("linalg_lu_factor", ["LU", "pivots"])
LuFactorExResult = return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LuResult = return_type("linalg_lu", ["P", "L", "U"])
LuUnpackResult = return_type("lu_unpack", ["P", "L", "U"])
LuWithInfoResult = return_type("_lu_with_info", ["LU", "pivots", "info"])
TriangularSolveResult = return_type("triangular_solve", ["solution", "cloned_coefficient"])

_ZERO_PIVOT = ("U[{0},{0}] is zero and using it on lu_solve would result in a division by zero. "
               "If you still want to perform the factorization, consider calling "
               "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


# ---- factorization ----------------------------------------------------------------------------
def _check_lu_input(m, name, pivot):
    if m.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(m.shape)} instead")
    if not m.dtype.is_floating_point:
        raise NotImplementedError(f'"lu_cpu" not implemented for \'{m.dtype.scalar_name}\'')
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _getrf(a):
    """LAPACK's getrf of each matrix of ``a``: (LU, 1-based int32 pivots, int32 info)."""
    rows, cols = a.shape[-2:]
    k = min(rows, cols)
    batch = a.shape[:-2]
    lu = np.array(a, copy=True)
    piv = np.broadcast_to(np.arange(1, k + 1, dtype=np.int32), (*batch, k)).copy()
    info = np.zeros(batch, np.int32)
    if not k:
        return lu, piv, info
    from scipy.linalg import lapack  # lazily: SciPy's import cost

    getrf = lapack.get_lapack_funcs("getrf", (a,))
    flat_lu, flat_piv, flat_info = lu.reshape(-1, rows, cols), piv.reshape(-1, k), info.reshape(-1)
    for i in range(flat_lu.shape[0]):
        f, p, inf = getrf(flat_lu[i])
        flat_lu[i], flat_piv[i], flat_info[i] = f, p + 1, inf
    return lu, piv, info


def _raise_zero_pivot(info, shape, name):
    for k, i in enumerate(info.reshape(-1)):
        if i > 0:
            raise RuntimeError(f"{name}: {batch_prefix(shape, k)}" + _ZERO_PIVOT.format(int(i)))


def lu_factor_ex(A, *, pivot=True, check_errors=False):  # noqa: N803 - torch's keyword names
    """The compact LU factorization with partial pivoting and an ``info`` code, as
    ``(LU, pivots, info)``.

    Same as ``torch.linalg.lu_factor_ex``.
    """
    return _lu_factor(A, pivot, "torch.linalg.lu_factor_ex" if check_errors else None,
                      LuFactorExResult)


def lu_factor(A, *, pivot=True):  # noqa: N803 - torch's keyword names
    """The compact LU factorization with partial pivoting, as ``(LU, pivots)``; raises if a
    matrix is singular (zero pivot).

    Same as ``torch.linalg.lu_factor``.
    """
    lu, piv, _ = _lu_factor(A, pivot, "torch.linalg.lu_factor", LuFactorExResult)
    return LuFactorResult(lu, piv)


def _lu_factor(m, pivot, error_name, result):
    _check_lu_input(m, "torch.lu_factor", pivot)
    lu, piv, info = _getrf(m._array())
    if error_name is not None:
        _raise_zero_pivot(info, m.shape, error_name)
    lu_t, piv_t, info_t = record_node("LinalgLuFactorExBackward0", [lu, piv, info], [m],
                                      _lu_factor_rule)
    return result(lu_t, piv_t, info_t)


def _lu_factor_rule(ctx, grads):
    g = grads[0]
    if g is None:  # no gradient reached LU (pivots and info carry none)
        return [None]
    lu_t, piv_t, _ = ctx.outputs
    rows, cols = lu_t.shape[-2:]
    k = min(rows, cols)
    p, low, up = _unpacked(lu_t, piv_t)
    return [_lu_backward(narrow(g, -1, 0, k), narrow(g, -2, 0, k), p, low, up)]


def lu(A, *, pivot=True):  # noqa: N803 - torch's keyword names
    """The LU decomposition with partial pivoting ``A = P L U``, as ``(P, L, U)``.

    Same as ``torch.linalg.lu``.
    """
    _check_lu_input(A, "linalg.lu", pivot)
    lu_a, piv, _ = _getrf(A._array())
    p, low, up = _unpack_arrays(lu_a, piv)
    p_t, low_t, up_t = record_node("LinalgLuBackward0", [p, low, up], [A], _lu_rule,
                                   differentiable=[False, True, True])
    return LuResult(p_t, low_t, up_t)


def _lu_rule(ctx, grads):
    _, g_low, g_up = grads
    p, low, up = ctx.outputs
    return [_lu_backward(g_low, g_up, p, low, up)]


def _lu_backward(g_low, g_up, p, low, up):
    """torch's linalg_lu_backward (A = P L U, L (m, k) unit lower, U (k, n) upper)."""
    if g_low is None and g_up is None:
        return None
    rows, cols = low.shape[-2], up.shape[-1]
    k = min(rows, cols)
    if rows == cols:
        # gA = P L^-T [L^T gL o 1_L + gU U^T o 1_U] U^-T
        g = None if g_low is None else tril(low.mT @ g_low, -1)
        if g_up is not None:
            g = triu(g_up @ up.mT) if g is None else g + triu(g_up @ up.mT)
        g = solve_triangular(up.mT, g, upper=False, left=False)
        g = solve_triangular(low.mT, g, upper=True, unitriangular=True)
    elif rows < cols:
        # wide, U = [U1 U2]: gA1 = P L^-T [gU1 o 1_U + (L^T gL o 1_L - gU U^T o 1_U) U1^-T],
        # gA2 = P L^-T gU2
        u1 = narrow(up, -1, 0, k)
        g = None if g_low is None else low.mT @ g_low
        if g_up is not None:
            term = triu(g_up) @ up.mT
            g = -term if g is None else g - term
        g = solve_triangular(u1.mT, tril(g, -1), upper=False, left=False)
        if g_up is not None:
            g = cat([g + triu(narrow(g_up, -1, 0, k)), narrow(g_up, -1, k, cols - k)], -1)
        g = solve_triangular(low.mT, g, upper=True, unitriangular=True)
        if g_up is None:
            g = cat([g, _zeros(narrow(up, -1, k, cols - k))], -1)
    else:
        # tall, L = [L1; L2]: gA1 = P [L1^-T (gU o 1_U - L^T gL o 1_L) U^-T + gL1 o 1_L],
        # gA2 = P gL2 U^-T
        l1 = narrow(low, -2, 0, k)
        g = None if g_up is None else g_up @ up.mT
        if g_low is not None:
            term = low.mT @ tril(g_low, -1)
            g = -term if g is None else g - term
        g = solve_triangular(l1.mT, triu(g), upper=True, unitriangular=True)
        if g_low is not None:
            g = cat([g + tril(narrow(g_low, -2, 0, k), -1), narrow(g_low, -2, k, rows - k)], -2)
        g = solve_triangular(up.mT, g, upper=False, left=False)
        if g_low is None:
            g = cat([g, _zeros(narrow(low, -2, k, rows - k))], -2)
    return p @ g


def _zeros(t):
    return const(np.zeros(t.shape), t._data.dtype)


# ---- unpacking --------------------------------------------------------------------------------
def _permutation(piv, rows, dtype):
    """P with A = P L U from LAPACK's 1-based row interchanges (row i swapped with piv[i])."""
    batch = piv.shape[:-1]
    flat = piv.reshape(-1, piv.shape[-1])
    p = np.zeros((flat.shape[0], rows, rows), dtype)
    for b in range(flat.shape[0]):
        perm = np.arange(rows)
        for i, j in enumerate(flat[b]):
            perm[i], perm[j - 1] = perm[j - 1], perm[i]
        p[b, perm, np.arange(rows)] = 1
    return p.reshape(*batch, rows, rows)


def _unpack_arrays(lu_a, piv):
    rows, cols = lu_a.shape[-2:]
    k = min(rows, cols)
    low = np.tril(lu_a[..., :, :k], -1) + np.eye(rows, k, dtype=lu_a.dtype)
    up = np.triu(lu_a[..., :k, :])
    return _permutation(piv, rows, lu_a.dtype), low, up


def _unpacked(lu_t, piv_t):
    """(P, L, U) of a factorization as recorded ops of ``lu_t`` (P a constant)."""
    rows, cols = lu_t.shape[-2:]
    k = min(rows, cols)
    dt = lu_t._data.dtype
    low = tril(narrow(lu_t, -1, 0, k), -1) + const(np.eye(rows, k), dt)
    up = triu(narrow(lu_t, -2, 0, k))
    return const(_permutation(piv_t._array(), rows, dt), dt), low, up


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):  # noqa: N803
    """(P, L, U) from ``linalg.lu_factor``'s compact form; the parts not asked for are empty.

    Same as ``torch.lu_unpack``.
    """
    if LU_pivots.dtype.scalar_name != "Int":
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    lu_a, piv = LU_data._array(), LU_pivots._array()
    rows, cols = lu_a.shape[-2:]
    dt = lu_a.dtype
    empty = np.zeros((0,), dt)
    p = empty
    if unpack_pivots:
        if piv.size and (piv.min() < 1 or piv.max() > rows):
            raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                               "inclusive.Did you properly pass the result of lu_factor?")
        p = _permutation(np.broadcast_to(piv, (*lu_a.shape[:-2], piv.shape[-1])), rows, dt)
    if not unpack_data:
        return LuUnpackResult(const(p, dt), const(empty, dt), const(empty, dt))
    _, low, up = _unpack_arrays(lu_a, piv)
    p_t, low_t, up_t = record_node("LuUnpackBackward0", [p, low, up], [LU_data], _unpack_rule,
                                   differentiable=[False, True, True])
    return LuUnpackResult(p_t, low_t, up_t)


def _unpack_rule(ctx, grads):
    _, g_low, g_up = grads
    lu_t = ctx.inputs[0]
    rows, cols = lu_t.shape[-2:]
    k = min(rows, cols)
    g_l = None if g_low is None else tril(g_low, -1)
    g_u = None if g_up is None else triu(g_up)
    if g_l is None and g_u is None:
        return [None]
    # L (m, k) and U (k, n) overlap LU's leading k x k block; the wider one covers all of LU
    if rows == cols:
        parts = [g for g in (g_l, g_u) if g is not None]
        return [parts[0] if len(parts) == 1 else parts[0] + parts[1]]
    if rows < cols:
        g_u = _zeros(lu_t) if g_u is None else g_u
        if g_l is None:
            return [g_u]
        return [cat([narrow(g_u, -1, 0, k) + g_l, narrow(g_u, -1, k, cols - k)], -1)]
    g_l = _zeros(lu_t) if g_l is None else g_l
    if g_u is None:
        return [g_l]
    return [cat([narrow(g_l, -2, 0, k) + g_u, narrow(g_l, -2, k, rows - k)], -2)]


# ---- solving with a factorization -------------------------------------------------------------
def lu_solve(LU, pivots, B, *, left=True, adjoint=False):  # noqa: N803 - torch's keyword names
    """The solution ``X`` of ``A X = B`` (``X A = B`` if not ``left``; A^T for ``adjoint``)
    from ``linalg.lu_factor``'s ``(LU, pivots)`` of A.

    Same as ``torch.linalg.lu_solve``.
    """
    if LU.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor A must have at least 2 dimensions.")
    if LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but "
                           f"they are {LU.shape[-2]} by {LU.shape[-1]} matrices")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {LU.dtype.scalar_name} and B of type "
                           f"{B.dtype.scalar_name} instead")
    if pivots.dtype.scalar_name != "Int":
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    if pivots.ndim < 1 or pivots.shape[-1] != n:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    lu_a, piv, b = LU._array(), pivots._array(), B._array()
    err = shape_error_broadcast(lu_a.shape[:-2], b.shape[:-2])
    if err is not None:
        raise err
    value = _getrs(lu_a, piv, b, left, adjoint)
    return record_node("LinalgLuSolveBackward0", [value], [LU, B], _lu_solve_rule,
                       options=(pivots, left, adjoint))[0]


def _getrs(lu_a, piv, b, left, adjoint):
    if not left:  # X A = B: A^T X^T = B^T
        return np.swapaxes(_getrs(lu_a, piv, np.swapaxes(b, -1, -2), True, not adjoint),
                           -1, -2).copy()
    batch = np.broadcast_shapes(lu_a.shape[:-2], piv.shape[:-1], b.shape[:-2])
    n = lu_a.shape[-1]
    lus = np.broadcast_to(lu_a, batch + lu_a.shape[-2:]).reshape(-1, n, n)
    pivs = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape(-1, n)
    bs = np.broadcast_to(b, batch + b.shape[-2:]).reshape(-1, *b.shape[-2:])
    out = np.empty(bs.shape, b.dtype)
    if out.size:
        from scipy.linalg import lapack  # lazily: SciPy's import cost

        getrs = lapack.get_lapack_funcs("getrs", (lus,))
        with np.errstate(divide="ignore", invalid="ignore"):
            for i in range(bs.shape[0]):
                out[i] = getrs(lus[i], pivs[i] - 1, bs[i], trans=int(adjoint))[0]
    return out.reshape(batch + b.shape[-2:])


def _lu_solve_rule(ctx, grads):
    (g,) = grads
    pivots, left, adjoint = ctx.options
    lu_t, rhs = ctx.inputs
    x = ctx.outputs[0]
    g_rhs = lu_solve(lu_t, pivots, g, left=left, adjoint=not adjoint)
    # the gradient for the matrix A = P L U (as linalg.solve's rule, on op(A))
    if left:
        g_a = -(x @ g_rhs.mT) if adjoint else -(g_rhs @ x.mT)
    else:
        g_a = -(g_rhs.mT @ x) if adjoint else -(x.mT @ g_rhs)
    # to L and U (torch's linalg_lu_solve_LU): gL = (P^T gA U^T) o 1_L, gU = (L^T P^T gA) o 1_U
    p, low, up = _unpacked(lu_t, pivots)
    pg = p.mT @ g_a
    g_lu = tril(pg @ up.mT, -1) + triu(low.mT @ pg)
    return [unbroadcast(g_lu, lu_t.shape), unbroadcast(g_rhs, rhs.shape)]


# ---- the deprecated top-level forms -----------------------------------------------------------
def lu_deprecated(A, pivot=True, get_infos=False):  # noqa: N803 - torch's keyword names
    """torch.lu: ``(LU, pivots)`` (``get_infos``: and ``info``); never raises for a singular
    matrix (torch's check_errors there only catches invalid arguments)."""
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
                  "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
                  "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
                  "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
                  "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
                  "should be replaced with\n"
                  "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)",
                  UserWarning, stacklevel=2)
    result = _lu_factor(A, pivot, None, LuWithInfoResult)
    return result if get_infos else (result.LU, result.pivots)


def lu_solve_deprecated(input, LU_data, LU_pivots):  # noqa: A002,N803 - torch's keyword names
    """torch.lu_solve: linalg.lu_solve with its arguments reversed."""
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
                  "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its "
                  "arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced "
                  "with\nX = torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=2)
    return lu_solve(LU_data, LU_pivots, input)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):  # noqa: A002,N803
    """torch.triangular_solve: ``(solution, cloned_coefficient)`` of op(A) X = b for the
    triangle of ``A`` (op: a transpose if ``transpose``)."""
    warnings.warn("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
                  "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular"
                  " has its arguments reversed and does not return a copy of one of the inputs.\n"
                  "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
                  "X = torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=2)
    b = input
    if b.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {b.ndim} dimensions instead")
    if A.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, "
                           f"but it has {A.ndim} dimensions instead")
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{b.dtype.scalar_name} and A of type {A.dtype.scalar_name} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    n = A.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is {n} "
                           f"by {n} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    a, rhs = A._array(), b._array()
    err = shape_error_broadcast(a.shape[:-2], rhs.shape[:-2])
    if err is not None:
        raise err
    tri = a * _triangle(n, upper, unitriangular, a.dtype)
    if unitriangular:
        tri = tri + np.eye(n, dtype=a.dtype)
    if transpose:
        tri, upper_eff = np.swapaxes(tri, -1, -2), not upper
    else:
        upper_eff = upper
    value = _triangular_value(tri, rhs, upper_eff, True)
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    coeff = np.broadcast_to(a, batch + a.shape[-2:]).copy()
    x, m = record_node("TriangularSolveBackward0", [value, coeff], [b, A],
                       _triangular_solve_rule, options=(upper, transpose, unitriangular))
    return TriangularSolveResult(x, m)


def _triangular_solve_rule(ctx, grads):
    g_x, g_m = grads
    upper, transpose, unit = ctx.options
    b, a = ctx.inputs
    x = ctx.outputs[0]
    g_b = g_a = None
    if g_x is not None:
        # op(A) X = b: gb = op(A)^-T gX, gA = -gb X^T (transposed for op = T), on A's triangle
        g_b = _solve_op(a, g_x, upper, not transpose, unit)
        g_a = -(x @ g_b.mT) if transpose else -(g_b @ x.mT)
        g_a = triu(g_a, int(unit)) if upper else tril(g_a, -int(unit))
    if g_m is not None:  # the cloned coefficient passes its gradient straight through
        g_a = g_m if g_a is None else g_a + g_m
    return [None if g_b is None else unbroadcast(g_b, b.shape),
            None if g_a is None else unbroadcast(g_a, a.shape)]


def _solve_op(a, rhs, upper, transpose, unit):
    """op(A)^-1 rhs for A's triangle, recorded (linalg.solve_triangular)."""
    if transpose:
        return solve_triangular(a.mT, rhs, upper=not upper, unitriangular=unit)
    return solve_triangular(a, rhs, upper=upper, unitriangular=unit)


# ---- LDL (Bunch-Kaufman, LAPACK's sytrf/sytrs as torch's): no derivatives, as torch ----------
LdlFactorResult = return_type("linalg_ldl_factor", ["LD", "pivots"])
LdlFactorExResult = return_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def ldl_factor_ex(input, *, hermitian=False, check_errors=False):  # noqa: A002 - torch's names
    """The compact LDL factorization of (each) symmetric matrix (read from its lower triangle)
    with Bunch-Kaufman pivots and an ``info`` code, as ``(LD, pivots, info)``.

    Same as ``torch.linalg.ldl_factor_ex``.
    """
    return _ldl_factor(input, "torch.linalg.ldl_factor_ex", check_errors, LdlFactorExResult)


def ldl_factor(input, *, hermitian=False):  # noqa: A002 - torch's keyword names
    """The compact LDL factorization of (each) symmetric matrix, as ``(LD, pivots)``.

    Same as ``torch.linalg.ldl_factor``.
    """
    ld, piv, _ = _ldl_factor(input, "torch.linalg.ldl_factor", True, LdlFactorExResult)
    return LdlFactorResult(ld, piv)


def _ldl_factor(m, name, check_errors, result):
    if m.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_factor_ex: The input tensor A must have at least 2 "
                           "dimensions.")
    if m.shape[-1] != m.shape[-2]:
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: A must be batches of square matrices, "
                           f"but they are {m.shape[-2]} by {m.shape[-1]} matrices")
    if not m.dtype.is_floating_point:
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: Expected a floating point or complex "
                           f"tensor as input. Got {m.dtype.scalar_name}")
    a = m._array()
    n = a.shape[-1]
    ld = np.zeros(a.shape, a.dtype)
    piv = np.broadcast_to(np.arange(1, n + 1, dtype=np.int32), (*a.shape[:-2], n)).copy()
    info = np.zeros(a.shape[:-2], np.int32)
    if a.size:
        from scipy.linalg import lapack  # lazily: SciPy's import cost

        sytrf = lapack.get_lapack_funcs("sytrf", (a,))
        fa, fl, fp, fi = (a.reshape(-1, n, n), ld.reshape(-1, n, n), piv.reshape(-1, n),
                          info.reshape(-1))
        for i in range(fa.shape[0]):
            f, p, inf = sytrf(fa[i], lower=1)
            fl[i], fp[i], fi[i] = np.tril(f), p, inf
    if check_errors:
        for k, i in enumerate(info.reshape(-1)):
            if i > 0:
                raise RuntimeError(f"{name}: {batch_prefix(a.shape, k)}The factorization could "
                                   f"not be completed because the block diagonal matrix D is "
                                   f"singular (D[{int(i)},{int(i)}] is zero).")
    ld_t, piv_t, info_t = record_node("NotImplemented", [ld, piv, info], [m],
                                      not_differentiable("linalg_ldl_factor_ex"))
    return result(ld_t, piv_t, info_t)


def ldl_solve(LD, pivots, B, *, hermitian=False):  # noqa: N803 - torch's keyword names
    """The solution of ``A X = B`` from ``linalg.ldl_factor``'s ``(LD, pivots)`` of A.

    Same as ``torch.linalg.ldl_solve``.
    """
    if B.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(B.ndim, 1)}, {max(B.ndim, 1) - 1}], but got -2)")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix "
                           f"is {n} by {n} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    ld, piv, b = LD._array(), pivots._array().astype(np.int32), B._array()
    err = shape_error_broadcast(ld.shape[:-2], b.shape[:-2])
    if err is not None:
        raise err
    batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    lds = np.broadcast_to(ld, batch + (n, n)).reshape(-1, n, n)
    pivs = np.broadcast_to(piv, batch + (n,)).reshape(-1, n)
    bs = np.broadcast_to(b, batch + b.shape[-2:]).reshape(-1, *b.shape[-2:])
    out = np.empty(bs.shape, b.dtype)
    if out.size:
        from scipy.linalg import lapack  # lazily: SciPy's import cost

        sytrs = lapack.get_lapack_funcs("sytrs", (lds,))
        for i in range(bs.shape[0]):
            out[i] = sytrs(lds[i], pivs[i], bs[i], lower=1)[0]
    return record_node("NotImplemented", [out.reshape(batch + b.shape[-2:])], [LD, B],
                       not_differentiable("linalg_ldl_solve"))[0]

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"lu_solve": "one"}
