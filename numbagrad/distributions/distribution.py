"""The Distribution base class (torch.distributions.Distribution): shapes, argument and sample
validation with torch's messages, sample via rsample without recording."""

import warnings

import numpy as np

from ..core.grad_mode import no_grad
from ..ops.elementwise.public import exp
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _all_true(valid):
    return bool(np.all(np.asarray(valid)))


class Distribution:
    """Abstract base of probability distributions: ``batch_shape`` (independent parameter
    sets), ``event_shape`` (one draw), ``sample``/``rsample``, ``log_prob``, moments.

    Attributes:
        has_rsample: whether ``rsample`` (differentiable draws) is available.
        has_enumerate_support: whether ``enumerate_support`` is available (a finite support).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on or off for distributions made afterwards (on by
        default, as torch's without ``python -O``)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # lazily computed from the other parametrization
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A distribution of the same kind with its parameters broadcast to ``batch_shape``
        (views, no copies).

        Args:
            batch_shape: the new batch shape (a tuple, list or Size), which the current
                one broadcasts to.
            _instance: an instance to fill in rather than a new one (for subclasses'
                ``expand``; default None).

        Returns:
            The expanded distribution.
        """
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape of the independent parameter sets (one distribution each)."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of one draw."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """The constraint each parameter must satisfy, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint that values of the distribution satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean, one per parameter set."""
        raise NotImplementedError

    @property
    def mode(self):
        """The mode (the most likely value), one per parameter set."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance, one per parameter set."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation: the square root of ``variance``."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """Draw ``sample_shape`` samples (of shape ``sample_shape + batch_shape + event_shape``)
        without a gradient.

        Args:
            sample_shape: the shape of the batch of draws (a tuple, list or Size; default
                (): one draw per parameter set).

        Returns:
            A tensor of shape ``sample_shape + batch_shape + event_shape``.
        """
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """Draw ``sample_shape`` samples with the reparameterization trick: the draws are
        differentiable functions of the parameters.

        Args:
            sample_shape: the shape of the batch of draws (a tuple, list or Size; default
                (): one draw per parameter set).

        Returns:
            A tensor of shape ``sample_shape + batch_shape + event_shape``.
        """
        raise NotImplementedError

    def sample_n(self, n):
        """``n`` samples: ``sample((n,))`` (deprecated, as in torch).

        Args:
            n: the number of draws.

        Returns:
            A tensor of shape ``(n,) + batch_shape + event_shape``.
        """
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log of the density (or mass) at ``value``.

        Args:
            value: a tensor whose trailing dimensions are ``event_shape``, broadcastable
                with ``batch_shape + event_shape``.

        Returns:
            A tensor of the broadcast shape without the event dimensions.
        """
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at ``value``.

        Args:
            value: a tensor broadcastable with ``batch_shape``.

        Returns:
            The probabilities, of the broadcast shape.
        """
        raise NotImplementedError

    def icdf(self, value):
        """The inverse of the cumulative distribution function at ``value``.

        Args:
            value: probabilities in [0, 1], broadcastable with ``batch_shape``.

        Returns:
            The quantiles, of the broadcast shape.
        """
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Every value of a discrete support, along a new first dim (broadcast over
        ``batch_shape`` when ``expand``).

        Args:
            expand: whether to broadcast the values over ``batch_shape`` (default True);
                False leaves size-1 batch dimensions.

        Returns:
            A tensor of shape ``(n,) + batch_shape + event_shape``, n the support's size
            (size-1 batch dimensions without ``expand``).
        """
        raise NotImplementedError

    def entropy(self):
        """The entropy, one per parameter set."""
        raise NotImplementedError

    def perplexity(self):
        """``exp(entropy())``."""
        return exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if Size(value.shape[event_dim_start:]) != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if not _all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"  # noqa: E501
                         for p in names)
        return self.__class__.__name__ + "(" + args + ")"
