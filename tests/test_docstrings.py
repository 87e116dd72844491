"""Every public name of the API modules, and every public method and property of Tensor and
nn.Module, has a docstring whose first line says something.

Public: the names in a module's ``__all__`` if it has one, else its ``dir()`` names that do
not start with ``_``; submodules and non-callables (dtype objects such as
``numbagrad.float32``: the ``dtype`` class itself is checked) are skipped.
"""

import importlib
import inspect
import types

import pytest

import numbagrad

MODULES = ["numbagrad", "numbagrad.nn", "numbagrad.optim", "numbagrad.func",
           "numbagrad.nn.functional", "numbagrad.linalg", "numbagrad.special",
           "numbagrad.autograd", "numbagrad.distributed"]


def _problem(obj):
    """Why ``obj``'s docstring does not do, or None."""
    doc = getattr(obj, "__doc__", None)
    if not doc or not doc.strip():
        return "no docstring"
    if not doc.split("\n", 1)[0].strip():
        return "empty first line"
    return None


def _report(problems):
    return "\n".join(f"  {name}: {why}" for name, why in sorted(problems.items()))


@pytest.mark.parametrize("module_name", MODULES)
def test_public_names_have_docstrings(module_name):
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        pytest.skip(f"{module_name} does not exist")
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    problems = {}
    for name in names:
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        why = _problem(obj)
        if why:
            problems[f"{module_name}.{name}"] = why
    assert not problems, (f"{len(problems)} public names of {module_name} without a proper "
                          f"docstring:\n{_report(problems)}")


@pytest.mark.parametrize("cls", [numbagrad.Tensor, numbagrad.nn.Module],
                         ids=["Tensor", "Module"])
def test_public_methods_and_properties_have_docstrings(cls):
    problems = {}
    for name in dir(cls):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(cls, name)
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if not (callable(attr) or isinstance(attr, property)):
            continue  # plain class data (annotations, flags)
        why = _problem(attr)
        if why:
            problems[f"{cls.__name__}.{name}"] = why
    assert not problems, (f"{len(problems)} public methods and properties of {cls.__name__} "
                          f"without a proper docstring:\n{_report(problems)}")


def test_the_dtype_class_has_a_docstring():
    # dtype objects are instances (skipped above); their class carries the docstring
    assert _problem(type(numbagrad.float32)) is None
    assert type(numbagrad.float32) is numbagrad.dtype


def test_generated_docstrings_name_what_they_derive_from():
    # the op table's one-line docs reach the functions and methods made from the records
    from numbagrad.engine.registry import BY_NAME

    assert numbagrad.sin.__doc__.startswith(BY_NAME["sin"].doc)
    assert numbagrad.Tensor.sin is numbagrad.sin
    # in-place forms name the method they change in place
    assert ":meth:`~Tensor.sin`" in numbagrad.Tensor.sin_.__doc__
    assert ":meth:`~Tensor.add`" in numbagrad.Tensor.add_.__doc__
    assert ":meth:`~Tensor.transpose`" in numbagrad.Tensor.transpose_.__doc__
