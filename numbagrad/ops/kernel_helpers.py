"""What the families' kernels share: index maps between a tensor and a view of it, computed
once per call rather than per element (``bcast_index``, ``strided_index``), which keeps every
kernel a plain loop that LLVM can vectorize; and sums in NumPy's order (pairwise within a
contiguous group, sequential across rows), so that a float64 replay equals the eager value
bit for bit there. Registered with the kernel generator: generated kernels call them too.

The families' kernels are beside their records: ``ops/<family>/kernels.py`` (backward, on flat
views, accumulating ``+=`` into the gradient views they are given: the sweep owns the adjoint
arena and several consumers may add into one input) and ``ops/<family>/replay_kernels.py``
(forward for compiled replay, ``fw(y, x0.., sh_y, sh0.., iat, fat)`` on flat float64 views;
variadic ops ``fw(y, x, sh_y, sh_x, k, iat, fat)`` once per input ``k``; ``iat``/``fat`` are
what the eager op recorded for its derivative).
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..engine import kernelgen


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
def is_row(sh_in, sh_out):
    """Whether an operand of shape ``sh_in`` repeats whole along ``sh_out``'s leading dims
    (a bias row): its dims, leading 1s dropped, are ``sh_out``'s last ones, so output
    element k reads its element k % numel(sh_in)."""
    nd_in, nd_out = sh_in.shape[0], sh_out.shape[0]
    s = 0
    while s < nd_in and sh_in[s] == 1:
        s += 1
    if nd_in - s > nd_out:
        return False
    for d in range(s, nd_in):
        if sh_in[d] != sh_out[nd_out - nd_in + d]:
            return False
    return True


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
        if run <= 128:  # pairwise_sum's one leaf, without its stack's allocations per group
            for q in range(m):
                out[q] = _block_sum(x, q * run, run)
            return
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


kernelgen.kernel_module(__name__)  # (see kernelgen.KERNEL_MODULES)
