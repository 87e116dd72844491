# ruff: noqa: N803, N806 - the kernels keep the usual names of pooling geometry (H, W, Ho..)
"""2-d max and average pooling (adaptive too): table records and compiled forward and backward
kernels (torch.nn.functional's front ends and the differentiable rules are in
conv_functional.py).

max_pool2d keeps the flat input position of every output's maximum (as torch keeps its
indices), so its backward is a scatter-add, planes in parallel; avg_pool2d and
adaptive_avg_pool2d share one window function (``_window``) and one backward kernel. Their
differentiable rules are flat index maps (numbagrad/ops/index/indexing.py). As in conv.py,
the sweep calls the serial kernels only; big nodes choose parallel chunks in Python.
"""

import numpy as np
from numba import njit, prange
from numba import uint64 as _u

from ...engine.registry import Sample, defop
from .conv import _CHUNKS

# elements from which a pooling op runs its planes in parallel (in _CHUNKS chunks)
_PAR_ELEMS = 1 << 15
_F = "lib.nn.functional."


# ---- pooling kernels -------------------------------------------------------------------------
@njit(cache=True)
def _pool_spans(size, out, k, stride, pad, dil):
    """First and end input index of each output's window along one dim (torch's clipping:
    the start moves up by whole dilations until it is inside)."""
    spans = np.empty((out, 2), np.int64)
    for p in range(out):
        a = p * stride - pad
        e = min(a + (k - 1) * dil + 1, size)
        while a < 0:
            a += dil
        spans[p, 0], spans[p, 1] = a, e
    return spans


@njit(cache=True)
def _maxpool_planes(x, y, idx, k0, k1, H, W, Ho, Wo, rows, cols, dh, dw):
    for k in range(k0, k1):
        xb, yb = k * H * W, k * Ho * Wo
        for p in range(Ho):
            h0, h1 = rows[p, 0], rows[p, 1]
            for q in range(Wo):
                w0, w1 = cols[q, 0], cols[q, 1]
                best = -np.inf
                at = h0 * W + w0
                ih = h0
                while ih < h1:  # (while: a range with a variable step costs a division)
                    r = xb + ih * W
                    iw = w0
                    while iw < w1:
                        v = x[_u(r + iw)]
                        if v > best or v != v:  # the first maximum; NaN wins, as in torch
                            best = v
                            at = ih * W + iw
                        iw += dw
                    ih += dh
                y[_u(yb + p * Wo + q)] = best
                idx[_u(yb + p * Wo + q)] = xb + at


@njit(cache=True, parallel=True)
def _maxpool_par(x, y, idx, planes, H, W, Ho, Wo, rows, cols, dh, dw, nc):
    for c in prange(nc):
        _maxpool_planes(x, y, idx, c * planes // nc, (c + 1) * planes // nc, H, W, Ho, Wo, rows,
                        cols, dh, dw)


@njit(cache=True)
def _plane_chunks(planes, size):
    if planes < 2 or size < _PAR_ELEMS:
        return 1
    return min(planes, _CHUNKS)


def maxpool_forward(x, planes, H, W, Ho, Wo, prm, dtype_like):
    """Values (in x's dtype) and global flat input positions of the window maxima."""
    y = np.empty(planes * Ho * Wo, dtype_like.dtype)
    idx = np.empty(planes * Ho * Wo, np.int64)
    rows = _pool_spans(H, Ho, prm[0], prm[2], prm[4], prm[6])
    cols = _pool_spans(W, Wo, prm[1], prm[3], prm[5], prm[7])
    nc = _plane_chunks(planes, planes * H * W)
    if nc > 1:
        _maxpool_par(x, y, idx, planes, H, W, Ho, Wo, rows, cols, prm[6], prm[7], nc)
    else:
        _maxpool_planes(x, y, idx, 0, planes, H, W, Ho, Wo, rows, cols, prm[6], prm[7])
    return y, idx


@njit(cache=True, parallel=True)
def _scatter_par(g, gx, pos, planes, P, nc):
    # every output of plane k points into plane k of the input: planes never collide
    for c in prange(nc):
        for k in range(c * planes // nc * P, (c + 1) * planes // nc * P):
            gx[_u(pos[k])] += g[k]


@njit(cache=True)
def maxpool2d_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # iat = [kh, kw, sh, sw, ph, pw, dh, dw, ceil_mode, flat input position of each output]
    # Serial: the sweep's kernel; big nodes go through _maxpool_bw_big (parallel planes).
    pos = iat[9:]
    for k in range(g.shape[0]):
        gx0[_u(pos[k])] += g[k]


def _maxpool_bw_big(g, xs, gxs, iat, fat):
    """A big max-pooling node's backward (numpy_bw hook): the scatter-add over planes in
    parallel chunks, called from Python (see the note above _nfw_any)."""
    P = g.shape[-1] * g.shape[-2]
    g, gx0 = g.reshape(-1), gxs[0].reshape(-1)
    planes = g.shape[0] // P if P > 0 else 0
    nc = _plane_chunks(planes, g.shape[0] + gx0.shape[0])
    if nc > 1:
        _scatter_par(g, gx0, iat[9:], planes, P, nc)
    else:
        maxpool2d_bw(g, g[:0], g[:0], gx0, np.empty(0, np.int64), np.empty(0, np.int64), True,
                     iat, fat)


@njit(cache=True)
def _window(p, q, H, W, Ho, Wo, prm):
    """Rows h0..h1, columns w0..w1 and divisor of output (p, q) of an average pooling.
    prm = [adaptive, kh, kw, sh, sw, ph, pw, count_include_pad, has_divisor, divisor]."""
    if prm[0] == 1:
        h0 = (p * H) // Ho
        h1 = ((p + 1) * H + Ho - 1) // Ho
        w0 = (q * W) // Wo
        w1 = ((q + 1) * W + Wo - 1) // Wo
        return h0, h1, w0, w1, (h1 - h0) * (w1 - w0)
    kh, kw, sh, sw, ph, pw = prm[1], prm[2], prm[3], prm[4], prm[5], prm[6]
    h0 = p * sh - ph
    w0 = q * sw - pw
    h1 = min(h0 + kh, H + ph)
    w1 = min(w0 + kw, W + pw)
    pool = (h1 - h0) * (w1 - w0)
    h0 = max(h0, 0)
    w0 = max(w0, 0)
    h1 = min(h1, H)
    w1 = min(w1, W)
    if prm[8] != 0:
        d = prm[9]
    elif prm[7] != 0:
        d = pool
    else:
        d = (h1 - h0) * (w1 - w0)
    return h0, h1, w0, w1, d


@njit(cache=True)
def _windows(H, W, Ho, Wo, prm):
    """Every output's window, once for all planes: rows h0..h1 per output row (rows[p]),
    columns w0..w1 per output column (cols[q]), and the divisor per output (0: empty)."""
    rows = np.empty((Ho, 2), np.int64)
    cols = np.empty((Wo, 2), np.int64)
    div = np.zeros(Ho * Wo)
    for p in range(Ho):
        for q in range(Wo):
            h0, h1, w0, w1, d = _window(p, q, H, W, Ho, Wo, prm)
            rows[p, 0], rows[p, 1] = h0, h1
            cols[q, 0], cols[q, 1] = w0, w1
            if h0 < h1 and w0 < w1:
                div[p * Wo + q] = d
    return rows, cols, div


@njit(cache=True)
def _avgpool_planes(x, y, k0, k1, H, W, Ho, Wo, rows, cols, div, integer):
    for k in range(k0, k1):
        xb, yb = k * H * W, k * Ho * Wo
        for p in range(Ho):
            h0, h1 = rows[p, 0], rows[p, 1]
            for q in range(Wo):
                d = div[p * Wo + q]
                if d == 0:
                    y[_u(yb + p * Wo + q)] = 0
                    continue
                w0, w1 = cols[q, 0], cols[q, 1]
                acc = 0.0
                for ih in range(h0, h1):
                    r = xb + ih * W
                    for iw in range(w0, w1):
                        acc += x[_u(r + iw)]
                v = acc / d
                if integer:  # C++ integer division truncates toward zero
                    v = np.trunc(v)
                y[_u(yb + p * Wo + q)] = v


@njit(cache=True, parallel=True)
def _avgpool_par(x, y, planes, H, W, Ho, Wo, rows, cols, div, integer, nc):
    for c in prange(nc):
        _avgpool_planes(x, y, c * planes // nc, (c + 1) * planes // nc, H, W, Ho, Wo, rows,
                        cols, div, integer)


def avgpool_forward(x, planes, H, W, Ho, Wo, prm, dtype_like, integer):
    y = np.empty(planes * Ho * Wo, dtype_like.dtype)
    rows, cols, div = _windows(H, W, Ho, Wo, prm)
    nc = _plane_chunks(planes, planes * H * W)
    if nc > 1:
        _avgpool_par(x, y, planes, H, W, Ho, Wo, rows, cols, div, integer, nc)
    else:
        _avgpool_planes(x, y, 0, planes, H, W, Ho, Wo, rows, cols, div, integer)
    return y


@njit(cache=True)
def _avgpool_bw_planes(g, gx, k0, k1, H, W, Ho, Wo, rows, cols, div):
    for k in range(k0, k1):
        xb, yb = k * H * W, k * Ho * Wo
        for p in range(Ho):
            h0, h1 = rows[p, 0], rows[p, 1]
            for q in range(Wo):
                d = div[p * Wo + q]
                if d == 0:
                    continue
                w0, w1 = cols[q, 0], cols[q, 1]
                v = g[_u(yb + p * Wo + q)] / d
                for ih in range(h0, h1):
                    r = xb + ih * W
                    for iw in range(w0, w1):
                        gx[_u(r + iw)] += v


@njit(cache=True, parallel=True)
def _avgpool_bw_par(g, gx, planes, H, W, Ho, Wo, rows, cols, div, nc):
    for c in prange(nc):
        _avgpool_bw_planes(g, gx, c * planes // nc, (c + 1) * planes // nc, H, W, Ho, Wo, rows,
                           cols, div)


@njit(cache=True)
def avgpool2d_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # iat = [adaptive, kh, kw, sh, sw, ph, pw, count_include_pad, has_divisor, divisor, ceil]
    # Serial: the sweep's kernel; big nodes go through _avgpool_bw_big (parallel planes).
    nd = sh0.shape[0]
    H, W = sh0[nd - 2], sh0[nd - 1]
    Ho, Wo = sh_y[nd - 2], sh_y[nd - 1]
    planes = gx0.shape[0] // (H * W) if H * W > 0 else 0
    rows, cols, div = _windows(H, W, Ho, Wo, iat)
    _avgpool_bw_planes(g, gx0, 0, planes, H, W, Ho, Wo, rows, cols, div)


def _avgpool_bw_big(g, xs, gxs, iat, fat):
    """A big average-pooling node's backward (numpy_bw hook): planes in parallel chunks,
    called from Python (see the note above _nfw_any)."""
    H, W = gxs[0].shape[-2:]
    Ho, Wo = g.shape[-2:]
    g, gx0 = g.reshape(-1), gxs[0].reshape(-1)
    planes = gx0.shape[0] // (H * W) if H * W > 0 else 0
    rows, cols, div = _windows(H, W, Ho, Wo, iat)
    nc = _plane_chunks(planes, g.shape[0] + gx0.shape[0])
    if nc > 1:
        _avgpool_bw_par(g, gx0, planes, H, W, Ho, Wo, rows, cols, div, nc)
    else:
        _avgpool_bw_planes(g, gx0, 0, planes, H, W, Ho, Wo, rows, cols, div)


@njit(cache=True)
def _avgpool_map(planes, H, W, Ho, Wo, prm):
    """The backward of an average pooling as (output position, input position, weight)."""
    n = 0
    for p in range(Ho):
        for q in range(Wo):
            h0, h1, w0, w1, d = _window(p, q, H, W, Ho, Wo, prm)
            if h0 < h1 and w0 < w1:
                n += (h1 - h0) * (w1 - w0)
    out = np.empty(planes * n, np.int64)
    inp = np.empty(planes * n, np.int64)
    coef = np.empty(planes * n)
    m = 0
    for k in range(planes):
        for p in range(Ho):
            for q in range(Wo):
                h0, h1, w0, w1, d = _window(p, q, H, W, Ho, Wo, prm)
                for ih in range(h0, h1):
                    for iw in range(w0, w1):
                        out[m] = k * Ho * Wo + p * Wo + q
                        inp[m] = k * H * W + ih * W + iw
                        coef[m] = 1.0 / d
                        m += 1
    return out, inp, coef


MAX_POOL2D = defop(
    "max_pool2d", "MaxPool2DWithIndicesBackward0", 1, replay="max_pool2d_fw",
    replay_bw="max_pool2d_replay_bw", kernel=maxpool2d_bw,
    # positive inputs: the generated tests move values near 0 to 0.3, which would make ties
    # (a maximum's derivative is not defined there; torch picks the first of them)
    domain=(0.1, 3.0),
    samples=[
        Sample(((2, 3, 6, 6),), {"kernel_size": 2}, _F + "max_pool2d(x0, **kw)"),
        Sample(((1, 2, 7, 7),), {"kernel_size": 3, "stride": 2, "padding": 1,
                                 "ceil_mode": True}, _F + "max_pool2d(x0, **kw)"),
        Sample(((2, 5, 6),), {"kernel_size": (2, 3), "stride": (1, 2), "dilation": (2, 1)},
               _F + "max_pool2d(x0, **kw)"),
        Sample(((1, 2, 4, 4),), {}, _F + "max_pool2d(x0, 2, return_indices=True)[0]"),
    ])


AVG_POOL2D = defop(
    "avg_pool2d", "AvgPool2DBackward0", 1, replay="avg_pool2d_fw", kernel=avgpool2d_bw,
    samples=[
        Sample(((2, 3, 6, 6),), {"kernel_size": 2}, _F + "avg_pool2d(x0, **kw)"),
        Sample(((1, 2, 7, 7),), {"kernel_size": 3, "stride": 2, "padding": 1,
                                 "ceil_mode": True, "count_include_pad": False},
               _F + "avg_pool2d(x0, **kw)"),
        Sample(((2, 5, 5),), {"kernel_size": (2, 3), "padding": 1, "divisor_override": 3},
               _F + "avg_pool2d(x0, **kw)"),
    ])


ADAPTIVE_AVG_POOL2D = defop(
    "adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", 1, replay="avg_pool2d_fw",
    kernel=avgpool2d_bw,
    samples=[
        Sample(((2, 3, 7, 5),), {"output_size": (3, 2)}, _F + "adaptive_avg_pool2d(x0, **kw)"),
        Sample(((2, 3, 5),), {"output_size": (4, None)}, _F + "adaptive_avg_pool2d(x0, **kw)"),
        Sample(((2, 3, 4, 4),), {"output_size": 1}, _F + "adaptive_avg_pool2d(x0, **kw)"),
    ])


# big nodes: the engine calls these from Python instead of the sweep's serial kernels
MAX_POOL2D.numpy_bw = _maxpool_bw_big
AVG_POOL2D.numpy_bw = ADAPTIVE_AVG_POOL2D.numpy_bw = _avgpool_bw_big


def warmup():
    """Compile (or load from Numba's cache) the forward kernels and the big-node backward
    kernels of this module, in float32 and float64, serial and parallel."""
    for dt in (np.float32, np.float64):
        e = np.zeros(0, dt)
        for n, hw in ((1, 4), (4, 40)):  # a serial and a parallel (big) case
            x = np.ones(n * 2 * hw * hw, dt)
            sh_x = np.array((n, 2, hw, hw), np.int64)
            planes, size = n * 2, hw * hw
            prm = np.array([2, 2, 2, 2, 0, 0, 1, 1, 0], np.int64)
            y, pos = maxpool_forward(x, planes, hw, hw, hw // 2, hw // 2, prm, x[:0])
            sh_p = np.array((n, 2, hw // 2, hw // 2), np.int64)
            maxpool2d_bw(np.ones_like(y), e, e, np.zeros(planes * size, dt), sh_p, sh_x, True,
                         np.concatenate([prm, pos]), np.zeros(0))
            _maxpool_bw_big(np.ones(tuple(sh_p), dt), [None], [np.zeros(tuple(sh_x), dt)],
                            np.concatenate([prm, pos]), np.zeros(0))
            for mode in (0, 1):
                prm = np.array([mode, 2, 2, 2, 2, 0, 0, 1, 0, 0, 0], np.int64)
                y = avgpool_forward(x, planes, hw, hw, hw // 2, hw // 2, prm, x[:0], False)
                avgpool2d_bw(np.ones_like(y), e, e, np.zeros(planes * size, dt), sh_p, sh_x,
                             True, prm, np.zeros(0))
                _avgpool_bw_big(np.ones(tuple(sh_p), dt), [None], [np.zeros(tuple(sh_x), dt)],
                                prm, np.zeros(0))
