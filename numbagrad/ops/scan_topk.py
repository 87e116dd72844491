"""topk's picks as torch's CPU kernel makes them, equal values included: it runs the C++
library's std::nth_element then std::sort (or std::partial_sort when k * 64 <= n) on
(value, index) pairs; these are GCC's libstdc++ algorithms, step for step (introselect,
introsort with a final insertion sort, heap select), on a copy of the values and their
indices. Recursion is an explicit stack (a recursive @njit function defeats Numba's cache)."""

import numpy as np
from numba import njit


@njit(cache=True)
def _comp(a, b, largest):
    # torch's comparators: NaN counts as the largest value
    if largest:
        return (a != a and b == b) or a > b
    return (a == a and b != b) or a < b


@njit(cache=True)
def _swap(v, ix, i, j):
    v[i], v[j] = v[j], v[i]
    ix[i], ix[j] = ix[j], ix[i]


@njit(cache=True)
def _linear_insert(v, ix, last, largest):
    val, at = v[last], ix[last]
    nxt = last - 1
    while _comp(val, v[nxt], largest):
        v[last], ix[last] = v[nxt], ix[nxt]
        last = nxt
        nxt -= 1
    v[last], ix[last] = val, at


@njit(cache=True)
def _insertion_sort(v, ix, f, last, largest):
    for i in range(f + 1, last):
        if _comp(v[i], v[f], largest):
            val, at = v[i], ix[i]
            for q in range(i, f, -1):
                v[q], ix[q] = v[q - 1], ix[q - 1]
            v[f], ix[f] = val, at
        else:
            _linear_insert(v, ix, i, largest)


@njit(cache=True)
def _partition_pivot(v, ix, f, last, largest):
    # the median of (f + 1, mid, last - 1) to f, then an unguarded partition around it
    x, y, z = f + 1, f + (last - f) // 2, last - 1
    if _comp(v[x], v[y], largest):
        s = y if _comp(v[y], v[z], largest) else (z if _comp(v[x], v[z], largest) else x)
    elif _comp(v[x], v[z], largest):
        s = x
    else:
        s = z if _comp(v[y], v[z], largest) else y
    _swap(v, ix, f, s)
    lo, hi = f + 1, last
    while True:
        while _comp(v[lo], v[f], largest):
            lo += 1
        hi -= 1
        while _comp(v[f], v[hi], largest):
            hi -= 1
        if not lo < hi:
            return lo
        _swap(v, ix, lo, hi)
        lo += 1


@njit(cache=True)
def _adjust_heap(v, ix, f, hole, n, val, at, largest):
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if _comp(v[f + child], v[f + child - 1], largest):
            child -= 1
        v[f + hole], ix[f + hole] = v[f + child], ix[f + child]
        hole = child
    if (n & 1) == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        v[f + hole], ix[f + hole] = v[f + child - 1], ix[f + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and _comp(v[f + parent], val, largest):
        v[f + hole], ix[f + hole] = v[f + parent], ix[f + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[f + hole], ix[f + hole] = val, at


@njit(cache=True)
def _pop_heap(v, ix, f, last, r, largest):
    val, at = v[r], ix[r]
    v[r], ix[r] = v[f], ix[f]
    _adjust_heap(v, ix, f, 0, last - f, val, at, largest)


@njit(cache=True)
def _heap_select(v, ix, f, m, last, largest):
    n = m - f
    if n >= 2:
        parent = (n - 2) // 2
        while True:
            _adjust_heap(v, ix, f, parent, n, v[f + parent], ix[f + parent], largest)
            if parent == 0:
                break
            parent -= 1
    for i in range(m, last):
        if _comp(v[i], v[f], largest):
            _pop_heap(v, ix, f, m, i, largest)


@njit(cache=True)
def _partial_sort(v, ix, f, m, last, largest):
    _heap_select(v, ix, f, m, last, largest)
    while m - f > 1:
        m -= 1
        _pop_heap(v, ix, f, m, m, largest)


@njit(cache=True, inline="always")
def _lg(n):
    r = -1
    while n:
        n >>= 1
        r += 1
    return r


@njit(cache=True)
def _nth_element(v, ix, nth, largest):
    f, last = 0, v.shape[0]
    if nth == last:
        return
    depth = _lg(last - f) * 2
    while last - f > 3:
        if depth == 0:
            _heap_select(v, ix, f, nth + 1, last, largest)
            _swap(v, ix, f, nth)
            return
        depth -= 1
        cut = _partition_pivot(v, ix, f, last, largest)
        if cut <= nth:
            f = cut
        else:
            last = cut
    _insertion_sort(v, ix, f, last, largest)


@njit(cache=True)
def _sort(v, ix, last, largest):
    """std::sort of [0, last)."""
    if last == 0:
        return
    stack = np.empty((2 * _lg(last) + 4, 3), np.int64)  # (first, last, depth) ranges to do
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, last, _lg(last) * 2
    top = 1
    while top:
        top -= 1
        f, hi, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        while hi - f > 16:
            if depth == 0:
                _partial_sort(v, ix, f, hi, hi, largest)
                break
            depth -= 1
            cut = _partition_pivot(v, ix, f, hi, largest)
            if top == stack.shape[0]:
                grown = np.empty((2 * top, 3), np.int64)
                grown[:top] = stack
                stack = grown
            stack[top, 0], stack[top, 1], stack[top, 2] = cut, hi, depth
            top += 1
            hi = cut
    if last > 16:
        _insertion_sort(v, ix, 0, 16, largest)
        for i in range(16, last):
            _linear_insert(v, ix, i, largest)
    else:
        _insertion_sort(v, ix, 0, last, largest)


@njit(cache=True)
def topk_line(line, k, largest, ordered, out):
    """out[:k] = the local positions of line's k largest (smallest) values, torch's order."""
    n = line.shape[0]
    v = line.copy()
    ix = np.arange(n)
    if k == 0:
        return
    if k * 64 <= n:
        _partial_sort(v, ix, 0, k, n, largest)
    else:
        _nth_element(v, ix, k - 1, largest)
        if ordered:
            _sort(v, ix, k - 1, largest)
    for i in range(k):
        out[i] = ix[i]


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
