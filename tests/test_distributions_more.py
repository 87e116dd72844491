"""The distributions added after the first set (Cauchy, Chi2, StudentT, Geometric, Gumbel,
HalfNormal, HalfCauchy, Weibull, Pareto, NegativeBinomial, ...) against torch.distributions:
draws after the same seed, log_prob, cdf/icdf, moments, entropy, expand, gradients of rsample
and log_prob, argument errors and kl_divergence, in float32 and float64."""

import re

import numpy as np
import pytest

import numbagrad as ng
from tests.torch_oracle import same_as_torch

torch = pytest.importorskip("torch")

FLOATS = ["float32", "float64"]
RTOL = {"float32": 2e-6, "float64": 1e-12}

# name -> (constructor on the parameters a (real), b (positive), c (in (0, 1)); points inside
# the support for log_prob/cdf). Parameters are leaves requiring grad.
SPECS = {
    "Cauchy": ("Cauchy(a, b)", [0.1, -2.0, 3.0]),
    "HalfNormal": ("HalfNormal(b)", [0.1, 2.0, 0.7]),
    "HalfCauchy": ("HalfCauchy(b)", [0.1, 2.0, 0.7]),
    "Gumbel": ("Gumbel(a, b)", [0.1, -2.0, 3.0]),
    "StudentT": ("StudentT(b * 2, a, b)", [0.1, -2.0, 3.0]),
    "Chi2": ("Chi2(b * 3)", [0.1, 2.0, 0.7]),
    "Weibull": ("Weibull(b, b + 0.5)", [0.1, 2.0, 0.7]),
    "Pareto": ("Pareto(b, b + 1)", [0.8, 2.0, 2.5]),
    "Geometric": ("Geometric(c)", [0.0, 3.0, 1.0]),
    "GeometricLogits": ("Geometric(logits=a)", [0.0, 3.0, 1.0]),
    "NegativeBinomial": ("NegativeBinomial(b * 3, c)", [0.0, 3.0, 7.0]),
    "NegativeBinomialLogits": ("NegativeBinomial(b, logits=a)", [0.0, 3.0, 7.0]),
    "Multinomial": ("Multinomial(5, c)", [1.0, 2.0, 2.0]),
    "MultinomialLogits": ("Multinomial(4, logits=a)", [0.0, 4.0, 0.0]),
    "Kumaraswamy": ("Kumaraswamy(b, b + 0.5)", [0.1, 0.5, 0.9]),
    "FisherSnedecor": ("FisherSnedecor(b * 3, b * 4)", [0.1, 2.0, 0.7]),
    "InverseGamma": ("InverseGamma(b * 2, b)", [0.1, 2.0, 0.7]),
    "ContinuousBernoulli": ("ContinuousBernoulli(c)", [0.1, 0.5, 0.9]),
    "ContinuousBernoulliLogits": ("ContinuousBernoulli(logits=a)", [0.1, 0.5, 0.9]),
    "ContinuousBernoulliHalf": ("ContinuousBernoulli(c * 0 + 0.4995)", [0.1, 0.5, 0.9]),
    "RelaxedBernoulli": ("RelaxedBernoulli(b, c)", [0.1, 0.5, 0.9]),
    "LogitRelaxedBernoulli": ("LRB(b, logits=a)", [0.1, -2.0, 3.0]),
}
# rsample gradients through a gamma draw: numbagrad's dx/dalpha takes dF/dalpha by a central
# difference, torch's by series, so they agree to about 1e-3 (Gamma's own tolerance)
GAMMA_BASED = {"StudentT", "Chi2", "FisherSnedecor", "InverseGamma"}
HAS_CDF = {"Cauchy", "HalfNormal", "HalfCauchy", "Gumbel", "Weibull", "Pareto", "Chi2",
           "Kumaraswamy", "InverseGamma", "ContinuousBernoulli", "ContinuousBernoulliLogits",
           "ContinuousBernoulliHalf"}
HAS_ICDF = {"Cauchy", "HalfNormal", "HalfCauchy", "Gumbel", "Weibull", "Pareto", "Kumaraswamy",
            "ContinuousBernoulli", "ContinuousBernoulliLogits", "ContinuousBernoulliHalf"}


def _get(d, what, *args):
    """``d.what`` (called with ``args`` when given), or the error's type name when the
    distribution does not implement it."""
    try:
        value = getattr(d, what)
        return value(*args) if args or what == "entropy" else value
    except NotImplementedError:
        return "NotImplementedError"


def _params(lib, dt):
    dtype = getattr(lib, dt)
    return {k: lib.tensor(v, dtype=dtype, requires_grad=True)
            for k, v in (("a", [0.3, -1.2, 0.5]), ("b", [0.7, 1.5, 2.0]),
                         ("c", [0.2, 0.7, 0.4]))}


def _logit_relaxed_bernoulli(lib):
    # torch.distributions does not export it at the top level
    return (torch.distributions.relaxed_bernoulli.LogitRelaxedBernoulli if lib is torch
            else ng.distributions.univariate_more.LogitRelaxedBernoulli)


def _make(lib, dt, spec):
    p = _params(lib, dt)
    names = {**vars(lib.distributions), "LRB": _logit_relaxed_bernoulli(lib), **p}
    return eval(spec, names), p  # noqa: S307 - own specs


def _np(t):
    return None if t is None else np.asarray(t.detach().numpy(), np.float64)


def _close(ours, theirs, dt, rtol=None):
    ours, theirs = _np(ours), _np(theirs)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=rtol or RTOL[dt], atol=(rtol or RTOL[dt]),
                               equal_nan=True)


def _both(fn):
    out = []
    for lib in (ng, torch):
        lib.manual_seed(7)
        out.append(fn(lib))
    return out


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("name", list(SPECS))
def test_values_and_draws(name, dt):
    spec, points = SPECS[name]

    def run(lib):
        d, _ = _make(lib, dt, spec)
        x = d.sample((4,))
        value = lib.tensor(points, dtype=getattr(lib, dt))
        out = {"sample": x, "log_prob": d.log_prob(value), "log_prob_x": d.log_prob(x),
               "expand": d.expand((2, 3)).sample((2,)), "flags": (d.has_rsample,
                                                                   d.support.is_discrete)}
        for what in ("mean", "variance", "mode", "entropy"):
            out[what] = _get(d, what)
        if name in HAS_CDF:
            out["cdf"] = d.cdf(value)
        if name in HAS_ICDF:
            out["icdf"] = d.icdf(lib.tensor([0.1, 0.5, 0.9], dtype=getattr(lib, dt)))
        return out

    ours, theirs = _both(run)
    assert ours.keys() == theirs.keys()
    assert ours.pop("flags") == theirs.pop("flags")
    for key in ours:
        if isinstance(theirs[key], str):
            assert ours[key] == theirs[key], key
            continue
        assert ours[key].dtype == getattr(ng, dt), key
        _close(ours[key], theirs[key], dt)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("name", [n for n in SPECS if not n.startswith(("Geo", "Neg", "Multi"))])
def test_rsample_and_log_prob_gradients(name, dt):
    spec, points = SPECS[name]

    def run(lib):
        d, p = _make(lib, dt, spec)
        x = d.rsample((3,))
        value = lib.tensor(points, dtype=getattr(lib, dt))
        total = (x * x.detach().abs().clamp(max=5.0).reciprocal()).sum() \
            + d.log_prob(value).sum()
        entropy = _get(d, "entropy")
        if not isinstance(entropy, str):
            total = total + entropy.sum()
        used = [t for k, t in p.items() if re.search(rf"\b{k}\b", spec)]
        return x, lib.autograd.grad(total, used)

    (x, grads), (tx, tgrads) = _both(run)
    _close(x, tx, dt)
    tol = 2e-3 if name in GAMMA_BASED else (1e-5 if dt == "float32" else 1e-10)
    for g, tg in zip(grads, tgrads):
        _close(g, tg, dt, rtol=tol)


ERRORS = [
    "D.Cauchy(lib.tensor([0.0, 1.0]), lib.tensor([1.0, -1.0]))",
    "D.Cauchy(lib.tensor([0.0]), 'x')",
    "D.HalfNormal(lib.tensor([0.0, 1.0]))",
    "D.HalfCauchy(-1.0)",
    "D.Gumbel(lib.tensor([0.0]), lib.tensor([0.0]))",
    "D.StudentT(lib.tensor([-1.0]))",
    "D.Chi2(lib.tensor([0.0, 2.0]))",
    "D.Weibull(lib.tensor([1.0]), lib.tensor([-1.0]))",
    "D.Pareto(lib.tensor([1.0]), lib.tensor([0.0]))",
    "D.Geometric(lib.tensor([0.0, 0.5]))",
    "D.Geometric(lib.tensor([1.5]))",
    "D.Geometric()",
    "D.Geometric(lib.tensor([0.5]), lib.tensor([0.5]))",
    "D.NegativeBinomial(lib.tensor([2.0]), lib.tensor([1.0]))",
    "D.NegativeBinomial(lib.tensor([-2.0]), lib.tensor([0.5]))",
    "D.NegativeBinomial(lib.tensor([2.0]))",
    "D.Multinomial(lib.tensor([2.0]), lib.tensor([0.2, 0.8]))",
    "D.Multinomial(3, lib.tensor([0.2, 0.8])).log_prob(lib.tensor([2.0, 2.0]))",
    "D.Multinomial(3, lib.tensor([0.2, 0.8])).log_prob(lib.tensor([-1.0, 2.0]))",
    "repr(D.Multinomial(3, lib.tensor([[0.2, 0.8]])).expand((4,)))",
    "D.Multinomial(3, lib.tensor([[0.2, 0.8]])).expand((4,)).event_shape",
    "D.Kumaraswamy(lib.tensor([1.0]), lib.tensor([-1.0]))",
    "D.FisherSnedecor(lib.tensor([0.0]), lib.tensor([1.0]))",
    "D.InverseGamma(lib.tensor([1.0]), lib.tensor([0.0]))",
    "D.RelaxedBernoulli(lib.tensor(0.5), lib.tensor([1.5]))",
    "D.RelaxedBernoulli(lib.tensor(0.5))",
    "D.ContinuousBernoulli(lib.tensor([1.5]), validate_args=False)",
    "repr(D.ContinuousBernoulli(lib.tensor([1.5])))",
    "D.ContinuousBernoulli(lib.tensor([0.5])).log_prob(lib.tensor([1.5]))",
    "D.Kumaraswamy(lib.tensor([1.0]), lib.tensor([2.0])).log_prob(lib.tensor([1.5]))",
    "repr(D.InverseGamma(lib.tensor([2.0]), lib.tensor([2.0])).expand((3, 1)))",
    "D.RelaxedBernoulli(lib.tensor(0.5), logits=lib.tensor([1.5])).expand((2,)).batch_shape",
    "D.HalfNormal(lib.tensor([1.0])).log_prob(lib.tensor([-1.0]))",
    "D.Pareto(lib.tensor([1.0]), lib.tensor([2.0])).log_prob(lib.tensor([0.5]))",
    "D.Geometric(lib.tensor([0.5])).log_prob(lib.tensor([1.5]))",
    "repr(D.Cauchy(lib.tensor([0.0]), lib.tensor([1.0])).expand((3, 2)))",
    "D.StudentT(lib.tensor([2.0, 3.0])).expand((4, 2)).batch_shape",
    "D.Chi2(lib.tensor([2.0, 3.0])).expand((4, 2)).df",
    "repr(D.Chi2(lib.tensor([2.0, 3.0])))",
    "repr(D.Gumbel(lib.tensor(0.0), lib.tensor(1.0)))",
    "D.Pareto(lib.tensor([1.0, 2.0]), lib.tensor([2.0, 3.0])).support.lower_bound",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_and_shapes(expr):
    same_as_torch(lambda lib: eval(expr, {"lib": lib, "D": lib.distributions}))  # noqa: S307


KL_PAIRS = [
    ("Gumbel(a, b)", "Gumbel(a * 0.5, b + 0.3)"),
    ("Geometric(c)", "Geometric(c * 0.5)"),
    ("HalfNormal(b)", "HalfNormal(b + 0.3)"),
    ("Cauchy(a, b)", "Cauchy(a * 0.5, b + 0.3)"),
    ("Pareto(b, b + 2)", "Pareto(b * 0.8, b + 0.3)"),
    ("Pareto(b, b + 2)", "Pareto(b * 1.2, b + 0.3)"),
    ("Exponential(b)", "Gumbel(a, b + 0.3)"),
    ("Gamma(b, b + 0.5)", "Gumbel(a, b + 0.3)"),
    ("Normal(a, b)", "Gumbel(a * 0.5, b + 0.3)"),
    ("Gumbel(a, b)", "Normal(a * 0.5, b + 0.3)"),
    ("Uniform(a, a + b)", "Gumbel(a * 0.5, b + 0.3)"),
    ("Uniform(b, b + 1)", "Pareto(b * 0.5, b + 0.3)"),
    ("Uniform(b, b + 1)", "Pareto(b * 1.5, b + 0.3)"),
    ("Pareto(b, b * 2)", "Normal(a, b + 0.3)"),
    ("Pareto(b, b * 2)", "Gamma(b, b + 0.3)"),
    ("Pareto(b, b * 2)", "Exponential(b + 0.3)"),
    ("Gumbel(a, b)", "Exponential(b)"),
    ("Normal(a, b)", "Pareto(b, b)"),
    ("Beta(b, b)", "Pareto(b, b)"),
    ("Pareto(b, b)", "Uniform(a, a + b)"),
    ("Chi2(b)", "Chi2(b + 0.3)"),
    ("ContinuousBernoulli(c)", "ContinuousBernoulli(logits=a)"),
    ("ContinuousBernoulli(c)", "Exponential(b)"),
    ("ContinuousBernoulli(c)", "Normal(a, b)"),
    ("ContinuousBernoulli(c)", "Uniform(a - 1, b + 1)"),
    ("ContinuousBernoulli(c)", "Uniform(c * 0.1, b + 1)"),
    ("Uniform(c * 0.5, c + 0.2)", "ContinuousBernoulli(c)"),
    ("Uniform(a, b + 1)", "ContinuousBernoulli(c)"),
    ("Normal(a, b)", "ContinuousBernoulli(c)"),
    ("ContinuousBernoulli(c)", "Pareto(b, b)"),
    ("Chi2(b)", "Gamma(b, b + 0.3)"),
]


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("pair", KL_PAIRS, ids="|".join)
def test_kl_divergence(pair, dt):
    def run(lib):
        p = _params(lib, dt)
        names = {"lib": lib, **p}
        d1, d2 = (eval(f"lib.distributions.{s}", names) for s in pair)  # noqa: S307
        kl = lib.distributions.kl_divergence(d1, d2)
        finite = kl.detach().isfinite()
        grads = lib.autograd.grad(kl[finite].sum(), [p["a"], p["b"], p["c"]],
                                  allow_unused=True) if kl.requires_grad and bool(
            finite.any()) else ()
        return kl, [g for g in grads if g is not None]

    (kl, grads), (tkl, tgrads) = _both(run)
    _close(kl, tkl, dt, rtol=1e-5 if dt == "float32" else 1e-10)
    assert len(grads) == len(tgrads)
    for g, tg in zip(grads, tgrads):
        _close(g, tg, dt, rtol=1e-5 if dt == "float32" else 1e-10)


def test_scalar_parameters_and_sample_shapes():
    def run(lib):
        d = lib.distributions
        return [d.Cauchy(0.5, 2.0).sample((3,)), d.Gumbel(0.5, 2.0).rsample((2, 2)),
                d.HalfCauchy(1.5).sample(), d.Geometric(0.3).sample((5,)),
                d.StudentT(3.0).sample((2,)), d.Chi2(4.0).sample((3,)),
                d.Weibull(1.0, 2.0).sample((3,)), d.Pareto(1.0, 2.0).sample((3,))]
    for ours, theirs in zip(*_both(run)):
        _close(ours, theirs, "float32")


def _mixtures(lib, dt):
    d, dtype = lib.distributions, getattr(lib, dt)
    loc = lib.tensor([0.0, 1.0, -2.0], dtype=dtype, requires_grad=True)
    weights = lib.tensor([0.2, 0.5, 0.3], dtype=dtype, requires_grad=True)
    scalar = d.MixtureSameFamily(d.Categorical(weights),
                                 d.Normal(loc, lib.tensor([1.0, 0.5, 2.0], dtype=dtype)))
    locs = lib.tensor(np.arange(8.0).reshape(2, 2, 2) / 4, dtype=dtype)
    vector = d.MixtureSameFamily(d.Categorical(lib.tensor([[0.2, 0.8], [0.6, 0.4]], dtype=dtype)),
                                 d.Independent(d.Normal(locs, locs * 0 + 1.5), 1))
    return scalar, vector, (loc, weights)


@pytest.mark.parametrize("dt", FLOATS)
def test_mixture_same_family(dt):
    def run(lib):
        scalar, vector, leaves = _mixtures(lib, dt)
        out = [scalar.sample((4,)), vector.sample((3,)), scalar.mean, scalar.variance,
               vector.mean, vector.variance, vector.expand((3, 2)).sample((2,)),
               scalar.cdf(lib.tensor([0.3, -1.0], dtype=getattr(lib, dt)))]
        lp = scalar.log_prob(lib.tensor([0.3, -1.0, 2.0], dtype=getattr(lib, dt)))
        out += [lp, vector.log_prob(vector.sample((2,))), *lib.autograd.grad(lp.sum(), leaves)]
        return out, (repr(scalar), repr(vector.support), vector.batch_shape, vector.event_shape)

    (ours, ours_meta), (theirs, theirs_meta) = _both(run)
    assert ours_meta == theirs_meta
    for a, b in zip(ours, theirs):
        _close(a, b, dt, rtol=1e-5 if dt == "float32" else 1e-10)


MIXTURE_ERRORS = [
    "D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(lib.tensor([0.0, 1.0]), 1.0))",
    "D.MixtureSameFamily(D.Categorical(lib.tensor([0.2, 0.8])), 3)",
    "D.MixtureSameFamily(D.Categorical(lib.tensor([0.2, 0.8])), "
    "D.Normal(lib.tensor([0.0, 1.0, 3.0]), 1.0))",
    "D.MixtureSameFamily(D.Categorical(lib.tensor([[0.2, 0.8]] * 3)), "
    "D.Normal(lib.tensor([[0.0, 1.0]] * 2), 1.0))",
    "D.MixtureSameFamily(D.Categorical(lib.tensor([0.2, 0.8])), "
    "D.Normal(lib.tensor([0.0, 1.0]), 1.0)).log_prob(lib.tensor([[0.3]]))",
    "D.MixtureSameFamily(D.Categorical(lib.tensor([0.2, 0.8])), "
    "D.Exponential(lib.tensor([1.0, 2.0]))).log_prob(lib.tensor([-0.3]))",
]


@pytest.mark.parametrize("expr", MIXTURE_ERRORS)
def test_mixture_errors(expr):
    same_as_torch(lambda lib: eval(expr, {"lib": lib, "D": lib.distributions}))  # noqa: S307
