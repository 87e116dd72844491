"""Movement ops: views (one strided map covers them all), reshapes, cat/stack, split, repeat.

A view's backward needs, for every output element, the flat index of its source element in
the input. That map is ``offset + sum(coord * stride)`` and NumPy computes it for us: the same
view function is applied to a dummy array whose strides are the input's C-order element
strides (item size 1), and the dummy view's offset and strides are read back. Nothing reads
the dummy's memory; only pointer arithmetic happens.
"""

import numpy as np

from ... import dtypes
from ...core import grad_mode
from ...engine.record import note_view, record, record_array, view_map
from ...engine.registry import BY_NAME, Sample, defop
from ...factories import _int_sizes
from ...tensor import Tensor, _make  # noqa: F401
from ..elementwise.pointwise import to_dtype

_VIEW = "view_bw"


def _views(call, shapes, kws=({},)):
    return [Sample((s,), kw, call) for s in shapes for kw in kws]


VIEW = defop("view", "ViewBackward0", 1, replay="reshape_fw", kernel="reshape_bw",
             samples=_views("x0.reshape(**kw)", [(3, 4)], ({"shape": (4, 3)}, {"shape": (-1,)}))
             + _views("x0.view(-1)", [(), (2, 3)]) + _views("x0.flatten()", [(2, 3, 2)]))
# torch.Tensor(t): a tensor sharing t's memory, in t's shape
ALIAS = defop("alias", "AliasBackward0", 1, replay="reshape_fw", kernel="reshape_bw",
              samples=_views("lib.Tensor(x0)", [(2, 3), ()]))
UNSAFE_VIEW = defop("unsafe_view", "UnsafeViewBackward0", 1, replay="reshape_fw",
                    kernel="reshape_bw",
                    samples=_views("x0.t().reshape(-1)", [(3, 4)]))
SQUEEZE = defop("squeeze", "SqueezeBackward0", 1, replay="reshape_fw", kernel="reshape_bw",
                samples=_views("x0.squeeze()", [(3, 1, 2), (1,)]))
SQUEEZE_DIM = defop("squeeze_dim", "SqueezeBackward1", 1, replay="reshape_fw", kernel="reshape_bw",
                    samples=_views("x0.squeeze(1)", [(3, 1, 2)]))
SQUEEZE_DIMS = defop("squeeze_dims", "SqueezeBackward2", 1, replay="reshape_fw",
                     kernel="reshape_bw",
                     samples=_views("x0.squeeze((0, 2))", [(1, 3, 1)]))
UNSQUEEZE = defop("unsqueeze", "UnsqueezeBackward0", 1, replay="view_fw", kernel=_VIEW,
                  samples=_views("x0.unsqueeze(-1)", [(), (3,), (2, 3)]))
PERMUTE = defop("permute", "PermuteBackward0", 1, replay="view_fw", kernel=_VIEW,
                samples=_views("x0.permute(2, 0, 1)", [(2, 3, 4)]) + _views("x0.T", [(2, 3)]))
TRANSPOSE = defop("transpose", "TransposeBackward0", 1, replay="view_fw", kernel=_VIEW,
                  samples=_views("x0.transpose(0, -1)", [(2, 3), (2, 3, 4)]))
T = defop("t", "TBackward0", 1, replay="view_fw",
          kernel=_VIEW, samples=_views("x0.t()", [(2, 3), (3,)]))
EXPAND = defop("expand", "ExpandBackward0", 1, replay="expand_fw", kernel="expand_bw",
               samples=_views("x0.expand(2, 3, 4)", [(3, 1), (4,), ()])
               + _views("lib.broadcast_to(x0, (2, 3))", [(3,)]))
SELECT = defop("select", "SelectBackward0", 1, replay="view_fw", kernel=_VIEW,
               samples=_views("x0[1]", [(3,), (3, 4)]) + _views("x0[..., -1]", [(2, 3, 4)]))
SLICE = defop("slice", "SliceBackward0", 1, replay="view_fw", kernel=_VIEW,
              samples=_views("x0[1:3]", [(5,), (4, 3)]) + _views("x0[::2, 1:]", [(5, 3)])
              + _views("x0.narrow(0, 1, 2)", [(4, 2)]))
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
# a view whose base was changed in place after the view was recorded, recorded again over
# the base's current node (record.fresh_view), as torch regenerates its grad_fn
AS_STRIDED = defop("as_strided", "AsStridedBackward0", 1, replay="view_fw", kernel=_VIEW,
                   samples=_views("(y := x0 * 1, v := y[1:], y.mul_(2.0), v)[3]", [(4,)])
                   + _views("(y := x0 * 1, v := y.t()[1:], y.mul_(2.0), v * 1)[3]", [(2, 3)])
                   + _views("(y := x0 * 1, v := y.expand(2, 3), y.mul_(2.0), v)[3]", [(3,)]))
STACK = defop("stack", "StackBackward0", -1, replay="stack_fw", kernel="stack_bw",
              samples=[Sample(((2, 3), (2, 3)), {}, "lib.stack([x0, x1])"),
                       Sample(((3,), (3,), (3,)), {}, "lib.stack([x0, x1, x2], dim=1)")])


def _view_numpy(g, xs, gxs, iat, fat):
    """A view never repeats an element: add g through the same strided view of the input's
    gradient, one vectorized NumPy pass (no index array)."""
    gx = gxs[0]
    if gx is None or gx.size == 0:
        return
    flat = gx.reshape(-1)
    item = flat.itemsize
    view = np.lib.stride_tricks.as_strided(flat[int(iat[0]):], shape=g.shape,
                                           strides=tuple(int(st) * item for st in iat[1:]))
    view += g


for _op in (UNSQUEEZE, PERMUTE, TRANSPOSE, T, SELECT, SLICE, SPLIT, SPLIT_SIZES, UNBIND):
    _op.numpy_bw = _view_numpy


def as_view(op, x, fn, *, map_shape=None, same_start=False, copy=False, offset=None):
    """Record ``fn`` (a NumPy view function) applied to ``x`` as the view op ``op``; with
    ``copy``, its result is a contiguous copy and no view of ``x`` (as torch's _unsafe_view
    of a temporary: in-place ops on it are then ordinary ones). ``offset``: a function of
    ``x``'s shape giving where the view starts in C order, where the caller knows it."""
    data = x._array()
    out = fn(data)
    if op.kernel == _VIEW and (x._requires_grad and grad_mode.state.enabled):
        iat = view_map(data.shape, fn, data, out, same_start,
                       None if offset is None or not out.size else offset(data.shape))
    else:
        iat = ()  # not recorded: no map needed
    if copy:
        return record_array(op, np.ascontiguousarray(out), x, None, iat)
    t = record_array(op, out, x, None, iat)
    note_view(t, x, fn)
    return t


def _wrap(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _infer(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([s for s in shape if s != -1]))
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return _int_sizes(shape)


def reshape(input, *args, shape=None):
    """``x`` in another shape with the same elements (a view when possible).

    Same as ``torch.reshape``.
    """
    shape = _infer(_shape_args(args if shape is None else (shape,)), input.numel())
    data = input._array()
    out = data.reshape(shape)
    copied = out.size and not np.shares_memory(out, data)
    t = record(UNSAFE_VIEW if copied else VIEW, out, (input,))
    if not copied:
        note_view(t, input, lambda a: a.reshape(shape))
    return t


def view(x, *args, size=None):
    """This tensor's elements in another shape, sharing memory; fails where that needs a copy.

    Same as ``torch.Tensor.view``.

    Args:
        x: the tensor (the tensor itself, as a method).
        *args: the new shape, as ints or one tuple; one entry may be -1 (inferred).
        size: the new shape as a keyword, instead of ``*args``.

    Returns:
        A view of ``x`` in the new shape (its changes are ``x``'s).
    """
    shape = _infer(_shape_args(args if size is None else (size,)), x.numel())
    data = x._array()
    probe = data.view()
    try:
        probe.shape = shape  # raises where NumPy (and torch) would need a copy
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.") from None
    return as_view(VIEW, x, lambda a: a.reshape(shape))


def alias(x):
    """A new tensor sharing ``x``'s memory, shape and strides (``torch.Tensor(x)``)."""
    return as_view(ALIAS, x, _same_view)


def _same_view(a):
    return a.view()


def flatten(input, start_dim=0, end_dim=-1):
    """``x`` with the dimensions ``start_dim`` to ``end_dim`` merged into one.

    Same as ``torch.flatten``.
    """
    s, e = _wrap(start_dim, input.ndim), _wrap(end_dim, input.ndim)
    if input.ndim == 0:
        return reshape(input, 1)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input.shape[:s] + (int(np.prod(input.shape[s:e + 1])),) + input.shape[e + 1:]
    return reshape(input, shape) if s != e else input


def unflatten(input, dim, sizes):
    """``x`` with the dimension ``dim`` split into the dimensions ``sizes``.

    Same as ``torch.unflatten``.
    """
    d = _wrap(dim, input.ndim)
    if not len(sizes):
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = int(np.prod([s for s in sizes if s != -1]))
    if list(sizes).count(-1) <= 1 and (known != input.shape[d] if -1 not in sizes else
                                       known == 0 or input.shape[d] % known):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {d} ({input.shape[d]}) in the input tensor")
    sizes = _infer(sizes, input.shape[d])
    return reshape(input, input.shape[:d] + sizes + input.shape[d + 1:])


def squeeze(input, dim=None):
    """``x`` without its dimensions of size 1 (only ``dim``, if given).

    Same as ``torch.squeeze``.
    """
    if dim is None:
        return as_view(SQUEEZE, input, lambda a: a.reshape([s for s in a.shape if s != 1]))
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:  # checked in turn, as torch does
        d = _wrap(d, input.ndim)  # a 0-d tensor takes dims -1 and 0 only
        if d in dims:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        dims.append(d)
    keep = [s for i, s in enumerate(input.shape) if not (i in dims and s == 1)]
    return as_view(SQUEEZE_DIM if isinstance(dim, int) else SQUEEZE_DIMS, input,
                   lambda a: a.reshape(keep))


def unsqueeze(input, dim):
    """``x`` with a dimension of size 1 inserted at ``dim``.

    Same as ``torch.unsqueeze``.
    """
    d = _wrap(dim, input.ndim + 1)
    return as_view(UNSQUEEZE, input, lambda a: np.expand_dims(a, d))


def permute(x, *dims):
    """``x`` with its dimensions in the order ``dims``.

    Same as ``torch.permute``.
    """
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_args(dims)
    if len(dims) != x.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not "
            f"equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap(d, x.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return as_view(PERMUTE, x, lambda a: a.transpose(dims))


def transpose(input, dim0, dim1):
    """``x`` with the dimensions ``dim0`` and ``dim1`` swapped.

    Same as ``torch.transpose``.
    """
    # a 0-d tensor takes dims -1 and 0 only
    d0, d1 = _wrap(dim0, input.ndim), _wrap(dim1, input.ndim)
    if input.ndim == 0:
        return as_view(TRANSPOSE, input, lambda a: a)
    return as_view(TRANSPOSE, input, lambda a: np.swapaxes(a, d0, d1))


def t(input):
    """The transpose of a matrix; a 0-d or 1-d tensor as it is.

    Same as ``torch.t``.
    """
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    data = input._data
    if type(data) is np.ndarray and data.ndim == 2 and data.flags.c_contiguous:
        return _matrix_transpose(T, input, data)
    return as_view(T, input, _transposed, same_start=True)


def _transposed(a):
    return a.T


def reverse_dims(x):
    """The .T property: all dims reversed."""
    data = x._data
    if type(data) is np.ndarray and data.ndim == 2 and data.flags.c_contiguous:
        return _matrix_transpose(PERMUTE, x, data)  # a weight's .T, in the fewest steps
    return as_view(PERMUTE, x, _transposed, same_start=True)


def _matrix_transpose(op, x, data):
    """``op`` (PERMUTE or T) of ``x``, whose ``data`` is a C-ordered matrix: its view map
    (start 0, strides 1 and the row length) is known without reading the view."""
    t = record_array(op, data.T, x, None, (0, 1, data.shape[1]) if x._requires_grad and
                     grad_mode.state.enabled else ())
    note_view(t, x, _transposed)
    return t


def _sizes_argument(op, name, args, kw):
    """The sizes of ``x.op(*args)`` or ``x.op(name=...)``: torch's TypeError for neither."""
    if kw is not None:
        if args:
            raise TypeError(f"{op}() got multiple values for argument '{name}'")
        args = (kw,)
    if not args:
        raise TypeError(f'{op}() missing 1 required positional arguments: "{name}"')
    return _shape_args(args)


def expand(x, *sizes, size=None):
    """A view of this tensor with its size-1 dimensions repeated to ``sizes`` (-1: unchanged).

    Same as ``torch.Tensor.expand``.
    """
    target = expanded_shape(x, _sizes_argument("expand", "size", sizes, size))
    return as_view(EXPAND, x, lambda a: np.broadcast_to(a, target))


def expanded_shape(x, sizes):
    """The shape ``x.expand(*sizes)`` has, or torch's error for it."""
    if len(sizes) < x.ndim:
        raise RuntimeError(f"expand(torch.{x.dtype.scalar_name}Tensor{{{list(x.shape)}}}, "
                           f"size={list(sizes)}): "
                           "the number of sizes provided ("
                           f"{len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({x.ndim})")
    lead = len(sizes) - x.ndim
    target = [0] * len(sizes)
    for i in range(len(sizes) - 1, -1, -1):  # torch checks from the last dim backwards
        s = sizes[i]
        cur = x.shape[i - lead] if i >= lead else 1
        if s == -1:
            if i < lead:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            s = cur
        if cur != 1 and s != cur:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(x.shape)}")
        target[i] = s
    # last, as torch (whose own error here is an overflow of the element count)
    if any(s < 0 for s in target):
        raise RuntimeError(f"expand: the expanded size of the tensor "
                           f"({next(s for s in target if s < 0)}) must be -1 or non-negative.  "
                           f"Target sizes: {list(sizes)}")
    return tuple(target)


def broadcast_to(input, size):
    """``x`` broadcast to ``shape``: ``x.expand(shape)``.

    Same as ``torch.broadcast_to``.

    Args:
        input: the tensor to broadcast.
        size: the shape to broadcast to (-1 keeps a dimension's size).

    Returns:
        A view of ``input`` in that shape (broadcast dimensions have stride 0).
    """
    return expand(input, size=size)


def expand_as(x, other):
    """This tensor expanded to ``other``'s shape: ``self.expand(other.shape)``.

    Same as ``torch.Tensor.expand_as``.
    """
    return expand(x, size=other.shape)


def narrow(input, dim, start, length):
    # torch's checks: a Python slice would wrap a negative start or clip an overlong length
    """The slice ``start:start + length`` of ``x`` along ``dim``.

    Same as ``torch.narrow``.
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap(dim, input.ndim)
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    n = input.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    start = start + n if start < 0 else start
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    idx = (slice(None),) * d + (slice(start, start + length),)
    return as_view(SLICE, input, lambda a: a[idx])


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


def contiguous(x):
    """This tensor if it is C-contiguous, else a C-contiguous copy.

    Same as ``torch.Tensor.contiguous``.
    """
    data = x._array()
    if data.flags.c_contiguous:
        return x
    # clone's forward keeps the input's layout (as torch's clone does): copy in C order
    return record(BY_NAME["clone"], np.array(data, order="C"), (x,))
