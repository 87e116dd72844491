"""The public forms made from the records (ops/elementwise/public.py): the forms each record
declares are torch's, and each one computes torch's value, gradient and grad_fn; the in-place
forms change the tensor they are given, as torch's do; two-input functions treat integer
inputs as torch's."""

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.engine.registry import OPS

torch = pytest.importorskip("torch")

# numbagrad's forms beyond torch's: Tensor.silu (torch has silu in nn.functional only)
EXTENSIONS = {("silu", "method")}
DECLARED = [(name, forms, op) for op in OPS if op.api
            for name, forms in ((op.name, op.api), *op.aliases.items())]
IDS = [name for name, _, _ in DECLARED]


def _has(lib, name, form):
    if form == "function":
        return hasattr(lib, name)
    if form == "method":
        return hasattr(lib.Tensor, name)
    if form == "inplace":
        return hasattr(lib.Tensor, name + "_")
    return hasattr(lib, name + "_")


@pytest.mark.parametrize("name,forms,op", DECLARED, ids=IDS)
def test_the_declared_forms_are_torchs_and_exist(name, forms, op):
    for form in ("function", "method", "inplace", "inplace_function"):
        declared = form in forms
        assert _has(ng, name, form) == declared or not declared and form == "inplace_function" \
            and name + "_" in ng.__dict__, (name, form)
        if (name, form) not in EXTENSIONS:
            assert _has(torch, name, form) == declared, (name, form)


def _call(lib, name, form, *xs):
    if form == "function":
        return getattr(lib, name)(*xs)
    if form == "method":
        return getattr(xs[0], name)(*xs[1:])
    y = xs[0] * 1.0  # (a leaf cannot change in place)
    out = getattr(lib, name + "_")(y, *xs[1:]) if form == "inplace_function" else \
        getattr(y, name + "_")(*xs[1:])
    assert out is y  # changed in place, returned
    return y


@pytest.mark.parametrize("name,forms,op", DECLARED, ids=IDS)
def test_each_form_computes_torchs_value_gradient_and_grad_fn(name, forms, op):
    lo, hi = op.domain
    values = np.random.default_rng(0).uniform(lo, hi, (op.arity, 6))
    weights = np.arange(1.0, 7.0)
    for form in forms:
        if (name, form) in EXTENSIONS:
            continue
        results = {}
        for lib in (ng, torch):
            xs = [lib.tensor(v, requires_grad=True) for v in values]
            y = _call(lib, name, form, *xs)
            grad_fn = type(y.grad_fn).__name__
            try:
                (y * lib.tensor(weights)).sum().backward()
            except NotImplementedError:  # torch's in-place asinh_, acosh_, atanh_: no derivative
                xs = [lib.tensor(v, requires_grad=True) for v in values]  # (the function's)
                (_call(lib, name, "function", *xs) * lib.tensor(weights)).sum().backward()
                grad_fn = None  # (torch's node, AsinhBackward1..., is that refusal)
            results[lib] = (y.detach().numpy(), [x.grad.numpy() for x in xs], grad_fn)
        np.testing.assert_allclose(results[ng][0], results[torch][0], rtol=1e-12, atol=1e-15,
                                   err_msg=f"{name} {form}")
        np.testing.assert_allclose(results[ng][1], results[torch][1], rtol=1e-10, atol=1e-14,
                                   err_msg=f"{name} {form}")
        assert results[torch][2] is None or results[ng][2] == results[torch][2], (name, form)


@pytest.mark.parametrize("name,forms,op", [d for d in DECLARED if d[2].arity == 2],
                         ids=[d[0] for d in DECLARED if d[2].arity == 2])
def test_a_two_input_function_treats_integers_as_torch(name, forms, op):
    outcomes = []
    for lib in (ng, torch):
        try:
            out = getattr(lib, name)(lib.tensor([3, -2, 5]), lib.tensor([1, 4, 5]))
            outcomes.append((str(out.dtype), out.numpy().tolist()))
        except NotImplementedError as e:
            outcomes.append(str(e))
    ours, theirs = outcomes
    assert type(ours) is type(theirs), outcomes  # both refuse, or both compute
    if isinstance(ours, str):
        assert ours == theirs
    else:
        assert ours[0] == theirs[0]  # the dtype
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


def test_a_function_refuses_what_is_no_tensor_as_torch():
    for lib in (ng, torch):
        with pytest.raises(TypeError, match=r"tanh\(\): argument 'input' \(position 1\) must be "
                                            r"Tensor, not float"):
            lib.tanh(0.5)
