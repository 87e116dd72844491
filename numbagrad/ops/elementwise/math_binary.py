"""Binary elementwise records of the pointwise math API (atan2, hypot, remainders, logaddexp,
xlogy, fmax/fmin, tensor clamps, lerp, addcmul, addcdiv).

Conventions pinned to torch: fmax/fmin give the gradient to the number they return (the
first operand on ties; the other one when an operand is NaN); fmod's divisor gets
-g * trunc(a / b), remainder's -g * floor(a / b) (torch's floor division: NaN for an infinite
a); xlogy's first operand gets no gradient where it is 0 and the second <= 0; atan2's
derivatives are 0 where a * a + b * b is 0. lerp, addcmul and addcdiv are recorded as torch names
them on their last node, over (self, the product or difference of the other operands).
"""

import operator

import numpy as np

from ...engine import scalar_math as sm
from ...engine.registry import Sample, defop
from .math_unary import _vectorized

POS = (0.5, 2.0)
_PAIRS = [((), ()), ((4,), (4,)), ((2, 3), (3,)), ((2, 1), (1, 3))]
_TRIPLES = [((), (), ()), ((4,), (4,), (4,)), ((2, 3), (3,), (2, 1))]


def _binary(name, grad_fn, grads, fwd, **kw):
    kw.setdefault("forward", _vectorized(getattr(sm, name)) if hasattr(sm, name) else None)
    return defop(name, grad_fn, 2, grads=grads, fwd=fwd, torch=kw.pop("torch", name), **kw)


# the public forms torch has of these (ops/elementwise/public.py): no torch.<name>_ function,
# and no in-place form at all for logaddexp, logaddexp2, fmax and fmin
_WITH_INPLACE = ("function", "method", "inplace")
_OUT_OF_PLACE = ("function", "method")
# (where a * a + b * b is 0, torch's 1 / (a * a + b * b) is masked to 0)
_binary("atan2", "Atan2Backward0", ("0.0 if a * a + b * b == 0.0 else g * b / (a * a + b * b)",
                                    "0.0 if a * a + b * b == 0.0 else g * -a / (a * a + b * b)"),
        "atan2(a, b)", doc="Element-wise arctangent of ``input / other``, in the quadrant of "
        "the point (other, input).", api=_WITH_INPLACE, aliases={"arctan2": _WITH_INPLACE})
_binary("hypot", "HypotBackward0", ("g * a / y", "g * b / y"), "hypot(a, b)",
        doc="Element-wise hypotenuse, ``sqrt(input ** 2 + other ** 2)``.", api=_WITH_INPLACE,
        int_inputs="refused")
_binary("fmod", "FmodBackward1", ("g", "-g * trunc(a / b)"), "fmod(a, b)",
        forward=np.fmod,
        doc="Element-wise C-style remainder of ``input / other``: the sign of ``input``.")
_binary("remainder", "RemainderBackward1", ("g", "-g * div_floor(a, b)"), "remainder(a, b)",
        doc="Element-wise Python-style remainder of ``input / other``: the sign of ``other``.")
_binary("logaddexp", "LogaddexpBackward0", ("g / (1.0 + exp(b - a))", "g / (1.0 + exp(a - b))"),
        "logaddexp(a, b)", doc="Element-wise ``log(exp(input) + exp(other))``, without overflow.",
        api=_OUT_OF_PLACE, int_inputs="refused")
_binary("logaddexp2", "Logaddexp2Backward0",
        ("g / (1.0 + exp2(b - a))", "g / (1.0 + exp2(a - b))"), "logaddexp2(a, b)",
        doc="Element-wise ``log2(2 ** input + 2 ** other)``, without overflow.",
        api=_OUT_OF_PLACE, int_inputs="refused")
_binary("xlogy", "XlogyBackward0", ("0.0 if (a == 0.0 and b <= 0.0) else xlogy(g, b)",
                                    "g * a / b"), "xlogy(a, b)", domain=POS)
_binary("fmax", "FmaxBackward0", ("g if (a >= b or b != b) else 0.0",
                                  "0.0 if (a >= b or b != b) else g"),
        "a if (a >= b or b != b) else b", forward=np.fmax,
        doc="Element-wise maximum that ignores NaN: NaN only where both are NaN.",
        api=_OUT_OF_PLACE, int_inputs="exact")
_binary("fmin", "FminBackward0", ("g if (a <= b or b != b) else 0.0",
                                  "0.0 if (a <= b or b != b) else g"),
        "a if (a <= b or b != b) else b", forward=np.fmin,
        doc="Element-wise minimum that ignores NaN: NaN only where both are NaN.",
        api=_OUT_OF_PLACE, int_inputs="exact")

# clamps with tensor bounds (NaN in either operand propagates, its gradient is dropped)
_MIN = ("g if a >= b else 0.0", "g if a < b else 0.0")
_MAX = ("g if a <= b else 0.0", "g if a > b else 0.0")


def _clamp_forward(upper):
    def forward(a, b):
        keep = (a <= b) if upper else (a >= b)
        return np.where(keep | (a != a), a, b)[()]
    return forward


_binary("clamp_min_tensor", "ClampMinBackward1", _MIN, "a if (a >= b or a != a) else b",
        forward=_clamp_forward(False), torch="clamp_min")
_binary("clamp_max_tensor", "ClampMaxBackward1", _MAX, "a if (a <= b or a != a) else b",
        forward=_clamp_forward(True), torch="clamp_max")
# torch's node lists (self, min, max), None for the bound not given
_binary("clamp_tensor_min", "ClampBackward0", _MIN, "a if (a >= b or a != a) else b",
        forward=_clamp_forward(False), torch=None, none_operand="last",
        samples=[Sample(s, {}, "lib.clamp(x0, min=x1)") for s in _PAIRS])
_binary("clamp_tensor_max", "ClampBackward0", _MAX, "a if (a <= b or a != a) else b",
        forward=_clamp_forward(True), torch=None, none_operand=1,
        samples=[Sample(s, {}, "lib.clamp(x0, max=x1)") for s in _PAIRS] +
        [Sample(s, {}, "lib.clamp(x0, x1 - 1.0, x2)") for s in _TRIPLES])

# lerp with a number weight: torch's two-sided formula (exact at both ends)
_binary("lerp_scalar", "LerpBackward0", ("g * (1.0 - f0)", "g * f0"),
        "a + f0 * (b - a) if abs(f0) < 0.5 else b - (b - a) * (1.0 - f0)", torch=None,
        samples=[Sample(s, {"weight": w}, "lib.lerp(x0, x1, **kw)") for s in _PAIRS
                 for w in (0.3, 0.8)])
# self + (the rest) as one node: lerp's weight * (end - self), addcmul's tensor1 * tensor2,
# addcdiv's tensor1 / tensor2 are the second operand
_binary("lerp_tensor", "LerpBackward1", ("g", "g"), "a + b", torch=None, forward=operator.add,
        samples=[Sample(s, {}, "lib.lerp(x0, x1, x2)") for s in _TRIPLES])
_binary("addcmul", "AddcmulBackward0", ("g", "g * f0"), "a + f0 * b",
        samples=[Sample(s, kw, "lib.addcmul(x0, x1, x2, **kw)") for s in _TRIPLES
                 for kw in ({}, {"value": -0.5})])
_binary("addcdiv", "AddcdivBackward0", ("g", "g * f0"), "a + f0 * b",
        samples=[Sample(s, kw, "lib.addcdiv(x0, x1, x2, **kw)") for s in _TRIPLES
                 for kw in ({}, {"value": 2.0})])
