"""Kumaraswamy, FisherSnedecor, InverseGamma, the relaxed and continuous Bernoulli, composed
as torch composes them (transformed Uniform, Gamma and logistic draws), so that they consume
torch's random stream in the same order."""

import math
from numbers import Number

from ..nn.functional import binary_cross_entropy_with_logits
from ..ops.elementwise.pointwise import clamp, where
from ..ops.elementwise.special_api import digamma, lgamma
from ..size import Size
from . import constraints
from .continuous import Uniform, _batch_shape, expand_params
from .discrete import BinaryParameters, _probs_or_logits
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma_family import Gamma
from .transformed import TransformedDistribution
from .transforms import AffineTransform, PowerTransform, SigmoidTransform
from .univariate import _full
from .utils import (
    broadcast_all,
    clamp_probs,
    euler_constant,
    finfo,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    uniform,
)

__all__ = ["Kumaraswamy", "FisherSnedecor", "InverseGamma", "LogitRelaxedBernoulli",
           "RelaxedBernoulli", "ContinuousBernoulli"]


def _moments(a, b, n):
    arg1 = 1 + n / a
    log_value = lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)
    return b * log_value.exp()


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1, concentration0): (1 - U ** (1 / c0)) ** (1 / c1)."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        c0 = self.concentration0
        base_dist = Uniform(_full(c0.shape, 0.0, c0.dtype), _full(c0.shape, 1.0, c0.dtype),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=c0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        c1, c0 = self.concentration1, self.concentration0
        log_mode = c0.reciprocal() * (-c0).log1p() - (-c0 * c1).log1p()
        return where((c0 < 1) | (c1 < 1), math.nan, log_mode).exp()

    @property
    def variance(self):
        return (_moments(self.concentration1, self.concentration0, 2)
                - self.mean.pow(2))

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()


class FisherSnedecor(Distribution):
    """FisherSnedecor(df1, df2): the ratio of two scaled Chi2 draws."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(_batch_shape((df1, df2), (self.df1,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_params(self, FisherSnedecor, batch_shape, ("df1", "df2"), _instance)
        new._gamma1 = self._gamma1.expand(Size(batch_shape))
        new._gamma2 = self._gamma2.expand(Size(batch_shape))
        return new

    @property
    def mean(self):
        df2 = where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = where(self.df2 <= 4, math.nan, self.df2)
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = float(finfo(x2.dtype).tiny)
        return clamp(x1 / clamp(x2, min=tiny), min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3


class InverseGamma(TransformedDistribution):
    """InverseGamma(concentration, rate): 1 / Gamma(concentration, rate)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = _full((), -1.0, base_dist.rate.dtype)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        """The shape parameter."""
        return self.base_dist.concentration

    @property
    def rate(self):
        """The rate parameter (the inverse scale of the underlying Gamma)."""
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return where(self.concentration > 1, result, math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return where(self.concentration > 2, result, math.inf)

    def entropy(self):
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())


class LogitRelaxedBernoulli(BinaryParameters, Distribution):
    """The logit of a RelaxedBernoulli draw: (logistic noise + logits) / temperature."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        _probs_or_logits(probs, logits)
        param = probs if probs is not None else logits
        (value,) = broadcast_all(param)
        if probs is not None:
            self.probs = value
        else:
            self.logits = value
        self._param = value
        batch_shape = Size() if isinstance(param, Number) else value.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_binary(LogitRelaxedBernoulli, batch_shape, ("probs", "logits"),
                                  _instance)
        new.temperature = self.temperature
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(uniform(shape, probs.dtype))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """RelaxedBernoulli(temperature, probs=... | logits=...): the sigmoid of a
    LogitRelaxedBernoulli draw, reparameterized."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        """The relaxation temperature."""
        return self.base_dist.temperature

    @property
    def logits(self):
        """The log-odds, ``log(p / (1 - p))``."""
        return self.base_dist.logits

    @property
    def probs(self):
        """The probability parameter ``p``."""
        return self.base_dist.probs


class ContinuousBernoulli(ExponentialFamily):
    """ContinuousBernoulli(probs=... | logits=..., lims=(0.499, 0.501)) on [0, 1]: density
    proportional to p ** x (1 - p) ** (1 - x); inside ``lims`` Taylor expansions replace
    the forms that cancel at p = 1/2."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _probs_or_logits(probs, logits)
        param = probs if probs is not None else logits
        (value,) = broadcast_all(param)
        if probs is not None:
            if validate_args is not None and not bool(
                    constraints.unit_interval.check(value).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(value)
        else:
            self.logits = value
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        batch_shape = Size() if isinstance(param, Number) else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_params(self, ContinuousBernoulli, batch_shape, ("probs", "logits"),
                            _instance)
        new._lims = self._lims
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        cut_probs = self._cut_probs()
        below_half = where(cut_probs <= 0.5, cut_probs, 0.0)
        above_half = where(cut_probs >= 0.5, cut_probs, 1.0)
        log_norm = ((-cut_probs).log1p() - cut_probs.log()).abs().log() - where(
            cut_probs <= 0.5, (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / ((-cut_probs).log1p()
                                                             - cut_probs.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        variances = (cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs).pow(2)
                     + 1.0 / ((-cut_probs).log1p() - cut_probs.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        """The log-odds, ``log(p / (1 - p))``."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The probability parameter ``p``."""
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        """The shape of the parameter tensor (``probs`` or ``logits``)."""
        return self._param.size()

    def rsample(self, sample_shape=()):
        return self.icdf(uniform(self._extended_shape(sample_shape), self.probs.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((cut_probs.pow(value) * (1.0 - cut_probs).pow(1.0 - value) + cut_probs - 1.0)
                / (2.0 * cut_probs - 1.0))
        unbounded_cdfs = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, 0.0, where(value >= 1.0, 1.0, unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return where(self._outside_unstable_region(),
                     ((-cut_probs + value * (2.0 * cut_probs - 1.0)).log1p()
                      - (-cut_probs).log1p()) / (cut_probs.log() - (-cut_probs).log1p()),
                     value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return (self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm()
                - log_probs0)

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        # the Taylor expansion inside lims, where log|expm1(x)| - log|x| cancels
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(outside, x, (self._lims[0] - 0.5) * x.new_ones(()))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)
