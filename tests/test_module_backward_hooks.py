"""nn.Module.register_full_backward_hook and register_full_backward_pre_hook against torch:
the calls each hook sees (order, grad_input, grad_output), the gradients a returned tuple
makes, torch's warning and errors, handles, and the node a hooked output hangs from."""

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
W, B = RNG.standard_normal((2, 3)), RNG.standard_normal(2)
X, G = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2))


def _plain(v):
    """Hook arguments as comparable data: tensors as rounded nested lists."""
    if v is None or isinstance(v, (int, float, str)):
        return v
    if isinstance(v, (tuple, list)):
        return [_plain(u) for u in v]
    return np.round(v.detach().numpy().astype(np.float64), 10).tolist()


def _linear(lib):
    m = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W))
        m.bias.copy_(lib.tensor(B))
    return m


def _outcome(scenario, lib):
    """(log of the hooks' calls, result), or the error's type and message."""
    log = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = scenario(lib, log)
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return log, (type(e).__name__, str(e))
    ours = [str(w.message) for w in caught if "backward hook" in str(w.message).lower()]
    return log, _plain(result), ours


def _recorder(log, tag):
    def full(module, grad_input, grad_output):
        log.append((tag, type(module).__name__, _plain(grad_input), _plain(grad_output)))

    def pre(module, grad_output):
        log.append((tag + "-pre", type(module).__name__, _plain(grad_output)))
    return full, pre


def linear_with_both_hooks(lib, log):
    m = _linear(lib)
    full, pre = _recorder(log, "m")
    m.register_full_backward_hook(full)
    m.register_full_backward_pre_hook(pre)
    x = lib.tensor(X, requires_grad=True)
    y = m(x)
    log.append(("node", y.grad_fn.name(), [f.name() for f, _ in y.grad_fn.next_functions]))
    y.backward(lib.tensor(G))
    return x.grad, m.weight.grad, m.bias.grad


def input_without_grad(lib, log):
    m = _linear(lib)
    full, pre = _recorder(log, "m")
    m.register_full_backward_hook(full)
    m.register_full_backward_pre_hook(pre)
    m(lib.tensor(X)).backward(lib.tensor(G))
    return m.weight.grad


def hook_replaces_grad_input(lib, log):
    m = _linear(lib)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2 + 1,))
    x = lib.tensor(X, requires_grad=True)
    (m(x) * 3).backward(lib.tensor(G))
    return x.grad, m.weight.grad


def pre_hook_replaces_grad_output(lib, log):
    m = _linear(lib)
    full, _ = _recorder(log, "m")
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * -3,))
    m.register_full_backward_hook(full)
    x = lib.tensor(X, requires_grad=True)
    m(x).backward(lib.tensor(G))
    return x.grad, m.weight.grad, m.bias.grad


def no_input_grad_hook_returns_a_value(lib, log):
    m = _linear(lib)
    m.register_full_backward_hook(lambda mod, gi, go: (lib.ones(4, 3),))
    m(lib.tensor(X)).sum().backward()


def no_input_grad_hook_returns_nones(lib, log):
    m = _linear(lib)
    m.register_full_backward_hook(lambda mod, gi, go: (None,))
    m(lib.tensor(X)).sum().backward()
    return m.bias.grad


def inplace_on_the_output(lib, log):
    m = _linear(lib)
    m.register_full_backward_hook(_recorder(log, "m")[0])
    y = m(lib.tensor(X, requires_grad=True))
    y.add_(1)


def inplace_under_no_grad_fails_the_backward(lib, log):
    m = _linear(lib)
    m.register_full_backward_hook(_recorder(log, "m")[0])
    y = m(lib.tensor(X, requires_grad=True))
    with lib.no_grad():
        y.mul_(2)
    y.sum().backward()


def inplace_on_an_input_inside_forward(lib, log):
    class AddOneInPlace(lib.nn.Module):
        def forward(self, x):
            return x.mul_(2)

    m = AddOneInPlace()
    m.register_full_backward_hook(_recorder(log, "m")[0])
    m(lib.tensor(X, requires_grad=True) * 1)


def hook_returns_too_many(lib, log):
    m = _linear(lib)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    m(lib.tensor(X, requires_grad=True)).sum().backward()


def pre_hook_returns_too_many(lib, log):
    m = _linear(lib)
    m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    m(lib.tensor(X, requires_grad=True)).sum().backward()


class _Mixed:
    """A module of (tensor, number, tensor) returning (tensor, scalar tensor, int)."""

    @staticmethod
    def make(lib):
        class Mixed(lib.nn.Module):
            def forward(self, a, k, b):
                return a * k + b, (a * b).sum(), 3
        return Mixed()


def several_inputs_and_outputs(lib, log):
    m = _Mixed.make(lib)
    m.register_full_backward_hook(_recorder(log, "mixed")[0])
    a = lib.tensor(X[0], requires_grad=True)
    b = lib.tensor(X[1])  # no grad: its grad_input is zeros, as torch's identity gives it
    out = m(a, 2.0, b)
    ((out[0] * lib.tensor(G[:, 0][:3])).sum() - out[1] / 2).backward(retain_graph=True)
    log.append("second")
    out2 = m(a, 2.0, b)
    (out2[0].sum() + 5 * out2[1]).backward()
    return a.grad


def nested_modules_and_handles(lib, log):
    inner = _linear(lib)
    outer = lib.nn.Sequential(inner, lib.nn.Tanh())
    fi, pi = _recorder(log, "inner")
    fo, po = _recorder(log, "outer")
    handles = [inner.register_full_backward_hook(fi), outer.register_full_backward_hook(fo),
               outer.register_full_backward_pre_hook(po),
               inner.register_full_backward_pre_hook(pi)]
    inner.register_full_backward_hook(lambda mod, gi, go: log.append("prepended"),
                                      prepend=True)
    x = lib.tensor(X, requires_grad=True)
    outer(x).backward(lib.tensor(G))
    handles[0].remove()
    handles[2].remove()
    log.append("removed")
    outer(x).backward(lib.tensor(G))
    return x.grad


def called_twice_in_one_graph(lib, log):
    m = _linear(lib)
    m.register_full_backward_hook(_recorder(log, "m")[0])
    x = lib.tensor(X, requires_grad=True)
    y = m(x)
    z = m(lib.tanh(y) @ lib.tensor(W))
    z.backward(lib.tensor(G))
    return x.grad


def with_forward_hooks(lib, log):
    m = _linear(lib)
    m.register_forward_hook(lambda mod, args, out: out * 2)
    m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    m.register_full_backward_hook(_recorder(log, "m")[0])
    x = lib.tensor(X, requires_grad=True)
    m(x).backward(lib.tensor(G))
    return x.grad


def under_no_grad(lib, log):
    m = _linear(lib)
    m.register_full_backward_hook(_recorder(log, "m")[0])
    with lib.no_grad():
        y = m(lib.tensor(X, requires_grad=True))
    return y.grad_fn is None, y.requires_grad


def second_derivative_through_a_hook(lib, log):
    m = lib.nn.Tanh()
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,))
    x = lib.tensor(X[0], requires_grad=True)
    (g,) = lib.autograd.grad(m(x).sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    return g, gg


SCENARIOS = [linear_with_both_hooks, input_without_grad, hook_replaces_grad_input,
             pre_hook_replaces_grad_output, no_input_grad_hook_returns_a_value,
             no_input_grad_hook_returns_nones, inplace_on_the_output,
             inplace_under_no_grad_fails_the_backward,
             inplace_on_an_input_inside_forward, hook_returns_too_many,
             pre_hook_returns_too_many, several_inputs_and_outputs,
             nested_modules_and_handles, called_twice_in_one_graph, with_forward_hooks,
             under_no_grad, second_derivative_through_a_hook]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_as_torch(scenario):
    assert _outcome(scenario, ng) == _outcome(scenario, torch)


def test_an_output_without_gradient_shows_zeros_where_torch_shows_none():
    """The limits page's difference: outputs share one node here, so an unused one gets a
    zero gradient; torch hands None."""
    seen = {}
    for lib in (ng, torch):
        m = _Mixed.make(lib)
        m.register_full_backward_hook(lambda mod, gi, go, lib=lib: seen.__setitem__(lib, go))
        a = lib.tensor(X[0], requires_grad=True)
        m(a, 2.0, lib.tensor(X[1]))[0].sum().backward()
    assert seen[torch][1] is None and seen[torch][2] is None
    assert not np.any(seen[ng][1].numpy()) and seen[ng][2] is None
    np.testing.assert_array_equal(seen[ng][0].numpy(), seen[torch][0].numpy())
