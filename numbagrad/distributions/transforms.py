"""Bijections for TransformedDistribution (torch.distributions.transforms): ExpTransform,
AffineTransform, SigmoidTransform, AbsTransform, PowerTransform here, the base classes from
transform_base and the rest from transforms_more."""

import math
from numbers import Real

import numpy as np

from ..nn.functional import softplus
from ..ops.elementwise.pointwise import clamp
from ..ops.elementwise.public import abs as _abs
from ..ops.elementwise.public import exp, log, log1p, sigmoid
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .transform_base import ComposeTransform, Transform
from .transforms_more import (
    CatTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    ReshapeTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    identity_transform,
)
from .utils import _tensor, broadcast_shapes, finfo

# torch's module has them all; the newer ones live in transforms_more
__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform",
           "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
           "identity_transform"]


class ExpTransform(Transform):
    """y = exp(x).

    Args:
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return exp(x)

    def _inverse(self, y):
        return log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class SigmoidTransform(Transform):
    """y = sigmoid(x), kept inside (0, 1).

    Args:
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        fi = finfo(x.dtype)
        return clamp(sigmoid(x), min=float(fi.tiny), max=1.0 - float(fi.eps))

    def _inverse(self, y):
        fi = finfo(y.dtype)
        y = clamp(y, min=float(fi.tiny), max=1.0 - float(fi.eps))
        return log(y) - log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class AffineTransform(Transform):
    """y = loc + scale * x (``event_dim`` trailing dims form one event)."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        """The constraint the inputs satisfy."""
        return constraints.real if self._event_dim == 0 else constraints.independent(
            constraints.real, self._event_dim)

    @property
    def codomain(self):
        """The constraint the outputs satisfy."""
        return self.domain

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, Real) and isinstance(b, Real):
                if a != b:
                    return False
            elif not np.array_equal(np.asarray(getattr(a, "_data", a)),
                                    np.asarray(getattr(b, "_data", b))):
                return False
        return True

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return Tensor.sign(self.scale)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, Real):
            result = _tensor(np.full(shape, math.log(abs(self.scale))), x.dtype)
        else:
            result = log(_abs(self.scale))
        if self._event_dim:
            result = result.reshape(*result.shape[:result.ndim - self._event_dim], -1).sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return Size(broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                     getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape


class AbsTransform(Transform):
    """y = |x| (not bijective: the half distributions supply their own log_prob).

    Args:
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals.

    Args:
        exponent: the exponent, a number or a tensor (broadcast with the input).
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        if not isinstance(exponent, Tensor):
            exponent = _tensor(float(exponent), None)
        self.exponent = exponent

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(
            np.all(np.asarray(self.exponent._data) == np.asarray(other.exponent._data)))

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return Size(broadcast_shapes(shape, self.exponent.shape))

    inverse_shape = forward_shape
