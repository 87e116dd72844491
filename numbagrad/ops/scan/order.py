"""Stable orders of one line, NaN counted as larger than every number (torch's order for
sort and topk): the merge sort that sort, median and mode use, and topk's picks.

topk(k) returns the first k elements of the line's stable sort (descending for the k
largest), in that order: among equal values the lower index comes first, as NumPy's
``argsort(kind="stable")`` orders them. torch leaves that choice unspecified (the indices of
tied elements may vary), so on ties the indices can differ from torch's while the values
agree. ``sorted=False`` returns the same k in their order along the line (torch leaves
that order open too). The picks take expected linear time: np.partition finds the k-th
value, then one pass keeps the values before it and the first of its equals (on a long
line, a buffer of candidates that a running k-th value filters); for ``sorted=True`` the
merge sort orders those k."""

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def before(a, b, descending):
    """Whether a sorts strictly before b (NaN as the largest value)."""
    if descending:
        return (a > b) or (a != a and b == b)
    return (a < b) or (b != b and a == a)


@njit(cache=True)
def stable_order(v, descending):
    """The stable order of v (NumPy's stable argsort, and its mirror for descending): runs
    of 8 by insertion, then a bottom-up merge of (value, index) pairs; a much smaller
    compile than Numba's np.argsort."""
    n = v.shape[0]
    key, idx = v.copy(), np.arange(n)
    for lo in range(0, n, 8):
        for i in range(lo + 1, min(lo + 8, n)):
            x, at, j = key[i], idx[i], i
            while j > lo and before(x, key[j - 1], descending):  # equal ones stay ahead
                key[j], idx[j] = key[j - 1], idx[j - 1]
                j -= 1
            key[j], idx[j] = x, at
    key2, idx2 = np.empty_like(key), np.empty_like(idx)
    width = 8
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):
                # the right run's value goes first only when strictly before: stable
                if j < hi and (i == mid or before(key[j], key[i], descending)):
                    key2[k], idx2[k] = key[j], idx[j]
                    j += 1
                else:
                    key2[k], idx2[k] = key[i], idx[i]
                    i += 1
        key, key2, idx, idx2 = key2, key, idx2, idx
        width *= 2
    return idx


@njit(cache=True)
def _first_k(v, k, largest):
    """The positions, in index order, of the first k values of v's order, and the k-th
    value: np.partition finds it, one pass keeps the values before it and the first of
    its equals."""
    n = v.shape[0]
    at = n - k if largest else k - 1
    kth = np.partition(v, at)[at]  # ascending, NaN last: the k-th value of the order
    equals = k  # how many values equal to kth to keep: k minus those strictly before it
    for i in range(n):
        if before(v[i], kth, largest):
            equals -= 1
    picked = np.empty(k, np.int64)
    m = 0
    for i in range(n):
        if before(v[i], kth, largest):
            picked[m] = i
            m += 1
        elif equals > 0 and not before(kth, v[i], largest):  # equal (NaN to NaN too)
            picked[m] = i
            m += 1
            equals -= 1
    return picked, kth


@njit(cache=True)
def _picks(v, k, largest):
    """_first_k's positions for a long line and a small k without partitioning all of it:
    candidates gather in a buffer; when it is full, its first k stay and their k-th value
    becomes the bar a later value must beat strictly (an equal one comes later: it loses)."""
    n = v.shape[0]
    cap = max(2 * k, 1024)
    if cap >= n:
        return _first_k(v, k, largest)[0]
    buf = np.empty(cap, np.int64)
    m, bar, barred = 0, v[0], False
    for i in range(n):
        if barred and not before(v[i], bar, largest):
            continue
        buf[m] = i
        m += 1
        if m == cap:
            keep, bar = _first_k(v[buf], k, largest)
            buf[:k] = buf[keep]
            m, barred = k, True
    keep, _ = _first_k(v[buf[:m]], k, largest)
    return buf[keep]


@njit(cache=True)
def topk_line(v, k, largest, ordered, out):
    """out[:k] = the positions in v of the first k values of its stable order, descending
    when ``largest``: in that order if ``ordered``, else in index order."""
    if k == 0:
        return
    picked = _picks(v, k, largest)
    if not ordered:
        out[:k] = picked
        return
    order = stable_order(v[picked], largest)  # picked is in index order: ties stay so
    for i in range(k):
        out[i] = picked[order[i]]


@njit(cache=True)
def topk_positions(x0, sh0, d, k, largest, ordered):
    """Flat input positions of topk's outputs (C order of the output, k along d)."""
    outer, n, inner = 1, 1, 1
    for q in range(sh0.shape[0]):
        if q < d:
            outer *= sh0[q]
        elif q > d:
            inner *= sh0[q]
        else:
            n = sh0[q]
    pos = np.empty(outer * k * inner, np.int64)
    v = np.empty(n, x0.dtype)
    local = np.empty(max(k, 1), np.int64)
    for o in range(outer):
        for j in range(inner):
            for i in range(n):
                v[i] = x0[(o * n + i) * inner + j]
            topk_line(v, k, largest, ordered, local)
            for i in range(k):
                pos[(o * k + i) * inner + j] = (o * n + local[i]) * inner + j
    return pos
