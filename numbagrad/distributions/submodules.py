"""torch.distributions' one-class-per-file modules (``torch.distributions.normal`` ...) as
module objects registered in sys.modules, so ``import numbagrad.distributions.normal`` and
``from numbagrad.distributions.normal import Normal`` work. Our classes keep living in the
grouped files (continuous.py, discrete.py ...), which is what their ``__module__`` and pickle
name; these modules only re-export them, the same objects as the package's."""

import math
import sys
import types
from numbers import Number, Real

from ..nn import functional as F  # noqa: N812 - torch's modules call it F
from ..tensor import Tensor
from . import constraints, transforms, utils

# module -> (its __all__, the other public names torch's module shows: what it imports).
# Names we lack are left out of the module (and of its __all__); a module none of whose
# __all__ we have is not made.
TABLE = {
    "bernoulli": ("Bernoulli", "ExponentialFamily Number Tensor binary_cross_entropy_with_logits "
                  "broadcast_all constraints lazy_property logits_to_probs nan probs_to_logits "
                  "torch"),
    "beta": ("Beta", "Dirichlet ExponentialFamily Tensor broadcast_all constraints torch"),
    "binomial": ("Binomial", "Distribution Tensor broadcast_all constraints lazy_property "
                 "logits_to_probs probs_to_logits torch"),
    "categorical": ("Categorical", "Distribution Tensor constraints lazy_property "
                    "logits_to_probs nan probs_to_logits torch"),
    "cauchy": ("Cauchy", "Distribution Tensor broadcast_all constraints inf math nan torch"),
    "chi2": ("Chi2", "Gamma Tensor constraints"),
    "continuous_bernoulli": ("ContinuousBernoulli", "ExponentialFamily Number Tensor "
                             "binary_cross_entropy_with_logits broadcast_all clamp_probs "
                             "constraints lazy_property logits_to_probs math probs_to_logits "
                             "torch"),
    "dirichlet": ("Dirichlet", "ExponentialFamily Tensor constraints torch"),
    "exponential": ("Exponential", "ExponentialFamily Tensor broadcast_all constraints torch"),
    "fishersnedecor": ("FisherSnedecor", "Distribution Gamma Tensor broadcast_all constraints "
                       "nan torch"),
    "gamma": ("Gamma", "ExponentialFamily Tensor broadcast_all constraints torch"),
    "generalized_pareto": ("GeneralizedPareto", "Distribution Number Real broadcast_all "
                           "constraints inf math nan torch"),
    "geometric": ("Geometric", "Distribution Number Tensor binary_cross_entropy_with_logits "
                  "broadcast_all constraints lazy_property logits_to_probs probs_to_logits "
                  "torch"),
    "gumbel": ("Gumbel", "AffineTransform ExpTransform Tensor TransformedDistribution Uniform "
               "broadcast_all constraints euler_constant math torch"),
    "half_cauchy": ("HalfCauchy", "AbsTransform Cauchy Tensor TransformedDistribution "
                    "constraints inf math torch"),
    "half_normal": ("HalfNormal", "AbsTransform Normal Tensor TransformedDistribution "
                    "constraints inf math torch"),
    "independent": ("Independent", "Distribution Tensor constraints torch"),
    "inverse_gamma": ("InverseGamma", "Gamma PowerTransform Tensor TransformedDistribution "
                      "constraints torch"),
    "kumaraswamy": ("Kumaraswamy", "AffineTransform PowerTransform Tensor "
                    "TransformedDistribution Uniform broadcast_all constraints euler_constant "
                    "nan torch"),
    "laplace": ("Laplace", "Distribution Tensor broadcast_all constraints torch"),
    "lkj_cholesky": ("LKJCholesky", "Beta Distribution Tensor broadcast_all constraints math "
                     "torch"),
    "log_normal": ("LogNormal", "ExpTransform Normal Tensor TransformedDistribution "
                   "constraints"),
    "logistic_normal": ("LogisticNormal", "Independent Normal StickBreakingTransform Tensor "
                        "TransformedDistribution constraints"),
    "lowrank_multivariate_normal": ("LowRankMultivariateNormal", "Distribution Tensor "
                                    "constraints lazy_property math torch"),
    "mixture_same_family": ("MixtureSameFamily", "Categorical Distribution "
                            "MixtureSameFamilyConstraint Tensor constraints torch"),
    "multinomial": ("Multinomial", "Binomial Categorical Distribution Tensor broadcast_all "
                    "constraints inf torch"),
    "negative_binomial": ("NegativeBinomial", "Distribution F Gamma Tensor broadcast_all "
                          "constraints lazy_property logits_to_probs probs_to_logits torch"),
    "normal": ("Normal", "ExponentialFamily Tensor broadcast_all constraints math torch"),
    "one_hot_categorical": ("OneHotCategorical OneHotCategoricalStraightThrough",
                            "Categorical Distribution Tensor constraints torch"),
    "pareto": ("Pareto", "AffineTransform ExpTransform Exponential Tensor "
               "TransformedDistribution broadcast_all constraints"),
    "poisson": ("Poisson", "ExponentialFamily Number Tensor broadcast_all constraints torch"),
    "relaxed_bernoulli": ("LogitRelaxedBernoulli RelaxedBernoulli", "Distribution Number "
                          "SigmoidTransform Tensor TransformedDistribution broadcast_all "
                          "clamp_probs constraints lazy_property logits_to_probs "
                          "probs_to_logits torch"),
    "relaxed_categorical": ("ExpRelaxedCategorical RelaxedOneHotCategorical", "Categorical "
                            "Distribution ExpTransform Tensor TransformedDistribution "
                            "broadcast_all clamp_probs constraints torch"),
    "studentT": ("StudentT", "Chi2 Distribution Tensor broadcast_all constraints inf math nan "
                 "torch"),
    "transformed_distribution": ("TransformedDistribution", "ComposeTransform Distribution "
                                 "Independent Tensor Transform constraints torch"),
    "uniform": ("Uniform", "Distribution Tensor broadcast_all constraints nan torch"),
    "von_mises": ("VonMises", "Distribution Tensor broadcast_all constraints lazy_property "
                  "math torch"),
    "weibull": ("Weibull", "AffineTransform Exponential PowerTransform Tensor "
                "TransformedDistribution broadcast_all constraints euler_constant torch"),
    "wishart": ("Wishart", "ExponentialFamily Number Tensor constraints lazy_property math nan "
                "torch"),
}

# what the imported helpers are here (the package itself supplies the distributions and
# transforms; "torch" is numbagrad, as `import numbagrad as torch` has it)
_HELPERS = {"Tensor": Tensor, "F": F, "binary_cross_entropy_with_logits":
            F.binary_cross_entropy_with_logits, "constraints": constraints,
            "transforms": transforms, "math": math, "nan": math.nan, "inf": math.inf,
            "Number": int | float | bool, "Real": Real}  # torch.types' Number
_HELPERS.update({n: getattr(utils, n) for n in (
    "broadcast_all", "lazy_property", "logits_to_probs", "probs_to_logits", "clamp_probs",
    "euler_constant")})
INSTALLED = []  # the TABLE modules made (the stubs list them)


def install(package):
    """Registers each TABLE module under ``package`` (its attributes taken from the package,
    then from _HELPERS), as a sys.modules entry and an attribute of the package."""
    pkg = sys.modules[package]
    for name, (exported, imported) in TABLE.items():
        if f"{package}.{name}" in sys.modules:  # a real module of that name (it came first)
            continue
        sources = dict(_HELPERS, torch=sys.modules[package.split(".")[0]])
        if name == "generalized_pareto":  # the one that imports numbers' Number
            sources["Number"] = Number
        mod = types.ModuleType(f"{package}.{name}", f"torch.distributions.{name}'s names.")
        for attr in (exported + " " + imported).split():
            value = getattr(pkg, attr, sources.get(attr, sources))
            if value is not sources:
                setattr(mod, attr, value)
        mod.__all__ = [n for n in exported.split() if hasattr(mod, n)]
        if not mod.__all__:  # none of its distributions yet: no module claiming to have it
            continue
        sys.modules[mod.__name__] = mod
        setattr(pkg, name, mod)
        INSTALLED.append(name)
