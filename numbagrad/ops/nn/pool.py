# ruff: noqa: A002 - torch's argument names (input)
"""torch.nn.functional's 1-d pooling (over the 2-d ops, as torch runs them: an unsqueezed
height of 1, squeezed back), adaptive max pooling, and 3-d pooling (window maps of
spatial_maps)."""

import numpy as np

from ... import dtypes
from ...tensor import _make
from ..reduce.reductions import mean as _mean
from ..shape.movement import squeeze, unsqueeze
from .conv_functional import _pool_out, adaptive_avg_pool2d, avg_pool2d, max_pool2d
from .spatial_maps import (
    ADAPTIVE_AVG_POOL3D,
    ADAPTIVE_MAX_POOL2D,
    ADAPTIVE_MAX_POOL3D,
    AVG_POOL3D,
    MAX_POOL3D,
    record_rows,
    record_window_max,
    separable,
)


def _sizes(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _one(v, name):
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise RuntimeError(f"{name} must be a single int, or a tuple of one int")
        return int(v[0])
    return int(v)


def _check_1d(x, name):
    if x.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {name})")


# ---- 1-d pooling -----------------------------------------------------------------------------
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max pooling over a 1-D signal, ``kernel_size`` windows every ``stride`` (and indices).

    Same as ``torch.nn.functional.max_pool1d``.
    """
    x = input
    if x.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{_sizes(x.shape)}")
    k = _one(kernel_size, "max_pool1d: kernel_size")
    s = k if stride is None or stride == () or stride == [] else _one(stride, "max_pool1d: stride")
    out = max_pool2d(unsqueeze(x, -2), (1, k), (1, s), (0, _one(padding, "max_pool1d: padding")),
                     (1, _one(dilation, "max_pool1d: dilation")), ceil_mode, return_indices)
    if return_indices:
        return squeeze(out[0], -2), _make(out[1]._array().squeeze(-2))
    return squeeze(out, -2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Average pooling over a 1-D signal, ``kernel_size`` windows every ``stride``.

    Same as ``torch.nn.functional.avg_pool1d``.
    """
    x = input
    _check_1d(x, "avg_pool1d")
    k = _one(kernel_size, "avg_pool1d: kernel_size")
    s = k if stride is None or stride == () or stride == [] else _one(stride, "avg_pool1d: stride")
    out = avg_pool2d(unsqueeze(x, -2), (1, k), (1, s), (0, _one(padding, "avg_pool1d: padding")),
                     ceil_mode, count_include_pad)
    return squeeze(out, -2)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling over a 1-D signal into ``output_size`` windows.

    Same as ``torch.nn.functional.adaptive_avg_pool1d``.
    """
    x = input
    _check_1d(x, "adaptive_avg_pool1d")
    n = _one(output_size, "adaptive_avg_pool1d: output_size")
    return squeeze(adaptive_avg_pool2d(unsqueeze(x, -2), (1, n)), -2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling over a 1-D signal into ``output_size`` windows (and the argmax indices).

    Same as ``torch.nn.functional.adaptive_max_pool1d``.
    """
    x = input
    _check_1d(x, "adaptive_max_pool1d")
    n = _one(output_size, "adaptive_max_pool1d: output_size")
    out, idx = _adaptive_max(unsqueeze(x, -2), (1, n), ADAPTIVE_MAX_POOL2D, "adaptive_max_pool2d")
    out = squeeze(out, -2)
    return (out, _make(idx.reshape(out.shape))) if return_indices else out


# ---- adaptive pooling ------------------------------------------------------------------------
def _adaptive_windows(n_in, n_out):
    """Each output's window [floor(o n / m), ceil((o + 1) n / m)) as positions padded with -1,
    and the window lengths."""
    o = np.arange(n_out, dtype=np.int64)
    start = (o * n_in) // n_out
    end = ((o + 1) * n_in + n_out - 1) // n_out
    taps = int((end - start).max()) if n_out else 0
    idx = start[:, None] + np.arange(taps)
    return np.where(idx < end[:, None], idx, -1), end - start


def _adaptive_size(x, output_size, k):
    if isinstance(output_size, (int, np.integer)):
        return [int(output_size)] * k
    out = list(output_size)
    if x.ndim <= len(out):
        raise ValueError(f"Input dimension should be at least {len(out) + 1}")
    return [x.shape[x.ndim - len(out) + i] if v is None else int(v) for i, v in enumerate(out)]


def _adaptive_check(x, out, name):
    k = len(out)
    if x.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"{name}(): Expected {k + 1}D or {k + 2}D tensor, but got "
                           f"{_sizes(x.shape)}")
    for d in range(x.ndim - k, x.ndim):
        if x.shape[d] <= 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_sizes(x.shape)} with dimension "
                               f"{d} being empty")
    if any(o < 0 for o in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(out)}: {_sizes((*x.shape[:-k], *out))}")


def _adaptive_max(x, out, op, name):
    k = len(out)
    _adaptive_check(x, out, name)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{x.dtype.scalar_name}'")
    sp = tuple(x.shape[x.ndim - k:])
    lead = tuple(x.shape[:x.ndim - k])
    cols, _ = separable(sp, [(_adaptive_windows(n, o)[0], None) for n, o in zip(sp, out)])
    return record_window_max(op, x, cols, (*lead, *out), int(np.prod(sp)))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling over a 2-D signal into an ``output_size`` grid (and the argmax indices).

    Same as ``torch.nn.functional.adaptive_max_pool2d``.
    """
    out = _adaptive_size(input, output_size, 2)
    y, idx = _adaptive_max(input, out, ADAPTIVE_MAX_POOL2D, "adaptive_max_pool2d")
    return (y, _make(idx)) if return_indices else y


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling over a 3-D signal into an ``output_size`` grid (and the argmax indices).

    Same as ``torch.nn.functional.adaptive_max_pool3d``.
    """
    out = _adaptive_size(input, output_size, 3)
    y, idx = _adaptive_max(input, out, ADAPTIVE_MAX_POOL3D, "adaptive_max_pool3d")
    return (y, _make(idx)) if return_indices else y


def adaptive_avg_pool3d(input, output_size):
    """Average pooling over a 3-D signal into an ``output_size`` grid of windows.

    Same as ``torch.nn.functional.adaptive_avg_pool3d``.
    """
    x = input
    out = _adaptive_size(x, output_size, 3)
    if out == [1, 1, 1] and x.ndim in (4, 5):  # torch: a mean over the last three dims
        return _mean(x, (-1, -2, -3), keepdim=True)
    _adaptive_check(x, out, "adaptive_avg_pool3d")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_avg_pool3d_cpu\" not implemented for "
                                  f"'{x.dtype.scalar_name}'")
    sp = tuple(x.shape[-3:])
    taps = []
    for n, o in zip(sp, out):
        idx, length = _adaptive_windows(n, o)
        taps.append((idx, np.broadcast_to(1.0 / length[:, None], idx.shape)))
    cols, weights = separable(sp, taps)
    return record_rows(ADAPTIVE_AVG_POOL3D, x, cols, weights, (*x.shape[:-3], *out),
                       int(np.prod(sp)))


# ---- 3-d pooling -----------------------------------------------------------------------------
def _triple(v, name, allow_none=False):
    if allow_none and (v is None or (isinstance(v, (tuple, list)) and not v)):
        return None
    if isinstance(v, (int, np.integer)):
        return [int(v)] * 3
    v = [int(a) for a in v]
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise RuntimeError(f"{name} must either be a single int, or a tuple of three ints")
    return v


def _pool3d_args(name, x, kernel_size, stride, padding, dilation, ceil_mode):
    k = _triple(kernel_size, f"{name}: kernel_size")
    s = _triple(stride, f"{name}: stride", allow_none=True) or k
    p = _triple(padding, f"{name}: padding")
    d = _triple(dilation, f"{name}: dilation")
    if x.ndim not in (4, 5) or any(n == 0 for n in x.shape[1:]):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    sp = tuple(x.shape[-3:])
    out = [_pool_out(n, k[i], p[i], s[i], d[i], ceil_mode) for i, n in enumerate(sp)]
    return k, s, p, d, sp, out


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max pooling over a 3-D signal, ``kernel_size`` windows every ``stride`` (and indices).

    Same as ``torch.nn.functional.max_pool3d``.
    """
    x = input
    k, s, p, d, sp, out = _pool3d_args("max_pool3d", x, kernel_size, stride, padding, dilation,
                                       ceil_mode)
    if any(o < 1 for o in out):
        c = x.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, sp))}). Calculated "
                           f"output size: ({c}x{'x'.join(map(str, out))}). Output size is too "
                           f"small")
    if not x.dtype.is_floating_point and x.dtype is dtypes.bool_:
        raise NotImplementedError("\"max_pool3d\" not implemented for 'Bool'")
    taps = []
    for i, n in enumerate(sp):
        idx = np.arange(out[i])[:, None] * s[i] - p[i] + np.arange(k[i]) * d[i]
        taps.append((np.where((idx >= 0) & (idx < n), idx, -1), None))
    lead = tuple(x.shape[:-3])
    cols, _ = separable(sp, taps)
    plane = int(np.prod(sp))
    if x.dtype.is_floating_point:
        y, at = record_window_max(MAX_POOL3D, x, cols, (*lead, *out), plane)
    else:  # integers: no gradient, exact values
        data = x._array().reshape(-1, plane)
        low = np.iinfo(data.dtype).min
        picked = np.where(cols >= 0, data[:, np.maximum(cols, 0)], low)  # (planes, P, R)
        r = np.argmax(picked, 2)
        at = cols[np.arange(cols.shape[0])[None, :], r].reshape((*lead, *out))
        y = _make(np.take_along_axis(picked, r[..., None], 2).reshape((*lead, *out)))
    return (y, _make(at)) if return_indices else y


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Average pooling over a 3-D signal, ``kernel_size`` windows every ``stride``.

    Same as ``torch.nn.functional.avg_pool3d``.
    """
    x = input
    k, s, p, _, sp, out = _pool3d_args("avg_pool3d", x, kernel_size, stride, padding, 1,
                                       ceil_mode)
    if any(n + 2 * p[i] < k[i] for i, n in enumerate(sp)):
        raise RuntimeError(f"input image (T: {sp[0]} H: {sp[1]} W: {sp[2]}) smaller than kernel "
                           f"size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if not x.dtype.is_floating_point or x.dtype is dtypes.float16:
        raise NotImplementedError(f"\"avg_pool3d_out_frame\" not implemented for "
                                  f"'{x.dtype.scalar_name}'")
    taps = []
    for i, n in enumerate(sp):
        start = np.arange(out[i]) * s[i] - p[i]
        end = np.minimum(start + k[i], n + p[i])
        pool = end - start
        idx = start[:, None] + np.arange(k[i])
        valid = (idx >= 0) & (idx < np.minimum(end, n)[:, None])
        count = valid.sum(1)
        if divisor_override is not None:
            w = np.full(out[i], 1.0 / divisor_override if i == 0 else 1.0)
        else:
            w = 1.0 / (pool if count_include_pad else np.maximum(count, 1))
        taps.append((np.where(valid, idx, -1), np.broadcast_to(w[:, None], idx.shape)))
    lead = tuple(x.shape[:-3])
    cols, weights = separable(sp, taps)
    return record_rows(AVG_POOL3D, x, cols, weights, (*lead, *out), int(np.prod(sp)))


__all__ = ["max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "adaptive_avg_pool3d", "max_pool3d",
           "avg_pool3d"]
