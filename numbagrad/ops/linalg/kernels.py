"""The linalg family's backward kernels of the products (small ones as loops, larger ones
through gemm.product), on flat views with the op table's signatures."""

from numba import njit

from ...engine import kernelgen
from ...engine.gemm import SMALL_MM, product
from ..kernel_helpers import bcast_index


# ---- linear algebra: small products as loops, larger ones through gemm.product, the
# routine eager's products call too ----------------------------------------------------
@njit(cache=True, error_model="numpy", fastmath={"reassoc"})
def _row_dots(g, b, ga, m, k, n, alpha):
    """ga += alpha * (g @ b.T): dot products along contiguous rows. ``reassoc`` lets LLVM
    sum each one in vector lanes: a fixed order for this machine's build, which eager and
    the replay share, as they share BLAS's order above SMALL_MM."""
    for i in range(m):
        go = i * n
        for p in range(k):
            bo = p * n
            acc = 0.0
            for j in range(n):
                acc += g[go + j] * b[bo + j]
            ga[i * k + p] += alpha * acc


@njit(cache=True, error_model="numpy")
def mm_small_bw(g, a, b, ga, gb, m, k, n, need_a, need_b, alpha):
    """ga += alpha * (g @ b.T) and gb += alpha * (a.T @ g), on flat C-order arrays: each
    product is summed first and then added, as the BLAS path's temporary is (alpha = 1.0
    multiplies exactly)."""
    if need_a:
        _row_dots(g, b, ga, m, k, n, alpha)
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
