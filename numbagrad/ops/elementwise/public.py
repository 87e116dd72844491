"""The public forms of the elementwise ops, made from their records: a one- or two-input
record whose ``api`` (registry.OpDef) names them gets the function ``torch.<name>`` (with
``out=``), the method ``Tensor.<name>``, the in-place method ``Tensor.<name>_`` and the
function ``torch.<name>_``, under its name and under each of its ``aliases`` (torch's arcsin
for asin). numbagrad/_methods.py and numbagrad/_inplace_forms.py bind METHODS and
INPLACE_METHODS on Tensor; numbagrad exports ``__all__``. So a new elementwise op is one
record: its formulas, samples and ``api``."""

import numpy as np

from ...core.docs import torch_doc
from ...engine import record as record_module
from ...engine.registry import OPS
from ...tensor import Tensor
from ..out_api import into
from . import basic, math_binary, math_unary  # noqa: F401 - the records
from .forward import kernel_first, scalar_forward
from .logic import _plain, need_tensor
from .pointwise import _promote, binary_op, not_implemented_for, unary


def unary_function(op):
    """The public function of the attribute-free unary op ``op``: torch's TypeError for an
    input that is no Tensor, ``out=``, a scalar graph's op in the fewest steps, and
    ``pointwise.unary`` (dtypes, integer inputs, recording) for everything else."""
    name = op.name
    forward = op.forward if op.rounds_once else scalar_forward(op)
    # (an array of an op whose kernel is faster than NumPy goes to eager_forward's kernel)
    scalar_graph = record_module.scalar_graph_op(
        op, forward, arrays=op.rounds_once and not kernel_first(op))[1]

    def fn(input, *, out=None):  # noqa: A002 - torch's name
        if out is not None:
            return into(name, out, fn, input)
        if type(input) is not Tensor:
            need_tensor(input, name)
        value = scalar_graph(input)
        return unary(name, input) if value is None else value
    fn.__name__ = fn.__qualname__ = name
    # (silu is a Tensor method here; torch has it in nn.functional only)
    fn.__doc__ = op.docstring("torch.nn.functional.silu" if name == "silu" else None)
    if name in _ARGS_OF_OWN:  # (torch documents no arguments for these two)
        fn.__doc__ += _ARGS_OF_OWN[name]
    return fn


_ARGS_OF_OWN = {name: f"""

Args:
    input: the tensor (the tensor itself, as a method).
    out: a tensor to write the result into (its shape and dtype are kept).

Returns:
    A new tensor of ``input``'s shape: {what}.""" for name, what in (
    ("relu", "``max(input, 0)``"), ("silu", "``input * sigmoid(input)``"))}


def binary_function(op):
    """The public function of the two-input op ``op``: torch's TypeError for an operand that
    is no Tensor, ``out=``, integer inputs as the record's ``int_inputs`` says, then the op
    on the promoted operands (``pointwise.binary_op``)."""
    name = op.name

    def fn(input, other, *, out=None):  # noqa: A002 - torch's names
        if out is not None:
            return into(name, out, fn, input, other)
        need_tensor(input, name)
        need_tensor(other, name, "other", 2)
        if op.int_inputs != "float":
            dt = _promote(input, other)
            if not dt.is_floating_point:
                if op.int_inputs == "refused":
                    raise not_implemented_for(f"{name}_cpu", input if not
                                              input.dtype.is_floating_point else other)
                return _plain(op.forward(np.asarray(input._data, dt.np),
                                         np.asarray(other._data, dt.np)))
        return binary_op(name, input, other, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = op.docstring()
    return fn


def inplace_function(name):
    """torch's function form ``torch.<name>(x, ...)`` of the in-place method ``x.<name>(...)``."""
    def fn(input, *args, **kw):  # noqa: A002
        need_tensor(input, name)
        return getattr(input, name)(*args, **kw)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = torch_doc(f"``x.{name}(...)`` as a function: ``{name}(x, ...)`` changes ``x`` "
                           "in place.", f"torch.{name}") + (
        f"\n\nArgs:\n    input: the tensor to change.\n    *args: the positional arguments "
        f"of ``Tensor.{name}``.\n    **kw: its keyword arguments.\n\nReturns:\n    ``input`` "
        "itself, changed in place.")
    return fn


FUNCTIONS = {}  # torch.<name> -> function
METHODS = {}  # Tensor.<name> -> function
# Tensor.<name>_ -> (the out-of-place function, its op): numbagrad/_inplace_forms.py makes the
# method, saving self's old value first where the op's derivative reads it
INPLACE_METHODS = {}
INPLACE_FUNCTIONS = {}  # torch.<name>_ -> function
for _op in OPS:
    if not _op.api:
        continue
    if not _op.elementwise or _op.arity not in (1, 2):
        raise TypeError(f"op {_op.name!r}: public forms are made for one- and two-input "
                        f"elementwise ops, not this one (arity {_op.arity})")
    _fn = unary_function(_op) if _op.arity == 1 else binary_function(_op)
    for _name, _forms in ((_op.name, _op.api), *_op.aliases.items()):
        if "function" in _forms:
            FUNCTIONS[_name] = _fn
        if "method" in _forms:
            METHODS[_name] = _fn
        if "inplace" in _forms:
            INPLACE_METHODS[_name] = (_fn, _op)
        if "inplace_function" in _forms:
            INPLACE_FUNCTIONS[_name + "_"] = inplace_function(_name + "_")
globals().update(FUNCTIONS)
globals().update(INPLACE_FUNCTIONS)
__all__ = [*FUNCTIONS, *INPLACE_FUNCTIONS]
