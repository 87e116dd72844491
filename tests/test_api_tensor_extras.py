"""The in-place product forms (addmm_, addr_, ...), addr, real/angle, renorm, index_reduce,
cov/corrcoef, gradient, isin, histograms, geqrf/orgqr/ormqr and the small torch functions,
against torch 2.13: values in float32 and float64, gradients, node names and errors."""

import array
import warnings

import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X35 = RNG.standard_normal((3, 5))
X32 = RNG.standard_normal((3, 2))
S42 = RNG.standard_normal((4, 2))
A43 = RNG.standard_normal((4, 3))


def _run(lib, fn, arrays, dtype, grad):
    ts = [lib.tensor(a.astype(dtype), requires_grad=grad and a.dtype.kind == "f")
          for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, *ts)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    name = outs[0].grad_fn.name() if outs[0].grad_fn is not None else None
    grads = []
    if grad and outs[0].requires_grad:
        seeds = [lib.tensor(np.linspace(-1, 1, o.numel()).reshape(tuple(o.shape)).astype(dtype))
                 for o in outs if o.requires_grad]
        lib.autograd.backward([o for o in outs if o.requires_grad], seeds)
        grads = [t.grad.numpy() for t in ts if t.requires_grad]
    return [o.detach().numpy() for o in outs], grads, name


def check(fn, *arrays, grad=True, dtypes=(np.float32, np.float64)):
    """``fn(lib, *tensors)`` on numbagrad and torch: values, gradients of a weighted sum of
    the results, and the node's name, equal (float32 to its precision)."""
    for dt in dtypes:
        theirs = _run(torch, fn, arrays, dt, grad)
        ours = _run(ng, fn, arrays, dt, grad)
        tol = 1e-5 if dt == np.float32 else 1e-11
        for a, b in zip(ours[0], theirs[0]):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
        assert len(ours[1]) == len(theirs[1])
        for a, b in zip(ours[1], theirs[1]):
            np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol * 10, equal_nan=True)
        assert ours[2] == theirs[2]


# ---- in-place products and addr -------------------------------------------------------------
PRODUCTS = {
    "addmm_": (lambda lib, c, a, b: (c * 1).addmm_(a, b, beta=0.5, alpha=2),
               (X32, RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2)))),
    "addbmm_": (lambda lib, c, a, b: (c * 1).addbmm_(a, b, alpha=3),
                (X32, RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 2)))),
    "baddbmm_": (lambda lib, c, a, b: (c * 1).baddbmm_(a, b, beta=2),
                 (RNG.standard_normal((2, 3, 2)), RNG.standard_normal((2, 3, 4)),
                  RNG.standard_normal((2, 4, 2)))),
    "addmv_": (lambda lib, c, a, b: (c * 1).addmv_(a, b, beta=-1),
               (X32[:, 0].copy(), X32, RNG.standard_normal(2))),
    "torch.addmv_": (lambda lib, c, a, b: lib.addmv_(c * 1, a, b, alpha=0.5),
                     (X32[:, 0].copy(), X32, RNG.standard_normal(2))),
    "addr_": (lambda lib, c, a, b: (c * 1).addr_(a, b, beta=2, alpha=-1),
              (X32, RNG.standard_normal(3), RNG.standard_normal(2))),
    "addr": (lambda lib, c, a, b: lib.addr(c, a, b, beta=0.5),
             (X32[:1].copy(), RNG.standard_normal(3), RNG.standard_normal(2))),
    "Tensor.addr": (lambda lib, c, a, b: c.addr(a, b), (X32, RNG.standard_normal(3),
                                                      RNG.standard_normal(2))),
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_products_match_torch(name):
    fn, arrays = PRODUCTS[name]
    check(fn, *arrays)


def test_inplace_products_bump_the_version_and_refuse_leaves():
    for lib in (ng, torch):
        c = lib.tensor(X32, requires_grad=True) * 1
        v = c._version
        c.addmm_(lib.ones(3, 4, dtype=lib.float64), lib.ones(4, 2, dtype=lib.float64))
        assert c._version == v + 1
    for method, args in (("addmm_", ((3, 4), (4, 2))), ("addr_", ((3,), (2,))),
                         ("addmv_", ((2, 2), (2,)))):
        def call(lib, method=method, args=args):
            leaf = lib.ones(*(3, 2) if method != "addmv_" else (2,), requires_grad=True)
            return getattr(leaf, method)(*(lib.ones(*s) for s in args))
        same_as_torch(call)


def test_saved_value_changed_in_place_fails_backward_as_torch():
    def fn(lib):
        c = lib.tensor(X32, requires_grad=True) * 1
        y = c.exp()
        c.addmm_(lib.ones(3, 4, dtype=lib.float64), lib.ones(4, 2, dtype=lib.float64))
        y.sum().backward()
    same_as_torch(fn)


@pytest.mark.parametrize("call", [
    lambda lib: lib.randn(1, 3, 4).baddbmm_(lib.randn(2, 3, 2), lib.randn(2, 2, 4)),
    lambda lib: lib.randn(1).addmv_(lib.randn(4, 2), lib.randn(2)),
    lambda lib: lib.randn(1, 4).addr_(lib.randn(3), lib.randn(4)),
    lambda lib: lib.randn(4).addr_(lib.randn(3), lib.randn(4)),
    lambda lib: lib.addr(lib.randn(3, 4), lib.randn(3, 1), lib.randn(4)),
    lambda lib: lib.addr(lib.randn(3, 4), lib.randn(3), lib.randn(5)),
    lambda lib: lib.addr(lib.ones(3, 4, dtype=lib.int64), lib.arange(3), lib.arange(4), beta=0.5),
    lambda lib: lib.addr(lib.ones(3, 4, dtype=lib.int64), lib.arange(3), lib.arange(4), beta=2),
])
def test_product_errors_and_integers_match_torch(call):
    same_as_torch(call)


# ---- real, angle, renorm ----------------------------------------------------------------------
def test_real_is_the_tensor_itself():
    for lib in (ng, torch):
        x = lib.tensor(X32, requires_grad=True)
        assert lib.real(x) is x and x.real is x
    same_as_torch(lambda lib: lib.real(lib.tensor([1, 2])))


@pytest.mark.parametrize("requires_grad", [False, True])
def test_setting_real_copies_as_torch(requires_grad):
    def fn(lib):
        x = lib.zeros(3, requires_grad=requires_grad)
        x.real = lib.ones(3)
        return x
    same_as_torch(fn)


def test_angle_matches_torch():
    x = np.array([[-1.5, 0.0, 2.0], [-0.0, -3.0, 1.0]])
    check(lambda lib, t: lib.angle(t), x)
    check(lambda lib, t: t.angle() * t, x)
    same_as_torch(lambda lib: lib.angle(lib.tensor([1, -2, 0])))
    same_as_torch(lambda lib: lib.angle(lib.tensor([float("nan"), -1.0])), nan_equal=True)


@pytest.mark.parametrize("p,dim,maxnorm", [(2, 0, 1.0), (1, 1, 0.5), (float("inf"), 0, 0.5),
                                           (3, -1, 0.7), (2, 1, 100.0)])
def test_renorm_matches_torch(p, dim, maxnorm):
    check(lambda lib, t: lib.renorm(t, p, dim, maxnorm), X35)
    check(lambda lib, t: (t * 1).renorm_(p, dim, maxnorm), X35, dtypes=(np.float64,))


def test_renorm_double_backward_matches_torch():
    def fn(lib):
        x = lib.tensor(X35, requires_grad=True)
        (g,) = lib.autograd.grad((lib.renorm(x, 2, 0, 1.0) ** 2).sum(), x, create_graph=True)
        return lib.autograd.grad(g.sin().sum(), x)
    same_as_torch(fn, decimals=9)


@pytest.mark.parametrize("call", [
    lambda lib: lib.renorm(lib.randn(3, 4), -1, 0, 1.0),
    lambda lib: lib.renorm(lib.randn(3, 4), 2, 0, -1.0),
    lambda lib: lib.renorm(lib.randn(3), 2, 0, 1.0),
])
def test_renorm_errors_match_torch(call):
    same_as_torch(call)


# ---- index_reduce -----------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_torch(how, include_self):
    check(lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor([0, 2, 0, 1]), s, how,
                                         include_self=include_self), X32, S42)
    check(lambda lib, x, s: (x * 1).index_reduce_(1, lib.tensor([1, 0, 1]), s, how,
                                               include_self=include_self),
          X32, np.round(RNG.standard_normal((3, 3))), dtypes=(np.float64,))


def test_index_reduce_prod_with_zeros_and_integers_match_torch():
    s = S42.copy()
    s[0, 0] = s[2, 1] = s[1, 1] = 0
    check(lambda lib, x, t: x.index_reduce(0, lib.tensor([0, 2, 0, 1]), t, "prod"), X32, s)
    same_as_torch(lambda lib: lib.arange(6).view(3, 2).index_reduce(
        0, lib.tensor([0, 2, 0, 1]), lib.arange(8).view(4, 2), "mean", include_self=False))


@pytest.mark.parametrize("how", ["prod", "mean", "amax"])
def test_index_reduce_double_backward_matches_torch(how):
    def fn(lib):
        x = lib.tensor(X32, requires_grad=True)
        s = lib.tensor(S42, requires_grad=True)
        y = lib.index_reduce(x, 0, lib.tensor([0, 2, 0, 1]), s, how)
        gx, gs = lib.autograd.grad((y * y).sum(), (x, s), create_graph=True)
        return lib.autograd.grad((gx.sin().sum() + gs.cos().sum()), (x, s))
    same_as_torch(fn, decimals=9)


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0, 1]), lib.ones(2, 2), "sum"),
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0.0, 1.0]), lib.ones(2, 2), "prod"),
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0, 1]), lib.ones(2, 2).double(), "prod"),
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0, 1, 2]), lib.ones(2, 2), "prod"),
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0, 5]), lib.ones(2, 2), "prod"),
    lambda lib: lib.ones(3, 2, requires_grad=True).index_reduce_(0, lib.tensor([0]), lib.ones(1, 2),
                                                             "amax"),
])
def test_index_reduce_errors_match_torch(call):
    same_as_torch(call)


# ---- cov, corrcoef, gradient ------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.cov(x),
    lambda lib, x: lib.cov(x[0]),
    lambda lib, x: x.cov(correction=0),
    lambda lib, x: lib.cov(x, fweights=lib.tensor([1, 2, 3, 1, 1]),
                       aweights=lib.tensor([0.5, 1, 2, 1, 0.1], dtype=x.dtype)),
    lambda lib, x: lib.cov(x, aweights=lib.tensor([0.5, 1, 2, 1, 0.1], dtype=x.dtype), correction=2),
    lambda lib, x: lib.corrcoef(x),
    lambda lib, x: x.corrcoef(),
    lambda lib, x: lib.corrcoef(x[0]),
])
def test_cov_and_corrcoef_match_torch(fn):
    check(fn, X35)


@pytest.mark.parametrize("call", [
    lambda lib: lib.cov(lib.arange(6).view(2, 3)),
    lambda lib: lib.cov(lib.randn(2, 1)),
    lambda lib: lib.cov(lib.randn(2, 2, 2)),
    lambda lib: lib.cov(lib.randn(2, 3), fweights=lib.tensor([1.0, 2, 3])),
    lambda lib: lib.cov(lib.randn(2, 3), aweights=lib.tensor([1, 2, 3])),
    lambda lib: lib.cov(lib.randn(2, 3), fweights=lib.tensor([1, -2, 3])),
    lambda lib: lib.cov(lib.randn(2, 3), fweights=lib.tensor([1, 2])),
    lambda lib: lib.cov(lib.randn(2, 3), fweights=lib.tensor([[1, 2, 1]])),
    lambda lib: lib.corrcoef(lib.randn(2, 3, 4)),
])
def test_cov_errors_and_edge_cases_match_torch(call):
    same_as_torch(call, nan_equal=True)


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.gradient(x),
    lambda lib, x: lib.gradient(x, spacing=2.0, dim=1, edge_order=2),
    lambda lib, x: lib.gradient(x, spacing=(2.0, 3.0)),
    lambda lib, x: lib.gradient(x, spacing=[lib.tensor([0.0, 1, 3], dtype=x.dtype)], dim=0,
                            edge_order=2),
    lambda lib, x: lib.gradient(x, spacing=[lib.tensor([0.0, 1, 3], dtype=x.dtype),
                                        lib.tensor([0.0, 1, 3, 3.5, 5], dtype=x.dtype)]),
])
def test_gradient_matches_torch(fn):
    check(fn, X35)


@pytest.mark.parametrize("call", [
    lambda lib: lib.gradient(lib.tensor([1.0, 4, 9, 16]), edge_order=3),
    lambda lib: lib.gradient(lib.tensor([[1.0, 4]])),
    lambda lib: lib.gradient(lib.ones(2, 3), spacing=[1.0, 2.0, 3.0]),
])
def test_gradient_errors_match_torch(call):
    same_as_torch(call)


# ---- isin, histograms, nonzero_static ---------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.isin(lib.tensor([1, 2, 3]), lib.tensor([2, 5])),
    lambda lib: lib.isin(lib.tensor([1.0, 2, 3]), 2, invert=True),
    lambda lib: lib.isin(2, lib.tensor([2, 5])),
    lambda lib: lib.isin(lib.tensor([1.0, 2, 3]), lib.tensor([3, 1]), assume_unique=True),
    lambda lib: lib.isin(lib.tensor([1.0, 2, 3]), lib.tensor([True])),
    lambda lib: lib.nonzero_static(lib.tensor([[1, 0], [0, 3]]), size=3),
    lambda lib: lib.tensor([[1, 0], [0, 3]]).nonzero_static(size=1, fill_value=7),
    lambda lib: lib.nonzero_static(lib.tensor([1, 0, 2]), size=-1),
    lambda lib: lib.nonzero_static(lib.tensor(5), size=2),
])
def test_isin_and_nonzero_static_match_torch(call):
    same_as_torch(call)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.histogram(x, 4),
    lambda lib, x: x.histogram(3, range=(-1.0, 1.0), weight=x.abs(), density=True),
    lambda lib, x: lib.histogram(x, lib.tensor([-1.0, 0, 0.5, 2], dtype=x.dtype)),
    lambda lib, x: lib.histogram(x[0, :1], 3),
    lambda lib, x: lib.histogramdd(x[:, :2], [2, 3]),
    lambda lib, x: lib.histogramdd(x[:, :2], 2, range=[-1.0, 1.0, -2.0, 2.0], density=True),
    lambda lib, x: lib.histogramdd(x[:, :2], [lib.tensor([-3.0, 0, 3], dtype=x.dtype),
                                          lib.tensor([-2.0, 2], dtype=x.dtype)]),
])
def test_histograms_match_torch(call, dtype):
    def fn(lib):
        out = call(lib, lib.tensor(X35.astype(dtype)))
        return type(out).__name__, repr(out)[:22], [out[0], out[1]]
    same_as_torch(fn, decimals=6)


@pytest.mark.parametrize("call", [
    lambda lib: lib.histogram(lib.tensor([1, 2, 3]), 3),
    lambda lib: lib.histogram(lib.tensor([1.0, 2, 3]), 3, range=(3.0, 1.0)),
    lambda lib: lib.histogram(lib.tensor([1.0, 2, 3]), -1),
    lambda lib: lib.histogram(lib.tensor([1.0, 2, 3]), 2, weight=lib.tensor([1.0, 2])),
    lambda lib: lib.histogram(lib.tensor([1.0, 2, 3]), lib.tensor([1.0, 2], dtype=lib.float64)),
    lambda lib: lib.histogramdd(lib.tensor([1.0, 2]), 2),
    lambda lib: lib.histogram(lib.tensor([1.0, 2, 3], requires_grad=True), 2).hist.sum().backward(),
])
def test_histogram_errors_match_torch(call):
    same_as_torch(call)


def test_histogram_records_torchs_not_implemented_node():
    same_as_torch(lambda lib: repr(lib.histogram(lib.tensor([1.0, 2, 3], requires_grad=True), 2)))


# ---- geqrf, orgqr, ormqr ----------------------------------------------------------------------
def _reflectors(a):
    qr, tau = torch.geqrf(torch.tensor(a))
    return qr.numpy(), tau.numpy()


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_geqrf_matches_torch(shape):
    a = RNG.standard_normal(shape)
    check(lambda lib, t: lib.geqrf(t), a, grad=False)
    same_as_torch(lambda lib: repr(lib.geqrf(lib.tensor(a))).split("(")[0])


def test_geqrf_backward_raises_as_torch():
    same_as_torch(lambda lib: lib.geqrf(lib.tensor(A43, requires_grad=True))[0].sum().backward())
    same_as_torch(lambda lib: lib.geqrf(lib.randn(3)))
    same_as_torch(lambda lib: lib.geqrf(lib.arange(6).view(2, 3)))


def test_orgqr_matches_torch():
    qr, tau = _reflectors(A43)
    check(lambda lib, a, t: lib.orgqr(a, t), qr, tau)
    check(lambda lib, a, t: a.orgqr(input2=t), qr, tau, dtypes=(np.float64,))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("wide", [False, True])
def test_ormqr_matches_torch(left, transpose, wide):
    qr, tau = _reflectors(A43.T.copy() if wide else A43)
    rows = qr.shape[0]
    other = RNG.standard_normal((rows, 2) if left else (2, rows))
    check(lambda lib, a, t, c: lib.ormqr(a, t, c, left=left, transpose=transpose), qr, tau, other)


def test_ormqr_and_cov_double_backward_match_torch():
    qr, tau = _reflectors(A43)
    other = RNG.standard_normal((4, 2))

    def ormqr_twice(lib):
        a, t, c = (lib.tensor(v, requires_grad=True) for v in (qr, tau, other))
        grads = lib.autograd.grad((lib.ormqr(a, t, c) ** 2).sum(), (a, t, c), create_graph=True)
        return lib.autograd.grad(sum(g.sin().sum() for g in grads), (a, t, c))

    def cov_twice(lib):
        x = lib.tensor(X35, requires_grad=True)
        (g,) = lib.autograd.grad((lib.cov(x) ** 2).sum(), x, create_graph=True)
        return lib.autograd.grad(g.sin().sum(), x)
    same_as_torch(ormqr_twice, decimals=8)
    same_as_torch(cov_twice, decimals=9)


@pytest.mark.parametrize("call", [
    lambda lib: lib.ormqr(lib.randn(3, 2), lib.randn(2), lib.randn(4, 2)),
    lambda lib: lib.ormqr(lib.randn(3, 2), lib.randn(3), lib.randn(3, 2)),
    lambda lib: lib.ormqr(lib.randn(3), lib.randn(3), lib.randn(3, 2)),
    lambda lib: lib.ormqr(lib.randn(3, 2), lib.randn(2, dtype=lib.float64), lib.randn(3, 2)),
    lambda lib: lib.ormqr(lib.randn(4, 3, 2), lib.randn(4, 2), lib.randn(3, 2)),
    lambda lib: lib.orgqr(lib.randn(2, 3), lib.randn(2)),
])
def test_ormqr_errors_match_torch(call):
    same_as_torch(call)


# ---- shapes, resize, subclasses ---------------------------------------------------------------
def test_split_with_sizes_matches_torch():
    check(lambda lib, x: lib.split_with_sizes(x, [1, 4], 1), X35)
    check(lambda lib, x: x.split_with_sizes([2, 1]), X35)
    same_as_torch(lambda lib: lib.split_with_sizes(lib.arange(6), [2, 3]))


def test_resize_and_resize_as_match_torch():
    check(lambda lib, x: x.resize(5, 3), X35)
    check(lambda lib, x: x.resize_as(lib.ones(15)), X35)
    same_as_torch(lambda lib: lib.ones(2, 3, requires_grad=True).resize(4))
    same_as_torch(lambda lib: lib.resize_as_(lib.arange(5.0), lib.ones(2, 2)))
    same_as_torch(lambda lib: lib.zeros(5).resize_as_(lib.ones(2, 2)))
    same_as_torch(lambda lib: lib.ones(2, requires_grad=True).resize_as_(lib.ones(3)))


def test_as_subclass_shares_data_and_graph():
    for lib in (ng, torch):
        x = lib.tensor(X32, requires_grad=True) * 1
        p = x.as_subclass(lib.nn.Parameter)
        assert type(p) is lib.nn.Parameter and p.grad_fn.name() == "AliasBackward0"
        x.detach().add_(1)
        np.testing.assert_array_equal(p.detach().numpy(), x.detach().numpy())
    same_as_torch(lambda lib: lib.ones(2).as_subclass(int))


# ---- torch-namespace in-place forms and small functions ---------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.clip_(lib.tensor([-1.0, 0.5, 2.0]), -0.1, 0.1),
    lambda lib: lib.index_put_(lib.zeros(4), (lib.tensor([0, 2]),), lib.tensor([1.0, 2.0])),
    lambda lib: lib.index_put_(lib.zeros(4), (lib.tensor([0, 0]),), lib.tensor([1.0, 2.0]), True),
    lambda lib: lib.put(lib.zeros(2, 2), lib.tensor([3, 0]), lib.tensor([5.0, 6.0])),
    lambda lib: lib.is_inference(lib.ones(2)),
    lambda lib: lib.get_device(lib.ones(2)),
    lambda lib: lib.detach_(lib.ones(2, requires_grad=True)[:1] * 1).requires_grad,
    lambda lib: lib.detach_(lib.ones(2, requires_grad=True)),
])
def test_namespace_forms_match_torch(call):
    same_as_torch(call)


def test_put_and_clip_gradients_match_torch():
    check(lambda lib, x, s: lib.put(x, lib.tensor([5, 0]), s, accumulate=True), X32, X32[0].copy())
    check(lambda lib, x: lib.clip_(x * 1, -0.3, 0.3), X32)


@pytest.mark.parametrize("call", [
    lambda lib: lib.range(0, 3),
    lambda lib: lib.range(1, 2, 0.25, dtype=lib.float64),
    lambda lib: lib.range(5, 0, -2),
    lambda lib: lib.range(0, 3, -1),
    lambda lib: lib.empty_permuted((2, 3, 4), (0, 2, 1)).stride(),
    lambda lib: lib.empty_permuted((2, 3, 4), (0, 2, 1), dtype=lib.float64).shape,
    lambda lib: lib.empty_permuted((2, 3, 4), (0, 2)),
])
def test_factories_match_torch(call):
    same_as_torch(call)


@pytest.mark.parametrize("count,offset", [(-1, 0), (2, 4), (5, 0), (-1, 17), (-1, 3), (0, 0)])
def test_frombuffer_matches_torch(count, offset):
    def fn(lib):
        return lib.frombuffer(array.array("f", [1, 2, 3, 4]), dtype=lib.float32, count=count,
                              offset=offset)
    same_as_torch(fn)


def test_frombuffer_of_an_empty_buffer_fails_as_torch():
    same_as_torch(lambda lib: lib.frombuffer(bytearray(), dtype=lib.float32, count=2))


def test_frombuffer_shares_the_buffer():
    buf = array.array("d", [1, 2, 3])
    t = ng.frombuffer(buf, dtype=ng.float64)
    buf[1] = 7.0
    assert t.tolist() == [1.0, 7.0, 3.0]


def test_to_dlpack_round_trips_through_torch():
    x = ng.tensor(X32)
    np.testing.assert_array_equal(torch.from_dlpack(ng.to_dlpack(x)).numpy(), X32)


def test_set_anomaly_enabled_matches_torch():
    for lib in (ng, torch):
        try:
            lib.set_anomaly_enabled(True, False)
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            lib.set_anomaly_enabled(True)
            assert lib.is_anomaly_check_nan_enabled()
        finally:
            lib.set_anomaly_enabled(False)
        assert not lib.is_anomaly_enabled()


def test_anomaly_mode_module_has_torchs_switches():
    ours, theirs = ng.autograd.anomaly_mode, torch.autograd.anomaly_mode
    names = {n for n in dir(theirs) if not n.startswith("_") and n not in ("torch", "warnings")}
    assert names <= set(dir(ours))
    assert ours.set_detect_anomaly is ng.autograd.set_detect_anomaly


def test_vmap_and_default_generator_are_the_existing_objects():
    assert ng.vmap is ng.func.vmap
    assert ng.default_generator is ng.manual_seed(3)
    ng.default_generator.manual_seed(5)
    a = ng.randn(3)
    torch.manual_seed(5)
    np.testing.assert_array_equal(a.numpy(), torch.randn(3).numpy())
    out = ng.vmap(lambda r: r.sum())(ng.tensor(X32))
    np.testing.assert_allclose(out.numpy(), X32.sum(1))


def test_replace_all_batch_norm_modules_matches_torch():
    def fn(lib):
        model = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3),
                                  lib.nn.Sequential(lib.nn.BatchNorm1d(3, affine=False)))
        out = lib.func.replace_all_batch_norm_modules_(model)
        bns = [m for m in model.modules() if isinstance(m, lib.nn.BatchNorm1d)]
        return out is model, [(m.running_mean, m.running_var, m.num_batches_tracked,
                               m.track_running_stats) for m in bns]
    same_as_torch(fn)


@pytest.mark.parametrize("call", [
    "x.abs_(out=o)", "x.sin_(out=o)", "x.clamp_min_(0.5, out=o)", "x.addcmul_(x, x, out=o)",
    "x.tril_(0, out=o)", "x.index_fill_(0, lib.tensor([0]), 2.0, out=o)"])
def test_in_place_forms_refuse_out(call):
    """An in-place form writes into self: ``out=`` is torch's TypeError, and neither tensor
    changes."""
    for lib in (ng, torch):
        x = lib.ones(2, 2) * 0.25
        o = lib.zeros(2, 2)
        # (torch's abs_ and sin_ say they take no keyword arguments: ours name out=)
        with pytest.raises(TypeError, match="out" if lib is ng else ""):
            eval(call, {"x": x, "o": o, "lib": lib})  # noqa: S307 - the test's own calls
        assert x.tolist() == [[0.25, 0.25], [0.25, 0.25]] and o.tolist() == [[0, 0], [0, 0]]


@pytest.mark.parametrize("call", ["numel(t)", "numel(input=t)", "numel(3)", "numel(t, 1)"])
def test_numel_takes_torchs_arguments(call):
    def run(lib):
        t = lib.ones(2, 3)
        try:
            return eval(f"lib.{call}", {"lib": lib, "t": t})
        except TypeError as e:
            return type(e), str(e).split(" but ")[0]
    assert run(ng) == run(torch)


def test_true_divide_in_place_as_torch():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        out = y.true_divide_(lib.tensor([2.0, 4.0, 8.0]))
        out.sum().backward()
        return out is y, type(y.grad_fn).__name__, y.tolist(), x.grad.tolist()
    assert run(ng) == run(torch)


@pytest.mark.parametrize("call", ["argmax(t)", "argmax(input=t)", "argmax(t, 1)",
                                  "argmin(t, dim=0, keepdim=True)", "argmin(t, axis=1)",
                                  "argmax(t, 1, keepdims=True)", "argmin(input=t, dim=1)",
                                  "argmax([1.0, 2.0])"])
def test_argmax_argmin_take_torchs_arguments(call):
    def run(lib):
        t = lib.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
        try:
            return eval(f"lib.{call}", {"lib": lib, "t": t}).tolist()
        except TypeError as e:
            return type(e), str(e)
    assert run(ng) == run(torch)
