"""The API reference's arguments and return values from torch's docstrings: the generator
(tools/torch_doc_sections.py) reads torch's reST sections, of the function an entry says it
is the same as or else of torch's object of its kind at its path, and tools/griffe_runtime.py
writes them as Google-style sections griffe parses into parameters and a return value, once,
and never over a docstring's own. Both tools need griffe (the docs extra)."""

import importlib.util
import sys
import types
from pathlib import Path

import pytest

griffe = pytest.importorskip("griffe")

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(TOOLS))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(TOOLS))
    return module


generator = _load("torch_doc_sections")
runtime = _load("griffe_runtime")

# torch's way: overloads repeating a parameter, roles, a directive in an entry, a "Default:"
# line at the items' indentation, items apart, a section indented deeper than its title
TORCH_DOC = r"""
max(input, dim, keepdim=False, *, out=None) -> (Tensor, LongTensor)

Returns the maximum of :attr:`input`.

.. note:: If there are multiple maximal values
          the first is returned.

Args:
    input (:class:`~torch.Tensor`): the input tensor.

    dim (int or tuple (int, int)): the dimension to reduce, see :math:`d_i`
        (:ref:`the notes <dim-notes>`).

        .. warning::
            Explicit ``None`` is not supported.

    keepdim (bool, optional): whether `dim` is kept.
    Default: ``False``
    a, b: two at once.

Keyword arguments:
    out (tuple, optional): the result tuple of two output tensors

Returns:
    values (Tensor): the maxima,
        one per row.
    indices (LongTensor): where they are.

Example::

    >>> torch.max(a, 1)

.. function:: max(input, other) -> Tensor
   :noindex:

Args:
    input (Tensor): overload's input.
    other (Tensor): the other.
"""


def test_torch_sections_are_read_as_markdown():
    params, returns = generator.sections(TORCH_DOC)
    assert params == {
        "input": ("Tensor", "the input tensor."),
        "dim": ("int or tuple (int, int)",
                "the dimension to reduce, see `d_i` (the notes)."),
        "keepdim": ("bool, optional", "whether `dim` is kept. Default: ``False``"),
        "a": ("", "two at once."), "b": ("", "two at once."),
        "out": ("tuple, optional", "the result tuple of two output tensors"),
        "other": ("Tensor", "the other.")}
    assert returns == ("values (Tensor): the maxima, one per row.\n\n"
                       "indices (LongTensor): where they are.")
    # reST's escapes undone outside code, kept in it
    assert generator.inline(r":attr:`NaN`\s and :math:`\alpha\ x`") == r"`NaN`s and `\alpha\ x`"


def test_lists_in_a_description_stay_lists():
    doc = ("Divides.\n\nArgs:\n    mode (str): the rounding:\n\n        * None - none.\n"
           "        * ``\"trunc\"`` - towards\n          zero.\n")
    params, _ = generator.sections(doc)
    assert params["mode"][1] == 'the rounding:\n\n* None - none.\n* ``"trunc"`` - towards zero.'


def _function(*names, doc="Adds.\n\nSame as ``torch.add``."):
    function = griffe.Function("add", parameters=griffe.Parameters(
        *[griffe.Parameter(name, default="1" if name == "alpha" else None) for name in names]))
    function.docstring = griffe.Docstring(doc, parent=function, parser="google")
    return function


ENTRY = {"args": [["input", "Tensor", "the input tensor."],
                  ["alpha", "bool, optional", "the multiplier for\n\n`other`."],
                  ["out", "Tensor, optional", "torch's only."]],
         "returns": "Tensor: the sum."}


def test_the_sections_render_as_griffe_parameters_and_return_value():
    function = _function("input", "alpha")
    runtime._append_sections(function, ENTRY)
    parsed = function.docstring.parse("google", warnings=False)
    kinds = [section.kind.value for section in parsed]
    assert kinds == ["text", "parameters", "returns", "text"]
    params = parsed[1].value
    # only the parameters the signature has; the types stay text (no link to a namesake)
    assert [(p.name, p.annotation, p.description) for p in params] == [
        ("input", "Tensor\u200b", "the input tensor."),
        ("alpha", "bool, optional\u200b", "the multiplier for\n\n`other`.")]
    assert params[1].default == "1"
    (value,) = parsed[2].value
    assert (value.name, value.description) == ("", "Tensor: the sum.")
    assert parsed[3].value == runtime.TORCH_SECTIONS_ORIGIN


def test_the_sections_are_added_once_and_never_over_a_docstring_s_own():
    function = _function("input", "alpha")
    runtime._append_sections(function, ENTRY)
    once = function.docstring.value
    runtime._append_sections(function, ENTRY)
    assert function.docstring.value == once
    own = "Adds.\n\nArgs:\n    input: ours."
    function = _function("input", doc=own)
    runtime._append_sections(function, ENTRY)
    assert function.docstring.value == own
    # nothing torch documents is in the signature, and no return value: nothing at all
    function = _function("x")
    runtime._append_sections(function, {"args": ENTRY["args"], "returns": ""})
    assert function.docstring.value == "Adds.\n\nSame as ``torch.add``."


# numbagrad's side and torch's, for the generator's choice of torch's documentation
class Module:
    def forward(self, *args):
        """Runs the module.

        Same as ``torch.nn.Module.forward``."""


class Linear(Module):
    """A layer."""

    def __init__(self, in_features, out_features, bias=True):
        pass

    def forward(self, input):  # (shows Module.forward's docstring)
        pass


def softmax(input, dim):
    """A function where torch has a class."""


def flatten(x):
    """Flattens (torch's parameter has another name)."""


class Softmax:
    """A class where torch has one."""

    def __init__(self, dim):
        pass


def flatten_input(input):
    """Flattens."""


def add(input, other):
    """Adds.

    Same as ``torch.add``."""


class TorchLinear:
    """Applies a linear transformation.

    Args:
        in_features: size of each input sample
        out_features: size of each output sample
        device: torch's only

    Returns:
        (a class's own Returns does not describe the constructor)
    """

    def forward(self, input):
        """Runs.

        Args:
            input (Tensor): the input.

        Returns:
            the output.
        """


class TorchSoftmax:
    """Softmax.

    Args:
        dim (int): the dimension.
    """


def torch_flatten(input):
    """Flattens.

    Args:
        input (Tensor): the input.

    Returns:
        the flattened tensor.
    """


def torch_add(input, other):
    """Adds.

    Args:
        input (Tensor): the first summand.
    """


TORCH = {"torch.nn.Linear": TorchLinear, "torch.nn.Linear.forward": TorchLinear.forward,
         "torch.nn.softmax": TorchSoftmax, "torch.nn.flatten": torch_flatten,
         "torch.add": torch_add,
         # (torch's namesake of an entry that says "Same as" is not read)
         "torch.nn.add": torch_flatten, "torch.nn.Module.forward": Module.forward}


def _build(monkeypatch, *entries):
    """The generator's JSON for numbagrad's ``entries`` (path, object, owner), torch being
    TORCH."""
    monkeypatch.setattr(generator, "torch_object", TORCH.get)
    monkeypatch.setattr(generator, "entries", lambda: [
        (path, obj, isinstance(owner, type), owner) for path, obj, owner in entries])
    return generator.build()


NN = types.SimpleNamespace()


def test_entries_without_same_as_take_the_sections_of_torch_s_namesake(monkeypatch):
    assert _build(monkeypatch, ("numbagrad.nn.Linear", Linear, NN),
                  ("numbagrad.nn.Linear.forward", Linear.forward, Linear),
                  ("numbagrad.nn.add", add, NN)) == {
        # a class: its constructor's parameters from the class's docstring, no return value
        "numbagrad.nn.Linear": {"args": [["in_features", "", "size of each input sample"],
                                         ["out_features", "", "size of each output sample"]],
                                "returns": ""},
        # an override showing its base's "Same as": its own namesake's
        "numbagrad.nn.Linear.forward": {"args": [["input", "Tensor", "the input."]],
                                        "returns": "the output."},
        # an entry's own "Same as" comes first
        "numbagrad.nn.add": {"args": [["input", "Tensor", "the first summand."]],
                             "returns": ""}}


def test_a_namesake_of_another_kind_or_without_a_common_parameter_gives_nothing(monkeypatch):
    # softmax: a function where torch has a class; flatten: no parameter in common, so not
    # even the return value torch documents; an entry without a docstring, nothing to add to
    assert _build(monkeypatch, ("numbagrad.nn.softmax", softmax, NN),
                  ("numbagrad.nn.flatten", flatten, NN),
                  ("numbagrad.nn.flatten", lambda input: input, NN)) == {}
    # (and only for that: a class of softmax's parameter, a flatten of torch's, take them)
    assert list(_build(monkeypatch, ("numbagrad.nn.softmax", Softmax, NN),
                       ("numbagrad.nn.flatten", flatten_input, NN))) == \
        ["numbagrad.nn.softmax", "numbagrad.nn.flatten"]


def test_an_in_place_version_takes_only_the_arguments_of_the_one_it_refers_to(monkeypatch):
    class Tensor:
        def eq(self, other):
            """See :func:`torch.eq`."""

        def eq_(self, other):
            """In-place version of :meth:`~Tensor.eq`."""

    def eq(input, other):
        """Compares.

        Args:
            other (Tensor): the tensor to compare

        Returns:
            A boolean tensor
        """

    torch = {"torch.eq": eq, "torch.Tensor.eq": Tensor.eq, "torch.Tensor.eq_": Tensor.eq_}
    monkeypatch.setattr(generator, "torch_object", torch.get)
    other = {"other": ("Tensor", "the tensor to compare")}
    assert generator.torch_sections("torch.Tensor.eq") == (other, "A boolean tensor")
    assert generator.torch_sections("torch.Tensor.eq_") == (other, "")


def test_an_inherited_docstring_keeps_its_args_only_when_the_override_has_them():
    doc = ("Runs.\n\nArgs:\n    *args: the inputs.\n    **kwargs: the keyword inputs.\n"
           "        (more)\n\nReturns:\n    What it returns.")
    assert runtime.without_foreign_args(doc, {"self", "args", "kwargs"}) == doc
    assert runtime.without_foreign_args(doc, {"self", "input", "hx"}) == \
        "Runs.\n\nReturns:\n    What it returns."
    assert runtime.without_foreign_args("Runs.", {"input"}) == "Runs."
