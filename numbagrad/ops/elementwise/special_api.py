"""Special functions: lgamma, digamma, polygamma, erfinv, mvlgamma, i0, sinc (torch's names,
functions and Tensor methods), and the front ends of torch.special's own table ops (i0e, i1,
erfcx, ndtri...: numbagrad/special.py names them)."""

import operator

import numpy as np

from ...engine.registry import FORMULA_FUNCTIONS
from ...tensor import Tensor, _make
from . import special_ops
from .math_api import _promote, binary_op
from .pointwise import unary

__all__ = ["lgamma", "digamma", "polygamma", "erfinv", "mvlgamma", "i0", "sinc"]


def _check_tensor(name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _check_int(name, arg, pos, value):
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = operator.index(value)  # NumPy integers pass, as in torch
        except TypeError:
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be int, not "
                            f"{type(value).__name__}") from None
    return int(value)


def lgamma(input):  # noqa: A002 - torch's keyword
    """log |Gamma(x)|: inf at the poles (0 and the negative integers)."""
    _check_tensor("lgamma", input)
    return unary("lgamma", input)


def digamma(input):  # noqa: A002
    """d lgamma / dx: -inf / +inf at -0 / +0, nan at the negative integers."""
    _check_tensor("digamma", input)
    return unary("digamma", input)


def polygamma(n, input):  # noqa: A002
    """The ``n``-th derivative of digamma (n = 0: digamma itself)."""
    n = _check_int("polygamma", "n", 1, n)
    _check_tensor("polygamma", input)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return unary("polygamma", input, float(n))


def erfinv(input):  # noqa: A002
    """Inverse of erf on [-1, 1]: +-inf at +-1, nan outside."""
    _check_tensor("erfinv", input)
    return unary("erfinv", input)


def mvlgamma(input, p):  # noqa: A002
    """Multivariate log-gamma of dimension ``p``:
    sum_{j<p} lgamma(x - j/2) + p (p - 1) / 4 log(pi)."""
    _check_tensor("mvlgamma", input)
    p = _check_int("mvlgamma", "p", 2, p)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return unary("mvlgamma", input, float(p))


def _polygamma_method(self, n):
    """The ``n``-th derivative of digamma of this tensor, ``polygamma(n, self)``.

    Same as ``torch.Tensor.polygamma``.
    """
    return polygamma(n, self)


def _special_unary(name, fname, doc, prefix="special_"):
    """The front end of table op ``name``; its errors name ``prefix + fname`` as torch's do."""
    def fn(input):  # noqa: A002 - torch's keyword
        _check_tensor(prefix + fname, input)
        return unary(name, input)
    fn.__name__ = fname
    fn.__doc__ = f"{doc}\n\nSame as ``torch.{'special.' if prefix else ''}{fname}``."
    return fn


i0 = _special_unary("i0", "i0", "Modified Bessel function of the first kind of order 0.", "")
sinc = _special_unary("sinc", "sinc", "Normalized sinc, ``sin(pi x) / (pi x)``, 1 at 0.", "")
# torch.special's i0 and sinc: the same ops, their errors named special_i0, special_sinc
special_i0 = _special_unary("i0", "i0", "Modified Bessel function of the first kind of order 0.")
special_sinc = _special_unary("sinc", "sinc", "Normalized sinc, ``sin(pi x) / (pi x)``, 1 at 0.")
i0e = _special_unary("special_i0e", "i0e", "Exponentially scaled i0: ``exp(-|x|) i0(x)``.")
i1 = _special_unary("special_i1", "i1",
                    "Modified Bessel function of the first kind of order 1.")
i1e = _special_unary("special_i1e", "i1e", "Exponentially scaled i1: ``exp(-|x|) i1(x)``.")
erfcx = _special_unary("special_erfcx", "erfcx",
                       "Scaled complementary error function, ``exp(x ** 2) erfc(x)``.")
ndtri = _special_unary("special_ndtri", "ndtri",
                       "Inverse of the standard normal CDF (the quantile function).")
log_ndtr = _special_unary("special_log_ndtr", "log_ndtr",
                          "Log of the standard normal CDF, accurate in the lower tail.")
entr = _special_unary("special_entr", "entr",
                      "Element-wise entropy ``-x log(x)``: 0 at 0, -inf below.")


def wrapped_number(value, other):
    """A Python number operand beside Tensor ``other`` as torch wraps it: a 0-d tensor in the
    two operands' promoted dtype (the number never promotes a float tensor; its value is cast
    once, from double); anything else unchanged."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or \
            not isinstance(other, Tensor):
        return value
    return _make(np.asarray(value, _promote(other, value).np)[()])


def invalid_pair(fname, a, b, names=("input", "self", "other")):
    """torch's TypeError for a binary special function called without a Tensor operand
    (``names``: the first operand as a Tensor, as a Number, then the second's)."""
    first, number, second = names
    return TypeError(
        f"{fname}() received an invalid combination of arguments - got "
        f"({type(a).__name__}, {type(b).__name__}), but expected one of:\n"
        f" * (Tensor {first}, Tensor {second}, *, Tensor out = None)\n"
        f" * (Number {number}, Tensor {second}, *, Tensor out = None)\n"
        f" * (Tensor {first}, Number {second}, *, Tensor out = None)\n")


def xlog1py(input, other):  # noqa: A002
    """Element-wise ``input * log1p(other)``, 0 where ``input`` is 0 (NaN where other is).

    Same as ``torch.special.xlog1py``.
    """
    a, b = wrapped_number(input, other), wrapped_number(other, input)
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise invalid_pair("special_xlog1py", input, other)
    return binary_op("special_xlog1py", a, b, "xlog1py")


# Tensor-level versions of the scalar functions the formulas call (for create_graph=True)
def _formula_polygamma(n, x):
    return polygamma(int(n), x)


def _formula_mvdigamma(x, p):
    total = None
    for j in range(int(p) - 1, -1, -1):
        term = digamma(x - 0.5 * j) if j else digamma(x)
        total = term if total is None else total + term
    return total


FORMULA_FUNCTIONS.update(digamma=digamma, polygamma=_formula_polygamma,
                         mvdigamma=_formula_mvdigamma, i0=i0, i0e=i0e, i1=i1, i1e=i1e,
                         xlog1py=xlog1py)
assert special_ops.LGAMMA.grads  # the records are declared (imported for their side effect)

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {"lgamma": lgamma, "digamma": digamma, "polygamma": _polygamma_method,
                  "erfinv": erfinv, "mvlgamma": mvlgamma, "i0": i0, "sinc": sinc}

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"digamma": "one", "erfinv": "one", "i0": "one", "lgamma": "one", "mvlgamma": "one",
             "polygamma": "one", "sinc": "one"}
