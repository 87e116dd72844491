"""BatchNorm3d, LPPool1d/2d/3d with F.lp_pool*, MaxUnpool1d/2d/3d with F.max_unpool*, and
RReLU with F.rrelu against torch: values, gradients, torch's random stream, errors, reprs."""

import numpy as np
import pytest
from oracle import both, same

import numbagrad as ng

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64"]


def _tol(dtype):
    return 2e-5 if dtype == "float32" else 1e-11


def _grads(lib, data, dtype, fn):
    """fn(x) on a leaf from ``data``; (output, x's gradient of sum(out * w))."""
    x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
    out = fn(lib, x)
    w = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)),
                   dtype=getattr(lib, dtype))
    (out * w).sum().backward()
    return out.detach().numpy(), x.grad.numpy()


def _compare(data, dtype, fn):
    ours, theirs = (_grads(lib, data, dtype, fn) for lib in (ng, torch))
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=_tol(dtype), atol=_tol(dtype))


# ---- BatchNorm3d -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_batchnorm3d_train_then_eval(dtype):
    data = np.random.default_rng(0).normal(size=(3, 2, 2, 3, 2))

    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.BatchNorm3d(2, momentum=0.3).to(getattr(lib, dtype))
        with lib.no_grad():
            m.weight.copy_(lib.tensor([1.5, -0.5]))
            m.bias.copy_(lib.tensor([0.1, 0.2]))
        x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        y = m(x)
        (y * y * lib.arange(y.numel()).reshape(y.shape)).sum().backward()
        m.eval()
        z = m(x * 2)
        return [t.detach().numpy() for t in (y, z, x.grad, m.weight.grad, m.bias.grad,
                                             m.running_mean, m.running_var)]
    ours, theirs = both(run)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4 if dtype == "float32" else 1e-10,
                                   atol=1e-4 if dtype == "float32" else 1e-10)


def test_batchnorm3d_repr_and_bad_input():
    same(lambda lib: repr(lib.nn.BatchNorm3d(4, affine=False)))
    msg = same(lambda lib: str(_raises(lambda: lib.nn.BatchNorm3d(2)(lib.ones(2, 2, 2, 2)))))
    assert "expected 5D input" in msg


def _raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error is the result
        return f"{type(e).__name__}: {e}"
    return None


# ---- LPPool ----------------------------------------------------------------------------------
LP = [
    (1, (2, 3, 7), lambda f, x: f.lp_pool1d(x, 2, 3)),
    (1, (3, 8), lambda f, x: f.lp_pool1d(x, 1.5, 2, stride=3, ceil_mode=True)),
    (2, (2, 2, 5, 6), lambda f, x: f.lp_pool2d(x, 2, (2, 3))),
    (2, (2, 5, 5), lambda f, x: f.lp_pool2d(x, 3, 2, stride=1)),
    (2, (1, 2, 5, 5), lambda f, x: f.lp_pool2d(x, float("inf"), 2)),
    (3, (1, 2, 4, 4, 5), lambda f, x: f.lp_pool3d(x, 2, 2)),
    (3, (2, 3, 4, 5), lambda f, x: f.lp_pool3d(x, 1.0, (1, 2, 2), stride=(1, 1, 2),
                                                ceil_mode=True)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", range(len(LP)))
def test_lp_pool_functional(k, dtype):
    _, shape, call = LP[k]
    # positive inputs for the fractional powers (torch gives nan for negatives, as we do)
    data = np.random.default_rng(k).uniform(0.2, 2.0, size=shape)
    _compare(data, dtype, lambda lib, x: call(lib.nn.functional, x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lp_pool_modules(dtype):
    data = np.random.default_rng(5).uniform(-2, 2, size=(2, 3, 4, 4, 4))
    for make in (lambda nn: nn.LPPool1d(2, 3, stride=1),
                 lambda nn: nn.LPPool2d(2, 2),
                 lambda nn: nn.LPPool3d(2, (2, 1, 2))):
        shaped = data.reshape(2, 3, 64)[..., :10] if "1d" in repr(make(ng.nn)).lower() else \
            data[:, :, 0] if "2d" in repr(make(ng.nn)).lower() else data
        _compare(shaped, dtype, lambda lib, x, make=make: make(lib.nn)(x))


@pytest.mark.parametrize("k", range(4))
def test_lp_pool_reprs(k):
    makes = [lambda nn: nn.LPPool1d(2, 3), lambda nn: nn.LPPool2d(1.5, (2, 3), stride=1,
                                                                  ceil_mode=True),
             lambda nn: nn.LPPool3d(2, 2), lambda nn: nn.LPPool2d(float("inf"), 2)]
    same(lambda lib: repr(makes[k](lib.nn)))


def test_lp_pool_errors():
    msg = same(lambda lib: lib.nn.functional.lp_pool2d(lib.ones(1, 1, 4, 4), 2, 5))
    assert "Output size is too small" in msg


# ---- MaxUnpool -------------------------------------------------------------------------------
UNPOOL = [
    (1, (2, 3, 8), dict(kernel_size=2), {}),
    (1, (3, 9), dict(kernel_size=3, stride=2, padding=1), {}),
    (2, (2, 2, 4, 6), dict(kernel_size=2), {}),
    (2, (2, 5, 5), dict(kernel_size=3, stride=2, padding=1), {}),
    (2, (1, 1, 5, 5), dict(kernel_size=2), dict(output_size=(5, 5))),
    (2, (1, 1, 5, 5), dict(kernel_size=2), dict(output_size=(1, 1, 5, 4))),
    (3, (1, 2, 4, 4, 4), dict(kernel_size=2), {}),
    (3, (2, 4, 5, 4), dict(kernel_size=(1, 2, 2), stride=(1, 2, 1)), dict(output_size=(4, 5, 4))),
]


def _unpool(lib, n, x, pool_kw, extra, module=False):
    F = lib.nn.functional  # noqa: N806 - torch's idiom
    y, idx = getattr(F, f"max_pool{n}d")(x, return_indices=True, **pool_kw)
    if module:
        m = getattr(lib.nn, f"MaxUnpool{n}d")(**pool_kw)
        return m(y, idx, **extra)
    return getattr(F, f"max_unpool{n}d")(y, idx, **pool_kw, **extra)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", range(len(UNPOOL)))
def test_max_unpool(k, dtype):
    n, shape, pool_kw, extra = UNPOOL[k]
    data = np.random.default_rng(k).normal(size=shape)
    _compare(data, dtype, lambda lib, x: _unpool(lib, n, x, pool_kw, extra))
    _compare(data, dtype, lambda lib, x: _unpool(lib, n, x, pool_kw, extra, module=True))


@pytest.mark.parametrize("k", range(3))
def test_max_unpool_reprs(k):
    makes = [lambda nn: nn.MaxUnpool1d(2), lambda nn: nn.MaxUnpool2d(2, stride=1, padding=1),
             lambda nn: nn.MaxUnpool3d((1, 2, 2))]
    same(lambda lib: repr(makes[k](lib.nn)))


def _pooled(lib):
    x = lib.arange(16.0).reshape(1, 1, 4, 4)
    return lib.nn.functional.max_pool2d(x, 2, return_indices=True)


def _one_bad(i, value):
    i = i.clone()
    i[..., -1, 0] = value
    return i


UNPOOL_ERRORS = {
    "float indices": lambda lib, f, y, i: f.max_unpool2d(y, i.float(), 2),
    # one bad index each: with several, torch's threads race to report theirs
    "index out of range": lambda lib, f, y, i: f.max_unpool2d(y, _one_bad(i, 20), 2),
    "negative index": lambda lib, f, y, i: f.max_unpool2d(y, _one_bad(i, -3), 2),
    "shapes differ": lambda lib, f, y, i: f.max_unpool2d(y, i[..., :1], 2),
    "2-d input": lambda lib, f, y, i: f.max_unpool2d(y[0, 0], i[0, 0], 2),
    "integer input": lambda lib, f, y, i: f.max_unpool2d(y.long(), i, 2),
    "1d out of range": lambda lib, f, y, i: f.max_unpool1d(y[0], _one_bad(i[0] % 4, 9), 2),
    "3d input dims": lambda lib, f, y, i: f.max_unpool3d(y[0], i[0], 2),
}
UNPOOL_VALUE_ERRORS = {
    "output_size too big": lambda f, y, i: f.max_unpool2d(y, i, 2, output_size=(9, 9)),
    "output_size length": lambda f, y, i: f.max_unpool2d(y, i, 2, output_size=(5,)),
}


@pytest.mark.parametrize("name", sorted(UNPOOL_ERRORS))
def test_max_unpool_errors(name):
    def run(lib):
        y, i = _pooled(lib)
        return UNPOOL_ERRORS[name](lib, lib.nn.functional, y, i)
    assert isinstance(same(run), str)


@pytest.mark.parametrize("name", sorted(UNPOOL_VALUE_ERRORS))
def test_max_unpool_value_errors(name):
    def run(lib):
        y, i = _pooled(lib)
        return _raises(lambda: UNPOOL_VALUE_ERRORS[name](lib.nn.functional, y, i))
    assert same(run).startswith("ValueError")


# ---- RReLU -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (30, 9)])
def test_rrelu_training_follows_torch_stream(shape, dtype):
    """After manual_seed: the same slopes as torch's (bit for bit), the same gradient, and the
    stream left where torch leaves it."""
    data = np.random.default_rng(3).normal(size=shape)

    def run(lib):
        lib.manual_seed(11)
        x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.rrelu(x, 0.1, 0.45, training=True)
        (y * y).sum().backward()
        return y.detach().numpy(), x.grad.numpy(), lib.rand(4).numpy()
    ours, theirs = both(run)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rrelu_module_train_eval_and_inplace(dtype):
    data = np.random.default_rng(4).normal(size=(4, 5))

    def run(lib):
        lib.manual_seed(2)
        m = lib.nn.RReLU()
        x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        y_train = m(x)
        m.eval()
        y_eval = m(x)
        (y_train.sum() + (y_eval * y_eval).sum()).backward()
        h = x * 1
        m_in = lib.nn.RReLU(0.2, 0.3, inplace=True)
        y_in = m_in(h)
        y_in.sum().backward()
        return (y_train.detach().numpy(), y_eval.detach().numpy(), y_in is h, h._version,
                x.grad.numpy())
    ours, theirs = both(run)
    assert ours[2] is theirs[2] is True and ours[3] == theirs[3] == 1
    for a, b in zip(ours[:2] + ours[4:], theirs[:2] + theirs[4:]):
        np.testing.assert_allclose(a, b, rtol=_tol(dtype), atol=_tol(dtype))


def test_rrelu_reprs_and_errors():
    same(lambda lib: repr(lib.nn.RReLU()))
    same(lambda lib: repr(lib.nn.RReLU(0.1, 0.3, inplace=True)))
    for call in (lambda lib: lib.nn.functional.rrelu(lib.tensor([1, -2]), training=True),
                 lambda lib: lib.nn.functional.rrelu(lib.tensor([1.0, -2]), 0.5, 0.1),
                 lambda lib: lib.nn.functional.rrelu(lib.ones(2, requires_grad=True),
                                                     inplace=True)):
        assert isinstance(same(call), str)


@pytest.mark.parametrize("kw", [{}, {"affine": False, "track_running_stats": False},
                                {"momentum": None, "dtype": "float64"}])
def test_lazy_batchnorm3d(kw):
    """Sized by its first input, then a BatchNorm3d: reprs, shapes, outputs and gradients."""
    data = np.random.default_rng(6).normal(size=(2, 3, 2, 2, 3))

    def run(lib):
        args = {k: getattr(lib, v) if k == "dtype" else v for k, v in kw.items()}
        m = lib.nn.LazyBatchNorm3d(**args)
        before = repr(m)
        x = lib.tensor(data, dtype=args.get("dtype", lib.float32), requires_grad=True)
        y = m(x)
        (y * y * lib.arange(y.numel()).reshape(y.shape)).sum().backward()
        z = m(x + 1)
        return (before, repr(m), type(m).__name__, [tuple(p.shape) for p in m.parameters()],
                y.detach().numpy(), z.detach().numpy(), x.grad.numpy(),
                [b.numpy() for b in m.buffers()])
    ours, theirs = both(run)
    assert ours[:4] == theirs[:4]
    tol = 1e-10 if "dtype" in kw else 1e-4
    for a, b in zip([*ours[4:7], *ours[7]], [*theirs[4:7], *theirs[7]]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (2, 3, 4, 2)])
def test_softmax_family_without_dim_takes_torchs_implicit_dim(shape):
    """nn.Softmax(), nn.LogSoftmax(), nn.Softmin() and F.softmax/log_softmax/softmin without
    ``dim``: torch's deprecated implicit choice (dim 0 of a 0-, 1- or 3-d input, else 1) and
    its warning, not the whole tensor."""
    import warnings
    x = np.arange(int(np.prod(shape)), dtype=float).reshape(shape) / 7
    results = {}
    for lib in (ng, torch):
        t = lib.tensor(x)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outs = [lib.nn.Softmax()(t), lib.nn.LogSoftmax()(t), lib.nn.Softmin()(t),
                    lib.nn.functional.softmax(t), lib.nn.functional.log_softmax(t),
                    lib.nn.functional.softmin(t)]
        results[lib] = ([o.numpy() for o in outs],
                        sorted({str(w.message) for w in caught if "Implicit" in str(w.message)}))
    for a, b in zip(results[ng][0], results[torch][0]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert results[ng][1] == results[torch][1] and results[ng][1]
