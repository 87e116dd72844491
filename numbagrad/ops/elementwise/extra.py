"""More of torch's pointwise math: copysign, ldexp, frexp, nextafter, rsub, signbit, positive,
gcd, lcm, fill; and the records of the in-place
comparisons (``x.eq_(y)`` on a tensor that requires grad is torch's EqBackward node, whose
derivative is zero).

Conventions pinned to torch: copysign's derivative is ``result / input`` (0 where the input is
0) for ``input`` and 0 for ``other``; nextafter passes the gradient to ``input`` (0 where
``input == other``) and gives 0 to ``other``; ldexp's ``other`` gets ``g * result * log(2)``
(none when it is an integer tensor, and then ``input``'s is torch's integer
``g * pow(2, other)``: 0 for a negative exponent); frexp's mantissa gets
``g / 2 ** exponent`` with the power in float32 (torch's, but finite below 2 ** -150); its
exponent is an int32 tensor with no gradient. (heaviside, igamma and igammac, made with
autograd.Function, are in numbagrad/pointwise_extra.py.)
"""

import operator

import numpy as np

from ... import dtypes
from ...engine.record import record
from ...engine.registry import BY_NAME, Sample, defop
from ...tensor import Tensor
from ..linalg.common import return_type
from ..linalg.extras import increasing_powers
from ..out_api import into
from . import logic as math_logic
from .forward import torch_layout
from .math_api import (
    _plain,
    _promote,
    binary_op,
    need_tensor,
    not_implemented_for,
)
from .pointwise import to_dtype, unary
from .public import inplace_function
from .special_api import _check_int, _check_tensor
from .special_ops import POLYGAMMA

_PAIRS = [((), ()), ((4,), (4,)), ((2, 3), (3,)), ((2, 1), (1, 3))]
_SAME = [((), ()), ((4,), (4,)), ((2, 3), (3,))]  # in-place: self keeps its shape


# torch's copysign_tensor_self_backward: grad * result / self, masked to 0 where self is 0
defop("copysign", "CopysignBackward0", 2, grads=("0.0 if a == 0.0 else g * y / a", "0.0"),
      fwd="copysign(a, b)", forward=np.copysign, torch="copysign",
      doc="Element-wise magnitude of ``input`` with the sign of ``other``.")
defop("copysign_scalar", "CopysignBackward1", 1, grads=("0.0 if a == 0.0 else g * y / a",),
      fwd="copysign(a, f0)", forward=lambda a, s: np.copysign(a, a.dtype.type(s)),
      samples=[Sample((s,), {}, c) for s in [(), (5,)]
               for c in ("lib.copysign(x0, -1.0)", "x0.copysign(2.0)")])
defop("ldexp", "LdexpBackward0", 2, grads=("g * exp2(b)", "g * y * 0.6931471805599453"),
      fwd="a * exp2(b)", forward=lambda a, b: a * np.exp2(b), torch="ldexp",
      doc="Element-wise ``input * 2 ** other``.", samples=[Sample(s) for s in _PAIRS])
# an integer exponent: torch's derivative is grad * pow(2, other) in integers, 0 for other < 0
defop("ldexp_int", "LdexpBackward0", 2, grads=("g * exp2(b) if b >= 0.0 else 0.0", None),
      fwd="a * exp2(b)", forward=lambda a, b: a * np.exp2(b), torch=None,
      samples=[Sample(s, {}, "lib.ldexp(x0, (lib.arange(x1.numel()) % 4).reshape(x1.shape))")
               for s in _PAIRS])  # (torch's derivative is no derivative below 0)
# (the exponents do not come from x1's values: an integer cast of a traced value is a guard,
# and the compile and fusion tests replay one trace for new inputs)
# torch's g / exp2(exponent) with exp2 of the int32 exponent in float32: 0 from 2 ** 128 up
# (|input| >= 2 ** 127); else mantissa / input, exactly 2 ** -exponent (the exponent is 0 at
# 0, inf and NaN). Not torch's inf below 2 ** -150: an infinite branch would make the
# differentiable derivative's where() NaN
defop("frexp", "FrexpBackward0", 1,
      grads=("0.0 if (abs(a) >= 1.7014118346046923e38 and abs(a) <= 1.7976931348623157e308) "
             "else (g * y / a if (a != 0.0 and abs(a) <= 1.7976931348623157e308) else g)",),
      fwd="frexp_mantissa(a)", forward=lambda a: np.frexp(a)[0], torch="frexp",
      samples=[Sample((s,), {}, "lib.frexp(x0).mantissa") for s in [(), (4,), (2, 3)]])
# no replay formula: nextafter's step is the operands' own dtype's, not float64's. torch's
# input gradient is 0 where input == other (the result is other there)
defop("nextafter", "NextafterBackward0", 2, grads=("0.0 if a == b else g", "0.0"),
      forward=np.nextafter,
      torch="nextafter", samples=[Sample(s) for s in _PAIRS])
defop("rsub", "RsubBackward0", 2, grads=("-g * f0", "g"), fwd="b - f0 * a",
      forward=lambda a, b, al: b - a.dtype.type(al) * a,
      samples=[Sample(s, kw, "lib.rsub(x0, x1, **kw)") for s in _PAIRS
               for kw in ({}, {"alpha": 2.0})])
# (alpha 1: elementwise.py's rsub_scalar, the record of ``2.0 - x``)
defop("rsub_scalar_alpha", "RsubBackward1", 1, grads=("-g * f1",), fwd="f0 - f1 * a",
      forward=lambda a, o, al: a.dtype.type(o) - a.dtype.type(al) * a,
      samples=[Sample((s,), kw, "lib.rsub(x0, 1.5, **kw)") for s in [(), (5,)]
               for kw in ({}, {"alpha": -0.5})])
# torch.fill: the value's gradient is the sum of g (FillBackward1), the input's is zero
defop("fill_scalar", "FillBackward0", 1, grads=("0.0",), fwd="f0", torch=None,
      forward=lambda a, v: np.full_like(a, v)[()],
      samples=[Sample((s,), {}, "lib.fill(x0, 1.5)") for s in [(), (4,)]])
# (torch takes a 0-d value only; the fusion test gives both operands one (N,) shape, whose
# sum is one: a 0-d x1 is passed as it is, so the scalar stream's test can run the sample)
defop("fill_tensor", "FillBackward1", 2, grads=("0.0", "g"), fwd="b", torch=None,
      forward=lambda a, b: np.broadcast_to(b, a.shape).astype(a.dtype)[()],
      samples=[Sample((s, ()), {}, "lib.fill(x0, x1 if x1.dim() == 0 else x1.sum())")
               for s in [(), (4,), (2, 3)]])

# torch's in-place polygamma_ is its other overload's node
defop("polygamma_inplace", "PolygammaBackward1", 1, forward=POLYGAMMA.forward,
      grads=POLYGAMMA.grads, fwd=POLYGAMMA.fwd, domain=POLYGAMMA.domain, torch=None,
      samples=[Sample((s,), {"n": n}, "(x0 * 1.0).polygamma_(kw['n'])")
               for s in [(), (5,)] for n in (0, 2)])

# in-place comparisons on a tensor that requires grad: a 0/1 result with a zero derivative
_COMPARE = {"eq": "==", "ne": "!=", "ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
_UFUNC = {"eq": operator.eq, "ne": operator.ne, "ge": operator.ge, "gt": operator.gt,
          "le": operator.le, "lt": operator.lt}
for _cmp, _sym in _COMPARE.items():
    _node = _cmp.capitalize() + "Backward"
    defop(f"{_cmp}_inplace_scalar", _node + "0", 1, grads=("0.0",),
          fwd=f"1.0 if a {_sym} f0 else 0.0", torch=None,
          forward=lambda a, v, f=_UFUNC[_cmp]: f(a, a.dtype.type(v)).astype(a.dtype),
          samples=[Sample((s,), {}, f"(x0 * 1.0).{_cmp}_(0.3)") for s in [(), (5,)]])
    defop(f"{_cmp}_inplace", _node + "1", 2, grads=("0.0", "0.0"),
          fwd=f"1.0 if a {_sym} b else 0.0", torch=None,
          forward=lambda a, b, f=_UFUNC[_cmp]: f(a, b).astype(a.dtype),
          samples=[Sample(s, {}, f"(x0 * 1.0).{_cmp}_(x1)") for s in _SAME])


# ---- differentiable functions ---------------------------------------------------------------
def copysign(input, other, *, out=None):  # noqa: A002
    """Element-wise magnitude of ``input`` with the sign of ``other`` (a tensor or a number).

    Same as ``torch.copysign``; integer operands compute in the default float dtype.
    """
    if out is not None:
        return into("copysign", out, copysign, input, other)
    need_tensor(input, "copysign")
    if isinstance(other, Tensor):
        return binary_op("copysign", input, other, "copysign")
    dt = _promote(input, other)
    if not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    return unary("copysign_scalar", to_dtype(input, dt), float(other))


def ldexp(input, other, *, out=None):  # noqa: A002
    """Element-wise ``input * 2 ** other``.

    Same as ``torch.ldexp``: integer operands compute in the default float dtype.
    """
    if out is not None:
        return into("ldexp", out, ldexp, input, other)
    need_tensor(input, "ldexp")
    need_tensor(other, "ldexp", "other", 2)
    integer = not (other.dtype.is_floating_point or other.dtype is dtypes.bool_)
    return binary_op("ldexp_int" if integer else "ldexp", input, other, "ldexp")


frexp_return = return_type("frexp", ("mantissa", "exponent"))


def frexp(input):  # noqa: A002
    """Element-wise decomposition ``input = mantissa * 2 ** exponent``, ``|mantissa|`` in
    [0.5, 1); the exponent is an int32 tensor.

    Same as ``torch.frexp``: a ``(mantissa, exponent)`` named tuple.
    """
    need_tensor(input, "frexp")
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    _, e = np.frexp(input._data)
    e = np.where(np.isfinite(input._data), e, 0).astype(np.int32)  # torch's 0 at inf, NaN
    return frexp_return(unary("frexp", input), _plain(torch_layout(e, (input._data,))))


def nextafter(input, other, *, out=None):  # noqa: A002
    """Element-wise next floating-point value after ``input`` toward ``other``.

    Same as ``torch.nextafter``: the gradient passes to ``input``; ``other`` gets zero.
    """
    if out is not None:
        return into("nextafter", out, nextafter, input, other)
    need_tensor(input, "nextafter")
    need_tensor(other, "nextafter", "other", 2)
    dt = _promote(input, other)
    if not dt.is_floating_point:
        raise not_implemented_for("nextafter_cpu", input if not input.dtype.is_floating_point
                                  else other)
    a, b = to_dtype(input, dt), to_dtype(other, dt)
    out = np.nextafter(a._data, b._data)
    out = torch_layout(out, (a._data, b._data)) if type(out) is np.ndarray else out
    return record(BY_NAME["nextafter"], out, (a, b))


def rsub(input, other, *, alpha=1):  # noqa: A002
    """``other - alpha * input``: subtraction with the operands swapped.

    Same as ``torch.rsub``.

    Args:
        input: the input tensor.
        other: a tensor or a number, broadcastable with ``input``.
        alpha: the multiplier of ``input`` (default 1).

    Returns:
        ``other - alpha * input``, of the broadcast shape and promoted dtype.
    """
    need_tensor(input, "rsub")
    dt = _promote(input, other)
    if dt is dtypes.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if not dt.is_floating_point:  # integers: the value, nothing to differentiate
        o = other._data if isinstance(other, Tensor) else other
        a, b = np.asarray(input._data, dt.np), np.asarray(o, dt.np)
        return _plain(torch_layout(b - dt.np.type(alpha) * a, (a, b)))
    if isinstance(other, Tensor):
        return binary_op("rsub", input, other, "rsub", (float(alpha),))
    if alpha == 1:
        return unary("rsub_scalar", to_dtype(input, dt), float(other))
    return unary("rsub_scalar_alpha", to_dtype(input, dt), float(other), float(alpha))


def fill(input, value):  # noqa: A002
    """A tensor of ``input``'s shape and dtype filled with ``value`` (a number or a 0-d tensor).

    Same as ``torch.fill``: differentiable in a tensor ``value``.

    Args:
        input: the input tensor. Its shape and dtype are the result's.
        value: a number or a 0-d tensor.

    Returns:
        A new tensor.
    """
    need_tensor(input, "fill")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")
    recorded = isinstance(value, Tensor) and value.requires_grad and \
        input.dtype.is_floating_point
    # a recorded value is read past item(), which a compile trace would guard: the
    # FillBackward1 node lets the replay recompute it
    v = np.asarray(value._data).item() if recorded else \
        value.item() if isinstance(value, Tensor) else value
    out = np.full(input.shape, v, input._data.dtype)
    out = out if out.ndim else out[()]
    if not input.dtype.is_floating_point:
        return _plain(out)
    if recorded:
        return record(BY_NAME["fill_tensor"], out, (input, to_dtype(value, input.dtype)))
    if input.requires_grad:
        return record(BY_NAME["fill_scalar"], out, (input,), (), (float(v),))
    return _plain(out)


# ---- no derivative in torch ---------------------------------------------------------------
def signbit(input, *, out=None):  # noqa: A002
    """Element-wise test of the sign bit (True for -0.0 and negative NaN), a bool tensor.

    Same as ``torch.signbit``.
    """
    if out is not None:
        return into("signbit", out, signbit, input)
    need_tensor(input, "signbit")
    x = np.asarray(input._data)
    return _plain(torch_layout(np.signbit(x) if x.dtype.kind == "f" else x < 0, (x,)))


def positive(input):  # noqa: A002
    """``input`` itself (unary plus).

    Same as ``torch.positive``: refused for bool tensors.
    """
    need_tensor(input, "positive")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _integer_only(name, ufunc, doc):
    def fn(input, other, *, out=None):  # noqa: A002
        if out is not None:
            return into(name, out, fn, input, other)
        need_tensor(input, name)
        need_tensor(other, name, "other", 2)
        dt = _promote(input, other)
        if dt.is_floating_point or dt is dtypes.bool_:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{dt.scalar_name}'")
        a, b = np.asarray(input._data, dt.np), np.asarray(other._data, dt.np)
        return _plain(torch_layout(ufunc(a, b), (a, b)))
    fn.__name__ = name
    fn.__doc__ = f"{doc}\n\n    Same as ``torch.{name}``: integer tensors only.\n    "
    return fn


gcd = _integer_only("gcd", np.gcd, "Element-wise greatest common divisor (non-negative).")
lcm = _integer_only("lcm", np.lcm, "Element-wise least common multiple (non-negative).")


def polygamma_inplace_value(self, n):
    """``self.polygamma_(n)``'s value, on torch's PolygammaBackward1 node."""
    n = _check_int("polygamma", "n", 1, n)
    _check_tensor("polygamma", self)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return unary("polygamma_inplace", self, float(n))


def _shift(name, kernel, left, doc):
    def fn(input, other, *, out=None):  # noqa: A002
        if out is not None:
            return into(name, out, fn, input, other)
        need_tensor(input, name)
        dt = _promote(input, other)
        if dt.is_floating_point or dt is dtypes.bool_:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")
        a = np.asarray(input._data, dt.np)
        b = np.asarray(other._data if isinstance(other, Tensor) else other, dt.np)
        # torch: a shift by a negative count or by the width or more gives 0 (left) or the
        # sign fill (right), where NumPy's (C's) shift is undefined
        bad = (b < 0) | (b >= 8 * dt.np.itemsize)
        safe = np.where(bad, 0, b).astype(dt.np)
        v = np.left_shift(a, safe) if left else np.right_shift(a, safe)
        zero = np.zeros_like(v)
        v = np.where(bad, zero if left else np.where(a < 0, ~zero, zero), v)
        return _plain(torch_layout(np.asarray(v, dt.np), (a, b)))
    fn.__name__ = name
    fn.__doc__ = f"{doc}\n\n    Same as ``torch.{name}``: integer tensors only.\n    "
    return fn


bitwise_left_shift = _shift("bitwise_left_shift", "lshift_cpu", True,
                            "Element-wise ``input << other`` (0 for counts out of range).")
bitwise_right_shift = _shift("bitwise_right_shift", "rshift_cpu", False,
                             "Element-wise arithmetic ``input >> other``.")


def vander(x, N=None, increasing=False):  # noqa: N803 - torch's keyword
    """The Vandermonde matrix of the 1-D ``x``: columns ``x ** (N - 1)``, ..., ``x ** 0`` (or
    increasing powers).

    Same as ``torch.vander``: built as torch builds it (a column of ones, then a cumulative
    product of ``x``); integer and bool inputs give int64.
    """
    need_tensor(x, "vander", "x")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if not x.dtype.is_floating_point:
        x = _plain(np.asarray(x._data, np.int64))
    if n == 0:
        return _plain(np.empty((x.shape[0], 0), x._data.dtype))
    out = increasing_powers(x, n)
    return out if increasing else out.flip(1)


# ---- in-place comparisons ------------------------------------------------------------------
def compare_into(self, name, other):
    """``self.<name>_(other)``'s value: 1 where the comparison holds, else 0, in self's dtype;
    recorded as torch's zero-derivative node when self or other requires grad."""
    if not (self.requires_grad or (isinstance(other, Tensor) and other.requires_grad)):
        return getattr(math_logic, name)(self, other)
    # not math_logic's comparison: a compile trace would guard its mask, where the node
    # recorded here lets the replay recompute the value
    a, b, _ = math_logic._operands(name, self, other)
    value = np.asarray(_UFUNC[name](a, b)).astype(self._data.dtype)
    value = torch_layout(value, (a, b)) if value.ndim else value[()]
    if isinstance(other, Tensor):
        return record(BY_NAME[f"{name}_inplace"], value, (self, to_dtype(other, self.dtype)))
    return record(BY_NAME[f"{name}_inplace_scalar"], value, (self,), (), (float(other),))


__all__ = ["copysign", "ldexp", "frexp", "nextafter", "rsub",
           "signbit", "positive", "gcd", "lcm", "fill", "bitwise_left_shift",
           "bitwise_right_shift", "vander"]

# Tensor methods this module adds (bound in numbagrad/_inplace_forms.py): torch has no
# Tensor.rsub
TENSOR_METHODS = {name: globals()[name] for name in __all__
                  if name not in ("rsub", "fill", "vander")}

# torch's in-place function forms: torch.gcd_(x, y) is x.gcd_(y)
_INPLACE_FUNCTIONS = ["gcd_", "lcm_", "ldexp_", "xlogy_"]
globals().update({n: inplace_function(n) for n in _INPLACE_FUNCTIONS})
__all__ += _INPLACE_FUNCTIONS
