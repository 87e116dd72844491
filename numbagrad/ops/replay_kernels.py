"""@njit forward kernels of the structured ops, for compiled replay (numbagrad.compile).

Each recomputes one node's value from its inputs' values, on flat float64 views of the
value arena, with the signature ``fw(y, x0.., sh_y, sh0.., iat, fat)`` (variadic ops:
``fw(y, x, sh_y, sh_x, k, iat, fat)`` once per input ``k``). ``iat``/``fat`` are what the
eager op recorded for its derivative, so the forward reads the same attributes.

Summation follows NumPy's order where it can (pairwise within a contiguous group, sequential
across rows), so a float64 replay matches the eager value bit for bit in those cases.
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..engine import kernelgen
from ..engine.gemm import batched_product, product
from .kernels import (
    bcast_index,
    c_strides,
    numel,
    strided_index,
)


# ---- summation in NumPy's order ----------------------------------------------------------
# The sums run in their input's dtype: a float32 replay (registry.replay_f32) hands them
# float32 arrays, and NumPy's float32 loops accumulate in float32.
def zero_of(a):
    """A zero of array ``a``'s dtype (inside @njit)."""


@overload(zero_of)
def _zero_of(a):
    if a.dtype == types.float32:
        return lambda a: np.float32(0.0)
    return lambda a: 0.0


# the summation helpers are inlined into their callers: a chain of separately compiled
# helpers costs a compile (and a re-optimization in every caller) each
@njit(cache=True, inline="always", error_model="numpy")
def _block_sum(a, lo, n):
    """NumPy's pairwise-sum leaf (n <= 128): a plain loop below 8, else 8 accumulators."""
    if n < 8:
        res = zero_of(a)
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, inline="always", error_model="numpy")
def pairwise_sum(a, lo, n):
    """NumPy's pairwise sum of a[lo:lo + n] (umath loops_utils: blocks of 128 summed with 8
    accumulators, halves rounded to multiples of 8), so sums agree with np.sum to the last
    bit. An explicit stack (a recursive function breaks Numba's on-disk cache), with one
    leaf sum in the code: each copy of it costs compile time."""
    # stack rows: (start, length, stage); stage 0: to split, 1: left done, 2: both done
    st = np.empty((64, 3), np.int64)
    vals = np.empty(64, a.dtype)
    top, vtop = 0, 0
    st[0, 0], st[0, 1], st[0, 2] = lo, n, 0
    while top >= 0:
        m = st[top, 1]
        if m <= 128:
            vals[vtop] = _block_sum(a, st[top, 0], m)
            vtop += 1
            top -= 1
            continue
        n2 = m // 2
        n2 -= n2 % 8
        stage = st[top, 2]
        if stage < 2:  # push the left half, then (next visit) the right half
            st[top, 2] = stage + 1
            st[top + 1, 0] = st[top, 0] + (n2 if stage == 1 else 0)
            st[top + 1, 1] = m - n2 if stage == 1 else n2
            st[top + 1, 2] = 0
            top += 1
        else:  # both halves done: left + right, in that order
            vals[vtop - 2] = vals[vtop - 2] + vals[vtop - 1]
            vtop -= 1
            top -= 1
    return vals[0]


@njit(cache=True, error_model="numpy")
def group_sums_into(out, x, sh_x, kept):
    """``out`` = the sums of x over the dims ``kept`` marks as reduced (1), one per kept
    element: pairwise (NumPy's order) when the reduced dims are the trailing ones, so each
    group is one contiguous run of x; else in x's order."""
    nd = sh_x.shape[0]
    m = out.shape[0]
    d = nd
    while d > 0 and kept[d - 1] == 1:
        d -= 1
    run = 1
    trailing = True
    for q in range(nd):
        if q < d:
            trailing = trailing and kept[q] == sh_x[q]
        else:
            run *= sh_x[q]
    if trailing and m * run == x.shape[0]:
        for q in range(m):
            out[q] = pairwise_sum(x, q * run, run)
        return
    for q in range(m):
        out[q] = 0.0
    # odometer over x, its group's position advancing by the kept shape's strides
    coord = np.zeros(nd, np.int64)
    st = np.zeros(nd, np.int64)
    acc = 1
    for q in range(nd - 1, -1, -1):
        if kept[q] != 1:
            st[q] = acc
        acc *= kept[q]
    pos = 0
    for k in range(x.shape[0]):
        out[pos] += x[k]
        for q in range(nd - 1, -1, -1):
            coord[q] += 1
            pos += st[q]
            if coord[q] < sh_x[q]:
                break
            pos -= st[q] * sh_x[q]
            coord[q] = 0


@njit(cache=True, error_model="numpy")
def group_sums(x, sh_x, kept):
    """Sum of x over the dims ``kept`` marks as reduced (1), one value per kept element."""
    out = np.empty(numel(kept), x.dtype)
    group_sums_into(out, x, sh_x, kept)
    return out


# ---- views, reshapes, indexing -----------------------------------------------------------
@njit(cache=True, error_model="numpy")
def reshape_fw(y, x0, sh_y, sh0, iat, fat):
    for k in range(y.shape[0]):
        y[k] = x0[k]


@njit(cache=True, error_model="numpy")
def view_fw(y, x0, sh_y, sh0, iat, fat):
    # iat = [offset, strides of y in x's C-order element space...]: a loop over the last
    # dim inside an odometer over the others (no index array, no helper: each costs a
    # compile of its own)
    nd = sh_y.shape[0]
    n = y.shape[0]
    if nd == 0 or n == 0:
        if n:
            y[0] = x0[iat[0]]
        return
    inner = sh_y[nd - 1]
    step = iat[nd]
    coord = np.zeros(nd, np.int64)
    pos = iat[0]
    k = 0
    while k < n:
        out = y[k:k + inner]  # views, so that the loops index from 0 and vectorize
        if step == 1:
            run = x0[pos:pos + inner]
            for b in range(inner):
                out[b] = run[b]
        else:
            for b in range(inner):
                out[b] = x0[pos + b * step]
        k += inner
        for d in range(nd - 2, -1, -1):
            coord[d] += 1
            pos += iat[1 + d]
            if coord[d] < sh_y[d]:
                break
            pos -= iat[1 + d] * sh_y[d]
            coord[d] = 0


@njit(cache=True, error_model="numpy")
def expand_fw(y, x0, sh_y, sh0, iat, fat):
    j = bcast_index(sh0, sh_y)
    for k in range(y.shape[0]):
        y[k] = x0[j[k]]


@njit(cache=True, error_model="numpy")
def repeat_fw(y, x0, sh_y, sh0, iat, fat):
    nd = sh_y.shape[0]
    padded = np.ones(nd, np.int64)
    padded[nd - sh0.shape[0]:] = sh0
    st = c_strides(padded)
    coord = np.zeros(nd, np.int64)
    for k in range(y.shape[0]):
        pos = 0
        for d in range(nd):
            pos += (coord[d] % padded[d]) * st[d]
        y[k] = x0[pos]
        for d in range(nd - 1, -1, -1):
            coord[d] += 1
            if coord[d] < sh_y[d]:
                break
            coord[d] = 0


@njit(cache=True, error_model="numpy")
def cat_fw(y, x, sh_y, sh_x, k, iat, fat):
    ost = c_strides(sh_y)
    idx = strided_index(sh_x, iat[1 + k] * ost[iat[0]], ost)
    for j in range(x.shape[0]):
        y[idx[j]] = x[j]


@njit(cache=True, error_model="numpy")
def stack_fw(y, x, sh_y, sh_x, k, iat, fat):
    dim = iat[0]
    ost = c_strides(sh_y)
    st = np.empty(sh_x.shape[0], np.int64)
    for d in range(sh_x.shape[0]):
        st[d] = ost[d] if d < dim else ost[d + 1]
    idx = strided_index(sh_x, k * ost[dim], st)
    for j in range(x.shape[0]):
        y[idx[j]] = x[j]


@njit(cache=True, error_model="numpy")
def index_fw(y, x0, sh_y, sh0, iat, fat):
    # iat = flat index into x of every output element (gather, indexing, max(dim) values)
    for k in range(y.shape[0]):
        y[k] = x0[iat[k]]


@njit(cache=True, error_model="numpy")
def gather_flat_fw(y, x0, sh_y, sh0, iat, fat):
    # y = zeros with y.flat[iat[k]] += x.flat[k]
    y[:] = 0.0
    for k in range(x0.shape[0]):
        y[iat[k]] += x0[k]


@njit(cache=True, error_model="numpy")
def index_put_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    nd = iat[0]
    region = iat[1:1 + nd]
    pos = iat[1 + nd:]
    for k in range(y.shape[0]):
        y[k] = x0[k]
    j = bcast_index(sh1, region)
    for r in range(pos.shape[0]):
        y[pos[r]] = x1[j[r]]


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
    # NaN wins, as in NumPy's max/min
    j = bcast_index(kept, sh0)
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
    m = _group_max(x0, sh0, kept)
    j = bcast_index(kept, sh0)
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


# ---- linear algebra ----------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def mm_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    m, k, n = sh0[0], sh0[1], sh1[1]
    product(y.reshape((m, n)), x0.reshape((m, k)), x1.reshape((k, n)), 1.0, 0.0)


@njit(cache=True, error_model="numpy")
def mv_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    m, n = sh0[0], sh0[1]
    product(y.reshape((m, 1)), x0.reshape((m, n)), x1.reshape((n, 1)), 1.0, 0.0)


@njit(cache=True, error_model="numpy")
def dot_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    k = x0.shape[0]
    product(y.reshape((1, 1)), x0.reshape((1, k)), x1.reshape((k, 1)), 1.0, 0.0)


@njit(cache=True, error_model="numpy")
def bmm_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    b, m, k, n = sh0[0], sh0[1], sh0[2], sh1[2]
    batched_product(y.reshape((b, m, n)), x0.reshape((b, m, k)), x1.reshape((b, k, n)))


@njit(cache=True, error_model="numpy")
def addmm_fw(y, x0, x1, x2, sh_y, sh0, sh1, sh2, iat, fat):
    # y = beta * x0 + alpha * (x1 @ x2): x0 broadcast into y, then one product that starts
    # from it, as eager's _addmm_value (beta = 0 never reads x0, NaNs included)
    beta, alpha = fat[0], fat[1]
    if beta != 0.0:
        if x0.shape[0] == y.shape[0]:
            for q in range(y.shape[0]):
                y[q] = x0[q]
        else:
            j = bcast_index(sh0, sh_y)
            for q in range(y.shape[0]):
                y[q] = x0[j[q]]
    m, k, n = sh1[0], sh1[1], sh2[1]
    product(y.reshape((m, n)), x1.reshape((m, k)), x2.reshape((k, n)), alpha, beta)


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
