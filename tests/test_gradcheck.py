"""gradcheck / gradgradcheck against torch.autograd's: verdicts, error messages, warnings."""

import re
import sys
import warnings

import numpy as np
import pytest
from oracle import both, same

import numbagrad as ng
from numbagrad.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

CHECK = {ng: gradcheck, torch: torch.autograd.gradcheck}
CHECK2 = {ng: gradgradcheck, torch: torch.autograd.gradgradcheck}
ERROR = {ng: GradcheckError,
         torch: sys.modules["torch.autograd.gradcheck"].GradcheckError}

X = np.array([[0.7, -1.3, 0.4], [1.9, 0.2, -0.6]])
Y = np.array([[0.5, 1.1, -0.8], [-0.3, 0.9, 1.4]])
V = np.array([0.3, -1.2, 0.8])


def t64(lib, data, requires_grad=True):
    return lib.tensor(data, dtype=lib.float64, requires_grad=requires_grad)


# (function of lib, inputs of lib): composite functions, tuple inputs, several outputs,
# non-tensor and constant inputs passed through, 0-d tensors, non-differentiable outputs
CASES = {
    "unary_chain": (lambda lib: lambda x: (x.exp() * x.sin()).tanh() + x.sigmoid() / 3.0,
                    lambda lib: (t64(lib, X),)),
    "scalar_output": (lambda lib: lambda x: (x * x.cos()).sum(),
                      lambda lib: t64(lib, X)),
    "tuple_inputs_matmul": (lambda lib: lambda a, b: (a @ b.t()).tanh(),
                            lambda lib: (t64(lib, X), t64(lib, Y))),
    "several_outputs": (lambda lib: lambda a, v: (a * v, (a + v).sum(dim=1), lib.softmax(a, -1)),
                        lambda lib: (t64(lib, X), t64(lib, V))),
    "reductions": (lambda lib: lambda a: (a.logsumexp(1), a.norm(), a.var(0), a.max(1)[0]),
                   lambda lib: t64(lib, X)),
    "non_tensor_and_constant_inputs":
        (lambda lib: lambda a, k, c, b: a.pow(k) * c + b.exp(),
         lambda lib: (t64(lib, X), 3, t64(lib, Y, requires_grad=False), t64(lib, V))),
    "zero_dim_input": (lambda lib: lambda s, a: s * a.log_softmax(-1) + s ** 2,
                       lambda lib: (t64(lib, 0.7), t64(lib, X))),
    "integer_output_too": (lambda lib: lambda a: (a.relu() * 2, a.argmax()),
                           lambda lib: t64(lib, X)),
    "indexing_and_shapes": (lambda lib: lambda a: lib.cat([a[:, 1:], a.t()[:2]], 0).reshape(-1),
                            lambda lib: t64(lib, X)),
}


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_passes_where_torch_passes(name, fast_mode):
    fn, inputs = CASES[name]
    assert same(lambda lib: CHECK[lib](fn(lib), inputs(lib), fast_mode=fast_mode)) is True


# cases whose ops all have forward-mode rules in torch (its max(dim) has one too)
FORWARD_CASES = sorted(CASES)


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("name", FORWARD_CASES)
def test_forward_ad_check_passes_where_torch_passes(name, fast_mode):
    fn, inputs = CASES[name]
    assert same(lambda lib: CHECK[lib](fn(lib), inputs(lib), fast_mode=fast_mode,
                                       check_forward_ad=True)) is True
    assert same(lambda lib: CHECK[lib](fn(lib), inputs(lib), fast_mode=fast_mode,
                                       check_forward_ad=True, check_backward_ad=False)) is True


def _wrong_tangent(lib):
    """An autograd.Function whose backward is right and whose forward rule (jvp) is not
    in torch; in numbagrad, a function whose derivative is right in both modes but whose
    forward mode is checked against the wrong numbers: both detach inside."""
    return lambda x: x.detach() ** 2 + x


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_forward_ad_mismatch_is_torchs_error(fast_mode):
    def run(lib):
        with pytest.raises(ERROR[lib]) as info:
            CHECK[lib](_wrong_tangent(lib), t64(lib, V), fast_mode=fast_mode,
                       check_forward_ad=True, check_backward_ad=False)
        return str(info.value)
    ours, theirs = both(run)
    (text, numbers), (their_text, their_numbers) = map(_text_and_numbers, (ours, theirs))
    assert text == their_text
    assert text.startswith("Jacobian computed with forward mode mismatch for output 0 with "
                           "respect to input 0,")
    np.testing.assert_allclose(numbers, their_numbers, rtol=1e-12, atol=0)


@pytest.mark.parametrize("mode", ["check_fwd_over_rev", "check_batched_grad"])
def test_gradgradcheck_modes_match_torch(mode):
    def run(lib):
        lib.manual_seed(0)
        return CHECK2[lib](lambda a, b: (a * b.sin()).tanh().sum(1),
                           (t64(lib, X), t64(lib, Y)), **{mode: True})
    assert same(run) is True


@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_grad_check_passes_where_torch_passes(name):
    fn, inputs = CASES[name]

    def run(lib):
        lib.manual_seed(0)
        return CHECK[lib](fn(lib), inputs(lib), check_batched_grad=True)
    assert same(run) is True


def test_batched_grad_check_catches_a_wrong_batched_gradient(monkeypatch):
    """A batched backward that differs from the one-at-a-time ones fails the check with
    torch's message (the batched path broken on purpose here)."""
    from numbagrad.autograd import gradcheck_modes

    real = gradcheck_modes.grad

    def off_by_one(*args, is_grads_batched=False, **kw):
        out = real(*args, is_grads_batched=is_grads_batched, **kw)
        return tuple(g + 1.0 for g in out) if is_grads_batched else out
    monkeypatch.setattr(gradcheck_modes, "grad", off_by_one)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda a: a.sin(), t64(ng, V), check_batched_grad=True)
    assert str(info.value).startswith("For output 0 and input 0:\n\ngradcheck or "
                                      "gradgradcheck failed while testing batched gradient")
    assert "Got:\ntensor([[" in str(info.value)


def test_grad_is_grads_batched_matches_torch():
    def run(lib):
        x = t64(lib, [[1., 2., 3.], [0.5, -1., 2.]])
        w = t64(lib, [0.3, -0.2, 0.9])
        y = (x * w).sin()
        g = t64(lib, np.arange(12.).reshape(2, 2, 3), requires_grad=False)
        plain = lib.autograd.grad(y, (x, w), g, is_grads_batched=True, retain_graph=True)
        graph = lib.autograd.grad(y.sum(), x, t64(lib, [1., -2.], requires_grad=False),
                                  is_grads_batched=True, create_graph=True)
        return [np.round(a.detach().numpy(), 10).tolist() for a in (*plain, *graph)], \
            graph[0].requires_grad
    same(run)
    same(lambda lib: lib.autograd.grad(lib.ones(3, requires_grad=True) * 2,
                                       lib.ones(3, requires_grad=True), lib.ones(2, 2),
                                       is_grads_batched=True, allow_unused=True))


def test_inputs_are_restored_and_grads_left_alone():
    x = t64(ng, X)
    before = x.detach().numpy().copy()
    assert gradcheck(lambda a: (a * a).sum(), x)
    assert np.array_equal(x.detach().numpy(), before)
    assert x.grad is None and x._version == 0


def wrong(lib):
    # analytical derivative 1 (the detached square is a constant to autograd); numerical 2x+1
    return lambda x: x.detach() ** 2 + x


def test_wrong_derivative_raises_torchs_error():
    def run(lib):
        with pytest.raises(ERROR[lib]) as info:
            CHECK[lib](wrong(lib), t64(lib, V))
        return str(info.value)

    ours, theirs = both(run)
    assert ours.splitlines()[0] == theirs.splitlines()[0] == \
        "Jacobian mismatch for output 0 with respect to input 0,"
    assert ours == theirs  # numbers and their printing too
    assert ours.endswith("analytical:tensor([[1., 0., 0.],\n        [0., 1., 0.],\n"
                         "        [0., 0., 1.]], dtype=torch.float64)\n")
    assert isinstance(GradcheckError("x"), RuntimeError)


def test_wrong_derivative_of_a_later_output_and_input():
    def run(lib):
        return CHECK[lib](lambda a, b: (a * 2, b.detach() * b), (t64(lib, X), t64(lib, V)))

    ours, theirs = both(run)
    assert ours.startswith("GradcheckError: Jacobian mismatch for output 1 with respect to "
                           "input 1,\nnumerical:tensor(")
    # torch's analytical Jacobian shows -0.0000 where numbagrad's backward, which adds into
    # zeroed adjoints, has 0.0000 (0.0 + -0.0 == 0.0); the values are equal
    assert ours.replace("-0.0000", " 0.0000") == theirs.replace("-0.0000", " 0.0000")


def _text_and_numbers(msg):
    """A message split into its words and its numbers (floats), to compare the text exactly
    and the numbers to a tolerance."""
    numbers = [float(n) for n in re.findall(r"-?\d+\.\d+(?:e[-+]\d+)?", msg)]
    return re.sub(r"-?\d+\.\d+(?:e[-+]\d+)?", "#", msg), numbers


def test_wrong_derivative_in_fast_mode_gives_torchs_message():
    # The random projections are torch's own (same generator stream), so the numbers match,
    # but only up to summation order: v . u of three float64s differs in the last bit between
    # torch's kernel and NumPy's on some CPUs (AMD EPYC here: ...947 vs ...949).
    ours, theirs = both(lambda lib: CHECK[lib](wrong(lib), t64(lib, V), fast_mode=True))
    (text, numbers), (their_text, their_numbers) = map(_text_and_numbers, (ours, theirs))
    assert text == their_text
    assert len(numbers) == len(their_numbers) > 5
    np.testing.assert_allclose(numbers, their_numbers, rtol=1e-12, atol=0)
    msg = ours
    assert msg.startswith("GradcheckError: Jacobian mismatch for output 0 with respect to input "
                          "0,\nnumerical:")
    assert "computed \nin fast mode" in msg and "The max per-element difference (slow mode)" in msg


def test_fast_mode_vectors_are_torchs():
    from numbagrad.autograd.gradcheck import _TorchCPUGenerator
    ours, g = _TorchCPUGenerator(), torch.Generator()
    for n in (3, 1000):
        assert np.array_equal(ours.rand(n), torch.rand(n, generator=g).numpy())


def test_raise_exception_false_returns_false():
    assert same(lambda lib: CHECK[lib](wrong(lib), t64(lib, V), raise_exception=False)) is False
    assert same(lambda lib: CHECK[lib](wrong(lib), t64(lib, V), raise_exception=False,
                                       fast_mode=True)) is False


def test_float32_inputs_warn_as_torch_does():
    def run(lib):
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ok = CHECK[lib](lambda a: a * 2, x, eps=1e-2, atol=1e-2)
            try:
                CHECK[lib](lambda a: a * 2, x)  # eps=1e-6 is too small for float32
                verdict = "passed"
            except ERROR[lib] as e:
                verdict = str(e)
        return ok, verdict, [(w.category, str(w.message)) for w in caught
                             if not issubclass(w.category, ResourceWarning)]  # (gc's)

    ok, verdict, caught = same(run)
    assert ok is True
    assert verdict.startswith("Jacobian mismatch for output 0 with respect to input 0,")
    assert caught[0] == (UserWarning, "Input #0 requires gradient and is not a double precision "
                         "floating point or complex. This check will likely fail if all the "
                         "inputs are not of double precision floating point or complex. ")
    with pytest.warns(UserWarning, match=r"^Input #1 requires gradient and is not a double"):
        x32 = ng.tensor(V, dtype=ng.float32, requires_grad=True)
        gradcheck(lambda a, b: a * b, (t64(ng, V), x32), eps=1e-3, atol=1e-2, rtol=1e-2)


def test_functions_without_differentiable_outputs():
    assert same(lambda lib: CHECK[lib](lambda a: lib.zeros(3, dtype=lib.float64),
                                       t64(lib, V))) is True
    msg = same(lambda lib: CHECK[lib](lambda a: a.detach() * 2, t64(lib, V)))
    assert msg == "GradcheckError: Numerical gradient for function expected to be zero"


def test_input_errors_match_torch():
    def no_grad_input(lib):
        with pytest.raises(ValueError) as info:
            CHECK[lib](lambda a: a * 2, t64(lib, V, requires_grad=False))
        return str(info.value)

    ours, theirs = both(no_grad_input)
    assert ours == theirs and "none of them have requires_grad=True" in ours
    msg = same(lambda lib: CHECK[lib](lambda a: a * 2, t64(lib, V).expand(2, 3)))
    assert msg.startswith("RuntimeError: The 0th input has a dimension with stride 0.")


def test_option_errors():
    x = t64(ng, V)
    for lib in (ng, torch):
        with pytest.raises(AssertionError, match="at least one of check_forward_ad"):
            CHECK[lib](lambda a: a * 2, t64(lib, V), check_backward_ad=False)
        with pytest.raises(AssertionError, match="check_batched_grad=True requires"):
            CHECK[lib](lambda a: a * 2, t64(lib, V), check_batched_grad=True,
                       check_backward_ad=False, check_forward_ad=True)
    with pytest.raises(NotImplementedError, match="numbagrad"):
        gradcheck(lambda a: a * 2, x, check_forward_ad=True, check_batched_forward_grad=True)
    # not a GradcheckError: raise_exception=False does not turn it into False
    with pytest.raises(NotImplementedError):
        gradcheck(lambda a: a * 2, x, raise_exception=False, check_forward_ad=True,
                  check_batched_forward_grad=True)
    with pytest.raises(AssertionError, match="check_undefined_grad=True requires"):
        gradgradcheck(lambda a: a * 2, x, check_rev_over_rev=False, check_fwd_over_rev=True)


def test_a_function_differentiating_inside_sees_the_perturbed_inputs():
    # func runs its own backward: each perturbed evaluation must record the perturbed value
    # of x (a tape caches a leaf's value at its first use)
    def fn(lib):
        def f(a):
            y = (a ** 3).sum()
            (g,) = lib.autograd.grad(y, a)
            return g.detach() + a  # numerically d/da = 6a + 1, analytically 1
        return f

    msg = same(lambda lib: CHECK[lib](fn(lib), t64(lib, V)))
    assert msg.startswith("GradcheckError: Jacobian mismatch for output 0 with respect to input "
                          "0,\nnumerical:tensor([[ 2.8000,")


# ---- gradgradcheck (second order: needs grad(create_graph=True)) -------------------------
GRADGRAD_CASES = {
    "cube": (lambda lib: lambda x: x ** 3, lambda lib: t64(lib, V)),
    "composite": (lambda lib: lambda x: (x.sin() * x.exp()).sum() + x.tanh(),
                  lambda lib: t64(lib, V)),
    "tuple_inputs_several_outputs":
        (lambda lib: lambda a, b: (a @ b.t(), (a * b).sigmoid().sum(0)),
         lambda lib: (t64(lib, X), t64(lib, Y))),
    "non_tensor_input": (lambda lib: lambda a, k: (a.pow(k) * a.log_softmax(-1)).sum(),
                         lambda lib: (t64(lib, X), 2)),
}


@pytest.mark.parametrize("name", sorted(GRADGRAD_CASES))
def test_gradgradcheck_passes_where_torch_passes(name):
    fn, inputs = GRADGRAD_CASES[name]

    def run(lib):
        (ng.manual_seed if lib is ng else torch.manual_seed)(0)
        return CHECK2[lib](fn(lib), inputs(lib))

    assert same(run) is True


def test_gradgradcheck_with_given_and_non_contiguous_grad_outputs():
    def run(lib):
        x = t64(lib, X)
        gy = t64(lib, Y)  # requires grad: checked as an input too
        given = CHECK2[lib](lambda a: a.exp() * a, x, gy)
        fixed = CHECK2[lib](lambda a: a.exp() * a, x, t64(lib, Y, requires_grad=False))
        noncontig = CHECK2[lib](lambda a: a.exp() * a, x, gen_non_contig_grad_outputs=True)
        fast = CHECK2[lib](lambda a: (a ** 3).sum(1), x, fast_mode=True)
        return given, fixed, noncontig, fast

    assert same(run) == (True, True, True, True)


def test_gradgradcheck_detects_a_wrong_second_derivative():
    # first derivative v * x.detach() has the right value but no graph back to x
    def run(lib):
        with pytest.raises(ERROR[lib]) as info:
            CHECK2[lib](lambda a: a * a.detach() / 2, t64(lib, V), t64(lib, V * 0 + 1))
        return str(info.value)

    ours, theirs = both(run)
    assert ours.splitlines()[0] == theirs.splitlines()[0] == \
        "Jacobian mismatch for output 0 with respect to input 0,"
    assert ours == theirs
    assert same(lambda lib: CHECK2[lib](lambda a: a * a.detach() / 2, t64(lib, V),
                                        raise_exception=False)) is False


# Inputs that are not leaves: the perturbation writes their memory, and the perturbed
# evaluations (which differentiate their own graph here) must see it, not the value their
# node kept on its tape.
SQUARE = np.array([[0.7, -1.3, 0.4], [1.9, 0.2, -0.6], [0.5, 1.1, -0.8]])
NON_LEAF_INPUTS = {
    "column_slice": lambda lib: t64(lib, SQUARE)[:, :2],
    "row_slice_step": lambda lib: t64(lib, SQUARE)[::2],
    "transpose": lambda lib: t64(lib, SQUARE).t(),
    "expand": lambda lib: t64(lib, V).expand(2, 3),  # stride 0: both refuse it
    "op_output": lambda lib: t64(lib, SQUARE) + 1.0,
    "leaf": lambda lib: t64(lib, SQUARE),
    "non_contiguous_leaf": lambda lib: t64(lib, SQUARE)[:, ::2].detach().requires_grad_(),
}


@pytest.mark.parametrize("name", sorted(NON_LEAF_INPUTS))
def test_gradgradcheck_on_views_and_non_leaf_inputs_as_torch(name):
    def run(lib):
        (ng.manual_seed if lib is ng else torch.manual_seed)(0)
        x = NON_LEAF_INPUTS[name](lib)
        first = CHECK[lib](lambda q: q.matmul(q.t()), (x,))
        second = CHECK2[lib](lambda q: q.matmul(q.t()), (x,))
        third = CHECK2[lib](lambda q: (q.sin() * q).sum(0), (x,), fast_mode=True)
        return first, second, third

    result = same(run)
    if name == "expand":
        assert result.startswith("RuntimeError: The 0th input has a dimension with stride 0.")
    else:
        assert result == (True, True, True)
