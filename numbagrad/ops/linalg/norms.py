"""torch.linalg's norms: vector_norm is the table's norm op (LinalgVectorNormBackward0); the
matrix norms are torch's composites (sums and maxima of |A|, singular values)."""

import math

from ... import dtypes
from ..elementwise.pointwise import to_dtype
from ..reduce.reductions import amax, amin
from ..reduce.reductions import norm as _vector_norm
from ..reduce.reductions import sum as _sum
from ..shape.movement import permute, unsqueeze
from .decomp import svdvals


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 - torch's
    """The vector norm ``ord`` of the elements over ``dim`` (all by default).

    Same as ``torch.linalg.vector_norm``.
    """
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str")
    return _vector_norm(x, float(ord), dim, keepdim, dtype)


def _matrix_dims(x, dim):
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim))}")
    d0, d1 = (d + x.ndim if d < 0 else d for d in dim)
    if not (0 <= d0 < x.ndim and 0 <= d1 < x.ndim):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.ndim}, "
                         f"{x.ndim - 1}], but got {dim[0] if not 0 <= d0 < x.ndim else dim[1]})")
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    return d0, d1


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):  # noqa: N803,A002
    """The matrix norm ``ord`` of the matrices in the dimensions ``dim``.

    Same as ``torch.linalg.matrix_norm``.
    """
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {input.dtype.scalar_name}")
    d0, d1 = _matrix_dims(input, tuple(dim))
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if dtype is not None:
        input = to_dtype(input, dtypes.as_dtype(dtype))
    if ord == "fro":
        return _vector_norm(input, 2.0, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        # the singular values of the matrices in (d0, d1), moved last
        rest = [d for d in range(input.ndim) if d not in (d0, d1)]
        s = svdvals(permute(input, *rest, d0, d1))
        out = _sum(s, -1) if ord == "nuc" else amax(s, -1) if ord == 2 else amin(s, -1)
        if keepdim:
            for d in sorted((d0, d1)):
                out = unsqueeze(out, d)
        return out
    # 1: the largest column sum of |A| (sum over d0, max over d1); inf: rows (d1, then d0)
    summed, other = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = _sum(input.abs(), summed, keepdim)
    if not keepdim and other > summed:
        other -= 1
    return amax(sums, other, keepdim) if ord > 0 else amin(sums, other, keepdim)


def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: N803,A002
    """torch.linalg.norm: a vector norm over one dim (or all of them when neither ``dim`` nor
    ``ord`` is given), a matrix norm over two."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) == 2:
            return matrix_norm(input, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
        if len(dim) != 1:
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dim)}")
        return vector_norm(input, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(input, 2, None, keepdim, dtype=dtype)
    if input.ndim == 2:
        return matrix_norm(input, ord, (-2, -1), keepdim, dtype=dtype)
    if input.ndim == 1:
        return vector_norm(input, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D "
                       f"or 2D. Got {input.ndim}D.")
