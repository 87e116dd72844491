"""torch.special: the special functions under torch's names.

Most are numbagrad's own ops under another name (expit is sigmoid, gammaln is lgamma); the
ones torch.special adds are table ops (numbagrad/ops/elementwise/special_ops.py: i0e, i1,
erfcx, ndtri, log_ndtr, entr, xlog1py), custom Functions where torch differentiates one operand only
(zeta, gammainc, gammaincc: the other raises torch's error in backward), or values without a
derivative, as in torch (the Bessel functions of scipy.special, whose Cephes algorithms are
torch's, and the orthogonal polynomials by their recurrences).
"""

import numpy as np

from . import dtypes
from .autograd.function import Function
from .ops.elementwise.math_api import _promote, logit, need_tensor
from .ops.elementwise.math_api import round as _round
from .ops.elementwise.math_api import xlogy as _xlogy
from .ops.elementwise.public import erf, erfc, exp, exp2, expm1, log, log1p, sigmoid
from .ops.elementwise.special_api import (
    digamma,
    entr,
    erfcx,
    erfinv,
    i0e,
    i1,
    i1e,
    invalid_pair,
    lgamma,
    log_ndtr,
    ndtri,
    polygamma,
    wrapped_number,
    xlog1py,
)
from .ops.elementwise.special_api import mvlgamma as multigammaln
from .ops.elementwise.special_api import special_i0 as i0
from .ops.elementwise.special_api import special_sinc as sinc
from .ops.reduce.reductions import log_softmax, logsumexp, softmax
from .tensor import Tensor, _make

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
    "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1",
    "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta"]

_SQRT1_2 = 0.7071067811865476


def _alias(fn, fname, pos=1):
    """numbagrad's ``fn`` under torch.special's name ``fname``: its Tensor argument (at
    ``pos``, or torch's keyword ``input``) checked first, the error naming special_<fname>
    as torch's does."""
    def alias(*args, **kwargs):
        if "input" in kwargs:
            args = (*args[:pos - 1], kwargs.pop("input"), *args[pos - 1:])
        need_tensor(args[pos - 1] if len(args) >= pos else None, f"special_{fname}",
                    "input", pos)
        return fn(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = fname
    summary = (fn.__doc__ or "").strip().split("\n\n")[0]
    alias.__doc__ = f"{summary}\n\nSame as ``torch.special.{fname}``."
    return alias


expit = _alias(sigmoid, "expit")
erf, erfc, erfinv = _alias(erf, "erf"), _alias(erfc, "erfc"), _alias(erfinv, "erfinv")
exp2, expm1, log1p = _alias(exp2, "exp2"), _alias(expm1, "expm1"), _alias(log1p, "log1p")
logit = _alias(logit, "logit")
gammaln, digamma, psi = _alias(lgamma, "gammaln"), _alias(digamma, "digamma"), \
    _alias(digamma, "psi")
polygamma = _alias(polygamma, "polygamma", 2)
multigammaln = _alias(multigammaln, "multigammaln")
softmax, log_softmax = _alias(softmax, "softmax"), _alias(log_softmax, "log_softmax")
logsumexp = _alias(logsumexp, "logsumexp")


def xlogy(input, other):  # noqa: A002
    """Element-wise ``input * log(other)``, 0 where ``input`` is 0.

    Same as ``torch.special.xlogy``.
    """
    if not (isinstance(input, Tensor) or isinstance(other, Tensor)):
        raise invalid_pair("special_xlogy", input, other)
    return _xlogy(input, other)


def round(input, *, decimals=0):  # noqa: A001,A002 - torch's names
    """Element-wise rounding to ``decimals`` places, halves to even (torch.round's decimals
    overload even at 0: RoundBackward1).

    Same as ``torch.special.round``.
    """
    need_tensor(input, "special_round")
    return _round(input, decimals=decimals)


def ndtr(input):  # noqa: A002 - torch's keyword
    """The standard normal CDF, ``(1 + erf(x / sqrt(2))) / 2`` (composed as torch does).

    Same as ``torch.special.ndtr``.
    """
    need_tensor(input, "special_ndtr")
    if not input.dtype.is_floating_point:
        input = input.to(dtypes.get_default_dtype())
    return (1 + erf(input * _SQRT1_2)) * 0.5


def _float_dtype(*tensors):
    dt = tensors[0].dtype if len(tensors) == 1 else _promote(*tensors)
    return dt if dt.is_floating_point else dtypes.get_default_dtype()


def _scipy_values(name, dt, *tensors):
    """scipy.special.<name> of the tensors' values, computed in float64, in dtype ``dt``."""
    from scipy import special  # on first use: scipy.special costs 0.3 s

    arrays = [np.asarray(t._data, np.float64) for t in tensors]
    with np.errstate(all="ignore"):
        out = getattr(special, name)(*arrays)
    if name == "airy":
        out = out[0]
    return _make(np.asarray(out, dt.np)[()])


# ---- differentiable in the second operand only ----------------------------------------------
class _OtherOnly(Function):
    """f(input, other) whose derivative torch gives for ``other`` only (``_other_grad``)."""

    scipy_name = ""
    error = ""

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(a, b)
        return _scipy_values(cls.scipy_name, _float_dtype(a, b), a, b)

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{cls.error}' is not implemented.")
        gb = cls._other_grad(grad, a, b)
        return None, gb.sum_to_size(b.shape) if tuple(gb.shape) != tuple(b.shape) else gb


class SpecialZeta(_OtherOnly):
    scipy_name, error = "zeta", "zeta"

    @staticmethod
    def _other_grad(grad, x, q):
        return grad * -x * zeta(x + 1.0, q)


class Igamma(_OtherOnly):
    scipy_name, error = "gammainc", "igamma: input"

    @staticmethod
    def _other_grad(grad, a, x):
        return grad * exp((a - 1) * log(x) - x - lgamma(a))


class Igammac(_OtherOnly):
    scipy_name, error = "gammaincc", "igammac: input"

    @staticmethod
    def _other_grad(grad, a, x):
        return -grad * exp((a - 1) * log(x) - x - lgamma(a))


def _named(out, name):
    """``out`` with torch's node name (a custom Function's node is named <class>Backward)."""
    if out._tape is not None and out._node >= 0:
        out._tape.names[out._node] = name
    return out


def zeta(input, other):  # noqa: A002
    """Hurwitz zeta ``sum_k (k + other) ** -input``; differentiable in ``other`` only.

    Same as ``torch.special.zeta``.
    """
    a, b = wrapped_number(input, other), wrapped_number(other, input)
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise invalid_pair("special_zeta", input, other)
    return _named(SpecialZeta.apply(a, b), "SpecialZetaBackward0")


def _incomplete_gamma(fname, fn, kernel, input, other):
    need_tensor(input, fname)
    need_tensor(other, fname, "other", 2)
    dt = _promote(input, other)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")
    return _named(fn.apply(input, other), f"{fn.__name__}Backward0")


def gammainc(input, other):  # noqa: A002
    """Regularized lower incomplete gamma P(input, other); differentiable in ``other`` only.

    Same as ``torch.special.gammainc``.
    """
    return _incomplete_gamma("special_gammainc", Igamma, "igamma_cpu", input, other)


def gammaincc(input, other):  # noqa: A002
    """Regularized upper incomplete gamma Q(input, other); differentiable in ``other`` only.

    Same as ``torch.special.gammaincc``.
    """
    return _incomplete_gamma("special_gammaincc", Igammac, "igammac_cpu", input, other)


# ---- values without a derivative (torch's have no grad_fn) ----------------------------------
def _no_grad_unary(fname, scipy_name, doc, arg="input"):
    def fn(input):  # noqa: A002
        need_tensor(input, f"special_{fname}", arg)
        return _scipy_values(scipy_name, _float_dtype(input), input)
    fn.__name__ = fname
    fn.__doc__ = f"{doc} No derivative, as in torch.\n\nSame as ``torch.special.{fname}``."
    return fn


airy_ai = _no_grad_unary("airy_ai", "airy", "Airy function Ai.", "x")
bessel_j0 = _no_grad_unary("bessel_j0", "j0", "Bessel function of the first kind, order 0.")
bessel_j1 = _no_grad_unary("bessel_j1", "j1", "Bessel function of the first kind, order 1.")
bessel_y0 = _no_grad_unary("bessel_y0", "y0", "Bessel function of the second kind, order 0.")
bessel_y1 = _no_grad_unary("bessel_y1", "y1", "Bessel function of the second kind, order 1.")
modified_bessel_i0 = _no_grad_unary("modified_bessel_i0", "i0",
                                    "Modified Bessel function of the first kind, order 0.")
modified_bessel_i1 = _no_grad_unary("modified_bessel_i1", "i1",
                                    "Modified Bessel function of the first kind, order 1.")
modified_bessel_k0 = _no_grad_unary("modified_bessel_k0", "k0",
                                    "Modified Bessel function of the second kind, order 0.")
modified_bessel_k1 = _no_grad_unary("modified_bessel_k1", "k1",
                                    "Modified Bessel function of the second kind, order 1.")
scaled_modified_bessel_k0 = _no_grad_unary("scaled_modified_bessel_k0", "k0e",
                                           "``exp(x) * modified_bessel_k0(x)``.", "x")
scaled_modified_bessel_k1 = _no_grad_unary("scaled_modified_bessel_k1", "k1e",
                                           "``exp(x) * modified_bessel_k1(x)``.", "x")


def spherical_bessel_j0(input):  # noqa: A002
    """Spherical Bessel function of the first kind of order 0, ``sin(x) / x``. No derivative,
    as in torch.

    Same as ``torch.special.spherical_bessel_j0``.
    """
    need_tensor(input, "special_spherical_bessel_j0", "x")
    x = np.asarray(input._data, np.float64)
    with np.errstate(all="ignore"):
        out = np.where(x == 0, 1.0, np.where(np.isinf(x), 0.0, np.sin(x) / x))
    return _make(np.asarray(out, _float_dtype(input).np)[()])


# ---- orthogonal polynomials of integer degree n (torch truncates a float n) ------------------
def _polynomial(fname, first, step, shifted=False):
    """P_n(x) by the three-term recurrence: ``first(s)`` is P_1, ``step(k, s, p, q)`` gives
    P_{k+1} from P_{k-1} = p and P_k = q; s is x, or 2x - 1 for the shifted families.
    Degree n < 0 gives 0, as in torch."""
    def fn(input, n):  # noqa: A002
        x, m = wrapped_number(input, n), wrapped_number(n, input)
        if not (isinstance(x, Tensor) and isinstance(m, Tensor)):
            raise invalid_pair(f"special_{fname}", input, n, ("x", "x", "n"))
        dt = _float_dtype(x, m)
        xv = np.asarray(x._data, np.float64)
        nv = np.trunc(np.asarray(m._data, np.float64))
        xv, nv = np.broadcast_arrays(xv, nv)
        s = 2.0 * xv - 1.0 if shifted else xv
        p, q = np.ones_like(s), first(s)
        out = np.where(nv == 0, p, q)
        top = int(np.nanmax(nv)) if nv.size and np.isfinite(np.nanmax(nv)) else 1
        with np.errstate(all="ignore"):
            for k in range(1, top):
                p, q = q, step(k, s, p, q)
                out = np.where(nv == k + 1, q, out)
        out = np.where(nv < 0, 0.0, out)
        return _make(np.asarray(out, dt.np)[()])
    fn.__name__ = fname
    fn.__doc__ = (f"{fname.replace('_', ' ').capitalize()} of degree ``n`` at ``input``. No "
                  f"derivative, as in torch.\n\nSame as ``torch.special.{fname}``.")
    return fn


def _chebyshev(k, s, p, q):
    return 2.0 * s * q - p


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", lambda s: s, _chebyshev)
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", lambda s: 2.0 * s, _chebyshev)
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", lambda s: 2.0 * s - 1.0,
                                     _chebyshev)
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", lambda s: 2.0 * s + 1.0,
                                     _chebyshev)
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", lambda s: s,
                                             _chebyshev, True)
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u",
                                             lambda s: 2.0 * s, _chebyshev, True)
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v",
                                             lambda s: 2.0 * s - 1.0, _chebyshev, True)
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w",
                                             lambda s: 2.0 * s + 1.0, _chebyshev, True)
hermite_polynomial_h = _polynomial("hermite_polynomial_h", lambda s: 2.0 * s,
                                   lambda k, s, p, q: 2.0 * s * q - 2.0 * k * p)
hermite_polynomial_he = _polynomial("hermite_polynomial_he", lambda s: s,
                                    lambda k, s, p, q: s * q - k * p)
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", lambda s: 1.0 - s,
                                    lambda k, s, p, q: ((2 * k + 1 - s) * q - k * p) / (k + 1))
legendre_polynomial_p = _polynomial("legendre_polynomial_p", lambda s: s,
                                    lambda k, s, p, q: ((2 * k + 1) * s * q - k * p) / (k + 1))
