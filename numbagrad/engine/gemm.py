"""Matrix products: one routine, ``product(y, a, b, alpha, beta)``, that eager ops and the
compiled replay's kernels both call, so that a product gives the same bits on both sides.

``y = alpha * (a @ b) + beta * y`` (``beta = 0`` never reads ``y``), 2-d arrays of one
float dtype, computed in that dtype:

* up to ``SMALL_MM`` multiply-adds as plain loops (on the 1 x 32 x 32 products of a small
  RNN a BLAS call costs more overhead than the loop's whole arithmetic);
* a matrix times a vector (``y`` with one row or one column) through its ``?gemv``:
  OpenBLAS's gemm packs the whole matrix first, 5x slower for a 400k x 32 ``X.T @ g``.
  gemv sums a transposed matrix in another order than a contiguous one, so these products'
  last bits depend on the operand's layout (``layout_sensitive``);
* above, OpenBLAS's CBLAS ``?gemm``: numbagrad's own copy, the scipy-openblas64 package
  (a dependency), whose pool is kept at one thread, so a product's bits depend on neither
  the user's BLAS settings nor the calling thread; NumPy's bundled OpenBLAS where that
  package is missing. The newer copy matters for speed too: NumPy 2.x's OpenBLAS 0.3.31
  packs a transposed right operand (``x @ W.T``, every Linear layer's forward) far slower
  (bench/RESULTS.md). The kernels reach it through a symbol registered with LLVM
  (``llvmlite.binding.add_symbol``) rather than an address baked into the code, so the
  kernels that call it can be cached; a process with neither library gets a plain-loop
  stand-in under the same symbol (slow, but the same everywhere);
* from ``SPLIT_MIN`` multiply-adds, cut into up to ``SPLIT_PARTS`` blocks of rows (or
  columns) of ``y``, one BLAS call each, the same blocks at every thread count. Eager runs
  them on Numba's threads (``product_into``); ``product`` (eager on one thread, the
  replay) runs them one after the other, or a float32 matrix product as one call (~10% of
  a large product saved) where OpenBLAS runs its SkylakeX kernels (``SGEMM_WHOLE``):
  blocks of at least ``BLOCK_MIN`` multiply-adds take sgemm's path of the whole product
  (its small-matrix kernels, which sum in another order, stop at 10^6), so the bits are
  the same (tests/test_gemm.py checks random shapes). Its Haswell and Zen kernels (AVX2),
  dgemm's edge kernels and gemv sum some elements in another order when split: those keep
  their blocks. OpenBLAS's own threading would change the bits too, which is why numbagrad's
  copy runs on one thread (NumPy's, the fallback, is held at one thread from
  ``BLAS_THREADS_MIN`` multiply-adds: eager here, the replay and the backward around their
  whole call: numbagrad/_blas.py).

Why not ``np.matmul``: it picks gemm, gemv, dot or its own loops by shape, and the replay
would have to copy that choice; one routine is the same by construction. ``beta`` also lets
a gradient accumulate inside the BLAS call (``target += a @ b``, no temporary).

OpenBLAS gives the same bits whether an operand comes transposed or as a C-ordered copy
(tests/test_gemm.py checks it), so eager hands over views (``W.T``) as they are.
"""

import ctypes
import importlib.util
import os

import llvmlite.binding as llb
import numpy as np
from llvmlite import ir
from numba import cfunc, njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from .. import _blas
from .._threads import fit_threads, num_threads
from ..core import safe_cache

# CBLAS enums
_F16 = np.dtype(np.float16)
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
# Products of at most this many multiply-adds (m * k * n) run as loops; measured on this
# machine kind (2 slow cores): loops win up to ~8k multiply-adds, BLAS from ~16k.
SMALL_MM = 8192
# From this many multiply-adds a product is cut into (at most) SPLIT_PARTS blocks when
# Numba has threads to run them on: 64x784 @ 784x256 float32 runs in 54% of its time on
# two, while 4 blocks on one thread cost 10-12% over one call (bench/RESULTS.md).
SPLIT_MIN = 1 << 20
# (no more blocks than the machine has cores: each block packs the other operand again, so
# fewer blocks run faster on one thread; a machine constant, so the bits still do not
# depend on the thread count)
SPLIT_PARTS = max(1, min(4, os.cpu_count() or 4))
# A matrix product's blocks are at least this many multiply-adds: above OpenBLAS's
# small-matrix kernels (10^6), so a block takes the whole product's path and bits.
BLOCK_MIN = 1 << 20
# From this many multiply-adds a product runs with the BLAS pool held at one thread. OpenBLAS
# may thread a call from 2^19 (its 4 x 65536 per thread), but measured here no call below
# 2^20 changed a bit between one and two threads (1,000 shapes of 2^17-2^22 multiply-adds
# through `product`), while holding costs 3-6 us, half a 2^19 product's time.
BLAS_THREADS_MIN = SPLIT_MIN
_SYMBOLS = {"s": "numbagrad_cblas_sgemm", "d": "numbagrad_cblas_dgemm",
            "sv": "numbagrad_cblas_sgemv", "dv": "numbagrad_cblas_dgemv"}
_CBLAS_NAMES = {"s": ("scipy_cblas_sgemm64_", "cblas_sgemm64_"),
                "d": ("scipy_cblas_dgemm64_", "cblas_dgemm64_"),
                "sv": ("scipy_cblas_sgemv64_", "cblas_sgemv64_"),
                "dv": ("scipy_cblas_dgemv64_", "cblas_dgemv64_")}


def _stand_in(real):
    """A plain-loop cblas_?gemm (row major) for a process without NumPy's OpenBLAS."""
    flt = types.float32 if real == "s" else types.float64
    ptr = types.CPointer(flt)
    sig = types.void(types.int32, types.int32, types.int32, types.int64, types.int64,
                     types.int64, flt, ptr, types.int64, ptr, types.int64, flt, ptr,
                     types.int64)

    @cfunc(sig, cache=True)
    def gemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        for i in range(m):
            for j in range(n):
                acc = flt(0.0)
                for p in range(k):
                    av = a[i * lda + p] if ta == _NO_TRANS else a[p * lda + i]
                    bv = b[p * ldb + j] if tb == _NO_TRANS else b[j * ldb + p]
                    acc += av * bv
                c[i * ldc + j] = alpha * acc + (beta * c[i * ldc + j] if beta != 0 else 0)
    return gemm


def _stand_in_gemv(real):
    """A plain-loop cblas_?gemv (row major) for a process without NumPy's OpenBLAS."""
    flt = types.float32 if real == "sv" else types.float64
    ptr = types.CPointer(flt)
    sig = types.void(types.int32, types.int32, types.int64, types.int64, flt, ptr,
                     types.int64, ptr, types.int64, flt, ptr, types.int64)

    @cfunc(sig, cache=True)
    def gemv(order, ta, m, n, alpha, a, lda, x, incx, beta, y, incy):
        rows, cols = (m, n) if ta == _NO_TRANS else (n, m)
        for i in range(rows):
            acc = flt(0.0)
            for p in range(cols):
                av = a[i * lda + p] if ta == _NO_TRANS else a[p * lda + i]
                acc += av * x[p * incx]
            y[i * incy] = alpha * acc + (beta * y[i * incy] if beta != 0 else 0)
    return gemv


def _own_library_path():
    """The scipy-openblas64 package's library file, found without importing the package:
    its import loads the library into the global namespace (RTLD_GLOBAL), where its
    unprefixed LAPACK helpers (``droundup_lwork_``, 64-bit integers) would take the place
    of SciPy's own and break SciPy's LAPACK. None if the package is not installed."""
    spec = importlib.util.find_spec("scipy_openblas64")
    if spec is None or not spec.submodule_search_locations:
        return None
    lib_dir = os.path.join(spec.submodule_search_locations[0], "lib")
    try:
        names = sorted(f for f in os.listdir(lib_dir) if f.startswith("libscipy_openblas")
                       and f.endswith((".so", ".dylib", ".dll")))
    except OSError:
        return None
    return os.path.join(lib_dir, names[0]) if names else None


def _blas_library():
    """(ctypes library, its path, whether it is numbagrad's own copy) of the OpenBLAS the
    products call: the scipy-openblas64 package's (loaded privately, RTLD_LOCAL), its pool
    set to one thread, else NumPy's (reached through NumPy's extension module that links
    it: a symbol lookup searches a library's dependencies too); (None, None, False) if
    neither loads."""
    path = _own_library_path()
    if path is not None:
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_LOCAL", 0))
            lib.scipy_openblas_set_num_threads64_(1)
            return lib, path, True
        except (OSError, AttributeError):
            pass
    core = getattr(np, "_core", None) or np.core
    try:
        return ctypes.CDLL(core._multiarray_umath.__file__), None, False
    except OSError:
        return None, None, False


def _register():
    """Point the symbols at OpenBLAS's gemm and gemv, or at the stand-ins; returns the name
    the library's sgemm was found under (None: the stand-ins) and whether the library is
    numbagrad's own copy."""
    found, names = {}, {}
    lib, path, own = _blas_library()
    for real, candidates in _CBLAS_NAMES.items():
        for name in candidates:
            fn = getattr(lib, name, None) if lib is not None else None
            if fn is not None and real not in found:
                found[real] = ctypes.cast(fn, ctypes.c_void_p).value
                names[real] = name
    if len(found) != 4:
        found = {real: (_stand_in(real) if len(real) == 1 else _stand_in_gemv(real)).address
                 for real in _SYMBOLS}
        names, own = {}, False
    for real, addr in found.items():
        llb.add_symbol(_SYMBOLS[real], addr)
    if own:
        _blas.keep_private(path)
    return names.get("s"), own, _core_name(lib) if names else None


def _core_name(lib):
    """The kernel family OpenBLAS picked for this CPU ("skylakex", "haswell", "zen"...), or
    None where the library does not say."""
    fn = getattr(lib, "scipy_openblas_get_corename64_", None)
    if fn is None:
        return None
    fn.restype = ctypes.c_char_p
    name = fn()
    return name.decode(errors="replace").strip().lower() if name else None


_sgemm_name, own_blas, core_name = _register()
available = _sgemm_name is not None
# OpenBLAS's kernel families whose sgemm gives a product's blocks (each of BLOCK_MIN
# multiply-adds or more) the bits of the whole product (tests/test_gemm.py): there a float32
# product on one thread is one call. Others (Haswell's, Zen's: AVX2 machines, or the
# OPENBLAS_CORETYPE variable) sum some elements of a block in another order, so their
# products keep the blocks, as float64's do, and the bits stay those of any thread count.
SGEMM_WHOLE = core_name in ("skylakex",)
safe_cache.KEY_PARTS["sgemm_whole"] = SGEMM_WHOLE
safe_cache.KEY_PARTS["split_parts"] = SPLIT_PARTS
# the products run on a BLAS whose pool is the user's (NumPy's), not numbagrad's own copy
on_user_blas = available and not own_blas
# eager's products hold at one thread the pool of NumPy's BLAS when they call it; numbagrad's
# own copy is always on one thread
_ONE_THREAD = _blas.OneThread(symbol=_sgemm_name) if on_user_blas else \
    _blas.one_thread(False)


def _cblas_call(symbol, single, kinds):
    """The codegen of an intrinsic calling CBLAS routine ``symbol`` with RowMajor, then its
    arguments, of the kinds ``kinds`` names: e an enum (int32), i an integer, f a scalar of
    the routine's float type (``single``: float32), p an array's address (an integer)."""
    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        flt = ir.FloatType() if single else ir.DoubleType()
        ptr = ir.IntType(8).as_pointer()
        irtype = {"e": i32, "i": ir.IntType(64), "f": flt, "p": ptr}
        fnty = ir.FunctionType(ir.VoidType(), [i32] + [irtype[k] for k in kinds])
        fn = cgutils.get_or_insert_function(builder.module, fnty, symbol)
        values = [ir.Constant(i32, _ROW_MAJOR)]
        for kind, value, ty in zip(kinds, args, signature.args):
            if kind == "e":
                value = builder.trunc(value, i32)
            elif kind == "p":
                value = builder.inttoptr(value, ptr)
            elif kind == "f" and single and ty == types.float64:
                value = builder.fptrunc(value, flt)
            values.append(value)
        builder.call(fn, values)
        return context.get_dummy_value()
    return codegen


def _gemm_intrinsic(real):
    @intrinsic
    def call(typingctx, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        """cblas_?gemm(RowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), the
        matrices given as addresses (integers)."""
        sig = types.void(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        return sig, _cblas_call(_SYMBOLS[real], real == "s", "eeiiifpipifpi")
    return call


_sgemm = _gemm_intrinsic("s")
_dgemm = _gemm_intrinsic("d")


def _gemv_intrinsic(real):
    @intrinsic
    def call(typingctx, ta, m, n, alpha, a, lda, x, incx, beta, y, incy):
        """cblas_?gemv(RowMajor, ta, m, n, alpha, a, lda, x, incx, beta, y, incy), the
        arrays given as addresses (integers)."""
        sig = types.void(ta, m, n, alpha, a, lda, x, incx, beta, y, incy)
        return sig, _cblas_call(_SYMBOLS[real], real == "sv", "eiifpipifpi")
    return call


_sgemv = _gemv_intrinsic("sv")
_dgemv = _gemv_intrinsic("dv")


@njit(cache=True, nogil=True)
def _operand(x):
    """(transpose flag, leading dimension) of a 2-d operand BLAS can read in place, or
    (0, 0) when it cannot (negative, zero or unaligned strides: the caller copies)."""
    r, c = x.shape
    size = x.itemsize
    s0, s1 = x.strides
    if (c <= 1 or s1 == size) and (r <= 1 or (s0 > 0 and s0 % size == 0 and
                                              s0 // size >= c)):
        return _NO_TRANS, max(s0 // size if r > 1 else c, c, 1)
    if (r <= 1 or s0 == size) and (c <= 1 or (s1 > 0 and s1 % size == 0 and
                                              s1 // size >= r)):
        return _TRANS, max(s1 // size if c > 1 else r, r, 1)
    return 0, 0


@njit(cache=True, nogil=True)
def _blas_block(y, a, b, alpha, beta, ta, lda, tb, ldb, p, parts):
    """Block ``p`` of ``parts`` of the BLAS product: rows of y when it has at least as many
    rows as columns, else columns. Row i of op(a) starts i*lda items into a untransposed,
    i items transposed; column j of op(b) j items into b untransposed, j*ldb transposed."""
    m, n = y.shape
    k = a.shape[1]
    size = y.itemsize
    # as signed integers: Numba adds a uintp and an int64 as floats
    pa, pb, pc = np.int64(a.ctypes.data), np.int64(b.ctypes.data), np.int64(y.ctypes.data)
    if m >= n:
        i0, i1 = p * m // parts, (p + 1) * m // parts
        pa += (i0 * lda if ta == _NO_TRANS else i0) * size
        pc += i0 * n * size
        m = i1 - i0
    else:
        j0, j1 = p * n // parts, (p + 1) * n // parts
        pb += (j0 if tb == _NO_TRANS else j0 * ldb) * size
        pc += j0 * size
        n = j1 - j0
    if m <= 0 or n <= 0:
        return
    if n == 1:  # a matrix times a vector: gemv (OpenBLAS's gemm packs the whole matrix)
        inc_b = ldb if tb == _NO_TRANS else 1
        if ta == _NO_TRANS:
            _gemv(size, _NO_TRANS, m, k, alpha, pa, lda, pb, inc_b, beta, pc, y.shape[1])
        else:
            _gemv(size, _TRANS, k, m, alpha, pa, lda, pb, inc_b, beta, pc, y.shape[1])
    elif m == 1:  # a vector times a matrix: y.T = op(b).T @ a.T
        inc_a = 1 if ta == _NO_TRANS else lda
        if tb == _NO_TRANS:
            _gemv(size, _TRANS, k, n, alpha, pb, ldb, pa, inc_a, beta, pc, 1)
        else:
            _gemv(size, _NO_TRANS, n, k, alpha, pb, ldb, pa, inc_a, beta, pc, 1)
    elif size == 8:
        _dgemm(ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, y.shape[1])
    else:
        _sgemm(ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, y.shape[1])


@njit(cache=True, nogil=True, inline="always")
def _gemv(size, ta, m, n, alpha, a, lda, x, incx, beta, y, incy):
    if size == 8:
        _dgemv(ta, m, n, alpha, a, lda, x, incx, beta, y, incy)
    else:
        _sgemv(ta, m, n, alpha, a, lda, x, incx, beta, y, incy)


@njit(cache=True, nogil=True)
def _small(y, a, b, alpha, beta):
    """The loops: row by row, each row of b scaled and added into an accumulator of y's
    dtype (the inner loop runs along contiguous rows and vectorizes)."""
    m, k = a.shape
    n = b.shape[1]
    acc = np.empty(n, y.dtype)
    for i in range(m):
        acc[:] = 0.0
        for p in range(k):
            av = a[i, p]
            for j in range(n):
                acc[j] += av * b[p, j]
        for j in range(n):
            v = acc[j] if alpha == 1.0 else alpha * acc[j]
            if beta == 0.0:
                y[i, j] = v
            elif beta == 1.0:
                y[i, j] = y[i, j] + v
            else:
                y[i, j] = beta * y[i, j] + v


@njit(cache=True, nogil=True)
def small_f32(y, a, b, m, k, n):
    """y = a @ b for float32 operands held in float64 arrays (the replay's arena; flat, C
    order, a m x k, b k x n), as ``_small`` computes it on float32 arrays: each product and
    sum in float32, so the same bits, without float32 copies of the operands. Flat indexing:
    2-d views of the arena's slices index through strides and do not vectorize."""
    acc = np.empty(n, np.float32)
    for i in range(m):
        acc[:] = 0.0
        for p in range(k):
            av = np.float32(a[i * k + p])
            bo = p * n
            for j in range(n):
                acc[j] += av * np.float32(b[bo + j])
        for j in range(n):
            y[i * n + j] = acc[j]


@njit(cache=True, nogil=True)
def _prepare(y, a, b, alpha, beta):
    """The cases with no BLAS call (empty, small) done; else the BLAS operands:
    (done, a, b, ta, lda, tb, ldb, parts), a and b copied when BLAS cannot read them."""
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0:
        return True, a, b, 0, 0, 0, 0, 0
    if k == 0 or m * k * n <= SMALL_MM:
        _small(y, a, b, alpha, beta)
        return True, a, b, 0, 0, 0, 0, 0
    ta, lda = _operand(a)
    if ta == 0:
        a = np.ascontiguousarray(a)
        ta, lda = _NO_TRANS, max(k, 1)
    tb, ldb = _operand(b)
    if tb == 0:
        b = np.ascontiguousarray(b)
        tb, ldb = _NO_TRANS, max(n, 1)
    work = m * k * n
    parts = SPLIT_PARTS if work >= SPLIT_MIN else 1
    if m > 1 and n > 1:  # a matrix product: no block under BLOCK_MIN (see there)
        along = max(m, n)  # _blas_block's split dimension
        while parts > 1 and (along // parts) * (work // along) < BLOCK_MIN:
            parts -= 1
    # a vector product is split only into blocks of contiguous rows of its matrix: a block
    # of its columns would read the whole matrix's cache lines for a part of each
    elif (n == 1 and m > 1 and ta == _TRANS) or (m == 1 and n > 1 and tb == _NO_TRANS):
        parts = 1
    return False, a, b, ta, lda, tb, ldb, parts


@njit(cache=True, nogil=True)
def product(y, a, b, alpha, beta):
    """y = alpha * (a @ b) + beta * y (beta = 0: y is not read); y C-contiguous, all three
    of one float dtype. The split blocks run one after the other (the replay's form, and
    eager's on one thread); a float32 matrix product is one call (its blocks' bits)."""
    if a.shape[0] * a.shape[1] * b.shape[1] <= SMALL_MM:  # _prepare's first case, without
        _small(y, a, b, alpha, beta)  # building its tuple of operands
        return
    done, a, b, ta, lda, tb, ldb, parts = _prepare(y, a, b, alpha, beta)
    if not done:
        if parts > 1 and SGEMM_WHOLE and y.itemsize == 4 and y.shape[0] > 1 and \
                y.shape[1] > 1:
            parts = 1
        for p in range(parts):
            _blas_block(y, a, b, alpha, beta, ta, lda, tb, ldb, p, parts)


@njit(cache=True, nogil=True, parallel=True)
def _product_parallel(y, a, b, alpha, beta):
    """``product`` with the split blocks on Numba's threads: the same blocks, the same bits."""
    done, a, b, ta, lda, tb, ldb, parts = _prepare(y, a, b, alpha, beta)
    if not done:
        for p in prange(parts):
            _blas_block(y, a, b, alpha, beta, ta, lda, tb, ldb, p, parts)


@njit(cache=True, nogil=True)
def batched_product(y, a, b):
    """y[i] = a[i] @ b[i] for each i of three 3-d arrays, y C-contiguous."""
    for i in range(y.shape[0]):
        product(y[i], a[i], b[i], 1.0, 0.0)


def batched_product_into(y, a, b):
    """Eager's call of ``batched_product``: BLAS on one thread when each product is big
    enough for its pool's size to count."""
    if y.dtype == _F16:  # (as in product_into)
        y32 = np.empty(y.shape, np.float32)
        batched_product_into(y32, a.astype(np.float32), b.astype(np.float32))
        y[...] = y32
        return
    if a.shape[1] * a.shape[2] * b.shape[2] < BLAS_THREADS_MIN:
        batched_product(y, a, b)
        return
    with _ONE_THREAD:
        batched_product(y, a, b)


def product_into(y, a, b, alpha=1.0, beta=0.0):
    """Eager's call of ``product``: the blocks of a split product on Numba's threads, BLAS
    on one thread (from BLAS_THREADS_MIN multiply-adds, where its pool's size would count)."""
    if y.dtype == _F16:  # no half BLAS: in float32, rounded once at the end (as torch's CPU)
        y32 = y.astype(np.float32) if beta else np.empty(y.shape, np.float32)
        product_into(y32, a.astype(np.float32), b.astype(np.float32), alpha, beta)
        y[...] = y32
        return
    work = a.shape[0] * a.shape[1] * b.shape[1]
    if work < BLAS_THREADS_MIN:
        product(y, a, b, float(alpha), float(beta))
        return
    if work >= SPLIT_MIN:
        fit_threads()
    with _ONE_THREAD:
        if work >= SPLIT_MIN and num_threads() > 1:
            _product_parallel(y, a, b, float(alpha), float(beta))
        else:
            product(y, a, b, float(alpha), float(beta))


def matmul(a, b):
    """``a @ b`` of two 2-d float arrays of one dtype, as a new C-ordered array."""
    m, k = a.shape
    n = b.shape[1]
    dt = a.dtype
    out = np.empty((m, n), dt)
    if m * k * n < BLAS_THREADS_MIN and dt is not _F16:
        product(out, a, b, 1.0, 0.0)  # product_into's small case, without its checks
    else:
        product_into(out, a, b)
    return out


def add_product(target, a, b, alpha=1.0, overwrite=False):
    """``target += alpha * (a @ b)`` (``target = ...`` with ``overwrite``) in place, the
    product accumulated by the BLAS call itself; a target that is not C-contiguous gets a
    temporary."""
    if target.flags.c_contiguous and a.dtype == target.dtype == b.dtype:
        product_into(target, a, b, alpha, 0.0 if overwrite else 1.0)
        return
    p = a @ b
    if alpha != 1.0:
        p *= p.dtype.type(alpha)
    if overwrite:
        target[...] = p
    else:
        target += p


def layout_sensitive():
    """Whether one product gives different bits with its operands in other layouts: vector
    shapes always (gemv), and on some machines matrix shapes too (NumPy's OpenBLAS on AMD
    EPYC: small ones go to kernels of their own). A product on a transposed view and the
    same product on a contiguous copy (as a replay computes it) may then differ in the last
    bits."""
    global _layout_sensitive
    if _layout_sensitive is None:
        rng = np.random.default_rng(0)
        found = False
        for m, k, n in ((130, 128, 70), (1, 300, 40), (40, 300, 1)):
            a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
            y1, y2 = np.empty((m, n)), np.empty((m, n))
            product(y1, a, b, 1.0, 0.0)
            product(y2, a, np.asfortranarray(b), 1.0, 0.0)
            found = found or not np.array_equal(y1, y2)
        _layout_sensitive = found
    return _layout_sensitive


_layout_sensitive = None


def warmup():
    """Compile (or load from cache) the layouts a Linear layer's forward and backward use
    (x @ W.T, g @ W, g.T @ x), float32 and float64, small, serial and split."""
    for dt in (np.float32, np.float64):
        for size in (8, 128):
            a = np.ones((size, size), dt)
            for left, right in ((a, a.T), (a, a), (a.T, a)):
                out = np.zeros((size, size), dt)
                product(out, left, right, 1.0, 1.0)
                _product_parallel(out, left, right, 1.0, 1.0)
