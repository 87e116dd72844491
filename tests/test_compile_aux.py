"""numbagrad.compile of transforms with has_aux=True: the aux pytree of every call equals
eager's transform and torch.func's, in NumPy and Tensor modes, without a new trace per call."""

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.func  # noqa: F401 - binds ng.func
from numbagrad.func.transforms import _tree_flatten

KINDS = ("value_and_grad", "grad", "grad_and_value")
rng = np.random.default_rng(0)
W = {"w1": rng.standard_normal((6, 5)), "b1": np.zeros(5), "w2": rng.standard_normal((5, 3))}


def loss(lib, p, x, y):
    h = lib.tanh(x @ p["w1"] + p["b1"])
    logits = h @ p["w2"]
    value = lib.nn.functional.cross_entropy(logits, y)
    return value, {"logits": logits, "h0": h[0], "twice": value * 2, "k": 3,
                   "const": lib.ones(2)}


def _same_tree(got, want, rtol):
    g, gs = _tree_flatten(got)
    w, ws = _tree_flatten(want)
    assert gs == ws
    for a, b in zip(g, w):
        assert type(a) is type(b), (a, b)
        if isinstance(a, ng.Tensor):
            a, b = a.detach().numpy(), b.detach().numpy()
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("numpy_mode", [True, False])
def test_aux_follows_eager_on_every_call(kind, numpy_mode):
    transform = getattr(ng.func, kind)

    def f(p, x, y):
        return loss(ng, p, ng.as_tensor(x), ng.as_tensor(y))

    eager = transform(f, has_aux=True)
    compiled = ng.compile(eager)
    y = rng.integers(0, 3, 4)
    for _ in range(3):
        x = rng.standard_normal((4, 6))
        args = (W, x, y) if numpy_mode else (
            {k: ng.tensor(v, requires_grad=True) for k, v in W.items()}, ng.tensor(x),
            ng.tensor(y))
        _same_tree(compiled(*args), eager(*args), 1e-12)
    assert len(compiled.traces) == 1  # new inputs, same trace: the aux leaves are replayed


@pytest.mark.parametrize("kind", ["grad", "grad_and_value"])
def test_aux_against_torch_func(kind):
    torch = pytest.importorskip("torch")
    x, y = rng.standard_normal((4, 6)), rng.integers(0, 3, 4)

    def tensors_only(lib):  # torch.func's aux holds Tensors only
        def f(p):
            value, aux = loss(lib, p, lib.tensor(x), lib.tensor(y))
            return value, {k: v for k, v in aux.items() if k != "k"}
        return f

    ours = ng.compile(getattr(ng.func, kind)(tensors_only(ng), has_aux=True))
    theirs = getattr(torch.func, kind)(tensors_only(torch), has_aux=True)
    got = _tree_flatten(ours({k: ng.tensor(v) for k, v in W.items()}))[0]
    want = _tree_flatten(theirs({k: torch.tensor(v) for k, v in W.items()}))[0]
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_aux_of_float32_values_keeps_their_dtype():
    x = rng.standard_normal((4, 6)).astype(np.float32)
    w = {k: v.astype(np.float32) for k, v in W.items()}
    y = rng.integers(0, 3, 4)

    def f(p):
        return loss(ng, p, ng.tensor(x), ng.tensor(y))

    (value, aux), grads = ng.compile(ng.func.value_and_grad(f, has_aux=True))(w)
    (e_value, e_aux), e_grads = ng.func.value_and_grad(f, has_aux=True)(w)
    assert aux["logits"].dtype == e_aux["logits"].dtype == np.float32
    np.testing.assert_array_equal(aux["logits"], e_aux["logits"])
    assert value == e_value


def test_aux_that_is_not_a_pair_gives_eagers_error():
    compiled = ng.compile(ng.func.grad(lambda x: (x * x).sum(), has_aux=True))
    with pytest.raises(RuntimeError, match=r"should be a tuple: \(output, aux\)"):
        compiled(np.ones(3))


def test_aux_read_by_python_is_guarded():
    """A detached aux value is a value read out of the trace: a guard, so a new input
    value gives a new trace, and every result is still eager's."""
    def f(x):
        s = (x * x).sum()
        return s, s.detach()

    compiled = ng.compile(ng.func.value_and_grad(f, has_aux=True))
    for x in (np.ones(3), np.full(3, 2.0)):
        (value, aux), g = compiled(x)
        assert aux == value == float((x * x).sum())
        np.testing.assert_array_equal(g, 2 * x)
