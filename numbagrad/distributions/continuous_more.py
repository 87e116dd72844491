"""GeneralizedPareto, VonMises, LogisticNormal, OneHotCategoricalStraightThrough and
LKJCholesky, with torch's formulas (generalized_pareto.py, von_mises.py, logistic_normal.py,
one_hot_categorical.py, lkj_cholesky.py); draws use torch's random stream in torch's order."""

import math

import numpy as np

from .. import dtypes
from ..core.grad_mode import no_grad
from ..ops.elementwise.pointwise import where
from ..ops.elementwise.special_api import lgamma, mvlgamma
from ..ops.shape.join import cat
from ..size import Size
from . import constraints
from .continuous import Normal, _batch_shape, expand_params
from .discrete import OneHotCategorical
from .distribution import Distribution
from .gamma_family import Beta
from .transformed import TransformedDistribution
from .transforms_more import StickBreakingTransform
from .utils import _tensor, broadcast_all, finfo, lazy_property, standard_normal, uniform

__all__ = ["GeneralizedPareto", "VonMises", "LogisticNormal",
           "OneHotCategoricalStraightThrough", "LKJCholesky"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration): Exponential at concentration 0, Pareto
    above, bounded (Uniform at -1) below."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(_batch_shape((loc, scale, concentration), (self.loc,)),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, GeneralizedPareto, batch_shape,
                             ("loc", "scale", "concentration"), _instance)

    def _safe(self):
        # torch.isclose(c, 0): |c| <= 1e-8; the zero case takes the exponential's limits
        eq_zero = self.concentration.abs() <= 1e-8
        return eq_zero, where(eq_zero, 1.0, self.concentration)

    def rsample(self, sample_shape=()):
        return self.icdf(uniform(self._extended_shape(sample_shape), self.loc.dtype))

    def _z(self, x):
        return (x - self.loc) / self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe()
        y = 1 / safe_conc + z.new_ones(())
        where_nonzero = where(y == 0, y, y * (safe_conc * z).log1p())
        return -self.scale.log() - where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        """The log of ``1 - cdf(value)``.

        Args:
            value: a tensor broadcastable with ``batch_shape``.

        Returns:
            A tensor of the broadcast shape.
        """
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe()
        return where(eq_zero, -z, -(safe_conc * z).log1p() / safe_conc)

    def log_cdf(self, value):
        """The log of the cumulative distribution function at ``value``.

        Args:
            value: a tensor broadcastable with ``batch_shape``.

        Returns:
            A tensor of the broadcast shape.
        """
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero, safe_conc = self._safe()
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe_conc * (-safe_conc * logu).expm1()
        return where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return where(valid, result, math.nan)

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration,
                      math.inf)
        return constraints.interval(lower, upper)


# Abramowitz & Stegun's polynomial approximations of I0 and I1 (torch's coefficients)
_COEF_SMALL = [[1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
               [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2,
                0.32411e-3]]
_COEF_LARGE = [[0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
                -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2],
               [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
                0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]]


def _eval_poly(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log(I_order(x)) for x > 0, order 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = x / 3.75
    small = _eval_poly(y * y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return where(x < 3.75, small.log(), large)


def _rejection_sample(loc, concentration, proposal_r, x):
    # Best & Fisher (1979), three uniforms per round as torch draws them
    done = x.new_zeros(tuple(x.shape)).bool()
    while not bool(done.all()):
        u1, u2, u3 = uniform((3,) + tuple(x.shape), loc.dtype).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """VonMises(loc, concentration): the circular normal; angles are taken modulo 2 pi, the
    mean and variance are the circular ones.

    Args:
        loc: the mean angle, in radians (a number or a tensor).
        concentration: the concentration, positive (a number or a tensor; broadcast with
            ``loc``).
        validate_args: whether to check the arguments and samples (default None: the
            global setting).
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    # sampling runs in double, as torch samples it: in single precision the rejection loop
    # hangs for small concentrations
    @lazy_property
    def _loc(self):
        return self.loc.to(dtypes.float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(dtypes.float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=()):
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x = self._loc.new_empty(tuple(shape))
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                          validate_args=self.__dict__.get("_validate_args"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()


class LogisticNormal(TransformedDistribution):
    """A Normal(loc, scale) vector mapped onto the simplex by StickBreakingTransform."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        """The location: the mean of the underlying Normal."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        """The scale: the standard deviation of the underlying Normal."""
        return self.base_dist.base_dist.scale


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes the gradient of probs straight through the
    one-hot draw (Bengio et al., 2013).

    Args:
        probs: the event probabilities, (..., K) (or give ``logits``).
        logits: the event log-odds, (..., K) (or give ``probs``).
        validate_args: whether to check the arguments and samples (default None: the
            global setting).
    """

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration): Cholesky factors of dim x dim correlation matrices
    with density proportional to det(L L^T) ** (concentration - 1); sampled by the onion
    method (Ghosh & Henderson) as torch samples it."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = _tensor(np.arange(self.dim - 1), self.concentration.dtype)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = standard_normal(self._extended_shape(sample_shape), y.dtype).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            # the first row is all zeros (0/0 above): torch fills it with 0
            first_row = _tensor(np.arange(self.dim)[:, None] == 0, None)
            u_hypersphere = where(first_row, 0.0, u_hypersphere)
            w = y.sqrt() * u_hypersphere
            diag_elems = (1 - (w ** 2).sum(-1)).clamp(min=float(finfo(w.dtype).tiny)).sqrt()
            return w + diag_elems.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _tensor(np.arange(2, self.dim + 1), None)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize_term = (0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1)
                          - lgamma(alpha) * dm1)
        return unnormalized_log_pdf - normalize_term
