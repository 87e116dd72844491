"""torch.nn.functional's power-average pools (lp_pool1d/2d/3d), max unpooling
(max_unpool1d/2d/3d) and the max pools' ``*_with_indices`` forms, composed of differentiable
ops as torch's own Python composes them; fractional max pooling (fractional_max_pool2d/3d) over
the window-max ops, its random window offsets drawn from the generator as torch draws them."""

import math

import numpy as np

from ..factories import rand
from ..ops.elementwise.public import relu as _relu
from ..ops.nn.conv_functional import avg_pool2d, max_pool2d
from ..ops.nn.pool import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool3d,
    max_pool1d,
    max_pool3d,
)
from ..ops.nn.spatial_maps import (
    FRACTIONAL_MAX_POOL2D,
    FRACTIONAL_MAX_POOL3D,
    record_window_max,
    separable,
)
from ..ops.shape.movement import reshape as _reshape
from ..ops.shape.scatter import scatter as _scatter
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

    Args:
        input: (N, C, *spatial) or (C, *spatial), with 1 spatial dimension.
        norm_type: the power p (inf: max pooling of the absolute values).
        kernel_size: the window size, an int or 1-tuple.
        stride: the window step (default None: ``kernel_size``).
        ceil_mode: whether to round the output size up rather than down (default False).

    Returns:
        The pooled tensor.
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, avg_pool1d, max_pool1d)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling over a 2-D signal: ``(sum of x ** p over each window) ** (1 / p)``.

    Same as ``torch.nn.functional.lp_pool2d``.

    Args:
        input: (N, C, *spatial) or (C, *spatial), with 2 spatial dimensions.
        norm_type: the power p (inf: max pooling of the absolute values).
        kernel_size: the window size, an int or 2-tuple.
        stride: the window step (default None: ``kernel_size``).
        ceil_mode: whether to round the output size up rather than down (default False).

    Returns:
        The pooled tensor.
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, avg_pool2d, max_pool2d)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling over a 3-D signal: ``(sum of x ** p over each window) ** (1 / p)``.

    Same as ``torch.nn.functional.lp_pool3d``.

    Args:
        input: (N, C, *spatial) or (C, *spatial), with 3 spatial dimensions.
        norm_type: the power p (inf: max pooling of the absolute values).
        kernel_size: the window size, an int or 3-tuple.
        stride: the window step (default None: ``kernel_size``).
        ceil_mode: whether to round the output size up rather than down (default False).

    Returns:
        The pooled tensor.
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

    Args:
        input: the pooled values, (N, C, *spatial) or (C, *spatial).
        indices: the flat positions ``max_pool1d(..., return_indices=True)`` gave, of
            ``input``'s shape.
        kernel_size: the pooling's window size, an int or 1-tuple.
        stride: the pooling's step (default None: ``kernel_size``).
        padding: the pooling's padding (default 0).
        output_size: the spatial size of the result (default None: the size the pooling
        parameters give); the batch and channel sizes may be included.

    Returns:
        A tensor with ``input``'s values at ``indices`` and zeros elsewhere.
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

    Args:
        input: the pooled values, (N, C, *spatial) or (C, *spatial).
        indices: the flat positions ``max_pool2d(..., return_indices=True)`` gave, of
            ``input``'s shape.
        kernel_size: the pooling's window size, an int or 2-tuple.
        stride: the pooling's step (default None: ``kernel_size``).
        padding: the pooling's padding (default 0).
        output_size: the spatial size of the result (default None: the size the pooling
        parameters give); the batch and channel sizes may be included.

    Returns:
        A tensor with ``input``'s values at ``indices`` and zeros elsewhere.
    """
    k, s, p = _unpool_args(kernel_size, stride, padding, 2)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(input, indices, tuple(size), "max_unpooling2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None):
    """Partial inverse of ``max_pool3d``: the values at their indices, zeros elsewhere.

    Same as ``torch.nn.functional.max_unpool3d``.

    Args:
        input: the pooled values, (N, C, *spatial) or (C, *spatial).
        indices: the flat positions ``max_pool3d(..., return_indices=True)`` gave, of
            ``input``'s shape.
        kernel_size: the pooling's window size, an int or 3-tuple.
        stride: the pooling's step (default None: ``kernel_size``).
        padding: the pooling's padding (default 0).
        output_size: the spatial size of the result (default None: the size the pooling
        parameters give); the batch and channel sizes may be included.

    Returns:
        A tensor with ``input``'s values at ``indices`` and zeros elsewhere.
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


# ---- fractional max pooling: torch/nn/functional.py's front ends, ATen's checks and windows --
def _intervals(sample, n_in, n_out, pool):
    """ATen's generate_intervals: each window's start along one dim, in the samples' dtype
    (float32 arithmetic for float32 input, truncated to int as its static_cast)."""
    t = sample.dtype.type
    seq = np.empty(n_out, np.int64)
    if n_out > 1:
        alpha = t(n_in - pool) / t(n_out - 1)
        i = np.arange(n_out - 1).astype(sample.dtype)
        seq[:-1] = ((i + sample) * alpha).astype(np.int64) - np.int64(sample * alpha)
    if n_out > 0:
        seq[-1] = n_in - pool
    return seq


_DIM_WORDS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional(input, kernel_size, output_size, output_ratio, samples, n):  # noqa: A002
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if n == 2 and len(_tuple(output_ratio, n)) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             f"of Ints.")
        ratio = _tuple(output_ratio, n)
        output_size = [int(input.size(d - n) * ratio[d]) for d in range(n)]
    if samples is None:
        batch = 1 if input.ndim == n + 1 else input.size(0)
        samples = rand(batch, input.size(-n - 1), n, dtype=input.dtype)
    kernel, out = _tuple(kernel_size, n), _tuple(output_size, n)
    for what, v in (("kernel_size", kernel), ("output_size", out)):
        if len(v) != n:
            raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of Ints")
    shape = tuple(input.shape)
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: "
                           f"{list(shape)}")
    for d in range(1, input.ndim):
        if shape[d] <= 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(shape)} with dimension {d} being "
                               f"empty.")
    sp = shape[-n:]
    where = name if n == 2 else name + "_out"
    for word, o, k, i in zip(_DIM_WORDS[n], out, kernel, sp):
        # ATen's 3-d check is strict where its 2-d one is not
        if o + k - 1 > i or (n == 3 and o + k - 1 == i):
            raise RuntimeError(f"{where}(): pool {word} {k} too large relative to input "
                               f"{word} {i}")
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    batch, planes = (1, shape[0]) if input.ndim == n + 1 else shape[:2]
    if samples.ndim != 3:
        raise RuntimeError("Expect _random_samples to be 3d tensor.")
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got "
                           f"{samples.shape[2]}.")
    # each plane's windows: the interval starts per dim, from its own samples (ATen pairs a
    # 2-d plane's first sample with the width, a 3-d one's in (time, height, width) order)
    draws = samples._array()
    plane = math.prod(sp)
    order = (1, 0) if n == 2 else (0, 1, 2)
    cols = []
    for b in range(batch):
        for c in range(planes):
            per_dim = [(_intervals(draws[b, c, j], sp[d], out[d], kernel[d])[:, None]
                        + np.arange(kernel[d]), None) for d, j in enumerate(order)]
            cols.append(separable(sp, per_dim)[0] + (b * planes + c) * plane)
    op = FRACTIONAL_MAX_POOL2D if n == 2 else FRACTIONAL_MAX_POOL3D
    y, at = record_window_max(op, input, np.concatenate(cols), (*shape[:-n], *out))
    return y, _make(at % plane)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """``fractional_max_pool2d`` returning (values, indices) (``return_indices`` is ignored).

    Same as ``torch.nn.functional.fractional_max_pool2d_with_indices``.
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,  # noqa: A002
                          return_indices=False, _random_samples=None):
    """Max pooling over pseudo-random windows of a 2-D signal (Graham's fractional max pooling),
    to ``output_size`` or ``output_ratio`` of the input size.

    Same as ``torch.nn.functional.fractional_max_pool2d``.
    """
    y, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return (y, idx) if return_indices else y


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """``fractional_max_pool3d`` returning (values, indices) (``return_indices`` is ignored).

    Same as ``torch.nn.functional.fractional_max_pool3d_with_indices``.
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,  # noqa: A002
                          return_indices=False, _random_samples=None):
    """Max pooling over pseudo-random windows of a 3-D signal, to ``output_size`` or
    ``output_ratio`` of the input size.

    Same as ``torch.nn.functional.fractional_max_pool3d``.
    """
    y, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return (y, idx) if return_indices else y


__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
           "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]
