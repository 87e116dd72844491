"""How torch reads an index (``x[index]`` and ``x[index] = v``): as a NumPy basic index (ints,
slices, None) applied first, then an advanced one (integer arrays) on that view, with torch's
checks, in torch's order, and its messages. NumPy's own reading differs: it takes ints next to
arrays as arrays, a nested list as one array, and checks indices into an empty result."""

import warnings

import numpy as np

from ...tensor import Tensor

_TOO_MANY = "too many indices for tensor of dimension {}"
_NUMBERS = object()  # what _first_odd finds in a list of numbers only
_ONE_BYTE = bytes(1)  # the buffer of a stand-in array of x's shape, all strides 0
_SEQUENCE_AS_TUPLE = ("Using a non-tuple sequence for multidimensional indexing is deprecated "
                      "in torch; numbagrad reads x[seq] as x[tuple(seq)], as torch 2.13 does: "
                      "write x[tuple(seq)]")


def resolve(shape, index):
    """``x[index]`` as ``x[basic][advanced]`` for an x of this shape, checked as torch checks it,
    and whether the advanced part is one boolean mask (torch assigns through it as masked_fill_).

    ``basic`` is a NumPy basic index ending in Ellipsis (so a view, never a scalar copy);
    ``advanced`` is None, or a tuple of full slices, integer arrays and boolean masks that NumPy
    reads as torch does once checked (every index in range; zeros when the result is empty, as
    torch checks no index then)."""
    nd = len(shape)
    if nd == 0:
        _check_lone_on_0d(index)
    items, count = _items(index)
    if count > nd:
        raise IndexError(_TOO_MANY.format(nd))
    spare = nd - count  # the dims an ellipsis covers
    items = _drop_trailing_ellipses(items)
    if spare and sum(i is Ellipsis for i in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    basic, arrays = [], []  # arrays: (dim of the basic view, index array)
    dim = view_dim = 0  # the dim of x, and of x[basic], the next item addresses
    for pos, i in enumerate(items):
        if i is Ellipsis:
            basic += [slice(None)] * spare
            dim += spare
            view_dim += spare
        elif i is None:
            basic.append(None)
            view_dim += 1
        elif isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype == np.bool_:
            # a bool: a new dim of size 1, indexed by [0] (True) or [] (False)
            basic.append(None)
            arrays.append((view_dim, np.zeros(int(bool(i)), np.int64)))
            view_dim += 1
        elif dim >= nd:  # past a nested bool list, which counted as one dim
            raise IndexError(_TOO_MANY.format(nd))
        elif isinstance(i, slice):
            _check_step(i.step)
            basic.append(i)
            dim += 1
            view_dim += 1
        elif isinstance(i, int):
            n = shape[dim]
            if not -n <= i < n:  # torch names the item's position in the index
                raise IndexError(f"index {i} is out of bounds for dimension {pos} with size {n}")
            basic.append(i)
            dim += 1
        else:
            k = i.ndim if i.dtype == np.bool_ else 1
            if dim + k > nd:  # a nested bool list counts one dim until read as a mask
                raise IndexError(_TOO_MANY.format(nd))
            basic += [slice(None)] * k
            arrays.append((view_dim, i))
            dim += k
            view_dim += k
    basic = tuple(basic) + (Ellipsis,)
    if not arrays:
        return basic, None, False
    if any(a.dtype.kind not in "bi" for _, a in arrays):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    view = np.ndarray(shape, np.int8, _ONE_BYTE, strides=(0,) * nd)[basic].shape
    one_mask = len(arrays) == 1 and arrays[0][1].dtype == np.bool_
    return basic, _advanced(view, arrays), one_mask


def _check_lone_on_0d(index):
    """torch's own messages for a lone int or slice (not in a tuple) on a 0-d tensor."""
    if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
        if index == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"index {index} is out of bounds for dimension 0 with size 0")
    if isinstance(index, slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def _advanced(view, arrays):
    """The advanced part, on the basic view's shape: torch's mask, broadcast, empty-dim and
    bounds checks, in that order. torch reads a k-dim mask as its k nonzero() index arrays;
    NumPy reads a mask so too, faster: masks stay masks."""
    shapes, sizes, ints = [], [], []  # per index array (masks expanded); ints: (place, array)
    width = {}  # dim -> how many dims the index there covers
    for d, a in arrays:
        if a.dtype != np.bool_:
            ints.append((len(shapes), a))
            shapes.append(a.shape)
            sizes.append(view[d])
            width[d] = 1
            continue
        for j, n in enumerate(a.shape):
            if n != view[d + j]:
                raise IndexError(f"The shape of the mask {list(a.shape)} at index {j} does not "
                                 f"match the shape of the indexed tensor {list(view)} at index "
                                 f"{d + j}")
        shapes += [(int(np.count_nonzero(a)),)] * a.ndim
        sizes += list(a.shape)
        width[d] = a.ndim
    try:
        b = np.broadcast_shapes(*shapes)
    except ValueError:
        listed = ", ".join(str(list(s)) for s in shapes)
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {listed}") from None
    if 0 in sizes and 0 not in b:  # no index is valid for an empty dim
        raise IndexError("index is out of bounds for dimension with size 0")
    rest = [n for k, n in enumerate(view) if not any(d <= k < d + w for d, w in width.items())]
    empty = 0 in rest or 0 in b  # torch's kernel then reads no index
    if not empty:
        _check_bounds(ints, [sizes[j] for j, _ in ints], b)
    adv, d = [], 0
    last = max(d + w for d, w in width.items())
    by_dim = dict(arrays)
    while d < last:
        if d not in width:
            adv.append(slice(None))
            d += 1
            continue
        adv += [np.zeros(b, np.int64)] * width[d] if empty else [by_dim[d]]
        d += width[d]
    return tuple(adv)


def _check_bounds(ints, sizes, b):
    """torch's kernel checks the indices of each result element in turn (C order), the
    index arrays in order; it names an array by its place among them (masks expanded)."""
    if all(a.size == 0 or (-n <= a.min() and a.max() < n) for (_, a), n in zip(ints, sizes)):
        return
    bad = [np.broadcast_to((a < -n) | (a >= n), b) for (_, a), n in zip(ints, sizes)]
    first = np.flatnonzero(np.logical_or.reduce(bad))[0]
    for (place, a), n, m in zip(ints, sizes, bad):
        if m.flat[first]:
            value = int(np.broadcast_to(a, b).flat[first])
            raise IndexError(f"index {value} is out of bounds for dimension {place} with "
                             f"size {n}")


def _check_step(step):
    if step is not None and step <= 0:
        if step == 0:  # Python's own message: torch unpacks the slice first
            raise ValueError("slice step cannot be zero")
        raise ValueError("step must be greater than zero")


def _items(index):
    """The index as a list of ints, slices, None, Ellipsis and arrays (a 0-d bool array for
    a bool), and the number of dims torch counts it to address."""
    out, count = [], 0
    for i in _as_tuple(index):
        if isinstance(i, (Tensor, np.ndarray)):
            a = i._array() if isinstance(i, Tensor) else i
            if a.ndim == 0 and a.dtype.kind == "i":  # a 0-d integer tensor selects, as an int
                out.append(int(a))
                count += 1
                continue
            out.append(a)
            count += a.ndim if a.dtype == np.bool_ else 1
        elif isinstance(i, bool):
            out.append(np.asarray(i))
        elif isinstance(i, (int, np.integer)):
            out.append(int(i))
            count += 1
        elif i is None or i is Ellipsis:
            out.append(i)
        elif isinstance(i, slice):
            out.append(i)
            count += 1
        elif isinstance(i, (list, tuple)):
            out.append(_list_index(i))
            count += 1
        elif isinstance(i, str):  # torch's TypeError (it reads the str as tensor data)
            raise TypeError("only integers, slices, ellipsis, None and long, int, byte or bool "
                            "tensors are valid indices (got str)")
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {_type_name(i)})")
    return out, count


def _as_tuple(index):
    """torch's reading of a list: as a tuple of indices when it is short and holds a tensor, a
    sequence, a slice, None or Ellipsis (NumPy's old rule), else as one index tensor."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(i, (Tensor, np.ndarray, list, tuple, slice, str)) or i is None or
            i is Ellipsis for i in index):
        warnings.warn(_SEQUENCE_AS_TUPLE, UserWarning, stacklevel=6)  # the caller of x[seq]
        return tuple(index)
    return (index,)


def _drop_trailing_ellipses(index):
    """torch reads an ellipsis after the first as covering no dim when only None or
    ellipses follow it (``x[..., 0, ...]`` is ``x[..., 0]``)."""
    first = next((k for k, i in enumerate(index) if i is Ellipsis), None)
    if first is None:
        return index
    keep = list(index[:first + 1])
    rest = index[first + 1:]
    for k, i in enumerate(rest):
        if i is Ellipsis and all(j is None or j is Ellipsis for j in rest[k:]):
            continue
        keep.append(i)
    return keep


def _list_index(seq):
    """A list in an index, as torch makes a tensor of it: all bools make a mask, anything
    else an int64 array (floats truncated)."""
    try:
        a = np.asarray(seq)
    except ValueError:  # ragged
        a = None
    if a is None or a.dtype.kind not in "bif":
        sizes = _list_sizes(seq)
        _check_rectangular(seq, sizes, 0)  # raises torch's error, else this is not data
        odd = _first_odd(seq)
        raise RuntimeError("Could not infer dtype of "
                           f"{'a list index' if odd is _NUMBERS else type(odd).__name__}")
    if a.dtype == np.bool_:
        return a
    if a.dtype.kind == "f" and a.size and not (np.isfinite(a).all() and
                                                (np.abs(a) < 2.0 ** 63).all()):
        raise RuntimeError("value cannot be converted to type int64 without overflow")
    return a.astype(np.int64)


def _list_sizes(seq):
    """torch takes a nested list's shape from its first elements."""
    sizes = []
    while isinstance(seq, (list, tuple)):
        sizes.append(len(seq))
        if not seq:
            break
        seq = seq[0]
    return sizes


def _check_rectangular(seq, sizes, dim):
    if dim == len(sizes):
        if isinstance(seq, (list, tuple)):
            raise TypeError(f"'{type(seq).__name__}' object cannot be interpreted as an integer")
        if isinstance(seq, str):
            raise TypeError("new(): invalid data type 'str'")
        return
    if not isinstance(seq, (list, tuple)):
        raise TypeError("not a sequence")
    if len(seq) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(seq)})")
    for s in seq:
        _check_rectangular(s, sizes, dim + 1)


def _first_odd(seq):
    """The first element of a nested list that is neither a number nor a list (_NUMBERS if
    there is none)."""
    for s in seq:
        if isinstance(s, (list, tuple)):
            odd = _first_odd(s)
            if odd is not _NUMBERS:
                return odd
        elif not isinstance(s, (int, float, np.number, np.bool_, Tensor)):
            return s
    return _NUMBERS


def _type_name(obj):
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
