"""Bernoulli, Categorical, OneHotCategorical, Poisson and Binomial."""

import math

import numpy as np

from ..core import torch_rng
from ..core.grad_mode import no_grad
from ..creation_random import multinomial
from ..factories import _engine
from ..nn.functional import binary_cross_entropy_with_logits
from ..ops.elementwise.pointwise import clamp, where
from ..ops.elementwise.public import abs as _abs
from ..ops.elementwise.public import exp, floor, log1p
from ..ops.elementwise.special_api import lgamma
from ..ops.reduce.reductions import logsumexp
from ..size import Size
from . import constraints
from .continuous import _batch_shape, expand_params
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import _tensor, broadcast_all, lazy_property, logits_to_probs, probs_to_logits, xlogy

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "Poisson", "Binomial"]


def _one_hot(indices, n, dtype):
    return _tensor(np.eye(n, dtype=dtype.np)[np.asarray(indices._data)], dtype)


def _probs_or_logits(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class BinaryParameters:
    """The probs and logits of a two-outcome family, each computed from the other on first
    use; ``_param`` is the one given (torch writes this block into each family)."""

    @lazy_property
    def logits(self):
        """The log-odds of success, ``log(p / (1 - p))``."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The probability of success ``p``."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        """The shape of the parameter tensor (``probs`` or ``logits``)."""
        return self._param.size()

    def _expand_binary(self, cls, batch_shape, names, _instance):
        new = expand_params(self, cls, batch_shape, names, _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new


class Bernoulli(BinaryParameters, ExponentialFamily):
    """Bernoulli(probs=... | logits=...)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _probs_or_logits(probs, logits)
        param = probs if probs is not None else logits
        (value,) = broadcast_all(param)
        if probs is not None:
            self.probs = value
        else:
            self.logits = value
        self._param = value
        super().__init__(_batch_shape((param,), (value,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Bernoulli, batch_shape, ("probs", "logits"), _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        p = self.probs
        return where(p == 0.5, math.nan, (p >= 0.5).to(p.dtype))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            p = np.broadcast_to(np.asarray(self.probs._data), shape)
            draw = torch_rng.bernoulli_tensor(_engine(), p)   # torch.bernoulli's draws
            return _tensor(draw.astype(p.dtype), self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = _tensor(np.arange(2), self._param.dtype).reshape(
            (-1,) + (1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.probs.logit(),)

    def _log_normalizer(self, x):
        return x.exp().log1p()


class Categorical(Distribution):
    """Categorical(probs=... | logits=...) over the last dimension's categories."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logsumexp(logits, -1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndim > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_params(self, Categorical, batch_shape, ("probs", "logits"), _instance,
                            (self._num_events,))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        new._num_events = self._num_events
        return new

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        """The log-probabilities, normalized (log-sum-exp 0 over the last dim)."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        """The probabilities, normalized to sum to 1 over the last dim."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        """The shape of the parameter tensor (``probs`` or ``logits``)."""
        return self._param.size()

    @property
    def mean(self):
        return _tensor(np.full(self._extended_shape(), np.nan), self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return _tensor(np.full(self._extended_shape(), np.nan), self.probs.dtype)

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        # torch: multinomial(probs_2d, n, True).T
        with no_grad():
            probs_2d = self.probs.detach().reshape(-1, self._num_events)
            draws = multinomial(probs_2d, sample_shape.numel(), True)._array().T
        return _tensor(draws.reshape(self._extended_shape(sample_shape)).astype(np.int64),
                       None)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        index = np.asarray(value._data).astype(np.int64)[..., None]
        logits = self.logits
        shape = np.broadcast_shapes(index.shape, tuple(logits.shape))
        index = np.ascontiguousarray(np.broadcast_to(index, shape[:-1] + (1,)))
        if tuple(logits.shape) != shape:
            logits = logits.expand(shape)
        return logits.gather(-1, _tensor(index, None)).squeeze(-1)

    def entropy(self):
        min_real = float(np.finfo(self.logits.dtype.np).min)
        logits = clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = _tensor(np.arange(self._num_events), None).reshape(
            (-1,) + (1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values


class OneHotCategorical(Distribution):
    """OneHotCategorical(probs=... | logits=...): one-hot vectors of a Categorical."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        """The probabilities, normalized to sum to 1 over the last dim."""
        return self._categorical.probs

    @property
    def logits(self):
        """The log-probabilities, normalized (log-sum-exp 0 over the last dim)."""
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return _one_hot(probs.argmax(dim=-1), probs.shape[-1], probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        """The shape of the parameter tensor (``probs`` or ``logits``)."""
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        indices = self._categorical.sample(sample_shape)
        return _one_hot(indices, self._categorical._num_events, self._categorical.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = _tensor(np.argmax(np.asarray(value._data), -1), None)
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = _tensor(np.eye(n), self._param.dtype).reshape(
            (n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand(n, *self.batch_shape, n) if expand else values


class Poisson(ExponentialFamily):
    """Poisson(rate)."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_shape((rate,), (self.rate,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Poisson, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return floor(self.rate)

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            lam = np.broadcast_to(np.asarray(self.rate._data, np.float64), shape)
            draw = torch_rng.poisson(_engine(), lam)   # torch.poisson(rate.expand(shape))
            return _tensor(draw.astype(self.rate.dtype.np), self.rate.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()


def _clamp_by_zero(x):
    return (clamp(x, min=0) + x - clamp(x, max=0)) / 2


class Binomial(BinaryParameters, Distribution):
    """Binomial(total_count, probs=... | logits=...)."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _probs_or_logits(probs, logits)
        param = probs if probs is not None else logits
        total, value = broadcast_all(total_count, param)
        self.total_count = total.to(value.dtype)
        if probs is not None:
            self.probs = value
        else:
            self.logits = value
        self._param = value
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Binomial, batch_shape, ("total_count", "probs", "logits"),
                                   _instance)

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return floor((self.total_count + 1) * self.probs).minimum(self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            # torch.binomial(total_count.expand(shape), probs.expand(shape))
            dt = self._param.dtype
            n = np.broadcast_to(np.asarray(self.total_count._data), shape)
            p = np.broadcast_to(np.asarray(self.probs._data), shape)
            return _tensor(torch_rng.binomial(_engine(), n, p, dt.np), dt)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = lgamma(self.total_count + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(self.total_count - value + 1)
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * log1p(exp(-_abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _homogeneous_count(self, what):
        counts = np.asarray(self.total_count._data)
        total = int(counts.max())
        if not counts.min() == total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = self._homogeneous_count("enumerate_support")
        values = _tensor(np.arange(1 + total), self._param.dtype).reshape(
            (-1,) + (1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values


