"""Unary elementwise records of the pointwise math API (trigonometric, hyperbolic, logarithms,
angles, rounding, logit, nan_to_num, one-sided clamps): forward, torch's derivative formula, replay
formula. The scalar functions they call are in engine/scalar_math.py.

Conventions pinned to torch: ceil, trunc, round(decimals=) and sgn have a zero derivative,
frac passes the gradient; logit's derivative is NaN outside [0, 1] without ``eps`` and 0
outside [eps, 1 - eps] with it; nan_to_num passes the gradient of finite elements only;
clamp_min / clamp_max pass it where the bound is not active (at the bound too) and propagate
NaN in the value, dropping its gradient.
"""

import math

import numpy as np

from ...engine import scalar_math as sm
from ...engine.registry import PUBLIC, Sample, defop
from .basic import POS, _sign

UNIT = (-0.9, 0.9)  # asin, acos, atanh: inside (-1, 1)


def _vectorized(fn):
    """A NumPy forward from a scalar function (the reference the kernels are held to)."""
    vec = np.vectorize(fn, otypes=[np.float64])

    def forward(a, *attrs):
        return np.asarray(vec(a, *attrs), a.dtype)[()]
    return forward


def _integral(fn):
    def forward(a):
        return fn(a) if a.dtype.kind == "f" else a.copy()
    return forward


def _unary(name, grad_fn, grad, fwd, **kw):
    kw.setdefault("forward", _vectorized(getattr(sm, name)) if hasattr(sm, name) else None)
    return defop(name, grad_fn, 1, grads=(grad,), fwd=fwd, torch=kw.pop("torch", name), **kw)


def _public(name, grad_fn, grad, fwd, **kw):
    """An op with all its public forms (ops/elementwise/public.py)."""
    return _unary(name, grad_fn, grad, fwd, api=PUBLIC, **kw)


_public("asin", "AsinBackward0", "g / sqrt(1.0 - a * a)", "asin(a)", domain=UNIT,
        aliases={"arcsin": PUBLIC}, doc="Element-wise arcsine.")
_public("acos", "AcosBackward0", "-g / sqrt(1.0 - a * a)", "acos(a)", domain=UNIT,
        aliases={"arccos": PUBLIC}, doc="Element-wise arccosine.")
_public("atan", "AtanBackward0", "g / (a * a + 1.0)", "atan(a)", aliases={"arctan": PUBLIC},
        doc="Element-wise arctangent.")
_public("sinh", "SinhBackward0", "g * cosh(a)", "sinh(a)", doc="Element-wise hyperbolic sine.")
_public("cosh", "CoshBackward0", "g * sinh(a)", "cosh(a)", doc="Element-wise hyperbolic cosine.")
_public("asinh", "AsinhBackward0", "g / sqrt(a * a + 1.0)", "asinh(a)",
        aliases={"arcsinh": PUBLIC}, doc="Element-wise inverse hyperbolic sine.")
_public("acosh", "AcoshBackward0", "g / sqrt(a * a - 1.0)", "acosh(a)", domain=(1.1, 3.0),
        aliases={"arccosh": PUBLIC}, doc="Element-wise inverse hyperbolic cosine.")
_public("atanh", "AtanhBackward0", "g / (1.0 - a * a)", "atanh(a)", domain=UNIT,
        aliases={"arctanh": PUBLIC}, doc="Element-wise inverse hyperbolic tangent.")
_public("exp2", "Exp2Backward0", "g * y * 0.6931471805599453", "exp2(a)",
        doc="Element-wise ``2 ** input``.")
_public("log2", "Log2Backward0", "g / (a * 0.6931471805599453)", "log2(a)", domain=POS,
        doc="Element-wise base-2 logarithm.")
_public("log10", "Log10Backward0", "g / (a * 2.302585092994046)", "log10(a)", domain=POS,
        doc="Element-wise base-10 logarithm.")
_public("erfc", "ErfcBackward0", "-1.1283791670955126 * exp(-a * a) * g", "erfc(a)",
        doc="Element-wise complementary error function, ``1 - erf(input)``.")
_public("reciprocal", "ReciprocalBackward0", "-g * (y * y)", "1.0 / a",
        forward=lambda a: np.reciprocal(a), doc="Element-wise reciprocal, ``1 / input``.")
_RAD = math.pi / 180.0
_DEG = 180.0 / math.pi


def _scaled(c):
    # in the input's dtype, as torch's mul by a wrapped number: one rounding, bit for bit
    return lambda a: a * a.dtype.type(c)


defop("deg2rad", "Deg2RadBackward0", 1, grads=(f"g * {_RAD!r}",), fwd=f"a * {_RAD!r}",
      forward=_scaled(_RAD), torch="deg2rad", api=PUBLIC,
      doc="Element-wise conversion of angles from degrees to radians.")
defop("rad2deg", "Rad2DegBackward0", 1, grads=(f"g * {_DEG!r}",), fwd=f"a * {_DEG!r}",
      forward=_scaled(_DEG), torch="rad2deg", api=PUBLIC,
      doc="Element-wise conversion of angles from radians to degrees.")
# (through expand: torch's own derivative of a bare leaf is a ZeroTensor, which .numpy() refuses)
_unary("sgn", "SgnBackward0", "0.0", "sgn(a)", forward=_sign,
       samples=[Sample((s,), {}, "lib.sgn(x0.expand(2, *x0.shape))")
                for s in [(), (4,), (2, 3)]])
_unary("ceil", "CeilBackward0", "0.0", "ceil(a)", forward=_integral(np.ceil),
       doc="Element-wise ceiling: the smallest integer not less than each element.")
_unary("trunc", "TruncBackward0", "0.0", "trunc(a)", forward=_integral(np.trunc),
       doc="Element-wise rounding toward zero.")
_unary("frac", "FracBackward0", "g", "frac(a)")
_unary("logit", "LogitBackward0", "logit_backward(g, a, f0)", "logit(a, f0)",
       domain=(0.05, 0.95),
       samples=[Sample((s,), kw, "lib.logit(x0, **kw)") for s in [(), (7,), (2, 3)]
                for kw in ({}, {"eps": 0.2})])
_unary("round_decimals", "RoundBackward1", "0.0", "round_decimals(a, f0, f1)",
       samples=[Sample((s,), {"decimals": d}, "lib.round(x0, **kw)") for s in [(), (7,)]
                for d in (0, 2, -1)])
# nan_to_num is two steps (NaN and +inf, then -inf): a formula has two attributes, not three
_unary("nan_to_num", "NanToNumBackward0",
       "g if (a == a and a <= 1.7976931348623157e308) else 0.0", "nan_to_num_pos(a, f0, f1)",
       forward=_vectorized(sm.nan_to_num_pos),
       samples=[Sample((s,), kw, "lib.nan_to_num(x0, **kw)") for s in [(), (5,)]
                for kw in ({}, {"nan": 1.0, "posinf": 2.0, "neginf": -3.0})])
_unary("nan_to_num_neg", "NanToNumBackward0", "0.0 if a < -1.7976931348623157e308 else g",
       "f0 if a < -1.7976931348623157e308 else a", torch=None,
       forward=lambda a, v: np.where(a == -np.inf, a.dtype.type(v), a)[()],
       samples=[Sample((s,), {}, "lib.nan_to_num(x0, neginf=-5.0)") for s in [(), (5,)]])
_unary("clamp_min", "ClampMinBackward0", "g if a >= f0 else 0.0",
       "a if (a >= f0 or a != a) else f0",
       forward=lambda a, lo: np.where((a >= lo) | (a != a), a, a.dtype.type(lo))[()],
       samples=[Sample((s,), {"min": 0.3}, "lib.clamp_min(x0, **kw)") for s in [(), (7,)]])
_unary("clamp_max", "ClampMaxBackward0", "g if a <= f0 else 0.0",
       "a if (a <= f0 or a != a) else f0",
       forward=lambda a, hi: np.where((a <= hi) | (a != a), a, a.dtype.type(hi))[()],
       samples=[Sample((s,), {"max": 0.3}, "x0.clamp_max(**kw)") for s in [(), (7,)]])
# a tensor with a Python number: the number is an attribute (torch's Scalar overloads)
_unary("fmod_scalar", "FmodBackward0", "g", "fmod(a, f0)", forward=lambda a, b: np.fmod(
    a, a.dtype.type(b)), samples=[Sample((s,), {}, c) for s in [(), (7,)]
                                  for c in ("lib.fmod(x0, 0.7)", "lib.fmod(x0, -1.5)")])
_unary("remainder_scalar", "RemainderBackward0", "g", "remainder(a, f0)",
       forward=_vectorized(sm.remainder),
       samples=[Sample((s,), {}, c) for s in [(), (7,)]
                for c in ("lib.remainder(x0, 0.7)", "x0.remainder(-1.5)")])
_unary("xlogy_scalar_other", "XlogyBackward2", "0.0 if (a == 0.0 and f0 <= 0.0) else xlogy(g, f0)",
       "xlogy(a, f0)", forward=_vectorized(sm.xlogy),
       samples=[Sample((s,), {}, "lib.xlogy(x0, 1.5)") for s in [(), (7,)]])
_unary("xlogy_scalar_self", "XlogyBackward1", "g * f0 / a", "xlogy(f0, a)", domain=POS,
       forward=lambda a, x: _vectorized(sm.xlogy)(np.full_like(a, x), a),
       samples=[Sample((s,), {}, "lib.xlogy(2.5, x0)") for s in [(), (7,)]])
