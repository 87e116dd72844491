"""Shape and indexing functions beyond the basics: stacking, flips, rolls, scatter, take and kin.

Most are compositions of the movement ops (ops/shape/movement.py) whose last node is the one torch
shows; the reorderings, triangles and diagonals are recorded in ops/shape/gather.py, the
scatters in ops/shape/scatter.py."""

import numpy as np

from ...engine.record import broadcast_shapes as _broadcast_shapes
from ...size import Size
from ...tensor import Tensor, _make
from ..elementwise.pointwise import unary
from ..index.indexing import gather, index_select
from ..reduce.reductions import sum as _sum
from . import join as _join
from . import movement as _shape
from .extra import (
    adjoint,
    block_diag,
    cartesian_prod,
    combinations,
    diagonal_scatter,
    index_put,
    narrow_copy,
    ravel,
    select_scatter,
    slice_scatter,
    unravel_index,
)
from .gather import (
    diag,
    diag_embed,
    diagflat,
    diagonal,
    fliplr,
    flipud,
    masked_select,
    roll,
    rot90,
    select,
    take,
    tril,
    triu,
    unfold,
)
from .gather import flip as _flip_gather
from .join import cat
from .movement import _wrap, expand, narrow, permute, reshape, transpose, unsqueeze
from .scatter import (
    index_add,
    index_copy,
    index_fill,
    masked_scatter,
    put,
    scatter,
    scatter_add,
    scatter_reduce,
)

__all__ = [
    "hstack", "vstack", "dstack", "column_stack", "row_stack", "tensor_split", "hsplit",
    "vsplit", "dsplit", "swapaxes", "swapdims", "movedim", "moveaxis", "flip", "fliplr",
    "flipud", "roll", "rot90", "tile", "repeat_interleave", "broadcast_tensors",
    "broadcast_shapes", "atleast_1d", "atleast_2d", "atleast_3d", "scatter", "scatter_add",
    "scatter_reduce", "index_add", "index_copy", "index_fill", "masked_select",
    "masked_scatter", "take", "take_along_dim", "nonzero", "argwhere", "select", "clone",
    "detach", "diagonal", "tril", "triu", "diag", "diag_embed", "diagflat", "index_put",
    "select_scatter", "slice_scatter", "diagonal_scatter", "narrow_copy", "block_diag", "ravel",
    "adjoint", "cartesian_prod", "combinations", "unravel_index",
]


# ---- dims ------------------------------------------------------------------------------------
def swapaxes(input, axis0, axis1):
    """``x`` with the dimensions ``axis0`` and ``axis1`` swapped.

    Same as ``torch.swapaxes`` (alias ``swapdims``).

    Args:
        input: the input tensor (the tensor itself, as a method).
        axis0: the first dimension.
        axis1: the second dimension.

    Returns:
        A view of ``input``: ``transpose(input, axis0, axis1)``.
    """
    return transpose(input, axis0, axis1)


swapdims = swapaxes


def _movedim_order(ndim, source, destination):
    src = [_wrap(d, ndim) for d in (source if isinstance(source, (tuple, list)) else [source])]
    dst = [_wrap(d, ndim) for d in (destination if isinstance(destination, (tuple, list))
                                    else [destination])]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    for what, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({dims})")
    # the moved dims land at their destinations; the rest keep their order in the gaps
    order = [None] * max(ndim, 1)
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(max(ndim, 1)) if d not in src)
    return [next(rest) if o is None else o for o in order][:ndim]


def movedim(input, source, destination):
    """``x`` with the dimensions ``source`` moved to the positions ``destination``.

    Same as ``torch.movedim`` (alias ``moveaxis``).
    """
    order = _movedim_order(input.ndim, source, destination)
    if input.ndim == 0:
        return _shape.as_view(_shape.PERMUTE, input, lambda a: a)
    return permute(input, order)


moveaxis = movedim


# ---- at least n-d, stacking ------------------------------------------------------------------
def _atleast(n, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast(n, (t,)) for t in tensors[0])
    if len(tensors) != 1:
        return tuple(_atleast(n, (t,)) for t in tensors)
    x = tensors[0]
    if x.ndim >= n:
        return x
    if x.ndim == 0:
        return reshape(x, (1,) * n)
    if n == 2:
        return unsqueeze(x, 0)
    return unsqueeze(unsqueeze(x, 0), -1) if x.ndim == 1 else unsqueeze(x, -1)


def atleast_1d(*tensors):
    """Each tensor given, with a dimension added if it is 0-d.

    Same as ``torch.atleast_1d``.

    Args:
        *tensors: tensors, or one sequence of them.

    Returns:
        One tensor when one is given, else a tuple of them.
    """
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    """Each tensor given, with leading dimensions added up to two.

    Same as ``torch.atleast_2d``.

    Args:
        *tensors: tensors, or one sequence of them.

    Returns:
        One tensor when one is given, else a tuple of them.
    """
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    """Each tensor given, with dimensions added up to three.

    Same as ``torch.atleast_3d``.

    Args:
        *tensors: tensors, or one sequence of them.

    Returns:
        One tensor when one is given, else a tuple of them.
    """
    return _atleast(3, tensors)


def _tensor_list(tensors, op):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        "Tensor")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    """The tensors joined horizontally (dimension 1, or 0 for 1-D tensors).

    Same as ``torch.hstack``.
    """
    parts = [atleast_1d(t) for t in _tensor_list(tensors, "hstack")]
    return cat(parts, 0 if parts[0].ndim == 1 else 1)


def vstack(tensors):
    """The tensors joined vertically (1-D tensors become rows).

    Same as ``torch.vstack`` (alias ``row_stack``).
    """
    return cat([atleast_2d(t) for t in _tensor_list(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors):
    """The tensors joined depthwise, along the third dimension.

    Same as ``torch.dstack``.
    """
    return cat([atleast_3d(t) for t in _tensor_list(tensors, "dstack")], 2)


def column_stack(tensors):
    """The tensors stacked as columns of a matrix (1-D ones become columns).

    Same as ``torch.column_stack``.
    """
    parts = [reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t
             for t in _tensor_list(tensors, "column_stack")]
    return cat(parts, 1)


# ---- splits ----------------------------------------------------------------------------------
def tensor_split(input, indices_or_sections, dim=0):
    """``x`` split along ``dim`` into a number of near-equal pieces, or at the indices given.

    Same as ``torch.tensor_split``.
    """
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap(dim, input.ndim)
    n = input.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.dtype.name != "int64":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {spec.dtype.scalar_name}")
        if spec.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {spec.ndim} dims")
        spec = spec.item() if spec.ndim == 0 else spec._array().tolist()
    if isinstance(spec, (int, np.integer)):
        sections = int(spec)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        small, extra = divmod(n, sections)
        sizes = [small + 1] * extra + [small] * (sections - extra)
        starts = np.cumsum([0] + sizes[:-1]).tolist()
        return tuple(narrow(input, d, s, k) for s, k in zip(starts, sizes))
    bounds = [0] + [int(i) for i in spec] + [n]
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo = min(max(lo + n if lo < 0 else lo, 0), n)
        hi = min(max(hi + n if hi < 0 else hi, 0), n)
        parts.append(narrow(input, d, lo, max(hi - lo, 0)))
    return tuple(parts)


def _split_along(x, spec, d, name, need):
    if x.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, "
                           f"but got a tensor with {x.ndim} dimensions!")
    if isinstance(spec, (int, np.integer)) and (x.shape[d] % spec if spec else True):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size "
                           f"of the dimension {x.shape[d]} is not divisible by the split_size "
                           f"{spec}!")
    return tensor_split(x, spec, d)


def hsplit(input, indices_or_sections):
    """``x`` split horizontally (dimension 1, or 0 for 1-D), as ``tensor_split`` splits.

    Same as ``torch.hsplit``.
    """
    return _split_along(input, indices_or_sections, 1 if input.ndim > 1 else 0, "hsplit", 1)


def vsplit(input, indices_or_sections):
    """``x`` split vertically (dimension 0), as ``tensor_split`` splits.

    Same as ``torch.vsplit``.
    """
    return _split_along(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input, indices_or_sections):
    """``x`` split along its third dimension, as ``tensor_split`` splits.

    Same as ``torch.dsplit``.
    """
    return _split_along(input, indices_or_sections, 2, "dsplit", 3)


# ---- repeats and broadcasts ------------------------------------------------------------------
def tile(input, dims):
    """``x`` repeated ``dims[i]`` times along each dimension ``i``.

    Same as ``torch.tile``.
    """
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    dims = tuple(dims)
    dims = (1,) * (input.ndim - len(dims)) + dims
    return _join.repeat(input, *dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element of ``x`` repeated ``repeats`` times in place, along ``dim``.

    Same as ``torch.repeat_interleave``.
    """
    if repeats is None:  # torch.repeat_interleave(repeats): each index repeated so often
        counts = input._array()
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return _make(np.repeat(np.arange(counts.size, dtype=np.int64), counts.reshape(-1)))
    if dim is None:
        input = reshape(input, -1)
        d = 0
    else:
        d = _wrap(dim, input.ndim)
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        counts = repeats._array()
        if counts.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        n = input.shape[d] if input.ndim else 1
        if counts.shape[0] != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {counts.shape[0]} and input.size({d}) = {n}")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        index = np.repeat(np.arange(n, dtype=np.int64), counts)
        return index_select(input, d, _make(index))
    r = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if r < 0:
        raise RuntimeError("Repeats must be non-negative")
    if input.ndim == 0:
        input = reshape(input, 1)
    # as torch: the input with a new dim after ``d``, expanded, copied and viewed flat
    grown = unsqueeze(input, d + 1)
    shape = list(grown.shape)
    shape[d + 1] = r
    copied = unary("clone", expand(grown, size=tuple(shape)))
    out_shape = list(input.shape)
    out_shape[d] *= r
    return _shape.view(copied, tuple(out_shape))


def broadcast_shapes(*shapes):
    """The shape that tensors of the given shapes broadcast to, a ``Size``.

    Same as ``torch.broadcast_shapes``.

    Args:
        *shapes: shapes (tuples, lists or Size) or ints, each one dimension.

    Returns:
        The broadcast shape, a Size.
    """
    given = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    if any(k < 0 for s in given for k in s):
        raise ValueError("Attempting to broadcast a dimension with negative length!")
    result = [1] * max((len(s) for s in given), default=0)
    for i, s in enumerate(given):  # torch's order of checks, and its message
        for j in range(-1, -len(s) - 1, -1):
            if s[j] == 1 or s[j] == result[j]:
                continue
            if result[j] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[j]} at "
                                   f"{j}! Mismatching argument at index {i} had {shapes[i]}; but "
                                   f"expected shape should be broadcastable to {result}")
            result[j] = s[j]
    return Size(result)


def broadcast_tensors(*tensors):
    """The tensors given, each broadcast to their common shape.

    Same as ``torch.broadcast_tensors``.
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = _broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t if tuple(t.shape) == shape else expand(t, size=shape) for t in tensors)


# ---- selections that are no op of their own --------------------------------------------------
def take_along_dim(input, indices, dim=None):
    """The elements of ``x`` at ``indices`` along ``dim`` (of the flattened ``x`` if None).

    Same as ``torch.take_along_dim``.
    """
    if dim is None:
        return gather(reshape(input, -1), 0, reshape(indices, -1))
    d = _wrap(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    if indices.dtype.name not in ("int64",):
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype.scalar_name}")
    xs, js = list(input.shape), list(indices.shape)
    xs[d] = js[d] = 1
    common = list(_broadcast_shapes(tuple(xs), tuple(js)))
    tx, ti = list(common), list(common)
    tx[d], ti[d] = input.shape[d], indices.shape[d]
    if tuple(tx) != tuple(input.shape):
        input = expand(input, size=tuple(tx))
    if tuple(ti) != tuple(indices.shape):
        indices = _make(np.ascontiguousarray(np.broadcast_to(indices._array(), ti)))
    return gather(input, d, indices)


def nonzero(input, *, as_tuple=False):
    """The indices of the nonzero elements: one row each, or a tuple of index tensors.

    Same as ``torch.nonzero``.

    Args:
        input: the input tensor (the tensor itself, as a method).
        as_tuple: if True, return one 1-D index tensor per dimension (default False).

    Returns:
        An int64 tensor of shape (number of nonzeros, ``input.ndim``), or with ``as_tuple``
        a tuple of ``input.ndim`` int64 tensors.
    """
    data = np.asarray(input._array())
    if as_tuple:
        if data.ndim == 0:
            return (_make(np.zeros(int(data != 0), np.int64)),)
        return tuple(_make(np.ascontiguousarray(c, np.int64)) for c in np.nonzero(data))
    return _make(np.ascontiguousarray(np.argwhere(data), np.int64))


def argwhere(input):
    """The indices of the nonzero elements, one row per element.

    Same as ``torch.argwhere``.

    Args:
        input: the input tensor.

    Returns:
        An int64 tensor of shape (number of nonzeros, ``input.ndim``).
    """
    return nonzero(input)


def clone(input, *, memory_format=None):
    """A copy of ``x``; the copy's gradient flows back to ``x``.

    Same as ``torch.clone``.
    """
    return unary("clone", input)


def detach(input):
    """``x.detach()``: the same values outside the graph.

    Same as ``torch.detach``.

    Args:
        input: the input tensor.

    Returns:
        A tensor sharing ``input``'s data, not requiring grad.
    """
    return input.detach()


def sum_to_size(x, *size, **kw):
    """This tensor summed over the dimensions where ``size`` is 1 or missing, down to ``size``.

    Same as ``torch.Tensor.sum_to_size``.
    """
    if "size" in kw:  # torch's keyword
        size = (kw.pop("size"),)
    if kw:
        raise TypeError(f"sum_to_size() got an unexpected keyword argument '{next(iter(kw))}'")
    size = _shape._shape_args(size)
    lead = x.ndim - len(size)
    try:
        ok = lead >= 0 and all(s == 1 or s == n for s, n in zip(size, x.shape[lead:]))
    except TypeError:
        ok = False
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(x.shape)}}}.")
    if tuple(size) == tuple(x.shape):
        return x
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size)
                                      if s == 1 and x.shape[lead + i] != 1)
    out = _sum(x, dim=dims, keepdim=True) if dims else x
    return reshape(out, size) if lead else out


def _flip(input, *dims, dims_kw=None, **kw):
    """``x`` with the order of the elements reversed along ``dims``.

    Same as ``torch.flip``.
    """
    if "dims" in kw:  # torch's keyword
        dims_kw = kw.pop("dims")
    if kw:
        raise TypeError(f"flip() got an unexpected keyword argument '{next(iter(kw))}'")
    return _flip_gather(input, *dims, dims_kw=dims_kw)


flip = _flip


def _tile_method(x, *dims):
    """x.tile(2, 3) as well as x.tile((2, 3)), as torch's method takes either."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    return tile(x, tuple(dims))


# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {
    "flip": _flip, "fliplr": fliplr, "flipud": flipud, "roll": roll, "rot90": rot90,
    "tril": tril, "triu": triu, "diag": diag, "diag_embed": diag_embed, "diagflat": diagflat,
    "diagonal": diagonal, "select": select, "unfold": unfold, "take": take,
    "masked_select": masked_select, "movedim": movedim, "moveaxis": moveaxis,
    "swapaxes": swapaxes, "swapdims": swapdims, "tile": _tile_method,
    "repeat_interleave": repeat_interleave, "take_along_dim": take_along_dim,
    "nonzero": nonzero, "argwhere": argwhere, "tensor_split": tensor_split, "hsplit": hsplit,
    "vsplit": vsplit, "dsplit": dsplit, "sum_to_size": sum_to_size,
    "scatter": scatter, "scatter_add": scatter_add, "scatter_reduce": scatter_reduce,
    "index_add": index_add, "index_copy": index_copy, "index_fill": index_fill,
    "masked_scatter": masked_scatter, "put": put, "index_put": index_put,
    "select_scatter": select_scatter, "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter, "narrow_copy": narrow_copy, "ravel": ravel,
    "adjoint": adjoint,
}

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"column_stack": "one", "dstack": "one", "hstack": "one", "nonzero": "one",
             "row_stack": "one", "take_along_dim": "one", "vstack": "one"}
