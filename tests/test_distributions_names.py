"""torch.distributions' names: its per-distribution modules (torch.distributions.normal ...)
resolve to the package's objects, and the transforms, registries and distributions added
with them behave like torch's."""

import importlib
import pickle
import types

import numpy as np
import pytest

import numbagrad
import numbagrad.distributions as nd
from numbagrad.distributions import submodules

torch = pytest.importorskip("torch")
td = torch.distributions

# the modules re-exporting the package's names (constraints, kl, transforms are their own)
TORCH_MODULES = sorted(n for n in dir(td) if isinstance(getattr(td, n), types.ModuleType)
                       and n not in ("constraints", "kl", "transforms", "utils", "distribution",
                                     "multivariate_normal"))


def _ours(module_name):
    try:
        return importlib.import_module(f"numbagrad.distributions.{module_name}")
    except ImportError:
        return None


@pytest.mark.parametrize("name", TORCH_MODULES)
def test_submodule_names_are_the_packages(name):
    ours = _ours(name)
    theirs = getattr(td, name)
    if ours is None:
        # only the modules of distributions we lack are missing
        assert not any(hasattr(nd, n) for n in theirs.__all__), name
        return
    assert ours is getattr(nd, name)
    for attr in theirs.__all__:
        if hasattr(nd, attr):
            assert getattr(ours, attr) is getattr(nd, attr), (name, attr)
            assert attr in getattr(ours, "__all__", [attr])
    for attr in dir(theirs):
        if attr.startswith("_") or not hasattr(ours, attr):
            continue
        obj, ref = getattr(ours, attr), getattr(theirs, attr)
        if hasattr(nd, attr):
            assert obj is getattr(nd, attr), (name, attr)
        elif isinstance(ref, types.ModuleType):
            # torch -> numbagrad, torch.distributions.constraints -> ours ...
            want = ref.__name__.replace("torch", "numbagrad", 1)
            assert obj.__name__ in (want, "math") or want.endswith(".functional"), (name, attr)
        elif callable(ref):
            assert callable(obj) and getattr(obj, "__name__", attr) == getattr(
                ref, "__name__", attr), (name, attr)
        else:
            assert obj == ref or (obj != obj and ref != ref), (name, attr)


def test_from_import_and_pickle():
    from numbagrad.distributions.normal import Normal
    from numbagrad.distributions.studentT import StudentT

    assert Normal is nd.Normal and StudentT is nd.StudentT
    d = pickle.loads(pickle.dumps(Normal(numbagrad.tensor([0.5]), 2.0)))
    assert isinstance(d, nd.Normal)
    np.testing.assert_array_equal(d.scale.numpy(), [2.0])
    # pickle names a class where it lives; the re-exporting module is not needed to load it
    assert importlib.import_module(Normal.__module__).Normal is Normal


def test_table_matches_torch():
    # the table's __all__ is torch's, so the modules follow torch as it moves
    for name, (exported, _) in submodules.TABLE.items():
        assert exported.split() == list(getattr(td, name).__all__), name


# ---- transforms -------------------------------------------------------------------------------
DTYPES = [np.float32, np.float64]


def _pair(arr, dtype, grad=True):
    arr = np.asarray(arr, dtype=dtype)
    return (numbagrad.tensor(arr, requires_grad=grad), torch.tensor(arr, requires_grad=grad))


def _close(ours, theirs, dtype, what=""):
    tol = 1e-5 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol, err_msg=what)


# name -> (builder of the transform from a distributions module, input maker(rng))
TRANSFORMS = {
    "tanh": (lambda d: d.TanhTransform(), lambda r: r.standard_normal((3, 4)) * 2),
    "softplus": (lambda d: d.SoftplusTransform(), lambda r: r.standard_normal((3, 4)) * 3),
    "softmax": (lambda d: d.SoftmaxTransform(), lambda r: r.standard_normal((3, 4))),
    "stick_breaking": (lambda d: d.StickBreakingTransform(), lambda r: r.standard_normal((3, 4))),
    "lower_cholesky": (lambda d: d.LowerCholeskyTransform(),
                       lambda r: r.standard_normal((2, 3, 3))),
    "positive_definite": (lambda d: d.PositiveDefiniteTransform(),
                          lambda r: r.standard_normal((2, 3, 3))),
    "cat": (lambda d: d.CatTransform([d.ExpTransform(), d.AffineTransform(1.0, 2.0),
                                      d.TanhTransform()], dim=-1, lengths=[1, 2, 1]),
            lambda r: r.standard_normal((3, 4))),
    "cat_event": (lambda d: d.CatTransform([d.IndependentTransform(d.ExpTransform(), 1),
                                            d.TanhTransform()], dim=0, lengths=[2, 2]),
                  lambda r: r.standard_normal((4, 3))),
    "stack": (lambda d: d.StackTransform([d.ExpTransform(), d.TanhTransform(),
                                          d.SoftplusTransform()], dim=1),
              lambda r: r.standard_normal((2, 3))),
    "independent": (lambda d: d.IndependentTransform(d.SigmoidTransform(), 1),
                    lambda r: r.standard_normal((3, 4))),
    "reshape": (lambda d: d.ReshapeTransform((2, 3), (3, 2)),
                lambda r: r.standard_normal((4, 2, 3))),
    "corr_cholesky": (lambda d: d.CorrCholeskyTransform(), lambda r: r.standard_normal((2, 6))),
    "cdf": (lambda d: d.CumulativeDistributionTransform(d.Normal(0.5, 2.0)),
            lambda r: r.standard_normal((3, 4))),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_matches_torch(name, dtype):
    build, make = TRANSFORMS[name]
    ours, theirs = build(nd), build(td)
    x, tx = _pair(make(np.random.default_rng(0)), dtype)
    y, ty = ours(x), theirs(tx)
    _close(y, ty, dtype, "forward")
    assert tuple(y.shape) == tuple(ty.shape)
    assert ours.bijective == theirs.bijective
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    assert tuple(ours.forward_shape(tuple(x.shape))) == tuple(theirs.forward_shape(tx.shape))
    assert tuple(ours.inverse_shape(tuple(y.shape))) == tuple(theirs.inverse_shape(ty.shape))
    # the inverse of torch's own output (PositiveDefinite's needs a positive-definite input)
    y2, ty2 = _pair(ty.detach().numpy(), dtype)
    _close(ours.inv(y2), theirs.inv(ty2), dtype, "inverse")
    loss, tloss = y.sum(), ty.sum()
    if theirs.bijective:
        ladj, tladj = ours.log_abs_det_jacobian(x, y), theirs.log_abs_det_jacobian(tx, ty)
        assert tuple(ladj.shape) == tuple(tladj.shape)
        _close(ladj, tladj, dtype, "log_abs_det_jacobian")
        loss, tloss = loss + ladj.sum(), tloss + tladj.sum()
    loss.backward()
    tloss.backward()
    _close(x.grad, tx.grad, dtype, "gradient")
    inv_out = ours.inv(y2)
    inv_out.sum().backward()
    theirs.inv(ty2).sum().backward()
    _close(y2.grad, ty2.grad, dtype, "gradient of the inverse")


def test_transform_errors_match_torch():
    for D in (nd, td):
        with pytest.raises(ValueError, match="different numbers of elements"):
            D.ReshapeTransform((2, 3), (4,))
        with pytest.raises(ValueError, match="Shape mismatch"):
            D.ReshapeTransform((2, 3), (3, 2)).forward_shape((4, 3, 2))
        with pytest.raises(ValueError, match="Too few dimensions"):
            D.StickBreakingTransform().forward_shape(())
        with pytest.raises(ValueError, match="not a flattened lower-diagonal number"):
            D.CorrCholeskyTransform().forward_shape((2, 5))
        with pytest.raises(ValueError, match="Input is not square"):
            D.CorrCholeskyTransform().inverse_shape((2, 3))
        with pytest.raises(AssertionError, match="must match transforms"):
            D.CatTransform([D.ExpTransform()], lengths=[1, 2])
        with pytest.raises(AssertionError, match="must be Transform instances"):
            D.StackTransform([D.ExpTransform(), 1.0])
    for D, lib in ((nd, numbagrad), (td, torch)):
        with pytest.raises(AssertionError, match="must equal length"):
            D.CatTransform([D.ExpTransform(), D.TanhTransform()], dim=0)(lib.zeros(3))
        with pytest.raises(AssertionError, match="out of range"):
            D.StackTransform([D.ExpTransform()], dim=2)(lib.zeros(1, 2))


def test_transform_equality_and_identity():
    assert nd.TanhTransform() == nd.TanhTransform() and nd.TanhTransform() != nd.ExpTransform()
    assert isinstance(nd.identity_transform, nd.ComposeTransform)
    assert nd.identity_transform.parts == [] and td.identity_transform.parts == []
    assert nd.transforms.identity_transform is nd.identity_transform
    for name in td.transforms.__all__:
        assert getattr(nd.transforms, name) is getattr(nd, name), name
        if name != "identity_transform":
            assert issubclass(getattr(nd, name), nd.Transform), name


# ---- biject_to / transform_to -----------------------------------------------------------------
CONSTRAINTS = {
    "positive": lambda c: c.positive, "nonnegative": lambda c: c.nonnegative,
    "greater_than": lambda c: c.greater_than(2.0), "less_than": lambda c: c.less_than(1.0),
    "unit_interval": lambda c: c.unit_interval, "interval": lambda c: c.interval(-1.0, 3.0),
    "half_open": lambda c: c.half_open_interval(0.0, 2.0), "simplex": lambda c: c.simplex,
    "real": lambda c: c.real, "real_vector": lambda c: c.real_vector,
    "independent": lambda c: c.independent(c.positive, 1),
    "lower_cholesky": lambda c: c.lower_cholesky, "positive_definite": lambda c: c.positive_definite,
    "cat": lambda c: c.cat([c.positive, c.interval(0.0, 1.0)], -1, [2, 2]),
    "stack": lambda c: c.stack([c.positive, c.real, c.unit_interval], -1),
    "corr_cholesky": lambda c: c.corr_cholesky,
}


def _names(t):
    parts = getattr(t, "parts", None)
    return [type(t).__name__] + ([] if parts is None else [_names(p) for p in parts])


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_registry_matches_torch(registry, name):
    c, tc = CONSTRAINTS[name](nd.constraints), CONSTRAINTS[name](td.constraints)
    try:
        theirs = getattr(td, registry)(tc)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e)):
            getattr(nd, registry)(c)
        return
    ours = getattr(nd, registry)(c)
    assert _names(ours) == _names(theirs)
    shape = {"lower_cholesky": (2, 3, 3), "positive_definite": (2, 3, 3), "stack": (2, 3),
             "corr_cholesky": (2, 6)}.get(
        name, (2, 4))
    x, tx = _pair(np.random.default_rng(1).standard_normal(shape), np.float64, grad=False)
    y, ty = ours(x), theirs(tx)
    _close(y, ty, np.float64)
    assert np.all(np.asarray(c.check(y))) and bool(tc.check(ty).all())


def test_registry_register_and_errors():
    reg = nd.constraint_registry.ConstraintRegistry()
    with pytest.raises(TypeError, match="Expected constraint"):
        reg.register(3, lambda c: None)
    with pytest.raises(NotImplementedError, match="Cannot transform _Real constraints"):
        reg(nd.constraints.real)
    reg.register(nd.constraints.real)(lambda c: nd.ExpTransform())
    assert isinstance(reg(nd.constraints.real), nd.ExpTransform)
    assert nd.constraint_registry.biject_to is nd.biject_to


# ---- ExponentialFamily ------------------------------------------------------------------------
def test_exponential_family_tree_matches_torch():
    for name in td.__all__:
        ref = getattr(td, name)
        if isinstance(ref, type) and issubclass(ref, td.Distribution) and hasattr(nd, name):
            assert issubclass(getattr(nd, name), nd.ExponentialFamily) == issubclass(
                ref, td.ExponentialFamily), name
    assert nd.exp_family.ExponentialFamily is nd.ExponentialFamily


FAMILIES = {
    "Normal": ([0.3, -1.0], [0.5, 2.0]), "Exponential": ([0.5, 3.0],),
    "Gamma": ([0.7, 2.5], [1.5, 0.3]), "Beta": ([0.7, 2.5], [1.5, 0.3]),
    "Bernoulli": ([0.2, 0.9],), "Dirichlet": ([[0.5, 1.5, 3.0], [2.0, 1.0, 0.7]],),
    "ContinuousBernoulli": ([0.2, 0.4995],), "Poisson": ([0.5, 4.0],),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_exponential_family_entropy_and_kl(name, dtype):
    def make(lib, dists, scale=1.0):
        return getattr(dists, name)(*[lib.tensor(np.asarray(a, dtype) * scale) for a in FAMILIES[name]])

    p, tp = make(numbagrad, nd), make(torch, td)
    try:
        want = td.ExponentialFamily.entropy(tp)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            nd.ExponentialFamily.entropy(p)
    else:
        _close(nd.ExponentialFamily.entropy(p), want, dtype, "entropy")
    q, tq = make(numbagrad, nd, 0.9), make(torch, td, 0.9)
    _close(nd.kl_more._kl_expfamily_expfamily(p, q), td.kl._kl_expfamily_expfamily(tp, tq),
           dtype, "kl")


def test_exponential_family_kl_of_different_families():
    with pytest.raises(NotImplementedError, match="different exponential families"):
        nd.kl_more._kl_expfamily_expfamily(nd.Normal(0.0, 1.0), nd.Exponential(1.0))


# ---- GeneralizedPareto, VonMises, LogisticNormal, LowRankMultivariateNormal, straight-through
_R = np.random.default_rng(3)
# name -> (constructor's argument arrays, of which those that get gradients are all)
DISTRIBUTIONS = {
    "GeneralizedPareto": ([0.1, 0.0, 1.0, -0.5], [2.0, 1.0, 0.5, 1.5], [0.4, 0.0, -0.5, 1.2]),
    "VonMises": ([0.3, -1.0, 2.5], [0.5, 5.0, 1e-3]),
    "LogisticNormal": ([[0.3, -1.0, 0.2], [0.0, 1.0, -2.0]], [[0.5, 2.0, 1.0], [1.0, 0.3, 0.7]]),
    "LowRankMultivariateNormal": (_R.standard_normal((2, 3)), _R.standard_normal((3, 2)),
                                  _R.uniform(0.5, 2.0, (2, 3))),
}
PROPERTIES = ["mean", "mode", "variance", "stddev", "scale_tril", "covariance_matrix",
              "precision_matrix"]


def _call(f):
    try:
        return f()
    except (NotImplementedError, AttributeError) as e:
        return type(e)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_new_distribution_matches_torch(name, dtype):
    arrays = [np.asarray(a, dtype) for a in DISTRIBUTIONS[name]]
    pairs = [_pair(a, dtype) for a in arrays]
    if name == "GeneralizedPareto" and dtype == np.float64:
        # torch's fails in double (isclose against a float32 zero): its float32 results are
        # the reference, to float32's tolerance
        pairs = [(p, _pair(a, np.float32)[1]) for (p, _), a in zip(pairs, arrays)]
    ours_dtype, dtype = dtype, (np.float32 if name == "GeneralizedPareto" else dtype)
    ours = getattr(nd, name)(*[p[0] for p in pairs])
    theirs = getattr(td, name)(*[p[1] for p in pairs])
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    # the same draws from the same seed: torch's random stream in torch's order
    numbagrad.manual_seed(7)
    torch.manual_seed(7)
    draw, tdraw = ours.sample((5,)), theirs.sample((5,))
    if ours_dtype == dtype:  # the stream of one dtype
        _close(draw, tdraw, dtype, "sample")
    value = numbagrad.tensor(draw.numpy())
    tvalue = torch.tensor(draw.numpy().astype(dtype))
    lp, tlp = ours.log_prob(value), theirs.log_prob(tvalue)
    _close(lp, tlp, dtype, "log_prob")
    lp.sum().backward()
    tlp.sum().backward()
    for (p, tp) in pairs:
        _close(p.grad, tp.grad, dtype, "gradient of log_prob")
    for prop in PROPERTIES:
        got, want = _call(lambda: getattr(ours, prop)), _call(lambda: getattr(theirs, prop))
        if isinstance(want, type):
            assert got is want, prop
        else:
            _close(got, want, dtype, prop)
    got, want = _call(ours.entropy), _call(theirs.entropy)
    if isinstance(want, type):
        assert got is want, "entropy"
    else:
        _close(got, want, dtype, "entropy")
    expanded, texpanded = ours.expand((3,) + tuple(ours.batch_shape)), theirs.expand(
        (3,) + tuple(theirs.batch_shape))
    assert tuple(expanded.batch_shape) == tuple(texpanded.batch_shape)
    _close(expanded.log_prob(value[0]), texpanded.log_prob(tvalue[0]), dtype, "expanded")


def test_generalized_pareto_cdf_icdf_support():
    args = [np.asarray(a, np.float32) for a in DISTRIBUTIONS["GeneralizedPareto"]]
    ours = nd.GeneralizedPareto(*[numbagrad.tensor(a) for a in args])
    theirs = td.GeneralizedPareto(*[torch.tensor(a) for a in args])
    u = np.linspace(0.05, 0.95, 4, dtype=np.float32)
    _close(ours.icdf(numbagrad.tensor(u)), theirs.icdf(torch.tensor(u)), np.float32, "icdf")
    x = theirs.icdf(torch.tensor(u))
    _close(ours.cdf(numbagrad.tensor(x.numpy())), theirs.cdf(x), np.float32, "cdf")
    _close(ours.support.upper_bound, theirs.support.upper_bound, np.float32, "support")
    assert ours.rsample().requires_grad is False


def test_one_hot_straight_through_matches_torch():
    probs = np.asarray([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    p, tp = _pair(probs, np.float64)
    ours, theirs = nd.OneHotCategoricalStraightThrough(p), td.OneHotCategoricalStraightThrough(tp)
    assert issubclass(nd.OneHotCategoricalStraightThrough, nd.OneHotCategorical)
    assert ours.has_rsample and theirs.has_rsample
    numbagrad.manual_seed(2)
    torch.manual_seed(2)
    s, ts = ours.rsample((4,)), theirs.rsample((4,))
    _close(s, ts, np.float64, "rsample")
    weights = np.arange(3.0)
    (s * numbagrad.tensor(weights)).sum().backward()
    (ts * torch.tensor(weights)).sum().backward()
    _close(p.grad, tp.grad, np.float64, "straight-through gradient")


def test_new_distribution_errors_match_torch():
    for D, lib in ((nd, numbagrad), (td, torch)):
        with pytest.raises(ValueError, match="cov_factor must be a batch of matrices"):
            D.LowRankMultivariateNormal(lib.zeros(3), lib.zeros(2, 2), lib.ones(3))
        with pytest.raises(ValueError, match="cov_diag must be a batch of vectors"):
            D.LowRankMultivariateNormal(lib.zeros(3), lib.zeros(3, 2), lib.ones(2))
        with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
            D.LowRankMultivariateNormal(lib.zeros(()), lib.zeros(3, 2), lib.ones(3))
        with pytest.raises(ValueError, match="concentration"):
            D.VonMises(lib.zeros(2), -lib.ones(2), validate_args=True)
        with pytest.raises(ValueError, match="scale"):
            D.GeneralizedPareto(0.0, -1.0, 0.5, validate_args=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lkj_cholesky_matches_torch(dtype):
    c, tc = _pair([0.5, 2.0], dtype)
    ours, theirs = nd.LKJCholesky(3, c), td.LKJCholesky(3, tc)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    numbagrad.manual_seed(4)
    torch.manual_seed(4)
    draw, tdraw = ours.sample((3,)), theirs.sample((3,))
    _close(draw, tdraw, dtype, "sample")
    assert np.all(nd.constraints.corr_cholesky.check(draw))
    # at the same values: log_prob near 0 magnifies the draws' last-bit differences
    lp, tlp = ours.log_prob(numbagrad.tensor(tdraw.numpy())), theirs.log_prob(tdraw)
    _close(lp, tlp, dtype, "log_prob")
    lp.sum().backward()
    tlp.sum().backward()
    _close(c.grad, tc.grad, dtype, "gradient of log_prob")
    assert tuple(ours.expand((4, 2)).batch_shape) == tuple(theirs.expand((4, 2)).batch_shape)
    for D in (nd, td):
        with pytest.raises(ValueError, match="greater than or equal to 2"):
            D.LKJCholesky(1, 1.0)
