"""Eager matrix products: ``out = alpha * (a @ b) + beta * out`` through NumPy's own BLAS,
split over Numba's threads.

Why not ``np.matmul``: numbagrad sets the BLAS pools to one thread (see _blas.py: OpenBLAS's
spinning pool and Numba's OpenMP threads fight over the cores), so NumPy's products use
one core whatever ``numba.set_num_threads`` says. Here a product large enough to pay a fork
is cut into one block of rows (or columns) of ``out`` per Numba thread, and each thread
calls the single-threaded BLAS on its block: one pool (Numba's) does all the parallel work.
On the 2-core test machine that took a 64x784 @ 784x256 float32 product from 312 to 198 us.
``beta`` also lets a gradient accumulate inside the BLAS call (``target += a @ b`` with no
temporary and no second pass over ``target``).

The BLAS is NumPy's bundled OpenBLAS (its CBLAS ``?gemm``, 64-bit integers), found among
the process's loaded libraries; a build without it (another BLAS, another platform) makes
``available`` False and every product goes to ``np.matmul``, single-threaded as before.
"""

import ctypes

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

from .._blas import _openblas_libraries

# CBLAS enums
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
# Below this many multiply-adds a product goes to ``np.matmul`` (plus a NumPy add when it
# accumulates): splitting it would not pay for a Numba fork/join, and through this module
# it measured slower anyway (a 256x64 @ 64x10 accumulating product: 24 us, against 15).
# Above, a product that neither splits nor accumulates goes to ``np.matmul`` too: it does
# the same at a lower call cost.
SPLIT_MIN = 1 << 20
_NAMES = {np.dtype(np.float32): ("scipy_cblas_sgemm64_", "cblas_sgemm64_"),
          np.dtype(np.float64): ("scipy_cblas_dgemm64_", "cblas_dgemm64_")}


def _find():
    """{dtype: address of the CBLAS gemm of NumPy's OpenBLAS (ILP64)} for what is found."""
    found = {}
    for path in _openblas_libraries():
        if "numpy" not in path:
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for dt, names in _NAMES.items():
            for name in names:
                fn = getattr(lib, name, None)
                if fn is not None and dt not in found:
                    found[dt] = ctypes.cast(fn, ctypes.c_void_p).value
    return found


_ADDRESSES = _find()
available = len(_ADDRESSES) == 2


def _gemm_intrinsic(real):
    @intrinsic
    def call(typingctx, addr, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        """cblas_?gemm(RowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) at
        address ``addr``; the matrices are addresses (integers) too. An intrinsic rather
        than a ctypes object so the kernels that call it can be cached."""
        sig = types.void(addr, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)

        def codegen(context, builder, signature, args):
            i32, i64 = ir.IntType(32), ir.IntType(64)
            flt = ir.FloatType() if real == "s" else ir.DoubleType()
            ptr = ir.IntType(8).as_pointer()
            fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i64, i64, i64, flt, ptr, i64,
                                                   ptr, i64, flt, ptr, i64])
            (addr_, ta_, tb_, m_, n_, k_, alpha_, a_, lda_, b_, ldb_, beta_, c_, ldc_) = args
            fn = builder.inttoptr(addr_, fnty.as_pointer())

            def real_(v, ty):
                return builder.fptrunc(v, flt) if real == "s" and ty == types.float64 else v

            builder.call(fn, [
                ir.Constant(i32, _ROW_MAJOR), builder.trunc(ta_, i32), builder.trunc(tb_, i32),
                m_, n_, k_, real_(alpha_, signature.args[6]), builder.inttoptr(a_, ptr), lda_,
                builder.inttoptr(b_, ptr), ldb_, real_(beta_, signature.args[11]),
                builder.inttoptr(c_, ptr), ldc_])
            return context.get_dummy_value()
        return sig, codegen
    return call


_sgemm = _gemm_intrinsic("s")
_dgemm = _gemm_intrinsic("d")


@njit(cache=True, nogil=True)
def _call(addr, f64, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    if f64:
        _dgemm(addr, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    else:
        _sgemm(addr, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


# The matrices come in as arrays, not addresses: Numba unboxes an array in ~0.3 us where
# ``x.ctypes.data`` costs 1.5 us in Python. (One compiled specialization per layout.)
@njit(cache=True, nogil=True)
def _block(addr, f64, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    _call(addr, f64, ta, tb, m, n, k, alpha, a.ctypes.data, lda, b.ctypes.data, ldb, beta,
          c.ctypes.data, ldc)


@njit(cache=True, nogil=True, parallel=True)
def _split(addr, f64, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, by_rows, parts):
    """c's rows (by_rows) or columns in ``parts`` blocks, one per Numba thread. Row i of
    op(a) starts i*lda items into a untransposed, i items transposed; column j of op(b) j
    items into b untransposed, j*ldb transposed. (``parts`` is an argument: calling
    numba.get_num_threads() in here would embed a function pointer in the code, and such
    code cannot be cached.)"""
    size = c.itemsize
    pa, pb, pc = a.ctypes.data, b.ctypes.data, c.ctypes.data
    for p in prange(parts):
        if by_rows:
            i0, i1 = p * m // parts, (p + 1) * m // parts
            if i1 > i0:
                off = i0 * lda if ta == _NO_TRANS else i0
                _call(addr, f64, ta, tb, i1 - i0, n, k, alpha, pa + off * size, lda, pb, ldb,
                      beta, pc + i0 * ldc * size, ldc)
        else:
            j0, j1 = p * n // parts, (p + 1) * n // parts
            if j1 > j0:
                off = j0 if tb == _NO_TRANS else j0 * ldb
                _call(addr, f64, ta, tb, m, j1 - j0, k, alpha, pa, lda, pb + off * size, ldb,
                      beta, pc + j0 * size, ldc)


def _operand(x):
    """(transpose flag, leading dimension) of a 2-d operand BLAS can read in place, or None."""
    if x.flags.c_contiguous:
        return _NO_TRANS, max(x.shape[1], 1)
    if x.flags.f_contiguous:
        return _TRANS, max(x.shape[0], 1)
    size = x.itemsize
    s0, s1 = x.strides
    if s1 == size and s0 % size == 0 and s0 >= x.shape[1] * size:
        return _NO_TRANS, s0 // size
    if s0 == size and s1 % size == 0 and s1 >= x.shape[0] * size:
        return _TRANS, s1 // size
    return None


def _large(a, b):
    return a.shape[0] * a.shape[1] * b.shape[1] >= SPLIT_MIN


def splits(a, b, parts=None):
    """Whether ``a @ b`` is large enough, and the blocks (default: Numba's threads) many
    enough, to be split."""
    return _large(a, b) and (numba.get_num_threads() if parts is None else parts) > 1


def gemm(out, a, b, alpha=1.0, beta=0.0, parts=None):
    """``out = alpha * (a @ b) + beta * out`` for 2-d arrays of one float dtype, ``out``
    C-contiguous; with beta = 0 ``out``'s content is never read (it may be uninitialised).
    ``parts`` (default: Numba's thread count) blocks when the product is large enough to
    split. Returns False (and does nothing) when this path does not apply or gains nothing
    over ``np.matmul`` (beta = 0 and no split)."""
    if not available or a.ndim != 2 or b.ndim != 2:
        return False
    if parts is None:
        parts = numba.get_num_threads()
    split = splits(a, b, parts)
    if beta == 0 and not split:
        return False  # np.matmul does the same at a lower call cost
    dt = out.dtype
    if a.dtype != dt or b.dtype != dt or dt not in _ADDRESSES or \
            not out.flags.c_contiguous or out.ndim != 2:
        return False
    m, n = out.shape
    k = a.shape[1]
    if m == 0 or n == 0 or k == 0:
        return False
    opa, opb = _operand(a), _operand(b)
    if opa is None or opb is None:
        return False
    ta, lda = opa
    tb, ldb = opb
    args = (_ADDRESSES[dt], dt.itemsize == 8, ta, tb, m, n, k, float(alpha), a, lda, b, ldb,
            float(beta), out, n)
    if split:
        _split(*args, m >= n, parts)
    else:
        _block(*args)
    return True


def matmul(a, b):
    """``a @ b`` of two 2-d arrays (a new C-ordered array), split over Numba's threads when
    large; NumPy's matmul for what this module does not handle."""
    if a.ndim == 2 and b.ndim == 2 and splits(a, b):
        out = np.empty((a.shape[0], b.shape[1]), a.dtype)
        if gemm(out, a, b):
            return out
    return np.matmul(a, b)


def add_product(target, a, b, alpha=1.0, overwrite=False):
    """``target += alpha * (a @ b)`` (``target = ...`` with ``overwrite``) in place, the
    product accumulated by the BLAS call itself when this module applies."""
    if overwrite:
        if gemm(target, a, b, alpha):  # taken only when split
            return
        np.matmul(a, b, out=target)
        if alpha != 1.0:
            target *= target.dtype.type(alpha)
        return
    if _large(a, b) and gemm(target, a, b, alpha, 1.0):
        return
    p = a @ b
    if alpha != 1.0:
        p *= p.dtype.type(alpha)
    target += p


def warmup():
    """Compile (or load from cache) the layouts a Linear layer's forward and backward use
    (x @ W.T, g @ W, g.T @ x), float32 and float64, on one thread and split in two."""
    if not available:
        return
    for dt in (np.float32, np.float64):
        a = np.ones((128, 128), dt)
        for left, right in ((a, a.T), (a, a), (a.T, a)):
            out = np.zeros((128, 128), dt)
            for parts in (1, 2):
                gemm(out, left, right, 1.0, 1.0, parts)
