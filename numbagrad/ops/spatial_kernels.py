"""Compiled kernels of the spatial ops (padding, interpolation, pixel shuffle, unfold/fold,
3-d and adaptive pooling, group norm, grid sampling), on flat views with the table's
signatures: ``fw(y, x0.., sh_y, sh0.., iat, fat)`` for compiled replay (re-exported by
replay_kernels) and ``bw(g, y, x0.., gx0.., sh_y, sh0.., need0.., iat, fat)`` for the sweeps.

Most spatial ops are fixed linear maps of their input, and three map kinds cover them:

* gather: ``y[k] = x[iat[k]]``, or ``fat[0]`` where ``iat[k] < 0`` (padding, nearest
  interpolation, pixel shuffle, unfold);
* rows: ``y[k] = sum_r fat[k R + r] x[iat[1 + k R + r]]`` over R taps per output, taps
  with a negative position skipped (linear, bilinear, bicubic interpolation, average
  pooling, fold, embedding bags);
* window max: ``y[k] = max_r x[iat[1 + k R + r]]`` (adaptive and 3-d max pooling), whose
  backward recomputes the maximum's position from the saved input, so a replay on other
  values routes the gradient where eager would.
"""

import numpy as np
from numba import njit


# ---- gather ----------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def gather_fill_fw(y, x0, sh_y, sh0, iat, fat):
    fill = fat[0]
    for k in range(y.shape[0]):
        p = iat[k]
        y[k] = x0[p] if p >= 0 else fill


@njit(cache=True, error_model="numpy")
def gather_fill_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    for k in range(g.shape[0]):
        p = iat[k]
        if p >= 0:
            gx0[p] += g[k]


# ---- rows of taps ----------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def sparse_rows_fw(y, x0, sh_y, sh0, iat, fat):
    taps = iat[0]
    for k in range(y.shape[0]):
        acc = 0.0
        for r in range(taps):
            p = iat[1 + k * taps + r]
            if p >= 0:
                acc += fat[k * taps + r] * x0[p]
        y[k] = acc


@njit(cache=True, error_model="numpy")
def sparse_rows_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    taps = iat[0]
    for k in range(g.shape[0]):
        gk = g[k]
        for r in range(taps):
            p = iat[1 + k * taps + r]
            if p >= 0:
                gx0[p] += fat[k * taps + r] * gk


# ---- window maxima ---------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def _window_argmax(x0, iat, k):
    """The flat input position of output k's maximum: the first one, or the first NaN."""
    taps = iat[0]
    best = -np.inf
    at = -1
    for r in range(taps):
        p = iat[1 + k * taps + r]
        if p < 0:
            continue
        v = x0[p]
        if at < 0 or v > best or (v != v and best == best):
            best = v
            at = p
    return at


@njit(cache=True, error_model="numpy")
def window_max_fw(y, x0, sh_y, sh0, iat, fat):
    for k in range(y.shape[0]):
        at = _window_argmax(x0, iat, k)
        y[k] = x0[at] if at >= 0 else 0.0  # an empty window (an empty bag): 0, as torch


@njit(cache=True, error_model="numpy")
def window_max_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    for k in range(g.shape[0]):
        at = _window_argmax(x0, iat, k)
        if at >= 0:
            gx0[at] += g[k]


# ---- group norm ------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def _group_stats(x0, start, m, eps):
    mean = 0.0
    for j in range(m):
        mean += x0[start + j]
    mean /= m
    var = 0.0
    for j in range(m):
        var += (x0[start + j] - mean) ** 2
    return mean, 1.0 / np.sqrt(var / m + eps)


@njit(cache=True, error_model="numpy")
def group_norm_fw(y, x0, x1, x2, sh_y, sh0, sh1, sh2, iat, fat):
    # x0 (N, C, *spatial), iat[0] = groups, fat[0] = eps
    n, c, groups = sh0[0], sh0[1], iat[0]
    s = x0.shape[0] // (n * c) if n * c else 0
    cg = c // groups
    m = cg * s
    for i in range(n):
        for gi in range(groups):
            start = (i * c + gi * cg) * s
            mean, rstd = _group_stats(x0, start, m, fat[0])
            for cc in range(cg):
                ch = gi * cg + cc
                w, b = x1[ch], x2[ch]
                for j in range(s):
                    q = start + cc * s + j
                    y[q] = (x0[q] - mean) * rstd * w + b


@njit(cache=True, error_model="numpy")
def group_norm_bw(g, y, x0, x1, x2, gx0, gx1, gx2, sh_y, sh0, sh1, sh2, need0, need1, need2,
                  iat, fat):
    n, c, groups = sh0[0], sh0[1], iat[0]
    s = x0.shape[0] // (n * c) if n * c else 0
    cg = c // groups
    m = cg * s
    for i in range(n):
        for gi in range(groups):
            start = (i * c + gi * cg) * s
            mean, rstd = _group_stats(x0, start, m, fat[0])
            a = 0.0  # mean of g * w
            b = 0.0  # mean of g * w * xhat
            for cc in range(cg):
                ch = gi * cg + cc
                for j in range(s):
                    q = start + cc * s + j
                    xhat = (x0[q] - mean) * rstd
                    gw = g[q] * x1[ch]
                    a += gw
                    b += gw * xhat
                    if need1:
                        gx1[ch] += g[q] * xhat
                    if need2:
                        gx2[ch] += g[q]
            if need0:
                a /= m
                b /= m
                for cc in range(cg):
                    ch = gi * cg + cc
                    for j in range(s):
                        q = start + cc * s + j
                        xhat = (x0[q] - mean) * rstd
                        gx0[q] += rstd * (g[q] * x1[ch] - a - xhat * b)
