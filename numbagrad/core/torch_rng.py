"""torch's CPU random streams: the transforms of its CPU kernels on the mt19937 words of
core/torch_mt, so that a seed draws the numbers torch draws (follows ATen, see NOTICE).

Everything here is vectorized NumPy and needs no compilation: float64 arithmetic, float32
arithmetic where the kernels use float32, torch's fused multiply-adds emulated exactly
(``fma32``, ``fma64``: rounding to odd, then once to the result's precision), and the C
library's float64 log/log1p/exp/sin/cos/tan, which torch's double kernels call (``_libm``:
NumPy's own loops for these differ from it in the last bit on machines with AVX-512).

Compiled kernels (core/torch_rng_kernels, Numba) are used only where NumPy cannot keep
torch's speed or has no vector form, and are compiled or loaded the first time such a path
runs: the float32 / half Box-Muller of normal_fill from ``_BIG_NORMAL`` elements (about
0.5 us an element in NumPy), uniform, float64 normal and random_ draws from ``_BIG``
elements (NumPy's MT19937 makes words at a third of the compiled speed, too slow to keep up
with torch on millions), randperm from ``_BIG_PERM``, and the sequential rejection samplers
(poisson, standard_gamma, binomial, Dirichlet's row sums). Layer initialisation of
ordinary sizes and everyday draws compile nothing."""

import math

import numpy as np

from . import torch_rng_kernels as kern
from .torch_mt import DEFAULT_SEED, STATE_BYTES, Engine, entropy_seed  # noqa: F401

_F, _D = np.float32, np.float64
_BIG = 1 << 20             # uniform, float64 normal and random_ draws compiled from here
_BIG_NORMAL = 1 << 17      # float32 normal_fill in the compiled kernel from this many
_BIG_PERM = 1 << 17        # randperm's shuffle in the compiled kernel from this n
_TWO_PI = 2.0 * math.pi
_LIBM_LOOP = 1 << 12       # the C library's functions through the compiled kernel from here
_LIBM = {math.log: (0, np.log), math.log1p: (1, np.log1p), math.cos: (2, np.cos),
         math.sin: (3, np.sin), math.tan: (4, np.tan), math.exp: (5, np.exp)}


def _libm(fn, x):
    """``fn`` (one of math's log, log1p, cos, sin, tan, exp: the C library's) of each element
    of the float64 array ``x``, as torch's kernels compute it; in Python for ordinary sizes
    (nothing to compile), by the compiled kernel for large ones."""
    which, special = _LIBM[fn]
    x = np.asarray(x, _D)
    if x.size < _LIBM_LOOP:
        def value(v):
            try:
                return fn(v)
            except (ValueError, OverflowError):  # (log(0), exp(1000): NumPy's inf or nan)
                return float(special(v))
        return np.fromiter(map(value, x.reshape(-1).tolist()), _D, x.size).reshape(x.shape)
    out = np.empty(x.shape, _D)
    kern.libm(which, np.ascontiguousarray(x).reshape(-1), out.reshape(-1))
    return out


# ---- exact fused multiply-adds --------------------------------------------------------

def _two_sum_err(a, b, s):
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def _to_odd(s, e):
    """s + e rounded to odd, from s = RN(s + e): an inexact even s steps towards e."""
    bits = s.view(np.int64)
    fix = (e != 0) & ((bits & 1) == 0) & np.isfinite(e)
    if fix.any():
        bits = bits + np.where(fix, np.where((e > 0) == (s > 0), 1, -1), 0)
    return bits.view(_D)


def fma32(a, b, c):
    """float32 fma(a, b, c) of float32 operands: the product is exact in double and the sum
    rounded to odd there, so one rounding to float32 is correct."""
    p = np.asarray(a, _D) * np.asarray(b, _D)
    p, c = np.broadcast_arrays(p, np.asarray(c, _D))
    s = p + c
    return _to_odd(s, _two_sum_err(p, c, s)).astype(_F)


def _split(a):
    t = 134217729.0 * a
    hi = t - (t - a)
    return hi, a - hi


def fma64(a, b, c):
    """float64 fma(a, b, c) (Boldo-Melquiond): the exact product's two halves, the high
    one summed exactly with c, the low parts added rounded to odd, then one rounding."""
    a, b, c = np.broadcast_arrays(np.asarray(a, _D), np.asarray(b, _D), np.asarray(c, _D))
    uh = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl
    th = c + uh
    tl = _two_sum_err(c, uh, th)
    v = tl + ul
    z = th + _to_odd(v, _two_sum_err(tl, ul, v))
    return z if np.isfinite(th).all() else np.where(np.isfinite(th), z, th)


def _affine(x, width, lo, fma):
    """x * width + lo as torch's contracted kernels compute it (exact for 1 and 0)."""
    return x if (width == 1 and lo == 0) else fma(x, width, lo)


def _locked(draw):
    """A draw holding its engine's lock throughout (NumPy lets go of the GIL)."""
    def run(eng, *args, **kwargs):
        with eng.lock:
            return draw(eng, *args, **kwargs)
    run.__name__, run.__doc__ = draw.__name__, draw.__doc__
    return run


def _on_words(eng, kernel, *args):
    """Run a compiled kernel on the engine's state in torch's layout, then take it back."""
    mt, pos = eng.words()
    kernel(mt, pos, *args)
    eng.load(mt, pos[0], pos[1])


# ---- uniform reals: uniform_real_distribution<T> --------------------------------------

def _uniform32(eng, n, lo, hi):
    """float32 [lo, hi): 24 bits of one draw; a value rounded up to hi becomes lo."""
    lo, hi = _F(lo), _F(hi)
    if n >= _BIG:
        out = np.empty(n, _F)
        _on_words(eng, kern.uniform32, out, lo, hi)
        return out
    x = (eng.u32(n) & np.uint32(0xFFFFFF)).astype(_F)
    x *= _F(1.0 / 16777216.0)
    v = _affine(x, hi - lo, lo, fma32)
    return v if v is x else np.where(v == hi, lo, v)


def _unit64(eng, n):
    """uniform_real_distribution<double>(0, 1): 53 bits of random64() per value."""
    if n >= _BIG:
        out = np.empty(n, _D)
        _on_words(eng, kern.uniform64, out, 0.0, 1.0)
        return out
    r = eng.u32(2 * n)
    x = (r[0::2] & np.uint32(0x1FFFFF)).astype(_D)
    x *= 4294967296.0
    x += r[1::2]
    x *= 1.0 / 9007199254740992.0
    return x


def _uniform64(eng, n, lo, hi):
    lo, hi = float(lo), float(hi)
    if n >= _BIG:
        out = np.empty(n, _D)
        _on_words(eng, kern.uniform64, out, lo, hi)
        return out
    x = _unit64(eng, n)
    v = _affine(x, hi - lo, lo, fma64)
    return v if v is x else np.where(v == hi, lo, v)


@_locked
def uniform(eng, n, dtype, lo=0.0, hi=1.0):
    """n uniform draws in torch's order for a float32 or float64 tensor (uniform_)."""
    if np.dtype(dtype) == np.float64:
        return _uniform64(eng, n, lo, hi)
    out = _uniform32(eng, n, lo, hi)
    if np.dtype(dtype).itemsize == 2:   # half types draw in float, then round (to hi: lo)
        top = np.asarray(hi).astype(dtype)
        out = out.astype(dtype)
        return np.where(out == top, np.asarray(lo).astype(dtype), out)
    return out.astype(dtype, copy=False)


# ---- normals: the batched Box-Muller of normal_fill and the scalar normal_distribution ----

def _bits(x):
    return x.view(np.int32)


def _box_muller_lanes(a, b, mean, std):
    """NormalFill16<float> (AVX2) on the u1 lanes a and the u2 lanes b, as the compiled
    kern._box_muller_lanes: avx_mathfun's log and sincos with GCC's contractions."""
    # log256_ps(1 - u1): exponent and mantissa by bit masks, Cephes logf polynomial
    x = kern._ONE - a
    xb = _bits(x)
    e = ((xb >> 23) - 127).astype(_F) + kern._ONE
    x = ((xb & np.int32(~0x7F800000)) | np.int32(0x3F000000)).view(_F)
    small = x < kern._SQRTHF
    tmp = np.where(small, x, _F(0.0))
    x = x - kern._ONE
    e = e - np.where(small, kern._ONE, _F(0.0))
    x = x + tmp
    z = x * x
    y = np.full(x.shape, kern._LP[0])
    for c in kern._LP[1:]:
        y = fma32(y, x, c)
    y = fma32(y * x, z, e * kern._LQ1)
    y = fma32(-z, kern._HALF, y)
    r = np.sqrt(_F(-2.0) * fma32(e, kern._LQ2, x + y))
    # sincos256_ps(2 pi u2): octant j, Cody-Waite reduction, the two polynomials
    x = kern._TWO_PI32 * b
    j = (x * kern._FOPI).astype(np.int32)
    j = (j + 1) & np.int32(~1)
    y = j.astype(_F)
    x = fma32(y, kern._DP1, x)
    x = fma32(y, kern._DP2, x)
    x = fma32(y, kern._DP3, x)
    z = x * x
    c = fma32(fma32(fma32(kern._C0, z, kern._C1), z, kern._C2) * z, z, -(z * kern._HALF))
    c = c + kern._ONE
    s = fma32(fma32(fma32(kern._S0, z, kern._S1), z, kern._S2) * z, x, x)
    swap = (j & 2) != 0
    sn = np.where(swap, c, s)
    cs = np.where(swap, s, c)
    sn = (_bits(sn) ^ ((j & 4) << 29)).view(_F)
    cs = (_bits(cs) ^ ((~(j - 2) & 4) << 29)).view(_F)
    return fma32(r * cs, std, mean), fma32(r * sn, std, mean)


def _box_muller32(blocks, mean, std):
    """NormalFill16<float> on rows of 16 uniforms (float32), in place."""
    blocks[:, :8], blocks[:, 8:] = _box_muller_lanes(blocks[:, :8], blocks[:, 8:], mean, std)


def _normal_fill32(eng, n, mean, std, half):
    """normal_fill: uniforms, Box-Muller on the whole 16-blocks, then 16 fresh uniforms for
    the last block (the float path draws one per element first, the half types only the
    whole blocks')."""
    nb = n // 16
    out = _uniform32(eng, 16 * nb if half else n, 0.0, 1.0)
    _box_muller32(out[:16 * nb].reshape(nb, 16), mean, std)
    if n % 16:
        tail = _uniform32(eng, 16, 0.0, 1.0).reshape(1, 16)
        _box_muller32(tail, mean, std)
        out = np.concatenate([out[:n - 16], tail[0]]) if n > 16 else tail[0]
    return out


def _box_muller64(blocks, mean, std):
    """NormalFill16<double> on rows of 16 uniforms, in place."""
    r = np.sqrt(-2.0 * _libm(math.log, 1.0 - blocks[:, :8]))
    t = _TWO_PI * blocks[:, 8:]
    blocks[:, :8] = _affine(r * _libm(math.cos, t), std, mean, fma64)
    blocks[:, 8:] = _affine(r * _libm(math.sin, t), std, mean, fma64)


def _normal_fill64(eng, n, mean, std):
    out = _unit64(eng, n)
    nb = n // 16
    _box_muller64(out[:16 * nb].reshape(nb, 16), mean, std)
    if n % 16:
        tail = _unit64(eng, 16).reshape(1, 16)
        _box_muller64(tail, mean, std)
        out[n - 16:] = tail[0]
    return out


def _normal_scalar(eng, n, mean, std):
    """normal_distribution<double>, value by value with the engine's cached second value:
    each pair of uniforms gives a cosine value and caches the sine one."""
    head = []
    if n and eng.next_double is not None:
        head, eng.next_double = [eng.next_double], None
    pairs = (n - len(head) + 1) // 2
    u = _unit64(eng, 2 * pairs).reshape(pairs, 2)
    r = np.sqrt(-2.0 * _libm(math.log1p, -u[:, 1]))
    t = _TWO_PI * u[:, 0]
    vals = np.stack([r * _libm(math.cos, t), r * _libm(math.sin, t)], axis=1).reshape(-1)
    vals = np.concatenate([np.array(head, _D), vals])
    if vals.size > n:
        eng.next_double = float(vals[-1])
        vals = vals[:n]
    return _affine(vals, float(std), float(mean), fma64)


@_locked
def normal(eng, n, dtype, mean=0.0, std=1.0, contiguous=True):
    """n normal draws for a tensor of ``dtype`` (normal_): torch's batched Box-Muller for
    16 or more contiguous elements, its cached scalar Box-Muller otherwise."""
    dt = np.dtype(dtype)
    if n >= 16 and contiguous:
        if dt == np.float32 or dt.itemsize == 2:   # half types: in float, then rounded
            half = dt != np.float32
            if n >= _BIG_NORMAL:
                out = np.empty(n, np.float32)
                fill = kern.normal_fill_half if half else kern.normal_fill32
                _on_words(eng, fill, out, _F(mean), _F(std))
            else:
                out = _normal_fill32(eng, n, _F(mean), _F(std), half)
            return out.astype(dt, copy=False)
        if n >= _BIG:
            out = np.empty(n, _D)
            _on_words(eng, kern.normal_fill64, out, float(mean), float(std))
        else:
            out = _normal_fill64(eng, n, float(mean), float(std))
        return out.astype(dt, copy=False)
    out = _normal_scalar(eng, n, mean, std)
    if dt.itemsize == 2:   # a double becomes a half through float, as c10::Half converts
        return out.astype(np.float32).astype(dt)
    return out.astype(dt)


# ---- the other samplers, each as torch's CPU kernel draws ------------------------------

@_locked
def random_from_to(eng, n, lo, hi):
    """random_(lo, hi) / randint as int64 values: one draw modulo the range, 64 bits when
    the range reaches 2**28 (torch accepts that skew of the modulo)."""
    span = hi - lo
    if n >= _BIG:
        out = np.empty(n, np.int64)
        _on_words(eng, kern.from_to, out, np.uint64(span), np.int64(lo), span >= 1 << 28)
        return out
    if span >= 1 << 28:
        r = eng.u64(n) % np.uint64(span)
    else:
        r = eng.u32(n) % np.uint32(span)
    out = r.astype(np.int64)
    out += lo
    return out


@_locked
def random_default(eng, n, dtype):
    """random_() without bounds: over the dtype's range, or [0, 2**mantissa] for floats."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return (eng.u32(n) & 1).astype(np.bool_)
    if dt in (np.int64, np.float64):
        top = 2 ** 63 if dt == np.int64 else 2 ** 53 + 1
        return (eng.u64(n) % np.uint64(top)).astype(dt)
    if dt.kind == "f":   # [0, 2**digits]: float32 24, float16 11 (bfloat16 8)
        top = 2 ** ({4: 24, 2: 11 if dt == np.float16 else 8}[dt.itemsize]) + 1
    else:
        top = int(np.iinfo(dt).max) + 1
    return (eng.u32(n).astype(np.uint64) % np.uint64(top)).astype(dt)


@_locked
def bernoulli_scalar(eng, n, p):
    """bernoulli_(p) with a number p: a double uniform per element, 1 where it is < p."""
    return _unit64(eng, n) < p


@_locked
def bernoulli_tensor(eng, probs):
    """bernoulli_(p) with a tensor p: uniforms in p's precision (float32 draws 24 bits)."""
    probs = np.asarray(probs)
    if probs.dtype == np.float64:
        return _unit64(eng, probs.size).reshape(probs.shape) < probs
    u = uniform(eng, probs.size, np.float32).reshape(probs.shape)
    return u < probs.astype(np.float32)


@_locked
def exponential(eng, n, lambd):
    return (-1.0 / float(lambd)) * _libm(math.log1p, -_unit64(eng, n))


@_locked
def geometric(eng, n, p):
    return np.ceil(_libm(math.log, _unit64(eng, n)) / math.log1p(-float(p)))


@_locked
def cauchy(eng, n, median, sigma):
    return float(median) + float(sigma) * _libm(math.tan, math.pi * (_unit64(eng, n) - 0.5))


@_locked
def log_normal(eng, n, mean, std):
    """exp of normal_distribution<double> (the scalar, cached Box-Muller) for any size."""
    return _libm(math.exp, _normal_scalar(eng, n, mean, std))


@_locked
def randperm(eng, n):
    """randperm_cpu: a Fisher-Yates shuffle from 32-bit draws; the inside-out variant from
    64-bit draws once n reaches 2**32 / 20."""
    out = np.empty(n, np.int64)
    if n >= _BIG_PERM:
        _on_words(eng, kern.randperm32 if n < (2 ** 32 - 1) // 20 else kern.randperm64, out)
        return out
    perm = list(range(n))
    if n > 1:
        zs = (eng.u32(n - 1).astype(np.int64) % np.arange(n, 1, -1)).tolist()
        for i, z in enumerate(zs):
            perm[i], perm[z + i] = perm[z + i], perm[i]
    out[:] = perm
    return out


# ---- rejection samplers (ATen/native/Distributions.h): compiled, one element at a time ----

def _cached(eng):
    return np.array([eng.next_double is not None, eng.next_double or 0.0])


def _uncache(eng, cache):
    eng.next_double = float(cache[1]) if cache[0] else None


@_locked
def binomial(eng, count, prob, dtype):
    """torch.binomial(count, prob): draws in ``dtype``, broadcast arrays in C order."""
    dt = np.dtype(dtype)
    count, prob = np.broadcast_arrays(np.asarray(count, dt), np.asarray(prob, dt))
    c = np.ascontiguousarray(count, np.float64).reshape(-1)
    p = np.ascontiguousarray(prob, np.float64).reshape(-1)
    out = np.empty(c.size, np.float64)
    _on_words(eng, kern.binomial, c, p, out, dt == np.float32)
    return out.astype(dt).reshape(count.shape)


@_locked
def sample_dirichlet(eng, alpha, dtype):
    """torch._sample_dirichlet: gammas drawn in double (at least its tiny), normalised over
    the last axis in double, then rounded into (tiny, 1) of ``dtype``. Returns the sample
    and the gammas."""
    dt = np.dtype(dtype)
    a = np.asarray(alpha, dt, order="C").astype(np.float64)
    g = np.empty(a.shape, np.float64)
    cache = _cached(eng)
    _on_words(eng, kern.gamma, a.reshape(-1), g.reshape(-1), cache, False)
    _uncache(eng, cache)
    g = np.maximum(g, np.finfo(np.float64).tiny)
    total = np.empty(g.shape[:-1] + (1,))
    kern.row_sums(g.reshape(-1, g.shape[-1]), total.reshape(-1))
    x = (g / total).astype(dt)
    return np.clip(x, np.finfo(dt).tiny, np.nextafter(dt.type(1), dt.type(0))), g


_row_sums = kern.row_sums   # torch's SumKernel order (tests check it on its own)


@_locked
def poisson(eng, lam):
    """torch.poisson's counts (float64) for the rates ``lam``, in C order."""
    lam = np.asarray(lam, np.float64, order="C")   # keeps a 0-d shape
    out = np.empty(lam.shape, np.float64)
    _on_words(eng, kern.poisson, lam.reshape(-1), out.reshape(-1))
    return out


@_locked
def standard_gamma(eng, alpha, dtype):
    """torch._standard_gamma: Gamma(alpha, 1) draws in ``dtype``, at least its tiny."""
    dt = np.dtype(dtype)
    a = np.asarray(alpha, dt, order="C")
    out = np.empty(a.shape, np.float64)
    cache = _cached(eng)
    _on_words(eng, kern.gamma, a.reshape(-1).astype(np.float64), out.reshape(-1), cache,
              dt == np.float32)
    _uncache(eng, cache)
    return np.maximum(out.astype(dt), np.finfo(dt).tiny)


def fill_order(shape, strides):
    """The axes order TensorIterator walks a written tensor in (its memory order: largest
    stride outermost), so that a strided output gets torch's draws where torch puts them."""
    return sorted(range(len(shape)), key=lambda a: (shape[a] == 1, -abs(strides[a])))


def place(values, shape, strides):
    """values drawn in fill order, arranged as an array of ``shape`` in logical order."""
    order = fill_order(shape, strides)
    if order == sorted(order):
        return values.reshape(shape)
    return values.reshape([shape[a] for a in order]).transpose(np.argsort(order))
