"""Gamma, Dirichlet and Beta, with implicitly reparameterized samples: a gamma draw x of
concentration a moves with a as dx/da = -(dF/da) / f(x), F and f the gamma CDF and density
(the gradient torch's _standard_gamma has, here with dF/da by a central difference)."""

import numpy as np

from ..autograd.function import Function, once_differentiable
from ..core import torch_rng
from ..factories import _engine
from ..ops.elementwise.pointwise import clamp, where
from ..ops.elementwise.public import log
from ..ops.elementwise.special_api import digamma, lgamma
from ..ops.shape.join import stack
from ..tensor import Tensor
from . import constraints
from .continuous import _batch_shape, expand_params
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import _tensor, broadcast_all, finfo, xlogy

__all__ = ["Gamma", "Dirichlet", "Beta"]


def _gamma_sample_grad(x, alpha):
    """dx/dalpha of x ~ Gamma(alpha, 1) at fixed CDF value (float64 arrays)."""
    from scipy.special import gammainc, gammaln  # on first use: scipy.special costs 0.3 s

    h = 1e-5 * np.maximum(alpha, 1e-3)
    dcdf = (gammainc(alpha + h, x) - gammainc(alpha - h, x)) / (2 * h)
    with np.errstate(all="ignore"):
        density = np.exp((alpha - 1) * np.log(x) - x - gammaln(alpha))
        grad = -dcdf / density
    return np.where(np.isfinite(grad), grad, 0.0)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, concentration):
        # torch._standard_gamma's draws (its Marsaglia-Tsang sampler on torch's stream)
        x = torch_rng.standard_gamma(_engine(), concentration._data, concentration.dtype.np)
        out = _tensor(x, concentration.dtype)
        ctx.save_for_backward(concentration, out)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        concentration, x = ctx.saved_tensors
        dx = _gamma_sample_grad(np.asarray(x._data, np.float64),
                                np.asarray(concentration._data, np.float64))
        return grad * _tensor(dx, concentration.dtype)


class _SampleDirichlet(Function):
    """torch._sample_dirichlet's values; the gradient of the normalised gammas x = g / sum(g)
    through each gamma's implicit dg/da: dL/da_j = dg_j/da_j / S * (u_j - sum_i u_i x_i),
    u the upstream gradient."""

    @staticmethod
    def forward(ctx, concentration):
        dt = concentration.dtype
        x, g = torch_rng.sample_dirichlet(_engine(), concentration._data, dt.np)
        ctx.dt = dt
        ctx.values = (np.asarray(concentration._data, np.float64), g)
        return _tensor(x, dt)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        alpha, g = ctx.values
        total = g.sum(-1, keepdims=True)
        up = np.asarray(grad._data, np.float64)
        dg = _gamma_sample_grad(g, alpha)
        dalpha = dg / total * (up - (up * g / total).sum(-1, keepdims=True))
        return _tensor(dalpha.astype(ctx.dt.np), ctx.dt)


class _RegularizedLowerGamma(Function):
    """P(a, x) = gammainc(a, x), differentiable in x only (as torch's igamma)."""

    @staticmethod
    def forward(ctx, a, x):
        from scipy.special import gammainc  # on first use: scipy.special costs 0.3 s

        ctx.save_for_backward(a, x)
        return _tensor(gammainc(np.asarray(a._data), np.asarray(x._data)), x.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        from scipy.special import gammaln

        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        av, xv = np.asarray(a._data, np.float64), np.asarray(x._data, np.float64)
        with np.errstate(all="ignore"):
            density = np.exp((av - 1) * np.log(xv) - xv - gammaln(av))
        return None, grad * _tensor(density, x.dtype)


def standard_gamma(concentration):
    """Gamma(concentration, 1) draws, differentiable in the concentration."""
    return _StandardGamma.apply(concentration)


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_batch_shape((concentration, rate), (self.concentration,)),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return clamp((self.concentration - 1) / self.rate, min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        if not isinstance(value, Tensor):
            value = _tensor(value, self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, x = broadcast_all(self.concentration, self.rate * value)
        return _RegularizedLowerGamma.apply(a, x)

    def entropy(self):
        return (self.concentration - log(self.rate) + lgamma(self.concentration)
                + (1.0 - self.concentration) * digamma(self.concentration))

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration) over the last dimension."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Dirichlet, batch_shape, ("concentration",), _instance,
                             self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _SampleDirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration - 1.0, value).sum(-1)
                + lgamma(self.concentration.sum(-1)) - lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = clamp(self.concentration - 1, min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        c = np.asarray(self.concentration._data)
        all_below_one = (c < 1).all(-1, keepdims=True)
        if all_below_one.any():  # a corner: torch's argmax of the (NaN) ratios picks the first
            corner = np.eye(c.shape[-1], dtype=c.dtype)[np.argmax(np.asarray(mode._data), -1)]
            mode = where(_tensor(np.broadcast_to(all_below_one, c.shape), None),
                         _tensor(corner, self.concentration.dtype), mode)
        return mode

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (lgamma(self.concentration).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """Beta(concentration1, concentration0), a two-category Dirichlet."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if not isinstance(concentration1, Tensor) and not isinstance(concentration0, Tensor):
            both = _tensor([float(concentration1), float(concentration0)], None)
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            both = stack([c1, c0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        """The first shape parameter, alpha."""
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        """The second shape parameter, beta."""
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return lgamma(x) + lgamma(y) - lgamma(x + y)
