"""numbagrad.distributions: torch.distributions (parameters are numbagrad Tensors; draws come
from numbagrad's generator, seeded by numbagrad.manual_seed, so they differ from torch's)."""

# kl_more registers the KL divergences of the newer distributions on import
from . import constraint_registry, constraints, exp_family, kl_more, transforms  # noqa: F401
from .constraint_registry import biject_to, transform_to
from .continuous import Exponential, Laplace, Normal, Uniform
from .continuous_more import (
    GeneralizedPareto,
    LKJCholesky,
    LogisticNormal,
    OneHotCategoricalStraightThrough,
    VonMises,
)
from .discrete import Bernoulli, Binomial, Categorical, OneHotCategorical, Poisson
from .discrete_more import Geometric, Multinomial, NegativeBinomial
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma_family import Beta, Dirichlet, Gamma
from .kl import kl_divergence, register_kl
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .matrix_variate import Wishart
from .mixture import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .transformed import (
    ExpRelaxedCategorical,
    Independent,
    LogNormal,
    RelaxedOneHotCategorical,
    TransformedDistribution,
)
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    Transform,
)
from .transforms_more import (
    CatTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    ReshapeTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    identity_transform,
)
from .univariate import Cauchy, Chi2, Gumbel, HalfCauchy, HalfNormal, Pareto, StudentT, Weibull
from .univariate_more import (
    ContinuousBernoulli,
    FisherSnedecor,
    InverseGamma,
    Kumaraswamy,
    RelaxedBernoulli,
)

__all__ = ["Distribution", "Normal", "MultivariateNormal", "Categorical", "Bernoulli", "Beta",
           "Gamma", "Dirichlet", "Uniform", "Exponential", "Laplace", "LogNormal", "Poisson",
           "Binomial", "OneHotCategorical", "RelaxedOneHotCategorical", "ExpRelaxedCategorical",
           "Independent", "TransformedDistribution", "kl_divergence", "register_kl",
           "AffineTransform", "ComposeTransform", "ExpTransform", "SigmoidTransform",
           "Cauchy", "Chi2", "StudentT", "Gumbel", "HalfNormal", "HalfCauchy", "Weibull", "Pareto",
           "AbsTransform", "PowerTransform", "Geometric", "NegativeBinomial",
           "Kumaraswamy", "FisherSnedecor", "InverseGamma", "RelaxedBernoulli",
           "Multinomial", "ContinuousBernoulli", "MixtureSameFamily", "ExponentialFamily",
           "Transform", "TanhTransform", "SoftplusTransform", "SoftmaxTransform",
           "StickBreakingTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "CatTransform", "StackTransform", "IndependentTransform", "ReshapeTransform",
           "CumulativeDistributionTransform", "biject_to", "transform_to", "identity_transform",
           "GeneralizedPareto", "VonMises", "LogisticNormal", "OneHotCategoricalStraightThrough",
           "LowRankMultivariateNormal", "CorrCholeskyTransform",
           "LKJCholesky", "Wishart"]

# torch's per-distribution modules (numbagrad.distributions.normal ...), re-exporting the above
from . import submodules  # noqa: E402

submodules.install(__name__)
