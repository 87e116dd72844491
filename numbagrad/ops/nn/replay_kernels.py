"""@njit forward kernels of the neural-network ops, for compiled replay (numbagrad.compile):
the fused losses, embedding and the norms, convolution and 2-d pooling (max pooling's
backward too: its recorded positions are data, which the replay recomputes), and the
spatial ops' kernels (spatial_kernels.py). The signatures and conventions are
the other families', whose summation helpers (ops/kernel_helpers.py) they use."""

import numpy as np
from numba import njit

from ...engine import kernelgen
from ..kernel_helpers import bcast_index, numel, pairwise_sum
from .conv import _add_channels, _geo, _narrow_from_wide, _wide_from_narrow
from .pool2d import _avgpool_planes, _maxpool_planes, _pool_spans, _windows
from .spatial_kernels import (  # noqa: F401 - generated modules star-import them from here
    conv3d_fw,
    gather_fill_fw,
    group_norm_fw,
    sparse_rows_fw,
    window_max_fw,
)


# ---- losses: iat[0] = reduction (0 none, 1 mean, 2 sum) ----------------------------------
@njit(cache=True, error_model="numpy")
def _reduce_loss(y, v, red):
    if red == 0:
        for k in range(y.shape[0]):
            y[k] = v[k]
    elif red == 2:
        y[0] = pairwise_sum(v, 0, v.shape[0])
    else:
        n = v.shape[0]
        y[0] = pairwise_sum(v, 0, n) / n if n else np.nan


@njit(cache=True, error_model="numpy")
def mse_loss_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    v = np.empty(x0.shape[0])
    for k in range(x0.shape[0]):
        d = x0[k] - x1[k]
        v[k] = d * d
    _reduce_loss(y, v, iat[0])


@njit(cache=True, error_model="numpy")
def nll_loss_fw(y, x0, sh_y, sh0, iat, fat):
    # iat = [reduction, positions (-1: ignored)..., classes...], fat = [scale, weights...]
    red = iat[0]
    m = (iat.shape[0] - 1) // 2
    weighted = fat.shape[0] > 1
    losses = np.zeros(m)
    ws = np.zeros(m)
    for i in range(m):
        p = iat[1 + i]
        if p < 0:
            continue
        w = fat[1 + iat[1 + m + i]] if weighted else 1.0
        losses[i] = -(w * x0[p])
        ws[i] = w
    if red == 0:
        for i in range(m):
            y[i] = losses[i]
    elif red == 2:
        y[0] = pairwise_sum(losses, 0, m)
    else:
        y[0] = pairwise_sum(losses, 0, m) / pairwise_sum(ws, 0, m)


@njit(cache=True, error_model="numpy")
def _pointwise_loss_fw(y, x0, x1, iat, fat, kind):
    # kind 0: smooth_l1 (fat[1] = beta), 1: huber (fat[1] = delta); eager's np.where forms
    p = fat[1]
    v = np.empty(x0.shape[0])
    for k in range(x0.shape[0]):
        z = abs(x0[k] - x1[k])
        if kind == 0:
            v[k] = 0.5 * z * z / p if z < p else z - 0.5 * p
        else:
            v[k] = 0.5 * z * z if z < p else p * (z - 0.5 * p)
    _reduce_loss(y, v, iat[0])


@njit(cache=True, error_model="numpy")
def smooth_l1_loss_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    _pointwise_loss_fw(y, x0, x1, iat, fat, 0)


@njit(cache=True, error_model="numpy")
def huber_loss_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    _pointwise_loss_fw(y, x0, x1, iat, fat, 1)


@njit(cache=True, error_model="numpy")
def binary_cross_entropy_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    # iat = [reduction, ndim of weight (-1: none), weight shape...], fat = [scale, weight...]
    wnd = iat[1]
    if wnd >= 0:
        wi = bcast_index(iat[2:2 + wnd], sh0)
    else:
        wi = np.zeros(0, np.int64)
    v = np.empty(x0.shape[0])
    for k in range(x0.shape[0]):
        x = x0[k]
        t = x1[k]
        v[k] = (t - 1.0) * max(np.log1p(-x), -100.0) - t * max(np.log(x), -100.0)
        if wnd >= 0:
            v[k] = v[k] * fat[1 + wi[k]]
    _reduce_loss(y, v, iat[0])


@njit(cache=True, error_model="numpy")
def binary_cross_entropy_with_logits_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    # iat = [reduction, ndim of weight, ndim of pos_weight (-1: none), their shapes...],
    # fat = [scale, weight..., pos_weight...]; eager's order of operations
    wnd = iat[1]
    pnd = iat[2]
    nw = max(wnd, 0)
    wsh = iat[3:3 + nw]
    psh = iat[3 + nw:3 + nw + max(pnd, 0)]
    wsize = 0
    if wnd >= 0:
        wsize = numel(wsh)
        wi = bcast_index(wsh, sh0)
    else:
        wi = np.zeros(0, np.int64)
    if pnd >= 0:
        pi = bcast_index(psh, sh0)
    else:
        pi = np.zeros(0, np.int64)
    v = np.empty(x0.shape[0])
    for k in range(x0.shape[0]):
        x = x0[k]
        t = x1[k]
        ls = min(x, 0.0) - np.log1p(np.exp(-abs(x)))
        if pnd >= 0:
            ls = ls * ((fat[1 + wsize + pi[k]] - 1.0) * t + 1.0)
        v[k] = (1.0 - t) * x - ls
        if wnd >= 0:
            v[k] = v[k] * fat[1 + wi[k]]
    _reduce_loss(y, v, iat[0])


# ---- embedding, layer norm, batch norm ---------------------------------------------------
@njit(cache=True, error_model="numpy")
def embedding_fw(y, x0, sh_y, sh0, iat, fat):
    # iat[k]: flat position in the weight of output element k, -1 - position for a padding row
    for k in range(y.shape[0]):
        p = iat[k]
        y[k] = x0[p if p >= 0 else -1 - p]


@njit(cache=True, error_model="numpy")
def layer_norm_fw(y, x0, x1, x2, sh_y, sh0, sh1, sh2, iat, fat):
    # iat[0] = D (the normalized trailing block), fat[0] = eps; rows as eager's flat.mean and
    # flat.var (pairwise sums over each row), then (x - mean) / sqrt(var + eps) * w + b
    d = iat[0]
    eps = fat[0]
    rows = x0.shape[0] // d if d else 0
    c = np.empty(d)
    for r in range(rows):
        s = r * d
        mean = pairwise_sum(x0, s, d) / d
        mean2 = mean  # np.var recomputes the same mean
        for j in range(d):
            t = x0[s + j] - mean2
            c[j] = t * t
        den = np.sqrt(pairwise_sum(c, 0, d) / d + eps)
        for j in range(d):
            y[s + j] = (x0[s + j] - mean) / den * x1[j] + x2[j]


@njit(cache=True, error_model="numpy")
def batch_norm_fw(y, x0, x1, x2, sh_y, sh0, sh1, sh2, iat, fat):
    # x0 (N, C, *spatial); fat = [eps, training, running means..., running vars...]: in
    # training the batch's statistics (NumPy's order: each sample's spatial run summed
    # pairwise, the samples in sequence), in eval the running ones
    c_n = sh0[1]
    s = 1
    for k in range(2, sh0.shape[0]):
        s *= sh0[k]
    n = sh0[0]
    m = n * s
    eps = fat[0]
    training = fat[1] != 0.0
    d = np.empty(s)
    for c in range(c_n):
        if training:
            acc = 0.0
            for i in range(n):
                acc += pairwise_sum(x0, (i * c_n + c) * s, s)
            mean = acc / m
            acc = 0.0
            for i in range(n):
                o = (i * c_n + c) * s
                for j in range(s):
                    t = x0[o + j] - mean
                    d[j] = t * t
                acc += pairwise_sum(d, 0, s)
            var = acc / m
        else:
            mean = fat[2 + c]
            var = fat[2 + c_n + c]
        den = np.sqrt(var + eps)
        w = x1[c]
        b = x2[c]
        for i in range(n):
            o = (i * c_n + c) * s
            for j in range(s):
                y[o + j] = (x0[o + j] - mean) / den * w + b


# ---- convolution and average pooling (numbagrad/ops/nn/conv.py's serial steps) ---------------
@njit(cache=True, error_model="numpy")
def conv_fw(y, x0, x1, x2, sh_y, sh0, sh1, sh2, iat, fat):
    # conv_forward's serial path (eager runs big batches in parallel chunks of the same
    # per-item steps): iat[0] = 0 conv (x0 the wide side), 1 transposed (y the wide side);
    # x2 the bias, empty when there is none
    if iat[0] == 0:
        geo = _geo(sh0, sh_y, sh1, iat)
        if geo[4] // geo[9] > 0 and geo[1] // geo[9] * geo[7] * geo[8] == 0:
            y[:] = 0.0  # no input channels: the output is the bias alone
            if x2.shape[0] > 0:
                _add_channels(y, x2, geo[0], geo[4], geo[5] * geo[6])
        else:
            _narrow_from_wide(x0, x1, y, x2, geo, 0, geo[0], False)
        return
    geo = _geo(sh_y, sh0, sh1, iat)
    y[:] = 0.0
    _wide_from_narrow(x0, x1, y, geo, 0, geo[0])
    if x2.shape[0] > 0:
        _add_channels(y, x2, geo[0], geo[1], geo[2] * geo[3])


@njit(cache=True, error_model="numpy")
def avg_pool2d_fw(y, x0, sh_y, sh0, iat, fat):
    # avg_pool2d and adaptive_avg_pool2d: iat = [adaptive, kh, kw, sh, sw, ph, pw,
    # count_include_pad, has_divisor, divisor, ceil], the windows of eager's avgpool_forward
    nd = sh0.shape[0]
    h, w = sh0[nd - 2], sh0[nd - 1]
    ho, wo = sh_y[nd - 2], sh_y[nd - 1]
    planes = 1
    for d in range(nd - 2):
        planes *= sh0[d]
    rows, cols, div = _windows(h, w, ho, wo, iat)
    _avgpool_planes(x0, y, 0, planes, h, w, ho, wo, rows, cols, div, False)


@njit(cache=True, error_model="numpy")
def _maxpool_replay(x0, sh_y, sh0, iat):
    # eager's maxpool_forward, serial: iat = [kh, kw, sh, sw, ph, pw, dh, dw, ceil, ...]
    nd = sh0.shape[0]
    h, w = sh0[nd - 2], sh0[nd - 1]
    ho, wo = sh_y[nd - 2], sh_y[nd - 1]
    planes = 1
    for d in range(nd - 2):
        planes *= sh0[d]
    rows = _pool_spans(h, ho, iat[0], iat[2], iat[4], iat[6])
    cols = _pool_spans(w, wo, iat[1], iat[3], iat[5], iat[7])
    y = np.empty(planes * ho * wo)
    idx = np.empty(planes * ho * wo, np.int64)
    _maxpool_planes(x0, y, idx, 0, planes, h, w, ho, wo, rows, cols, iat[6], iat[7])
    return y, idx


@njit(cache=True, error_model="numpy")
def max_pool2d_fw(y, x0, sh_y, sh0, iat, fat):
    v, _ = _maxpool_replay(x0, sh_y, sh0, iat)
    for k in range(y.shape[0]):
        y[k] = v[k]


@njit(cache=True, error_model="numpy")
def max_pool2d_replay_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    _, pos = _maxpool_replay(x0, sh_y, sh0, iat)
    for k in range(g.shape[0]):
        gx0[pos[k]] += g[k]


kernelgen.kernel_module(__name__)  # (see kernelgen.KERNEL_MODULES)
