"""Custom autograd.Function: forward/backward in Python, recorded as one tape node."""

import re

import numpy as np
import pytest
from oracle import both, same

import numbagrad as ng

torch = pytest.importorskip("torch")


def _functions(lib):
    class MyExp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            y = x.exp() * k
            ctx.save_for_backward(y)
            ctx.k = k
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y, None

    class Split(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x.sin()

        @staticmethod
        def backward(ctx, ga, gb):
            (x,) = ctx.saved_tensors
            return ga * 2 + gb * x.cos()

    return MyExp, Split


def _addr(s):
    return re.sub(r"0x[0-9a-f]+", "ADDR", s)


def test_custom_functions_match_torch_first_and_second_order():
    def run(lib):
        MyExp, Split = _functions(lib)
        out = []
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = MyExp.apply(x, 3.0)
        out.append(repr(y))
        out.append(_addr(repr(y.grad_fn)))
        y.sum().backward()
        out.append(repr(x.grad))
        a, b = Split.apply(x)
        out += [repr(a), repr(b), a.grad_fn.name()]
        (a * b).sum().backward()
        out.append(repr(x.grad))
        x.grad = None
        z = MyExp.apply(x * x, 1.0).sum()
        (gx,) = lib.autograd.grad(z, x, create_graph=True)
        out.append(repr(gx))
        gx.sum().backward()  # through the saved output: torch's saved outputs keep their graph
        out.append(repr(x.grad))
        return out
    same(run)


def test_custom_function_errors_match_torch():
    def run(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g, g

        class BadShape(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g[:2]

        MyExp, _ = _functions(lib)
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        errors = []
        for f in (lambda: Bad.apply(x).sum().backward(),
                  lambda: BadShape.apply(x).sum().backward()):
            try:
                f()
            except RuntimeError as e:
                errors.append(str(e))
        z = MyExp.apply(x, 1.0).sum()
        z.backward()
        try:
            z.backward()
        except RuntimeError as e:
            errors.append(str(e)[:80])
        return errors
    ours = same(run)
    assert len(ours) == 3


def test_needs_input_grad_non_differentiable_outputs_and_setup_context():
    def run(lib):
        seen = []

        class Sort(lib.autograd.Function):
            @staticmethod
            def forward(x, w):
                values = x * w
                order = lib.tensor(np.argsort(values.numpy()))
                return values, order

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, w = inputs
                ctx.mark_non_differentiable(output[1])
                ctx.save_for_backward(x, w)
                seen.append(ctx.needs_input_grad)

            @staticmethod
            def backward(ctx, g, g_order):
                x, w = ctx.saved_tensors
                return g * w, (g * x).sum() if ctx.needs_input_grad[1] else None

        x = lib.tensor([3.0, 1.0, 2.0], requires_grad=True)
        w = lib.tensor(2.0)
        v, o = Sort.apply(x, w)
        (v ** 2).sum().backward()
        return seen, o.requires_grad, repr(x.grad), repr(w.grad)
    same(run)


def test_a_custom_function_inside_a_big_graph_and_on_the_parallel_path(monkeypatch):
    """Many calls in one graph, mixed with table ops, small and big nodes alike."""
    from numbagrad.core import tape as tape_mod
    rng = np.random.default_rng(0)
    data = rng.standard_normal(50)

    def run(lib):
        MyExp, _ = _functions(lib)
        x = lib.tensor(data, requires_grad=True)
        h = x
        for k in range(20):
            h = MyExp.apply(lib.tanh(h) * 0.5, 1.0 + k / 10)
        h.sum().backward()
        return x.grad.numpy()
    ours, theirs = both(run)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    monkeypatch.setattr(tape_mod, "BIG", 0)
    np.testing.assert_allclose(run(ng), theirs, rtol=1e-5)


def test_gradcheck_and_gradgradcheck_catch_a_wrong_custom_function():
    from numbagrad.autograd.gradcheck import GradcheckError

    class Cube(ng.autograd.Function):  # right: d/dx x^3 = 3x^2, written with recorded ops
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    class WrongFirst(Cube):  # the derivative is off by a factor
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x ** 2

    class WrongSecond(Cube):  # right first derivative, but its own derivative is lost
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2

    x = ng.tensor([0.5, -1.2, 2.0], dtype=ng.float64, requires_grad=True)
    assert ng.autograd.gradcheck(Cube.apply, (x,))
    assert ng.autograd.gradgradcheck(Cube.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        ng.autograd.gradcheck(WrongFirst.apply, (x,))
    assert not ng.autograd.gradcheck(WrongFirst.apply, (x,), raise_exception=False)
    assert ng.autograd.gradcheck(WrongSecond.apply, (x,))
    with pytest.raises(GradcheckError):
        ng.autograd.gradgradcheck(WrongSecond.apply, (x,))
