"""Tensor.register_hook against torch: observing and replacing gradients, leaves and non-leaves,
scalar and big-node paths, handle.remove()."""

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.core import tape as tape_mod

torch = pytest.importorskip("torch")


def same(fn):
    ours, theirs = fn(ng), fn(torch)
    assert ours == theirs
    return ours


@pytest.fixture(params=["sweep", "big"])
def path(request, monkeypatch):
    if request.param == "big":
        monkeypatch.setattr(tape_mod, "BIG", 0)
    return request.param


def test_non_leaf_hook_replaces_the_gradient_flowing_on(path):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        h = x * 2.0
        h.register_hook(lambda g: g * 10.0)
        (h * h).sum().backward()
        return x.grad.tolist()
    assert same(run) == [80.0, 160.0, 240.0]


def test_hook_sees_the_complete_gradient_and_may_return_none(path):
    def run(lib):
        seen = []
        x = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
        h = x * x
        h.register_hook(lambda g: seen.append(round(g.item(), 12)))
        (h * 3.0 + h.sin()).backward()  # two consumers: the hook gets their sum
        return seen, round(x.grad.item(), 12)
    same(run)


def test_leaf_hook_runs_before_accumulation_and_remove_works():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        handle = x.register_hook(lambda g: g + 1.0)
        (x * 3.0).sum().backward()
        first = x.grad.tolist()
        handle.remove()
        (x * 3.0).sum().backward()
        return first, x.grad.tolist()
    assert same(run) == ([4.0, 4.0], [7.0, 7.0])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_hook_replacing_a_0d_leafs_gradient(dtype):
    def run(lib):
        x = lib.tensor(2.0, dtype=getattr(lib, dtype), requires_grad=True)
        x.register_hook(lambda g: g * 3.0)
        y = x * x
        y.backward(retain_graph=True)
        first = x.grad.item()
        y.backward()
        return first, x.grad.item(), str(x.grad.dtype)
    assert same(run)[:2] == (12.0, 24.0)


def test_hook_on_a_tensor_without_grad():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ng.tensor(1.0).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        torch.tensor(1.0).register_hook(lambda g: g)


def test_hook_in_a_large_scalar_graph_fires_once():
    calls = []
    x = ng.tensor(0.5, dtype=ng.float64, requires_grad=True)
    h = x * 1.0
    h.register_hook(lambda g: calls.append(g.item()))
    y = h
    for _ in range(500):
        y = ng.tanh(y) + h * 0.01
    y.backward()
    assert len(calls) == 1
    np.testing.assert_allclose(x.grad.item(), calls[0])


def test_post_accumulate_grad_hook_runs_after_accumulation_like_torch():
    def run(lib):
        seen = []
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        s = lib.tensor(2.0, requires_grad=True)
        h = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
        s.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.item()))
        (w * w).sum().backward()
        (w * 3).sum().backward()
        h.remove()
        (w * 3 * s).sum().backward()
        (s * s).backward()
        errors = []
        try:
            (w * 2).register_post_accumulate_grad_hook(lambda p: None)
        except RuntimeError as e:
            errors.append(str(e))
        return seen, errors
    same(run)


def _grad_with_hook(lib, n, replace):
    x = lib.ones(n, requires_grad=True) if n else lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def hook(g):
        seen.append(g.tolist() if g.numel() < 10 else float(g.sum()))
        return g * 10 if replace else None
    x.register_hook(hook)
    (g,) = lib.autograd.grad((x * x).sum(), x)
    return seen, g.tolist() if g.numel() < 10 else float(g.sum()), x.grad


@pytest.mark.parametrize("n", [0, 40000], ids=["small", "big"])
@pytest.mark.parametrize("replace", [False, True], ids=["observes", "replaces"])
def test_leaf_hooks_run_in_autograd_grad(n, replace):
    seen, _, grad = same(lambda lib: _grad_with_hook(lib, n, replace))
    assert len(seen) == 1 and grad is None


def test_leaf_hooks_run_in_backward_with_inputs():
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0], requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(g.tolist()) or g + 1)
        (x * x * y).sum().backward(inputs=[x])
        return seen, x.grad.tolist(), y.grad
    seen, _, _ = same(fn)
    assert seen == [[6.0, 12.0]]
