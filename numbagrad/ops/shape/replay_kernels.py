"""The shape family's forward kernels for compiled replay: fw(y, x0.., sh_y, sh0.., iat, fat)
on flat float64 views of the arena."""

import numpy as np
from numba import njit

from ...engine import kernelgen
from ..kernel_helpers import (
    bcast_index,
    c_strides,
    strided_index,
)


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
    pos = iat[0]
    if n == inner and step == 1:  # one run (a row x[t]): no odometer to allocate
        run = x0[pos:pos + n]  # a view: the loop indexes from 0 and vectorizes
        for b in range(n):
            y[b] = run[b]
        return
    coord = np.zeros(nd, np.int64)
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


kernelgen.kernel_module(__name__)  # (see kernelgen.KERNEL_MODULES)
