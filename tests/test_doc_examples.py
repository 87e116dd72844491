"""The examples in the docstrings of the most used entries of the API reference run as
written (doctest), and print what the same code prints with torch."""

import doctest
import importlib

import pytest

import numbagrad

# the entries a new user reads first; each carries an example
ENTRIES = ["tensor", "Tensor", "Tensor.backward", "Tensor.register_hook", "autograd.grad",
           "autograd.backward", "autograd.Function", "autograd.gradcheck", "no_grad",
           "func.grad", "func.grad_and_value", "func.value_and_grad", "func.vmap",
           "func.jacrev", "func.jacfwd", "func.hessian", "compile", "optimize.minimize",
           "nn.Module", "nn.Linear", "nn.Sequential", "nn.functional.cross_entropy",
           "nn.MSELoss", "optim.SGD", "optim.Adam", "optim.AdamW", "manual_seed",
           "from_numpy", "utils.data.DataLoader", "save", "matmul"]
# numbagrad's own functions (JAX's value_and_grad, scipy's minimize) and torch.compile,
# which compiles torch's programs its own way: no torch counterpart to print the same
NUMBAGRAD_ONLY = {"func.value_and_grad", "compile", "optimize.minimize"}
FLAGS = doctest.ELLIPSIS


def _entry(root, name):
    obj = root
    for part in name.split("."):
        obj = getattr(obj, part) if hasattr(obj, part) else \
            importlib.import_module(f"{obj.__name__}.{part}")
    return obj


def _run(text, name):
    test = doctest.DocTestParser().get_doctest(text, {}, name, None, 0)
    assert test.examples, f"{name}: no example in its docstring"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    runner.run(test, out=report.append)
    assert not runner.failures, "".join(report)


@pytest.mark.parametrize("name", ENTRIES)
def test_example_runs(name):
    _run(_entry(numbagrad, name).__doc__, name)


@pytest.mark.parametrize("name", [n for n in ENTRIES if n not in NUMBAGRAD_ONLY])
def test_example_prints_what_torch_prints(name):
    torch = pytest.importorskip("torch")
    text = _entry(numbagrad, name).__doc__
    assert "import numbagrad as torch" in text
    text = text.replace("import numbagrad as torch", "import torch").replace(
        "numbagrad.", "torch.")
    _run(text, f"{name} (torch {torch.__version__})")
