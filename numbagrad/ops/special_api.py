"""Special functions: lgamma, digamma, polygamma, erfinv, mvlgamma (torch's names, functions
and Tensor methods)."""

import operator

from ..tensor import Tensor
from . import special_ops
from .pointwise import unary
from .registry import FORMULA_FUNCTIONS

__all__ = ["lgamma", "digamma", "polygamma", "erfinv", "mvlgamma"]


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
                         mvdigamma=_formula_mvdigamma)
assert special_ops.LGAMMA.grads  # the records are declared (imported for their side effect)

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {"lgamma": lgamma, "digamma": digamma, "polygamma": _polygamma_method,
                  "erfinv": erfinv, "mvlgamma": mvlgamma}
