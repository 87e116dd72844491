"""numbagrad.ops.gemm: the eager products split over Numba's threads, against NumPy in
float64, for every operand layout BLAS reads in place and for the fallbacks."""

import numpy as np
import pytest

import numbagrad
from numbagrad.ops import gemm

pytestmark = pytest.mark.skipif(not gemm.available, reason="NumPy's OpenBLAS CBLAS not found")


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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 784, 256), (256, 64, 784), (130, 128, 70), (1, 3, 5),
                                   (5, 3, 1), (7, 1, 9)])
@pytest.mark.parametrize("parts", [1, 2, 3])
def test_gemm_matches_numpy_every_layout(dtype, shape, parts):
    rng = np.random.default_rng(sum(shape) + parts)
    m, k, n = shape
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for la in LAYOUTS:
        for lb in LAYOUTS:
            a, b = _operand(rng, m, k, la, dtype), _operand(rng, k, n, lb, dtype)
            exact = a.astype(np.float64) @ b.astype(np.float64)
            scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64) + 1
            # beta = 0 never reads out: NaN there must not leak into the result
            out = np.full((m, n), np.nan, dtype)
            applied = gemm.gemm(out, a, b, alpha=0.5, parts=parts)
            # beta = 0 is only taken when it splits (else np.matmul is as good)
            expected_applied = not (la == "strided" or lb == "strided" or parts == 1 or
                                    m * n * k < gemm.SPLIT_MIN)
            assert applied == expected_applied, (la, lb)
            if applied:
                assert np.all(np.abs(out - 0.5 * exact) <= tol * scale), (la, lb)
            # beta = 1 accumulates into out
            start = rng.standard_normal((m, n)).astype(dtype)
            out = start.copy()
            applied = gemm.gemm(out, a, b, alpha=2.0, beta=1.0, parts=parts)
            assert applied == (la != "strided" and lb != "strided"), (la, lb)
            if applied:
                assert np.all(np.abs(out - (start + 2 * exact)) <= tol * (2 * scale + 1))
            # the public helpers apply or fall back, and are right either way
            assert np.all(np.abs(gemm.matmul(a, b) - exact) <= tol * scale)
            target = start.copy()
            gemm.add_product(target, a, b, alpha=-1.0)
            assert np.all(np.abs(target - (start - exact)) <= tol * (scale + 1))


def test_gemm_declines_what_it_does_not_handle():
    a = np.ones((4, 3), np.float32)
    b = np.ones((3, 5), np.float32)
    out = np.zeros((4, 5), np.float32)
    assert gemm.gemm(out, a, b, beta=1.0) and np.all(out == 3)  # the case that applies
    assert not gemm.gemm(np.zeros((4, 5)), a, b, beta=1.0)  # mixed dtypes
    assert not gemm.gemm(np.zeros((5, 4), np.float32).T, a, b, beta=1.0)  # out not C-ordered
    assert not gemm.gemm(np.zeros((4, 5), np.int64), a.astype(np.int64), b.astype(np.int64),
                         beta=1.0)
    assert not gemm.gemm(np.zeros((4, 0), np.float32), a, b[:, :0], beta=1.0)  # empty
    assert not gemm.gemm(out, a, b, parts=1)  # neither split nor accumulating


@pytest.mark.parametrize("threads", [1, 2])
def test_linear_training_step_same_with_split_products(threads, monkeypatch):
    """An MLP's gradients with the products split over threads equal those of NumPy's
    single-threaded matmul (the fallback), up to float32 summation order."""
    import numba
    if threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip("one Numba thread on this machine")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    y = rng.integers(0, 10, 64)

    def grads():
        numbagrad.manual_seed(0)
        nn = numbagrad.nn
        model = nn.Sequential(nn.Linear(300, 200), nn.ReLU(), nn.Linear(200, 10))
        loss = nn.CrossEntropyLoss()(model(numbagrad.tensor(x)), numbagrad.tensor(y))
        loss.backward()
        return [p.grad.numpy().astype(np.float64) for p in model.parameters()]

    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        split = grads()
        monkeypatch.setattr(gemm, "available", False)
        plain = grads()
    finally:
        numba.set_num_threads(previous)
    for g, h in zip(split, plain):
        np.testing.assert_allclose(g, h, rtol=1e-4, atol=1e-6)
