"""Indexing: basic (int, slice, None, Ellipsis) as one strided view; advanced (integer arrays,
bool masks), gather and index_select as flat index maps; __setitem__ on non-leaf tensors."""

import numpy as np

from ..tensor import Tensor, _make  # noqa: F401
from .pointwise import _operand, to_dtype, torch_order
from .record import record
from .registry import Sample, defop
from .shape import SELECT, SLICE, UNSQUEEZE, _wrap, as_view

INDEX = defop("index", "IndexBackward0", 1, replay="index_fw", kernel="index_bw",
              samples=[Sample(((4, 3),), {}, "x0[[0, 2, 2]]"),
                       Sample(((4, 3),), {}, "x0[[0, 1], [2, 0]]"),
                       Sample(((4, 3),), {}, "x0[x0 > 0]"),
                       Sample(((4, 3),), {}, "x0[:, [1, 1]]")])
GATHER = defop("gather", "GatherBackward0", 1, replay="index_fw", kernel="index_bw",
               samples=[Sample(((3, 4),), {}, "x0.gather(1, lib.tensor([[0, 0], [1, 3], [2, 1]]))"),
                        Sample(((3, 4),), {}, "lib.gather(x0, 0, lib.tensor([[2, 1, 0, 0]]))")])
INDEX_SELECT = defop("index_select", "IndexSelectBackward0", 1, replay="index_fw",
                     kernel="index_bw",
                     samples=[Sample(((3, 4),), {},
                                     "x0.index_select(1, lib.tensor([3, 0, 3]))")])
# The adjoint of every gather above: y = zeros(shape); y.flat[iat[k]] += x.flat[k]. It is
# what their differentiable derivatives record (create_graph), as torch's index_add does.
INDEX_ADD_FLAT = defop("index_add_flat", "IndexAddBackward0", 1, replay="gather_flat_fw",
                       kernel="gather_flat_bw",
                       samples=[Sample(((4,),), {}, "_index_add(lib, x0, [0, 2, 2, 4], 5)"),
                                Sample(((3,),), {}, "_index_add(lib, x0, [1, 1, 1], 2)")])
# y = x with x[idx] replaced by v; iat = flat positions written (in x's element space)
COPY_SLICES = defop("copy_slices", "CopySlices", 2, replay="index_put_fw", kernel="index_put_bw",
                    samples=[Sample(((4, 3), (3,)), {}, "_setitem(lib, x0 * 1, 1, x1)"),
                             Sample(((4, 3), ()), {},
                                    "_setitem(lib, x0 * 1, (slice(0, 2), 1), x1)")])


def _normalize(index):
    """NumPy index from a torch index: Tensors become arrays; a list stays advanced."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for i in index:
        if isinstance(i, Tensor):
            a = i._array()
            if a.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            # torch reads a 0-d integer tensor as an int: it selects (a view)
            out.append(int(a) if a.ndim == 0 and a.dtype.kind == "i" else a)
        elif isinstance(i, list):
            a = np.asarray(i)
            out.append(a.astype(np.int64) if a.size == 0 else a)  # [] selects nothing, as in torch
        elif isinstance(i, str):  # torch's TypeError (it reads the str as tensor data)
            raise TypeError("only integers, slices, ellipsis, None and long, int, byte or bool "
                            "tensors are valid indices (got str)")
        else:
            out.append(i)
    return _drop_trailing_ellipses(tuple(out))


def _drop_trailing_ellipses(index):
    """torch reads an ellipsis after the first as covering no dim when only None or
    ellipses follow it (``x[..., 0, ...]`` is ``x[..., 0]``); NumPy refuses a second one."""
    first = next((k for k, i in enumerate(index) if i is Ellipsis), None)
    if first is None:
        return index
    keep = list(index[:first + 1])
    rest = index[first + 1:]
    for k, i in enumerate(rest):
        if i is Ellipsis and all(j is None or j is Ellipsis for j in rest[k:]):
            continue
        keep.append(i)
    return tuple(keep)


def _is_basic(index):
    return all(i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice))
               for i in index)


def _check_basic(shape, index):
    nd = sum(1 for i in index if i is not None and i is not Ellipsis)
    if nd > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    # track the dim each int index addresses, for torch's out-of-bounds message
    dim = 0
    for i in index:
        if i is Ellipsis:
            dim += len(shape) - nd
            continue
        if i is None:
            continue
        if isinstance(i, (int, np.integer)) and not -shape[dim] <= i < shape[dim]:
            raise IndexError(f"index {i} is out of bounds for dimension {dim} with size "
                             f"{shape[dim]}")
        dim += 1


def _basic_op(index):
    """torch applies the indices left to right; the grad_fn is that of the last real one."""
    last = SLICE
    for i in index:
        if i is None:
            last = UNSQUEEZE
        elif isinstance(i, (int, np.integer)):
            last = SELECT
        elif isinstance(i, slice) and i != slice(None):
            last = SLICE
    return last


def getitem(x, index):
    idx = _normalize(index)
    if _is_basic(idx):
        for i in idx:
            if isinstance(i, slice) and i.step is not None and i.step <= 0:
                raise ValueError("step must be greater than zero")
        _check_basic(x.shape, idx)
        if not any(i is Ellipsis for i in idx):
            idx = idx + (Ellipsis,)  # NumPy then returns a 0-d view, never a scalar copy
        return as_view(_basic_op(idx), x, lambda a: a[idx])
    data = x._array()
    try:
        out = _advanced(data, idx, layout=True)
        flat = _advanced(np.arange(data.size).reshape(data.shape), idx)
    except IndexError as e:
        raise IndexError(str(e).replace("array", "tensor")) from None
    return record(INDEX, out, (x,), flat.reshape(-1))


def _advanced(data, idx, layout=False):
    """``data[idx]`` for an index with arrays, as torch computes it: the ints, slices and
    None first, as a view (an int selects its dim even beside the arrays, where NumPy would
    broadcast it with them), then the arrays over that view; with ``layout``, the result
    laid out as torch's kernel lays it (_index_layout)."""
    if sum(_dims_indexed(i) for i in idx) > data.ndim or not all(map(_plain, idx)):
        return data[idx]  # (NumPy's errors)
    basic, arrays = [], []
    for i in idx:
        if i is Ellipsis:
            rest = data.ndim - sum(_dims_indexed(j) for j in idx)
            basic.extend([slice(None)] * rest)
            arrays.extend([slice(None)] * rest)
        elif isinstance(i, np.ndarray):
            basic.extend([slice(None)] * _dims_indexed(i))
            arrays.append(i)
        elif i is None or isinstance(i, slice):
            basic.append(i)
            arrays.append(slice(None))
        else:
            basic.append(i)  # an int selects: no dim left for the arrays
    view = data[tuple(basic) + (Ellipsis,)]
    out = view[tuple(arrays)]
    return _index_layout(view, arrays, out) if layout else out


def _dims_indexed(i):
    """How many dims of the indexed array an index item consumes."""
    if i is None or i is Ellipsis:
        return 0
    return i.ndim if isinstance(i, np.ndarray) and i.dtype == np.bool_ else 1


def _plain(i):
    """An index item _advanced handles; NumPy does the others (a 0-d or Python bool adds a
    dim, as in torch; a float raises)."""
    if isinstance(i, np.ndarray):
        return i.ndim > 0
    return i is None or i is Ellipsis or isinstance(i, slice) or (
        isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)))


def _index_layout(view, arrays, out):
    """``out = view[arrays]`` in the layout torch's index kernel gives it: TensorIterator's
    order (pointwise.torch_order) over the view restrided to the result's shape (stride 0
    along the indexed dims) and the broadcast index tensors (a mask's, its nonzero columns);
    NumPy lays out an index on a dim past the first its own way."""
    if out.ndim < 2 or not out.size:
        return out
    cols, at, d = [], [], 0  # the index arrays, and the view dims they index
    for a in arrays:
        if isinstance(a, slice):
            d += 1
            continue
        if a.dtype == np.bool_:  # torch indexes with the columns of nonzero(): stride a.ndim
            n = int(np.count_nonzero(a))
            cols += [_Strided((n,), (a.ndim,))] * a.ndim
            at += list(range(d, d + a.ndim))
            d += a.ndim
        else:
            cols.append(_Strided(a.shape, tuple(s // a.itemsize for s in a.strides)))
            at.append(d)
            d += 1
    b = np.broadcast_shapes(*[c.shape for c in cols])
    cols = [_Strided(b, _broadcast_strides(c, b)) for c in cols]
    rest = [k for k in range(view.ndim) if k not in at]
    front = at != list(range(at[0], at[-1] + 1))  # torch moves split indexed dims first
    before = [] if front else [k for k in rest if k < at[0]]
    after = [k for k in rest if k not in before]
    shape = tuple(view.shape[k] for k in before) + b + tuple(view.shape[k] for k in after)
    if shape != out.shape:
        return out
    src = _Strided(shape, tuple(view.strides[k] for k in before) + (0,) * len(b) +
                   tuple(view.strides[k] for k in after))
    pad = ((0,) * len(before), (0,) * len(after))
    ops = [src] + [_Strided(shape, pad[0] + c.strides + pad[1]) for c in cols]
    order = torch_order(shape, ops) or list(range(len(shape)))
    moved = out.transpose(order)
    if moved.flags.c_contiguous:
        return out
    return np.ascontiguousarray(moved).transpose(np.argsort(order))


class _Strided:
    """A shape and strides, as torch_order reads an operand's."""

    def __init__(self, shape, strides):
        self.shape, self.strides, self.ndim = tuple(shape), tuple(strides), len(shape)


def _broadcast_strides(a, shape):
    lead = len(shape) - a.ndim
    return tuple(0 if k < lead or a.shape[k - lead] != n else a.strides[k - lead]
                 for k, n in enumerate(shape))


def _check_index(idx, d, size, op):
    """torch's bounds: an index is in [0, size) (no wrapping of negative ones, as NumPy's)."""
    bad = (idx < 0) | (idx >= size)
    if bad.any():
        if op == "index_select":
            raise IndexError("index out of range in self")
        raise RuntimeError(f"index {int(idx[bad].flat[0])} is out of bounds for dimension {d} "
                           f"with size {size}")


def gather(x, dim, index):
    d = _wrap(dim, x.ndim)
    idx = index._array() if isinstance(index, Tensor) else np.asarray(index)
    if idx.dtype not in (np.int64, np.int32):  # torch takes int32 indices too
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    idx = idx.astype(np.int64, copy=False)
    if idx.ndim != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    data = x._array()
    for k in range(data.ndim):  # else NumPy's broadcast error below, naming no op
        if k != d and idx.shape[k] > data.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(idx.shape)} to be no larger than self "
                               f"{list(data.shape)} apart from dimension {d}")
    _check_index(idx, d, data.shape[d] if data.ndim else 1, "gather")
    # torch's gather allows index smaller than the input in non-gather dims
    sl = tuple(slice(0, idx.shape[k]) if k != d else slice(None) for k in range(data.ndim))
    positions = np.arange(data.size).reshape(data.shape)[sl]
    flat = np.take_along_axis(positions, idx, d)
    out = np.take_along_axis(data[sl], idx, d)
    return record(GATHER, out, (x,), flat.reshape(-1))


def index_select(x, dim, index):
    d = _wrap(dim, x.ndim)
    idx = index._array() if isinstance(index, Tensor) else np.asarray(index)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    data = x._array()
    _check_index(idx, d, data.shape[d] if data.ndim else 1, "index_select")
    out = np.take(data, idx, axis=d)
    flat = np.take(np.arange(data.size).reshape(data.shape), idx, axis=d)
    if data.ndim == 0 and out.size == 1:  # torch keeps a 0-d input's shape
        out = out.reshape(())
    return record(INDEX_SELECT, out, (x,), flat.reshape(-1))


def setitem(x, index, value):
    """``x[index] = value``: in place for the value; recorded as CopySlices when grads flow."""
    idx = _normalize(index)
    v = _operand(value, x.dtype) if not isinstance(value, Tensor) else value
    if v.dtype is not x.dtype:
        v = to_dtype(v, x.dtype)
    data = x._array()
    positions = np.arange(data.size).reshape(data.shape)[idx]
    new = data.copy()
    try:
        new[idx] = v._data
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                           f"broadcast to indexing result of shape "
                           f"{list(np.shape(positions))}") from None
    region = np.shape(positions)
    flat = np.asarray(positions).reshape(-1)
    # iat = [ndim of the written region, its shape..., flat positions written in x]
    return record(COPY_SLICES, new, (x, v), (len(region), *region, *flat.tolist()))


def gather_flat(x, positions, shape):
    """y.flat[k] = x.flat[positions[k]], shaped ``shape`` (recorded as IndexBackward0)."""
    positions = np.asarray(positions, np.int64).reshape(-1)
    out = x._array().reshape(-1)[positions].reshape(shape)
    return record(INDEX, out, (x,), positions)


def index_add_flat(x, positions, shape, unique=False):
    """zeros(shape) with x.flat[k] added at flat position positions[k]; ``unique``: no
    position repeats (a view's map), so a plain assignment does (np.add.at is ~10x slower)."""
    positions = np.asarray(positions, np.int64).reshape(-1)
    data = x._array()
    out = np.zeros(int(np.prod(shape)), data.dtype)
    if unique:
        out[positions] = data.reshape(-1)
    else:
        np.add.at(out, positions, data.reshape(-1))
    return record(INDEX_ADD_FLAT, out.reshape(shape), (x,), positions)
