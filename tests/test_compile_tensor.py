"""numbagrad.compile on functions of Tensors (torch.compile's form): the forward is replayed
in Numba, the output carries one CompiledFunctionBackward node whose backward is the trace's
reverse sweep; gradients, guards and errors against eager numbagrad and torch."""

import threading

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.compiler.compiled import CompiledFunction

torch = pytest.importorskip("torch")


def mlp(x, w1, b1, w2):
    return ng.tanh(x @ w1 + b1) @ w2


def _leaves(arrays, dtype=np.float64):
    return [ng.tensor(a.astype(dtype), requires_grad=True) for a in arrays]


def _mlp_arrays(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((4, 3)), rng.standard_normal((3, 5)),
            rng.standard_normal(5), rng.standard_normal((5, 2))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_outputs_and_gradients_equal_eager(dtype):
    """A non-scalar output, backward with a gradient: values and every input's .grad equal
    eager numbagrad's, on the call that traces and on later calls with new values."""
    c = ng.compile(mlp)
    assert isinstance(c, CompiledFunction)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    for seed in range(3):
        arrays = _mlp_arrays(seed)
        gout = np.random.default_rng(10 + seed).standard_normal((4, 2)).astype(dtype)
        eager_in, comp_in = _leaves(arrays, dtype), _leaves(arrays, dtype)
        e = mlp(*eager_in)
        e.backward(gradient=ng.tensor(gout))
        y = c(*comp_in)
        assert y.dtype == e.dtype and y.shape == e.shape and y.requires_grad
        np.testing.assert_allclose(y.detach().numpy(), e.detach().numpy(), rtol=tol, atol=tol)
        y.backward(gradient=ng.tensor(gout))
        for a, b in zip(comp_in, eager_in):
            assert a.grad.dtype == b.grad.dtype and a.grad.shape == b.grad.shape
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    assert len(c.traces) == 1  # same signature: one trace, replayed


def test_only_inputs_that_require_grad_get_gradients_and_arrays_are_inputs():
    c = ng.compile(lambda x, w, k: (x @ w) * k)
    rng = np.random.default_rng(1)
    x, w, k = rng.standard_normal((2, 3)), rng.standard_normal((3, 3)), rng.standard_normal(3)
    tx, tw = ng.tensor(x), ng.tensor(w, requires_grad=True)
    y = c(tx, tw, k)  # k: a NumPy array, read at every call like a Tensor
    np.testing.assert_allclose(y.detach().numpy(), (x @ w) * k, rtol=1e-14)
    y.sum().backward()
    assert tx.grad is None
    np.testing.assert_allclose(tw.grad.numpy(), x.T @ np.tile(k, (2, 1)), rtol=1e-13)
    k2 = k + 1.0
    np.testing.assert_allclose(c(tx, tw, k2).detach().numpy(), (x @ w) * k2, rtol=1e-14)


def _torch_cell(x, h, w_ih, w_hh, b):
    return torch.tanh(x @ w_ih + h @ w_hh + b)


def test_a_cell_called_in_a_loop_against_eager_and_torch():
    """An Elman cell compiled, called 5 times in one graph (each call's arena saved until
    the one backward): loss and gradients equal eager numbagrad and torch."""
    def cell(x, h, w_ih, w_hh, b):
        return ng.tanh(x @ w_ih + h @ w_hh + b)

    rng = np.random.default_rng(2)
    xs = rng.standard_normal((5, 2, 3))
    params = [rng.standard_normal((3, 4)) * 0.5, rng.standard_normal((4, 4)) * 0.5,
              rng.standard_normal(4) * 0.1]
    weights = rng.standard_normal((2, 4))

    def run(step, lib, ps):
        h = lib.zeros(2, 4, dtype=lib.float64)
        total = 0.0
        for t in range(5):
            h = step(lib.tensor(xs[t]), h, *ps)
            total = total + (h * lib.tensor(weights)).sum() * (t + 1)
        return total

    compiled = ng.compile(cell)
    results = {}
    for name, lib, step in (("compiled", ng, compiled), ("eager", ng, cell),
                            ("torch", torch, _torch_cell)):
        ps = [lib.tensor(p, requires_grad=True) for p in params]
        loss = run(step, lib, ps)
        loss.backward()
        results[name] = (loss.item(), [p.grad.numpy() for p in ps])
    assert len(compiled.traces) == 1  # h = zeros first (no grad), same signature: one trace
    for other in ("eager", "torch"):
        assert results["compiled"][0] == pytest.approx(results[other][0], rel=1e-12)
        for a, b in zip(results["compiled"][1], results[other][1]):
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)


def test_a_closed_over_linear_layer_gets_its_gradients():
    torch_lin = torch.nn.Linear(3, 2).double()
    lin = ng.nn.Linear(3, 2).double()
    with ng.no_grad():
        lin.weight.copy_(ng.tensor(torch_lin.weight.detach().numpy()))
        lin.bias.copy_(ng.tensor(torch_lin.bias.detach().numpy()))

    @ng.compile
    def f(x):
        return ng.sigmoid(lin(x)) * 2.0

    x = np.random.default_rng(3).standard_normal((4, 3))
    for _step in range(2):  # the second call reads the updated weights
        lin.zero_grad()
        torch_lin.zero_grad()
        tx = torch.tensor(x, requires_grad=True)
        nx = ng.tensor(x, requires_grad=True)
        (torch.sigmoid(torch_lin(tx)) * 2.0).pow(2).sum().backward()
        y = f(nx)
        y.pow(2).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(),
                                   (torch.sigmoid(torch_lin(tx)) * 2.0).detach().numpy(),
                                   rtol=1e-13)
        np.testing.assert_allclose(lin.weight.grad.numpy(), torch_lin.weight.grad.numpy(),
                                   rtol=1e-12)
        np.testing.assert_allclose(lin.bias.grad.numpy(), torch_lin.bias.grad.numpy(),
                                   rtol=1e-12)
        np.testing.assert_allclose(nx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
        with ng.no_grad(), torch.no_grad():
            lin.weight.sub_(0.1 * lin.weight.grad)
            torch_lin.weight.sub_(0.1 * torch_lin.weight.grad)
    assert len(f.traces) == 1


def test_a_compiled_module():
    lin = ng.nn.Linear(3, 2).double()
    c = ng.compile(lin)
    x = ng.tensor(np.ones((2, 3)), requires_grad=True)
    c(x).sum().backward()
    np.testing.assert_allclose(lin.bias.grad.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), np.tile(lin.weight.detach().numpy().sum(0),
                                                       (2, 1)), rtol=1e-14)


def test_tuple_outputs():
    c = ng.compile(lambda x, w: (x * w, (x @ w).sum()))
    rng = np.random.default_rng(4)
    x, w = ng.tensor(rng.standard_normal(3), requires_grad=True), \
        ng.tensor(rng.standard_normal(3), requires_grad=True)
    a, s = c(x, w)
    assert a.grad_fn is not None and s.shape == ()
    (a * 2.0).sum().add(s * 3.0).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * w.detach().numpy() + 3 * w.detach().numpy())
    np.testing.assert_allclose(w.grad.numpy(), 5 * x.detach().numpy())


def test_new_shapes_and_dtypes_retrace_bounded():
    c = ng.compile(lambda x: (x * x).sum(-1), max_traces=2)
    for n, dt in ((3, np.float64), (4, np.float64), (4, np.float32), (3, np.float64)):
        x = ng.tensor(np.arange(float(n), dtype=dt), requires_grad=True)
        y = c(x)
        assert y.dtype == x.dtype and y.item() == pytest.approx((np.arange(n) ** 2).sum())
        y.backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.arange(n))
    assert len(c.traces) == 2


def test_a_value_dependent_branch_takes_the_branch_of_each_call():
    def f(x):
        return x * 2.0 if float(x.sum()) > 0 else -x
    c = ng.compile(f, check=True)
    np.testing.assert_allclose(c(ng.ones(3)).numpy(), 2 * np.ones(3))
    np.testing.assert_allclose(c(-ng.ones(3)).numpy(), np.ones(3))
    np.testing.assert_allclose(c(3 * ng.ones(3)).numpy(), 6 * np.ones(3))
    # float() reads the sum itself (not only its sign): each new sum is traced anew
    assert len(c.traces) == 3
    np.testing.assert_allclose(c(-ng.ones(3)).numpy(), np.ones(3))
    assert len(c.traces) == 3  # that input's trace, replayed


def test_no_grad_and_inputs_without_grad_record_nothing():
    c = ng.compile(lambda x: ng.exp(x) * 3.0)
    x = ng.tensor([0.0, 1.0], dtype=ng.float64, requires_grad=True)
    with ng.no_grad():
        y = c(x)
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(y.numpy(), 3 * np.exp([0.0, 1.0]), rtol=1e-15)
    z = c(ng.tensor([0.0, 1.0], dtype=ng.float64))
    assert not z.requires_grad and z.grad_fn is None
    assert c(x).requires_grad


def test_backward_twice_needs_retain_graph():
    c = ng.compile(lambda x: (x * x).sum())
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = c(x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_create_graph_says_it_is_not_supported():
    c = ng.compile(lambda x: (x ** 3).sum())
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="create_graph=True through a compiled"):
        ng.autograd.grad(c(x), x, create_graph=True)
    (g,) = ng.autograd.grad(c(x), x)  # without create_graph: fine
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0])


def test_grad_fn_name_and_repr():
    def square(x):
        return x * x
    c = ng.compile(square)
    assert repr(c) == "<numbagrad.compile(square)>" and c.__name__ == "square"
    y = c(ng.tensor([1.0, 2.0], requires_grad=True))
    assert y.grad_fn.name() == "CompiledFunctionBackward"
    assert "grad_fn=<CompiledFunctionBackward>" in repr(y)


def test_unsupported_outputs_and_ops_say_so():
    with pytest.raises(NotImplementedError, match="must return a Tensor or a tuple"):
        ng.compile(lambda x: {"y": x * 2})(ng.ones(2))
    from test_compile import Cube
    with pytest.raises(NotImplementedError, match="py_function.*does not support yet"):
        ng.compile(lambda x: Cube.apply(x).sum())(ng.ones(4))
    z = ng.ones(2, requires_grad=True) * 2.0  # a non-leaf of another graph, closed over
    with pytest.raises(NotImplementedError, match="another autograd graph"):
        ng.compile(lambda x: x * z)(ng.ones(2, requires_grad=True))


def test_two_threads_get_their_own_results():
    c = ng.compile(mlp)
    arrays = [_mlp_arrays(s) for s in range(4)]
    expected = []
    for a in arrays:
        ins = _leaves(a)
        mlp(*ins).pow(2).sum().backward()
        expected.append([t.grad.numpy() for t in ins])
    c(*_leaves(arrays[0]))  # trace first; the replays then run concurrently
    errors = []

    def work(k):
        for _ in range(30):
            ins = _leaves(arrays[k])
            c(*ins).pow(2).sum().backward()
            for t, e in zip(ins, expected[k]):
                if not np.allclose(t.grad.numpy(), e, rtol=1e-12, atol=1e-13):
                    errors.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("transform", [False, True])
def test_random_ops_refuse_to_be_traced(transform):
    """A draw made during the trace would be replayed, the same numbers, at every call."""
    drop = ng.nn.Dropout(0.5)

    def f(x):
        return (drop(x) * ng.randn(3, dtype=ng.float64)).sum()

    compiled = ng.compile(ng.func.grad(f)) if transform else ng.compile(f)
    x = np.ones(3) if transform else ng.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(NotImplementedError, match="random ops"):
        compiled(x)
    drop.eval()  # no draw in eval mode, but randn still draws
    with pytest.raises(NotImplementedError, match="random ops"):
        compiled(x)
    # outside a trace, random ops work as before
    assert drop.train()(ng.ones(4)).shape == (4,)


def test_an_argument_returned_as_is_is_that_argument_at_every_call():
    """``x.double()`` of a float64 x is x itself (eager, torch): the compiled function
    returns the argument of each call, not the value it had when traced."""
    f = ng.compile(lambda x, y: (x.double(), (x * y).sum()))
    for k in range(3):
        x = ng.tensor(np.arange(3.0) + k, requires_grad=True)
        y = ng.tensor(np.full(3, 2.0), requires_grad=True)
        same, total = f(x, y)
        assert same is x
        assert total.item() == float(((np.arange(3.0) + k) * 2.0).sum())
        total.backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0))
