"""numbagrad.engine.gemm: the one product routine of eager ops and compiled replay. Right
against float64 NumPy for every operand layout, and the same bits whatever the layout,
whether the split blocks run serially (replay) or on Numba's threads (eager), and whatever
the thread count."""

import ctypes
import importlib.util
import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

import numbagrad
from numbagrad.engine import gemm


def _operand(rng, rows, cols, layout, dtype):
    if layout == "C":
        return rng.standard_normal((rows, cols)).astype(dtype)
    if layout == "F":
        return np.asfortranarray(rng.standard_normal((rows, cols)).astype(dtype))
    if layout == "rows":  # C rows with a gap after each (leading dimension > cols)
        return rng.standard_normal((rows, cols + 3)).astype(dtype)[:, :cols]
    if layout == "cols":  # the transpose of that
        return rng.standard_normal((cols, rows + 2)).astype(dtype)[:, :rows].T
    return rng.standard_normal((rows, 2 * cols)).astype(dtype)[:, ::2]  # no unit stride


LAYOUTS = ("C", "F", "rows", "cols", "strided")
# small (loops), BLAS, BLAS split in blocks (by rows and by columns), vector shapes (gemv),
# vector shapes large enough to split
SHAPES = [(3, 4, 2), (64, 784, 256), (256, 64, 784), (130, 128, 70), (1, 300, 40),
          (40, 300, 1), (7, 1, 9), (5, 0, 3), (0, 4, 2), (20000, 64, 1), (1, 64, 20000)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_product_right_and_the_same_bits_in_every_layout(dtype, shape, request):
    if gemm.layout_sensitive():
        # the values are still checked below; only the bit-for-bit claim is this BLAS's
        request.applymarker(pytest.mark.xfail(
            reason="vector products (gemv), and on some machines the BLAS's gemm, sum "
                   "differently by operand layout", strict=False))
    rng = np.random.default_rng(sum(shape))
    m, k, n = shape
    tol = 2e-5 if dtype == np.float32 else 1e-12
    a0, b0 = _operand(rng, m, k, "C", dtype), _operand(rng, k, n, "C", dtype)
    start = rng.standard_normal((m, n)).astype(dtype)
    exact = a0.astype(np.float64) @ b0.astype(np.float64)
    scale = np.abs(a0).astype(np.float64) @ np.abs(b0).astype(np.float64) + 1
    reference, other_bits = {}, []
    for la in LAYOUTS:
        for lb in LAYOUTS:
            # the same values in another layout
            a, b = _operand(rng, m, k, la, dtype), _operand(rng, k, n, lb, dtype)
            a[...], b[...] = a0, b0
            for run in (gemm.product, gemm._product_parallel):
                # beta = 0 never reads y: NaN there must not leak into the result
                out = np.full((m, n), np.nan, dtype)
                run(out, a, b, 0.5, 0.0)
                assert np.all(np.abs(out - 0.5 * exact) <= tol * scale), (la, lb)
                acc = start.copy()
                run(acc, a, b, 2.0, 1.0)  # beta = 1 accumulates
                assert np.all(np.abs(acc - (start + 2 * exact)) <= tol * (2 * scale + 1))
                if not reference:
                    reference = {"out": out, "acc": acc}
                if not (np.array_equal(out, reference["out"]) and
                        np.array_equal(acc, reference["acc"])):
                    other_bits.append(f"{la} {lb} {run.__name__}")
    # the values hold in every layout (above); the same bits in every layout:
    assert not other_bits, other_bits


def test_helpers():
    rng = np.random.default_rng(1)
    for dt in (np.float32, np.float64):
        a = rng.standard_normal((70, 90)).astype(dt)
        b = rng.standard_normal((90, 80)).astype(dt)
        exact = a.astype(np.float64) @ b
        bound = (2e-5 if dt == np.float32 else 1e-12) * (np.abs(a).astype(np.float64) @
                                                          np.abs(b) + 1)
        p = gemm.matmul(a, b)
        assert p.dtype == dt and p.flags.c_contiguous
        assert np.all(np.abs(p - exact) <= bound)
        target = np.ones((70, 80), dt)
        gemm.add_product(target, a, b, alpha=-1.0)
        assert np.all(np.abs(target - (1 - exact)) <= bound)
        target = np.ones((80, 70), dt).T  # not C-ordered: through a temporary
        gemm.add_product(target, a, b, overwrite=True)
        assert np.all(np.abs(target - exact) <= bound)


@pytest.mark.parametrize("real,dtype", [("s", np.float32), ("d", np.float64)])
def test_stand_in_gemm(real, dtype):
    """The plain-loop cblas_?gemm a process without NumPy's OpenBLAS links to: row major,
    both transpose flags, leading dimensions, alpha and beta (0: C not read)."""
    fn = gemm._stand_in(real).ctypes
    rng = np.random.default_rng(2)
    m, k, n = 4, 5, 3
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    exact = a.astype(np.float64) @ b

    def ptr(x):
        return x.ctypes.data_as(ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype)))

    for ta, tb in ((111, 111), (112, 111), (111, 112), (112, 112)):
        aa = np.ascontiguousarray(a.T) if ta == 112 else a
        bb = np.ascontiguousarray(b.T) if tb == 112 else b
        c = np.full((m, n), np.nan, dtype)
        fn(101, ta, tb, m, n, k, 2.0, ptr(aa), aa.shape[1], ptr(bb), bb.shape[1], 0.0, ptr(c), n)
        np.testing.assert_allclose(c, 2 * exact, rtol=1e-5)
        c = np.ones((m, n), dtype)
        fn(101, ta, tb, m, n, k, 1.0, ptr(aa), aa.shape[1], ptr(bb), bb.shape[1], 0.5, ptr(c), n)
        np.testing.assert_allclose(c, 0.5 + exact, rtol=1e-5)


@pytest.mark.parametrize("real,dtype", [("sv", np.float32), ("dv", np.float64)])
def test_stand_in_gemv(real, dtype):
    """The plain-loop cblas_?gemv: row major, both transpose flags, strides, alpha and beta
    (0: y not read)."""
    fn = gemm._stand_in_gemv(real).ctypes
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 5)).astype(dtype)
    x = rng.standard_normal(10).astype(dtype)  # read with stride 2
    ptr = lambda v: v.ctypes.data_as(ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype)))  # noqa: E731
    for ta, rows in ((111, 4), (112, 5)):
        op = a if ta == 111 else a.T
        exact = op.astype(np.float64) @ x[::2][:op.shape[1]]
        y = np.full(rows, np.nan, dtype)
        fn(101, ta, 4, 5, 2.0, ptr(a), 5, ptr(x), 2, 0.0, ptr(y), 1)
        np.testing.assert_allclose(y, 2 * exact, rtol=1e-5)
        y = np.ones(rows, dtype)
        fn(101, ta, 4, 5, 1.0, ptr(a), 5, ptr(x), 2, 0.5, ptr(y), 1)
        np.testing.assert_allclose(y, 0.5 + exact, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_split_matrix_product_has_the_bits_of_one_call(dtype):
    """A float32 matrix product is one BLAS call in ``product`` (the replay's, and eager's
    on one thread) and its blocks (each at least BLOCK_MIN multiply-adds) on Numba's
    threads: the same bits either way, so neither the thread count nor compiling changes
    them (float64 runs its blocks in both: dgemm's edge kernels sum some elements in
    another order). Random shapes from the split's threshold up, in the layouts BLAS reads
    in place, with and without accumulation."""
    rng = np.random.default_rng(7 if dtype == np.float64 else 11)
    previous = numba.get_num_threads()
    split = 0
    try:
        numba.set_num_threads(1)
        for _ in range(80 if dtype == np.float32 else 15):
            m, n = (int(v) for v in rng.integers(2, 700, 2))
            k = max(1, int(rng.uniform(1, 6) * gemm.SPLIT_MIN / (m * n)))
            a = _operand(rng, m, k, rng.choice(["C", "F"]), dtype)
            b = _operand(rng, k, n, rng.choice(["C", "F"]), dtype)
            start = rng.standard_normal((m, n)).astype(dtype)
            for alpha, beta in ((1.0, 0.0), (0.5, 1.0)):
                whole, blocks = start.copy(), start.copy()
                gemm.product(whole, a, b, alpha, beta)
                gemm._product_parallel(blocks, a, b, alpha, beta)
                np.testing.assert_array_equal(whole, blocks, err_msg=str((m, k, n)))
            split += gemm._prepare(whole, a, b, 1.0, 0.0)[7] > 1
    finally:
        numba.set_num_threads(previous)
    assert split >= 0.6 * (80 if dtype == np.float32 else 15)  # most were split


@pytest.mark.parametrize("core", ["Haswell", "SkylakeX"])
def test_a_float32_product_is_one_call_only_where_its_blocks_have_its_bits(core):
    """Under OpenBLAS's AVX2 kernels (OPENBLAS_CORETYPE=Haswell, as on an AVX2 machine) a
    float32 product keeps its blocks, whose bits the whole product does not have there; under
    SkylakeX's it is one call. Either way one and two threads give the same bits (a product
    of 2^25 multiply-adds, split in four on two threads), and the choice is part of the
    package kernels' cache key (a cache made under the other kernels is not loaded)."""
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    needs = {"Haswell": "avx2", "SkylakeX": "avx512f"}[core]
    if needs not in flags.split():
        pytest.skip(f"no {needs} here (or no /proc/cpuinfo): OpenBLAS would not run {core}'s")
    program = textwrap.dedent("""
        import numba, numpy as np
        from numbagrad.core import safe_cache
        from numbagrad.engine import gemm
        rng = np.random.default_rng(3)
        a = rng.standard_normal((300, 700)).astype(np.float32)
        b = rng.standard_normal((700, 200)).astype(np.float32)
        y1, y2 = np.zeros((300, 200), np.float32), np.zeros((300, 200), np.float32)
        numba.set_num_threads(1)
        gemm.product_into(y1, a, b)
        numba.set_num_threads(2)
        gemm.product_into(y2, a, b)
        print(gemm.core_name, gemm.SGEMM_WHOLE, safe_cache.KEY_PARTS["sgemm_whole"],
              np.array_equal(y1, y2))
    """)
    env = dict(os.environ, OPENBLAS_CORETYPE=core)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    name, whole, key, threads_equal = done.stdout.split()[-4:]
    assert name == core.lower()
    assert whole == key == str(core == "SkylakeX")
    assert threads_equal == "True"


def test_thread_count_does_not_change_the_bits():
    """An MLP's float32 gradients at one and at two Numba threads: bit for bit (the split
    blocks do not depend on the thread count)."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one Numba thread on this machine")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784)).astype(np.float32)
    y = rng.integers(0, 10, 64)

    def grads():
        numbagrad.manual_seed(0)
        nn = numbagrad.nn
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        loss = nn.CrossEntropyLoss()(model(numbagrad.tensor(x)), numbagrad.tensor(y))
        loss.backward()
        return [p.grad.numpy() for p in model.parameters()]

    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = grads()
        numba.set_num_threads(2)
        two = grads()
    finally:
        numba.set_num_threads(previous)
    for g, h in zip(one, two):
        np.testing.assert_array_equal(g, h)


def test_own_blas_leaves_numpy_and_scipy_lapack_alone():
    """The products' own OpenBLAS (scipy-openblas64) is loaded privately: SciPy's and
    NumPy's LAPACK, loaded after it, still call their own helpers (the package's import
    would load it globally, and SciPy's workspace queries would then read 64-bit integers)."""
    program = textwrap.dedent("""
        import sys
        import numpy as np
        import numbagrad
        from numbagrad.engine import gemm
        y = np.empty((64, 64), np.float32)
        a = np.ones((64, 300), np.float32)
        gemm.product(y, a, a.T, 1.0, 0.0)
        import scipy.linalg
        x = np.random.default_rng(0).standard_normal((50, 3))
        s = scipy.linalg.svd(x, full_matrices=False)[1]
        assert np.allclose(s, np.linalg.svd(x)[1])
        print(gemm.own_blas, "scipy_openblas64" in sys.modules, float(y[0, 0]))
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    own, imported, value = done.stdout.split()[-3:]
    assert float(value) == 300.0
    assert imported == "False"
    if importlib.util.find_spec("scipy_openblas64") is not None:
        assert own == "True"
