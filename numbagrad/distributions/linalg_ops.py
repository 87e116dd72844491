"""The two structured linear-algebra ops the multivariate normal needs, differentiable to any
order: a triangular solve and a Cholesky factorization. Values come from NumPy; each
backward is written with these ops and matmuls, so it records a graph of its own."""

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from .utils import _tensor

__all__ = ["solve_triangular", "cholesky", "diagonal", "tril_mask"]


def tril_mask(n, dtype, k=0):
    return _tensor(np.tril(np.ones((n, n)), k), dtype)


def diagonal(m):
    """The diagonal of the last two dims (as a sum of the masked rows: exact, differentiable)."""
    n = m.shape[-1]
    return (m * _tensor(np.eye(n), m.dtype)).sum(-1)


def _substitute(a, b, upper):
    """Solve a x = b for triangular a (..., n, n), b (..., n, k), reading only a's triangle."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(a, b))
    rows = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(all="ignore"):
        for i in rows:
            done = slice(i + 1, n) if upper else slice(0, i)
            acc = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, done], x[..., done, :])
            x[..., i, :] = acc / a[..., i, i][..., None]
    return x


class _SolveTriangular(Function):
    @staticmethod
    def forward(ctx, a, b, upper):
        x = _tensor(_substitute(np.asarray(a._data), np.asarray(b._data), upper), a.dtype)
        ctx.upper = upper
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, gx):
        a, x = ctx.saved_tensors
        # x = a^-1 b: gb = a^-T gx, ga = -gb x^T restricted to a's triangle
        gb = solve_triangular(a.mT, gx, upper=not ctx.upper)
        n = a.shape[-1]
        mask = tril_mask(n, a.dtype) if not ctx.upper else tril_mask(n, a.dtype).mT
        ga = -(gb @ x.mT) * mask
        return ga, gb, None


def solve_triangular(a, b, *, upper):
    """x with a @ x = b, a (..., n, n) triangular (its other triangle ignored), b (..., n, k)."""
    batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    if tuple(a.shape[:-2]) != batch:
        a = a.expand(*batch, *a.shape[-2:])
    if tuple(b.shape[:-2]) != batch:
        b = b.expand(*batch, *b.shape[-2:])
    return _SolveTriangular.apply(a, b, upper)


class _Cholesky(Function):
    @staticmethod
    def forward(ctx, a):
        try:
            lower = np.linalg.cholesky(np.asarray(a._data))
        except np.linalg.LinAlgError:
            raise RuntimeError("linalg.cholesky: The factorization could not be completed "
                               "because the input is not positive-definite.") from None
        out = _tensor(lower, a.dtype)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, gl):
        (lower,) = ctx.saved_tensors
        n = lower.shape[-1]
        # torch's cholesky_backward: phi = tril(L^T gL), symmetrized with a halved diagonal,
        # then ga = L^-T phi L^-1
        phi = (lower.mT @ gl) * tril_mask(n, lower.dtype)
        phi = 0.5 * (phi + (phi * tril_mask(n, lower.dtype, -1)).mT)
        left = solve_triangular(lower.mT, phi, upper=True)
        ga = solve_triangular(lower.mT, left.mT, upper=True).mT
        return ga


def cholesky(a):
    """The lower Cholesky factor of symmetric positive-definite a (..., n, n)."""
    if not isinstance(a, Tensor):
        raise TypeError("cholesky(): argument 'input' must be Tensor")
    return _Cholesky.apply(a)
