"""numbagrad.nn.init against torch.nn.init: gains, fans, errors, version counters and the
deterministic fills exactly; the random schemes statistically (moments and bounds of 100k
samples), plus orthogonality, the QR sign fix and generator reproducibility."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import numbagrad as ng
from numbagrad.nn import init as ng_init

torch = pytest.importorskip("torch")
from torch.nn import init as torch_init  # noqa: E402

LIBS = ((ng, ng_init), (torch, torch_init))
N = 100_000


def both(fn):
    """``fn(lib, init)`` for numbagrad and torch; an exception becomes 'Type: message'."""
    out = []
    for lib, init in LIBS:
        try:
            out.append(fn(lib, init))
        except Exception as e:  # noqa: BLE001 - the error itself is the result compared
            out.append(f"{type(e).__name__}: {e}")
    return out


def same(fn):
    ours, theirs = both(fn)
    assert ours == theirs
    return ours


@pytest.fixture(autouse=True)
def _seeded():
    """Statistical checks are reproducible: each test starts from the same global seed."""
    ng.manual_seed(20240613)


def _np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


# ---- deterministic: gains, fans, errors ------------------------------------------------------
NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu", "gelu",
                  "Relu", ""]


@pytest.mark.parametrize("nl", NONLINEARITIES)
def test_calculate_gain(nl):
    r = same(lambda lib, init: repr(init.calculate_gain(nl)))
    assert "Error" not in r or nl in ("gelu", "Relu", "")


@pytest.mark.parametrize("param", [None, 0.2, 1, 0, -0.5, 3, True, False, "a", [0.1]])
def test_calculate_gain_leaky_relu_param(param):
    same(lambda lib, init: repr(init.calculate_gain("leaky_relu", param)))
    same(lambda lib, init: repr(init.calculate_gain("relu", param)))  # ignored elsewhere


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (4, 3), (2, 3, 5), (6, 2, 3, 3),
                                   (4, 5, 2, 3, 2), (0, 3), (3, 0, 2)])
def test_fan_in_and_fan_out(shape):
    same(lambda lib, init: init._calculate_fan_in_and_fan_out(lib.empty(shape)))
    for mode in ("fan_in", "fan_out", "FAN_OUT", "Fan_In", "fanin"):
        same(lambda lib, init: init._calculate_correct_fan(lib.empty(shape), mode))


ERROR_CASES = {
    "uniform_int": lambda lib, init: init.uniform_(lib.empty(3, dtype=lib.int64)),
    "uniform_int32": lambda lib, init: init.uniform_(lib.empty(3, dtype=lib.int32)),
    "uniform_bool": lambda lib, init: init.uniform_(lib.empty(3, dtype=lib.bool)),
    "normal_int": lambda lib, init: init.normal_(lib.empty(3, dtype=lib.int64)),
    "uniform_bounds": lambda lib, init: init.uniform_(lib.empty(3), 1, 0),
    "uniform_bounds2": lambda lib, init: init.uniform_(lib.empty(3), 1.5, 0.5),
    "uniform_bounds3": lambda lib, init: init.uniform_(lib.empty(3), 1e-5, 0),
    "uniform_bounds4": lambda lib, init: init.uniform_(lib.empty(3), 1e20, 1),
    "uniform_inf": lambda lib, init: init.uniform_(lib.empty(3), -math.inf, 0),
    "uniform_inf_to": lambda lib, init: init.uniform_(lib.empty(3), 0, math.inf),
    "uniform_nan": lambda lib, init: init.uniform_(lib.empty(3), math.nan, 0),
    "uniform_f32_range": lambda lib, init: init.uniform_(lib.empty(3), -3.5e38, 3.5e38),
    "uniform_f32_width": lambda lib, init: init.uniform_(lib.empty(3), -3e38, 3e38),
    "normal_std": lambda lib, init: init.normal_(lib.empty(3), 0, -1),
    "normal_std2": lambda lib, init: init.normal_(lib.empty(3), 0, -0.5),
    "normal_std_nan": lambda lib, init: init.normal_(lib.empty(3), 0, math.nan),
    "eye_3d": lambda lib, init: init.eye_(lib.empty(2, 3, 4)),
    "eye_1d": lambda lib, init: init.eye_(lib.empty(3)),
    "dirac_2d": lambda lib, init: init.dirac_(lib.empty(3, 3)),
    "dirac_groups": lambda lib, init: init.dirac_(lib.empty(6, 4, 3), 4),
    "orthogonal_1d": lambda lib, init: init.orthogonal_(lib.empty(3)),
    "orthogonal_int": lambda lib, init: init.orthogonal_(lib.empty(3, 4, dtype=lib.int64)),
    "sparse_3d": lambda lib, init: init.sparse_(lib.empty(3, 4, 5), 0.5),
    "xavier_1d": lambda lib, init: init.xavier_uniform_(lib.empty(3)),
    "xavier_0d": lambda lib, init: init.xavier_normal_(lib.empty(())),
    "xavier_empty": lambda lib, init: init.xavier_uniform_(lib.empty(0, 0)),
    "xavier_int": lambda lib, init: init.xavier_uniform_(lib.empty(3, 4, dtype=lib.int32)),
    "kaiming_1d": lambda lib, init: init.kaiming_uniform_(lib.empty(3)),
    "kaiming_mode": lambda lib, init: init.kaiming_uniform_(lib.empty(3, 4), mode="fanin"),
    "kaiming_nl": lambda lib, init: init.kaiming_normal_(lib.empty(3, 4), nonlinearity="foo"),
    "kaiming_a": lambda lib, init: init.kaiming_uniform_(lib.empty(3, 4), a="x"),
    "kaiming_int": lambda lib, init: init.kaiming_normal_(lib.empty(3, 4, dtype=lib.int64)),
    "trunc_int": lambda lib, init: init.trunc_normal_(lib.empty(3, 4, dtype=lib.int64)),
    "trunc_int_narrow": lambda lib, init: init.trunc_normal_(lib.empty(3, dtype=lib.int64),
                                                             a=0, b=0.1),
    "trunc_std0": lambda lib, init: init.trunc_normal_(lib.empty(3), std=0),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors_match_torch(case):
    ours = same(ERROR_CASES[case])
    assert isinstance(ours, str) and "Error" in ours


# ---- deterministic fills and version counters ----------------------------------------------
def _version_delta(fn, shape, dtype="float32"):
    def run(lib, init):
        t = lib.empty(shape, dtype=getattr(lib, dtype))
        v = t._version
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(t, init)
        assert out is t
        return t._version - v, tuple(t.shape), str(t.dtype)
    return same(run)


DETERMINISTIC_VERSION_CASES = {
    "uniform_": lambda t, init: init.uniform_(t, -1, 1),
    "normal_": lambda t, init: init.normal_(t, 2, 3),
    "constant_": lambda t, init: init.constant_(t, 0.3),
    "zeros_": lambda t, init: init.zeros_(t),
    "ones_": lambda t, init: init.ones_(t),
    "eye_": lambda t, init: init.eye_(t),
    "xavier_uniform_": lambda t, init: init.xavier_uniform_(t),
    "xavier_normal_": lambda t, init: init.xavier_normal_(t, gain=2.0),
    "kaiming_uniform_": lambda t, init: init.kaiming_uniform_(t, a=math.sqrt(5)),
    "kaiming_normal_": lambda t, init: init.kaiming_normal_(t, mode="fan_out",
                                                            nonlinearity="relu"),
    "orthogonal_": lambda t, init: init.orthogonal_(t, gain=2),
    "sparse_": lambda t, init: init.sparse_(t, 0.3),
    # no draw falls outside [-100, 100] (std 1): torch writes once, never copies back
    "trunc_normal_wide": lambda t, init: init.trunc_normal_(t, a=-100, b=100),
}


@pytest.mark.parametrize("case", list(DETERMINISTIC_VERSION_CASES))
@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (0, 3)])
def test_version_counter_deltas(case, shape):
    if case in ("eye_", "sparse_") or shape != (0, 3):
        _version_delta(DETERMINISTIC_VERSION_CASES[case], shape)


@pytest.mark.parametrize("shape,groups", [((3, 16, 5, 5), 1), ((6, 4, 3), 3), ((4, 4, 3, 3, 3), 2),
                                          ((8, 2, 5), 2)])
def test_dirac_matches_torch(shape, groups):
    _version_delta(lambda t, init: init.dirac_(t, groups), shape)
    same(lambda lib, init: _np(init.dirac_(lib.empty(shape), groups)).tolist())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
def test_deterministic_fills_match_torch(dtype):
    def run(lib, init):
        dt = getattr(lib, dtype)
        return [init.constant_(lib.empty(2, 3, dtype=dt), 2).tolist(),
                init.constant_(lib.empty(2, 3, dtype=dt), 0.75).tolist(),
                init.zeros_(lib.empty(3, dtype=dt)).tolist(),
                init.ones_(lib.empty(2, 2, dtype=dt)).tolist(),
                init.eye_(lib.empty(3, 5, dtype=dt)).tolist(),
                init.eye_(lib.empty(4, 2, dtype=dt)).tolist(),
                str(init.ones_(lib.empty(2, dtype=dt)).dtype)]
    same(run)
    _version_delta(lambda t, init: init.constant_(t, 1), (2, 3), dtype)
    _version_delta(lambda t, init: init.eye_(t), (2, 3), dtype)


def test_trunc_normal_version_counts_the_copy_back():
    # with 100k draws some fall outside [-1, 1] (p > 0.3 branch) or are rejected (uniform
    # proposal branch): torch writes, then copies the resampled values back
    _version_delta(lambda t, init: init.trunc_normal_(t, a=-1, b=1), (N,))
    _version_delta(lambda t, init: init.trunc_normal_(t, a=0, b=0.5), (N,))


def test_kaiming_zero_element_is_a_noop_with_torchs_warning():
    def run(lib, init):
        t = lib.empty(0, 4)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            init.kaiming_uniform_(t)
            init.kaiming_normal_(t)
        return t._version, [(x.category.__name__, str(x.message), x.filename == __file__)
                            for x in w]
    same(run)


def test_trunc_normal_far_mean_warns():
    def run(lib, init):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            init.trunc_normal_(lib.empty(100), mean=5, std=1, a=-2, b=2)
        return [(x.category.__name__, str(x.message)) for x in w]
    assert len(same(run)) == 1


def test_deprecated_aliases_warn():
    def run(lib, init):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            init.uniform(lib.empty(3))
            init.xavier_normal(lib.empty(3, 4))
            init.constant(lib.empty(3), 1.0)
        return [(x.category.__name__, str(x.message), x.filename == __file__) for x in w]
    assert len(same(run)) == 3


def test_backward_after_init_fails_like_torch():
    def run(lib, init):
        w = lib.ones(3, 4, requires_grad=True)
        y = (w * w).sum()
        init.normal_(w)
        assert w.is_leaf and w.requires_grad and w.grad_fn is None
        y.backward()
    msg = same(run)
    assert "modified by an inplace operation" in msg and "is at version 1" in msg


def test_backward_after_two_bumps_reports_the_current_version():
    def orth(lib, init):
        w = lib.ones(3, 4, requires_grad=True)
        y = (w * w).sum()
        init.orthogonal_(w)  # copy_ then mul_: two bumps
        y.backward()
    assert "is at version 2" in same(orth)


def test_init_inside_grad_mode_records_nothing():
    def run(lib, init):
        w = lib.empty(5, 3, requires_grad=True)
        for f in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
                  init.orthogonal_, init.trunc_normal_, init.zeros_, init.eye_):
            assert f(w) is w
        return w.is_leaf, w.requires_grad, w.grad_fn
    assert same(run) == (True, True, None)


def test_writes_through_views_to_the_base():
    def run(lib, init):
        base = lib.zeros(4, 6)
        init.orthogonal_(base[:, :3])
        init.ones_(base[:, 4])
        a = _np(base)
        return base._version, bool(np.all(a[:, 3] == 0)), bool(np.all(a[:, 4] == 1)), \
            bool(np.allclose(a[:, :3].T @ a[:, :3], np.eye(3), atol=1e-5))
    assert same(run) == (3, True, True, True)


# ---- statistics --------------------------------------------------------------------------------
def _moments_ok(x, mean, std, tol=0.02):
    """mean within 5 standard errors, std within ``tol`` relative."""
    assert abs(x.mean() - mean) < 5 * std / math.sqrt(x.size) + 1e-12, (x.mean(), mean)
    assert abs(x.std() - std) < tol * std, (x.std(), std)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_distribution(dtype):
    t = ng.empty(N, dtype=getattr(ng, dtype))
    ng_init.uniform_(t, -3, 5)
    x = _np(t)
    assert t.dtype is getattr(ng, dtype)
    assert x.min() >= -3 and x.max() < 5
    _moments_ok(x, 1.0, 8 / math.sqrt(12))
    assert stats.kstest(x, stats.uniform(-3, 8).cdf).pvalue > 1e-4
    ng_init.uniform_(t)
    x = _np(t)
    assert x.min() >= 0 and x.max() < 1


def test_uniform_float32_never_reaches_the_upper_bound():
    b = 1 + 2.0 ** -20  # 8 float32 steps above 1: rounding would hit b without care
    t = ng_init.uniform_(ng.empty(N), 1.0, b)
    x = t.numpy()
    assert x.min() >= 1 and x.max() < np.float32(b)
    assert len(np.unique(x)) == 8


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_distribution(dtype):
    t = ng_init.normal_(ng.empty(N, dtype=getattr(ng, dtype)), 2.0, 0.5)
    x = _np(t)
    _moments_ok(x, 2.0, 0.5)
    assert stats.kstest(x, stats.norm(2.0, 0.5).cdf).pvalue > 1e-4
    assert np.all(_np(ng_init.normal_(ng.empty(10), 1.5, 0.0)) == 1.5)


def _truncnorm(mean, std, a, b):
    return stats.truncnorm((a - mean) / std, (b - mean) / std, loc=mean, scale=std)


@pytest.mark.parametrize("mean,std,a,b", [(0, 1, -2, 2),      # normal resampling branch
                                          (0, 1, -1, 1),
                                          (0.5, 2, -1, 0),     # uniform-proposal branch
                                          (0, 1, 2, 3),        # tail, mean outside [a, b]
                                          (0, 0.02, -2, 2)])   # the usual ViT call
def test_trunc_normal_distribution(mean, std, a, b):
    t = ng_init.trunc_normal_(ng.empty(N, dtype=ng.float64), mean, std, a, b)
    x = _np(t)
    ref = _truncnorm(mean, std, a, b)
    assert x.min() >= a and x.max() <= b
    _moments_ok(x, ref.mean(), ref.std())
    assert stats.kstest(x, ref.cdf).pvalue > 1e-4


def test_trunc_normal_float32_bounds():
    x = ng_init.trunc_normal_(ng.empty(N), 0, 1, -0.3, 0.7).numpy()
    assert x.dtype == np.float32 and x.min() >= np.float32(-0.3) and x.max() <= np.float32(0.7)


@pytest.mark.parametrize("shape,gain", [((200, 500), 1.0), ((500, 200), 0.5),
                                        ((40, 25, 5, 5), math.sqrt(2))])
def test_xavier(shape, gain):
    fan_in, fan_out = ng_init._calculate_fan_in_and_fan_out(ng.empty(shape))
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    x = _np(ng_init.xavier_uniform_(ng.empty(shape), gain=gain)).ravel()
    bound = math.sqrt(3) * std
    assert x.min() >= -bound and x.max() < bound and x.max() > 0.99 * bound
    _moments_ok(x, 0.0, std)
    _moments_ok(_np(ng_init.xavier_normal_(ng.empty(shape), gain=gain)).ravel(), 0.0, std)


@pytest.mark.parametrize("shape", [(200, 500), (500, 200), (64, 16, 10, 10), (40, 100, 25)])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nl,a", [("leaky_relu", 0), ("leaky_relu", math.sqrt(5)),
                                  ("relu", 0), ("tanh", 0), ("linear", 0)])
def test_kaiming(shape, mode, nl, a):
    fan = ng_init._calculate_correct_fan(ng.empty(shape), mode)
    std = ng_init.calculate_gain(nl, a) / math.sqrt(fan)
    x = _np(ng_init.kaiming_uniform_(ng.empty(shape), a=a, mode=mode, nonlinearity=nl)).ravel()
    bound = math.sqrt(3) * std
    assert x.min() >= -bound and x.max() < bound and x.max() > 0.99 * bound
    _moments_ok(x, 0.0, std)
    x = _np(ng_init.kaiming_normal_(ng.empty(shape), a=a, mode=mode, nonlinearity=nl)).ravel()
    _moments_ok(x, 0.0, std)


@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3), (4, 3, 2, 2), (16, 4, 3), (1, 5),
                                   (5, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_orthogonal(shape, dtype):
    gain = 1.7
    t = ng_init.orthogonal_(ng.empty(shape, dtype=getattr(ng, dtype)), gain=gain)
    assert tuple(t.shape) == shape and t.dtype is getattr(ng, dtype)
    q = _np(t).reshape(shape[0], -1) / gain
    small = q.T @ q if q.shape[0] >= q.shape[1] else q @ q.T
    assert np.allclose(small, np.eye(len(small)), atol=1e-5)


def test_orthogonal_is_haar_distributed():
    """With torch's sign fix Q is Haar: every entry is symmetric about 0. Without it,
    LAPACK's Householder QR makes q[0, 0] negative every time."""
    gen = np.random.default_rng(1)
    t = ng.empty(4, 4, dtype=ng.float64)
    first = np.array([_np(ng_init.orthogonal_(t, generator=gen))[0, 0] for _ in range(2000)])
    assert abs(first.mean()) < 0.05  # sd of q00 is 1/2: 5 standard errors is 0.056
    assert 0.4 < (first > 0).mean() < 0.6


def test_sparse():
    rows, cols, sparsity, std = 400, 250, 0.3, 0.05
    x = _np(ng_init.sparse_(ng.empty(rows, cols), sparsity, std=std))
    assert np.all((x == 0).sum(axis=0) == math.ceil(sparsity * rows))
    _moments_ok(x[x != 0], 0.0, std)


# ---- generators ------------------------------------------------------------------------------
RANDOM_INITS = [
    lambda t, g: ng_init.uniform_(t, -1, 2, generator=g),
    lambda t, g: ng_init.normal_(t, 1, 2, generator=g),
    lambda t, g: ng_init.trunc_normal_(t, 0, 1, -0.5, 0.5, generator=g),
    lambda t, g: ng_init.xavier_uniform_(t, generator=g),
    lambda t, g: ng_init.xavier_normal_(t, generator=g),
    lambda t, g: ng_init.kaiming_uniform_(t, generator=g),
    lambda t, g: ng_init.kaiming_normal_(t, generator=g),
    lambda t, g: ng_init.orthogonal_(t, generator=g),
    lambda t, g: ng_init.sparse_(t, 0.5, generator=g),
]


@pytest.mark.parametrize("k", range(len(RANDOM_INITS)))
def test_generators(k):
    fn = RANDOM_INITS[k]
    a = fn(ng.empty(6, 5), np.random.default_rng(7)).numpy()
    b = fn(ng.empty(6, 5), np.random.default_rng(7)).numpy()
    c = fn(ng.empty(6, 5), np.random.default_rng(8)).numpy()
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    ng.manual_seed(3)  # the default is numbagrad's global generator
    d = fn(ng.empty(6, 5), None).numpy()
    e = fn(ng.empty(6, 5), None).numpy()
    ng.manual_seed(3)
    assert np.array_equal(fn(ng.empty(6, 5), None).numpy(), d) and not np.array_equal(d, e)


def test_bad_generator():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        ng_init.uniform_(ng.empty(3), generator=42)
