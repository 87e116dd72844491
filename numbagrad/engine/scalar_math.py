"""Scalar @njit functions the pointwise math ops' formulas call (bound in every generated kernel:
numbagrad.engine.kernelgen's header). Each computes what torch's CPU kernel computes for one
float64 value; the Tensor-level twins the differentiable derivatives need are registered in
registry.FORMULA_FUNCTIONS by numbagrad/ops/elementwise/math_api.py."""

import math

import numpy as np
from numba import njit

__all__ = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "atan2", "hypot",
           "exp2", "log2", "log10", "erfc", "ceil", "trunc", "frac", "fmod", "remainder",
           "div_floor", "logaddexp", "logaddexp2", "xlogy", "logit", "logit_backward",
           "nan_to_num_pos", "round_decimals", "copysign", "frexp_mantissa"]

_LN2 = 0.6931471805599453
_DOUBLE_MAX = 1.7976931348623157e308


def _scalar(fn):
    return njit(cache=True, inline="always", error_model="numpy")(fn)


@_scalar
def asin(a):
    return math.asin(a)


@_scalar
def acos(a):
    return math.acos(a)


@_scalar
def atan(a):
    return math.atan(a)


@_scalar
def sinh(a):
    return math.sinh(a)


@_scalar
def cosh(a):
    return math.cosh(a)


@_scalar
def asinh(a):
    return math.asinh(a)


@_scalar
def acosh(a):
    return math.acosh(a)


@_scalar
def atanh(a):
    return math.atanh(a)


@_scalar
def atan2(a, b):
    return math.atan2(a, b)


@_scalar
def hypot(a, b):
    return math.hypot(a, b)


@_scalar
def exp2(a):
    return np.exp2(a)


@_scalar
def log2(a):
    return math.log2(a) if a > 0.0 else (-math.inf if a == 0.0 else math.nan)


@_scalar
def log10(a):
    return math.log10(a) if a > 0.0 else (-math.inf if a == 0.0 else math.nan)


@_scalar
def erfc(a):
    return math.erfc(a)


@_scalar
def ceil(a):
    return np.ceil(a)  # (math.ceil returns an integer)


@_scalar
def trunc(a):
    return np.trunc(a)


@_scalar
def frac(a):
    return a - np.trunc(a)


@_scalar
def fmod(a, b):
    return np.fmod(a, b)


@_scalar
def remainder(a, b):
    # torch's: the remainder of fmod moved to the divisor's sign
    m = np.fmod(a, b)
    if m != 0.0 and (b < 0.0) != (m < 0.0):
        m += b
    return m


@_scalar
def div_floor(a, b):
    """torch's floor division of floats (div(rounding_mode="floor")): NaN for an infinite
    dividend, the exact quotient rounded down otherwise."""
    if b == 0.0:
        return a / b
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0.0 and (b < 0.0) != (mod < 0.0):
        div -= 1.0
    if div == 0.0:
        return math.copysign(0.0, a / b)
    floordiv = np.floor(div)
    if div - floordiv > 0.5:
        floordiv += 1.0
    return floordiv


@_scalar
def logaddexp(a, b):
    if math.isinf(a) and a == b:  # -inf + -inf would give NaN through a - b
        return a
    m = max(a, b) if a == a and b == b else a + b
    return m + math.log1p(math.exp(-abs(a - b)))


@_scalar
def logaddexp2(a, b):
    if math.isinf(a) and a == b:
        return a
    m = max(a, b) if a == a and b == b else a + b
    return m + math.log1p(np.exp2(-abs(a - b))) / _LN2


@_scalar
def xlogy(a, b):
    if b != b:
        return b
    if a == 0.0:
        return 0.0
    return a * math.log(b) if b > 0.0 else (a * -math.inf if b == 0.0 else math.nan)


@_scalar
def logit(a, eps):
    """log(a / (1 - a)), ``a`` clamped to [eps, 1 - eps] when eps >= 0 (eps < 0: none)."""
    if eps >= 0.0:
        a = eps if a < eps else (1.0 - eps if a > 1.0 - eps else a)
    if a == 1.0:
        return math.inf
    r = a / (1.0 - a)
    return math.log(r) if r > 0.0 else (-math.inf if r == 0.0 else math.nan)


@_scalar
def logit_backward(g, a, eps):
    """torch's logit derivative: NaN outside [0, 1] without eps, 0 outside [eps, 1 - eps]
    (NaN included: torch's test is ``eps <= a <= 1 - eps``)."""
    if eps < 0.0:
        if a < 0.0 or a > 1.0:
            return math.nan
    elif not (eps <= a <= 1.0 - eps):
        return 0.0
    return g / (a * (1.0 - a))


@_scalar
def nan_to_num_pos(a, nan, posinf):
    """NaN -> ``nan``, +inf -> ``posinf``; -inf is left to the next step."""
    if a != a:
        return nan
    return posinf if a > _DOUBLE_MAX else a


@_scalar
def round_decimals(a, ten_pow, flags):
    """torch.round(decimals=d): to even at ``10**-d``, ``ten_pow = 10**|d|``; ``flags``: 1 for
    d < 0, + 2 for float32, whose steps torch rounds to float32 each (as done here)."""
    negative = flags == 1.0 or flags == 3.0
    if flags >= 2.0:
        x, p = np.float32(a), np.float32(ten_pow)
        return np.rint(x / p) * p if negative else np.rint(x * p) / p
    return np.rint(a / ten_pow) * ten_pow if negative else np.rint(a * ten_pow) / ten_pow


@_scalar
def copysign(a, b):
    return math.copysign(a, b)


@_scalar
def frexp_mantissa(a):
    """frexp's mantissa in [0.5, 1): exact in any dtype (a power-of-two scaling)."""
    return math.frexp(a)[0]
