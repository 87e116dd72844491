"""The index family's backward kernels (gather by a flat index map, index_put), on flat views
with the op table's signatures."""

import numpy as np
from numba import njit

from ...engine import kernelgen
from ..kernel_helpers import bcast_index


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


kernelgen.kernel_module(__name__)  # (see kernelgen.KERNEL_MODULES)
