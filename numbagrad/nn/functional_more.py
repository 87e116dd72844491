"""torch.nn.functional's power-average pools (lp_pool1d/2d/3d), max unpooling
(max_unpool1d/2d/3d) and the max pools' ``*_with_indices`` forms, composed of differentiable
ops as torch's own Python composes them."""

import math

import numpy as np

from ..ops.conv_functional import avg_pool2d, max_pool2d
from ..ops.pointwise import relu as _relu
from ..ops.shape import reshape as _reshape
from ..ops.shape_scatter import scatter as _scatter
from ..ops.spatial_pool import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool3d,
    max_pool1d,
    max_pool3d,
)
from ..tensor import _make


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


# ---- power-average pooling: torch/nn/functional.py's lp_pool1d/2d/3d --------------------------
def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, n, avg, mx):  # noqa: A002
    window = math.prod(_tuple(kernel_size, n))
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return mx(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -mx(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    # sign * relu(abs): a negative average (odd p) keeps its sign; the gradient at 0 is 0
    return (out.sign() * _relu(out.abs())).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling over a 1-D signal: ``(sum of x ** p over each window) ** (1 / p)``.

    Same as ``torch.nn.functional.lp_pool1d``.
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, avg_pool1d, max_pool1d)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling over a 2-D signal: ``(sum of x ** p over each window) ** (1 / p)``.

    Same as ``torch.nn.functional.lp_pool2d``.
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, avg_pool2d, max_pool2d)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling over a 3-D signal: ``(sum of x ** p over each window) ** (1 / p)``.

    Same as ``torch.nn.functional.lp_pool3d``.
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, avg_pool3d, max_pool3d)


# ---- max unpooling ---------------------------------------------------------------------------
def _unpool_output_size(input, kernel_size, stride, padding, output_size):  # noqa: A002
    """torch/nn/functional.py's _unpool_output_size: the default size, or output_size checked."""
    n = len(kernel_size)
    default = [(input.shape[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        return default
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, "
                         f"but it has a length of '{len(output_size)}'")
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f"{lo} and {hi})")
    return list(output_size)


def _max_unpool(input, indices, size, name):  # noqa: A002
    """torch's max_unpooling2d/3d: each plane's values written at their flat indices into a
    zero plane of ``size`` (a scatter, whose gradient gathers at the indices)."""
    n = len(size)
    if indices.dtype.name != "int64":
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{indices.dtype.scalar_name}")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to {name} should be a {n + 1}d or {n + 2}d Tensor, but got a "
                           f"tensor with {input.ndim} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    if not input.dtype.is_floating_point:
        kernel = name.replace("unpooling", "unpool")  # torch's kernel name, not its check's
        raise NotImplementedError(f'"{kernel}" not implemented for \'{input.dtype.scalar_name}\'')
    plane = math.prod(size)
    lead = tuple(input.shape[:-n])
    idx = indices._array().reshape(*lead, -1)
    bad = (idx < 0) | (idx >= plane)
    if bad.any():
        # torch's loop keeps the last invalid index it met
        raise RuntimeError(f"Found an invalid max index: {int(idx[bad][-1])} (output volumes are "
                           f"of size {'x'.join(map(str, size))})")
    zeros = _make(np.zeros((*lead, plane), input._array().dtype))
    out = _scatter(zeros, -1, _make(idx), _reshape(input, (*lead, -1)))
    return _reshape(out, (*lead, *size))


def _unpool_args(kernel_size, stride, padding, n):
    kernel_size = _tuple(kernel_size, n)
    stride = _tuple(stride, n) if stride is not None else kernel_size
    return kernel_size, stride, _tuple(padding, n)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None):
    """Partial inverse of ``max_pool1d``: the values at their indices, zeros elsewhere.

    Same as ``torch.nn.functional.max_unpool1d``.
    """
    k, s, p = _unpool_args(kernel_size, stride, padding, 1)
    size = _unpool_output_size(input, k, s, p, output_size)
    # torch runs the 2-d kernel on a trailing dim of 1 (its messages say so)
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), (*size, 1),
                       "max_unpooling2d").squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None):
    """Partial inverse of ``max_pool2d``: the values at their indices, zeros elsewhere.

    Same as ``torch.nn.functional.max_unpool2d``.
    """
    k, s, p = _unpool_args(kernel_size, stride, padding, 2)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(input, indices, tuple(size), "max_unpooling2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None):
    """Partial inverse of ``max_pool3d``: the values at their indices, zeros elsewhere.

    Same as ``torch.nn.functional.max_unpool3d``.
    """
    k, s, p = _unpool_args(kernel_size, stride, padding, 3)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(input, indices, tuple(size), "max_unpooling3d")


# ---- the *_with_indices forms: torch's pools with return_indices=True, whatever is passed ---
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=False):
    """``max_pool1d`` returning (values, indices) (``return_indices`` is ignored).

    Same as ``torch.nn.functional.max_pool1d_with_indices``.
    """
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=False):
    """``max_pool2d`` returning (values, indices) (``return_indices`` is ignored).

    Same as ``torch.nn.functional.max_pool2d_with_indices``.
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=False):
    """``max_pool3d`` returning (values, indices) (``return_indices`` is ignored).

    Same as ``torch.nn.functional.max_pool3d_with_indices``.
    """
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    """``adaptive_max_pool1d`` returning (values, indices) (``return_indices`` is ignored).

    Same as ``torch.nn.functional.adaptive_max_pool1d_with_indices``.
    """
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    """``adaptive_max_pool2d`` returning (values, indices) (``return_indices`` is ignored).

    Same as ``torch.nn.functional.adaptive_max_pool2d_with_indices``.
    """
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    """``adaptive_max_pool3d`` returning (values, indices) (``return_indices`` is ignored).

    Same as ``torch.nn.functional.adaptive_max_pool3d_with_indices``.
    """
    return adaptive_max_pool3d(input, output_size, True)


__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices"]
