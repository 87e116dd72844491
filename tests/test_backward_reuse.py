"""A training loop records the same graph at every step, and the engine reuses what it worked
out about that graph's big nodes (autograd/big_nodes.py) from one backward to the next. What may
differ between two recordings of one graph shape must still come from the current one:
attribute values, the values themselves, the seed's dtype, hooks."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

ROWS, COLS = 64, 600  # 38,400 elements: big nodes (tape.BIG is 32,768)


def _grads(lib, x, w, c, fn, seed=None):
    xs = [lib.tensor(a, requires_grad=True) for a in (x, w, c)]
    out = fn(lib, *xs)
    if seed is None:
        out.backward()
    else:
        out.backward(lib.tensor(seed))
    return [t.grad.numpy() for t in xs]


def _data(dtype, k):
    rng = np.random.default_rng(k)
    return (rng.standard_normal((ROWS, COLS)).astype(dtype),
            rng.standard_normal((COLS, COLS // 4)).astype(dtype),
            rng.standard_normal(COLS // 4).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_attributes_of_each_recording_are_used_not_the_first_ones(dtype):
    tol = 1e-10 if dtype == np.float64 else 2e-4
    for k, (beta, alpha, slope, scale) in enumerate([(1.0, 1.0, 0.01, 0.5), (0.5, 2.0, 0.3, 3.0),
                                                     (-1.5, 0.25, 0.0, -2.0)]):
        x, w, c = _data(dtype, k)

        def fn(lib, x, w, c, beta=beta, alpha=alpha, slope=slope, scale=scale):
            h = lib.addmm(c, x, w, beta=beta, alpha=alpha)
            h = lib.nn.functional.leaky_relu(h, slope) * scale
            return (h * h).sum()

        ours, theirs = _grads(ng, x, w, c, fn), _grads(torch, x, w, c, fn)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol * np.abs(b).max())


def test_a_seed_of_another_dtype_in_a_later_backward_of_the_same_graph():
    x, w, c = _data(np.float32, 0)

    def fn(lib, x, w, c):
        return lib.nn.functional.relu(lib.addmm(c, x, w)) * 2.0

    seed32 = np.random.default_rng(1).standard_normal((ROWS, COLS // 4)).astype(np.float32)
    first = _grads(ng, x, w, c, fn, seed32)
    again = _grads(ng, x, w, c, fn, seed32)
    theirs = _grads(torch, x, w, c, fn, seed32)
    for a, b, t in zip(first, again, theirs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, t, rtol=2e-4, atol=2e-4 * np.abs(t).max())


def test_a_hook_added_in_a_later_step_runs_and_changes_the_gradient():
    x, w, c = _data(np.float64, 2)
    calls = []
    for step in range(3):
        xs = [ng.tensor(a, requires_grad=True) for a in (x, w, c)]
        h = ng.addmm(xs[2], xs[0], xs[1])
        if step == 2:
            h.register_hook(lambda g: calls.append(1) or g * 3.0)
        (ng.tanh(h) * 1.5).sum().backward()
        if step == 0:
            base = xs[1].grad.numpy().copy()
    assert calls == [1]
    np.testing.assert_allclose(xs[1].grad.numpy(), 3.0 * base, rtol=1e-10)
