"""The API reference's arguments and return values from torch's docstrings: the generator
(tools/torch_doc_sections.py) reads torch's reST sections, and tools/griffe_runtime.py writes
them as Google-style sections griffe parses into parameters and a return value, once, and
never over a docstring's own. Both tools need griffe (the docs extra)."""

import importlib.util
import sys
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
