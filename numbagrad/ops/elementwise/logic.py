"""Comparisons, logical and bitwise functions, the is* tests, isclose/allclose/equal: torch's
functions and Tensor methods. None records anything: their results are bool (bitwise:
integer) tensors, or Python bools."""

import numpy as np

from ... import dtypes
from ...core import trace_guards
from ...core.docs import torch_doc
from ...engine.record import shape_error_broadcast
from ...tensor import Tensor, _make
from ..index.rules import _type_name
from .forward import torch_laid_out


def need_tensor(x, fname, arg="input", pos=1):
    """torch's TypeError for an argument that is no Tensor (a NumPy array, a list)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{_type_name(x)}")


def _plain(values):
    v = np.asarray(values)
    return _make(v if v.ndim else v[()])


def _operands(fname, a, b):
    """The two operands as arrays of torch's promoted dtype (a Python number is weak)."""
    if isinstance(b, Tensor):
        err = shape_error_broadcast(tuple(a.shape), tuple(b.shape))
        if err is not None:
            raise err
        kind_b = (b.dtype, b.ndim)
        vb = b._data
    elif isinstance(b, (bool, int, float, np.number, np.bool_)):
        kind_b = (dtypes.scalar_dtype(b), None)
        vb = b
    else:
        raise TypeError(f"{fname}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(b).__name__}")
    dt = dtypes.result_type((a.dtype, a.ndim), kind_b)
    return np.asarray(a._data, dt.np), np.asarray(vb, dt.np), dt


def _comparison(name, ufunc, doc):
    ufunc = torch_laid_out(ufunc)  # NumPy orders a result of strided operands its own way

    def fn(input, other):  # noqa: A002 - torch's keyword
        need_tensor(input, name)
        a, b, _ = _operands(name, input, other)
        return trace_guards.derive(_plain(ufunc(a, b)), ufunc, (input, other), f"{name}()")
    fn.__name__ = name
    fn.__doc__ = torch_doc(doc, f"torch.{name}")
    return fn


eq = _comparison("eq", np.equal, "Element-wise ``input == other``, a bool tensor.")
ne = _comparison("ne", np.not_equal, "Element-wise ``input != other``, a bool tensor.")
lt = _comparison("lt", np.less, "Element-wise ``input < other``, a bool tensor.")
le = _comparison("le", np.less_equal, "Element-wise ``input <= other``, a bool tensor.")
gt = _comparison("gt", np.greater, "Element-wise ``input > other``, a bool tensor.")
ge = _comparison("ge", np.greater_equal, "Element-wise ``input >= other``, a bool tensor.")


def _logical(name, ufunc, doc):
    ufunc = torch_laid_out(ufunc)

    def fn(input, other):  # noqa: A002
        need_tensor(input, name)
        need_tensor(other, name, "other", 2)
        err = shape_error_broadcast(tuple(input.shape), tuple(other.shape))
        if err is not None:
            raise err
        return _plain(ufunc(input._data, other._data))
    fn.__name__ = name
    fn.__doc__ = torch_doc(doc, f"torch.{name}")
    return fn


logical_and = _logical("logical_and", np.logical_and,
                       "Element-wise logical AND of the elements' truth values, a bool tensor.")
logical_or = _logical("logical_or", np.logical_or,
                      "Element-wise logical OR of the elements' truth values, a bool tensor.")
logical_xor = _logical("logical_xor", np.logical_xor,
                       "Element-wise logical XOR of the elements' truth values, a bool tensor.")


def logical_not(input):  # noqa: A002
    """Element-wise logical NOT of the elements' truth values, a bool tensor.

    Same as ``torch.logical_not``.
    """
    need_tensor(input, "logical_not")
    return _plain(np.logical_not(input._data))


def _bitwise(name, ufunc, doc):
    ufunc = torch_laid_out(ufunc)

    def fn(input, other):  # noqa: A002
        need_tensor(input, name)
        a, b, dt = _operands(name, input, other)
        if dt.is_floating_point:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{dt.scalar_name}'")
        return _plain(ufunc(a, b))
    fn.__name__ = name
    fn.__doc__ = torch_doc(doc, f"torch.{name}")
    return fn


bitwise_and = _bitwise("bitwise_and", np.bitwise_and,
                       "Element-wise bitwise AND of integer or bool tensors.")
bitwise_or = _bitwise("bitwise_or", np.bitwise_or,
                      "Element-wise bitwise OR of integer or bool tensors.")
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor,
                       "Element-wise bitwise XOR of integer or bool tensors.")


def bitwise_not(input):  # noqa: A002
    """Element-wise bitwise NOT of an integer or bool tensor.

    Same as ``torch.bitwise_not``.
    """
    need_tensor(input, "bitwise_not")
    if input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    return _plain(np.invert(input._data))


def _test(name, ufunc, doc):
    def fn(input):  # noqa: A002
        need_tensor(input, name)
        return trace_guards.derive(_plain(ufunc(input._data)), ufunc, (input,), f"{name}()")
    fn.__name__ = name
    fn.__doc__ = torch_doc(doc, f"torch.{name}")
    return fn


isnan = _test("isnan", np.isnan, "Element-wise test for NaN, a bool tensor.")
isinf = _test("isinf", np.isinf, "Element-wise test for positive or negative infinity.")
isfinite = _test("isfinite", np.isfinite, "Element-wise test for finite values (not inf or NaN).")
isposinf = _test("isposinf", np.isposinf, "Element-wise test for positive infinity.")
isneginf = _test("isneginf", np.isneginf, "Element-wise test for negative infinity.")
isreal = _test("isreal", lambda a: np.ones(np.shape(a), bool),
               "Element-wise test for a real value: all true (numbagrad has no complex dtypes).")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """|input - other| <= atol + rtol * |other|, computed in the operands' dtype as torch's."""
    need_tensor(input, "isclose")
    need_tensor(other, "isclose", "other", 2)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype.scalar_name} did not match {other.dtype.scalar_name}")
    for what, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise RuntimeError(f"{what} must be greater than or equal to zero, but got {v}")
    err = shape_error_broadcast(tuple(input.shape), tuple(other.shape))
    if err is not None:
        raise err
    a, b = np.asarray(input._data), np.asarray(other._data)
    with np.errstate(all="ignore"):
        close = a == b
        if equal_nan and input.dtype.is_floating_point:
            close = close | (np.isnan(a) & np.isnan(b))
        if rtol != 0 or atol != 0:
            if not input.dtype.is_floating_point:  # torch: int - int, the bound in float
                a = a.astype(dtypes.get_default_dtype().np)
                b = b.astype(a.dtype)
            actual = np.abs(a - b)
            allowed = atol + np.abs(rtol * b)
            close = close | (np.isfinite(actual) & (actual <= allowed))
    return trace_guards.derive(
        _plain(close), lambda a, b: isclose(_make(a), _make(b), rtol, atol, equal_nan)._data,
        (input, other), "isclose()")


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """Whether every element of ``isclose(input, other, ...)`` is true, a Python bool.

    Same as ``torch.allclose``.
    """
    return bool(np.all(isclose(input, other, rtol, atol, equal_nan)._data))


def equal(input, other):  # noqa: A002
    """True when both have the same shape and elements (a Python bool).

    Args:
        input: a tensor (the tensor itself, as a method).
        other: the tensor to compare with.

    Returns:
        A Python bool; False for different shapes.
    """
    need_tensor(input, "equal")
    need_tensor(other, "equal", "other", 2)
    if tuple(input.shape) != tuple(other.shape):
        return False
    a, b, _ = _operands("equal", input, other)
    same = _plain(np.array_equal(a, b))
    return bool(trace_guards.derive(same, np.array_equal, (input, other), "equal()")._data)


_COMPARE = {"eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
            "greater": gt, "greater_equal": ge, "less": lt, "less_equal": le, "not_equal": ne}
LOGIC_FUNCTIONS = {
    **_COMPARE, "logical_and": logical_and, "logical_or": logical_or,
    "logical_xor": logical_xor, "logical_not": logical_not, "bitwise_and": bitwise_and,
    "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor, "bitwise_not": bitwise_not,
    "isnan": isnan, "isinf": isinf, "isfinite": isfinite, "isposinf": isposinf,
    "isneginf": isneginf, "isreal": isreal, "isclose": isclose, "allclose": allclose,
    "equal": equal}


def _operator(fn):
    """``&``, ``|``, ``^`` as torch's bitwise functions (logical on bools, an error on floats)."""
    def op(self, other):
        if not isinstance(other, (Tensor, bool, int, float, np.number, np.bool_)):
            return NotImplemented
        return fn(self, other)
    return op


# (==, <, ... are Tensor's own operators, in numbagrad/_methods.py)
LOGIC_METHODS = {**LOGIC_FUNCTIONS, "__invert__": bitwise_not}
for _name, _fn in (("and", bitwise_and), ("or", bitwise_or), ("xor", bitwise_xor)):
    LOGIC_METHODS[f"__{_name}__"] = LOGIC_METHODS[f"__r{_name}__"] = _operator(_fn)

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"bitwise_and": "one", "bitwise_not": "one", "bitwise_xor": "one", "eq": "one", "ge":
             "one", "greater": "one", "greater_equal": "one", "gt": "one", "isneginf": "one",
             "isposinf": "one", "le": "one", "less": "one", "less_equal": "one", "logical_and":
             "one", "logical_not": "one", "logical_or": "one", "lt": "one", "ne": "one",
             "not_equal": "one", "logical_xor": "one", "bitwise_or": "one"}
