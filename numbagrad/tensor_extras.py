"""Small torch functions and Tensor methods over ops numbagrad already has: real and angle of
real tensors, renorm, split_with_sizes, nonzero_static, the torch-namespace forms of in-place
methods (detach_, clip_, index_put_, resize_as_), autograd's Resize (Tensor.resize and
resize_as), as_subclass, and the factories empty_permuted, frombuffer and range."""

import builtins
import math
import warnings

import numpy as np

from . import dtypes, factories
from ._inplace_forms import _inplace_method
from .autograd.function import Function
from .core.anomaly_flags import set_detect_anomaly
from .ops.elementwise.logic import need_tensor
from .ops.elementwise.pointwise import where
from .ops.linalg.common import const
from .ops.linalg.node import record_node
from .ops.linalg.norms import vector_norm
from .ops.reduce import reductions as reduce
from .ops.shape.api import nonzero
from .ops.shape.join import split
from .ops.shape.movement import alias
from .ops.vjp import VjpContext
from .tensor import Tensor, _make, require_grad


# ---- real and angle of a real tensor ----------------------------------------------------------
def real(input):  # noqa: A002 - torch's keyword names
    """The real part: a real tensor itself (numbagrad has no complex dtype).

    Same as ``torch.real`` on a real tensor, which returns its input.
    """
    need_tensor(input, "real")
    return input


def _set_real(self, value):
    self.copy_(value)


Tensor.real = property(real, _set_real, doc="The real part: the tensor itself, as torch's "
                                              "``Tensor.real`` of a real tensor.")


def angle(input):  # noqa: A002 - torch's keyword names
    """The argument of each element: pi for a negative number, 0 otherwise (NaN stays NaN);
    integers give the default float dtype. Its gradient is zero, as torch's for real tensors.

    Same as ``torch.angle`` on a real tensor.
    """
    need_tensor(input, "angle")
    x = input._array()
    dt = x.dtype if input.dtype.is_floating_point else dtypes.get_default_dtype().np
    value = np.where(x < 0, math.pi, 0.0).astype(dt)
    if x.dtype.kind == "f":
        value = np.where(np.isnan(x), x, value)
    return record_node("AngleBackward0", [value], [input], _angle_rule)[0]


def _angle_rule(ctx, grads):
    (x,) = ctx.inputs
    return [const(np.zeros(x.shape), x._array().dtype)]


# ---- renorm -----------------------------------------------------------------------------------
def renorm(input, p, dim, maxnorm):  # noqa: A002 - torch's keyword names
    """Each slice along ``dim`` scaled to ``p``-norm at most ``maxnorm`` (by maxnorm / (norm +
    1e-7), torch's factor), slices within it unchanged.

    Same as ``torch.renorm``.
    """
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    d = reduce._dims(dim, input.ndim, "renorm")[0]
    dims = tuple(k for k in builtins.range(input.ndim) if k != d)
    norm = vector_norm(input.detach(), p, dims, keepdim=True)._array()
    factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(norm.dtype)
    value = input._array() * factor
    return record_node("RenormBackward0", [value], [input], _renorm_rule,
                       options=(float(p), dims, maxnorm))[0]


def _renorm_rule(ctx, grads):
    # torch's renorm_backward: x * maxnorm / (norm + 1e-7) differentiated through the norm,
    # whose own rule (reduce.NORM's) gives the norm's part
    (g,) = grads
    (x,) = ctx.inputs
    p, dims, maxnorm = ctx.options
    norm = vector_norm(x, p, dims, keepdim=True)
    kept = tuple(norm.shape)
    norm_ctx = VjpContext(reduce.NORM, [lambda: x], lambda: norm, kept, (p,), kept,
                          [tuple(x.shape)], [True], [x._array().dtype])
    nb = reduce.NORM.vjp(norm_ctx, (x * g).sum(dims, keepdim=True))[0]
    invnorm = 1.0 / (norm + 1e-7)
    factor = invnorm * maxnorm
    scaled = factor * g if nb is None else factor * g - (factor * invnorm) * nb
    return [where(norm > maxnorm, scaled, g)]


Tensor.renorm = renorm
Tensor.renorm_ = _inplace_method(renorm, "renorm_")  # (the rule reads self's old value)


# ---- shapes -----------------------------------------------------------------------------------
def split_with_sizes(input, split_sizes, dim=0):  # noqa: A002 - torch's keyword names
    """``input`` split along ``dim`` into pieces of the listed sizes.

    Same as ``torch.split_with_sizes``.

    Args:
        input: the tensor to split (the tensor itself, as a method).
        split_sizes: the sizes of the pieces, a sequence of ints summing to
            ``input.shape[dim]``.
        dim: the dimension to split along (default 0).

    Returns:
        A tuple of tensors, views of ``input``.
    """
    return split(input, list(split_sizes), dim)


Tensor.split_with_sizes = split_with_sizes


def nonzero_static(input, *, size, fill_value=-1):  # noqa: A002 - torch's keyword names
    """The indices of the nonzero elements as ``nonzero`` gives them, cut or padded with
    ``fill_value`` to ``size`` rows.

    Same as ``torch.nonzero_static``.
    """
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = nonzero(input)._array()[:size]
    out = np.full((size, input.ndim), fill_value, np.int64)
    out[:found.shape[0]] = found
    return _make(out)


Tensor.nonzero_static = nonzero_static


# ---- index_reduce -----------------------------------------------------------------------------
_FIRST = {"prod": 1, "mean": 0, "amax": -np.inf, "amin": np.inf}


def index_reduce(input, dim, index, source, reduce, *, include_self=True):  # noqa: A002
    """A copy of ``input`` with the slices of ``source`` along ``dim`` reduced by ``reduce``
    ("prod", "mean", "amax" or "amin") into its slices ``index`` names.

    Same as ``torch.index_reduce``.

    Args:
        input: the tensor reduced into.
        dim: the dimension along which ``index`` picks slices.
        index: a 1-D int32/int64 tensor, one entry per slice of ``source`` along ``dim``.
        source: the tensor whose slices are reduced in; ``input``'s dtype.
        reduce: "prod", "mean", "amax" or "amin".
        include_self: whether ``input``'s own values take part in the reduction
            (default True).

    Returns:
        A new tensor of ``input``'s shape.
    """
    if reduce not in _FIRST:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype.scalar_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({input.dtype.scalar_name}) and source "
                           f"({source.dtype.scalar_name}) must have the same scalar type")
    d = _index_dim(dim, max(input.ndim, 1))
    idx = index._array().reshape(-1)
    n_src = source.shape[d] if source.ndim else 1
    if idx.size != n_src:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n_src}), for dim: {dim}")
    size = input.shape[d] if input.ndim else 1
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise IndexError("index out of range in self")
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning,
                  stacklevel=2)
    return _index_reduce_node(input, d, _make((idx % max(size, 1)).astype(np.int64)), source,
                              reduce, include_self)


def _index_reduce_node(x, d, index, src, how, include_self):
    """index_reduce recorded (index: an int64 tensor of positions in 0..size-1)."""
    value = _index_reduced(x._array(), d, index._array(), src._array(), how, include_self)
    return record_node("IndexReduceBackward0", [value], [x, src], _index_reduce_rule,
                       options=(d, index, how, include_self))[0]


def _index_dim(dim, ndim):
    return reduce._dims(dim, ndim, "index_reduce")[0]


def _index_reduced(x, d, idx, src, how, include_self):
    out = np.array(x, copy=True)
    view = np.moveaxis(out.reshape(out.shape or (1,)), d, 0)
    part = np.moveaxis(src.reshape(src.shape or (1,)), d, 0)
    if not include_self:
        first = _FIRST[how]
        if out.dtype.kind in "iu" and how in ("amax", "amin"):
            info = np.iinfo(out.dtype)
            first = info.min if how == "amax" else info.max
        view[idx] = first
    if how == "mean":
        np.add.at(view, idx, part)
        counts = np.bincount(idx, minlength=view.shape[0]) + int(include_self)
        counts = np.maximum(counts, 1).reshape((-1,) + (1,) * (view.ndim - 1))
        view[...] = np.floor_divide(view, counts) if out.dtype.kind in "iub" else view / counts
    else:
        {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[how].at(view, idx, part)
    return out


def _index_reduce_rule(ctx, grads):
    # torch's index_reduce_backward, written with recorded ops
    (g,) = grads
    x, src = ctx.inputs
    d, index, how, include_self = ctx.options
    result = ctx.outputs[0]
    if how == "prod":
        masked_self = x.masked_fill(x == 0, 1)
        masked_self_result = _index_reduce_node(masked_self, d, index, src, how, include_self)
        grad_self = g * masked_self_result / masked_self
        src_zero = src == 0
        zeros = x.new_zeros(x.shape)
        src_num_zeros = zeros.index_add(d, index, src_zero.to(x.dtype)).index_select(d, index)
        src_single_zero = src_zero & (src_num_zeros == 1)
        masked_src = src.masked_fill(src_single_zero, 1)
        masked_src_result = _index_reduce_node(x, d, index, masked_src, how, include_self)
        grad_src = where(src_single_zero, (g * masked_src_result).index_select(d, index),
                         (g * result).index_select(d, index) / src.masked_fill(src_zero, 1))
    elif how == "mean":
        counts = (x.new_ones(g.shape) if include_self else x.new_zeros(g.shape)).index_add(
            d, index, src.new_ones(src.shape))
        counts = counts.masked_fill(counts == 0, 1)
        grad_self = g / counts
        grad_src = g.index_select(d, index) / counts.index_select(d, index)
    else:
        self_is_result = (x == result).to(x.dtype)
        source_is_result = (src == result.index_select(d, index)).to(x.dtype)
        distributed = g / self_is_result.index_add(d, index, source_is_result)
        grad_self = self_is_result * distributed
        grad_src = source_is_result * distributed.index_select(d, index)
    if not include_self:
        grad_self = grad_self.index_fill(d, index, 0)
    return [grad_self, grad_src]


Tensor.index_reduce = lambda self, dim, index, source, reduce, *, include_self=True: \
    index_reduce(self, dim, index, source, reduce, include_self=include_self)
Tensor.index_reduce.__doc__ = """See :func:`index_reduce`.

Args:
    dim: the dimension along which ``index`` picks slices.
    index: a 1-D int32/int64 tensor, one entry per slice of ``source`` along ``dim``.
    source: the tensor whose slices are reduced in; this tensor's dtype.
    reduce: "prod", "mean", "amax" or "amin".
    include_self: whether this tensor's own values take part in the reduction (default True).

Returns:
    A new tensor of this tensor's shape.
"""
# (computed on a clone of self when recording: the rule reads self's old value)
Tensor.index_reduce_ = _inplace_method(index_reduce, "index_reduce_")


# ---- torch-namespace forms of in-place methods -----------------------------------------------
def detach_(input):  # noqa: A002 - torch's keyword names
    """Detach ``input`` from its graph in place.

    Same as ``torch.detach_``.

    Args:
        input: the input tensor.

    Returns:
        ``input`` itself, now a leaf that does not require grad.
    """
    return input.detach_()


def clip_(input, min=None, max=None):  # noqa: A002 - torch's keyword names
    """Clamp ``input`` into [min, max] in place.

    Same as ``torch.clip_``.
    """
    return input.clip_(min, max)


def index_put_(input, indices, values, accumulate=False):  # noqa: A002 - torch's keyword names
    """Write (or add, with ``accumulate``) ``values`` at ``indices`` of ``input`` in place.

    Same as ``torch.index_put_``.
    """
    return input.index_put_(indices, values, accumulate)


def put(input, index, source, accumulate=False):  # noqa: A002 - torch's keyword names
    """A copy of ``input`` with ``source`` written (or added) at the flat ``index``.

    Same as ``torch.put``.
    """
    return input.put(index, source, accumulate)


def resize_as_(input, the_template, *, memory_format=None):  # noqa: A002 - torch's names
    """Resize ``input`` in place to the shape of ``the_template``.

    Same as ``torch.resize_as_`` (new elements are zero here; torch leaves them uninitialized).
    """
    return input.resize_(the_template.shape)


def _resize_as_method(self, tensor, memory_format=None):
    """Resize in place to the shape of ``tensor``.

    Same as ``torch.Tensor.resize_as_`` (new elements are zero here, uninitialized in torch).
    """
    return self.resize_(tensor.shape)


Tensor.resize_as_ = _resize_as_method


def is_inference(input):  # noqa: A002 - torch's keyword names
    """Whether ``input`` was made in inference mode.

    Same as ``torch.is_inference``.
    """
    return input.is_inference()


def get_device(input):  # noqa: A002 - torch's keyword names
    """-1: tensors live on the CPU.

    Same as ``torch.get_device``.

    Args:
        input: the input tensor.

    Returns:
        -1.
    """
    return input.get_device()


# ---- autograd's Resize: the deprecated out-of-place resize and resize_as ---------------------
class Resize(Function):
    """torch.autograd._functions.Resize: a view of another shape with as many elements."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        numel = math.prod(sizes)
        if tensor.numel() != numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), "
                f"but the given tensor has a size of {'x'.join(map(str, tensor.shape))} "
                f"({tensor.numel()} elements). autograd's resize can only change the shape of "
                "a given tensor, while preserving the number of elements. ")
        ctx.input_sizes = tuple(tensor.shape)
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None


def _resize(self, *sizes):
    """A tensor of shape ``sizes`` with this tensor's elements (as many of them), recorded as
    torch's ResizeBackward.

    Same as ``torch.Tensor.resize`` (deprecated: it warns).

    Args:
        *sizes: the new shape, as integers or one tuple or list.

    Returns:
        A new tensor of shape ``sizes``.
    """
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    return Resize.apply(self, tuple(sizes))


def _resize_as(self, tensor):
    """This tensor's elements in the shape of ``tensor``, recorded as torch's ResizeBackward.

    Same as ``torch.Tensor.resize_as`` (deprecated: it warns).

    Args:
        tensor: the tensor whose shape the result takes.

    Returns:
        A new tensor of ``tensor``'s shape.
    """
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return Resize.apply(self, tuple(tensor.shape))


Tensor.resize, Tensor.resize_as = _resize, _resize_as


def _as_subclass(self, cls):
    """This tensor as an instance of ``cls`` (a Tensor subclass), sharing its data and
    attached to its graph.

    Same as ``torch.Tensor.as_subclass``.

    Args:
        cls: a subclass of Tensor (or Tensor itself); anything else raises TypeError.

    Returns:
        A new tensor object of class ``cls`` aliasing this tensor's data.
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    out = alias(self)
    out.__class__ = cls
    return out


Tensor.as_subclass = _as_subclass


# ---- factories --------------------------------------------------------------------------------
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialized tensor of ``size`` whose memory holds its dimensions in the order
    ``physical_layout`` (zeros here; torch leaves the values uninitialized).

    Same as ``torch.empty_permuted``.
    """
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    if sorted(order) != list(builtins.range(len(order))):
        raise RuntimeError(f"Dimension {order} is not a permutation of the dimensions")
    physical = factories.empty([size[k] for k in order], dtype=dtype, device=device)
    out = physical.permute(*np.argsort(order).tolist())
    out = _make(out._array())  # a leaf of its own, viewing the permuted memory
    return require_grad(out) if requires_grad else out


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the memory of an object with Python's buffer protocol, shared.

    Same as ``torch.frombuffer``.
    """
    view = memoryview(buffer)
    nbytes, item = view.nbytes, np.dtype(dtypes.as_dtype(dtype).np).itemsize
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if offset < 0 or offset >= nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({nbytes} bytes) minus 1")
    if count <= 0:
        if (nbytes - offset) % item:
            raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({item})")
        count = (nbytes - offset) // item
    elif offset + count * item > nbytes:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({nbytes} bytes)")
    data = np.frombuffer(buffer, dtype=np.dtype(dtypes.as_dtype(dtype).np), count=count,
                         offset=offset)
    out = _make(data)
    return require_grad(out) if requires_grad else out


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False):
    """The values start, start + step, ... up to and including ``end`` (deprecated in torch,
    which warns: arange excludes ``end``).

    Same as ``torch.range``: the default float dtype unless ``dtype`` is given.
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    n = int(math.floor((end - start) / step)) + 1
    values = np.asarray(start, np.float64) + np.arange(n, dtype=np.float64) * step
    out = _make(values.astype(dt.np))
    return require_grad(out) if requires_grad else out


def set_anomaly_enabled(enabled, check_nan=True):
    """Switch anomaly detection on or off.

    Same as ``torch.set_anomaly_enabled``.

    Args:
        enabled: whether anomaly detection is on.
        check_nan: whether a backward producing NaN raises (default True).
    """
    set_detect_anomaly(enabled, check_nan)


__all__ = ["angle", "clip_", "detach_", "empty_permuted", "frombuffer", "get_device",
           "index_put_", "index_reduce", "is_inference", "nonzero_static", "put", "range", "real",
           "renorm", "resize_as_", "set_anomaly_enabled", "split_with_sizes"]

Tensor.angle = angle

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"angle": "one", "nonzero_static": "one", "renorm": "one", "range": "factory"}
