"""Branch-free exp, log, tanh and sigmoid that LLVM can vectorize: numbagrad's one
implementation of each, bound as ``exp``, ``log``, ``tanh`` and ``sigmoid`` in every
generated kernel (numbagrad.engine.kernelgen's header): eager's forward of the ops whose
formula rounds more than once (ops.elementwise.forward.eager_forward), the backward sweeps, the
compiled replay and its fused elementwise loops. One implementation everywhere is what
makes replay equal eager to the bit; NumPy's loops could not be matched (its float64 tanh
is its own SIMD code, its float32 exp is not correctly rounded, and both vary with the
CPU's dispatch).

Why vectorizable: PyPI's llvmlite has no SVML, so a loop calling ``math.exp`` or
``math.tanh`` makes one libm call per element and never vectorizes. On this project's AVX2
machines libm's tanh costs ~14 ns per float64 and exp ~5 ns, which made the fused 3 x 4M
workload slower than torch (Sleef, 4 lanes). These use only arithmetic, comparisons
(selects) and integer bit tricks on the float's representation, so a loop of them compiles
to AVX2 code.

Accuracy (tests/test_fusion.py, against NumPy over the whole float range, infinities, NaN,
signed zeros and subnormals): log within 1 ulp, exp, tanh and sigmoid within 2 (against long
double: exp and tanh 1.5 ulp at most, sigmoid 2.4); float32 results are computed in float64
and rounded once.
The reductions are Cody-Waite with the rational approximations of Cephes (S. L. Moshier).

Also torch's sign and pow(tensor, number) (``sgn``, ``pw``), for the generated kernels and
the structured ones alike.
"""

import math
import platform

import llvmlite.binding as llb
from llvmlite import ir
from numba import config, njit, types
from numba.extending import intrinsic

# ---- bit casts (free: a register move LLVM folds away) ------------------------------------


@intrinsic
def _as_int(typingctx, x):
    """The int64 whose bits are float64 ``x``."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _as_float(typingctx, n):
    """The float64 whose bits are int64 ``n``."""
    if n != types.int64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


def _has_fma():
    """Whether the CPU Numba compiles for has a fused multiply-add instruction (every ARM64;
    x86-64 from Haswell and Piledriver). A CPU named in NUMBA_CPU_NAME is not asked."""
    if config.CPU_NAME not in (None, "host"):
        return False
    if platform.machine().lower() in ("aarch64", "arm64"):
        return True
    return bool(llb.get_host_cpu_features().get("fma", False))


_HAS_FMA = _has_fma()


@intrinsic
def _fma(typingctx, a, b, c):
    """``a * b + c`` in float64, rounded once (LLVM's llvm.fma) where the CPU has the
    instruction; elsewhere a multiply and an add (libm's exact fma would be a call per
    element and keep the loops from vectorizing). Numba never fuses a multiply-add itself
    (it would need fastmath), so the kernels' other arithmetic keeps NumPy's roundings."""
    if not all(isinstance(t, (types.Float, types.Integer)) for t in (a, b, c)):
        return None

    def codegen(context, builder, sig, args):
        d = ir.DoubleType()
        a, b, c = [context.cast(builder, v, t, types.float64) for v, t in zip(args, sig.args)]
        if not _HAS_FMA:
            return builder.fadd(builder.fmul(a, b), c)
        fn = builder.module.declare_intrinsic("llvm.fma", [d], ir.FunctionType(d, [d, d, d]))
        return builder.call(fn, [a, b, c])

    return types.float64(a, b, c), codegen


# Adding 1.5 * 2**52 rounds a float of magnitude < 2**51 to an integer held in the low
# mantissa bits, so the integer is read without a float -> int conversion (AVX2 has none
# for 64-bit lanes) and written back the same way.
_SHIFT = 6755399441055744.0
_SHIFT_BITS = 0x4338000000000000


@njit(cache=True, inline="always", error_model="numpy")
def _pow2(n):
    """2.0 ** n for an integral float n in [-1022, 1023]."""
    return _as_float((_as_int(n + _SHIFT) - _SHIFT_BITS + 1023) << 52)


# ---- exp ------------------------------------------------------------------------------------

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93145751953125e-1  # few bits: n * _LN2_HI is exact for |n| < 2**11
_LN2_LO = 1.42860682030941723212e-6


@njit(cache=True, inline="always", error_model="numpy")
def _pade(x, n):
    """Cephes' Pade form of exp on x = n ln2 + r, |r| <= ln2 / 2: (r P(r^2), Q(r^2)), with
    exp(r) = (Q + r P) / (Q - r P); r P and Q each rounded about once (FMA)."""
    r = _fma(-n, _LN2_LO, _fma(-n, _LN2_HI, x))
    rr = r * r
    px = _fma(r * rr, _fma(1.26177193074810590878e-4, rr, 3.02994407707441961300e-2), r)
    qx = _fma(_fma(_fma(3.00198505138664455042e-6, rr, 2.52448340349684104192e-3), rr,
                   2.27265548208155028766e-1), rr, 2.0)
    return px, qx


@njit(cache=True, inline="always", error_model="numpy")
def vexp(x):
    """exp(x) within 2 ulp: x = n ln2 + r, |r| <= ln2 / 2; exp(r) by Cephes' Pade form
    1 + 2 r P(r^2) / (Q(r^2) - r P(r^2)); 2**n applied as two factors so results in the
    subnormal range round once."""
    xc = x if x > -746.0 else -746.0  # NaN lands here too; the last line restores it
    xc = xc if xc < 710.0 else 710.0
    n = (xc * _LOG2E + _SHIFT) - _SHIFT
    px, qx = _pade(xc, n)
    p = 1.0 + 2.0 * (px / (qx - px))
    n1 = math.floor(n * 0.5)
    y = (p * _pow2(n1)) * _pow2(n - n1)  # the first product is exact; one rounding
    return y if x == x else x


# ---- log ------------------------------------------------------------------------------------

_SQRT_HALF = 0.70710678118654752440


@njit(cache=True, inline="always", error_model="numpy")
def vlog(x):
    """log(x) within 1 ulp: x = 2**e m, m in [sqrt(1/2), sqrt(2)); log(m) by Cephes'
    rational approximation in m - 1; e ln2 added in two parts."""
    sub = x < 2.2250738585072014e-308  # subnormal (and zero, negatives: fixed below)
    xs = x * 18014398509481984.0 if sub else x  # * 2**54: subnormals become normal
    bits = _as_int(xs)
    e_bits = (bits >> 52) & 0x7FF
    m = _as_float((bits & 0xFFFFFFFFFFFFF) | 0x3FE0000000000000)  # in [0.5, 1)
    e = _as_float(e_bits + _SHIFT_BITS) - _SHIFT - 1022.0 - (54.0 if sub else 0.0)
    low = m < _SQRT_HALF
    e = e - 1.0 if low else e
    m = m + m if low else m
    z = m - 1.0
    zz = z * z
    num = (((((1.01875663804580931796e-4 * z + 4.97494994976747001425e-1) * z
              + 4.70579119878881725854e0) * z + 1.44989225341610930846e1) * z
            + 1.79368678507819816313e1) * z + 7.70838733755885391666e0)
    den = (((((z + 1.12873587189167450590e1) * z + 4.52279145837532221105e1) * z
             + 8.29875266912776603211e1) * z + 7.11544750618563894466e1) * z
           + 2.31251620126765340583e1)
    y = z * (zz * num / den)
    y = y - e * 2.121944400546905827679e-4
    y = y - 0.5 * zz
    y = (z + y) + e * 0.693359375
    y = -math.inf if x == 0.0 else y
    y = math.nan if x < 0.0 else y
    y = x if (x != x or x == math.inf) else y
    return y


# ---- tanh, sigmoid ----------------------------------------------------------------------------


@njit(cache=True, inline="always", error_model="numpy")
def vtanh(x):
    """tanh(x) within 2 ulp: Cephes' rational form below |x| = 0.625, else
    1 - 2 (Q - r P) / ((2^n + 1) Q + (2^n - 1) r P) with x's sign, which is
    1 - 2 / (exp(2|x|) + 1) written on exp's Pade form (one division instead of two)."""
    ax = abs(x)
    z = x * x
    num = _fma(_fma(-9.64399179425052238628e-1, z, -9.92877231001918586564e1), z,
               -1.61468768441708447952e3)
    den = _fma(_fma(z + 1.12811678491632931402e2, z, 2.23548839060100448583e3), z,
               4.84406305325125486048e3)
    small = _fma(x * z, num / den, x)
    small = x if z == 0.0 else small  # keeps -0.0 (the sum above would give +0.0)
    a2 = ax + ax if ax < 20.0 else 40.0  # tanh(20) is 1.0; NaN lands here, restored below
    n = (a2 * _LOG2E + _SHIFT) - _SHIFT  # >= 2 where this branch is taken
    px, qx = _pade(a2, n)
    s = _pow2(n)
    big = 1.0 - 2.0 * (qx - px) / _fma(s + 1.0, qx, (s - 1.0) * px)
    big = -big if x < 0.0 else big
    y = small if ax < 0.625 else big
    return y if x == x else x


@njit(cache=True, inline="always", error_model="numpy")
def vsigmoid(x):
    """1 / (1 + exp(-x)) within 2 ulp, never overflowing: e = exp(-|x|) and 1 / (1 + e) or
    e / (1 + e) by x's sign (the table's sigmoid, without the branch)."""
    ax = abs(x)
    e = vexp(-ax)
    d = 1.0 + e
    y = (1.0 if x >= 0.0 else e) / d
    return y if x == x else x


# ---- torch's sign and pow(tensor, number) --------------------------------------------------


@njit(cache=True, inline="always", error_model="numpy")
def sgn(x):
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)  # torch: sgn(NaN) = sgn(-0.0) = 0


@njit(cache=True, inline="always", error_model="numpy")
def pw(x, e):
    # torch's pow(tensor, number): these exponents are sqrt, rsqrt, products and reciprocals
    # there (sqrt(-inf) is nan where pow(-inf, 0.5) is inf), the rest C's pow
    if e == 1.0:
        return x
    if e == 2.0:
        return x * x
    if e == 0.0:
        return 1.0
    if e == -1.0:
        return 1.0 / x
    if e == 0.5:
        return math.sqrt(x)
    if e == -0.5:
        return 1.0 / math.sqrt(x)
    if e == 3.0:
        return x * x * x
    if e == -2.0:
        return 1.0 / (x * x)
    return x ** e
