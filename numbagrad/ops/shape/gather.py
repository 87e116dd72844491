"""Reorderings and selections recorded as flat gathers (flip, roll, rot90, take, masked_select,
diag), the diagonal embedding (its adjoint), tril/triu masks, and the strided views diagonal,
select and unfold.

A gather's node keeps, for every output element, the flat C-order position of its source
element in the input: the existing ``index_fw``/``index_bw`` kernels replay and differentiate
it, and its differentiable derivative is the matching flat index_add."""

import numpy as np

from ...core import grad_mode
from ...engine.record import broadcast_shapes, record
from ...engine.registry import Sample, defop, vjp_rule
from ...tensor import _make
from ..index.indexing import gather_flat, index_add_flat
from ..vjp import _view_positions
from .movement import SELECT, _view_numpy, _wrap, as_view, expand


def _gathers(name, grad_fn, calls, shapes=((3, 4),)):
    return defop(name, grad_fn, 1, kernel="index_bw", replay="index_fw",
                 samples=[Sample((s,), {}, c) for c in calls for s in shapes])


FLIP = _gathers("flip", "FlipBackward0", ["x0.flip(0)", "lib.flip(x0, (0, 1))",
                                          "lib.fliplr(x0)"])
ROLL = _gathers("roll", "RollBackward0", ["x0.roll(1)", "lib.roll(x0, (1, -2), (0, 1))"])
ROT90 = _gathers("rot90", "Rot90Backward0", ["lib.rot90(x0)", "lib.rot90(x0, -3, (1, 0))"])
TAKE = _gathers("take", "TakeBackward0", ["x0.take(lib.tensor([[0, 11], [5, 5]]))"])
MASKED_SELECT = _gathers("masked_select", "MaskedSelectBackward0",
                         ["x0.masked_select(x0 > 0)", "lib.masked_select(x0, lib.tensor([True, "
                          "False, True, True]))"])
DIAG_COPY = _gathers("diag_copy", "DiagonalBackward0_copy", ["x0.diag()", "lib.diag(x0, -1)"])
# y = zeros(shape) with y.flat[iat[k]] = x.flat[k]: positions never repeat
DIAG_EMBED = defop("diag_embed", "DiagEmbedBackward0", 1, kernel="gather_flat_bw",
                   replay="gather_flat_fw",
                   samples=[Sample(((3,),), {}, "lib.diag(x0, 1)"),
                            Sample(((2, 3),), {}, "lib.diag_embed(x0, -1, 0, 2)"),
                            Sample(((2, 2),), {}, "lib.diagflat(x0)")])
# m: the kept positions
TRIL = defop("tril", "TrilBackward0", 1, grads=("g if m else 0.0",), fwd="a if m else 0.0",
             samples=[Sample(((3, 4),), {}, "x0.tril()"),
                      Sample(((2, 3, 3),), {}, "lib.tril(x0, -1)")])
TRIU = defop("triu", "TriuBackward0", 1, grads=("g if m else 0.0",), fwd="a if m else 0.0",
             samples=[Sample(((3, 4),), {}, "x0.triu(1)"),
                      Sample(((4, 2),), {}, "lib.triu(x0, -2)")])
DIAGONAL = defop("diagonal", "DiagonalBackward0", 1, replay="view_fw", kernel="view_bw",
                 samples=[Sample(((3, 4),), {}, "x0.diagonal()"),
                          Sample(((2, 3, 4),), {}, "lib.diagonal(x0, 1, 2, 0)")])
DIAGONAL.numpy_bw = _view_numpy
# a view whose windows overlap: the gradients of a repeated element add up
UNFOLD = defop("unfold", "UnfoldBackward0", 1, replay="view_fw", kernel="view_bw",
               samples=[Sample(((5, 2),), {}, "x0.unfold(0, 2, 1)"),
                        Sample(((2, 7),), {}, "x0.unfold(-1, 3, 2)")])


@vjp_rule(FLIP, ROLL, ROT90)
def _permuting_vjp(ctx, g):
    return [index_add_flat(g, ctx.iat, ctx.shapes[0], unique=True)]


@vjp_rule(TAKE, MASKED_SELECT, DIAG_COPY)
def _gather_vjp(ctx, g):
    return [index_add_flat(g, ctx.iat, ctx.shapes[0])]


@vjp_rule(DIAG_EMBED)
def _diag_embed_vjp(ctx, g):
    return [gather_flat(g, ctx.iat, ctx.shapes[0])]


@vjp_rule(DIAGONAL)
def _diagonal_vjp(ctx, g):
    return [index_add_flat(g, _view_positions(ctx), ctx.shapes[0], unique=True)]


@vjp_rule(UNFOLD)
def _unfold_vjp(ctx, g):
    return [index_add_flat(g, _view_positions(ctx), ctx.shapes[0])]


def gathered(op, x, positions_of):
    """``op`` of x as y.flat[k] = x.flat[p.flat[k]], p = ``positions_of`` applied to x's
    C-order position grid (a NumPy function: np.flip, np.roll, ...); y is C-contiguous, and
    ``positions_of`` applied to x's values themselves (no map is made when no graph is)."""
    data = x._array()
    out = np.ascontiguousarray(positions_of(data))
    if not (grad_mode.state.enabled and x.requires_grad):
        return _make(out)
    grid = np.arange(data.size, dtype=np.int64).reshape(data.shape)
    return record(op, out, (x,), np.asarray(positions_of(grid), np.int64).reshape(-1))


def _dims_list(dims, ndim):
    """Wrapped dims, torch's error for a repeated one."""
    dims = [dims] if isinstance(dims, (int, np.integer)) else list(dims)
    out = []
    for d in dims:
        d = _wrap(int(d), ndim)
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return out


def flip(x, *dims, dims_kw=None):
    if dims_kw is not None:
        dims = (dims_kw,)
    if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)):
        dims = dims[0]
    dims = _dims_list(dims, x.ndim)
    if x.ndim == 0:
        dims = []
    return gathered(FLIP, x, lambda p: np.flip(p, dims) if dims else p)


def fliplr(input):
    """``x`` with the order of the columns (dimension 1) reversed.

    Same as ``torch.fliplr``.
    """
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    """``x`` with the order of the rows (dimension 0) reversed.

    Same as ``torch.flipud``.
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def roll(input, shifts, dims=None):
    """``x`` with its elements shifted by ``shifts`` along ``dims``, wrapping around.

    Same as ``torch.roll``.
    """
    shifts = [shifts] if isinstance(shifts, (int, np.integer)) else list(shifts)
    if dims is None or (not isinstance(dims, (int, np.integer)) and not len(dims)):
        if not shifts:
            raise RuntimeError("`shifts` required")
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims:0")
        # flattened, rolled, and shaped back
        return gathered(ROLL, input, lambda p: np.roll(p.reshape(-1), shifts[0]).reshape(p.shape))
    dims = [dims] if isinstance(dims, (int, np.integer)) else list(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = [_wrap(int(d), input.ndim) for d in dims]
    return gathered(ROLL, input, lambda p: np.roll(p, shifts, dims))


def rot90(input, k=1, dims=(0, 1)):
    """``x`` rotated by ``k`` quarter turns in the plane ``dims``.

    Same as ``torch.rot90``.
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _wrap(dims[0], input.ndim), _wrap(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return gathered(ROT90, input, lambda p: np.rot90(p, k, (d0, d1)))


def take(input, index):
    """The elements of the flattened ``x`` at ``index``, in the shape of ``index``.

    Same as ``torch.take``.
    """
    idx = index._array()
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{index.dtype.scalar_name}")
    n = input.numel()
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[bad].flat[0])} on a "
                         f"tensor of {n} elements.")
    return gathered(TAKE, input, lambda p: p.reshape(-1)[idx % max(n, 1)])


def masked_select(input, mask):
    """The elements of ``x`` where the boolean ``mask`` is true, a 1-D tensor.

    Same as ``torch.masked_select``.
    """
    m = mask._array()
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(m.shape, tuple(input.shape))
    if tuple(input.shape) != shape:
        input = expand(input, size=shape)  # torch's gradient sums back over the broadcast
    m = np.broadcast_to(m, shape)
    return gathered(MASKED_SELECT, input, lambda p: p[m])


# ---- triangles and diagonals ----------------------------------------------------------------
def _triangle(op, x, diagonal, name):
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    data = x._array()
    rows, cols = data.shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool)
    if op is TRIU:
        keep = ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    keep = np.broadcast_to(keep, data.shape)
    out = np.where(keep, data, np.zeros((), data.dtype))
    return record(op, out, (x,), keep.reshape(-1).astype(np.int64))


def tril(input, diagonal=0):
    """The lower triangle of (each) matrix, from the ``diagonal``-th diagonal down; zeros above.

    Same as ``torch.tril``.
    """
    return _triangle(TRIL, input, int(diagonal), "tril")


def triu(input, diagonal=0):
    """The upper triangle of (each) matrix, from the ``diagonal``-th diagonal up; zeros below.

    Same as ``torch.triu``.
    """
    return _triangle(TRIU, input, int(diagonal), "triu")


def _diagonal_of(a, offset, d1, d2):
    """The writable strided view of ``a``'s diagonal ``offset`` over dims d1, d2 (last)."""
    n = max(0, min(a.shape[d1] + min(offset, 0), a.shape[d2] - max(offset, 0)))
    start = [0] * a.ndim
    if n:
        start[d1], start[d2] = max(-offset, 0), max(offset, 0)
    origin = a[tuple(slice(s, None) for s in start)]
    rest = [k for k in range(a.ndim) if k not in (d1, d2)]
    return np.lib.stride_tricks.as_strided(
        origin, shape=[a.shape[k] for k in rest] + [n],
        strides=[a.strides[k] for k in rest] + [a.strides[d1] + a.strides[d2]])


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The ``offset``-th diagonal of the planes (``dim1``, ``dim2``), as a last dimension.

    Same as ``torch.diagonal``.
    """
    d1, d2 = _wrap(dim1, input.ndim), _wrap(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    return as_view(DIAGONAL, input, lambda a: _diagonal_of(a, offset, d1, d2))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose planes (``dim1``, ``dim2``) have the last dimension of ``x`` as diagonal.

    Same as ``torch.diag_embed``.
    """
    nd = input.ndim + 1
    d1, d2 = _wrap(dim1, nd), _wrap(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    data = input._array()
    last = data.shape[-1] if data.ndim else 1
    n = last + abs(int(offset))
    rest = list(data.shape[:-1])
    shape = [0] * nd
    shape[d1] = shape[d2] = n
    others = iter(rest)
    for k in range(nd):
        if k not in (d1, d2):
            shape[k] = next(others)
    grid = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    positions = _diagonal_of(grid, int(offset), d1, d2).reshape(-1)
    out = np.zeros(int(np.prod(shape)), data.dtype)
    out[positions] = data.reshape(-1)
    return record(DIAG_EMBED, out.reshape(shape), (input,), positions)


def diag(input, diagonal=0):
    """The diagonal matrix of a vector, or the ``diagonal``-th diagonal of a matrix.

    Same as ``torch.diag``.
    """
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    offset = int(diagonal)
    return gathered(DIAG_COPY, input, lambda p: _diagonal_of(p, offset, 0, 1).copy())


def diagflat(input, offset=0):
    """The matrix with the flattened ``x`` as its ``offset``-th diagonal.

    Same as ``torch.diagflat``.
    """
    return diag_embed(input.reshape(-1), offset, 0, 1)


# ---- views -----------------------------------------------------------------------------------
def select(input, dim, index):
    """The slice of ``x`` at ``index`` along ``dim``, without that dimension.

    Same as ``torch.select``.
    """
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap(dim, input.ndim)
    n = input.shape[d]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    i %= n
    return as_view(SELECT, input, lambda a: a[(slice(None),) * d + (i, Ellipsis)])


def unfold(x, dimension, size, step):
    """The windows of ``size`` elements along ``dimension``, every ``step``, as a last dimension.

    Same as ``torch.Tensor.unfold``.
    """
    d = _wrap(dimension, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    count = (n - size) // step + 1

    def windows(a):
        if a.ndim == 0:
            return np.lib.stride_tricks.as_strided(a.reshape(1), shape=(size,), strides=(0,))
        shape = list(a.shape)
        strides = list(a.strides)
        shape[d] = count
        strides[d] = a.strides[d] * step
        return np.lib.stride_tricks.as_strided(a, shape=shape + [size],
                                               strides=strides + [a.strides[d]])
    return as_view(UNFOLD, x, windows)

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"diag": "one", "masked_select": "one", "tril": "one", "triu": "one"}
