"""The KL divergences torch registers for Cauchy, Geometric, Gumbel, HalfNormal, Pareto and
ContinuousBernoulli (closed forms from torch.distributions.kl; infinite where q's support
misses p's), and the Bregman-divergence fallback for two of one exponential family."""

import math

import numpy as np

from ..autograd.api import grad
from ..ops.elementwise.pointwise import where
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete_more import Geometric
from .exp_family import ExponentialFamily
from .gamma_family import Beta, Gamma
from .kl import _kl_normal_normal, register_kl
from .univariate import Cauchy, Gumbel, HalfNormal, Pareto
from .univariate_more import ContinuousBernoulli
from .utils import _tensor, euler_constant, sum_rightmost

__all__ = []


def _infinite_like(t):
    return _tensor(np.full(tuple(t.shape), math.inf), t.dtype)


def _x_log_x(t):
    return t * t.log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    return where(p.support.lower_bound < q.support.lower_bound, math.inf, result)


@register_kl(Beta, ContinuousBernoulli)
@register_kl(Beta, Pareto)
def _kl_beta_infinity(p, q):
    return _infinite_like(p.concentration1)


@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
def _kl_gumbel_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Pareto)
def _kl_laplace_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Pareto)
def _kl_normal_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p, q):
    return _infinite_like(p.scale)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = loc_scale_ratio.exp() * scale_rate_prod / (scale_rate_prod + 1)
    t3 = scale_rate_prod.reciprocal()
    return t1 - loc_scale_ratio + t2 + t3


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = ((p.concentration - 1) * p.concentration.digamma() - p.concentration.lgamma()
          - p.concentration)
    t2 = beta_scale_prod.log() + p.concentration / beta_scale_prod
    t3 = (loc_scale_ratio.exp() * (1 + beta_scale_prod.reciprocal()).pow(-p.concentration)
          - loc_scale_ratio)
    return t1 + t2 + t3


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = (-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio).exp()
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return where(p.alpha <= 1, math.inf, t1 - t2 + t3 - 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return where(p.alpha <= 1, math.inf, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return where(p.alpha <= 2, math.inf, t1 - t2 + (t3 + t4) / var_normal - 1)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * ((-high_loc_diff).exp() - (-low_loc_diff).exp())
    return t1 - t2


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    result = t2 * (q.alpha + 1) - t1
    return where(p.low < q.support.lower_bound, math.inf, result)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _infinite_like(p.probs)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return where((q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound),
                 math.inf, result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()
    return where((p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound),
                 math.inf, result)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # the Bregman divergence of the log normalizer, for two of one family without a closed form
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_nparams = [t.detach().requires_grad_() for t in p._natural_params]
    q_nparams = q._natural_params
    lg_normal = p._log_normalizer(*p_nparams)
    gradients = grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result
