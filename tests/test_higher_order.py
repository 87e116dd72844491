"""create_graph=True: gradients of gradients, against torch and against closed forms."""

import warnings

import numpy as np
import pytest
from oracle import both, same

import numbagrad as ng

torch = pytest.importorskip("torch")


def test_third_derivative_of_cube_is_six():
    x = ng.tensor(2.0, requires_grad=True)
    (d1,) = ng.autograd.grad(x ** 3, x, create_graph=True)
    (d2,) = ng.autograd.grad(d1, x, create_graph=True)
    (d3,) = ng.autograd.grad(d2, x)
    assert (d1.item(), d2.item(), d3.item()) == (12.0, 12.0, 6.0)
    assert d1.grad_fn is not None and d3.grad_fn is None


def test_torch_script_with_create_graph_prints_the_same():
    def run(lib):
        out = []
        x = lib.tensor(2.0, requires_grad=True)
        (g,) = lib.autograd.grad(x ** 3, x, create_graph=True)
        out.append(repr(g))
        (g2,) = lib.autograd.grad(g, x, create_graph=True)
        out.append(repr(g2))
        v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (gv,) = lib.autograd.grad((v.sin() * v).sum(), v, create_graph=True)
        out.append(repr(gv))
        (gv.norm() ** 2).backward()
        out.append(repr(v.grad))
        return out
    same(run)


def test_backward_create_graph_makes_grad_differentiable_and_warns_like_torch():
    def run(lib):
        w = lib.tensor([[0.5, -1.0], [2.0, 0.3]], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([1.0, 2.0], dtype=lib.float64)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.tanh(w @ x).exp().sum().backward(create_graph=True)
        g = w.grad
        assert g.requires_grad
        w.grad = None
        (g ** 2).sum().backward()
        warned = any("reference cycle" in str(c.message) for c in caught)
        return (np.round(g.detach().numpy(), 12).tolist(), np.round(w.grad.numpy(), 12).tolist(),
                repr(g.grad_fn).split(" ")[0], warned if lib is ng else None)
    ours, theirs = both(run)
    # torch warns once per process (TORCH_WARN_ONCE); numbagrad warns through `warnings`
    assert ours[:3] == theirs[:3] and ours[3]


def test_gradient_penalty_trains():
    """The issue's example: a gradient penalty (grad(loss, x, create_graph=True)[0].norm()**2)
    trains the weights, step for step as torch does."""
    rng = np.random.default_rng(0)
    w0, data = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))

    def run(lib):
        w = lib.tensor(w0, requires_grad=True)
        x = lib.tensor(data, requires_grad=True)
        history = []
        for _ in range(5):
            loss = lib.tanh(x @ w.t()).pow(2).sum()
            (gx,) = lib.autograd.grad(loss, x, create_graph=True)
            penalty = gx.norm() ** 2
            (loss + 0.1 * penalty).backward()
            with lib.no_grad():
                w -= 0.05 * w.grad
            w.grad = None
            history.append(penalty.item())
        return history, w.detach().numpy()
    ours, theirs = both(run)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10)
    assert ours[0][-1] < ours[0][0]


def test_hessian_by_double_backward_on_a_graph_with_views_reductions_and_matmul():
    def run(lib):
        a = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
        b = lib.tensor(np.linspace(0.5, 2, 8).reshape(4, 2), requires_grad=True)
        y = (a @ b).softmax(-1)[:, 0].logsumexp(0) + a.t()[1:].std() * b.prod()
        ga, gb = lib.autograd.grad(y, (a, b), create_graph=True)
        rows = []
        for k in range(a.numel()):
            (h,) = lib.autograd.grad(ga.reshape(-1)[k], a, retain_graph=True)
            rows.append(np.round(h.numpy(), 10).reshape(-1).tolist())
        return rows
    same(run)


def test_grad_outputs_that_require_grad_give_the_double_vjp_trick():
    """jvp by double backward (torch.autograd.functional does this): the gradient is linear in
    a grad_output that requires grad, and differentiating w.r.t. it gives J v."""
    def run(lib):
        x = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64, requires_grad=True)
        y = lib.stack([x[0] * x[1], x[1].exp(), x.sum() ** 2])
        u = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        (vjp,) = lib.autograd.grad(y, x, u, create_graph=True)
        v = lib.tensor([1.0, 2.0, -1.0], dtype=lib.float64)
        (jv,) = lib.autograd.grad(vjp, u, v)
        return np.round(jv.numpy(), 12).tolist()
    same(run)


def test_create_graph_respects_hooks_retain_grad_and_inputs():
    def run(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        z = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        h = x * z
        h.retain_grad()
        h.register_hook(lambda g: g * 2)
        (h ** 2).sum().backward(create_graph=True, inputs=[x])
        return (np.round(x.grad.detach().numpy(), 12).tolist(), repr(z.grad),
                x.grad.requires_grad)
    same(run)


def test_freed_graph_error_under_create_graph():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        lib.autograd.grad(y, x, create_graph=True, retain_graph=False)
        lib.autograd.grad(y, x, create_graph=True)
    same(run)
