"""More of torch's shape functions: index_put, the *_scatter functions (the out-of-place
writes into a view: select, slice, diagonal), block_diag, narrow_copy, ravel, adjoint,
cartesian_prod, combinations, unravel_index. Records reuse the existing kernels as in
ops/shape/scatter.py and ops/shape/gather.py."""

import itertools

import numpy as np

from ... import dtypes
from ...engine.record import record
from ...engine.registry import Sample, defop, vjp_rule
from ...tensor import Tensor, _make
from ..elementwise.pointwise import to_dtype
from ..index.indexing import _check_put_dtype, _mismatch, gather_flat, index_add_flat, index_select
from ..index.rules import resolve
from .gather import _diagonal_of, gathered
from .join import cat, stack
from .movement import _wrap, contiguous, expand, narrow, reshape, transpose, view
from .scatter import _added, _copies, _copies_vjp, _overwrite

INDEX_PUT = _copies("index_put", "IndexPutBackward0", [
    Sample(((3, 4), (4,)), {}, "lib.index_put(x0, (lib.tensor([2, 0]),), x1)"),
    Sample(((3, 4), ()), {}, "x0.index_put((lib.tensor([True, False, True]),), x1)")])
INDEX_PUT_ADD = defop("index_put_accumulate", "IndexPutBackward0", 2, grads=("g", "g"),
                      fwd="a + b", samples=[Sample(((3, 4), (2,)), {}, "lib.index_put(x0, ("
                                                   "lib.tensor([1, 1]), lib.tensor([0, 0])), x1, "
                                                   "accumulate=True)")])
SELECT_SCATTER = _copies("select_scatter", "SelectScatterBackward0", [
    Sample(((3, 4), (3,)), {}, "lib.select_scatter(x0, x1, 1, -1)")])
SLICE_SCATTER = _copies("slice_scatter", "SliceScatterBackward0", [
    Sample(((3, 4), (3, 2)), {}, "lib.slice_scatter(x0, x1, 1, 0, 4, 2)"),
    Sample(((3, 4), (1, 4)), {}, "lib.slice_scatter(x0, x1, start=2)")])
DIAGONAL_SCATTER = _copies("diagonal_scatter", "DiagonalScatterBackward0", [
    Sample(((3, 4), (3,)), {}, "lib.diagonal_scatter(x0, x1, 1)")])
vjp_rule(INDEX_PUT, SELECT_SCATTER, SLICE_SCATTER, DIAGONAL_SCATTER)(_copies_vjp)
NARROW_COPY = defop("narrow_copy", "NarrowCopyBackward0", 1, kernel="index_bw",
                    replay="index_fw",
                    samples=[Sample(((3, 4),), {}, "lib.narrow_copy(x0, 1, 1, 2)")])
# zeros, the concatenated flat inputs written at the blocks' positions (never repeated)
BLOCK_DIAG = defop("block_diag", "BlockDiagBackward0", 1, kernel="gather_flat_bw",
                   replay="gather_flat_fw",
                   samples=[Sample(((4,),), {}, "lib.block_diag(x0[:2].reshape(1, 2), x0[2:])"),
                            Sample(((5,),), {}, "lib.block_diag(x0[0], x0[1:].reshape(2, 2))")])


@vjp_rule(NARROW_COPY)
def _narrow_copy_vjp(ctx, g):
    return [index_add_flat(g, ctx.iat, ctx.shapes[0], unique=True)]


@vjp_rule(BLOCK_DIAG)
def _block_diag_vjp(ctx, g):
    return [gather_flat(g, ctx.iat, ctx.shapes[0])]


def index_put(input, indices, values, accumulate=False):
    """A copy of ``x`` with ``values`` at the tuple of ``indices`` (added if ``accumulate``).

    Same as ``torch.index_put``.
    """
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    basic, adv, _ = resolve(input.shape, tuple(indices))
    if not isinstance(values, Tensor):
        values = _make(np.asarray(values, input.dtype.np))
    _check_put_dtype((), False, values, input.dtype)  # (any index here is advanced)
    grid = np.arange(input.numel(), dtype=np.int64).reshape(input.shape)[basic]
    positions = grid if adv is None else grid[adv]
    region = positions.shape
    try:
        np.broadcast_shapes(tuple(values.shape), region)
    except ValueError:
        raise _mismatch(values._array(), region, False) from None
    if tuple(values.shape) != region:
        values = expand(values, size=region)
    if accumulate:
        return _added(INDEX_PUT_ADD, input, positions.reshape(-1), values)
    return _overwrite(INDEX_PUT, input, positions.reshape(-1), values)


def _view_scatter(op, x, src, view_of):
    """x with ``view_of(x)`` replaced by src (its exact shape), recorded as ``op``."""
    grid = np.arange(x.numel(), dtype=np.int64).reshape(x.shape)
    positions = view_of(grid)
    if tuple(src.shape) != positions.shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(positions.shape)}")
    if src.dtype is not x.dtype:
        src = to_dtype(src, x.dtype)
    if not src.shape:
        src = reshape(src, (1,))
    return _overwrite(op, x, np.asarray(positions).reshape(-1), src)


def select_scatter(input, src, dim, index):
    """A copy of ``x`` with ``src`` written at ``index`` along ``dim``.

    Same as ``torch.select_scatter``.
    """
    d = _wrap(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    i = index % n
    return _view_scatter(SELECT_SCATTER, input, src, lambda a: a[(slice(None),) * d + (i, ...)])


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``x`` with ``src`` written into the slice ``start:end:step`` of ``dim``.

    Same as ``torch.slice_scatter``.
    """
    d = _wrap(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    cut = (slice(None),) * d + (slice(start, end, step),)
    return _view_scatter(SLICE_SCATTER, input, src, lambda a: a[cut])


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``x`` with ``src`` written onto its diagonal (as ``diagonal`` picks it).

    Same as ``torch.diagonal_scatter``.
    """
    d1, d2 = _wrap(dim1, input.ndim), _wrap(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _view_scatter(DIAGONAL_SCATTER, input, src,
                         lambda a: _diagonal_of(a, int(offset), d1, d2))


def narrow_copy(x, dim, start, length):
    """A copy of the slice ``start:start + length`` of ``x`` along ``dim``.

    Same as ``torch.narrow_copy``.
    """
    narrow(_make(x._data), dim, start, length)  # torch's checks and messages (no graph)
    d = _wrap(dim, x.ndim)
    start = start + x.shape[d] if start < 0 else start
    cut = (slice(None),) * d + (slice(start, start + length),)
    return gathered(NARROW_COPY, x, lambda p: p[cut])


def block_diag(*tensors):
    """A block-diagonal matrix of the tensors given.

    Same as ``torch.block_diag``.
    """
    if not tensors:
        return _make(np.zeros((1, 0), np.float32))
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
    blocks = [reshape(t, (1, 1)) if t.ndim == 0 else reshape(t, (1, -1)) if t.ndim == 1 else t
              for t in tensors]
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    positions, r0, c0 = [], 0, 0
    for b in blocks:
        r, c = b.shape
        positions.append(((np.arange(r)[:, None] + r0) * cols + np.arange(c) + c0).reshape(-1))
        r0, c0 = r0 + r, c0 + c
    flat = cat([reshape(b, -1) for b in blocks])  # (promotes the dtypes, as torch)
    positions = np.concatenate(positions).astype(np.int64)
    data = flat._array()
    out = np.zeros(rows * cols, data.dtype)
    out[positions] = data
    return record(BLOCK_DIAG, out.reshape(rows, cols), (flat,), positions)


def ravel(input):
    """``x`` flattened to one dimension.

    Same as ``torch.ravel``.
    """
    return view(contiguous(input), -1)


def adjoint(input):
    """The transpose of the last two dimensions (the conjugate transpose: tensors are real).

    Same as ``torch.adjoint``.

    Args:
        input: a tensor of at least 2 dimensions.

    Returns:
        A view with the last two dimensions swapped.
    """
    if input.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return transpose(input, -2, -1)


def _vectors(tensors):
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors):
    """The Cartesian product of 1-D tensors, one row per combination.

    Same as ``torch.cartesian_prod``.
    """
    _vectors(tensors)
    if len(tensors) == 1:
        return tensors[0]
    full = tuple(t.shape[0] for t in tensors)
    columns = []
    for k, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[k] = full[k]
        columns.append(reshape(expand(reshape(t, shape), size=full), -1))
    return stack(_promoted(columns), 1)


def _promoted(tensors):
    dt = None
    for t in tensors:
        dt = dtypes.promote(dt, t.dtype)
    return [to_dtype(t, dt) for t in tensors]


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of a 1-D tensor, one per row.

    Same as ``torch.combinations``.
    """
    _vectors((input,))
    if r == 0:
        return _make(np.empty(0, input.dtype.np))
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = np.array(list(pick(range(input.shape[0]), r)), np.int64).reshape(-1, r)
    return stack([index_select(input, 0, _make(np.ascontiguousarray(rows[:, k])))
                  for k in range(r)], 1)


def unravel_index(indices, shape):
    """The coordinates in a tensor of ``shape`` of the flat ``indices``, a tuple.

    Same as ``torch.unravel_index``.
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices).__name__}")
    idx = indices._array()
    if idx.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    # torch wraps any index into range (no check), as its floor division and remainder do
    out, rest = [], idx.astype(np.int64)
    for s in reversed(shape):
        out.append(np.remainder(rest, s) if s else np.zeros_like(rest))
        rest = np.floor_divide(rest, s) if s else rest
    return tuple(_make(np.ascontiguousarray(a)) for a in reversed(out))

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"narrow_copy": "one"}
