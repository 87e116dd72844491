"""The compiled (Numba) part of torch's CPU random streams (core/torch_rng), for what NumPy
cannot do at speed: the mt19937 and the transforms of draws of a million values or more
(NumPy's MT19937 makes words at a third of this speed), the AVX2 Box-Muller of normal_fill
on large float tensors (a float32 polynomial with fused multiply-adds), torch's sequential
samplers (Poisson, Gamma, Binomial
rejection loops; randperm's shuffle of a large n) and Dirichlet's vectorized row sums.
Each kernel compiles (or loads from Numba's cache) only when its path is first taken: none
runs at import, in layer initialisation or for the draws of ordinary sizes. The kernels
take torch's state as (words uint32[624], int64 [left, next]) (torch_mt.Engine.words)."""

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

N, M = 624, 397

_CHUNK = 1 << 14                     # raw draws per block: cache-sized, vectorizable passes

@intrinsic
def _fma(typingctx, a, b, c):
    """llvm.fma: torch's kernels call std::fma / _mm256_fmadd_ps, one rounding."""
    sig = a(a, b, c)

    def codegen(context, builder, signature, args):
        vals = [context.cast(builder, v, t, a) for v, t in zip(args, signature.args)]
        ty = vals[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [ty], ir.FunctionType(ty, [ty] * 3))
        return builder.call(fn, vals)
    return sig, codegen


@njit(cache=True)
def _twist(mt):
    for k in range(N):
        y = (mt[k] & np.uint32(0x80000000)) | (mt[(k + 1) % N] & np.uint32(0x7FFFFFFF))
        v = mt[(k + M) % N] ^ (y >> np.uint32(1))
        if mt[(k + 1) % N] & np.uint32(1):
            v ^= np.uint32(0x9908B0DF)
        mt[k] = v


@njit(cache=True)
def _temper(y):
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y


@njit(cache=True)
def raw32(mt, pos, out):
    """Fill ``out`` (uint32) with the engine's next draws, as torch's random() gives them."""
    left, nxt = pos[0], pos[1]
    i, n = 0, out.size
    while i < n:
        left -= 1
        if left == 0:
            _twist(mt)
            left, nxt = N, 0
        # after the check, draws nxt .. nxt+left-1 need no twist: a loop LLVM vectorizes
        k = min(n - i, left)
        for j in range(k):
            out[i + j] = _temper(mt[nxt + j])
        i += k
        nxt += k
        left -= k - 1
    pos[0], pos[1] = left, nxt


@njit(cache=True)
def uniform32(mt, pos, out, lo, hi):
    """float32 [lo, hi): 24 bits of one draw; a value rounded up to hi becomes lo."""
    buf = np.empty(min(out.size, _CHUNK), np.uint32)
    width = hi - lo   # torch's build contracts x * (to - from) + from into one fma
    i = 0
    while i < out.size:
        k = min(out.size - i, _CHUNK)
        b = buf[:k]
        raw32(mt, pos, b)
        for j in range(k):
            x = np.float32(b[j] & np.uint32(0xFFFFFF)) * np.float32(1.0 / 16777216.0)
            v = _fma(x, width, lo)
            out[i + j] = lo if v == hi else v
        i += k


@njit(cache=True)
def uniform64(mt, pos, out, lo, hi):
    """float64 [lo, hi): 53 bits of random64()."""
    buf = np.empty(2 * min(out.size, _CHUNK), np.uint32)
    width = hi - lo
    i = 0
    while i < out.size:
        k = min(out.size - i, _CHUNK)
        b = buf[:2 * k]
        raw32(mt, pos, b)
        for j in range(k):
            r = (np.uint64(b[2 * j]) << np.uint64(32)) | np.uint64(b[2 * j + 1])
            x = np.float64(r & np.uint64(0x1FFFFFFFFFFFFF)) * (1.0 / 9007199254740992.0)
            v = _fma(x, width, lo)
            out[i + j] = lo if v == hi else v
        i += k


@njit(cache=True)
def libm(which, x, out):
    """The C library's log, log1p, cos, sin, tan or exp (``which`` 0 to 5) of each element
    of x, one call each, as torch's double kernels make them."""
    for i in range(x.size):
        v = x[i]
        if which == 0:
            out[i] = math.log(v)
        elif which == 1:
            out[i] = math.log1p(v)
        elif which == 2:
            out[i] = math.cos(v)
        elif which == 3:
            out[i] = math.sin(v)
        elif which == 4:
            out[i] = math.tan(v)
        else:
            out[i] = math.exp(v)


@njit(cache=True)
def _box_muller64(d, mean, std):
    """NormalFill16<double> on d[0:16] in place."""
    for k in range(8):
        r = math.sqrt(-2.0 * math.log(1.0 - d[k]))
        t = 2.0 * math.pi * d[k + 8]
        d[k] = _fma(r * math.cos(t), std, mean)
        d[k + 8] = _fma(r * math.sin(t), std, mean)


@njit(cache=True)
def normal_fill64(mt, pos, out, mean, std):
    n = out.size
    uniform64(mt, pos, out, 0.0, 1.0)
    for i in range(0, n - 15, 16):
        _box_muller64(out[i:i + 16], mean, std)
    if n % 16:
        tail = out[n - 16:]
        uniform64(mt, pos, tail, 0.0, 1.0)
        _box_muller64(tail, mean, std)


@njit(cache=True)
def from_to(mt, pos, out, span, lo, wide):
    step = 2 if wide else 1
    buf = np.empty(step * min(out.size, _CHUNK), np.uint32)
    i = 0
    while i < out.size:
        k = min(out.size - i, _CHUNK)
        b = buf[:step * k]
        raw32(mt, pos, b)
        for j in range(k):
            if wide:
                r = (np.uint64(b[2 * j]) << np.uint64(32)) | np.uint64(b[2 * j + 1])
            else:
                r = np.uint64(b[j])
            out[i + j] = np.int64(r % span) + lo
        i += k



_F = np.float32

_SQRTHF, _HALF, _ONE = _F(0.707106781186547524), _F(0.5), _F(1.0)

_LP = (_F(7.0376836292E-2), _F(-1.1514610310E-1), _F(1.1676998740E-1), _F(-1.2420140846E-1),
       _F(1.4249322787E-1), _F(-1.6668057665E-1), _F(2.0000714765E-1), _F(-2.4999993993E-1),
       _F(3.3333331174E-1))

_LQ1, _LQ2 = _F(-2.12194440e-4), _F(0.693359375)

_DP1, _DP2, _DP3 = _F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8)

_S0, _S1, _S2 = _F(-1.9515295891E-4), _F(8.3321608736E-3), _F(-1.6666654611E-1)

_C0, _C1, _C2 = _F(2.443315711809948E-005), _F(-1.388731625493765E-003), _F(4.166664568298827E-002)

_FOPI = _F(1.27323954473516)

_TWO_PI32 = _F(2.0 * math.pi)

@intrinsic
def _bits(typingctx, x):
    """A float32's bits as an int32 (the casts avx_mathfun's masks work on)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.int32(types.float32), codegen


@intrinsic
def _float(typingctx, i):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


# The fmas below are where GCC contracts avx_mathfun's separate multiplies and adds when
# torch's AVX2 kernels are built: each multiply whose one use is an add, in source order.
@njit(cache=True)
def _box_muller_lanes(a, b, mean, std):
    """NormalFill16<float> (AVX2) lane by lane: a holds the u1 lanes and b the u2 lanes of
    the blocks; a gets the cosine outputs, b the sine ones. One flat branch-free loop, so
    that LLVM vectorizes it (a loop over one block's 8 lanes it leaves scalar)."""
    for i in range(a.size):
        # log256_ps(1 - u1): exponent and mantissa by bit masks, Cephes logf polynomial
        x = _ONE - a[i]
        xb = _bits(x)
        e = np.float32(np.int32((xb >> 23) - 127)) + _ONE
        x = _float(np.int32((xb & np.int32(~0x7F800000)) | np.int32(0x3F000000)))
        small = x < _SQRTHF
        tmp = x if small else _F(0.0)
        x = x - _ONE
        e = e - (_ONE if small else _F(0.0))
        x = x + tmp
        z = x * x
        y = _LP[0]
        y = _fma(y, x, _LP[1])
        y = _fma(y, x, _LP[2])
        y = _fma(y, x, _LP[3])
        y = _fma(y, x, _LP[4])
        y = _fma(y, x, _LP[5])
        y = _fma(y, x, _LP[6])
        y = _fma(y, x, _LP[7])
        y = _fma(y, x, _LP[8])
        y = _fma(y * x, z, e * _LQ1)
        y = _fma(-z, _HALF, y)
        r = np.sqrt(_F(-2.0) * _fma(e, _LQ2, x + y))
        # sincos256_ps(2 pi u2): octant j, Cody-Waite reduction, the two polynomials
        x = _TWO_PI32 * b[i]
        j = np.int32(x * _FOPI)
        j = (j + 1) & np.int32(~1)
        y = np.float32(j)
        x = _fma(y, _DP1, x)
        x = _fma(y, _DP2, x)
        x = _fma(y, _DP3, x)
        z = x * x
        c = _fma(_fma(_fma(_C0, z, _C1), z, _C2) * z, z, -(z * _HALF)) + _ONE
        s = _fma(_fma(_fma(_S0, z, _S1), z, _S2) * z, x, x)
        swap = (j & 2) != 0
        sn = c if swap else s
        cs = s if swap else c
        sn = _float(_bits(sn) ^ np.int32((j & 4) << 29))
        cs = _float(_bits(cs) ^ np.int32((~(j - 2) & 4) << 29))
        a[i] = _fma(r * cs, std, mean)
        b[i] = _fma(r * sn, std, mean)


@njit(cache=True)
def _box_muller32(d, start, nblocks, mean, std):
    """NormalFill16<float> on the 16-element blocks of d from start: the blocks' halves are
    gathered into lanes, transformed, and put back, a chunk at a time."""
    cb = min(nblocks, 512)
    a = np.empty(8 * cb, np.float32)
    b = np.empty(8 * cb, np.float32)
    for c0 in range(0, nblocks, cb):
        m = min(cb, nblocks - c0)
        for q in range(m):
            o = start + 16 * (c0 + q)
            for k in range(8):
                a[8 * q + k] = d[o + k]
                b[8 * q + k] = d[o + 8 + k]
        _box_muller_lanes(a[:8 * m], b[:8 * m], mean, std)
        for q in range(m):
            o = start + 16 * (c0 + q)
            for k in range(8):
                d[o + k] = a[8 * q + k]
                d[o + 8 + k] = b[8 * q + k]


@njit(cache=True)
def normal_fill32(mt, pos, out, mean, std):
    n = out.size
    uniform32(mt, pos, out, _F(0.0), _ONE)
    _box_muller32(out, 0, n // 16, mean, std)
    if n % 16:
        uniform32(mt, pos, out[n - 16:], _F(0.0), _ONE)
        _box_muller32(out, n - 16, 1, mean, std)


@njit(cache=True)
def normal_fill_half(mt, pos, out, mean, std):
    """normal_fill for the half types: only whole blocks' uniforms, then 16 for the tail
    (the float path draws one per element first)."""
    n = out.size
    nb = n // 16
    uniform32(mt, pos, out[:16 * nb], _F(0.0), _ONE)
    _box_muller32(out, 0, nb, mean, std)
    if n % 16:
        tail = np.empty(16, np.float32)
        uniform32(mt, pos, tail, _F(0.0), _ONE)
        _box_muller32(tail, 0, 1, mean, std)
        out[n - 16:] = tail


@njit(cache=True)
def randperm32(mt, pos, out):
    n = out.size
    for i in range(n):
        out[i] = i
    r = np.empty(1, np.uint32)
    for i in range(n - 1):
        raw32(mt, pos, r)
        z = np.int64(r[0]) % (n - i)
        out[i], out[z + i] = out[z + i], out[i]


@njit(cache=True)
def randperm64(mt, pos, out):
    r = np.empty(2, np.uint32)
    for i in range(out.size):
        raw32(mt, pos, r)
        z = np.int64(((np.uint64(r[0]) << np.uint64(32)) | np.uint64(r[1]))
                     % np.uint64(i + 1))
        out[i] = out[z]
        out[z] = i


@njit(cache=True)
def _next32(mt, pos):
    pos[0] -= 1
    if pos[0] == 0:
        _twist(mt)
        pos[0], pos[1] = N, 0
    y = _temper(mt[pos[1]])
    pos[1] += 1
    return y


@njit(cache=True)
def _unit(mt, pos):
    """uniform_real_distribution<double>(0, 1), one value."""
    hi = np.uint64(_next32(mt, pos))
    r = (hi << np.uint64(32)) | np.uint64(_next32(mt, pos))
    return np.float64(r & np.uint64(0x1FFFFFFFFFFFFF)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _std_normal(mt, pos, cache):
    """normal_distribution<double>(0, 1), with the generator's cached second value."""
    if cache[0] != 0.0:
        cache[0] = 0.0
        return cache[1]
    u1 = _unit(mt, pos)
    u2 = _unit(mt, pos)
    r = math.sqrt(-2.0 * math.log1p(-u2))
    t = 2.0 * math.pi * u1
    cache[0], cache[1] = 1.0, r * math.sin(t)
    return r * math.cos(t)


@njit(cache=True)
def poisson(mt, pos, lam, out):
    """sample_poisson: Hoermann's transformed rejection from lambda 10, else products of
    uniforms."""
    for i in range(lam.size):
        lm = lam[i]
        if lm >= 10:
            slam = math.sqrt(lm)
            loglam = math.log(lm)
            b = 0.931 + 2.53 * slam
            a = -0.059 + 0.02483 * b
            invalpha = 1.1239 + 1.1328 / (b - 3.4)
            vr = 0.9277 - 3.6224 / (b - 2)
            while True:
                u = _unit(mt, pos) - 0.5
                v = _unit(mt, pos)
                us = 0.5 - abs(u)
                k = np.int64(math.floor((2 * a / us + b) * u + lm + 0.43))
                if us >= 0.07 and v <= vr:
                    break
                if k < 0 or (us < 0.013 and v > us):
                    continue
                if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                        <= -lm + k * loglam - math.lgamma(k + 1.0)):
                    break
            out[i] = k
        elif lm == 0:
            out[i] = 0
        else:
            enlam = math.exp(-lm)
            x = 0
            prod = 1.0
            while True:
                prod *= _unit(mt, pos)
                if prod > enlam:
                    x += 1
                else:
                    break
            out[i] = x


@njit(cache=True)
def gamma(mt, pos, alpha, out, cache, single):
    """sample_gamma (Marsaglia-Tsang, alpha < 1 boosted): alpha's own arithmetic is in its
    dtype (``single``: float32), the rest in double, as torch's template mixes them."""
    third = np.float64(np.float32(1.0) / np.float32(3.0))
    for i in range(alpha.size):
        al = alpha[i]
        scale = 1.0
        if al < 1.0:
            if al == 0.0:
                out[i] = 0.0
                continue
            inv = np.float64(np.float32(1.0) / np.float32(al)) if single else 1.0 / al
            scale *= math.pow(1 - _unit(mt, pos), inv)
            al = np.float64(np.float32(al) + np.float32(1.0)) if single else al + 1.0
        d = np.float64(np.float32(al) - np.float32(third)) if single else al - third
        c = 1.0 / math.sqrt(9.0 * d)
        while True:
            while True:
                x = _std_normal(mt, pos, cache)
                y = 1.0 + c * x
                if y > 0:
                    break
            v = y * y * y
            u = 1 - _unit(mt, pos)
            xx = x * x
            if u < 1.0 - np.float64(np.float32(0.0331)) * xx * xx:
                break
            if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
                break
        out[i] = scale * d * v


_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287])

@njit(cache=True)
def _r(x, single):
    """A value of the template's scalar_t: float32 arithmetic is the double result rounded
    once (exact for +, -, *, / and sqrt of float32 operands)."""
    return np.float64(np.float32(x)) if single else x


@njit(cache=True)
def _stirling_tail(k):
    if k < 10:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


@njit(cache=True)
def _binomial_inversion(mt, pos, count, prob, s):
    geom_sum = 0.0
    num = 0.0
    logprob = _r(math.log1p(-prob), s)   # log1p of a float is a float
    while True:
        geom = math.ceil(math.log(_unit(mt, pos)) / logprob)
        geom_sum += geom
        if geom_sum > count:
            return num
        num = num + 1


@njit(cache=True)
def _btrs(mt, pos, count, prob, s):
    """Hoermann's BTRS as torch writes it (scalar_t count and prob, the rest in double)."""
    stddev = _r(math.sqrt(_r(_r(count * prob, s) * _r(1 - prob, s), s)), s)
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = _r(count * prob, s) + 0.5
    v_r = 0.92 - 4.2 / b
    r = _r(prob / _r(1 - prob, s), s)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(_r(_r(count + 1, s) * prob, s))
    while True:
        u = _unit(mt, pos) - 0.5
        v = _unit(mt, pos)
        us = 0.5 - abs(u)
        k = _r(math.floor((2 * a / us + b) * u + c), s)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        cmk1 = _r(_r(count - k, s) + 1, s)
        upper = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + _r(count + 1, s) * math.log((count - m + 1) / cmk1)
                 + (k + 0.5) * math.log(r * cmk1 / _r(k + 1, s))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(_r(count - k, s)))
        if v <= upper:
            return k


@njit(cache=True)
def binomial(mt, pos, count, prob, out, s):
    """sample_binomial: BTRS where the mean reaches 10, else inversion (mirrored past 1/2)."""
    for i in range(count.size):
        n, p = count[i], prob[i]
        if n <= 0.0 or p <= 0.0:
            out[i] = 0.0
        elif p >= 1.0:
            out[i] = n
        elif p <= 0.5:
            if _r(n * p, s) >= 10.0:
                out[i] = _btrs(mt, pos, n, p, s)
            else:
                out[i] = _binomial_inversion(mt, pos, n, p, s)
        elif p > 0.5:
            q = _r(1.0 - p, s)
            if _r(n * q, s) >= 10.0:
                out[i] = _r(n - _btrs(mt, pos, n, q, s), s)
            else:
                out[i] = _r(n - _binomial_inversion(mt, pos, n, q, s), s)
        else:
            out[i] = np.nan


@njit(cache=True)
def row_sums(x, out):
    """torch's sum of each contiguous float64 row (SumKernel.cpp, AVX2): rows of 4 or more
    in 4-lane vectors, 4 accumulators, cascaded every 16 steps; the tail, then the lanes."""
    k = x.shape[1]
    for r in range(x.shape[0]):
        row = x[r]
        if k < 4:
            acc = 0.0
            for i in range(k):
                acc += row[i]
            out[r] = acc
            continue
        nvec = k // 4
        size = nvec // 4
        lv = np.zeros((4, 4, 4))                       # level, accumulator, lane
        ceil_log2 = 1 if size <= 2 else int(math.floor(math.log2(size - 1))) + 1
        power = max(4, ceil_log2 // 4)
        step = 1 << power
        i = 0
        while i + step <= size:
            for _ in range(step):
                for a in range(4):
                    for lane in range(4):
                        lv[0, a, lane] += row[16 * i + 4 * a + lane]
                i += 1
            for j in range(1, 4):
                lv[j] += lv[j - 1]
                lv[j - 1] = 0.0
                if i & (((1 << power) - 1) << (j * power)):
                    break
        while i < size:
            for a in range(4):
                for lane in range(4):
                    lv[0, a, lane] += row[16 * i + 4 * a + lane]
            i += 1
        for j in range(1, 4):
            lv[0] += lv[j]
        part = lv[0, 0].copy()
        for v in range(size * 4, nvec):
            for lane in range(4):
                part[lane] += row[4 * v + lane]
        for a in range(1, 4):
            part += lv[0, a]
        acc = 0.0
        for i in range(nvec * 4, k):
            acc += row[i]
        for lane in range(4):
            acc += part[lane]
        out[r] = acc
