"""Indexing, the index read as torch reads it (index_rules.py): basic (int, slice, None,
Ellipsis) as one strided view; advanced (integer arrays, bool masks), gather and index_select
as flat index maps; __setitem__ on non-leaf tensors."""

import numpy as np

from ...core import grad_mode
from ...dtypes import from_numpy_dtype
from ...engine.record import c_strides, note_view, record, record_array
from ...engine.registry import Sample, defop
from ...tensor import Tensor, _make  # noqa: F401
from ..elementwise.forward import torch_order
from ..elementwise.pointwise import _operand, to_dtype
from ..shape.movement import SELECT, SLICE, UNSQUEEZE, _wrap, as_view
from .rules import resolve

# the package's functions (numbagrad star-imports them); each is a Tensor method too
__all__ = ["gather", "index_select"]

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
INDEX_ADD_FLAT = defop("index_add_flat", "IndexAddBackward0", 1, none_operand="first",
                       replay="gather_flat_fw",
                       kernel="gather_flat_bw",
                       samples=[Sample(((4,),), {}, "_index_add(lib, x0, [0, 2, 2, 4], 5)"),
                                Sample(((3,),), {}, "_index_add(lib, x0, [1, 1, 1], 2)")])
# y = x with x[idx] replaced by v; iat = flat positions written (in x's element space)
COPY_SLICES = defop("copy_slices", "CopySlices", 2, replay="index_put_fw", kernel="index_put_bw",
                    samples=[Sample(((4, 3), (3,)), {}, "_setitem(lib, x0 * 1, 1, x1)"),
                             Sample(((4, 3), ()), {},
                                    "_setitem(lib, x0 * 1, (slice(0, 2), 1), x1)")])


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
    kind = type(index)
    if kind is slice and index.step is None:  # x[a:b], the commonest, in the fewest steps
        data = x._data
        if type(data) is np.ndarray and data.ndim and data.flags.c_contiguous:
            return _row_slice(x, data, index)
    if kind is int:  # x[t] of a C-ordered batch, a loop's input: in the fewest steps
        data = x._data
        if type(data) is np.ndarray and data.ndim > 1 and data.flags.c_contiguous and \
                -data.shape[0] <= index < data.shape[0]:
            return _row_select(x, data, index)
    if kind is int or kind is slice:  # x[i], x[a:b]: the common cases, in fewer steps
        shape = x._data.shape
        if shape and (index.step is None if kind is slice else -shape[0] <= index < shape[0]):
            basic = (index, Ellipsis)  # (the Ellipsis keeps x[i] of a 1-d x a view)
            row = x._data.size // shape[0] if shape[0] else 0
            start = index % shape[0] if kind is int else index.indices(shape[0])[0]
            return as_view(SELECT if kind is int else SLICE, x, lambda a: a[basic],
                           offset=lambda _: start * row)
    rows = _rows_in_range(x, index)
    if rows is not None:  # the common x[int tensor]: NumPy reads it as torch does
        data = x._array()
        row = data.size // data.shape[0]  # elements per row: the flat map costs the result's size
        flat = (rows % data.shape[0])[..., None] * row + np.arange(row)
        return record(INDEX, data[rows], (x,), flat.reshape(-1))
    basic, adv, _ = resolve(x.shape, index)
    if adv is None:
        return as_view(_basic_op(basic), x, lambda a: a[basic],
                       offset=lambda shape: _basic_offset(shape, basic))
    data = x._array()
    view = data[basic]
    out = _index_layout(view, adv, view[adv])
    flat = np.arange(data.size).reshape(data.shape)[basic][adv]
    return record(INDEX, out, (x,), flat.reshape(-1))


def _row_slice(x, data, index):
    """``x[index]``, rows ``a:b`` of C-ordered ``data``, as SLICE's view: its map (start,
    then the view's strides, in elements) read from the view itself."""
    out = data[index]  # (rows of a C-ordered array: index alone, no Ellipsis, is the view)
    if x._requires_grad and grad_mode.state.enabled:
        item = data.itemsize
        strides = out.strides
        # (NumPy starts an empty view where its base starts)
        start = index.indices(data.shape[0])[0] * (data.size // data.shape[0]) \
            if out.size else 0
        iat = (start, strides[0] // item) if len(strides) == 1 else \
            (start, *[st // item for st in strides])
    else:
        iat = ()  # not recorded: no map needed
    t = record_array(SLICE, out, x, None, iat)
    note_view(t, x, lambda a: a[index, ...])
    return t


def _row_select(x, data, index):
    """``x[index]``, row ``index`` of C-ordered ``data`` (2-d or more), as SELECT's view: its
    map (start, then the row's strides, in elements) read from the view itself."""
    out = data[index]
    if x._requires_grad and grad_mode.state.enabled:
        item = data.itemsize
        n = data.shape[0]
        iat = ((index % n) * (data.size // n), *[st // item for st in out.strides])
    else:
        iat = ()  # not recorded: no map needed
    t = record_array(SELECT, out, x, None, iat)
    note_view(t, x, lambda a: a[index, ...])
    return t


def _basic_offset(shape, basic):
    """Where ``a[basic]`` starts, in elements, in a C-ordered ``a`` of ``shape``: the sum of
    each int's and each slice start's C stride (``basic`` as resolve gives it: ints in
    range, slices, None, a final Ellipsis)."""
    offset, dim, strides = 0, 0, c_strides(shape)
    for i in basic:
        if i is None or i is Ellipsis:
            continue
        n = shape[dim]
        if isinstance(i, slice):
            if n:
                offset += i.indices(n)[0] * strides[dim]
        else:
            offset += (i % n) * strides[dim]
        dim += 1
    return offset


def _rows_in_range(x, index):
    """``index``'s array when it is a nonempty integer tensor whose indices are all rows of x
    (the case torch and NumPy read alike, with nothing to report), else None."""
    if not isinstance(index, Tensor):
        return None
    a = index._data
    d = x._data
    if not (isinstance(a, np.ndarray) and a.ndim and a.size and a.dtype in _INT_INDEX and
            d.ndim and (d.ndim == 1 or d.flags.c_contiguous)):  # (torch's layout: C order)
        return None
    n = x._data.shape[0]
    return a if -n <= a.min() and a.max() < n else None


_INT_INDEX = (np.dtype(np.int64), np.dtype(np.int32))


def _index_layout(view, arrays, out):
    """``out = view[arrays]`` in the layout torch's index kernel gives it: TensorIterator's
    order (forward.torch_order) over the view restrided to the result's shape (stride 0
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


def _index_tensor(index, op):
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    return index._array()


def _first_out_of_range(idx, size):
    """The first index (C order) outside [0, size): torch wraps no negative one here."""
    bad = (idx < 0) | (idx >= size)
    return int(idx[bad].flat[0]) if bad.any() else None


def gather(input, dim, index):
    """The elements of ``x`` along ``dim`` at the positions ``index`` holds.

    Same as ``torch.gather``.
    """
    d = _wrap(dim, input.ndim)
    idx = _index_tensor(index, "gather")
    data = input._array()
    if idx.size == 0:  # torch checks nothing then: an empty result of the index's shape
        return record(GATHER, np.empty(idx.shape, data.dtype), (input,), np.empty(0, np.int64))
    if idx.dtype not in (np.int64, np.int32):  # torch takes int32 indices too
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    # torch reads a 0-d tensor as one of shape (1,) here, for the input and the index
    nd = max(data.ndim, 1)
    if max(idx.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    data1 = data.reshape(data.shape or (1,))
    idx1 = idx.reshape(idx.shape or (1,)).astype(np.int64, copy=False)
    for k in range(nd):  # else NumPy's broadcast error below, naming no op
        if k != d and idx1.shape[k] > data1.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(idx.shape)} to be no larger than self "
                               f"{list(data.shape)} apart from dimension {d}")
    bad = _first_out_of_range(idx1, data1.shape[d])
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size "
                           f"{data1.shape[d]}")
    # torch's gather allows index smaller than the input in non-gather dims
    sl = tuple(slice(0, idx1.shape[k]) if k != d else slice(None) for k in range(nd))
    positions = np.arange(data.size).reshape(data1.shape)[sl]
    flat = np.take_along_axis(positions, idx1, d)
    out = np.take_along_axis(data1[sl], idx1, d).reshape(idx.shape)
    return record(GATHER, out, (input,), flat.reshape(-1))


def index_select(input, dim, index):
    """The slices of ``x`` along ``dim`` at the positions of the 1-D ``index``.

    Same as ``torch.index_select``.
    """
    d = _wrap(dim, input.ndim)
    idx = _index_tensor(index, "index_select")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0 and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{idx.size} value(s)")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    data = input._array()
    idx = idx.reshape(-1)  # a 0-d index selects as [i] does: the dim stays
    size = data.shape[d] if data.ndim else 1
    bad = _first_out_of_range(idx, size)
    if data.ndim > 1 and idx.size and data.size == 0 and size == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if bad is not None:
        # torch's kernels: the dim-1 and empty-input paths of a matrix check as RuntimeError
        if data.ndim > 1 and (d == 1 or data.size == 0):
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} "
                               f"axis_dim={size}")
        raise IndexError("index out of range in self")
    out = np.take(data, idx, axis=d)
    flat = np.take(np.arange(data.size).reshape(data.shape), idx, axis=d)
    if data.ndim == 0:  # torch keeps a 0-d input's shape
        out = out.reshape(())
    return record(INDEX_SELECT, out, (input,), flat.reshape(-1))


def _write(data, basic, adv, value, region):
    """data[basic][adv] = value in place, torch's error when value does not broadcast."""
    target = data[basic]
    try:
        if adv is None:
            target[...] = value
        else:
            target[adv] = value
    except ValueError:
        raise _mismatch(np.asarray(value), region, adv is None) from None


def _mismatch(value, region, basic):
    """torch's error for a value that does not broadcast to the written region: index_put_'s,
    or (basic indexing) copy_'s expand of the value stripped of its leading 1s."""
    if not basic:
        return RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot "
                            f"be broadcast to indexing result of shape {list(region)}")
    shape = list(value.shape)
    while shape and shape[0] == 1:
        shape.pop(0)
    if len(shape) > len(region):
        name = from_numpy_dtype(value.dtype).scalar_name
        return RuntimeError(f"expand(torch.{name}Tensor{{{shape}}}, size={list(region)}): the "
                            f"number of sizes provided ({len(region)}) must be greater or equal "
                            f"to the number of dimensions in the tensor ({len(shape)})")
    lead = len(region) - len(shape)
    for i in range(len(region) - 1, lead - 1, -1):  # torch checks from the last dim backwards
        cur = shape[i - lead]
        if cur != 1 and cur != region[i]:
            break
    return RuntimeError(f"The expanded size of the tensor ({region[i]}) must match the existing "
                        f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                        f"{list(region)}.  Tensor sizes: {shape}")


def _setitem_index(index):
    """torch assigns through a lone True as through None: a copy (x[False] = v is a no-op)."""
    return None if index is True else index


def _check_put_dtype(adv, one_mask, value, dtype):
    """index_put_ (an advanced index) takes a tensor only of the destination's dtype; a basic
    index copies, and one mask with a one-element value fills, converting."""
    if one_mask and isinstance(value, Tensor) and value.numel() == 1:
        return
    if adv is not None and isinstance(value, Tensor) and value.dtype is not dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{dtype.scalar_name} for the destination and "
                           f"{value.dtype.scalar_name} for the source.")


def assign(x, index, value):
    """``x[index] = value`` on x's array (no graph), index read as torch reads it."""
    data = x._array()
    basic, adv, one_mask = resolve(data.shape, _setitem_index(index))
    _check_put_dtype(adv, one_mask, value, x.dtype)
    if isinstance(value, Tensor):
        value = value._data
    region = data[basic].shape if adv is None else data[basic][adv].shape
    _write(data, basic, adv, value, region)


def setitem(x, index, value):
    """``x[index] = value``: in place for the value; recorded as CopySlices when grads flow."""
    basic, adv, one_mask = resolve(x.shape, _setitem_index(index))
    _check_put_dtype(adv, one_mask, value, x.dtype)
    given = _operand(value, x.dtype) if not isinstance(value, Tensor) else value
    data = x._array()
    positions = np.arange(data.size).reshape(data.shape)[basic]
    if adv is not None:
        positions = positions[adv]
    new = data.copy()
    _write(new, basic, adv, given._data, positions.shape)  # errors name the given dtype
    v = given if given.dtype is x.dtype else to_dtype(given, x.dtype)
    region = positions.shape
    flat = positions.reshape(-1)
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


# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {name: globals()[name] for name in __all__}

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"gather": "one", "index_select": "one"}
