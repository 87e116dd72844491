"""Activations beyond the basics (functions and modules) against torch: the composed ones'
values, gradients and node names, the modules' reprs, and the errors. The table ops among
them (selu, celu, hardswish...) are also covered by the generated tests in test_ops.py."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

CALLS = ["F.relu6(x * 4)", "F.selu(x)", "F.celu(x, 0.7)", "F.softsign(x)", "F.hardsigmoid(x * 3)",
         "F.hardswish(x * 3)", "F.logsigmoid(x * 20)", "F.tanhshrink(x)", "F.softshrink(x, 0.3)",
         "F.hardshrink(x, 0.3)", "F.threshold(x, 0.1, 20.0)", "F.glu(x, 1)", "F.glu(x)",
         "F.softmin(x, 1)", "F.softmin(x, dim=0)", "F.prelu(x, w)", "F.prelu(x, w[:1])"]


def _run(lib, call, x, w, dtype):
    xt = lib.tensor(x, dtype=dtype, requires_grad=True)
    wt = lib.tensor(w, dtype=dtype, requires_grad=True)
    y = eval(call, {"F": lib.nn.functional, "x": xt, "w": wt})  # noqa: S307 - test calls
    g = np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape))
    y.backward(lib.tensor(g, dtype=dtype))
    grads = [None if t.grad is None else t.grad.numpy() for t in (xt, wt)]
    return y.detach().numpy(), grads, y.grad_fn.name()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("call", CALLS)
def test_values_gradients_and_node_as_torch(call, dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, (3, 4))
    w = np.array([0.25, -0.5, 0.1, 0.3])
    x = np.where(np.abs(np.abs(x) - 0.3) < 0.02, 0.5, x)  # away from the shrinks' kinks
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    mine = _run(ng, call, x, w, getattr(ng, dtype))
    theirs = _run(torch, call, x, w, getattr(torch, dtype))
    np.testing.assert_allclose(mine[0], theirs[0], **tol)
    for a, b in zip(mine[1], theirs[1]):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, **tol)
    if "glu" not in call:  # glu is composed here: its node is the product's (README)
        assert mine[2] == theirs[2]


def test_gumbel_softmax_samples_a_distribution_and_hard_is_one_hot():
    ng.manual_seed(0)
    logits = ng.tensor(np.log([[0.7, 0.2, 0.1]] * 4000), requires_grad=True)
    y = ng.nn.functional.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.sum(-1).detach().numpy(), 1.0, rtol=1e-12)
    hard = ng.nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and np.all(h.sum(-1) == 1)
    # one-hot draws follow softmax(logits): frequencies within 4 sigma of 0.7/0.2/0.1
    np.testing.assert_allclose(h.mean(0), [0.7, 0.2, 0.1], atol=4 * np.sqrt(0.25 / 4000))
    hard.sum().backward()  # the straight-through gradient is the soft sample's
    assert logits.grad is not None and np.all(np.isfinite(logits.grad.numpy()))


MODULES = ["ReLU6()", "SELU()", "CELU(0.5)", "Softsign()", "Hardsigmoid()", "Hardswish()",
           "LogSigmoid()", "Tanhshrink()", "Softshrink()", "Hardshrink(0.3)",
           "Threshold(0.1, 20)", "Softmin(1)", "GLU()", "PReLU(3)", "ReLU6(inplace=True)"]


@pytest.mark.parametrize("expr", MODULES)
def test_module_repr_and_output_as_torch(expr):
    x = np.random.default_rng(1).uniform(-2, 2, (2, 3, 4)).astype(np.float32)
    outs = []
    for lib in (torch, ng):
        m = eval("lib.nn." + expr, {"lib": lib})  # noqa: S307 - test expressions
        outs.append((repr(m), m(lib.tensor(x)).detach().numpy()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-6)


def test_prelu_module_learns_its_weight_as_torch():
    x = np.random.default_rng(2).uniform(-2, 2, (2, 3, 4)).astype(np.float32)
    grads = []
    for lib in (torch, ng):
        m = lib.nn.PReLU(3)
        assert [n for n, _ in m.named_parameters()] == ["weight"]
        m(lib.tensor(x)).sum().backward()
        grads.append(m.weight.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)


ERRORS = ["F.softshrink(x, -1.0)", "F.softshrink(x.double(), -2.5)", "F.hardswish(x.long())",
          "F.logsigmoid(x.long())", "F.glu(x.long())", "F.celu(x.long())", "F.glu(x[:, :3], 1)", "F.glu(x.sum())",
          "F.prelu(x, lib.ones(5))", "F.prelu(x, lib.ones(2, 2))", "F.selu(x.long())"]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_as_torch(call):
    caught = []
    for lib in (torch, ng):
        x = lib.ones(2, 4)
        with pytest.raises(Exception) as e:
            eval(call, {"F": lib.nn.functional, "x": x, "lib": lib})  # noqa: S307
        caught.append((type(e.value), str(e.value)))
    assert caught[1] == caught[0]
