"""@njit backward kernels of the structured ops, on flat views, with the op table's signatures.

Every kernel accumulates (``+=``) into the gradient views it is given: the sweep owns the
adjoint arena and several consumers may add into one input. Index maps between a tensor
and a view of it are computed here once per call (``bcast_index``, ``strided_index``)
rather than per element, which keeps every kernel a plain loop that LLVM can vectorize.
"""

import numpy as np
from numba import njit

from ..engine import kernelgen
from ..engine.gemm import SMALL_MM, product
from ..engine.vmath import pw, sgn


@njit(cache=True, error_model="numpy")
def c_strides(shape):
    """C-order strides, in elements."""
    nd = shape.shape[0]
    st = np.empty(nd, np.int64)
    acc = 1
    for d in range(nd - 1, -1, -1):
        st[d] = acc
        acc *= shape[d]
    return st


@njit(cache=True, error_model="numpy")
def numel(shape):
    n = 1
    for d in range(shape.shape[0]):
        n *= shape[d]
    return n


@njit(cache=True, error_model="numpy")
def strided_index(shape, offset, strides):
    """Flat index ``offset + sum(coord[d] * strides[d])`` of every element of ``shape``."""
    n = numel(shape)
    nd = shape.shape[0]
    idx = np.empty(n, np.int64)
    coord = np.zeros(nd, np.int64)
    pos = offset
    for k in range(n):
        idx[k] = pos
        # odometer increment: cheaper than a div/mod per dimension per element
        for d in range(nd - 1, -1, -1):
            coord[d] += 1
            pos += strides[d]
            if coord[d] < shape[d]:
                break
            pos -= strides[d] * shape[d]
            coord[d] = 0
    return idx


@njit(cache=True, error_model="numpy")
def bcast_index(sh_in, sh_out):
    """For each element of ``sh_out``, the flat index of the ``sh_in`` element broadcast to it."""
    nd_out = sh_out.shape[0]
    lead = nd_out - sh_in.shape[0]
    st_in = c_strides(sh_in)
    st = np.zeros(nd_out, np.int64)
    for d in range(sh_in.shape[0]):
        if sh_in[d] != 1:
            st[lead + d] = st_in[d]
    return strided_index(sh_out, 0, st)


# ---- views, reshapes, indexing -----------------------------------------------------------
@njit(cache=True, error_model="numpy")
def reshape_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    for k in range(g.shape[0]):
        gx0[k] += g[k]


@njit(cache=True, error_model="numpy")
def is_contiguous_run(shape, strides):
    """Whether a view with these element strides covers one contiguous run of its input
    (a slice of rows, x[a:b] of a vector): then no index map is needed."""
    acc = 1
    for d in range(shape.shape[0] - 1, -1, -1):
        if shape[d] != 1 and strides[d] != acc:
            return False
        acc *= shape[d]
    return True


@njit(cache=True, error_model="numpy")
def view_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # iat = [offset, strides of y in x's C-order element space...]; as replay's view_fw
    nd = sh_y.shape[0]
    n = g.shape[0]
    if nd == 0 or n == 0:
        if n:
            gx0[iat[0]] += g[0]
        return
    inner = sh_y[nd - 1]
    step = iat[nd]
    coord = np.zeros(nd, np.int64)
    pos = iat[0]
    k = 0
    while k < n:
        grad = g[k:k + inner]  # views, so that the loops index from 0 and vectorize
        if step == 1:
            run = gx0[pos:pos + inner]
            for b in range(inner):
                run[b] += grad[b]
        else:
            for b in range(inner):
                gx0[pos + b * step] += grad[b]
        k += inner
        for d in range(nd - 2, -1, -1):
            coord[d] += 1
            pos += iat[1 + d]
            if coord[d] < sh_y[d]:
                break
            pos -= iat[1 + d] * sh_y[d]
            coord[d] = 0


@njit(cache=True, error_model="numpy")
def index_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # iat = flat index into x of every output element (gather, advanced indexing, max(dim))
    for k in range(g.shape[0]):
        gx0[iat[k]] += g[k]


@njit(cache=True, error_model="numpy")
def gather_flat_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # y = zeros with y.flat[iat[k]] += x.flat[k] (the adjoint of index_bw): gather back
    for k in range(gx0.shape[0]):
        gx0[k] += g[iat[k]]


@njit(cache=True, error_model="numpy")
def index_put_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1, iat, fat):
    # y = x0 with the positions iat[1 + nd:] overwritten by x1 broadcast to the region shape
    nd = iat[0]
    region = iat[1:1 + nd]
    pos = iat[1 + nd:]
    if need0:
        keep = np.ones(g.shape[0], np.bool_)
        for r in range(pos.shape[0]):
            keep[pos[r]] = False
        for k in range(g.shape[0]):
            if keep[k]:
                gx0[k] += g[k]
    if need1:
        j = bcast_index(sh1, region)
        for r in range(pos.shape[0]):
            gx1[j[r]] += g[pos[r]]


@njit(cache=True, error_model="numpy")
def repeat_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    nd = sh_y.shape[0]
    padded = np.ones(nd, np.int64)
    padded[nd - sh0.shape[0]:] = sh0
    st = c_strides(padded)
    n = g.shape[0]
    coord = np.zeros(nd, np.int64)
    for k in range(n):
        pos = 0
        for d in range(nd):
            pos += (coord[d] % padded[d]) * st[d]
        gx0[pos] += g[k]
        for d in range(nd - 1, -1, -1):
            coord[d] += 1
            if coord[d] < sh_y[d]:
                break
            coord[d] = 0


@njit(cache=True, error_model="numpy")
def cat_bw(g, gx, sh_y, sh_x, k, iat, fat):
    # iat = [dim, offset of input 0 along dim, offset of input 1, ...]
    dim = iat[0]
    ost = c_strides(sh_y)
    idx = strided_index(sh_x, iat[1 + k] * ost[dim], ost)
    for j in range(gx.shape[0]):
        gx[j] += g[idx[j]]


@njit(cache=True, error_model="numpy")
def stack_bw(g, gx, sh_y, sh_x, k, iat, fat):
    dim = iat[0]
    ost = c_strides(sh_y)
    st = np.empty(sh_x.shape[0], np.int64)
    for d in range(sh_x.shape[0]):
        st[d] = ost[d] if d < dim else ost[d + 1]
    idx = strided_index(sh_x, k * ost[dim], st)
    for j in range(gx.shape[0]):
        gx[j] += g[idx[j]]


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
def expand_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    j = bcast_index(sh0, sh_y)
    for k in range(g.shape[0]):
        gx0[j[k]] += g[k]


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


# ---- linear algebra: small products as loops, larger ones through gemm.product, the
# routine eager's products call too ----------------------------------------------------
@njit(cache=True, error_model="numpy")
def mm_small_bw(g, a, b, ga, gb, m, k, n, need_a, need_b, alpha):
    """ga += alpha * (g @ b.T) and gb += alpha * (a.T @ g), on flat C-order arrays: each
    product is summed first and then added, as the BLAS path's temporary is (alpha = 1.0
    multiplies exactly)."""
    if need_a:
        # four rows of b at once: four independent sums in flight instead of one chain of
        # dependent adds (2x on 1 x 32 x 32); each sum still runs over j in order
        for i in range(m):
            go = i * n
            p = 0
            while p + 4 <= k:
                acc0 = acc1 = acc2 = acc3 = 0.0
                for j in range(n):
                    gv = g[go + j]
                    acc0 += gv * b[p * n + j]
                    acc1 += gv * b[(p + 1) * n + j]
                    acc2 += gv * b[(p + 2) * n + j]
                    acc3 += gv * b[(p + 3) * n + j]
                ga[i * k + p] += alpha * acc0
                ga[i * k + p + 1] += alpha * acc1
                ga[i * k + p + 2] += alpha * acc2
                ga[i * k + p + 3] += alpha * acc3
                p += 4
            while p < k:
                acc = 0.0
                for j in range(n):
                    acc += g[go + j] * b[p * n + j]
                ga[i * k + p] += alpha * acc
                p += 1
    if need_b:
        if m == 1:  # an outer product: one term per element, a loop along rows of g
            for p in range(k):
                av = a[p]
                for j in range(n):
                    gb[p * n + j] += alpha * (av * g[j])
        else:
            for p in range(k):
                for j in range(n):
                    acc = 0.0
                    for i in range(m):
                        acc += a[i * k + p] * g[i * n + j]
                    gb[p * n + j] += alpha * acc


@njit(cache=True, error_model="numpy")
def mm_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1, iat, fat):
    m, k, n = sh0[0], sh0[1], sh1[1]
    if m * k * n <= SMALL_MM:
        mm_small_bw(g, x0, x1, gx0, gx1, m, k, n, need0, need1, 1.0)
        return
    g2 = g.reshape((m, n))
    if need0 and m * k > 0:
        product(gx0.reshape((m, k)), g2, x1.reshape((k, n)).T, 1.0, 1.0)
    if need1 and k * n > 0:
        product(gx1.reshape((k, n)), x0.reshape((m, k)).T, g2, 1.0, 1.0)


@njit(cache=True, error_model="numpy")
def mv_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1, iat, fat):
    m, n = sh0[0], sh0[1]
    a = x0.reshape((m, n))
    if need0:
        ga = gx0.reshape((m, n))
        for i in range(m):
            for q in range(n):
                ga[i, q] += g[i] * x1[q]
    if need1 and m * n > 0:
        product(gx1.reshape((n, 1)), a.T, g.reshape((m, 1)), 1.0, 1.0)


@njit(cache=True, error_model="numpy")
def dot_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1, iat, fat):
    for k in range(x0.shape[0]):
        if need0:
            gx0[k] += g[0] * x1[k]
        if need1:
            gx1[k] += g[0] * x0[k]


@njit(cache=True, error_model="numpy")
def bmm_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1, iat, fat):
    b, m, k, n = sh0[0], sh0[1], sh0[2], sh1[2]
    for i in range(b):
        gi = g[i * m * n:(i + 1) * m * n].reshape((m, n))
        if need0 and m * k > 0:
            product(gx0[i * m * k:(i + 1) * m * k].reshape((m, k)), gi,
                    x1[i * k * n:(i + 1) * k * n].reshape((k, n)).T, 1.0, 1.0)
        if need1 and k * n > 0:
            product(gx1[i * k * n:(i + 1) * k * n].reshape((k, n)),
                    x0[i * m * k:(i + 1) * m * k].reshape((m, k)).T, gi, 1.0, 1.0)


@njit(cache=True, error_model="numpy")
def addmm_bw(g, y, x0, x1, x2, gx0, gx1, gx2, sh_y, sh0, sh1, sh2, need0, need1, need2,
             iat, fat):
    # y = beta * x0 + alpha * (x1 @ x2); fat = [beta, alpha]
    beta, alpha = fat[0], fat[1]
    m, k, n = sh1[0], sh1[1], sh2[1]
    g2 = g.reshape((m, n))
    if need0:
        if gx0.shape[0] == g.shape[0]:  # same size, or a (n,) bias on one row: no index map
            for q in range(g.shape[0]):
                gx0[q] += beta * g[q]
        else:
            j = bcast_index(sh0, sh_y)
            for q in range(g.shape[0]):
                gx0[j[q]] += beta * g[q]
    if m * k * n <= SMALL_MM:
        mm_small_bw(g, x1, x2, gx1, gx2, m, k, n, need1, need2, alpha)
        return
    if need1 and m * k > 0:
        product(gx1.reshape((m, k)), g2, x2.reshape((k, n)).T, alpha, 1.0)
    if need2 and k * n > 0:
        product(gx2.reshape((k, n)), x1.reshape((m, k)).T, g2, alpha, 1.0)


kernelgen.kernel_module(__name__)  # (see kernelgen.KERNEL_MODULES)
