"""The index family's forward kernels for compiled replay: fw(y, x0.., sh_y, sh0.., iat, fat)
on flat float64 views of the arena."""

from numba import njit

from ...engine import kernelgen
from ..kernel_helpers import (
    bcast_index,
)


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


kernelgen.kernel_module(__name__)  # (see kernelgen.KERNEL_MODULES)
