"""The reduce family's forward kernels for compiled replay, summing in NumPy's order where they
can (pairwise within a contiguous group), so a float64 replay equals the eager value bit for
bit there."""

import numpy as np
from numba import njit

from ...engine import kernelgen
from ..kernel_helpers import (
    bcast_index,
    group_sums,
    group_sums_into,
    numel,
    pairwise_sum,
)


# ---- reductions: iat holds the kept shape (reduced dims as 1) ----------------------------
@njit(cache=True, error_model="numpy")
def sum_fw(y, x0, sh_y, sh0, iat, fat):
    group_sums_into(y, x0, sh0, iat)


@njit(cache=True, error_model="numpy")
def sum_all_fw(y, x0, sh_y, sh0, iat, fat):
    # every element: group_sums_into's one contiguous run
    y[0] = pairwise_sum(x0, 0, x0.shape[0])


@njit(cache=True, error_model="numpy")
def mean_all_fw(y, x0, sh_y, sh0, iat, fat):
    n = x0.shape[0]
    y[0] = pairwise_sum(x0, 0, n) / n if n else np.nan


@njit(cache=True, error_model="numpy")
def mean_fw(y, x0, sh_y, sh0, iat, fat):
    # np.mean divides the sum by the count (not a multiply by fat[0] = 1/count)
    s = group_sums(x0, sh0, iat)
    n = x0.shape[0] // max(y.shape[0], 1) if x0.shape[0] else 0
    for q in range(y.shape[0]):
        y[q] = s[q] / n if n else np.nan


@njit(cache=True, error_model="numpy")
def prod_fw(y, x0, sh_y, sh0, iat, fat):
    j = bcast_index(iat, sh0)
    for q in range(y.shape[0]):
        y[q] = 1.0
    for k in range(x0.shape[0]):
        y[j[k]] *= x0[k]


@njit(cache=True, error_model="numpy")
def _extreme_fw(y, x0, sh0, kept, is_max):
    _extreme_at(y, x0, bcast_index(kept, sh0), is_max)


@njit(cache=True, error_model="numpy")
def _extreme_at(y, x0, j, is_max):
    # NaN wins, as in NumPy's max/min; j: each element's group
    seen = np.zeros(y.shape[0], np.bool_)
    for k in range(x0.shape[0]):
        q = j[k]
        v = x0[k]
        if not seen[q]:
            y[q] = v
            seen[q] = True
        elif y[q] == y[q] and (v != v or (v > y[q] if is_max else v < y[q])):
            y[q] = v


@njit(cache=True, error_model="numpy")
def amax_fw(y, x0, sh_y, sh0, iat, fat):
    _extreme_fw(y, x0, sh0, iat, True)


@njit(cache=True, error_model="numpy")
def amin_fw(y, x0, sh_y, sh0, iat, fat):
    _extreme_fw(y, x0, sh0, iat, False)


@njit(cache=True, error_model="numpy")
def _group_max(x0, sh0, kept):
    m = np.empty(numel(kept), x0.dtype)
    _extreme_fw(m, x0, sh0, kept, True)
    return m


@njit(cache=True, error_model="numpy")
def logsumexp_fw(y, x0, sh_y, sh0, iat, fat):
    # log(sum(exp(x - m))) + m with m the group max (0 where it is not finite), as eager
    m = _group_max(x0, sh0, iat)
    for q in range(m.shape[0]):
        if not np.isfinite(m[q]):
            m[q] = 0.0
    j = bcast_index(iat, sh0)
    e = np.empty(x0.shape[0], x0.dtype)
    for k in range(x0.shape[0]):
        e[k] = np.exp(x0[k] - m[j[k]])
    s = group_sums(e, sh0, iat)
    for q in range(y.shape[0]):
        y[q] = np.log(s[q]) + m[q]


@njit(cache=True, error_model="numpy")
def _softmax_fw(y, x0, sh0, kept, log):
    j = bcast_index(kept, sh0)
    m = np.empty(numel(kept), x0.dtype)
    _extreme_at(m, x0, j, True)
    z = np.empty(x0.shape[0], x0.dtype)
    e = np.empty(x0.shape[0], x0.dtype)
    for k in range(x0.shape[0]):
        z[k] = x0[k] - m[j[k]]
        e[k] = np.exp(z[k])
    s = group_sums(e, sh0, kept)
    if log:
        for q in range(s.shape[0]):
            s[q] = np.log(s[q])
        for k in range(y.shape[0]):
            y[k] = z[k] - s[j[k]]
    else:
        for k in range(y.shape[0]):
            y[k] = e[k] / s[j[k]]


@njit(cache=True, error_model="numpy")
def softmax_fw(y, x0, sh_y, sh0, iat, fat):
    _softmax_fw(y, x0, sh0, iat, False)


@njit(cache=True, error_model="numpy")
def log_softmax_fw(y, x0, sh_y, sh0, iat, fat):
    _softmax_fw(y, x0, sh0, iat, True)


# ---- var, std, norm: iat holds the kept shape (reduced dims as 1) ------------------------
@njit(cache=True, error_model="numpy")
def _var_groups(x0, sh0, kept, ddof):
    """In float64, as torch: the group mean (sum / n) corrected by the mean deviation from
    it, then the squared deviations' sum / max(n - ddof, 0)."""
    m = numel(kept)
    n = x0.shape[0] // m if m else 0
    s = group_sums(x0, sh0, kept)
    mean = np.empty(m)
    for q in range(m):
        mean[q] = s[q] / n
    j = bcast_index(kept, sh0)
    # equal values: a rounded mean is off by ulps, the deviations' mean is that error exactly,
    # so they then deviate by 0, as in torch's Welford kernel
    shift = np.zeros(m)
    for k in range(x0.shape[0]):
        shift[j[k]] += x0[k] - mean[j[k]]
    for q in range(m):
        if np.isfinite(shift[q]):  # an inf or nan group keeps torch's x - mean
            mean[q] = mean[q] + shift[q] / n
    d = np.empty(x0.shape[0])
    for k in range(x0.shape[0]):
        c = x0[k] - mean[j[k]]
        d[k] = c * c
    v = group_sums(d, sh0, kept)
    r = max(n - ddof, 0.0)
    for q in range(m):
        v[q] = v[q] / r
    return v


@njit(cache=True, error_model="numpy")
def var_fw(y, x0, sh_y, sh0, iat, fat):
    v = _var_groups(x0, sh0, iat, fat[0])
    for q in range(y.shape[0]):
        y[q] = v[q]


@njit(cache=True, error_model="numpy")
def std_fw(y, x0, sh_y, sh0, iat, fat):
    v = _var_groups(x0, sh0, iat, fat[0])
    for q in range(y.shape[0]):
        y[q] = np.sqrt(v[q])


@njit(cache=True, error_model="numpy")
def norm_fw(y, x0, sh_y, sh0, iat, fat):
    # fat[0] = p: inf -> max |x|, -inf -> min |x|, 2 -> sqrt(sum x^2), 0 -> count of
    # nonzeros, else sum(|x|^p)^(1/p), as eager
    p = fat[0]
    a = np.empty(x0.shape[0])
    for k in range(x0.shape[0]):
        a[k] = abs(x0[k])
    if abs(p) == np.inf:
        _extreme_fw(y, a, sh0, iat, p > 0.0)
        return
    for k in range(a.shape[0]):
        if p == 2.0:
            a[k] = a[k] * a[k]
        elif p == 0.0:
            a[k] = 1.0 if a[k] != 0.0 else 0.0
        else:
            a[k] = a[k] ** p
    s = group_sums(a, sh0, iat)
    for q in range(y.shape[0]):
        if p == 2.0:
            y[q] = np.sqrt(s[q])
        elif p == 0.0:
            y[q] = s[q]
        else:
            y[q] = s[q] ** (1.0 / p)


# ---- ops whose recorded positions are data (an argmax): the forward recomputes the values,
# and the replay sweep's backward (OpDef.replay_bw) the positions, from the replayed input
@njit(cache=True, error_model="numpy")
def argmax_dim_fw(y, x0, sh_y, sh0, iat, fat):
    # max(dim) values: iat = [flat position of each output..., kept shape...]
    _extreme_fw(y, x0, sh0, iat[y.shape[0]:], True)


@njit(cache=True, error_model="numpy")
def argmin_dim_fw(y, x0, sh_y, sh0, iat, fat):
    _extreme_fw(y, x0, sh0, iat[y.shape[0]:], False)


@njit(cache=True, error_model="numpy")
def arg_dim_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # max(dim)/min(dim): the gradient goes to the first element of each group equal to its
    # output (NaN: the first NaN), np.argmax's / np.argmin's choice, as eager records it
    n = g.shape[0]
    j = bcast_index(iat[n:], sh0)
    done = np.zeros(n, np.bool_)
    for k in range(x0.shape[0]):
        q = j[k]
        if done[q]:
            continue
        v = x0[k]
        if v == y[q] or (v != v and y[q] != y[q]):
            gx0[k] += g[q]
            done[q] = True


kernelgen.kernel_module(__name__)  # (see kernelgen.KERNEL_MODULES)
