# ruff: noqa: A002 - torch's argument names (input)
"""torch.nn.functional.affine_grid (a rows-of-taps op over theta: AffineGridGeneratorBackward0)
and grid_sample (2-d and 3-d, bilinear and nearest, every padding mode), the latter composed of
numbagrad ops: the sampling positions' integer parts and the padding's piecewise-linear
map are constants of the grid's values, the fractions are ops on the grid, so the gradients
of either order, to the input and to the grid, are torch's."""

import itertools
import math
import warnings

import numpy as np

from ..index.indexing import gather_flat
from ..shape.movement import unsqueeze
from ..vjp import const
from .spatial_maps import AFFINE_GRID, record_rows


def _linspace(steps, align_corners):
    if steps <= 1:
        return np.zeros(max(steps, 0))
    r = np.linspace(-1.0, 1.0, steps)
    return r if align_corners else r * (steps - 1) / steps


def _align_default(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                      "old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=3)
        return False
    return bool(align_corners)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps ``theta`` for an output of ``size`` (``grid_sample``).

    Same as ``torch.nn.functional.affine_grid``.
    """
    align_corners = _align_default(align_corners)
    given, size = size, [int(s) for s in size]
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{given}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{given}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size "
                                  f"{given}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    n = size[0]
    spatial = size[2:]
    k = len(spatial)  # base grid: (x, y[, z], 1) at each output point, x along the last dim
    axes = [_linspace(s, align_corners) for s in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([*reversed(mesh), np.ones(spatial)], -1).reshape(-1, k + 1)  # (P, k + 1)
    points = base.shape[0]
    # output (n, p, i) = sum_j base[p, j] theta[n, i, j]
    cols = (np.arange(n)[:, None, None, None] * k * (k + 1)
            + np.arange(k)[None, None, :, None] * (k + 1)
            + np.arange(k + 1)[None, None, None, :])
    cols = np.broadcast_to(cols, (n, points, k, k + 1)).reshape(-1, k + 1)
    weights = np.broadcast_to(base[None, :, None, :], (n, points, k, k + 1)).reshape(-1, k + 1)
    return record_rows(AFFINE_GRID, theta, cols, weights, (n, *spatial, k))


# ---- grid_sample -----------------------------------------------------------------------------
def _reflect(v, twice_low, twice_high):
    """torch's reflect_coordinates_set_grad: the reflected coordinate and its derivative."""
    if twice_low == twice_high:
        return np.zeros_like(v), np.zeros_like(v)
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    v = v - lo
    sign = np.where(v < 0, -1.0, 1.0)
    v = np.abs(v)
    extra = np.fmod(v, span)
    flips = np.floor(v / span)
    even = np.fmod(flips, 2) == 0
    return np.where(even, extra + lo, span - extra + lo), np.where(even, sign, -sign)


def _source(coord, size, padding_mode, align_corners):
    """The pixel coordinate of each grid coordinate and its derivative (torch's
    grid_sampler_compute_source_index_set_grad)."""
    if align_corners:
        v, grad = (coord + 1) / 2 * (size - 1), (size - 1) / 2
    else:
        v, grad = ((coord + 1) * size - 1) / 2, size / 2
    grad = np.full(v.shape, float(grad))
    if padding_mode == "reflection":
        if align_corners:
            v, r = _reflect(v, 0, 2 * (size - 1))
        else:
            v, r = _reflect(v, -1, 2 * size - 1)
        grad = grad * r
    if padding_mode in ("border", "reflection"):
        inside = (v > 0) & (v < size - 1)
        v = np.clip(v, 0, size - 1)
        grad = np.where(inside, grad, 0.0)
    return v, grad


def _check_grid(x, grid, mode, padding_mode):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    xs, gs = list(x.shape), list(grid.shape)
    if x.ndim != grid.ndim or x.ndim not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {xs} and grid with sizes "
                           f"{gs}")
    if xs[0] != gs[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {xs} and grid with sizes {gs}")
    if gs[-1] != x.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {x.ndim - 2} in last "
                           f"dimension, but got grid with sizes {gs}")
    if x.dtype is not grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {x.dtype} and grid has {grid.dtype}")
    if mode == "bicubic" and x.ndim == 5:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if mode == "bicubic":
        raise NotImplementedError("numbagrad: grid_sample supports mode 'bilinear' or "
                                  "'nearest' only")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """``input`` sampled at the positions ``grid`` gives, by interpolation.

    Same as ``torch.nn.functional.grid_sample``; mode ``"bilinear"`` (trilinear on 5-D input)
    or ``"nearest"`` only.
    """
    x = input
    _check_grid(x, grid, mode, padding_mode)
    align_corners = _align_default(align_corners)
    n, c, *size = x.shape
    k = len(size)  # grid's last dim holds x (the last dim's coordinate), y[, z]
    g = grid._array().astype(np.float64)
    src = [_source(g[..., j], size[k - 1 - j], padding_mode, align_corners) for j in range(k)]
    steps = [math.prod(size[k - j:]) for j in range(k)]  # flat stride of coordinate j
    dt = x._array().dtype
    plane = (np.arange(n)[:, None] * c + np.arange(c)[None, :]) * math.prod(size)  # (N, C)
    shape = (n, c, *grid.shape[1:-1])

    def corner(points):
        """x at the integer points (one array per coordinate), zero outside the input."""
        ok = np.logical_and.reduce([(p >= 0) & (p < size[k - 1 - j])
                                    for j, p in enumerate(points)])
        at = np.where(ok, sum(p * s for p, s in zip(points, steps)), 0).astype(np.int64)
        pos = plane.reshape(n, c, *[1] * k) + at[:, None]
        v = gather_flat(x, pos, shape)
        return v if ok.all() else v * const(np.broadcast_to(ok[:, None], shape), dt)

    coords = [grid[..., j] for j in range(k)]
    if mode == "nearest":
        out = corner([np.rint(i).astype(np.int64) for i, _ in src])
        # torch's grid gradient is zero here: a zero path keeps the grid in the graph
        return out + unsqueeze(coords[0] * 0.0, 1)
    lows = [np.floor(i) for i, _ in src]
    # the fractions as ops on the grid: value i - low, derivative the source map's
    fracs = [coords[j] * const(a, dt) + const(i - a * g[..., j] - lo, dt)
             for j, ((i, a), lo) in enumerate(zip(src, lows))]
    lows = [lo.astype(np.int64) for lo in lows]
    out = None
    # torch's order of the corners: x fastest, then y, then z; each weight a product x, y, z
    for bits in itertools.product((0, 1), repeat=k):
        bits = bits[::-1]
        w = None
        for f, b in zip(fracs, bits):
            f = f if b else 1.0 - f
            w = f if w is None else w * f
        term = corner([lo + b for lo, b in zip(lows, bits)]) * unsqueeze(w, 1)
        out = term if out is None else out + term
    return out


__all__ = ["affine_grid", "grid_sample"]
