"""@njit kernels of the scans, the selections (sort, topk, median, ...), trace and nansum: the
replay's forwards (``fw(y, x0, sh_y, sh0, iat, fat)``) and the backwards
(``bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat)``) on flat C-order views.

A scan along dim ``d`` sees x as (outer, n, inner): element (o, i, j) is at (o * n + i) *
inner + j. ``iat[0]`` of a scan node is ``d``."""

import numpy as np
from numba import njit

from ..kernel_helpers import bcast_index, group_sums_into
from ..reduce.kernels import norm_bw
from ..reduce.replay_kernels import norm_fw
from .order import stable_order, topk_line


@njit(cache=True, inline="always")
def _lines(sh, d):
    outer, inner = 1, 1
    for q in range(sh.shape[0]):
        if q < d:
            outer *= sh[q]
        elif q > d:
            inner *= sh[q]
    n = sh[d] if sh.shape[0] else 1
    return outer, n, inner


# ---- cumulative sums, products, logsumexps -----------------------------------------------
@njit(cache=True, error_model="numpy")
def cumsum_fw(y, x0, sh_y, sh0, iat, fat):
    outer, n, inner = _lines(sh0, iat[0])
    for o in range(outer):
        for j in range(inner):
            acc = y.dtype.type(0)  # accumulated in the node's dtype, as torch's kernel does
            for i in range(n):
                k = (o * n + i) * inner + j
                acc += x0[k]
                y[k] = acc


@njit(cache=True, error_model="numpy")
def cumsum_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # the reversed cumulative sum of g along the dim
    outer, n, inner = _lines(sh0, iat[0])
    for o in range(outer):
        for j in range(inner):
            acc = 0.0
            for i in range(n - 1, -1, -1):
                k = (o * n + i) * inner + j
                acc += g[k]
                gx0[k] += acc


@njit(cache=True, error_model="numpy")
def cumprod_fw(y, x0, sh_y, sh0, iat, fat):
    outer, n, inner = _lines(sh0, iat[0])
    for o in range(outer):
        for j in range(inner):
            acc = y.dtype.type(1)
            for i in range(n):
                k = (o * n + i) * inner + j
                acc *= x0[k]
                y[k] = acc


@njit(cache=True, error_model="numpy")
def cumprod_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # d y_j / d x_i = prod_{q <= j, q != i} x_q (j >= i). Before a line's first zero z that
    # is y_j / x_i; at z, the products of the others past it; after z, 0 (x_z is a factor)
    outer, n, inner = _lines(sh0, iat[0])
    for o in range(outer):
        for j in range(inner):
            base = o * n * inner + j
            z = n
            for i in range(n):
                if x0[base + i * inner] == 0.0:
                    z = i
                    break
            acc = 0.0  # sum_{q >= i} g_q y_q, for i < z
            for i in range(z - 1, -1, -1):
                k = base + i * inner
                acc += g[k] * y[k]
                gx0[k] += acc / x0[k]
            # the first zero itself: sum_{q >= z} g_q prod_{r <= q, r != z} x_r
            if z < n:
                before = 1.0 if z == 0 else y[base + (z - 1) * inner]
                s = 0.0
                prod = before
                for q in range(z, n):
                    if q > z:
                        prod *= x0[base + q * inner]
                    s += g[base + q * inner] * prod
                gx0[base + z * inner] += s
            # the ones before z also see the terms q >= z, which are 0 (x_z = 0): nothing


@njit(cache=True, error_model="numpy")
def logcumsumexp_fw(y, x0, sh_y, sh0, iat, fat):
    outer, n, inner = _lines(sh0, iat[0])
    for o in range(outer):
        for j in range(inner):
            acc = -np.inf
            for i in range(n):
                k = (o * n + i) * inner + j
                v = np.float64(x0[k])
                hi = max(acc, v)
                lo = min(acc, v)
                if hi == -np.inf or lo == -np.inf:  # log(e^-inf + e^v) = v
                    acc = hi
                elif hi == np.inf or hi != hi:
                    acc = hi + lo  # inf + finite: inf; NaN stays NaN
                else:
                    acc = hi + np.log1p(np.exp(lo - hi))
                y[k] = acc


@njit(cache=True, error_model="numpy")
def logcumsumexp_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # gx_i = sum_{q >= i} g_q exp(x_i - y_q) = exp(x_i - y_i) T_i, where T_i = g_i +
    # exp(y_i - y_{i+1}) T_{i+1}: y never decreases, so every factor is at most 1
    outer, n, inner = _lines(sh0, iat[0])
    for o in range(outer):
        for j in range(inner):
            t = 0.0
            for i in range(n - 1, -1, -1):
                k = (o * n + i) * inner + j
                if i < n - 1:
                    t *= np.exp(y[k] - y[k + inner])
                t += g[k]
                gx0[k] += np.exp(x0[k] - y[k]) * t


# ---- selections: the values are x at positions the op picks --------------------------------
# kinds; a selection node's iat is [flat input position of each output..., kind, d, a, b]
SORT, TOPK, KTHVALUE, MEDIAN, NANMEDIAN, MODE, CUMMAX, CUMMIN = range(8)


@njit(cache=True, inline="always")
def _gt_or_nan(a, b):
    return (a != a and b == b) or a > b


@njit(cache=True)
def _kth_smallest(v, k):
    """The local position of the k-th smallest (k from 0) of v, by torch's kthvalue:
    quickselect with a median-of-three pivot on a copy (its ties land where torch's do)."""
    arr = v.copy()
    idx = np.arange(v.shape[0])
    lo, hi = 0, v.shape[0] - 1
    while hi > lo:
        if hi == lo + 1:
            if _gt_or_nan(arr[lo], arr[hi]):
                _swap(arr, idx, lo, hi)
            break
        _swap(arr, idx, lo + (hi - lo) // 2, lo + 1)
        if _gt_or_nan(arr[lo + 1], arr[hi]):
            _swap(arr, idx, lo + 1, hi)
        if _gt_or_nan(arr[lo], arr[hi]):
            _swap(arr, idx, lo, hi)
        if _gt_or_nan(arr[lo + 1], arr[lo]):
            _swap(arr, idx, lo + 1, lo)
        i, j = lo + 1, hi
        pivot = arr[lo]
        while True:
            i += 1
            while _gt_or_nan(pivot, arr[i]):
                i += 1
            j -= 1
            while _gt_or_nan(arr[j], pivot):
                j -= 1
            if j < i:
                break
            _swap(arr, idx, i, j)
        _swap(arr, idx, lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


@njit(cache=True, inline="always")
def _swap(arr, idx, i, j):
    arr[i], arr[j] = arr[j], arr[i]
    idx[i], idx[j] = idx[j], idx[i]


@njit(cache=True)
def kth_positions(x0, sh0, d, k):
    """select_positions of kthvalue without the sorts (eager's: a smaller compile)."""
    outer, n, inner = _lines(sh0, d)
    pos = np.empty(outer * inner, np.int64)
    v = np.empty(n, x0.dtype)
    for o in range(outer):
        for j in range(inner):
            for i in range(n):
                v[i] = x0[(o * n + i) * inner + j]
            pos[o * inner + j] = (o * n + _kth_smallest(v, k - 1)) * inner + j
    return pos


@njit(cache=True)
def _cumulative_extreme(v, is_max, out):
    # torch's rule: a NaN takes over (each new one), and a value equal to the extreme too
    best = 0
    for i in range(v.shape[0]):
        x = v[i]
        cur = v[best]
        if x != x:
            best = i
        elif cur == cur and ((x >= cur) if is_max else (x <= cur)):
            best = i
        out[i] = best


@njit(cache=True)
def _line_positions(v, kind, a, b, out):
    """The local positions a selection picks in one line ``v`` (``out`` gets as many)."""
    n = v.shape[0]
    if kind == CUMMAX or kind == CUMMIN:
        _cumulative_extreme(v, kind == CUMMAX, out)
        return
    if kind == MEDIAN:
        for i in range(n):
            if v[i] != v[i]:  # a NaN propagates: its first one
                out[0] = i
                return
    if kind == KTHVALUE:
        out[0] = _kth_smallest(v, a - 1)
        return
    if kind == TOPK:  # a: largest, and sorted as its bit 1
        topk_line(v, b, (a & 1) != 0, (a & 2) != 0, out)
        return
    order = stable_order(v, kind == SORT and a != 0)
    if kind == SORT:
        for i in range(out.shape[0]):
            out[i] = order[i]
    elif kind == MEDIAN:
        out[0] = order[(n - 1) // 2]
    elif kind == NANMEDIAN:
        m = 0
        for i in range(n):
            if v[i] == v[i]:
                m += 1
        out[0] = order[max((m - 1) // 2, 0)]
    else:
        out[0] = _mode_of(v, order)


@njit(cache=True)
def _mode_of(v, order):
    """mode's pick: the longest run of equal values (in sorted order), the smallest value
    on ties; its last position in v."""
    n = v.shape[0]
    best_len, best_at, i = 0, 0, 0
    while i < n:
        e = i
        last = order[i]
        while e + 1 < n and v[order[e + 1]] == v[order[i]]:
            e += 1
            last = max(last, order[e])
        if e - i + 1 > best_len:
            best_len, best_at = e - i + 1, last
        i = e + 1
    return best_at


@njit(cache=True)
def mode_positions(x0, sh0, d):
    """select_positions of mode alone (eager's: a smaller compile)."""
    outer, n, inner = _lines(sh0, d)
    pos = np.empty(outer * inner, np.int64)
    v = np.empty(n, x0.dtype)
    for o in range(outer):
        for j in range(inner):
            for i in range(n):
                v[i] = x0[(o * n + i) * inner + j]
            pos[o * inner + j] = (o * n + _mode_of(v, stable_order(v, False))) * inner + j
    return pos


@njit(cache=True)
def select_positions(x0, sh0, kind, d, a, b):
    """Flat input positions of the outputs, in the output's C order: per line along ``d``,
    n of them (sort, cummax, cummin), b (topk: b = k) or 1."""
    outer, n, inner = _lines(sh0, d)
    m = n if kind == SORT or kind == CUMMAX or kind == CUMMIN else (b if kind == TOPK else 1)
    pos = np.empty(outer * m * inner, np.int64)
    v = np.empty(n, x0.dtype)
    local = np.empty(max(m, n), np.int64)
    for o in range(outer):
        for j in range(inner):
            for i in range(n):
                v[i] = x0[(o * n + i) * inner + j]
            _line_positions(v, kind, a, b, local)
            for i in range(m):
                pos[(o * m + i) * inner + j] = (o * n + local[i]) * inner + j
    return pos


@njit(cache=True)
def cumulative_extreme_positions(x0, sh0, d, is_max):
    """select_positions of cummax / cummin without the sorts (eager's: a smaller compile)."""
    outer, n, inner = _lines(sh0, d)
    pos = np.empty(x0.shape[0], np.int64)
    v = np.empty(n, x0.dtype)
    local = np.empty(n, np.int64)
    for o in range(outer):
        for j in range(inner):
            for i in range(n):
                v[i] = x0[(o * n + i) * inner + j]
            _cumulative_extreme(v, is_max, local)
            for i in range(n):
                pos[(o * n + i) * inner + j] = (o * n + local[i]) * inner + j
    return pos


@njit(cache=True, error_model="numpy")
def select_fw(y, x0, sh_y, sh0, iat, fat):
    p = y.shape[0]
    pos = select_positions(x0, sh0, iat[p], iat[p + 1], iat[p + 2], iat[p + 3])
    for k in range(p):
        y[k] = x0[pos[k]]


@njit(cache=True, error_model="numpy")
def select_rbw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # the replay's backward: the positions recomputed from the replayed input
    p = g.shape[0]
    pos = select_positions(x0, sh0, iat[p], iat[p + 1], iat[p + 2], iat[p + 3])
    for k in range(p):
        gx0[pos[k]] += g[k]


@njit(cache=True, error_model="numpy")
def median_all_fw(y, x0, sh_y, sh0, iat, fat):
    # median() / nanmedian() of every element: fat[0] is the kind
    n = x0.shape[0]
    sh = np.empty(1, np.int64)
    sh[0] = n
    pos = select_positions(x0, sh, np.int64(fat[0]), 0, 0, 0)
    y[0] = x0[pos[0]]


# ---- trace, nansum --------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def trace_fw(y, x0, sh_y, sh0, iat, fat):
    acc = y.dtype.type(0)
    for i in range(min(sh0[0], sh0[1])):
        acc += x0[i * sh0[1] + i]
    y[0] = acc


@njit(cache=True, error_model="numpy")
def trace_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    for i in range(min(sh0[0], sh0[1])):
        gx0[i * sh0[1] + i] += g[0]


@njit(cache=True, error_model="numpy")
def nansum_fw(y, x0, sh_y, sh0, iat, fat):
    # sum's group sums (the same order, the same bits) of x with its NaNs as 0
    clean = x0.copy()
    for k in range(clean.shape[0]):
        if clean[k] != clean[k]:
            clean[k] = 0.0
    group_sums_into(y, clean, sh0, iat)


@njit(cache=True, error_model="numpy")
def nansum_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # iat: the kept shape (reduced dims 1); the gradient skips the NaNs
    nd = sh0.shape[0]
    coord = np.zeros(nd, np.int64)
    st = np.zeros(nd, np.int64)
    acc = 1
    for q in range(nd - 1, -1, -1):
        if iat[q] != 1:
            st[q] = acc
        acc *= iat[q]
    pos = 0
    for k in range(gx0.shape[0]):
        if x0[k] == x0[k]:
            gx0[k] += g[pos]
        for q in range(nd - 1, -1, -1):
            coord[q] += 1
            pos += st[q]
            if coord[q] < sh0[q]:
                break
            pos -= st[q] * coord[q]
            coord[q] = 0


# ---- dist: the p-norm of x0 - x1 broadcast; iat: the broadcast shape, fat: (p, f32) ----
@njit(cache=True, error_model="numpy")
def _broadcast_difference(x0, x1, sh0, sh1, shape, f32):
    # rounded as torch's x0 - x1 (f32: a float32 node, whose values come here in float64)
    j0 = bcast_index(sh0, shape)
    j1 = bcast_index(sh1, shape)
    d = np.empty(j0.shape[0], x0.dtype)
    for k in range(d.shape[0]):
        v = x0[j0[k]] - x1[j1[k]]
        d[k] = np.float32(v) if f32 else v
    return d, j0, j1


@njit(cache=True, error_model="numpy")
def dist_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    d, _, _ = _broadcast_difference(x0, x1, sh0, sh1, iat, fat[1] != 0.0)
    norm_fw(y, d, sh_y, iat, np.ones(iat.shape[0], np.int64), fat)


@njit(cache=True, error_model="numpy")
def dist_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1, iat, fat):
    d, j0, j1 = _broadcast_difference(x0, x1, sh0, sh1, iat, fat[1] != 0.0)
    gd = np.zeros(d.shape[0])
    norm_bw(g, y, d, gd, sh_y, iat, True, np.ones(iat.shape[0], np.int64), fat)
    for k in range(d.shape[0]):
        if need0:
            gx0[j0[k]] += gd[k]
        if need1:
            gx1[j1[k]] -= gd[k]
