"""Geometric, NegativeBinomial and Multinomial (torch's sampling: Geometric from one
uniform_(tiny, 1) draw per value, NegativeBinomial as a Poisson of a Gamma draw, Multinomial
as counts of total_count Categorical draws)."""

import math

import numpy as np

from ..core import torch_rng
from ..core.grad_mode import no_grad
from ..factories import _engine
from ..nn.functional import binary_cross_entropy_with_logits, logsigmoid
from ..ops.elementwise.pointwise import where
from ..ops.elementwise.public import sigmoid
from ..ops.elementwise.special_api import lgamma
from ..size import Size
from . import constraints
from .continuous import _batch_shape, expand_params
from .discrete import BinaryParameters, Binomial, Categorical, _probs_or_logits
from .distribution import Distribution
from .gamma_family import Gamma
from .utils import (
    _tensor,
    broadcast_all,
    finfo,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    uniform,
)

__all__ = ["Geometric", "NegativeBinomial", "Multinomial"]


class Geometric(Distribution):
    """Geometric(probs=... | logits=...): failures before the first success, on {0, 1, ...}."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _probs_or_logits(probs, logits)
        param = probs if probs is not None else logits
        (value,) = broadcast_all(param)
        if probs is not None:
            self.probs = value
        else:
            self.logits = value
        super().__init__(_batch_shape((param,), (value,)), validate_args=validate_args)
        if self._validate_args and probs is not None:
            # probs = 0 passes unit_interval but has no distribution
            value = self.probs
            valid = np.asarray(value._data) > 0
            if not valid.all():
                invalid = _tensor(np.asarray(value._data)[~valid], value.dtype)
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{invalid}")

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Geometric, batch_shape, ("probs", "logits"), _instance)

    @lazy_property
    def logits(self):
        """The log-odds of success, ``log(p / (1 - p))``."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The probability of success ``p``."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return _tensor(np.zeros(tuple(self.probs.shape)), self.probs.dtype)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = float(finfo(self.probs.dtype).tiny)
        with no_grad():
            u = uniform(shape, self.probs.dtype, tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs


class NegativeBinomial(BinaryParameters, Distribution):
    """NegativeBinomial(total_count, probs=... | logits=...): successes before total_count
    failures."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _probs_or_logits(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(NegativeBinomial, batch_shape,
                                   ("total_count", "probs", "logits"), _instance)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=()):
        with no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            lam = np.asarray(rate._data, np.float64)
            draw = torch_rng.poisson(_engine(), lam)   # torch.poisson(rate)
            return _tensor(draw.astype(rate.dtype.np), rate.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * logsigmoid(-self.logits)
                                 + value * logsigmoid(self.logits))
        log_normalization = (-lgamma(self.total_count + value) + lgamma(1.0 + value)
                             + lgamma(self.total_count))
        log_normalization = where(self.total_count + value == 0.0, 0.0, log_normalization)
        return log_unnormalized_prob - log_normalization


class Multinomial(Distribution):
    """Multinomial(total_count=1, probs=... | logits=...): counts of ``total_count``
    categorical draws over the last dimension."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(Size(batch_shape))
        Distribution.__init__(new, Size(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        """The log-probabilities of the categories, normalized."""
        return self._categorical.logits

    @property
    def probs(self):
        """The probabilities of the categories, normalized."""
        return self._categorical.probs

    @property
    def param_shape(self):
        """The shape of the parameter tensor (``probs`` or ``logits``)."""
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        samples = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        k = self._categorical._num_events
        # torch scatter-adds ones at the drawn indices; the counts are the same sums
        counts = np.zeros(tuple(samples.shape[1:]) + (k,), np.int64)
        idx = np.asarray(samples._data)
        for draw in idx:
            np.put_along_axis(counts, draw[..., None],
                              np.take_along_axis(counts, draw[..., None], -1) + 1, -1)
        return _tensor(counts.astype(self.probs.dtype.np), self.probs.dtype)

    def entropy(self):
        n = _tensor(self.total_count, None)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
