"""Matrix-variate distributions: Wishart(df, covariance_matrix | precision_matrix |
scale_tril), torch's distribution, sampled by the Bartlett decomposition (a Chi2 draw for the
diagonal, then standard normals below it, in torch's order of draws)."""

import math
import warnings

import numpy as np

from ..ops.elementwise.special_api import digamma, mvlgamma
from ..ops.index.indexing import index_select
from ..ops.linalg.solvers import cholesky_solve, slogdet
from ..ops.shape.gather import diag_embed
from ..ops.shape.join import cat
from ..size import Size
from ..tensor import _make
from . import constraints
from .exp_family import ExponentialFamily
from .linalg_ops import diagonal
from .multivariate_normal import scale_tril_of
from .univariate import Chi2
from .utils import _tensor, broadcast_shapes, finfo, lazy_property, standard_normal

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    if not bool((x > (p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    steps = _tensor(np.arange(p) / 2, x.dtype)
    return digamma(x.unsqueeze(-1) - steps.expand(*x.shape, p)).sum(-1)


def _replace_rows(sample, mask, new):
    """``sample[mask] = new`` (mask over the sample dims), out of place and differentiable."""
    count = max(mask.size, 1)
    rest = tuple(sample.shape[mask.ndim:])
    pick = np.arange(count)
    pick[mask.reshape(-1)] = count + np.arange(int(mask.sum()))
    rows = cat([sample.reshape(count, *rest), new.reshape(-1, *rest)])
    return index_select(rows, 0, _make(pick)).reshape(tuple(sample.shape))


class Wishart(ExponentialFamily):
    """The Wishart distribution over positive definite matrices: ``df`` degrees of freedom and
    one of a covariance matrix, a precision matrix or a lower-triangular ``scale_tril``.

    Same as ``torch.distributions.Wishart``.
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, (bool, int, float)):  # torch's _Number
            batch_shape = Size(param.shape[:-2])
            self.df = _tensor(np.asarray(df), param.dtype)
        else:
            batch_shape = broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(*batch_shape)
        event_shape = param.shape[-2:]
        if bool((self.df <= event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        name = ("scale_tril" if scale_tril is not None else "covariance_matrix"
                if covariance_matrix is not None else "precision_matrix")
        setattr(self, name, param.expand(*batch_shape, -1, -1))
        if bool((self.df < event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = scale_tril_of(scale_tril, covariance_matrix,
                                                       precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        # the Bartlett decomposition's diagonal: Chi2(df - i) for row i
        p = self._unbroadcasted_scale_tril.shape[-1]
        steps = _tensor(np.arange(p), self._unbroadcasted_scale_tril.dtype)
        return Chi2(self.df.unsqueeze(-1) - steps.expand(*batch_shape, p))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = (*batch_shape, *self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(*cov_shape)
        new.df = self.df.expand(*batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(*cov_shape))
        new._dist_chi2 = new._chi2(batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor of the scale matrix."""
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        """The scale matrix (the covariance of each row of the underlying normals)."""
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        """The inverse of the scale matrix."""
        identity = _tensor(np.eye(self._event_shape[-1]), self._unbroadcasted_scale_tril.dtype)
        return cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(
            *self._batch_shape, *self._event_shape)

    @property
    def mean(self):
        return self.df.view(*self._batch_shape, 1, 1) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = factor.where(factor > 0, _tensor(np.asarray(math.nan), factor.dtype))
        return factor.view(*self._batch_shape, 1, 1) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        d = diagonal(v)
        return self.df.view(*self._batch_shape, 1, 1) * (v.pow(2) + d.unsqueeze(-1)
                                                         * d.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        noise = diag_embed(chi.clamp(min=finfo(chi.dtype).eps))
        # below the diagonal: standard normals, drawn after the Chi2 draws as torch draws them
        i, j = np.tril_indices(p, -1)
        below = standard_normal((*Size(sample_shape), *self._batch_shape, p * (p - 1) // 2),
                                noise.dtype)._array()
        lower = np.zeros(noise.shape, below.dtype)
        lower[..., i, j] = below
        chol = self._unbroadcasted_scale_tril @ (noise + _tensor(lower, noise.dtype))
        return chol @ chol.mT

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Draw ``sample_shape`` samples by the Bartlett decomposition, redrawing singular
        ones (with a warning).

        Args:
            sample_shape: the shape of the batch of draws (a tuple, list or Size; default ()).
            max_try_correction: how many times to redraw singular samples (default None: 10).

        Returns:
            A tensor of shape ``sample_shape + batch_shape + event_shape``.
        """
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        # torch's correction loop, as torch runs it: its first flag is the support check
        # itself (true for a valid draw), so it warns and redraws every sample once
        is_singular = self._any_over_batch(np.asarray(self.support.check(sample)))
        if is_singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(Size([int(is_singular.sum())]))
                sample = _replace_rows(sample, is_singular, sample_new)
                is_singular_new = self._any_over_batch(
                    ~np.asarray(self.support.check(sample_new)))
                is_singular[is_singular.copy()] = is_singular_new
                if not is_singular.any():
                    break
        return sample

    def _any_over_batch(self, flags):
        return np.array(flags.max(axis=tuple(self._batch_dims)) if self._batch_shape else flags)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        log_diag = diagonal(self._unbroadcasted_scale_tril).log().sum(-1)
        return (-nu * (p * _LOG_2 / 2 + log_diag) - mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * slogdet(value)[1]
                - diagonal(cholesky_solve(value, self._unbroadcasted_scale_tril)).sum(-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_diag = diagonal(self._unbroadcasted_scale_tril).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_diag) + mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-slogdet(-2 * x)[1] + _LOG_2 * p) + mvlgamma(
            y + (p + 1) / 2, p=p)
