"""grad_fn objects as torch has them: per-op classes, one object per node, next_functions
with torch's None entries, metadata, node hooks, custom Functions' shared node; module reprs."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

EXPRESSIONS = ["x + 2", "x * 2", "2 - x", "x - 2", "x / 2", "x ** 2", "2 ** x", "x.sum()",
               "x.exp()", "x[0]", "x.reshape(3, 1)", "x @ x", "lib.stack([x, x])",
               "lib.nn.functional.dropout(x, p=1.0)", "x.unsqueeze(0)",
               "lib.where(x > 0, x, x * 3)", "x.masked_fill(x > 1, 0.5)", "x.clamp(min=0.1)"]


def _leaf(lib):
    return lib.tensor([0.5, 1.5, -2.0], requires_grad=True)


def _shape(fns):
    """next_functions as names (None for an operand no gradient flows to)."""
    return [None if f is None else type(f).__name__ for f, _ in fns]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_node_class_and_next_functions_as_torch(expr):
    got = {}
    for lib in (torch, ng):
        x = _leaf(lib)  # noqa: F841 - used by the expression
        y = eval(expr, {"lib": lib, "x": x})  # noqa: S307 - test expressions
        got[lib] = (type(y.grad_fn).__name__, y.grad_fn.name(), _shape(y.grad_fn.next_functions))
    assert got[ng] == got[torch]


def test_one_object_per_node_and_per_leaf():
    x = _leaf(ng)
    y = x * 2
    assert y.grad_fn is y.grad_fn
    z = y + x
    (acc_y, _), (acc_x, _) = y.grad_fn.next_functions[0], z.grad_fn.next_functions[1]
    assert acc_y is acc_x and acc_x.variable is x
    assert z.grad_fn.next_functions[0][0] is y.grad_fn
    assert isinstance(y.grad_fn, ng.autograd.graph.Node)


def test_metadata_is_kept_with_the_node():
    x = _leaf(ng)
    y = x.exp()
    y.grad_fn.metadata["tag"] = 7
    assert y.grad_fn.metadata == {"tag": 7}
    assert (y * 1).grad_fn.metadata == {}


def _custom(lib):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3
    return Twice


def test_custom_function_outputs_share_one_node():
    seen = {}
    for lib in (torch, ng):
        x = _leaf(lib)
        a, b = _custom(lib).apply(x)
        assert a.grad_fn is b.grad_fn
        s = a + b
        seen[lib] = (type(a.grad_fn).__name__, a.grad_fn.name(),
                     [(type(f).__name__, k) for f, k in s.grad_fn.next_functions],
                     repr(a.grad_fn).split(" object")[0])
        s.sum().backward()
        seen[lib] += (x.grad.tolist(),)
    assert seen[ng] == seen[torch]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_node_hooks_as_torch(dtype):
    calls = {}
    for lib in (torch, ng):
        log = calls[lib] = []
        x = lib.tensor([0.5, 1.5, -2.0], dtype=getattr(lib, dtype), requires_grad=True)
        y = x * 2

        def pre(grad_outputs, log=log):
            log.append(("pre", [g.tolist() for g in grad_outputs]))
            return (grad_outputs[0] * 3,)

        def post(grad_inputs, grad_outputs, log=log):
            log.append(("post", [None if g is None else g.tolist() for g in grad_inputs],
                        [g.tolist() for g in grad_outputs]))
            return (grad_inputs[0] + 1, None)

        y.grad_fn.register_prehook(pre)
        handle = y.grad_fn.register_hook(post)
        (y * y).sum().backward()
        log.append(("grad", x.grad.tolist()))
        handle.remove()
        x.grad = None
        y = x * 2
        (y * y).sum().backward()
        log.append(("after remove", x.grad.tolist()))
    assert calls[ng] == calls[torch]


def test_post_hook_sees_each_input_of_a_binary_node():
    got = {}
    for lib in (torch, ng):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = a * b
        log = got[lib] = []
        c.grad_fn.register_hook(lambda gi, go, log=log: log.append([g.tolist() for g in gi]))
        c.sum().backward()
        log.append((a.grad.tolist(), b.grad.tolist()))
    assert got[ng] == got[torch]


def test_sequential_repr_does_not_fold_module_list_does():
    for kind in ("Sequential", "ModuleList"):
        reprs = []
        for lib in (torch, ng):
            layers = [lib.nn.Linear(2, 2) for _ in range(3)]
            mod = getattr(lib.nn, kind)(*layers) if kind == "Sequential" else \
                lib.nn.ModuleList(layers)
            reprs.append(repr(mod))
        assert reprs[0] == reprs[1]


def test_graph_walk_reaches_every_leaf():
    x = _leaf(ng)
    w = ng.tensor(np.ones(3), requires_grad=True)
    loss = ((x * w).exp() + 1).sum()
    leaves, stack = [], [loss.grad_fn]
    while stack:
        fn = stack.pop()
        if type(fn).__name__ == "AccumulateGrad":
            leaves.append(fn.variable)
        stack.extend(f for f, _ in fn.next_functions if f is not None)
    assert {id(t) for t in leaves} == {id(x), id(w)}
