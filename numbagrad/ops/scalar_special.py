"""Scalar @njit special functions (lgamma, digamma, polygamma, erfinv...) for the generated
kernels (bound in every generated kernel: numbagrad.ops.kernelgen's header).

They follow the algorithms torch's CPU kernels use (Cephes' digamma and Hurwitz zeta, the
asymptotic trigamma, a rational erfinv start refined by two Newton steps), so values agree
with torch to the last bits, including its answers at poles (inf / nan) and where its
algorithm is only approximate (polygamma of negative non-integers for n >= 2).
"""

import math

import numpy as np
from numba import njit

__all__ = ["lgamma", "digamma", "trigamma", "hurwitz_zeta", "polygamma", "erfinv",
           "mvlgamma", "mvdigamma"]

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
