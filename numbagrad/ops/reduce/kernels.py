"""The reduce family's backward kernels (sums, extremes, var/std, norms, products, softmax), on
flat views with the op table's signatures."""

import numpy as np
from numba import njit

from ...engine import kernelgen
from ...engine.vmath import pw, sgn
from ..kernel_helpers import bcast_index, numel


# ---- reductions: iat holds the kept shape (reduced dims as 1) ----------------------------
@njit(cache=True, error_model="numpy")
def sum_all_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # a reduction of every element: fat[0] scales (1 for sum, 1/N for mean)
    gs = g[0] * fat[0]
    for k in range(gx0.shape[0]):
        gx0[k] += gs


@njit(cache=True, error_model="numpy")
def sum_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # fat[0] scales: 1 for sum, 1/N for mean
    s = fat[0]
    if g.shape[0] == 1:  # full reduction: no index map needed
        gs = g[0] * s
        for k in range(gx0.shape[0]):
            gx0[k] += gs
        return
    # odometer over x, its group's position advancing by the kept shape's strides (as
    # replay_kernels.group_sums_into: no index array, no helper to compile)
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
        gx0[k] += g[pos] * s
        for q in range(nd - 1, -1, -1):
            coord[q] += 1
            pos += st[q]
            if coord[q] < sh0[q]:
                break
            pos -= st[q] * sh0[q]
            coord[q] = 0


@njit(cache=True, error_model="numpy")
def amax_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # torch: (g / count) * mask, count the group's elements equal to its extremum: shared
    # evenly among ties, and NaN over a whole group whose extremum is NaN (count 0)
    j = bcast_index(iat, sh0)
    count = np.zeros(g.shape[0])
    for k in range(x0.shape[0]):
        if x0[k] == y[j[k]]:
            count[j[k]] += 1.0
    for k in range(x0.shape[0]):
        q = j[k]
        gx0[k] += (g[q] / count[q]) * (1.0 if x0[k] == y[q] else 0.0)


@njit(cache=True, error_model="numpy")
def extreme_all_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # max() and min() of everything, torch's evenly_distribute_backward: g / count to each
    # element equal to the result (each NaN when the result is NaN), exactly 0 elsewhere
    nan = y[0] != y[0]
    count = 0.0
    for k in range(x0.shape[0]):
        if (x0[k] != x0[k]) if nan else (x0[k] == y[0]):
            count += 1.0
    share = g[0] / count
    for k in range(x0.shape[0]):
        if (x0[k] != x0[k]) if nan else (x0[k] == y[0]):
            gx0[k] += share


@njit(cache=True, error_model="numpy")
def logsumexp_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    j = bcast_index(iat, sh0)
    for k in range(x0.shape[0]):
        gx0[k] += g[j[k]] * np.exp(x0[k] - y[j[k]])


@njit(cache=True, error_model="numpy")
def _group_mean(x0, j, n_groups):
    # corrected by the mean deviation from it, as replay_kernels._var_groups: exactly the
    # value of a group of equal elements (so var's gradient there is 0, as torch's)
    mean = np.zeros(n_groups)
    cnt = np.zeros(n_groups)
    for k in range(x0.shape[0]):
        mean[j[k]] += x0[k]
        cnt[j[k]] += 1.0
    for q in range(n_groups):
        mean[q] /= max(cnt[q], 1.0)
    shift = np.zeros(n_groups)
    for k in range(x0.shape[0]):
        shift[j[k]] += x0[k] - mean[j[k]]
    for q in range(n_groups):
        if np.isfinite(shift[q]):  # an inf or nan group keeps torch's x - mean
            mean[q] += shift[q] / max(cnt[q], 1.0)
    return mean, cnt


@njit(cache=True, error_model="numpy")
def var_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # fat[0] = correction (Bessel's 1 by default); fat[1] = 1 when no dim was given, where
    # torch's answer for no degrees of freedom left is NaN at the mean and inf elsewhere
    j = bcast_index(iat, sh0)
    mean, cnt = _group_mean(x0, j, g.shape[0])
    if fat.shape[0] > 1 and fat[1] != 0.0 and cnt[0] - fat[0] <= 0.0:
        for k in range(x0.shape[0]):
            gx0[k] += g[0] * (np.nan if x0[k] == mean[0] else np.inf)
        return
    for k in range(x0.shape[0]):
        q = j[k]
        gx0[k] += (2.0 / (cnt[q] - fat[0])) * g[q] * (x0[k] - mean[q])


@njit(cache=True, error_model="numpy")
def std_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    j = bcast_index(iat, sh0)
    mean, cnt = _group_mean(x0, j, g.shape[0])
    for k in range(x0.shape[0]):
        q = j[k]
        if y[q] != 0.0:  # torch masks the gradient where std == 0
            gx0[k] += g[q] * (x0[k] - mean[q]) / ((cnt[q] - fat[0]) * y[q])


@njit(cache=True, error_model="numpy")
def norm_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # torch's norm_backward term by term (its NaN and inf results too): y = 0 zeroes
    # g / y ** (p - 1), not g; p = 0 has no gradient
    p = fat[0]
    if p == 0.0:
        return
    j = bcast_index(iat, sh0)
    if abs(p) == np.inf:  # the gradient is shared by the extremes, and NaNs
        count = np.zeros(g.shape[0])
        for k in range(x0.shape[0]):
            if abs(x0[k]) == y[j[k]] or x0[k] != x0[k]:
                count[j[k]] += 1.0
    for k in range(x0.shape[0]):
        q = j[k]
        x = x0[k]
        n = y[q]
        if p == 1.0:
            gx0[k] += sgn(x) * g[q]
        elif p == 2.0:
            gx0[k] += g[q] * (0.0 if n == 0.0 else x / n)
        elif abs(p) == np.inf:
            top = 1.0 if (abs(x) == n or x != x) else 0.0
            gx0[k] += sgn(x) * ((g[q] / count[q]) * top)
        elif p < 1.0:
            gx0[k] += sgn(x) * (0.0 if x == 0.0 else pw(abs(x), p - 1.0)) * g[q] * \
                pw(n, 1.0 - p)
        else:
            scaled = sgn(x) * pw(abs(x), p - 1.0) if p < 2.0 else x * pw(abs(x), p - 2.0)
            gx0[k] += scaled * (0.0 if n == 0.0 else g[q] / pw(n, p - 1.0))


@njit(cache=True, error_model="numpy")
def _prod_of_others(g, x0, gx0, j, m):
    """gx0 += g * (product of the elements before * product of the elements after, in the
    group), torch's prod_safe_zeros_backward: exact with zeros, and NaN where it is."""
    n = x0.shape[0]
    before = np.empty(n)
    run = np.ones(m)
    for k in range(n):
        before[k] = run[j[k]]
        run[j[k]] *= x0[k]
    run[:] = 1.0
    for k in range(n - 1, -1, -1):
        q = j[k]
        gx0[k] += g[q] * (before[k] * run[q])
        run[q] *= x0[k]


@njit(cache=True, error_model="numpy")
def prod_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # prod() of everything, torch's rule: y / x without zeros, the product of the others
    # with one zero, and 0 with several
    if sh0.shape[0] == 0:
        gx0[0] += g[0]
        return
    zeros = 0
    for k in range(x0.shape[0]):
        if x0[k] == 0.0:
            zeros += 1
    if zeros == 0:
        for k in range(x0.shape[0]):
            gx0[k] += g[0] * (y[0] / x0[k])
    elif zeros == 1:
        _prod_of_others(g, x0, gx0, np.zeros(x0.shape[0], np.int64), 1)


@njit(cache=True, error_model="numpy")
def prod_dim_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # prod(dim), torch's rule: y / x when no element of the whole input is 0, else the
    # product of the others in every group
    if sh0.shape[0] == 0:
        gx0[0] += g[0]
        return
    j = bcast_index(iat, sh0)
    for k in range(x0.shape[0]):
        if x0[k] == 0.0:
            _prod_of_others(g, x0, gx0, j, g.shape[0])
            return
    for k in range(x0.shape[0]):
        gx0[k] += g[j[k]] * (y[j[k]] / x0[k])


@njit(cache=True, error_model="numpy")
def softmax_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    j = bcast_index(iat, sh_y)
    s = np.zeros(numel(iat))
    for k in range(g.shape[0]):
        s[j[k]] += g[k] * y[k]
    for k in range(g.shape[0]):
        gx0[k] += y[k] * (g[k] - s[j[k]])


@njit(cache=True, error_model="numpy")
def log_softmax_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    j = bcast_index(iat, sh_y)
    s = np.zeros(numel(iat))
    for k in range(g.shape[0]):
        s[j[k]] += g[k]
    for k in range(g.shape[0]):
        gx0[k] += g[k] - np.exp(y[k]) * s[j[k]]


kernelgen.kernel_module(__name__)  # (see kernelgen.KERNEL_MODULES)
