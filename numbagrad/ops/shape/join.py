"""Joining and splitting: cat, stack, split, chunk, unbind, repeat (split's and unbind's
pieces are views of their input, as torch makes them)."""

import numpy as np

from ... import dtypes
from ...core import grad_mode
from ...engine.record import note_view, record, record_array, view_map
from ...engine.registry import Sample, defop
from ...tensor import Tensor, _make  # noqa: F401
from ..elementwise.pointwise import to_dtype
from .movement import _VIEW, _sizes_argument, _view_numpy, _views, _wrap, as_view

# the package's functions (numbagrad star-imports them); each is a Tensor method too, but for
# _NO_METHOD's
__all__ = ["cat", "stack", "split", "chunk", "unbind", "repeat"]
# torch has these as functions only
_NO_METHOD = ("cat", "stack")

SPLIT = defop("split", "SplitBackward0", 1, replay="view_fw", kernel=_VIEW,
              samples=_views("x0.split(2)[1]", [(5, 2)]) + _views("x0.chunk(2, 1)[0]", [(2, 5)]))
SPLIT_SIZES = defop("split_sizes", "SplitWithSizesBackward0", 1, replay="view_fw", kernel=_VIEW,
                    samples=_views("x0.split([1, 3])[1]", [(4, 2)]))
UNBIND = defop("unbind", "UnbindBackward0", 1, replay="view_fw", kernel=_VIEW,
               samples=_views("x0.unbind(1)[2]", [(2, 4)]) + _views("x0.unbind(0)[1]", [(3,)]))
REPEAT = defop("repeat", "RepeatBackward0", 1, replay="repeat_fw", kernel="repeat_bw",
               samples=_views("x0.repeat(2, 1, 3)", [(2, 3), (3,)]))
CAT = defop("cat", "CatBackward0", -1, replay="cat_fw", kernel="cat_bw",
            samples=[Sample(((2, 3), (1, 3)), {}, "lib.cat([x0, x1])"),
                     Sample(((2, 3), (2, 2), (2, 1)), {}, "lib.cat([x0, x1, x2], dim=1)")])
STACK = defop("stack", "StackBackward0", -1, replay="stack_fw", kernel="stack_bw",
              samples=[Sample(((2, 3), (2, 3)), {}, "lib.stack([x0, x1])"),
                       Sample(((3,), (3,), (3,)), {}, "lib.stack([x0, x1, x2], dim=1)")])
for _op in (SPLIT, SPLIT_SIZES, UNBIND):
    _op.numpy_bw = _view_numpy


def _split_at(x, sizes, d, op):
    data = x._data
    if type(data) is not np.ndarray or not data.flags.c_contiguous:
        outs, start = [], 0
        for s in sizes:
            idx = (slice(None),) * d + (slice(start, start + s),)
            outs.append(as_view(op, x, lambda a, idx=idx: a[idx]))
            start += s
        return tuple(outs)
    # C-ordered: each piece's map (start, then its strides, in elements) is known without
    # reading addresses (view_map's general case costs microseconds a piece)
    mapped = x._requires_grad and grad_mode.state.enabled
    item = data.itemsize
    step = data.strides[d] // item
    outs, start = [], 0
    for s in sizes:
        idx = (slice(None),) * d + (slice(start, start + s),)
        out = data[idx]
        if not mapped:
            iat = ()
        elif out.size:
            iat = (start * step, *[st // item for st in out.strides])
        else:  # (where NumPy starts an empty view is its own business)
            iat = view_map(data.shape, None, data, out)
        t = record_array(op, out, x, None, iat)
        note_view(t, x, lambda a, idx=idx: a[idx])
        outs.append(t)
        start += s
    return tuple(outs)


def split(tensor, split_size_or_sections, dim=0):
    """``x`` split along ``dim`` into pieces of a given size, or of the sizes listed.

    Same as ``torch.split``.
    """
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s < 0:  # (torch checks it before the dim)
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
        d = _wrap(dim, tensor.ndim)
        n = tensor.shape[d]
        if s == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        sizes = [min(s, n - i) for i in range(0, n, s)] if n else [0]
        return _split_at(tensor, sizes, d, SPLIT)
    d = _wrap(dim, tensor.ndim)
    n = tensor.shape[d]
    sizes = list(split_size_or_sections)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={sizes}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {dim}), but got split_sizes={sizes}")
    return _split_at(tensor, sizes, d, SPLIT_SIZES)


def chunk(input, chunks, dim=0):
    """``x`` split into ``chunks`` pieces of equal size along ``dim`` (the last smaller).

    Same as ``torch.chunk``.
    """
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap(dim, input.ndim)
    n = input.shape[d]
    if not n:  # torch: ``chunks`` empty parts
        return _split_at(input, [0] * chunks, d, SPLIT_SIZES)
    return split(input, -(-n // chunks), d)


def unbind(input, dim=0):
    """The slices of ``x`` along ``dim``, as a tuple, without that dimension.

    Same as ``torch.unbind``.
    """
    d = _wrap(dim, input.ndim)
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    # (the Ellipsis keeps NumPy from returning a scalar copy for 0-d parts: a view is needed)
    return tuple(as_view(UNBIND, input, lambda a, i=i: a[(slice(None),) * d + (i, Ellipsis)])
                 for i in range(input.shape[d]))


def repeat(x, *sizes, repeats=None):
    """``x`` tiled ``sizes[i]`` times along each dimension ``i``.

    Same as ``torch.Tensor.repeat``.

    Args:
        x: the tensor (the tensor itself, as a method).
        *sizes: how many times to repeat along each dimension, as ints or one tuple; at
            least ``x.ndim`` of them (extra leading ones add dimensions).
        repeats: the same as a keyword, instead of ``*sizes``.

    Returns:
        A new tensor (a copy, not a view).
    """
    sizes = _sizes_argument("repeat", "repeats", sizes, repeats)
    if len(sizes) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    full = (1,) * (len(sizes) - x.ndim) + x.shape
    out = [a * b for a, b in zip(full, sizes)]
    # torch checks only the result's sizes: a negative count of an empty dim gives 0
    if any(n < 0 for n in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{next(n for n in out if n < 0)}: {out}")
    sizes = [max(r, 0) for r in sizes]
    out = np.tile(x._array().reshape(full), sizes)
    if not out.flags.c_contiguous:  # C-ordered, as torch's (NumPy's copy keeps x's layout)
        out = np.ascontiguousarray(out)
    return record(REPEAT, out, (x,))


def _same_dtype(tensors):
    dt = None
    for t in tensors:
        dt = dtypes.promote(dt, t.dtype)
    return [to_dtype(t, dt) for t in tensors]


def cat(tensors, dim=0):
    """The tensors joined along the existing dimension ``dim``.

    Same as ``torch.cat`` (aliases ``concat``, ``concatenate``).
    """
    if isinstance(tensors, Tensor):
        raise TypeError("cat(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        "Tensor")
    tensors = [t for t in tensors]
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    # torch skips legacy empty 1-d tensors in the shape checks, but keeps them as inputs
    # (their gradient is empty) and in the type promotion
    legacy = [t.ndim == 1 and t.shape[0] == 0 for t in tensors]
    parts = [t for t, skip in zip(tensors, legacy) if not skip]
    if not parts:
        parts = _same_dtype(tensors)
        return record(CAT, np.concatenate([t._array() for t in parts]), parts,
                      (0,) * (1 + len(parts)))
    ref = parts[0]
    d = _wrap(dim, ref.ndim)
    for i, t in enumerate(tensors):  # (the message counts the skipped ones too)
        if legacy[i]:
            continue
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and "
                               f"{t.ndim}")
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref.shape[k]} but got size {t.shape[k]} for "
                                   f"tensor number {i} in the list.")
    tensors = _same_dtype(tensors)
    arrays = [t._array() for t, skip in zip(tensors, legacy) if not skip]
    shape = ref.shape[:d] + (sum(a.shape[d] for a in arrays),) + ref.shape[d + 1:]
    # (a legacy empty input, as any input not channels-last, makes torch's result C-ordered)
    out = _joined(np.concatenate, arrays, d, shape, None if any(legacy) else shape)
    offsets = np.cumsum([0] + [0 if skip else t.shape[d] for t, skip in zip(tensors, legacy)])
    return record(CAT, out, tensors, (d, *offsets[:-1].tolist()))


def _joined(join, arrays, axis, shape, cat_shape):
    """``join(arrays, axis)`` (np.concatenate, np.stack) laid out as torch's cat: channels-last
    when every input is a channels-last 4-d tensor (stack: the cat along that dim, of shape
    ``cat_shape``, viewed), else C-ordered. NumPy's result follows strided inputs its own way."""
    if all(a.flags.c_contiguous for a in arrays):
        return join(arrays, axis=axis)
    out = np.empty(shape, arrays[0].dtype)
    if cat_shape is not None and len(cat_shape) == 4 and all(map(_channels_last, arrays)):
        n, c, h, w = cat_shape
        out = np.empty((n, h, w, c), arrays[0].dtype).transpose(0, 3, 1, 2)
        out.shape = shape  # (stack splits one dim in two: a view)
    return join(arrays, axis=axis, out=out)


def _channels_last(a):
    """torch's test of a 4-d tensor's strides for the channels-last format (the order
    C, W, H, N from the innermost; ambiguous cases, a size-1 C, read as C order)."""
    if a.ndim != 4:
        return False
    strides = [st // a.itemsize for st in a.strides]
    if strides[1] == 0:
        return False
    low = 0
    for d in (1, 3, 2, 0):
        if a.shape[d] == 0 or strides[d] < low or d == 0 and low == strides[1]:
            return False
        low = strides[d] * max(a.shape[d], 1)
    return True


def stack(tensors, dim=0):
    """The tensors, all of one shape, joined along a new dimension ``dim``.

    Same as ``torch.stack``.
    """
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at "
                               f"entry {i}")
    d = _wrap(dim, tensors[0].ndim + 1)
    parts = _same_dtype(tensors)
    shape = parts[0].shape[:d] + (len(parts),) + parts[0].shape[d:]
    arrays = [t._array() for t in parts]
    # (torch's stack along an existing dim is a cat into a view of the result)
    cat_shape = None if d == arrays[0].ndim else \
        arrays[0].shape[:d] + (len(arrays) * arrays[0].shape[d],) + arrays[0].shape[d + 1:]
    out = _joined(np.stack, arrays, d, shape, cat_shape)
    return record(STACK, out, parts, (d,))


# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {name: globals()[name] for name in __all__ if name not in _NO_METHOD}

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"cat": "one", "concat": "one", "concatenate": "one", "stack": "one"}
