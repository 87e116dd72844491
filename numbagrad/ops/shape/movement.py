"""Movement ops: views (one strided map covers them all) and reshapes; joining and splitting
are join.py's.

A view's backward needs, for every output element, the flat index of its source element in
the input. That map is ``offset + sum(coord * stride)`` and NumPy computes it for us: the same
view function is applied to a dummy array whose strides are the input's C-order element
strides (item size 1), and the dummy view's offset and strides are read back. Nothing reads
the dummy's memory; only pointer arithmetic happens.
"""

import numpy as np

from ...core import grad_mode
from ...engine.record import note_view, record, record_array, view_map
from ...engine.registry import BY_NAME, Sample, defop
from ...factories import _int_sizes
from ...tensor import Tensor, _make  # noqa: F401

# the package's functions (numbagrad star-imports them); each is a Tensor method too
__all__ = ["reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t",
           "narrow", "broadcast_to"]
# torch has these as Tensor methods only
_METHOD_ONLY = ("view", "expand", "expand_as", "contiguous")

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
# a view whose base was changed in place after the view was recorded, recorded again over
# the base's current node (record.fresh_view), as torch regenerates its grad_fn
AS_STRIDED = defop("as_strided", "AsStridedBackward0", 1, replay="view_fw", kernel=_VIEW,
                   samples=_views("(y := x0 * 1, v := y[1:], y.mul_(2.0), v)[3]", [(4,)])
                   + _views("(y := x0 * 1, v := y.t()[1:], y.mul_(2.0), v * 1)[3]", [(2, 3)])
                   + _views("(y := x0 * 1, v := y.expand(2, 3), y.mul_(2.0), v)[3]", [(3,)]))


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


for _op in (UNSQUEEZE, PERMUTE, TRANSPOSE, T, SELECT, SLICE):  # (and join.py's split views)
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


def contiguous(x):
    """This tensor if it is C-contiguous, else a C-contiguous copy.

    Same as ``torch.Tensor.contiguous``.
    """
    data = x._array()
    if data.flags.c_contiguous:
        return x
    # clone's forward keeps the input's layout (as torch's clone does): copy in C order
    return record(BY_NAME["clone"], np.array(data, order="C"), (x,))


# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {name: globals()[name] for name in __all__ + list(_METHOD_ONLY)}
