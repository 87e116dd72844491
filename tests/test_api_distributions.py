"""numbagrad.distributions against torch.distributions: log_prob, entropy, moments, cdf and
kl_divergence values and gradients (float64, rtol 1e-10), shapes and flags, torch's errors;
draws (from numbagrad's generator, so not torch's numbers) by their statistics."""

import numpy as np
import pytest

import numbagrad as ng
from tests.torch_oracle import same_as_torch

torch = pytest.importorskip("torch")

_A = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
PARAMS = dict(loc=[0.3, -1.2, 0.5], scale=[0.7, 1.5, 2.0], rate=[0.5, 1.3, 2.0],
              conc=[0.6, 2.5, 1.2], conc2=[1.7, 0.8, 3.0], probs=[0.2, 0.5, 0.3],
              p01=[0.2, 0.7, 0.4], logits=[[0.1, -0.5, 1.2], [2.0, 0.3, -1.0]], A=_A,
              L=np.linalg.cholesky(_A), low=[-1.0, 0.0, 0.5], high=[1.0, 2.0, 0.9])


def _t(lib, v):
    return lib.tensor(np.asarray(v, float), dtype=lib.float64)


CASES = {
    "Normal": (lambda d, t, lib: d.Normal(t["loc"], t["scale"]), [0.1, -0.3, 2.0]),
    "Laplace": (lambda d, t, lib: d.Laplace(t["loc"], t["scale"]), [0.1, -0.3, 2.0]),
    "Uniform": (lambda d, t, lib: d.Uniform(t["low"], t["high"]), [0.1, 1.0, 0.6]),
    "Exponential": (lambda d, t, lib: d.Exponential(t["rate"]), [0.1, 1.0, 0.6]),
    "Gamma": (lambda d, t, lib: d.Gamma(t["conc"], t["rate"]), [0.1, 1.0, 0.6]),
    "Beta": (lambda d, t, lib: d.Beta(t["conc"], t["conc2"]), [0.1, 0.9, 0.6]),
    "Dirichlet": (lambda d, t, lib: d.Dirichlet(t["conc"]), [0.1, 0.3, 0.6]),
    "LogNormal": (lambda d, t, lib: d.LogNormal(t["loc"], t["scale"]), [0.1, 1.0, 0.6]),
    "Poisson": (lambda d, t, lib: d.Poisson(t["rate"]), [0.0, 3.0, 1.0]),
    "Bernoulli": (lambda d, t, lib: d.Bernoulli(t["p01"]), [0.0, 1.0, 1.0]),
    "Bernoulli-logits": (lambda d, t, lib: d.Bernoulli(logits=t["loc"]), [0.0, 1.0, 1.0]),
    "Binomial": (lambda d, t, lib: d.Binomial(5, t["p01"]), [0.0, 3.0, 5.0]),
    "Binomial-logits": (lambda d, t, lib: d.Binomial(_t(lib, [4, 5, 6]), logits=t["loc"]),
                        [0.0, 3.0, 5.0]),
    "Categorical": (lambda d, t, lib: d.Categorical(t["probs"]), [0, 2, 1]),
    "Categorical-logits": (lambda d, t, lib: d.Categorical(logits=t["logits"]), [[0, 2]]),
    "OneHotCategorical": (lambda d, t, lib: d.OneHotCategorical(t["probs"]), np.eye(3)[[0, 2]]),
    "RelaxedOneHotCategorical": (
        lambda d, t, lib: d.RelaxedOneHotCategorical(_t(lib, 0.7), logits=t["logits"]),
        [0.2, 0.5, 0.3]),
    "MVN-scale_tril": (lambda d, t, lib: d.MultivariateNormal(t["loc"], scale_tril=t["L"]),
                       [[0.1, 0.2, 0.3], [1.0, -1.0, 0.0]]),
    "MVN-covariance": (lambda d, t, lib: d.MultivariateNormal(t["loc"], covariance_matrix=t["A"]),
                       [[0.1, 0.2, 0.3], [1.0, -1.0, 0.0]]),
    "MVN-precision": (lambda d, t, lib: d.MultivariateNormal(t["loc"], precision_matrix=t["A"]),
                      [[0.1, 0.2, 0.3], [1.0, -1.0, 0.0]]),
    "Independent": (lambda d, t, lib: d.Independent(d.Normal(t["loc"], t["scale"]), 1),
                    [0.1, -0.3, 2.0]),
    "TransformedDistribution": (
        lambda d, t, lib: d.TransformedDistribution(
            d.Normal(t["loc"], t["scale"]),
            [d.transforms.AffineTransform(t["loc"], 2.0), d.transforms.SigmoidTransform()]),
        [0.1, 0.3, 0.9]),
    "Transformed-exp": (lambda d, t, lib: d.TransformedDistribution(
        d.Exponential(t["rate"]), [d.transforms.ExpTransform(),
                                   d.transforms.AffineTransform(1.0, t["scale"])]),
        [2.1, 3.3, 4.9]),
}
ATTRIBUTES = ["log_prob", "entropy", "mean", "variance", "stddev", "mode", "cdf", "icdf"]


def _evaluate(lib, name):
    params = {k: _t(lib, v).requires_grad_() for k, v in PARAMS.items()}
    make, value = CASES[name]
    dist = make(lib.distributions, params, lib)
    out = {"shapes": (tuple(dist.batch_shape), tuple(dist.event_shape),
                      tuple(dist.sample((2,)).shape), str(dist.sample().dtype),
                      dist.has_rsample, dist.has_enumerate_support)}
    for attr in ATTRIBUTES:
        try:
            if attr in ("log_prob", "cdf"):
                result = getattr(dist, attr)(_t(lib, value))
            elif attr == "icdf":
                result = dist.icdf(_t(lib, np.full(np.shape(value), 0.3)))
            elif attr == "entropy":
                result = dist.entropy()
            else:
                result = getattr(dist, attr)
        except NotImplementedError:
            out[attr] = "not implemented"
            continue
        values = result.detach().numpy().copy()
        grads = {}
        # (torch's gammainc has no derivative in the concentration: test_gamma_cdf_gradient)
        if result.requires_grad and np.isfinite(values).all() and not (
                name == "Gamma" and attr == "cdf"):
            found = lib.autograd.grad(result.sum(), list(params.values()), allow_unused=True,
                                      retain_graph=True)
            grads = {k: g.numpy() for k, g in zip(params, found) if g is not None}
        out[attr] = (values, grads)
    return out


@pytest.mark.parametrize("name", CASES)
def test_values_gradients_and_shapes_match_torch(name):
    ours, theirs = _evaluate(ng, name), _evaluate(torch, name)
    assert ours["shapes"] == theirs["shapes"]
    for attr in (a for a in ATTRIBUTES if a in theirs):
        if isinstance(theirs[attr], str) or isinstance(ours[attr], str):
            assert ours[attr] == theirs[attr], attr
            continue
        (va, ga), (vb, gb) = ours[attr], theirs[attr]
        assert va.shape == vb.shape, attr
        np.testing.assert_allclose(va, vb, rtol=1e-10, atol=1e-12, err_msg=attr)
        assert set(ga) == set(gb), attr
        for k in gb:
            np.testing.assert_allclose(ga[k], gb[k], rtol=1e-10, atol=1e-12,
                                       err_msg=f"{attr} d/d{k}")


def test_gamma_cdf_gradient_in_the_rate_and_value():
    grads = []
    for lib in (ng, torch):
        rate, value = _t(lib, [0.5, 2.0]).requires_grad_(), _t(lib, [0.3, 1.7]).requires_grad_()
        cdf = lib.distributions.Gamma(_t(lib, [0.7, 3.0]), rate).cdf(value)
        grads.append([g.numpy() for g in lib.autograd.grad(cdf.sum(), [rate, value])])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def _kl_pairs(lib):
    D = lib.distributions
    leaves = []

    def p(v):
        t = _t(lib, v).requires_grad_()
        leaves.append(t)
        return t
    b = np.array([[1.0, -0.2], [-0.2, 0.7]])
    pairs = {
        "Normal": (D.Normal(p([0.1, 1.]), p([1.2, .5])), D.Normal(p([0.3, -1.]), p([.7, 2.]))),
        "Categorical": (D.Categorical(p([.2, .3, .5])), D.Categorical(logits=p([.1, -.4, 1.]))),
        "Categorical-zeros": (D.Categorical(p([0., .3, .7])), D.Categorical(p([.5, 0., .5]))),
        "Bernoulli": (D.Bernoulli(p([.2, .9, 0.])), D.Bernoulli(logits=p([.3, -1., 2.]))),
        "Beta": (D.Beta(p([1.5, 2.]), p([.7, 3.])), D.Beta(p([2.5, 1.]), p([1.7, .5]))),
        "Gamma": (D.Gamma(p([1.5, 2.]), p([.7, 3.])), D.Gamma(p([2.5, 1.]), p([1.7, .5]))),
        "Dirichlet": (D.Dirichlet(p([1.5, 2., .3])), D.Dirichlet(p([.5, 1., 3.]))),
        "Uniform": (D.Uniform(p([0., 1.]), p([1., 2.])), D.Uniform(p([-1., 1.5]), p([2., 3.]))),
        "Exponential": (D.Exponential(p([1.5, .2])), D.Exponential(p([.5, 2.]))),
        "Laplace": (D.Laplace(p([.1, 1.]), p([1.2, .5])), D.Laplace(p([.3, -1.]), p([.7, 2.]))),
        "MultivariateNormal": (
            D.MultivariateNormal(p([0.1, 1.]), covariance_matrix=p(_A[:2, :2])),
            D.MultivariateNormal(p([0.3, -1.]), scale_tril=p(np.linalg.cholesky(b)))),
        "Poisson": (D.Poisson(p([1.5, .2])), D.Poisson(p([.5, 2.]))),
        "Independent": (D.Independent(D.Normal(p([0.1, 1.]), p([1.2, .5])), 1),
                        D.Independent(D.Normal(p([0.3, -1.]), p([.7, 2.])), 1)),
        "OneHotCategorical": (D.OneHotCategorical(p([.2, .3, .5])),
                              D.OneHotCategorical(p([.6, .3, .1]))),
        "LogNormal": (D.LogNormal(p([0.1, 1.]), p([1.2, .5])),
                      D.LogNormal(p([0.3, -1.]), p([.7, 2.]))),
    }
    return pairs, leaves


@pytest.mark.parametrize("pair", list(_kl_pairs(ng)[0]))
def test_kl_divergence_values_and_gradients_match_torch(pair):
    results = []
    for lib in (ng, torch):
        pairs, leaves = _kl_pairs(lib)
        kl = lib.distributions.kl_divergence(*pairs[pair])
        finite = np.isfinite(kl.detach().numpy())
        grads = []
        if finite.all():  # (an infinite divergence has no meaningful gradient)
            grads = lib.autograd.grad(kl.sum(), leaves, allow_unused=True)
        results.append((kl.detach().numpy(), [None if g is None else g.numpy() for g in grads]))
    (ka, ga), (kb, gb) = results
    np.testing.assert_allclose(ka, kb, rtol=1e-10)
    for x, y in zip(ga, gb):
        assert (x is None) == (y is None)
        if y is not None:
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


def test_register_kl_and_missing_pairs():
    D = ng.distributions

    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    expected = D.kl_divergence(D.Normal(0.0, 1.0), q)
    assert float(D.kl_divergence(p, q)) == float(expected)  # dispatched to the base pair

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return p.loc * 0 + 42.0

    assert float(D.kl_divergence(p, q)) == 42.0
    same_as_torch(lambda lib: lib.distributions.kl_divergence(
        lib.distributions.Independent(lib.distributions.Normal(lib.ones(2), 1.0), 1),
        lib.distributions.Dirichlet(lib.ones(2))))


ERRORS = [
    "D.Normal(T([0.]), T([-1.]))",
    "D.Normal(T([0., 1.]), T([1., 0.]))",
    "D.Normal(0., 1.).log_prob(T([float('nan')]))",
    "D.Normal(T([0., 1.]), T([1., 1.])).log_prob(T([1., 2., 3.]))",
    "D.Exponential(T([1.])).log_prob(T([-1.]))",
    "D.Uniform(0., 1.).log_prob(T([1.5]))",
    "D.Uniform(T([2.]), T([1.]))",
    "D.Bernoulli(probs=T([0.5]), logits=T([0.]))",
    "D.Bernoulli(T([1.5]))",
    "D.Bernoulli(T([0.5])).log_prob(T([0.5]))",
    "D.Categorical(T([0.2, 0.8])).log_prob(T([2.]))",
    "D.Categorical(T(0.5))",
    "D.Categorical(logits=T(0.5))",
    "D.Categorical(T([-0.2, 1.2]))",
    "D.Beta(T([1.]), T([-1.]))",
    "D.Gamma(T([1.]), T([1.])).log_prob(T([-1.]))",
    "D.Dirichlet(T([1., 2.])).log_prob(T([0.5, 0.6]))",
    "D.Dirichlet(T(1.))",
    "D.Poisson(T([1.])).log_prob(T([0.5]))",
    "D.Binomial(T([3.]), T([0.5])).log_prob(T([4.]))",
    "D.Laplace(T([0.]), T([0.]))",
    "D.MultivariateNormal(T([0., 0.]))",
    "D.MultivariateNormal(T(0.), scale_tril=T([[1.]]))",
    "D.MultivariateNormal(T([0., 0.]), scale_tril=T([1., 1.]))",
    "D.MultivariateNormal(T([0., 0.]), covariance_matrix=T([[1., 2.], [2., 1.]]))",
    "D.MultivariateNormal(T([0., 0.]), scale_tril=T([[1., 0.], [0., -1.]]))",
    "D.Independent(D.Normal(T([0.]), T([1.])), 2)",
    "D.TransformedDistribution(D.Normal(0., 1.), 3)",
    "D.Normal(T([0.]), T([-1.]), validate_args=False).scale",
    "D.Normal(T([0.]), T([1.]), validate_args=False).log_prob(T([float('nan')])).isnan()",
    "D.Normal(0., 1.)",
    "D.Normal(T([0.5, 1.]), 2.)",
    "D.Normal(T([0.5, 1.]), 2.).expand((3, 2)).log_prob(T([0., 1.]))",
    "D.Bernoulli(T([0.3, 0.6])).expand((2, 2)).entropy()",
    "D.Categorical(T([[0.3, 0.7]])).expand((3,)).logits",
    "D.Beta(2., 3.).log_prob(T(0.3))",
    "D.Binomial(4, T([0.3])).enumerate_support()",
    "D.Bernoulli(T([0.3])).enumerate_support()",
    "D.Categorical(T([0.3, 0.7])).enumerate_support(expand=False)",
    "D.Binomial(T([3., 4.]), T([0.3, 0.2])).entropy()",
    "D.Independent(D.Normal(T([0., 1.]), T([1., 2.])), 1)",
    "D.Normal(T([0.]), T([1.])).perplexity()",
    "D.Gamma(T([2.]).requires_grad_(), 1.).cdf(T([0.5])).sum().backward()",
    "D.Dirichlet(T([0.5, 0.7])).mode",
    "D.Dirichlet(T([2.5, 0.7])).mode",
    "D.MultivariateNormal(T([0., 1.]), scale_tril=T([[1., 0.], [0.5, 2.]])).expand((3,))"
    ".log_prob(T([[0.1, 0.2]]))",
    "D.MultivariateNormal(T([0., 1.]), precision_matrix=T([[1., 0.3], [0.3, 2.]])).scale_tril",
    "D.MultivariateNormal(T([[0., 1.], [1., 2.]]), covariance_matrix=T([[1., 0.], [0., 2.]]))"
    ".variance",
    "D.Independent(D.Normal(T([[0., 1.]]), T([[1., 2.]])), 1).expand((3,)).log_prob(T([0.1, 0.2]))",
    "D.RelaxedOneHotCategorical(T(0.5), probs=T([0.2, 0.8])).expand((2,)).batch_shape",
    "D.LogNormal(T([0., 1.]), 1.).expand((2, 2)).mean",
    "D.transforms.ExpTransform() == D.transforms.ExpTransform()",
    "D.transforms.AffineTransform(0., 2.).log_abs_det_jacobian(T([1.]), T([2.]))",
    "D.Categorical(T([[0.2, 0.8], [0.5, 0.5]])).sample((3,)).shape",
    "D.Bernoulli(0.3).sample((4,)).dtype",
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_reprs_and_small_results_match_torch(call):
    def run(lib):
        env = {"D": lib.distributions, "T": lambda v: lib.tensor(v)}
        return eval(call, env)  # noqa: S307 - fixed expressions
    same_as_torch(lambda lib: _plain(run(lib)), decimals=5)


def _plain(v):
    return repr(v) if isinstance(v, (ng.distributions.Distribution, ng.dtype,
                                     torch.distributions.Distribution, torch.dtype)) else v


N = 20000
MOMENTS = {
    "Normal": lambda d: d.Normal(_t(ng, [0.3, -1.0]), _t(ng, [0.7, 2.0])),
    "Laplace": lambda d: d.Laplace(_t(ng, [0.3, -1.0]), _t(ng, [0.7, 2.0])),
    "Uniform": lambda d: d.Uniform(_t(ng, [0.0, -1.0]), _t(ng, [1.0, 3.0])),
    "Exponential": lambda d: d.Exponential(_t(ng, [0.5, 2.0])),
    "Gamma": lambda d: d.Gamma(_t(ng, [0.5, 3.0]), _t(ng, [1.0, 2.0])),
    "Beta": lambda d: d.Beta(_t(ng, [0.5, 3.0]), _t(ng, [2.0, 1.0])),
    "LogNormal": lambda d: d.LogNormal(_t(ng, [0.1, -0.5]), _t(ng, [0.3, 0.5])),
    "Poisson": lambda d: d.Poisson(_t(ng, [0.5, 4.0])),
    "Bernoulli": lambda d: d.Bernoulli(_t(ng, [0.2, 0.9])),
    "Binomial": lambda d: d.Binomial(_t(ng, [3, 10]), _t(ng, [0.2, 0.6])),
    "Dirichlet": lambda d: d.Dirichlet(_t(ng, [0.5, 1.0, 2.0])),
    "OneHotCategorical": lambda d: d.OneHotCategorical(_t(ng, [0.2, 0.5, 0.3])),
    "MultivariateNormal": lambda d: d.MultivariateNormal(_t(ng, [0.3, -1.0, 0.0]),
                                                         covariance_matrix=_t(ng, _A)),
}


@pytest.mark.parametrize("name", MOMENTS)
def test_sample_moments(name):
    ng.manual_seed(123)
    dist = MOMENTS[name](ng.distributions)
    draws = dist.sample((N,))
    assert tuple(draws.shape) == (N, *dist.batch_shape, *dist.event_shape)
    assert draws.dtype is ng.float64 and not draws.requires_grad
    x = draws.numpy()
    mean, var = dist.mean.numpy(), dist.variance.numpy()
    # five standard errors of the sample mean, and of the sample variance (generous)
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), 5 * np.sqrt(var / N) + 1e-12)
    np.testing.assert_allclose(x.var(0), var, rtol=0.08, atol=1e-3)
    assert dist.support.check(draws).all()


def test_categorical_samples_follow_the_probabilities():
    ng.manual_seed(0)
    probs = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])
    draws = ng.distributions.Categorical(_t(ng, probs)).sample((N,))
    assert draws.dtype is ng.int64 and tuple(draws.shape) == (N, 2)
    for row in range(2):
        freq = np.bincount(draws.numpy()[:, row], minlength=3) / N
        np.testing.assert_allclose(freq, probs[row], atol=0.02)


def test_mvn_sample_covariance():
    ng.manual_seed(1)
    dist = ng.distributions.MultivariateNormal(_t(ng, [0.0, 1.0, 2.0]), covariance_matrix=_t(ng, _A))
    x = dist.rsample((N,)).numpy()
    np.testing.assert_allclose(np.cov(x.T), _A, atol=0.08)


def test_reparameterized_samples_carry_gradients():
    ng.manual_seed(2)
    loc = _t(ng, [0.5, -1.0]).requires_grad_()
    scale = _t(ng, [2.0, 0.5]).requires_grad_()
    x = ng.distributions.Normal(loc, scale).rsample((3,))
    x.sum().backward()
    eps = (x.detach().numpy() - loc.detach().numpy()) / scale.detach().numpy()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0))
    for make in (lambda: ng.distributions.Laplace(loc, scale),
                 lambda: ng.distributions.Uniform(loc, loc + scale),
                 lambda: ng.distributions.Exponential(scale),
                 lambda: ng.distributions.LogNormal(loc, scale),
                 lambda: ng.distributions.RelaxedOneHotCategorical(_t(ng, 0.5), logits=scale),
                 lambda: ng.distributions.MultivariateNormal(loc, scale_tril=ng.diag_embed(scale)
                                                             if hasattr(ng, "diag_embed") else
                                                             _t(ng, np.eye(2)) * scale)):
        dist = make()
        assert dist.has_rsample
        draw = dist.rsample((4,))
        assert draw.requires_grad and not dist.sample((4,)).requires_grad
        (g,) = ng.autograd.grad(draw.sum(), [scale])
        assert np.isfinite(g.numpy()).all()
    relaxed = ng.distributions.RelaxedOneHotCategorical(_t(ng, 0.5), logits=loc).rsample((5,))
    np.testing.assert_allclose(relaxed.detach().numpy().sum(-1), 1.0, rtol=1e-12)


def test_gamma_implicit_reparameterization_gradient():
    from scipy.special import gammaincinv
    ng.manual_seed(3)
    alpha = _t(ng, [0.4, 1.0, 3.5, 20.0]).requires_grad_()
    x = ng.distributions.Gamma(alpha, 1.0).rsample((50,))
    (g,) = ng.autograd.grad(x.sum(), [alpha], retain_graph=True)
    # per draw: dx/dalpha at the draw's fixed CDF value u, by differencing the inverse CDF
    from scipy.special import gammainc
    a = alpha.detach().numpy()
    u = gammainc(a, x.detach().numpy())
    h = 1e-6 * a
    fd = (gammaincinv(a + h, u) - gammaincinv(a - h, u)) / (2 * h)
    np.testing.assert_allclose(g.numpy(), fd.sum(0), rtol=1e-4)
    # and on average d E[x] / d alpha = 1 / rate (Gamma, Beta, Dirichlet draws through it)
    ng.manual_seed(4)
    draws = ng.distributions.Gamma(alpha, 2.0).rsample((4000,))
    (g,) = ng.autograd.grad(draws.mean(0).sum(), [alpha])
    np.testing.assert_allclose(g.numpy(), 0.5, rtol=0.05)
    c1 = _t(ng, [2.0]).requires_grad_()
    beta = ng.distributions.Beta(c1, 3.0).rsample((4000,))
    (g,) = ng.autograd.grad(beta.mean(), [c1])  # d/da a / (a + b) = b / (a + b)^2 = 0.12
    np.testing.assert_allclose(g.numpy(), 0.12, rtol=0.1)


def test_triangular_solve_and_cholesky_second_derivatives():
    from numbagrad.distributions.linalg_ops import cholesky, solve_triangular
    lower = _t(ng, np.linalg.cholesky(_A)).requires_grad_()
    b = _t(ng, [[0.3, 1.0], [-0.5, 0.2], [1.5, -0.7]]).requires_grad_()
    a = _t(ng, _A).requires_grad_()
    assert ng.autograd.gradcheck(lambda m, r: solve_triangular(m, r, upper=False), (lower, b))
    assert ng.autograd.gradgradcheck(lambda m, r: solve_triangular(m, r, upper=False), (lower, b))
    sym = lambda m: cholesky((m + m.mT) * 0.5)  # noqa: E731 - a symmetric argument
    assert ng.autograd.gradcheck(sym, (a,))
    assert ng.autograd.gradgradcheck(sym, (a,))
