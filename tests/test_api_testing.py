"""numbagrad.testing.assert_close and numbagrad.utils.checkpoint against torch."""

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.utils.checkpoint import checkpoint
from tests.torch_oracle import outcome

torch = pytest.importorskip("torch")

CASES = [
    "ac(T([1., 2., 3.]), T([1., 2.5, 3.1]))",
    "ac(T([1., 2., 3.], dtype=lib.float64), T([1., 2., 3.]))",
    "ac(T([1, 2, 3]), T([1, 2, 4]))",
    "ac(T([1., 2.]), T([1., 2., 3.]))",
    "ac(T(1.), T(2.))",
    "ac(T([float('nan')]), T([float('nan')]))",
    "ac(T([float('nan'), 1.]), T([float('nan'), 1.]), equal_nan=True)",
    "ac(T([1.]), T([2.]), rtol=0.1)",
    "ac(T([1.]), T([2.]), atol=0.1)",
    "ac(T([1.]), T([1.05]), rtol=0.1, atol=0.0)",
    "ac(T([1.]), T([2.]), msg='custom')",
    "ac(T([1.]), T([2.]), msg=lambda m: m.upper())",
    "ac(1.0, 1.5)",
    "ac(1.0, 1.0 + 1e-9)",
    "ac(1, 1.0)",
    "ac([T(1.), T(2.)], [T(1.), T(3.)])",
    "ac([T(1.), T(2.)], [T(1.)])",
    "ac({'a': T(1.)}, {'a': T(3.)})",
    "ac((T([1.]), [T([2.]), T([[1., 2.], [3., 4.]])]), (T([1.]), [T([2.]), T([[1., 2.], [3., 5.]])]))",
    "ac(T([[1., 2.], [3., 4.]]), T([[1., 2.], [3., 5.]]))",
    "ac(T([1.]), 1.0)",
    "ac(T([1., 2., 3.], dtype=lib.float64), T([1., 2., 3.]), check_dtype=False)",
    "ac(T([1., 2., 4.], dtype=lib.float64), T([1., 2., 3.]), check_dtype=False)",
    "ac(T([True]), T([False]))",
    "ac(T([True, False]), T([True, False]))",
    "ac(T([1., float('inf')]), T([1., float('inf')]))",
    "ac(T([float('-inf')]), T([float('inf')]))",
    "ac(T([0.]), T([1e-6]))",
    "ac(T([0., 1.]), T([1e-3, 1.]))",
    "ac(T([1.], requires_grad=True), T([1.]))",
    "ac(T([1, 2]), T([1., 2.]))",
    "ac(T([1., 2.], dtype=lib.float64), T([1. + 1e-8, 2.], dtype=lib.float64))",
    "ac(T([1., 2.], dtype=lib.float64), T([1. + 1e-6, 2.], dtype=lib.float64))",
    "ac(T([[0., 1.], [2., 3.]]), T([[0.5, 1.], [2., 3.5]]))",
    "ac(T([]), T([]))",
]


def _plain(v):
    return v


@pytest.mark.parametrize("case", CASES)
def test_assert_close_matches_torch(case):
    def run(lib):
        env = {"lib": lib, "T": lib.tensor, "ac": lib.testing.assert_close}
        return eval(case, env)  # noqa: S307 - fixed expressions
    ours, theirs = outcome(ng, run, _plain), outcome(torch, run, _plain)
    assert ours == theirs


def test_assert_close_takes_numpy_arrays():
    ng.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        ng.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 3.0]))


def _mlp(x, w1, w2):
    return ((x * w1).exp() * w2).sum(0)


def _grads(use_checkpoint, **kw):
    rng = np.random.default_rng(3)
    x = ng.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w1 = ng.tensor(rng.standard_normal((1, 3)), requires_grad=True)
    w2 = ng.tensor(rng.standard_normal((4, 1)), requires_grad=True)
    out = checkpoint(_mlp, x, w1, w2, **kw) if use_checkpoint else _mlp(x, w1, w2)
    (out * out).sum().backward()
    return out, [t.grad.numpy() for t in (x, w1, w2)]


@pytest.mark.parametrize("use_reentrant", [None, False, True])
def test_checkpoint_gives_the_plain_call_s_value_and_gradients(use_reentrant):
    out_plain, plain = _grads(False)
    out, checked = _grads(True, use_reentrant=use_reentrant)
    np.testing.assert_array_equal(out.detach().numpy(), out_plain.detach().numpy())
    for a, b in zip(checked, plain):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_checkpoint_passes_keyword_arguments_and_second_derivatives():
    x = ng.tensor([0.3, -0.7], dtype=ng.float64, requires_grad=True)

    def f(t, *, scale):
        return (t * scale).exp().sum()

    y = checkpoint(f, x, scale=2.0, use_reentrant=False)
    (g,) = ng.autograd.grad(y, x, create_graph=True)
    (h,) = ng.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 2 * np.exp(2 * x.detach().numpy()))
    np.testing.assert_allclose(h.numpy(), 4 * np.exp(2 * x.detach().numpy()))


def test_checkpoint_rejects_unknown_keywords_as_torch():
    def run(lib):
        from importlib import import_module
        cp = import_module(lib.__name__ + ".utils.checkpoint").checkpoint
        return cp(lambda t: t * 2, lib.ones(2), use_reentrant=True, preserve_rng_state=True,
                  bogus=1)
    ours = outcome(ng, run, _plain)
    theirs = outcome(torch, run, _plain)
    assert ours == theirs
