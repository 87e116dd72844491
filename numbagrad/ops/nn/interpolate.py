"""torch.nn.functional's interpolate (nearest, nearest-exact, linear, bilinear, bicubic,
trilinear, area) and the upsample aliases: per-dimension taps computed as torch's
UpSample.h computes them, combined by spatial_maps.separable."""

import warnings

import numpy as np

from ... import dtypes
from .pool import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from .spatial_maps import (
    UPSAMPLE_BICUBIC2D,
    UPSAMPLE_BILINEAR2D,
    UPSAMPLE_LINEAR1D,
    UPSAMPLE_NEAREST,
    UPSAMPLE_NEAREST_EXACT,
    UPSAMPLE_TRILINEAR3D,
    record_gather,
    record_rows,
    separable,
)

_F32 = np.float32


def _scale_value(scale, n_in, n_out):
    """torch's compute_scales_value: 1 / scale_factor when one was given, else in / out."""
    if scale is not None and scale > 0:
        return 1.0 / scale
    return n_in / n_out


def _nearest_taps(n_in, n_out, scale, exact):
    dst = np.arange(n_out, dtype=np.int64)
    if exact:
        s = _F32(_scale_value(scale, n_in, n_out))
        src = np.floor(((dst + 0.5) * np.float64(s)).astype(_F32)).astype(np.int64)
    elif n_out == n_in:
        src = dst
    elif n_out == 2 * n_in:
        src = dst >> 1
    else:
        s = _F32(_scale_value(scale, n_in, n_out))
        src = np.floor(dst.astype(_F32) * s).astype(np.int64)
    return np.minimum(src, n_in - 1)[:, None], None


def _area_scale(n_in, n_out, align_corners, scale):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return _scale_value(scale, n_in, n_out)


def _source(n_out, s, align_corners, cubic):
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        return s * dst
    src = s * (dst + 0.5) - 0.5
    return src if cubic else np.maximum(src, 0.0)


def _linear_taps(n_in, n_out, scale, align_corners):
    src = _source(n_out, _area_scale(n_in, n_out, align_corners, scale), align_corners, False)
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    lam = np.clip(src - i0, 0.0, 1.0)
    i1 = i0 + (i0 < n_in - 1)
    return np.stack([i0, i1], 1), np.stack([1.0 - lam, lam], 1)


def _cubic_taps(n_in, n_out, scale, align_corners):
    src = _source(n_out, _area_scale(n_in, n_out, align_corners, scale), align_corners, True)
    i = np.floor(src)
    t = src - i
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    w = np.stack([far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)], 1)
    idx = np.clip(i.astype(np.int64)[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return idx, w


_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_NEEDS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def _output_size(x, size, scale_factor, dim):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(x.shape[2:])} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    f"output size in (o1, o2, ...,oK) format.")
            return [int(s) for s in size], None
        return [int(size)] * dim, None
    if scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(x.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    f"(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                    f"format.")
            return None, [float(s) for s in scale_factor]
        return None, [float(scale_factor)] * dim
    raise ValueError("either size or scale_factor should be defined")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    """``input`` resized to ``size`` or by ``scale_factor``, interpolated by ``mode``.

    Same as ``torch.nn.functional.interpolate``; ``antialias=True`` raises
    NotImplementedError.
    """
    x = input
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = x.ndim - 2
    out, scales = _output_size(x, size, scale_factor, dim)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        out = [int(x.shape[2 + i] * scales[i]) for i in range(dim)]
        scales = None
    if antialias:
        if not (mode in ("bilinear", "bicubic", "lanczos") and x.ndim == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                             "modes and requires a 4-D tensor as input")
        raise NotImplementedError("numbagrad: interpolate(antialias=True) is not supported")
    if mode in _NEEDS and x.ndim != _NEEDS[mode] and x.ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {x.ndim}D input, but {mode} mode needs "
                                  f"{_NEEDS[mode]}D input")
    if x.ndim not in (3, 4, 5) or mode not in (*_NEEDS, "nearest", "nearest-exact", "area"):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {x.ndim}D) for the modes: {_MODES} (got {mode})")
    if out is None:
        out = [int(x.shape[2 + i] * scales[i]) for i in range(dim)]
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1](x, out)
    return _upsample(x, out, scales, mode, align_corners)


def _upsample(x, out, scales, mode, align_corners):
    dim = len(out)
    sp = tuple(x.shape[2:])
    if any(o <= 0 for o in out) or any(n <= 0 for n in sp):
        names = ("D", "H", "W")[3 - dim:]
        given = ", ".join(f"{n}: {s}" for n, s in zip(names, sp))
        wanted = ", ".join(f"{n}: {s}" for n, s in zip(names, out))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({given}) and output ({wanted})")
    nearest = mode.startswith("nearest")
    allowed = x.dtype.is_floating_point or (nearest and x.dtype is dtypes.uint8)
    if not allowed:
        what = "nearest" if nearest else ("cubic" if mode == "bicubic" else "linear")
        raise NotImplementedError(f'"compute_indices_weights_{what}" not implemented for '
                                  f"'{x.dtype.scalar_name}'")
    scales = scales or [None] * dim
    out_shape = (*x.shape[:2], *out)
    if nearest:
        exact = mode == "nearest-exact"
        taps = [_nearest_taps(n, o, s, exact) for n, o, s in zip(sp, out, scales)]
        cols, _ = separable(sp, taps)
        op = (UPSAMPLE_NEAREST_EXACT if exact else UPSAMPLE_NEAREST)[dim]
        return record_gather(op, x, cols, out_shape, in_plane=int(np.prod(sp)))
    make = _cubic_taps if mode == "bicubic" else _linear_taps
    taps = [make(n, o, s, align_corners) for n, o, s in zip(sp, out, scales)]
    cols, weights = separable(sp, taps)
    op = {"linear": UPSAMPLE_LINEAR1D, "bilinear": UPSAMPLE_BILINEAR2D,
          "bicubic": UPSAMPLE_BICUBIC2D, "trilinear": UPSAMPLE_TRILINEAR3D}[mode]
    return record_rows(op, x, cols, weights, out_shape, int(np.prod(sp)))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):  # noqa: A002
    """``input`` resized as ``interpolate`` resizes it (deprecated in torch).

    Same as ``torch.nn.functional.upsample``.
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):  # noqa: A002
    """``interpolate(input, ..., mode="nearest")``.

    Same as ``torch.nn.functional.upsample_nearest``.
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):  # noqa: A002
    """``interpolate(input, ..., mode="bilinear", align_corners=True)``.

    Same as ``torch.nn.functional.upsample_bilinear``.
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]
