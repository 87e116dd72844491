"""The shape family's backward kernels (views, reshapes, expand, repeat, cat, stack), on flat
views with the op table's signatures."""

import numpy as np
from numba import njit

from ...engine import kernelgen
from ..kernel_helpers import bcast_index, c_strides, strided_index


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
    pos = iat[0]
    if n == inner and step == 1:  # one run (a row x[t]): no odometer to allocate
        run = gx0[pos:pos + n]  # a view: the loop indexes from 0 and vectorizes
        for b in range(n):
            run[b] += g[b]
        return
    coord = np.zeros(nd, np.int64)
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


@njit(cache=True, error_model="numpy")
def expand_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    j = bcast_index(sh0, sh_y)
    for k in range(g.shape[0]):
        gx0[j[k]] += g[k]


kernelgen.kernel_module(__name__)  # (see kernelgen.KERNEL_MODULES)
