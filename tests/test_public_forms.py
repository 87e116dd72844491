"""The public forms made from the records (ops/elementwise/public.py): the forms each record
declares are torch's, and each one computes torch's value, gradient and grad_fn; the in-place
forms change the tensor they are given, as torch's do."""

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


def _call(lib, name, form, x):
    if form == "function":
        return getattr(lib, name)(x)
    if form == "method":
        return getattr(x, name)()
    y = x * 1.0  # (a leaf cannot change in place)
    out = getattr(lib, name + "_")(y) if form == "inplace_function" else getattr(y, name + "_")()
    assert out is y  # changed in place, returned
    return y


@pytest.mark.parametrize("name,forms,op", DECLARED, ids=IDS)
def test_each_form_computes_torchs_value_gradient_and_grad_fn(name, forms, op):
    lo, hi = op.domain
    values = np.random.default_rng(0).uniform(lo, hi, 6)
    for form in forms:
        if (name, form) in EXTENSIONS:
            continue
        results = {}
        for lib in (ng, torch):
            x = lib.tensor(values, requires_grad=True)
            y = _call(lib, name, form, x)
            grad_fn = type(y.grad_fn).__name__
            try:
                (y * lib.tensor(np.arange(1.0, 7.0))).sum().backward()
            except NotImplementedError:  # torch's in-place asinh_, acosh_, atanh_: no derivative
                x = lib.tensor(values, requires_grad=True)  # (numbagrad's is the function's)
                grad_fn = None  # (torch's node, AsinhBackward1..., is that refusal)
                (_call(lib, name, "function", x) * lib.tensor(np.arange(1.0, 7.0))).sum().backward()
            results[lib] = (y.detach().numpy(), x.grad.numpy(), grad_fn)
        np.testing.assert_allclose(results[ng][0], results[torch][0], rtol=1e-12, atol=1e-15,
                                   err_msg=f"{name} {form}")
        np.testing.assert_allclose(results[ng][1], results[torch][1], rtol=1e-10, atol=1e-14,
                                   err_msg=f"{name} {form}")
        assert results[torch][2] is None or results[ng][2] == results[torch][2], (name, form)


def test_a_function_refuses_what_is_no_tensor_as_torch():
    for lib in (ng, torch):
        with pytest.raises(TypeError, match=r"tanh\(\): argument 'input' \(position 1\) must be "
                                            r"Tensor, not float"):
            lib.tanh(0.5)
