"""Compiled kernels of the spatial ops (padding, interpolation, pixel shuffle, unfold/fold,
3-d and adaptive pooling, group norm, grid sampling), on flat views with the table's
signatures: ``fw(y, x0.., sh_y, sh0.., iat, fat)`` for compiled replay (re-exported by
replay_kernels) and ``bw(g, y, x0.., gx0.., sh_y, sh0.., need0.., iat, fat)`` for the sweeps.

Most spatial ops are fixed linear maps of their input, the same map on every plane (the
leading dims: batch and channels), and three map kinds cover them. ``iat`` = [taps R,
input plane size, output plane size, then per output of one plane its R input positions
within the plane, -1 for none]; output k is (plane p, position j) = divmod(k, out plane):

* gather (R = 1): ``y[k] = x[p in + pos[j]]``, or ``fat[0]`` where pos[j] < 0 (padding,
  nearest interpolation, pixel shuffle, unfold);
* rows: ``y[k] = sum_r fat[j R + r] x[p in + pos[j R + r]]`` (linear, bilinear, bicubic
  interpolation, average pooling, fold, embedding bags, affine grids);
* window max: ``y[k] = max_r x[p in + pos[j R + r]]`` (adaptive and 3-d max pooling,
  max embedding bags), whose backward recomputes the maximum's position from the saved
  input, so a replay on other values routes the gradient where eager would.
"""

import numpy as np
from numba import njit

_HEAD = 3  # iat entries before the positions: taps, input plane size, output plane size


@njit(cache=True, error_model="numpy")
def _tap(iat, k, r):
    """(flat input position or -1, index of its weight) of tap r of output k."""
    taps, in_plane, out_plane = iat[0], iat[1], iat[2]
    p = k // out_plane
    j = k - p * out_plane
    c = iat[_HEAD + j * taps + r]
    return (p * in_plane + c if c >= 0 else -1), j * taps + r


# ---- gather ----------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def gather_fill_fw(y, x0, sh_y, sh0, iat, fat):
    fill = fat[0]
    for k in range(y.shape[0]):
        at, _ = _tap(iat, k, 0)
        y[k] = x0[at] if at >= 0 else fill


@njit(cache=True, error_model="numpy")
def gather_fill_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    for k in range(g.shape[0]):
        at, _ = _tap(iat, k, 0)
        if at >= 0:
            gx0[at] += g[k]


# ---- rows of taps ----------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def sparse_rows_fw(y, x0, sh_y, sh0, iat, fat):
    for k in range(y.shape[0]):
        acc = 0.0
        for r in range(iat[0]):
            at, wi = _tap(iat, k, r)
            if at >= 0:
                acc += fat[wi] * x0[at]
        y[k] = acc


@njit(cache=True, error_model="numpy")
def sparse_rows_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    for k in range(g.shape[0]):
        gk = g[k]
        for r in range(iat[0]):
            at, wi = _tap(iat, k, r)
            if at >= 0:
                gx0[at] += fat[wi] * gk


# ---- window maxima ---------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def _window_argmax(x0, iat, k):
    """The flat input position of output k's maximum: the first one, or the first NaN."""
    best = -np.inf
    found = -1
    for r in range(iat[0]):
        at, _ = _tap(iat, k, r)
        if at < 0:
            continue
        v = x0[at]
        if found < 0 or v > best or (v != v and best == best):
            best = v
            found = at
    return found


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


# ---- 3-d convolution -------------------------------------------------------------------------
# Direct loops (no im2col) over the pairs of a narrow position q (n, o, p) and a wide one
# (n, g Cg + c, p s - pad + k dil) with weight w[o, c, k]: a convolution's output is narrow
# and its input wide, a transposed one's the other way round (its weight (C_in, C_out / g, k)
# is laid out as the convolution's). iat = [groups, stride (3), dilation (3), leading padding
# (3), transposed]; the narrow side's size gives any trailing padding. x2 is the bias (on the
# output's channels), or empty for none.
@njit(cache=True, error_model="numpy")
def _conv3d_pairs(narrow, wide, w, sh_n, sh_w, sh1, iat, out_n, out_w, gw):
    """out_n[q] += sum w * wide (narrow from wide), out_w[xi] += narrow * w (wide from narrow)
    and gw[wi] += narrow * wide, each when its array is not empty."""
    n_, c_, d_, h_, w_ = sh_w[0], sh_w[1], sh_w[2], sh_w[3], sh_w[4]
    co, cg, kd_, kh_, kw_ = sh1[0], sh1[1], sh1[2], sh1[3], sh1[4]
    od_, oh_, ow_ = sh_n[2], sh_n[3], sh_n[4]
    cog = co // iat[0]
    for n in range(n_):
        for o in range(co):
            gi = o // cog
            for od in range(od_):
                for oh in range(oh_):
                    for ow in range(ow_):
                        q = (((n * co + o) * od_ + od) * oh_ + oh) * ow_ + ow
                        nq = narrow[q] if narrow.shape[0] > 0 else 0.0
                        acc = out_n[q] if out_n.shape[0] > 0 else 0.0
                        for c in range(cg):
                            ci = gi * cg + c
                            for kd in range(kd_):
                                i_d = od * iat[1] - iat[7] + kd * iat[4]
                                if i_d < 0 or i_d >= d_:
                                    continue
                                for kh in range(kh_):
                                    i_h = oh * iat[2] - iat[8] + kh * iat[5]
                                    if i_h < 0 or i_h >= h_:
                                        continue
                                    for kw in range(kw_):
                                        i_w = ow * iat[3] - iat[9] + kw * iat[6]
                                        if i_w < 0 or i_w >= w_:
                                            continue
                                        xi = (((n * c_ + ci) * d_ + i_d) * h_ + i_h) * w_ + i_w
                                        wi = (((o * cg + c) * kd_ + kd) * kh_ + kh) * kw_ + kw
                                        if out_n.shape[0] > 0:
                                            acc += w[wi] * wide[xi]
                                        if out_w.shape[0] > 0:
                                            out_w[xi] += nq * w[wi]
                                        if gw.shape[0] > 0:
                                            gw[wi] += nq * wide[xi]
                        if out_n.shape[0] > 0:
                            out_n[q] = acc


@njit(cache=True, error_model="numpy")
def _channel_sums(g, gb, sh):
    """gb[c] += the sum of g over channel c of every sample (a bias's gradient)."""
    s = sh[2] * sh[3] * sh[4]
    for n in range(sh[0]):
        for c in range(sh[1]):
            base = (n * sh[1] + c) * s
            for j in range(s):
                gb[c] += g[base + j]


@njit(cache=True, error_model="numpy")
def conv3d_fw(y, x0, x1, x2, sh_y, sh0, sh1, sh2, iat, fat):
    nothing = y[:0]
    s = sh_y[2] * sh_y[3] * sh_y[4]
    if iat[10] == 0:  # each output starts from its bias, then takes its taps
        for i in range(y.shape[0]):
            y[i] = x2[(i // s) % sh_y[1]] if x2.shape[0] > 0 else 0.0
        _conv3d_pairs(nothing, x0, x1, sh_y, sh0, sh1, iat, y, nothing, nothing)
    else:  # the taps scattered, then the bias
        y[:] = 0.0
        _conv3d_pairs(x0, nothing, x1, sh0, sh_y, sh1, iat, nothing, y, nothing)
        if x2.shape[0] > 0:
            for i in range(y.shape[0]):
                y[i] += x2[(i // s) % sh_y[1]]


@njit(cache=True, error_model="numpy")
def conv3d_bw(g, y, x0, x1, x2, gx0, gx1, gx2, sh_y, sh0, sh1, sh2, need0, need1, need2, iat,
              fat):
    gx0, gx1 = (gx0 if need0 else gx0[:0]), (gx1 if need1 else gx1[:0])
    if iat[10] == 0:  # g narrow, x0 wide
        _conv3d_pairs(g, x0, x1, sh_y, sh0, sh1, iat, g[:0], gx0, gx1)
    else:  # x0 narrow, g wide: the input's gradient is g convolved
        _conv3d_pairs(x0, g, x1, sh0, sh_y, sh1, iat, gx0, g[:0], gx1)
    if need2 and gx2.shape[0] > 0:  # (x2 unsaved: may be empty)
        _channel_sums(g, gx2, sh_y)
