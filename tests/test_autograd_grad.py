"""numbagrad.autograd.grad against torch.autograd.grad: values, untouched .grad, errors."""

import numpy as np
import pytest
from oracle import both, same

import numbagrad as ng

torch = pytest.importorskip("torch")


def test_grad_returns_gradients_and_leaves_dot_grad_alone():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.tensor(0.5, requires_grad=True)
        y = (lib.tanh(x * w) ** 2).sum()
        gx, gw = lib.autograd.grad(y, (x, w))
        return gx.tolist(), gw.item(), repr(x.grad), repr(w.grad), str(gx.dtype)
    ours, theirs = both(run)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1] == pytest.approx(theirs[1], rel=1e-6)
    assert ours[2:] == theirs[2:] == ("None", "None", "torch.float32")


def test_grad_of_non_scalar_outputs_with_grad_outputs_and_non_leaf_inputs():
    def run(lib):
        x = lib.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
        h = x.exp()
        y = h * x
        gh, gx = lib.autograd.grad([y], [h, x], grad_outputs=[lib.ones_like(y) * 2.0])
        return np.round(gh.numpy(), 12).tolist(), np.round(gx.numpy(), 12).tolist()
    same(run)


def test_grad_through_a_graph_spanning_tapes_and_several_outputs():
    def run(lib):
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = a * 3.0
        (a * a).sum().backward()  # frees another graph in between
        (g,) = lib.autograd.grad([(h * a).sum(), h.sum()], a)
        return g.tolist(), a.grad.tolist()
    same(run)


def test_grad_errors():
    def unused(lib):
        x = lib.tensor(1.0, requires_grad=True)
        z = lib.tensor(2.0, requires_grad=True)
        lib.autograd.grad(x * 2, [x, z])
    assert "appears to not have been used in the graph" in same(unused)

    def allowed(lib):
        x = lib.tensor(1.0, requires_grad=True)
        z = lib.tensor(2.0, requires_grad=True)
        gx, gz = lib.autograd.grad(x * 2, [x, z], allow_unused=True)
        mx, mz = lib.autograd.grad(x * 2, [x, z], materialize_grads=True)
        return gx.item(), gz, mz.item()
    assert same(allowed) == (2.0, None, 0.0)

    def nonscalar(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.autograd.grad(x * 2, x)
    assert same(nonscalar) == ("RuntimeError: grad can be implicitly created only for scalar "
                               "outputs")

    def no_grad_input(lib):
        x = lib.tensor(1.0, requires_grad=True)
        lib.autograd.grad(x * 2, lib.tensor(1.0))
    assert "does not require grad" in same(no_grad_input)

    def freed(lib):
        x = lib.tensor(1.0, requires_grad=True)
        y = x * x
        lib.autograd.grad(y, x)
        lib.autograd.grad(y, x)
    assert "Trying to backward through the graph a second time" in same(freed)

    def retained(lib):
        x = lib.tensor(3.0, requires_grad=True)
        y = x * x
        a = lib.autograd.grad(y, x, retain_graph=True)[0].item()
        return a, lib.autograd.grad(y, x)[0].item()
    assert same(retained) == (6.0, 6.0)


def test_grad_of_a_leaf_output_is_its_seed():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        return lib.autograd.grad(x, x, grad_outputs=lib.tensor([3.0, 4.0]))[0].tolist()
    assert same(run) == [3.0, 4.0]


def test_grad_stops_at_a_non_leaf_input_as_torch():
    """torch runs only the nodes the inputs' gradients need: a non-leaf input's own producer
    is not run (its saved values survive for a later backward) unless another input lies
    below it."""
    seen = []
    for lib in (torch, ng):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        x = a * 2.0 + 1.0
        (g,) = lib.autograd.grad((x * x).sum(), x)
        (x * 3).sum().backward()  # x's producer was not freed
        e = a.exp()
        both = lib.autograd.grad((e * a).sum(), (e, a))  # a lies below e: e's node runs
        e = a.exp()
        (e * a).sum().backward(inputs=[e])
        seen.append([g.tolist(), a.grad.tolist(), [t.tolist() for t in both], e.grad.tolist()])
    assert seen[1] == seen[0]
