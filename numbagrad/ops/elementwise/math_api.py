"""Pointwise math beyond the basics: trigonometric, hyperbolic, rounding, remainders, comparisons
and logical functions, torch's function and in-place forms.

The differentiable ones are table ops (ops/elementwise_math*.py); comparisons, logical,
bitwise and the is* tests return bool (or integer) tensors and record nothing, as in torch.
"""

import numpy as np

from ... import dtypes
from ...engine.registry import BY_NAME, FORMULA_FUNCTIONS
from ...tensor import Tensor, _make
from . import (
    math_binary,  # noqa: F401 - the records
    math_unary,  # noqa: F401 - the records
    pointwise,
    public,
)
from .forward import torch_layout
from .logic import LOGIC_FUNCTIONS, LOGIC_METHODS, need_tensor
from .pointwise import _arrays, _promote, binary_op, not_implemented_for, to_dtype, unary
from .public import inplace_function, unary_function


def _plain(values):
    """A result that records nothing (integer and bool results): a Tensor of ``values``."""
    v = np.asarray(values)
    return _make(v if v.ndim else v[()])


# ---- unary ----------------------------------------------------------------------------------
def sgn(input):  # noqa: A002
    """Element-wise sign: -1, 0 or 1 (0 for NaN); for real tensors the same as ``sign``.

    Same as ``torch.sgn``.
    """
    need_tensor(input, "sgn")
    if not input.dtype.is_floating_point:
        return public.sign(input)  # integers and bools keep their dtype
    return unary("sgn", input)


def square(input):  # noqa: A002
    """Element-wise square, ``input ** 2``.

    Same as ``torch.square``.
    """
    need_tensor(input, "square")
    if input.dtype is dtypes.bool_:
        input = to_dtype(input, dtypes.int64)
    return pointwise.pow_scalar(input, 2)  # torch: pow(input, 2), PowBackward0


def _integral(name):
    """ceil, trunc: integers are their own value (a copy); bools are refused as in torch."""
    def fn(input):  # noqa: A002
        need_tensor(input, name)
        if input.dtype is dtypes.bool_:
            raise not_implemented_for(f"{name}_vml_cpu", input)
        if not input.dtype.is_floating_point:
            return _plain(np.array(input._data))
        return unary(name, input)
    fn.__name__ = name
    fn.__doc__ = BY_NAME[name].docstring()
    return fn


ceil, trunc = _integral("ceil"), _integral("trunc")
fix = trunc


def frac(input):  # noqa: A002
    """Element-wise fractional part, ``input - trunc(input)``.

    Same as ``torch.frac``.

    Args:
        input: a floating-point tensor.

    Returns:
        A tensor of ``input``'s shape.
    """
    need_tensor(input, "frac")
    if not input.dtype.is_floating_point:
        raise not_implemented_for("frac_cpu", input)
    return unary("frac", input)


def logit(input, eps=None):  # noqa: A002
    """Element-wise logit ``log(p / (1 - p))``; with ``eps``, of ``p`` clamped to [eps, 1 - eps].

    Same as ``torch.logit``.
    """
    need_tensor(input, "logit")
    return unary("logit", input, -1.0 if eps is None else float(eps))


_round_half_even = unary_function(BY_NAME["round"])  # (torch.round without decimals)


def round(input, *, decimals=None):  # noqa: A001,A002 - torch's names
    """Element-wise rounding to the nearest integer, or to ``decimals`` places; halves to even.

    Same as ``torch.round``. With ``decimals`` (even 0) torch's other overload, RoundBackward1.
    """
    need_tensor(input, "round")
    if decimals is None:
        return _round_half_even(input)
    if not input.dtype.is_floating_point:
        raise not_implemented_for("round_cpu", input)
    d = int(decimals)
    flags = (1.0 if d < 0 else 0.0) + (2.0 if input.dtype is dtypes.float32 else 0.0)
    return unary("round_decimals", input, float(10 ** abs(d)), flags)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):  # noqa: A002
    """Element-wise replacement of NaN, +inf and -inf by ``nan``, ``posinf`` and ``neginf``.

    Same as ``torch.nan_to_num``: by default 0 and the dtype's largest and lowest finite values.
    """
    need_tensor(input, "nan_to_num")
    if not input.dtype.is_floating_point:
        return _plain(np.array(input._data))
    big = float(np.finfo(input.dtype.np).max)
    out = unary("nan_to_num", input, float(nan), big if posinf is None else float(posinf))
    return unary("nan_to_num_neg", out, -big if neginf is None else float(neginf))


# ---- clamps ------------------------------------------------------------------------------------
def _bound_dtype(x, bound):
    kind = (bound.dtype, bound.ndim) if isinstance(bound, Tensor) else \
        (dtypes.scalar_dtype(bound), None)
    return dtypes.result_type((x.dtype, x.ndim), kind)


def _one_sided(name, x, bound, tensor_op, layout=None):
    dt = _bound_dtype(x, bound)
    if not dt.is_floating_point:  # integers: no gradient, NumPy's answer in torch's dtype
        fn = np.maximum if name == "clamp_min" else np.minimum
        b = bound._data if isinstance(bound, Tensor) else bound
        return _plain(torch_layout(fn(np.asarray(x._data, dt.np), np.asarray(b, dt.np)),
                                   _arrays(layout or (x, bound))))
    if isinstance(bound, Tensor):
        return binary_op(tensor_op, x, bound, name, layout=layout)
    return unary(name, to_dtype(x, dt), float(bound))


def clamp_min(input, min):  # noqa: A002
    """Element-wise ``max(input, min)``: ``clamp`` with a lower bound only.

    Same as ``torch.clamp_min``.

    Args:
        input: the tensor to clamp (the tensor itself, as a method).
        min: the lower bound, a number or a tensor broadcastable with ``input``.

    Returns:
        A new tensor of ``input``'s shape.
    """
    need_tensor(input, "clamp_min")
    return _one_sided("clamp_min", input, min, "clamp_min_tensor")


def clamp_max(input, max):  # noqa: A002
    """Element-wise ``min(input, max)``: ``clamp`` with an upper bound only.

    Same as ``torch.clamp_max``.

    Args:
        input: the tensor to clamp (the tensor itself, as a method).
        max: the upper bound, a number or a tensor broadcastable with ``input``.

    Returns:
        A new tensor of ``input``'s shape.
    """
    need_tensor(input, "clamp_max")
    return _one_sided("clamp_max", input, max, "clamp_max_tensor")


def clamp(input, min=None, max=None):  # noqa: A002
    """Element-wise ``input`` clamped to ``[min, max]``; the bounds are numbers or tensors.

    Same as ``torch.clamp`` (alias ``clip``).
    """
    if not isinstance(min, Tensor) and not isinstance(max, Tensor):
        return pointwise.clamp(input, min, max)
    if min is not None and max is not None and \
            isinstance(min, Tensor) is not isinstance(max, Tensor):
        got = ", ".join(type(b).__name__ for b in (min, max))
        raise TypeError(f"clamp() received an invalid combination of arguments - got (Tensor, "
                        f"{got}), but expected one of:\n * (Tensor input, Tensor min = None, "
                        "Tensor max = None, *, Tensor out = None)\n * (Tensor input, Number min "
                        "= None, Number max = None, *, Tensor out = None)\n")
    out = input
    for bound, name in ((min, "min"), (max, "max")):
        if bound is None:
            continue
        # two nodes, one result laid out as torch's from its three operands
        out = _one_sided("clamp_" + name, out, bound, "clamp_tensor_" + name,
                         (input, min, max) if name == "max" else None)
    return out


clip = clamp


# ---- binary ------------------------------------------------------------------------------------
def _integer_remainder(name, ufunc):
    """fmod and remainder: integers in their dtype (a zero divisor raises, as in torch),
    floats by the table ops; a Python number divisor is an attribute (torch's Scalar
    overload: FmodBackward0)."""
    def fn(input, other):  # noqa: A002
        if not isinstance(input, Tensor) and isinstance(other, Tensor) and name == "remainder":
            # torch.remainder(number, tensor) has no derivative: the value only
            return fn(_make(np.asarray(input, _bound_dtype(other, input).np)), other.detach())
        need_tensor(input, name)
        dt = _promote(input, other)
        o = other._data if isinstance(other, Tensor) else other
        if not dt.is_floating_point:
            if not np.all(np.asarray(o)):
                raise RuntimeError("ZeroDivisionError")
            return _plain(ufunc(np.asarray(input._data, dt.np), np.asarray(o, dt.np)))
        if not isinstance(other, Tensor):
            return unary(name + "_scalar", to_dtype(input, dt), float(other))
        return binary_op(name, input, other, name)
    fn.__name__ = name
    fn.__doc__ = BY_NAME[name].docstring()
    return fn


fmod = _integer_remainder("fmod", np.fmod)
remainder = _integer_remainder("remainder", np.remainder)


def xlogy(input, other):  # noqa: A002
    """Element-wise ``input * log(other)``, 0 where ``input`` is 0.

    Same as ``torch.xlogy``.
    """
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return binary_op("xlogy", input, other, "xlogy")
    if isinstance(input, Tensor):
        return unary("xlogy_scalar_other", input, float(other))
    need_tensor(other, "xlogy", "other", 2)
    return unary("xlogy_scalar_self", other, float(input))


def float_power(input, exponent):  # noqa: A002
    """Element-wise power ``input ** exponent`` computed in float64.

    Same as ``torch.float_power``.
    """
    f64 = dtypes.float64
    if isinstance(input, Tensor):
        if isinstance(exponent, Tensor):
            return pointwise.pow(to_dtype(input, f64), to_dtype(exponent, f64))
        return pointwise.pow_scalar(to_dtype(input, f64), float(exponent))
    if isinstance(exponent, Tensor):
        return pointwise.rpow_scalar(to_dtype(exponent, f64), float(input))
    raise TypeError("float_power() received an invalid combination of arguments - got "
                    f"({type(input).__name__}, {type(exponent).__name__}), but expected one "
                    "of:\n * (Tensor input, Tensor exponent, *, Tensor out = None)\n * "
                    "(Number self, Tensor exponent, *, Tensor out = None)\n * (Tensor input, "
                    "Number exponent, *, Tensor out = None)\n")


def floor_divide(input, other):  # noqa: A002
    """Element-wise ``input / other`` rounded down.

    Same as ``torch.floor_divide``; not differentiable, as in torch.
    """
    need_tensor(input, "floor_divide")
    dt = _promote(input, other)
    o = other._data if isinstance(other, Tensor) else other
    if not dt.is_floating_point and not np.all(np.asarray(o)):
        raise RuntimeError("ZeroDivisionError")
    a, b = np.asarray(input._data, dt.np), np.asarray(o, dt.np)
    return _plain(div_floor_values(a, b).astype(dt.np) if dt.is_floating_point else
                  np.floor_divide(a, b))


# ---- lerp, addcmul, addcdiv ----------------------------------------------------------------------
def _same_dtype(input, **others):  # noqa: A002
    for arg, t in others.items():
        if isinstance(t, Tensor) and t.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {input.dtype.c_name} for `{arg}` but got "
                               f"dtype {t.dtype.c_name}")


def lerp(input, end, weight):  # noqa: A002
    """Element-wise linear interpolation, ``input + weight * (end - input)``.

    Same as ``torch.lerp``.
    """
    need_tensor(input, "lerp")
    need_tensor(end, "lerp", "end", 2)
    _same_dtype(input, end=end, weight=weight)
    if not input.dtype.is_floating_point:
        raise not_implemented_for("lerp_kernel_scalar" if not isinstance(weight, Tensor)
                                  else "lerp_kernel_tensor", input)
    if not isinstance(weight, Tensor):
        return binary_op("lerp_scalar", input, end, "lerp", (float(weight),))
    return binary_op("lerp_tensor", input, weight * (end - input), "lerp",
                     layout=(input, end, weight))


def _addc(name, input, tensor1, tensor2, value):
    need_tensor(input, name)
    need_tensor(tensor1, name, "tensor1", 2)
    need_tensor(tensor2, name, "tensor2", 3)
    dt = dtypes.result_type(*[(t.dtype, t.ndim) for t in (input, tensor1, tensor2)])
    if name == "addcdiv" and not tensor1.dtype.is_floating_point and \
            not tensor2.dtype.is_floating_point:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic "
            "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
            "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
            "tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    if not dt.is_floating_point:
        a, b, c = (np.asarray(t._data, dt.np) for t in (input, tensor1, tensor2))
        return _plain(torch_layout(a + dt.np.type(value) * b * c, (a, b, c)))
    rest = pointwise.mul(tensor1, tensor2) if name == "addcmul" else \
        pointwise.div(tensor1, tensor2)
    return binary_op(name, input, rest, name, (float(value),), layout=(input, tensor1, tensor2))


def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """Element-wise ``input + value * tensor1 * tensor2``.

    Same as ``torch.addcmul``.
    """
    return _addc("addcmul", input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """Element-wise ``input + value * tensor1 / tensor2``.

    Same as ``torch.addcdiv``.
    """
    return _addc("addcdiv", input, tensor1, tensor2, value)


# ---- Tensor-level versions of the scalar functions the derivative formulas call ----------
def div_floor_values(a, b):
    """torch's floor division of float arrays (div(rounding_mode="floor"); scalar_math's
    div_floor): NaN for an infinite dividend, the exact quotient rounded down otherwise."""
    with np.errstate(all="ignore"):
        mod = np.fmod(a, b)
        div = (a - mod) / b
        div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
        down = np.floor(div)
        down = np.where(div - down > 0.5, down + 1, down)
        down = np.where(div == 0, np.copysign(np.zeros_like(div), a / b), down)
        return np.where(b == 0, a / b, down)


def _div_floor(a, b):
    # a constant: the derivative of a floor division is 0
    return _plain(div_floor_values(np.asarray(a._data), np.asarray(b._data)))


def _logit_backward(g, a, eps):
    inside = (a._data >= 0.0) & (a._data <= 1.0) if eps < 0.0 else \
        (a._data >= eps) & (a._data <= 1.0 - eps)
    outside = float("nan") if eps < 0.0 else 0.0
    return pointwise.where(_make(np.asarray(inside)), g / (a * (1.0 - a)), outside)


FORMULA_FUNCTIONS.update(sinh=public.sinh, cosh=public.cosh, trunc=trunc, div_floor=_div_floor,
                         exp2=public.exp2, xlogy=xlogy, logit_backward=_logit_backward)

# (the unary functions made from their records are ops/elementwise/public.py's)
_UNARY = ["sgn", "square", "ceil", "trunc", "fix", "frac", "logit", "round", "nan_to_num",
          "clamp_min", "clamp_max", "clamp", "clip"]
_BINARY = ["fmod", "remainder", "xlogy", "float_power", "floor_divide", "lerp", "addcmul",
           "addcdiv"]

__all__ = _UNARY + _BINARY + list(LOGIC_FUNCTIONS)
globals().update(LOGIC_FUNCTIONS)

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {name: globals()[name] for name in _UNARY + _BINARY}
TENSOR_METHODS.update(LOGIC_METHODS)


# ---- torch's in-place function forms: torch.clamp_(x, ...) is x.clamp_(...) ------------------
# (those of the ops made from their records are ops/elementwise/public.py's)
_INPLACE_FUNCTIONS = [n + "_" for n in (
    "ceil", "clamp", "clamp_min", "clamp_max", "frac", "round", "square", "trunc", "nan_to_num",
    "logit", "fix", "fill", "zero", "i0", "sinc")]
globals().update({n: inplace_function(n) for n in _INPLACE_FUNCTIONS})
__all__ += _INPLACE_FUNCTIONS

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"addcdiv": "one", "addcmul": "one", "ceil": "one", "clamp": "one", "clip": "one",
             "fix": "one", "float_power": "one", "floor_divide": "one", "fmod": "one", "frac":
             "one", "lerp": "one", "logit": "one", "nan_to_num": "one", "remainder": "one",
             "round": "one", "sgn": "one", "trunc": "one", "xlogy": "one", "clamp_min": "one",
             "clamp_max": "one", "square": "one"}
