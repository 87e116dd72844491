"""The linalg family's forward kernels of the products for compiled replay (through gemm's
routines, as eager)."""

import numpy as np
from numba import njit

from ...engine import kernelgen
from ...engine.gemm import SMALL_MM, batched_product, product, small_f32
from ..kernel_helpers import (
    bcast_index,
)


# ---- linear algebra ----------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def mm_fw(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    m, k, n = sh0[0], sh0[1], sh1[1]
    product(y.reshape((m, n)), x0.reshape((m, k)), x1.reshape((k, n)), 1.0, 0.0)


@njit(cache=True, error_model="numpy")
def mm_fw32(y, x0, x1, sh_y, sh0, sh1, iat, fat):
    # a float32 node on the arena: eager's float32 product, small ones without copies
    m, k, n = sh0[0], sh0[1], sh1[1]
    if m * k * n <= SMALL_MM:
        small_f32(y, x0, x1, m, k, n)
        return
    y32 = np.empty(m * n, np.float32)
    mm_fw(y32, x0.astype(np.float32), x1.astype(np.float32), sh_y, sh0, sh1, iat, fat)
    y[:] = y32


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


kernelgen.kernel_module(__name__)  # (see kernelgen.KERNEL_MODULES)
