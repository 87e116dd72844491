"""What the losses share: the reduction as torch reads it (enum, legacy ``size_average`` and
``reduce``), torch's argument and broadcasting checks, the attributes of a fused loss node,
the samples of the op records and the helpers of their differentiable derivatives."""

import functools
import warnings
from array import array

import numpy as np

from ... import dtypes
from ...core import grad_mode
from ...engine.record import broadcast_shapes, shape_error_broadcast
from ...engine.registry import Sample
from ...size import Size
from ...tensor import Tensor, _make
from ..elementwise.pointwise import (
    to_dtype,
)
from ..shape.movement import expand

_NONE, _MEAN, _SUM = 0, 1, 2  # reductions, as torch's enum


_NO_FAT = np.empty(0)  # a kernel's float attributes when it has none


# ---- the table -------------------------------------------------------------------------------
_F = "lib.nn.functional."


_RED = ({"reduction": "none"}, {}, {"reduction": "sum"})


def _s(shapes, call, kws=_RED):
    return [Sample(shapes, kw, call) for kw in kws]


# ---- helpers -----------------------------------------------------------------------------
def _cfmt(v):
    """A double as C++'s ostream prints it (torch's messages)."""
    return f"{v:g}"


def _get_enum(reduction):
    if reduction == "none":
        return _NONE
    if reduction == "mean":
        return _MEAN
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=3)
        return _MEAN
    if reduction == "sum":
        return _SUM
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _tensor_arguments(torch_name):
    """A loss's check that ``input`` and ``target`` are Tensors, with torch's TypeError
    (``torch_name`` is the name torch's message gives the function)."""
    def wrap(fn):
        @functools.wraps(fn)
        def checked(*args, **kwargs):
            for pos, name in enumerate(("input", "target")):
                x = args[pos] if pos < len(args) else kwargs.get(name)
                if not isinstance(x, Tensor):
                    kind = type(x)
                    kind = kind.__name__ if kind.__module__ == "builtins" else \
                        f"{kind.__module__.split('.')[0]}.{kind.__name__}"
                    raise TypeError(f"{torch_name}(): argument '{name}' (position {pos + 1}) "
                                    f"must be Tensor, not {kind}")
            return fn(*args, **kwargs)
        return checked
    return wrap


def legacy_get_string(size_average, reduce, emit_warning=True):
    """torch.nn._reduction.legacy_get_string: the deprecated flags as a reduction name."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _legacy(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return reduction


def _warn_size(input, target):  # noqa: A002 - torch's names
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _broadcast_tensors(a, b):
    """torch.broadcast_tensors for two tensors (ExpandBackward0 where a shape changes)."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    if sa == sb:
        return a, b
    shape = broadcast_shapes(sa, sb)
    return (a if sa == shape else expand(a, *shape)), (b if sb == shape else expand(b, *shape))


def _broadcast_shapes_ref(*shapes):
    """torch.broadcast_shapes (torch._refs): its messages name the offending argument."""
    common = [1] * max(len(s) for s in shapes)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                common[idx] = shape[idx]
            if shape[idx] == 1:
                continue
            if common[idx] != shape[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! "
                    f"Mismatching argument at index {arg_idx} had {Size(shape)}; but expected "
                    f"shape should be broadcastable to {common}")
    return tuple(common)


def _in_place_shape(out_shape, other_shape):
    """The shape check of an in-place ``out op= other`` (torch's messages)."""
    err = shape_error_broadcast(tuple(out_shape), tuple(other_shape))
    if err is not None:
        raise err
    full = tuple(np.broadcast_shapes(tuple(out_shape), tuple(other_shape)))
    if full != tuple(out_shape):
        raise RuntimeError(f"output with shape {list(out_shape)} doesn't match the broadcast "
                           f"shape {list(full)}")


def _not_differentiable(fn, arg, t):
    if t is not None and t.requires_grad and grad_mode.state.enabled:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")


def _as(t, dt):
    """``t`` in dtype ``dt``: float tensors keep their own dtype (the node mixes them, as
    torch's TensorIterator does), integer/bool tensors become constants of ``dt``."""
    if t.dtype.is_floating_point:
        return t
    return _make(np.asarray(t._data).astype(dt.np))


def _scale(red, n):
    """The gradient scale of a loss over ``n`` elements: 1 / n for a mean, else 1."""
    return (1.0 / n if n else np.nan) if red == _MEAN else 1.0


def _reduce_value(value, red, dt):
    """The loss's value for ``red``, and the gradient scale of a reduced loss."""
    value = np.asarray(value, dt.np)
    n = value.size
    if red == _NONE:
        return value, 1.0
    s = value.sum(dtype=dt.np)
    if red == _SUM:
        return dt.np.type(s), 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return dt.np.type(s / dt.np.type(n) if n else np.nan), _scale(red, n)


def _fat(*parts):
    out = array("d")
    for p in parts:
        if isinstance(p, np.ndarray):
            out.frombytes(np.ascontiguousarray(p, np.float64).reshape(-1).tobytes())
        else:
            out.append(float(p))
    return out


# ---- differentiable derivatives (create_graph) ------------------------------------------------
def _cast(ctx, k, t):
    return to_dtype(t, dtypes.from_numpy_dtype(ctx.dtypes[k]))


def _g(ctx, g):
    """The upstream gradient as it multiplies each element (scaled for a reduced loss)."""
    if ctx.iat[0] == _NONE:
        return g
    s = ctx.fat[0]
    return g if s == 1.0 else g * s


def _out(ctx, gx, gt):
    return [_cast(ctx, 0, gx()) if ctx.needs[0] else None,
            _cast(ctx, 1, gt()) if ctx.needs[1] else None]
