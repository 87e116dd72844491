"""LowRankMultivariateNormal (torch.distributions.lowrank_multivariate_normal): covariance
W W^T + diag(D), worked with through the m x m capacitance matrix I + W^T D^-1 W (Woodbury's
identity and the matrix determinant lemma), torch's formulas."""

import math

import numpy as np

from ..ops.shape.api import broadcast_tensors
from ..size import Size
from . import constraints
from .distribution import Distribution
from .linalg_ops import cholesky, diagonal, solve_triangular
from .multivariate_normal import _batch_mahalanobis
from .utils import _tensor, lazy_property, standard_normal

__all__ = ["LowRankMultivariateNormal"]


def _batch_mv(bmat, bvec):
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _plus_identity(k):
    return k + _tensor(np.eye(k.shape[-1]), k.dtype)


def _batch_capacitance_tril(W, D):  # noqa: N803 - torch's names
    """The Cholesky factor of I + W^T D^-1 W."""
    return cholesky(_plus_identity((W.mT / D.unsqueeze(-2)) @ W))


def _batch_lowrank_logdet(W, D, capacitance_tril):  # noqa: N803
    """log det(W W^T + D) = log det(capacitance) + log det(D)."""
    return 2 * diagonal(capacitance_tril).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):  # noqa: N803
    """x^T (W W^T + D)^-1 x by Woodbury."""
    wt_dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """Multivariate normal with mean ``loc`` and covariance
    ``cov_factor @ cov_factor.mT + diag(cov_diag)``."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError("cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor of the covariance matrix."""
        # D^1/2 chol(I + D^-1/2 W W^T D^-1/2): no n x n covariance formed and factored
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / sqrt_d
        k = _plus_identity(dinvsqrt_w @ dinvsqrt_w.mT)
        return (sqrt_d * cholesky(k)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        """The covariance matrix, ``cov_factor @ cov_factor.T + diag(cov_diag)``."""
        w = self._unbroadcasted_cov_factor
        return (w @ w.mT + self._unbroadcasted_cov_diag.diag_embed()).expand(
            self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """The inverse of the covariance matrix (by the Woodbury identity)."""
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        return (self._unbroadcasted_cov_diag.reciprocal().diag_embed() - a.mT @ a).expand(
            self._matrix_shape())

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps_w = standard_normal(tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:]),
                                self.loc.dtype)
        eps_d = standard_normal(shape, self.loc.dtype)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _logdet(self):
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                     self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, value - self.loc,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + m)

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
