"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)."""

import math

import numpy as np

from ..ops.elementwise.public import log
from ..size import Size
from . import constraints
from .distribution import Distribution
from .linalg_ops import cholesky, diagonal, solve_triangular
from .utils import _tensor, broadcast_shapes, lazy_property, standard_normal

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(scale_tril, x):
    """|scale_tril^-1 x|^2 over the last dim, batched."""
    solution = solve_triangular(scale_tril, x.unsqueeze(-1), upper=False).squeeze(-1)
    return solution.pow(2).sum(-1)


def scale_tril_of(scale_tril, covariance_matrix, precision_matrix):
    """The lower Cholesky factor of the one matrix given (torch computes it so in
    MultivariateNormal and Wishart alike)."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


def _precision_to_scale_tril(precision):
    # L with L L^T = P^-1, from the Cholesky factor of P with its rows and columns reversed
    n = precision.shape[-1]
    flip = _tensor(np.eye(n)[::-1].copy(), precision.dtype)
    lower_of_flipped = cholesky(flip @ precision @ flip)
    lower_inv = (flip @ lower_of_flipped @ flip).mT
    identity = _tensor(np.eye(n), precision.dtype)
    return solve_triangular(lower_inv, identity, upper=False)


class MultivariateNormal(Distribution):
    """Multivariate normal with mean ``loc`` and one of a covariance matrix, a precision
    matrix or a lower-triangular ``scale_tril`` (the covariance's Cholesky factor)."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril),
                                                ("covariance_matrix", covariance_matrix),
                                                ("precision_matrix", precision_matrix))
                            if m is not None)
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(*batch_shape, *matrix.shape[-2:]))
        self.loc = loc.expand(*batch_shape, loc.shape[-1])
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = scale_tril_of(scale_tril, covariance_matrix,
                                                       precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        n = self._event_shape[0]
        new.loc = self.loc.expand(*batch_shape, n)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(*batch_shape, n, n))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, value, *tail):
        return value.expand(*self._batch_shape, *tail)

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor of the covariance matrix."""
        n = self._event_shape[0]
        return self._full(self._unbroadcasted_scale_tril, n, n)

    @lazy_property
    def covariance_matrix(self):
        """The covariance matrix."""
        lower = self._unbroadcasted_scale_tril
        n = self._event_shape[0]
        return self._full(lower @ lower.mT, n, n)

    @lazy_property
    def precision_matrix(self):
        """The inverse of the covariance matrix."""
        lower = self._unbroadcasted_scale_tril
        n = self._event_shape[0]
        identity = _tensor(np.eye(n), lower.dtype)
        inverse = solve_triangular(lower, identity, upper=False)  # L^-1
        return self._full(inverse.mT @ inverse, n, n)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._full(self._unbroadcasted_scale_tril.pow(2).sum(-1), self._event_shape[0])

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = log(diagonal(self._unbroadcasted_scale_tril)).sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        half_log_det = log(diagonal(self._unbroadcasted_scale_tril)).sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return h
        return h.expand(self._batch_shape)
