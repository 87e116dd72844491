"""numbagrad.distributions: torch.distributions (parameters are numbagrad Tensors; draws come
from numbagrad's generator, seeded by numbagrad.manual_seed, so they differ from torch's)."""

from . import constraints, transforms  # noqa: F401
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete import Bernoulli, Binomial, Categorical, OneHotCategorical, Poisson
from .distribution import Distribution
from .gamma_family import Beta, Dirichlet, Gamma
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .transformed import (
    ExpRelaxedCategorical,
    Independent,
    LogNormal,
    RelaxedOneHotCategorical,
    TransformedDistribution,
)
from .transforms import AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform

__all__ = ["Distribution", "Normal", "MultivariateNormal", "Categorical", "Bernoulli", "Beta",
           "Gamma", "Dirichlet", "Uniform", "Exponential", "Laplace", "LogNormal", "Poisson",
           "Binomial", "OneHotCategorical", "RelaxedOneHotCategorical", "ExpRelaxedCategorical",
           "Independent", "TransformedDistribution", "kl_divergence", "register_kl",
           "AffineTransform", "ComposeTransform", "ExpTransform", "SigmoidTransform"]
