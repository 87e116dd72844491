"""float16 through every op of the op table, against torch: torch computes Half on the CPU
(in float, rounded to half), and so does numbagrad (Numba has no float16: its kernels run in
float32 and round once). Where torch refuses a Half sample, numbagrad must refuse it with
torch's error."""

import numpy as np
import pytest
from test_ops import CASES, _inputs, _run

torch = pytest.importorskip("torch")
import numbagrad as ng  # noqa: E402

# torch keeps Half intermediates in its backward where numbagrad differentiates in float64
# and rounds the result once: gradients agree to a few half-precision steps
_VALUE_TOL = dict(rtol=2e-3, atol=2e-3)
_GRAD_TOL = dict(rtol=2e-2, atol=2e-2)
FIRST = [(op, i, s) for op, i, s in CASES if i == 0]


@pytest.mark.parametrize("op,i,sample", FIRST, ids=[f"{op.name}" for op, _, _ in FIRST])
def test_float16_against_torch(op, i, sample):
    rng = np.random.default_rng(2000)
    arrays = _inputs(op, sample, rng, np.float16)
    try:
        value_t, _, _ = _run(torch, op, sample, arrays, None)
    except (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError) as e:
        with pytest.raises(type(e)) as ours:
            _run(ng, op, sample, arrays, None)
        assert str(ours.value) == str(e)
        return
    g = rng.standard_normal(value_t.shape)
    try:
        value_t, grads_t, _ = _run(torch, op, sample, arrays, g)
    except NotImplementedError as e:  # torch's derivative refuses Half
        with pytest.raises(NotImplementedError) as ours:
            _run(ng, op, sample, arrays, g)
        assert str(ours.value) == str(e)
        return
    value, grads, _ = _run(ng, op, sample, arrays, g)
    assert value.dtype == value_t.dtype and value.shape == value_t.shape
    np.testing.assert_allclose(value.astype(np.float64), value_t.astype(np.float64),
                               **_VALUE_TOL)
    for mine, theirs in zip(grads, grads_t):
        assert (mine is None) == (theirs is None)
        if theirs is not None:
            assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
            np.testing.assert_allclose(mine.astype(np.float64), theirs.astype(np.float64),
                                       **_GRAD_TOL)


def test_float16_examples_of_the_report():
    """The calls a user met first: mean (and its backward), exp, a product, softmax."""
    x = ng.tensor([1., 2.], dtype=ng.float16, requires_grad=True)
    xt = torch.tensor([1., 2.], dtype=torch.float16, requires_grad=True)
    for f in (lambda t: t.mean(), lambda t: t.exp().sum(), lambda t: t @ t,
              lambda t: (t.softmax(0) * t).sum()):
        y, yt = f(x), f(xt)
        assert y.dtype == ng.float16 and y.item() == yt.item()
        y.backward()
        yt.backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), **_GRAD_TOL)
        x.grad = xt.grad = None
