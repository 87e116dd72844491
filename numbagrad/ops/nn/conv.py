# ruff: noqa: N803, N806 - the kernels keep the usual names of conv geometry (H, W, Ho, Cg..)
"""Convolutions (1-d and 2-d, and their transposes): table records, compiled forward and
backward kernels (torch.nn.functional's front ends and the differentiable rules
are in conv_functional.py, above the other front ends they call).

Convolution geometry. Every convolution here relates a *wide* side (spatial H x W, C = G * Cg
channels) and a *narrow* side (spatial Ho x Wo, Co = G * cog channels) through a weight of
shape (Co, Cg, KH, KW): narrow[n, o, p, q] = sum_{c, i, j} w[o, c, i, j] *
wide[n, c, p * sh + i * dh - pt, q * sw + j * dw - pl] (zero outside). A convolution maps wide
to narrow (its input is the wide side); a transposed convolution maps narrow to wide. Three
compiled primitives cover the forward and backward of both, per batch item and group:

* ``_narrow_from_wide``: im2col of the wide side, then ``W_g @ cols`` (a convolution);
* ``_wide_from_narrow``: ``W_g^T @ narrow``, then col2im (a transposed convolution);
* ``_weight_grad``: ``narrow @ cols^T`` (the weight's gradient, of either op).

1-d is 2-d with H = 1. The GEMMs are np.dot inside Numba (BLAS through scipy), one per
batch item and group; big work runs the batch in ``prange`` chunks (the weight gradient in
per-chunk partial sums), BLAS itself held at one thread (numbagrad/_blas.py).
The bias rides in the GEMMs (a row of ones under the cols). A node's ``iat`` is
[transposed, groups, sh, sw, dh, dw, pt, pl]; its shapes give the rest.

The sweep calls the serial kernels only; big nodes (and big forwards) choose parallel chunks
in Python, because a cached serial function calling a parallel one crashes when loaded from
Numba's cache (numba #8578; see the note above ``_nfw_any``).
"""

import numpy as np
from numba import njit, prange
from numba import uint64 as _u

from ... import _blas
from ...engine.registry import Sample, defop

# Work (multiply-adds) from which a convolution runs its batch in parallel chunks
_PAR_WORK = 1 << 18
# Parallel chunks of a batch or of pooling planes (pool2d.py): a fixed count
# (numba.get_num_threads() would make the kernels, and the sweep calling them, uncacheable);
# prange spreads them over the threads.
_CHUNKS = 8


# ---- convolution kernels ---------------------------------------------------------------------
@njit(cache=True)
def _qrange(off, W, sw, Wo):
    """The output columns q whose input column q * sw + off lies in [0, W)."""
    lo = 0 if off >= 0 else (-off + sw - 1) // sw
    top = W - 1 - off
    hi = top // sw + 1 if top >= 0 else 0
    if hi > Wo:
        hi = Wo
    if lo > hi:
        lo = hi
    return lo, hi


@njit(cache=True)
def _zero_outside(crow, plo, phi, Wo, lo, hi):
    """Zero the columns q < lo and q >= hi of output rows plo..phi of a cols row: in the
    contiguous ("same" padding) case they read a neighbouring input row, not the padding."""
    if lo > 0 or hi < Wo:
        for p in range(plo, phi):
            o = p * Wo
            for q in range(lo):
                crow[_u(o + q)] = 0
            for q in range(hi, Wo):
                crow[_u(o + q)] = 0


@njit(cache=True)
def _im2col(src, base, geo, col):
    """cols[(c, i, j), (p, q)] = src[base + c * H * W + (p * sh + i * dh - pt) * W
    + q * sw + j * dw - pl], zero outside the input: one group of one batch item.

    Indices are cast to unsigned (``_u``): they are never negative here, and Numba's
    wraparound test of signed indices would keep these copies from vectorizing (8x)."""
    Cg = geo[1] // geo[9]
    H, W, Ho, Wo, KH, KW = geo[2], geo[3], geo[5], geo[6], geo[7], geo[8]
    sh, sw, dh, dw, pt, pl = geo[10], geo[11], geo[12], geo[13], geo[14], geo[15]
    # stride 1 and an output as wide as the input ("same" padding): consecutive output rows
    # read consecutive input rows, so a row of cols is one contiguous copy, then the few
    # columns that read a neighbouring row instead of the padding are zeroed
    block = sh == 1 and sw == 1 and W == Wo
    P = Ho * Wo
    for c in range(Cg):
        cb = base + c * H * W
        for i in range(KH):
            plo, phi = _qrange(i * dh - pt, H, sh, Ho)  # output rows inside the input
            for j in range(KW):
                crow = col[(c * KH + i) * KW + j]
                off = j * dw - pl
                lo, hi = _qrange(off, W, sw, Wo)
                if phi <= plo or hi <= lo:
                    for k in range(P):
                        crow[k] = 0
                    continue
                for k in range(plo * Wo):
                    crow[k] = 0
                for k in range(phi * Wo, P):
                    crow[_u(k)] = 0
                if block:
                    d0, d1 = plo * Wo + lo, (phi - 1) * Wo + hi
                    s0 = cb + (plo + i * dh - pt) * W + off + lo
                    for k in range(d1 - d0):
                        crow[_u(d0 + k)] = src[_u(s0 + k)]
                    _zero_outside(crow, plo, phi, Wo, lo, hi)
                    continue
                for p in range(plo, phi):
                    o = p * Wo
                    s = cb + (p * sh + i * dh - pt) * W + off
                    for q in range(lo):
                        crow[_u(o + q)] = 0
                    if sw == 1:
                        for q in range(lo, hi):
                            crow[_u(o + q)] = src[_u(s + q)]
                    else:
                        for q in range(lo, hi):
                            crow[_u(o + q)] = src[_u(s + q * sw)]
                    for q in range(hi, Wo):
                        crow[_u(o + q)] = 0


@njit(cache=True)
def _col2im(col, dst, base, geo):
    """The adjoint of _im2col: add every column entry into the input position it came from.
    Scratch use of ``col``: entries that map to no input position may be zeroed."""
    Cg = geo[1] // geo[9]
    H, W, Ho, Wo, KH, KW = geo[2], geo[3], geo[5], geo[6], geo[7], geo[8]
    sh, sw, dh, dw, pt, pl = geo[10], geo[11], geo[12], geo[13], geo[14], geo[15]
    block = sh == 1 and sw == 1 and W == Wo
    for c in range(Cg):
        cb = base + c * H * W
        for i in range(KH):
            plo, phi = _qrange(i * dh - pt, H, sh, Ho)
            if phi <= plo:
                continue
            for j in range(KW):
                crow = col[(c * KH + i) * KW + j]
                off = j * dw - pl
                lo, hi = _qrange(off, W, sw, Wo)
                if hi <= lo:
                    continue
                if block:  # one contiguous add, once the padding columns are zeroed
                    _zero_outside(crow, plo, phi, Wo, lo, hi)
                    d0, d1 = plo * Wo + lo, (phi - 1) * Wo + hi
                    s0 = cb + (plo + i * dh - pt) * W + off + lo
                    for k in range(d1 - d0):
                        dst[_u(s0 + k)] += crow[_u(d0 + k)]
                    continue
                for p in range(plo, phi):
                    o = p * Wo
                    s = cb + (p * sh + i * dh - pt) * W + off
                    if sw == 1:
                        for q in range(lo, hi):
                            dst[_u(s + q)] += crow[_u(o + q)]
                    else:
                        for q in range(lo, hi):
                            dst[_u(s + q * sw)] += crow[_u(o + q)]


@njit(cache=True)
def _identity(geo):
    """A 1x1 kernel with stride 1, no padding, same size: the cols are the input itself."""
    return (geo[7] == 1 and geo[8] == 1 and geo[10] == 1 and geo[11] == 1 and geo[14] == 0
            and geo[15] == 0 and geo[5] == geo[2] and geo[6] == geo[3])


@njit(cache=True)
def _gemm_geometry(geo):
    """The sizes the three GEMM kernels share: input channels and plane (C, H, W), output
    channels Co, groups G, channels per group in and out (Cg, cog), and the GEMM's inner
    size K = Cg * KH * KW and width P = Ho * Wo."""
    C, H, W, Co, Ho, Wo, KH, KW, G = (geo[1], geo[2], geo[3], geo[4], geo[5], geo[6], geo[7],
                                      geo[8], geo[9])
    Cg = C // G
    return C, H, W, Co, G, Cg, Co // G, Cg * KH * KW, Ho * Wo


@njit(cache=True)
def _narrow_from_wide(wide, w, narrow, b, geo, n0, n1, acc):
    """narrow[n] (+)= W_g @ im2col(wide[n]) (+ b), batch items n0..n1. The bias rides in the
    GEMM: a row of ones under the cols and the bias as one more column of W_g."""
    C, H, W, Co, G, Cg, cog, K, P = _gemm_geometry(geo)
    if cog == 0 or P == 0:
        return
    ident = _identity(geo)
    fused = b.shape[0] > 0 and not acc and not ident and K > 0
    kb = K + 1 if fused else K
    col = np.empty((kb, P), wide.dtype)
    if fused:
        col[K, :] = 1
    wb = np.empty((cog, kb), wide.dtype)
    res = np.empty((cog, P), wide.dtype) if acc else np.empty((0, P), wide.dtype)
    for n in range(n0, n1):
        for gi in range(G):
            o0 = (n * Co + gi * cog) * P
            out = narrow[o0:o0 + cog * P].reshape((cog, P))
            # the product goes straight into the output unless it is accumulated
            dst = res if acc else out
            if K == 0:
                dst[:, :] = 0
            else:
                wg = w[gi * cog * K:(gi + 1) * cog * K].reshape((cog, K))
                base = (n * C + gi * Cg) * H * W
                if ident:
                    np.dot(wg, wide[base:base + K * P].reshape((K, P)), dst)
                else:
                    _im2col(wide, base, geo, col)
                    if fused:
                        for o in range(cog):
                            for k in range(K):
                                wb[o, k] = wg[o, k]
                            wb[o, K] = b[gi * cog + o]
                        np.dot(wb, col, dst)
                    else:
                        np.dot(wg, col, dst)
            if acc:
                for o in range(cog):
                    for k in range(P):
                        out[o, k] += res[o, k]
            elif b.shape[0] > 0 and not fused:
                for o in range(cog):
                    bo = b[gi * cog + o]
                    for k in range(P):
                        out[o, k] += bo


@njit(cache=True)
def _wide_from_narrow(narrow, w, wide, geo, n0, n1):
    """wide[n] += col2im(W_g^T @ narrow[n]), batch items n0..n1."""
    C, H, W, Co, G, Cg, cog, K, P = _gemm_geometry(geo)
    if cog == 0 or P == 0 or K == 0:
        return
    ident = _identity(geo)
    col = np.empty((K, P), narrow.dtype)
    for n in range(n0, n1):
        for gi in range(G):
            wg = w[gi * cog * K:(gi + 1) * cog * K].reshape((cog, K))
            o0 = (n * Co + gi * cog) * P
            np.dot(wg.T, narrow[o0:o0 + cog * P].reshape((cog, P)), col)
            base = (n * C + gi * Cg) * H * W
            if ident:
                dst = wide[base:base + K * P]
                for r in range(K):
                    for k in range(P):
                        dst[_u(r * P + k)] += col[r, k]
            else:
                _col2im(col, wide, base, geo)


@njit(cache=True)
def _weight_grad(wide, narrow, gw, gb, geo, n0, n1):
    """gw[g] += narrow[n, g] @ im2col(wide[n, g])^T, batch items n0..n1; with a non-empty
    ``gb``, also gb += the channel sums of narrow (the bias gradient), from the same GEMM
    through a row of ones under the cols."""
    C, H, W, Co, G, Cg, cog, K, P = _gemm_geometry(geo)
    if cog == 0 or P == 0:
        return
    ident = _identity(geo)
    fused = gb.shape[0] > 0 and not ident and K > 0
    if gb.shape[0] > 0 and not fused:
        _channel_sums(narrow[n0 * Co * P:n1 * Co * P], gb, n1 - n0, Co, P)
    if K == 0:
        return
    kb = K + 1 if fused else K
    col = np.empty((kb, P), wide.dtype)
    if fused:
        col[K, :] = 1
    res = np.empty((cog, kb), wide.dtype)
    for n in range(n0, n1):
        for gi in range(G):
            o0 = (n * Co + gi * cog) * P
            src = narrow[o0:o0 + cog * P].reshape((cog, P))
            base = (n * C + gi * Cg) * H * W
            if ident:
                np.dot(src, wide[base:base + K * P].reshape((K, P)).T, res)
            else:
                _im2col(wide, base, geo, col)
                np.dot(src, col.T, res)
            g0 = gi * cog * K
            for o in range(cog):
                for k in range(K):
                    gw[_u(g0 + o * K + k)] += res[o, k]
                if fused:
                    gb[gi * cog + o] += res[o, K]


@njit(cache=True)
def _chunks(geo):
    """How many batch chunks to run in parallel: 1 (serial) for small work. A fixed count,
    not the thread count: numba.get_num_threads() would make these functions (and the
    sweep that calls them) uncacheable; prange spreads the chunks over the threads."""
    N = geo[0]
    work = N * geo[4] * geo[5] * geo[6] * (geo[1] // geo[9]) * geo[7] * geo[8]
    if N < 2 or work < _PAR_WORK:
        return 1
    return min(N, _CHUNKS)


@njit(cache=True, parallel=True)
def _par_narrow_from_wide(wide, w, narrow, b, geo, acc, nc):
    N = geo[0]
    for c in prange(nc):
        _narrow_from_wide(wide, w, narrow, b, geo, c * N // nc, (c + 1) * N // nc, acc)


@njit(cache=True, parallel=True)
def _par_wide_from_narrow(narrow, w, wide, geo, nc):
    N = geo[0]
    for c in prange(nc):
        _wide_from_narrow(narrow, w, wide, geo, c * N // nc, (c + 1) * N // nc)


@njit(cache=True)
def _weight_grad_chunk(wide, narrow, part, m, geo, c, nc):
    """Batch chunk ``c`` of ``nc``'s weight (part[:m]) and bias (part[m:]) gradient sums."""
    N = geo[0]
    _weight_grad(wide, narrow, part[:m], part[m:], geo, c * N // nc, (c + 1) * N // nc)


@njit(cache=True)
def _add_chunks(gw, gb, part):
    """The chunks' partial sums added into gw and gb, chunk after chunk."""
    m = gw.shape[0]
    for c in range(part.shape[0]):
        for k in range(m):
            gw[k] += part[c, k]
        for k in range(gb.shape[0]):
            gb[k] += part[c, m + k]


@njit(cache=True)
def _weight_grad_serial(wide, narrow, gw, gb, geo):
    """_wgrad_any's sums in the same chunks, one after the other: the serial kernel (the
    replay's) then adds a weight gradient in the order eager's parallel chunks do."""
    nc = _chunks(geo)
    if nc == 1:
        _weight_grad(wide, narrow, gw, gb, geo, 0, geo[0])
        return
    part = np.zeros((nc, gw.shape[0] + gb.shape[0]), gw.dtype)
    for c in range(nc):
        _weight_grad_chunk(wide, narrow, part[c], gw.shape[0], geo, c, nc)
    _add_chunks(gw, gb, part)


@njit(cache=True, parallel=True)
def _par_weight_grad(wide, narrow, gw, gb, geo, nc):
    # per-chunk partial sums (weights, then biases), added up serially
    part = np.zeros((nc, gw.shape[0] + gb.shape[0]), gw.dtype)
    for c in prange(nc):
        _weight_grad_chunk(wide, narrow, part[c], gw.shape[0], geo, c, nc)
    _add_chunks(gw, gb, part)


# No @njit function here calls a parallel=True one: a cached serial function that calls a
# parallel function segfaults when it is loaded from Numba's cache (numba issue #8578;
# reproduced here, in the generated sweep, which calls the table kernels). So the sweep's
# kernels are serial, and the choice between serial and parallel chunks is made in Python
# (the *_any dispatchers below), which calls the parallel kernels directly.
def _nfw_any(wide, w, narrow, b, geo, acc):
    nc = _chunks(geo)
    if nc > 1:
        _par_narrow_from_wide(wide, w, narrow, b, geo, acc, nc)
    else:
        _narrow_from_wide(wide, w, narrow, b, geo, 0, geo[0], acc)


def _wfn_any(narrow, w, wide, geo):
    nc = _chunks(geo)
    if nc > 1:
        _par_wide_from_narrow(narrow, w, wide, geo, nc)
    else:
        _wide_from_narrow(narrow, w, wide, geo, 0, geo[0])


def _wgrad_any(wide, narrow, gw, gb, geo):
    nc = _chunks(geo)
    if nc > 1:
        _par_weight_grad(wide, narrow, gw, gb, geo, nc)
    else:
        _weight_grad(wide, narrow, gw, gb, geo, 0, geo[0])


@njit(cache=True, fastmath=True)
def _channel_sums(g, gb, N, Ch, P):
    """gb[c] += sum of g[n, c, :] over n (the bias gradient); fastmath lets LLVM reorder
    the sum into vector lanes (10x faster than the sequential order here)."""
    for n in range(N):
        for c in range(Ch):
            o = (n * Ch + c) * P
            acc = 0.0
            for k in range(P):
                acc += g[_u(o + k)]
            gb[c] += acc


@njit(cache=True)
def _add_channels(y, b, N, Ch, P):
    for n in range(N):
        for c in range(Ch):
            o = (n * Ch + c) * P
            for k in range(P):
                y[_u(o + k)] += b[c]


@njit(cache=True)
def _geo(sh_wide, sh_narrow, sh_w, iat):
    """[N, C, H, W, Co, Ho, Wo, KH, KW, G, sh, sw, dh, dw, pt, pl] from the shapes and iat."""
    geo = np.empty(16, np.int64)
    geo[0] = sh_wide[0]
    geo[1] = sh_wide[1]
    geo[4] = sh_narrow[1]
    if sh_wide.shape[0] == 4:
        geo[2], geo[3] = sh_wide[2], sh_wide[3]
        geo[5], geo[6] = sh_narrow[2], sh_narrow[3]
        geo[7], geo[8] = sh_w[2], sh_w[3]
    else:
        geo[2], geo[3] = 1, sh_wide[2]
        geo[5], geo[6] = 1, sh_narrow[2]
        geo[7], geo[8] = 1, sh_w[2]
    for k in range(7):
        geo[9 + k] = iat[1 + k]
    return geo


@_blas.on_one_thread(scipy=True)
def conv_forward(x, w, b, sh_x, sh_y, sh_w, iat):
    """The forward of a convolution (iat[0] == 0) or a transposed one, on flat arrays; big
    work runs the batch in parallel chunks."""
    if iat[0] == 0:
        geo = _geo(sh_x, sh_y, sh_w, iat)
        y = np.empty(geo[0] * geo[4] * geo[5] * geo[6], x.dtype)
        if geo[4] // geo[9] > 0 and geo[1] // geo[9] * geo[7] * geo[8] == 0:
            y[:] = 0  # no input channels: the output is the bias alone
            if b.shape[0] > 0:
                _add_channels(y, b, geo[0], geo[4], geo[5] * geo[6])
        else:
            _nfw_any(x, w, y, b, geo, False)
        return y
    geo = _geo(sh_y, sh_x, sh_w, iat)
    y = np.zeros(geo[0] * geo[1] * geo[2] * geo[3], x.dtype)
    _wfn_any(x, w, y, geo)
    if b.shape[0] > 0:
        _add_channels(y, b, geo[0], geo[1], geo[2] * geo[3])
    return y


@njit(cache=True)
def conv_nd_bw(g, y, x0, x1, x2, gx0, gx1, gx2, sh_y, sh0, sh1, sh2, need0, need1, need2,
               iat, fat):
    # The sweep's (serial) kernel, for nodes below the big-node threshold; big nodes go
    # through _conv_bw_big (the same steps, with parallel chunks). conv (iat[0] == 0):
    # y = conv(x0, x1) + x2, x0 the wide side and y the narrow one; transposed:
    # y = conv_transpose(x0, x1) + x2, y the wide side (module doc: geometry)
    if iat[0] == 0:
        geo = _geo(sh0, sh_y, sh1, iat)
        if need0:
            _wide_from_narrow(g, x1, gx0, geo, 0, geo[0])
        if need1:  # the bias gradient comes out of the weight gradient's GEMM
            _weight_grad_serial(x0, g, gx1, gx2 if need2 else gx2[:0], geo)
        elif need2:
            _channel_sums(g, gx2, geo[0], geo[4], geo[5] * geo[6])
    else:
        geo = _geo(sh_y, sh0, sh1, iat)
        if need0:
            _narrow_from_wide(g, x1, gx0, x2[:0], geo, 0, geo[0], True)
        if need1:
            _weight_grad_serial(g, x0, gx1, gx2[:0], geo)
        if need2:
            _channel_sums(g, gx2, geo[0], geo[1], geo[2] * geo[3])


@_blas.on_one_thread(scipy=True)
def _conv_bw_big(g, xs, gxs, iat, fat):
    """A big convolution node's backward (the engine's numpy_bw hook: arrays in their
    shapes, gxs[k] None when not needed): conv_nd_bw's steps with the batch in parallel
    chunks, called from Python (see the note above _nfw_any)."""
    # a structured op reads all it saves (x0 and x1) whichever gradients are needed
    sh_y, sh0, sh1 = (np.array(a.shape, np.int64) for a in (g, xs[0], xs[1]))
    x0, x1 = xs[0].reshape(-1), xs[1].reshape(-1)
    gx0, gx1, gx2 = (None if a is None else a.reshape(-1) for a in gxs)
    g = g.reshape(-1)
    nothing = g[:0]
    if iat[0] == 0:
        geo = _geo(sh0, sh_y, sh1, iat)
        if gx0 is not None:
            _wfn_any(g, x1, gx0, geo)
        if gx1 is not None:
            _wgrad_any(x0, g, gx1, nothing if gx2 is None else gx2, geo)
        elif gx2 is not None:
            _channel_sums(g, gx2, geo[0], geo[4], geo[5] * geo[6])
    else:
        geo = _geo(sh_y, sh0, sh1, iat)
        if gx0 is not None:
            _nfw_any(g, x1, gx0, nothing, geo, True)
        if gx1 is not None:
            _wgrad_any(g, x0, gx1, nothing, geo)
        if gx2 is not None:
            _channel_sums(g, gx2, geo[0], geo[1], geo[2] * geo[3])


# ---- the table -------------------------------------------------------------------------------
_F = "lib.nn.functional."
CONV = defop(
    # replay_f32: the replay runs a float32 convolution in float32, as conv_forward does
    "conv", "ConvolutionBackward0", 3, replay="conv_fw", replay_f32=True, kernel=conv_nd_bw,
    saves=("x0", "x1"), blas_inner=-1,
    samples=[
        Sample(((2, 3, 5, 5), (4, 3, 3, 3), (4,)), {}, _F + "conv2d(x0, x1, x2)"),
        Sample(((1, 4, 6, 5), (4, 2, 3, 2), (4,)), {"stride": 2, "padding": 1, "groups": 2},
               _F + "conv2d(x0, x1, x2, **kw)"),
        Sample(((2, 2, 6, 6), (3, 2, 2, 3)), {"stride": (1, 2), "padding": (1, 0),
                                              "dilation": (2, 1)},
               _F + "conv2d(x0, x1, **kw)"),
        Sample(((1, 2, 5, 4), (2, 2, 2, 3), (2,)), {"padding": "same"},
               _F + "conv2d(x0, x1, x2, **kw)"),
        Sample(((2, 3, 7), (4, 3, 3), (4,)), {"stride": 2, "padding": 2, "dilation": 2},
               _F + "conv1d(x0, x1, x2, **kw)"),
        Sample(((3, 7), (2, 3, 3)), {"padding": "same"}, _F + "conv1d(x0, x1, **kw)"),
        Sample(((2, 3, 5, 5), (4, 2, 3, 3)), {}, _F + "conv2d(x0, x1)"),
    ])
CONV_TRANSPOSE = defop(
    "conv_transpose", "ConvolutionBackward0", 3, replay="conv_fw", replay_f32=True,
    kernel=conv_nd_bw,
    saves=("x0", "x1"), blas_inner=-1,
    samples=[
        Sample(((2, 4, 3, 3), (4, 3, 3, 3), (3,)), {"stride": 2, "padding": 1,
                                                    "output_padding": 1},
               _F + "conv_transpose2d(x0, x1, x2, **kw)"),
        Sample(((1, 4, 5), (4, 1, 3)), {"groups": 2, "dilation": 2},
               _F + "conv_transpose1d(x0, x1, **kw)"),
    ])

# big nodes: the engine calls these from Python instead of the sweep's serial kernels
CONV.numpy_bw = CONV_TRANSPOSE.numpy_bw = _conv_bw_big


def _iat(transposed, groups, stride, dilation, pads):
    """A convolution node's ``iat`` (see the module docstring); a 1-d one is 2-d with H = 1."""
    if len(stride) == 1:
        return np.array([transposed, groups, 1, stride[0], 1, dilation[0], 0, pads[0]],
                        np.int64)
    return np.array([transposed, groups, stride[0], stride[1], dilation[0], dilation[1],
                     pads[0], pads[1]], np.int64)


def warmup():
    """Compile (or load from Numba's cache) the forward kernels and the big-node backward
    kernels of this module, in float32 and float64, serial and parallel: what the first
    call of each would otherwise compile (about a minute in all, on 2 cores)."""
    for dt in (np.float32, np.float64):
        e = np.zeros(0, dt)
        for n, hw in ((1, 4), (4, 40)):  # a serial and a parallel (big) case
            x = np.ones(n * 2 * hw * hw, dt)
            w = np.ones(4 * 2 * 9, dt)
            b = np.ones(4, dt)
            sh_x = np.array((n, 2, hw, hw), np.int64)
            sh_w = np.array((4, 2, 3, 3), np.int64)
            sh_b = np.array((4,), np.int64)
            for tr in (0, 1):
                iat = _iat(tr, 1, [1, 1], [1, 1], [1, 1])
                sh_y = np.array((n, 4 if not tr else 2, hw, hw), np.int64)
                wt = w if not tr else np.ones(2 * 4 * 9, dt)
                sh_wt = sh_w if not tr else np.array((2, 4, 3, 3), np.int64)
                src = x if not tr else np.ones(n * 2 * hw * hw, dt)
                y = conv_forward(src, wt, b[:int(sh_y[1])], sh_x, sh_y, sh_wt, iat)
                conv_nd_bw(np.ones_like(y), e, src, wt, b[:int(sh_y[1])], np.zeros_like(src),
                           np.zeros_like(wt), np.zeros(int(sh_y[1]), dt), sh_y, sh_x, sh_wt,
                           sh_b[:1] * 0 + sh_y[1], True, True, True, iat, np.zeros(0))
                shaped = [a.reshape(tuple(sh)) for a, sh in ((src, sh_x), (wt, sh_wt))]
                _conv_bw_big(np.ones(tuple(sh_y), dt), shaped,
                             [np.zeros_like(a) for a in shaped] + [np.zeros(int(sh_y[1]), dt)],
                             iat, np.zeros(0))
