"""NumPy's pairwise summation split into leaves and a combining tree, for fused reductions.

``np.sum`` of n contiguous float64 values (umath's ``pairwise_sum``) halves the range,
rounding each left half down to a multiple of 8, until a piece holds at most 128 values; each
piece (a *leaf*) is summed with eight accumulators (``ops/kernel_helpers._block_sum``), and the
pieces are added back up the tree, left + right. A fused kernel can produce the leaves' sums
while it computes the values, chunk by chunk and on several threads, without ever writing
the values to memory; ``pairwise_combine`` then adds them in NumPy's order, so the total is
NumPy's to the last bit.
"""

import numpy as np
from numba import njit

LEAF = 128  # umath's PW_BLOCKSIZE


def pairwise_leaves(n):
    """The leaves of the split of ``n`` values, left to right, as boundaries (``len + 1``
    int64: leaf q covers ``bounds[q]:bounds[q + 1]``), and the tree in post-order: leaf q
    as ``q``, an addition of the two values on top of the stack as -1."""
    if n <= LEAF:
        return np.array([0, n], np.int64), np.zeros(1, np.int64)
    bounds, post = [0], []

    def split(lo, m):  # depth <= log2(n / 64): recursion is fine here (plan time only)
        if m <= LEAF:
            bounds.append(lo + m)
            post.append(len(bounds) - 2)
            return
        half = m // 2
        half -= half % 8
        split(lo, half)
        split(lo + half, m - half)
        post.append(-1)

    split(0, n)
    return np.array(bounds, np.int64), np.array(post, np.int64)


@njit(cache=True, nogil=True, error_model="numpy")
def pairwise_combine(sums, post):
    """The leaves' ``sums`` added up ``post``'s tree (see ``pairwise_leaves``), in their
    dtype (float32 sums add in float32, as NumPy's do)."""
    stack = np.empty(128, sums.dtype)
    top = 0
    for c in post:
        if c >= 0:
            stack[top] = sums[c]
            top += 1
        else:
            stack[top - 2] = stack[top - 2] + stack[top - 1]
            top -= 1
    return stack[0]
