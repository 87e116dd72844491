"""Scalar @njit special functions (lgamma, digamma, polygamma, erfinv...) for the generated
kernels (bound in every generated kernel: numbagrad.engine.kernelgen's header).

They follow the algorithms torch's CPU kernels use (Cephes' digamma and Hurwitz zeta, the
asymptotic trigamma, a rational erfinv start refined by two Newton steps), so values agree
with torch to the last bits, including its answers at poles (inf / nan) and where its
algorithm is only approximate (polygamma of negative non-integers for n >= 2).
"""

import math

import numpy as np
from numba import njit

__all__ = ["lgamma", "digamma", "trigamma", "hurwitz_zeta", "polygamma", "erfinv",
           "mvlgamma", "mvdigamma", "i0", "i0e", "i1", "i1e", "erfcx", "ndtri", "log_ndtr",
           "sinc", "entr", "xlog1py"]

_JIT = dict(cache=True, inline="always", error_model="numpy")
_PSI_10 = 2.25175258906672110764  # digamma(10)
# Bernoulli-number coefficients of the asymptotic digamma series, highest power first
_DIGAMMA_ASYMPTOTIC = np.array([8.33333333333333333333E-2, -2.10927960927960927961E-2,
                                7.57575757575757575758E-3, -4.16666666666666666667E-3,
                                3.96825396825396825397E-3, -8.33333333333333333333E-3,
                                8.33333333333333333333E-2])
# (2k)! / B_2k: the Euler-Maclaurin tail of the Hurwitz zeta series
_ZETA_TAIL = np.array([12.0, -720.0, 30240.0, -1209600.0, 47900160.0,
                       -1.8924375803183791606e9, 7.47242496e10, -2.950130727918164224e12,
                       1.1646782814350067249e14, -4.5979787224074726105e15,
                       1.8152105401943546773e17, -7.1661652561756670113e18])
_MACHEP = 1.11022302462515654042E-16
_LOG_PI = math.log(math.pi)


@njit(**_JIT)
def lgamma(x):
    # the C library's: inf at the poles (0 and the negative integers), as torch
    return math.lgamma(x)


@njit(**_JIT)
def digamma(x):
    if x == 0.0:
        return math.copysign(math.inf, -x)  # +-0 -> -+inf
    result = 0.0
    if x < 0.0:
        if x == np.trunc(x):
            return math.nan  # the negative integers are poles
        # reflection psi(x) = psi(1 - x) - pi / tan(pi x), with tan of the fractional part
        # (pi times a large x loses the digits tan depends on)
        result = -math.pi / math.tan(math.pi * (x - np.trunc(x)))
        x = 1.0 - x
    while x < 10.0:  # recurrence psi(x) = psi(x + 1) - 1 / x up to the asymptotic range
        result -= 1.0 / x
        x += 1.0
    if x == 10.0:
        return result + _PSI_10
    tail = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        poly = 0.0
        for c in _DIGAMMA_ASYMPTOTIC:
            poly = poly * z + c
        tail = z * poly
    return result + math.log(x) - 0.5 / x - tail


@njit(**_JIT)
def trigamma(x):
    sign = 1.0
    result = 0.0
    if x < 0.5:  # reflection: psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x)
        sign = -1.0
        s = math.sin(math.pi * x)
        result -= (math.pi * math.pi) / (s * s)
        x = 1.0 - x
    for _ in range(6):
        result += 1.0 / (x * x)
        x += 1.0
    ixx = 1.0 / (x * x)
    result += (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6.0 - ixx * (1.0 / 30.0 - ixx * (1.0 / 42.0)))
               ) / x
    return sign * result


@njit(**_JIT)
def hurwitz_zeta(x, q):
    """zeta(x, q) = sum_k (k + q)^-x: direct terms, then the Euler-Maclaurin tail."""
    if x == 1.0:
        return math.inf
    if x < 1.0:
        return math.nan
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan
    s = q ** -x
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        s += b
        if -_MACHEP * s < b < _MACHEP * s:
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    a = 1.0
    k = 0.0
    for j in range(12):
        a *= x + k
        b /= w
        t = a * b / _ZETA_TAIL[j]
        s = s + t
        if abs(t / s) < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


@njit(**_JIT)
def polygamma(n, x):
    """The n-th derivative of digamma (``n`` a non-negative integer held in a float)."""
    if n == 0.0:
        return digamma(x)
    if n == 1.0:
        return trigamma(x)
    sign = 1.0 if int(n) % 2 == 1 else -1.0
    return sign * math.exp(math.lgamma(n + 1.0)) * hurwitz_zeta(n + 1.0, x)


@njit(**_JIT)
def erfinv(y):
    y_abs = abs(y)
    if y_abs > 1.0:
        return math.nan
    if y_abs == 1.0:
        return math.copysign(math.inf, y)
    two_over_sqrt_pi = 2.0 * (1.0 / math.sqrt(math.pi))
    if y_abs <= 0.7:  # central range: a rational function of y^2, then Newton on erf
        z = y * y
        num = ((-0.140543331 * z + 0.914624893) * z - 1.645349621) * z + 0.886226899
        dem = (((0.012229801 * z - 0.329097515) * z + 1.442710462) * z - 2.118377725) * z + 1.0
        x = y * num / dem
        for _ in range(2):
            x = x - (math.erf(x) - y) / (two_over_sqrt_pi * math.exp(-x * x))
        return x
    # tails: a rational function of sqrt(-log((1 - |y|) / 2)), then Newton on erfc, whose
    # residual against 1 - |y| (exact here) keeps the digits erf's loses next to 1
    q = 1.0 - y_abs
    z = math.sqrt(-math.log(q / 2.0))
    num = ((1.641345311 * z + 3.429567803) * z - 1.624906493) * z - 1.970840454
    dem = (1.637067800 * z + 3.543889200) * z + 1.0
    x = num / dem
    for _ in range(3):
        x = x + (math.erfc(x) - q) / (two_over_sqrt_pi * math.exp(-x * x))
    return math.copysign(x, y)


@njit(**_JIT)
def mvlgamma(x, p):
    """Multivariate log-gamma of dimension ``p``: sum_j lgamma(x - j / 2) + p(p-1)/4 log(pi)."""
    total = 0.0
    for j in range(int(p) - 1, -1, -1):
        total += math.lgamma(x - 0.5 * j)
    return total + p * (p - 1.0) * _LOG_PI / 4.0


@njit(**_JIT)
def mvdigamma(x, p):
    """d mvlgamma(x, p) / dx."""
    total = 0.0
    for j in range(int(p) - 1, -1, -1):
        total += digamma(x - 0.5 * j)
    return total


@njit(**_JIT)
def _bessel_i_scaled(x, nu):
    """exp(-|x|) I_nu(|x|) for nu = 0 or 1: the power series up to |x| = 30, beyond it the
    asymptotic series (its terms shrink until k ~ 2|x|: machine precision from there)."""
    ax = abs(x)
    if ax != ax:
        return ax
    if ax <= 30.0:
        q = ax * ax / 4.0
        term = 1.0 if nu == 0 else ax / 2.0
        total = term
        k = 1.0
        while term > 1e-17 * total:
            term *= q / (k * (k + nu))
            total += term
            k += 1.0
        return total * math.exp(-ax)
    if ax == math.inf:
        return 0.0
    mu = 4.0 * nu * nu
    term = 1.0
    total = 1.0
    k = 1.0
    while abs(term) > 1e-17:
        term *= -(mu - (2.0 * k - 1.0) ** 2) / (k * 8.0 * ax)
        total += term
        k += 1.0
    return total / math.sqrt(2.0 * math.pi * ax)


@njit(**_JIT)
def i0e(x):
    return _bessel_i_scaled(x, 0)


@njit(**_JIT)
def i0(x):
    ax = abs(x)
    if ax > 30.0:  # exp(|x|) overflows to inf before I0 does, as in torch's Cephes
        return math.exp(ax) * _bessel_i_scaled(x, 0)
    return _bessel_i_scaled(x, 0) * math.exp(ax)


@njit(**_JIT)
def i1e(x):
    return math.copysign(_bessel_i_scaled(x, 1), x)


@njit(**_JIT)
def i1(x):
    return math.copysign(math.exp(abs(x)) * _bessel_i_scaled(x, 1), x)


@njit(**_JIT)
def erfcx(x):
    """exp(x^2) erfc(x): directly below 2, beyond it the continued fraction of erfc (whose
    value underflows where erfcx's does not)."""
    if x < 2.0:
        return math.exp(x * x) * math.erfc(x)
    if x == math.inf:
        return 0.0
    f = x
    for k in range(60, 0, -1):  # x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))
        f = x + 0.5 * k / f
    return 1.0 / (f * math.sqrt(math.pi))


@njit(**_JIT)
def _ndtr(x):
    return 0.5 * math.erfc(-x * 0.7071067811865476)


@njit(**_JIT)
def ndtri(p):
    """The inverse of the normal CDF: a rational start (Abramowitz-Stegun 26.2.23), then
    Halley steps on ndtr, taken on the lower tail (1 - p is exact for p >= 1/2)."""
    if p != p or p < 0.0 or p > 1.0:
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p == 0.5:
        return 0.0
    sign = -1.0
    if p > 0.5:
        p = 1.0 - p
        sign = 1.0
    t = math.sqrt(-2.0 * math.log(p))
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
          (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    for _ in range(4):
        density = math.exp(-0.5 * x * x) / 2.5066282746310002
        if density == 0.0:
            break
        u = (_ndtr(x) - p) / density
        x = x - u / (1.0 + 0.5 * x * u)
    return -sign * x


@njit(**_JIT)
def log_ndtr(x):
    # torch's split: below -1 from erfcx (erfc itself would underflow), else log1p
    t = x * 0.7071067811865476
    if x < -1.0:
        return math.log(erfcx(-t) / 2.0) - t * t
    return math.log1p(-math.erfc(t) / 2.0)


@njit(**_JIT)
def sinc(x):
    if x == 0.0:
        return 1.0
    product = math.pi * x
    return math.sin(product) / product


@njit(**_JIT)
def entr(x):
    if x != x:
        return x
    if x > 0.0:
        return -x * math.log(x)
    if x == 0.0:
        return 0.0
    return -math.inf


@njit(**_JIT)
def xlog1py(x, y):
    if y != y:
        return math.nan
    if x == 0.0:
        return 0.0
    return x * math.log1p(y)
