"""Elementwise ops: forward, derivative formula per input, replay formula, torch name.

Formulas are scalar Python expressions (see registry.py for the names they may use). Each
derivative pins torch's convention at kinks: relu'(0) = 0, abs'(0) = 0, clamp passes the
gradient at the bounds, maximum/minimum split it evenly on ties, pow's exponent gradient is
the upstream gradient times 0 where the base is 0 (a NaN upstream stays NaN). At NaN they
test what torch's scalar kernels test, so that the comparison that NaN fails picks torch's
branch: relu, elu, hardtanh and maximum/minimum pass the gradient through a NaN, clamp drops
it, sign(NaN) = 0. (torch's vectorized loops of hardtanh and elu, on longer tensors, from 8
float64 or 16 float32 elements for hardtanh, disagree with its own scalar ones at NaN: 0 and
NaN.) Products in a formula are grouped as torch groups them: g * (b * ...).
"""

import operator

import numpy as np

from ...engine.registry import PUBLIC, Sample, defop

POS = (0.5, 2.0)  # domain for ops defined on positive reals only


def _softplus(a, beta, threshold):
    z = a * beta
    return np.where(z > threshold, a, np.log1p(np.exp(np.minimum(z, threshold))) / beta)


def _sigmoid(a):
    # stable for any sign: exp only ever sees -|a|, so it cannot overflow
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(a.dtype, copy=False)[()]


def _sign(a):
    s = np.sign(a)
    if s.dtype.kind == "f":  # torch's sign(NaN) is 0, NumPy's NaN
        s = np.where(s == s, s, s.dtype.type(0))[()]
    return s


def _relu(a):
    # max(a, 0) as torch's: -0.0 and NaN pass through (NumPy's maximum turns -0.0 into 0.0)
    return np.where(a < 0, a.dtype.type(0), a)[()]


def _integral(fn):
    """``fn`` (floor, rint) on floats; integers are their own value, in their own dtype."""
    def forward(a):
        return fn(a) if a.dtype.kind == "f" else a.copy()
    forward.__name__ = fn.__name__
    return forward


def _erf(a):
    from scipy.special import erf  # imported on first use: scipy.special costs 0.3 s

    return np.asarray(erf(a), a.dtype)[()]


def _gelu(a, approx):
    if approx:
        k = np.sqrt(2.0 / np.pi).astype(a.dtype)
        return 0.5 * a * (1.0 + np.tanh(k * (a + 0.044715 * a * a * a)))
    from scipy.special import erf  # imported on first use: scipy.special costs 0.3 s

    return (0.5 * a * (1.0 + erf(a / np.sqrt(2.0).astype(a.dtype)))).astype(a.dtype, copy=False)


def _power(a, b):
    """a ** b; integers to negative integer powers as torch computes them (1 for a base of
    1, +-1 for -1, else 0) where NumPy raises."""
    a_, b_ = np.asarray(a), np.asarray(b)
    if a_.dtype.kind in "iu" and b_.dtype.kind in "iu" and np.any(b_ < 0):
        at_negative = np.where(a_ == 1, 1, np.where(a_ == -1, 1 - 2 * (b_ % 2), 0))
        out = np.where(b_ < 0, at_negative, np.power(a_, np.maximum(b_, 0)))
        return out.astype(np.result_type(a_, b_), copy=False)[()]
    return np.power(a, b)


# ---- unary -----------------------------------------------------------------------------
defop("neg", "NegBackward0", 1, forward=operator.neg, grads=("-g",), fwd="-a", torch="neg",
      doc="Element-wise negation, ``-input``.", api=PUBLIC, aliases={"negative": PUBLIC})
defop("exp", "ExpBackward0", 1, forward=np.exp, grads=("g * y",), fwd="exp(a)", torch="exp",
      doc="Element-wise exponential, ``e ** input``.", api=PUBLIC)
defop("log", "LogBackward0", 1, forward=np.log, grads=("g / a",), fwd="log(a)",
      torch="log", domain=POS, doc="Element-wise natural logarithm.", api=PUBLIC)
defop("log1p", "Log1PBackward0", 1, forward=np.log1p, grads=("g / (1.0 + a)",),
      fwd="log1p(a)", torch="log1p", domain=POS,
      doc="Element-wise ``log(1 + input)``, accurate for small inputs.", api=PUBLIC)
defop("expm1", "Expm1Backward0", 1, forward=np.expm1, grads=("g * (y + 1.0)",),
      fwd="expm1(a)", torch="expm1",
      doc="Element-wise ``exp(input) - 1``, accurate for small inputs.", api=PUBLIC)
defop("sqrt", "SqrtBackward0", 1, forward=np.sqrt, grads=("g / (2.0 * y)",),
      fwd="sqrt(a)", torch="sqrt", domain=POS, doc="Element-wise square root.", api=PUBLIC)
defop("rsqrt", "RsqrtBackward0", 1, forward=lambda a: 1.0 / np.sqrt(a),
      grads=("-0.5 * g * y * y * y",), fwd="1.0 / sqrt(a)", torch="rsqrt", domain=POS,
      doc="Element-wise reciprocal of the square root, ``1 / sqrt(input)``.", api=PUBLIC)
defop("abs", "AbsBackward0", 1, forward=np.abs, grads=("g * sgn(a)",), fwd="abs(a)",
      torch="abs", doc="Element-wise absolute value.",
      api=PUBLIC, aliases={"absolute": ("function", "method", "inplace")})
defop("erf", "ErfBackward0", 1, forward=_erf, grads=("g * 1.1283791670955126 * exp(-a * a)",),
      fwd="erf(a)", torch="erf", doc="Element-wise error function.", api=PUBLIC)
defop("sin", "SinBackward0", 1, forward=np.sin, grads=("g * cos(a)",), fwd="sin(a)",
      torch="sin", doc="Element-wise sine.", api=PUBLIC)
defop("cos", "CosBackward0", 1, forward=np.cos, grads=("-g * sin(a)",), fwd="cos(a)",
      torch="cos", doc="Element-wise cosine.", api=PUBLIC)
defop("tan", "TanBackward0", 1, forward=np.tan, grads=("g * (1.0 + y * y)",),
      fwd="tan(a)", torch="tan", doc="Element-wise tangent.", api=PUBLIC)
defop("tanh", "TanhBackward0", 1, forward=np.tanh, grads=("g * (1.0 - y * y)",),
      fwd="tanh(a)", torch="tanh", doc="Element-wise hyperbolic tangent.", api=PUBLIC)
# sigmoid is fused: its derivative from the saved output is stable where exp overflows
defop("sigmoid", "SigmoidBackward0", 1, forward=_sigmoid,
      grads=("g * y * (1.0 - y)",), fwd="sigmoid(a)", torch="sigmoid",
      doc="Element-wise logistic sigmoid, ``1 / (1 + exp(-input))``.", api=PUBLIC)
defop("relu", "ReluBackward0", 1, forward=_relu,
      grads=("0.0 if y <= 0.0 else g",), fwd="0.0 if a < 0.0 else a", torch="relu",
      doc="Element-wise rectified linear unit, ``max(input, 0)``.", api=PUBLIC)
defop("leaky_relu", "LeakyReluBackward0", 1,
      forward=lambda a, slope: np.where(a > 0, a, a * slope).astype(a.dtype, copy=False),
      grads=("g if a > 0.0 else g * f0",), fwd="a if a > 0.0 else a * f0",
      samples=[Sample((s,), {"negative_slope": 0.1},
                      "lib.nn.functional.leaky_relu(x0, **kw)") for s in [(), (5,), (2, 3)]])
defop("gelu", "GeluBackward0", 1, forward=_gelu,
      grads=("g * gelu_grad(a, f0)",), fwd="gelu(a, f0)",
      samples=[Sample((s,), {"approximate": ap}, "lib.nn.functional.gelu(x0, **kw)")
               for s in [(), (7,)] for ap in ("none", "tanh")])
# (a Tensor method here too, which torch has in nn.functional only)
defop("silu", "SiluBackward0", 1, forward=lambda a: a * _sigmoid(a),
      grads=("g * silu_grad(a)",), fwd="a * sigmoid(a)",
      samples=[Sample((s,), {}, "lib.nn.functional.silu(x0)") for s in [(), (7,)]],
      doc="Element-wise SiLU (swish), ``input * sigmoid(input)``.", api=("method",))
defop("softplus", "SoftplusBackward0", 1, forward=_softplus,
      grads=("g if a * f0 > f1 else g * sigmoid(a * f0)",), fwd="softplus(a, f0, f1)",
      samples=[Sample((s,), kw, "lib.nn.functional.softplus(x0, **kw)") for s in [(), (7,)]
               for kw in ({}, {"beta": 2.0, "threshold": 1.0})])
defop("elu", "EluBackward0", 1,
      forward=lambda a, alpha: np.where(a > 0, a, alpha * np.expm1(np.minimum(a, 0))
                                        ).astype(a.dtype, copy=False)[()],
      grads=("g * f0 * exp(a) if a <= 0.0 else g",), fwd="a if a > 0.0 else f0 * expm1(a)",
      samples=[Sample((s,), kw, "lib.nn.functional.elu(x0, **kw)") for s in [(), (7,)]
               for kw in ({}, {"alpha": 0.5})])
defop("hardtanh", "HardtanhBackward0", 1,
      forward=lambda a, lo, hi: np.clip(a, lo, hi).astype(a.dtype, copy=False),
      grads=("0.0 if (a <= f0 or a >= f1) else g",), fwd="min(max(a, f0), f1)",
      samples=[Sample((s,), kw, "lib.nn.functional.hardtanh(x0, **kw)") for s in [(), (7,)]
               for kw in ({}, {"min_val": -0.5, "max_val": 0.25})])
defop("mish", "MishBackward0", 1, forward=lambda a: a * np.tanh(_softplus(a, 1.0, 20.0)),
      grads=("g * mish_grad(a)",), fwd="a * tanh(softplus(a, 1.0, 20.0))",
      samples=[Sample((s,), {}, "lib.nn.functional.mish(x0)") for s in [(), (7,)]])
# dropout's kept positions are the mask m; f0 = 1 / (1 - p). torch's CPU dropout multiplies
# by the scaled mask, hence MulBackward0. (Random masks differ from torch's: p=1 samples.)
defop("native_dropout", "MulBackward0", 1, grads=("g * f0 if m else 0.0",),
      fwd="a * f0 if m else 0.0", saves_number=True, none_operand="last",
      samples=[Sample((s,), {}, "lib.nn.functional.dropout(x0, p=1.0)") for s in [(), (5,)]])
defop("sign", "SignBackward0", 1, forward=_sign, grads=("0.0",), fwd="sgn(a)",
      torch="sign", doc="Element-wise sign: -1, 0 or 1 (0 for NaN).",
      api=("function", "method", "inplace"))  # (torch has no torch.sign_)
# piecewise constant: torch records them (the result requires grad) with a zero derivative
defop("floor", "FloorBackward0", 1, forward=_integral(np.floor), grads=("0.0",),
      fwd="floor(a)", torch="floor",
      doc="Element-wise floor: the largest integer not greater than each element.", api=PUBLIC)
defop("round", "RoundBackward0", 1, forward=_integral(np.rint), grads=("0.0",),
      fwd="rint(a)", torch="round",  # as torch's nearbyint
      doc="Element-wise rounding to the nearest integer, halves to even.")
defop("clamp", "ClampBackward1", 1,
      forward=lambda a, lo, hi: np.clip(a, lo, hi).astype(a.dtype, copy=False),
      grads=("g if (a >= f0 and a <= f1) else 0.0",), fwd="min(max(a, f0), f1)",
      samples=[Sample((s,), kw, "lib.clamp(x0, **kw)") for s in [(), (7,), (2, 3)]
               for kw in ({"min": -0.5, "max": 0.5}, {"min": 0.1}, {"max": -0.2})])
defop("pow_scalar", "PowBackward0", 1,
      forward=lambda a, e: a ** a.dtype.type(e),  # the operator: NumPy squares fast
      grads=("0.0 if f0 == 0.0 else g * (f0 * pw(a, f0 - 1.0))",), fwd="pw(a, f0)",
      domain=POS,
      samples=[Sample((s,), {"e": e}, "x0 ** kw['e']") for s in [(), (5,)]
               for e in (2, 3, 0.5, -1.5, 0)])
defop("rpow_scalar", "PowBackward2", 1,
      forward=lambda a, base: np.power(a.dtype.type(base), a),
      grads=("g * (0.0 if (f0 == 0.0 and a >= 0.0) else y * log(f0))",), fwd="f0 ** a",
      samples=[Sample((s,), {"base": c}, "kw['base'] ** x0") for s in [(), (5,)]
               for c in (2.0, 0.5)])
defop("to_copy", "ToCopyBackward0", 1, grads=("g",), fwd="a",
      samples=[Sample((s,), {}, "x0.double()") for s in [(), (3,)]])
defop("clone", "CloneBackward0", 1, forward=np.copy, grads=("g",), fwd="a",
      samples=[Sample((s,), {}, "x0.clone()") for s in [(), (3,)]])
defop("masked_fill", "MaskedFillBackward0", 1, grads=("0.0 if m else g",),
      fwd="f0 if m else a",
      samples=[Sample((s, s), {}, "x0.masked_fill(x1 > 0, 0.5)")
               for s in [(), (6,), (2, 3)]])
# masked_fill with a 0-d tensor value: the value gets the gradient of the filled positions
defop("masked_fill_tensor", "MaskedFillBackward1", 2, grads=("0.0 if m else g", "g if m else 0.0"),
      fwd="b if m else a",
      samples=[Sample((s, ()), {}, "x0.masked_fill(x0 > 0, x1)") for s in [(1,), (6,), (2, 3)]])

# ---- binary ----------------------------------------------------------------------------
# (operator.* rather than np.* ufuncs: same result on arrays, ~10x cheaper on 0-d scalars)
defop("add", "AddBackward0", 2, forward=operator.add, grads=("g", "g"), fwd="a + b", torch="add",
      doc="Element-wise sum ``input + alpha * other``, broadcast.")
defop("sub", "SubBackward0", 2, forward=operator.sub, grads=("g", "-g"), fwd="a - b",
      torch="sub", doc="Element-wise difference ``input - alpha * other``, broadcast.")
defop("mul", "MulBackward0", 2, forward=operator.mul, grads=("g * b", "g * a"),
      fwd="a * b", torch="mul", doc="Element-wise product ``input * other``, broadcast.")
defop("div", "DivBackward0", 2, forward=operator.truediv,
      grads=("g / b", "-g * ((a / b) / b)"), fwd="a / b", torch="div", domain=POS,
      doc="Element-wise true division ``input / other``, broadcast.")
defop("pow", "PowBackward1", 2, forward=_power,
      grads=("0.0 if b == 0.0 else g * (b * a ** (b - 1.0))",
             "g * (0.0 if (a == 0.0 and b >= 0.0) else y * log(a))"),
      fwd="a ** b", torch="pow", domain=POS)
defop("maximum", "MaximumBackward0", 2, forward=np.maximum,
      grads=("0.0 if a < b else (0.5 * g if a == b else g)",
             "0.0 if a > b else (0.5 * g if a == b else g)"),
      fwd="a if (a > b or a != a) else b", torch="maximum",
      doc="Element-wise maximum of two tensors (NaN wins).")
defop("minimum", "MinimumBackward0", 2, forward=np.minimum,
      grads=("0.0 if a > b else (0.5 * g if a == b else g)",
             "0.0 if a < b else (0.5 * g if a == b else g)"),
      fwd="a if (a < b or a != a) else b", torch="minimum",
      doc="Element-wise minimum of two tensors (NaN wins).")
# ---- tensor (op) Python number: the number is a float attribute, not a node, as in torch ---
# (NumPy 2 keeps a Python number weak: ``a * c`` has ``a``'s float dtype, as torch's result)
def _scalar_samples(*calls):
    return [Sample((s,), {}, c) for c in calls for s in [(), (4,), (2, 3)]]


defop("add_scalar", "AddBackward0", 1, forward=operator.add, grads=("g",),
      fwd="a + f0", none_operand="last", samples=_scalar_samples("x0 + 1.5", "2 + x0"))
defop("sub_scalar", "SubBackward0", 1, forward=operator.sub, grads=("g",),
      fwd="a - f0", none_operand="last", samples=_scalar_samples("x0 - 0.5"))
defop("rsub_scalar", "RsubBackward1", 1, forward=lambda a, c: c - a,
      grads=("-g",), fwd="f0 - a", samples=_scalar_samples("1.5 - x0"))
defop("mul_scalar", "MulBackward0", 1, forward=operator.mul,
      grads=("g * f0",), fwd="a * f0", saves_number=True,
      none_operand="last", samples=_scalar_samples("x0 * 1.5", "-2 * x0"))
defop("div_scalar", "DivBackward0", 1, forward=operator.truediv,
      grads=("g / f0",), fwd="a / f0", saves_number=True,
      none_operand="last", samples=_scalar_samples("x0 / 4.0", "x0 / -3"))

# self.copy_(src): the old value of self gets no gradient, src gets it unbroadcast
defop("copy", "CopyBackwards", 2, grads=("0.0", "g"), fwd="b",
      samples=[Sample((s, t), {}, "(x0 * 1).copy_(x1)")
               for s, t in [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 3), ())]])
defop("where", "WhereBackward0", 2, grads=("g if m else 0.0", "0.0 if m else g"),
      fwd="a if m else b",
      samples=[Sample((s, t, c), {}, "lib.where(x2 > 0, x0, x1)")
               for s, t, c in [((), (), ()), ((4,), (4,), (4,)), ((2, 3), (3,), (2, 1))]])
