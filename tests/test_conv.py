"""Convolutions, pooling and their modules against torch: values, input/weight/bias gradients,
grad_fn names, float32/float64, option combinations, errors, second derivatives, reprs."""

import math
import warnings

import numpy as np
import pytest
from oracle import same

import numbagrad as ng
from numbagrad.core import tape as tape_mod

torch = pytest.importorskip("torch")
TF = torch.nn.functional
F = ng.nn.functional

DTYPES = [np.float32, np.float64]


def _tol(dtype):
    return dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-11)


def _leaves(lib, arrays):
    return [None if a is None else lib.tensor(a, requires_grad=True) for a in arrays]


def _compare(fn, arrays, dtype, seed=0, out_index=None):
    """fn(lib, *tensors) in both libraries: value, dtype, grad_fn name and every gradient."""
    rng = np.random.default_rng(seed)
    arrays = [None if a is None else a.astype(dtype) for a in arrays]
    results = []
    g = None
    for lib in (torch, ng):
        xs = _leaves(lib, arrays)
        out = fn(lib, *xs)
        if out_index is not None:
            out = out[out_index]
        if g is None:
            g = rng.standard_normal(tuple(out.shape)).astype(dtype)
        out.backward(lib.tensor(g))
        results.append((out, [None if x is None else x.grad for x in xs]))
    (out_t, grads_t), (out_n, grads_n) = results
    tol = _tol(dtype)
    assert out_n.dtype.__repr__() == repr(out_t.dtype)
    assert tuple(out_n.shape) == tuple(out_t.shape)
    np.testing.assert_allclose(out_n.detach().numpy(), out_t.detach().numpy(), **tol)
    assert out_n.grad_fn.name() == out_t.grad_fn.name()
    for mine, theirs in zip(grads_n, grads_t):
        assert (mine is None) == (theirs is None)
        if theirs is not None:
            assert mine.numpy().dtype == theirs.numpy().dtype
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), **tol)
    return out_n


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, shape)


# ---- convolutions ----------------------------------------------------------------------------
CONV2D = [
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {}),
    ((2, 3, 7, 6), (4, 3, 3, 3), False, {"padding": 1}),
    ((1, 4, 9, 8), (6, 2, 3, 2), True, {"stride": 2, "padding": (1, 0), "groups": 2}),
    ((2, 2, 9, 9), (3, 2, 2, 3), True, {"stride": (2, 1), "dilation": (2, 3), "padding": 2}),
    ((2, 4, 5, 5), (4, 1, 3, 3), True, {"groups": 4, "padding": "same"}),
    ((1, 2, 6, 5), (2, 2, 4, 2), True, {"padding": "same", "dilation": (1, 2)}),
    ((2, 3, 6, 6), (5, 3, 1, 1), True, {}),
    ((2, 3, 6, 6), (5, 3, 1, 1), False, {"stride": 2}),
    ((2, 3, 5, 5), (2, 3, 5, 5), True, {"padding": "valid"}),
    ((0, 3, 5, 5), (2, 3, 3, 3), True, {}),
    ((3, 6, 6), (2, 3, 3, 3), True, {"stride": 1, "padding": 1}),  # unbatched: SqueezeBackward1
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,ws,bias,kw", CONV2D)
def test_conv2d(xs, ws, bias, kw, dtype):
    arrays = [_rand(*xs), _rand(*ws, seed=1), _rand(ws[0], seed=2) if bias else None]
    _compare(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, **kw), arrays, dtype)


CONV1D = [
    ((2, 3, 9), (4, 3, 3), True, {}),
    ((2, 4, 11), (6, 2, 4), False, {"stride": 3, "padding": 2, "dilation": 2, "groups": 2}),
    ((1, 2, 8), (3, 2, 2), True, {"padding": "same"}),
    ((3, 9), (2, 3, 3), True, {"padding": (1,)}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,ws,bias,kw", CONV1D)
def test_conv1d(xs, ws, bias, kw, dtype):
    arrays = [_rand(*xs), _rand(*ws, seed=1), _rand(ws[0], seed=2) if bias else None]
    _compare(lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b, **kw), arrays, dtype)


TRANSPOSED = [
    ("conv_transpose2d", (2, 4, 3, 4), (4, 3, 3, 3), True, {}),
    ("conv_transpose2d", (1, 4, 3, 3), (4, 1, 2, 3), True,
     {"stride": (2, 3), "padding": 1, "output_padding": (1, 2), "groups": 2}),
    ("conv_transpose2d", (2, 2, 4, 4), (2, 2, 3, 3), False, {"dilation": 2, "padding": 2}),
    ("conv_transpose1d", (2, 3, 5), (3, 2, 3), True, {"stride": 2, "output_padding": 1}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,xs,ws,bias,kw", TRANSPOSED)
def test_conv_transpose(name, xs, ws, bias, kw, dtype):
    nb = ws[1] * kw.get("groups", 1)
    arrays = [_rand(*xs), _rand(*ws, seed=1), _rand(nb, seed=2) if bias else None]
    _compare(lambda lib, x, w, b: getattr(lib.nn.functional, name)(x, w, b, **kw), arrays,
             dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_big_nodes_run_the_batch_in_parallel_chunks(dtype):
    # 8 x 16 x 16 x 16 outputs: a big node (its own kernel, called from Python) with
    # enough work for the prange chunks, in the node's own dtype
    arrays = [_rand(8, 3, 16, 16), _rand(16, 3, 3, 3, seed=1), _rand(16, seed=2)]
    _compare(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1), arrays, dtype)
    arrays = [_rand(8, 4, 18, 18), _rand(16, 2, 3, 3, seed=1), None]
    _compare(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=1, groups=2),
             arrays, dtype)


def test_every_node_on_the_big_path(monkeypatch):
    monkeypatch.setattr(tape_mod, "BIG", 0)
    arrays = [_rand(2, 4, 7, 6), _rand(6, 2, 3, 3, seed=1), _rand(6, seed=2)]
    for dtype in DTYPES:
        _compare(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2, padding=1,
                                                              groups=2), arrays, dtype)


def test_bias_without_grad_and_next_functions():
    x = ng.randn(1, 2, 5, 5, requires_grad=True)
    w = ng.randn(3, 2, 3, 3, requires_grad=True)
    out = F.conv2d(x, w)
    names = [None if f is None else f.name() for f, _ in out.grad_fn.next_functions]
    assert names == ["torch::autograd::AccumulateGrad", "torch::autograd::AccumulateGrad", None]
    out = F.conv2d(x.detach(), w, ng.zeros(3))
    out.sum().backward()
    assert x.grad is None and w.grad is not None


def test_integer_convolution_and_no_grad():
    x = np.arange(2 * 3 * 5 * 5).reshape(2, 3, 5, 5) % 7 - 3
    w = np.arange(4 * 3 * 2 * 2).reshape(4, 3, 2, 2) % 5 - 2
    ours = F.conv2d(ng.tensor(x), ng.tensor(w), stride=2)
    theirs = TF.conv2d(torch.tensor(x), torch.tensor(w), stride=2)
    assert ours.dtype is ng.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with ng.no_grad():
        out = F.conv2d(ng.randn(1, 1, 4, 4, requires_grad=True), ng.randn(1, 1, 2, 2))
    assert out.grad_fn is None and not out.requires_grad


def test_string_padding_takes_a_bias_of_another_dtype_for_double_input():
    # torch's non-oneDNN path converts the bias; its gradient comes back in its own dtype
    arrays = [_rand(2, 3, 6, 6), _rand(4, 3, 3, 3, seed=1), _rand(4, seed=2)]
    grads = []
    for lib in (torch, ng):
        x = lib.tensor(arrays[0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor(arrays[1], dtype=lib.float64, requires_grad=True)
        b = lib.tensor(arrays[2], dtype=lib.float32, requires_grad=True)
        out = lib.nn.functional.conv2d(x, w, b, padding="same")
        assert out.grad_fn.name() == "ConvolutionBackward0"
        out.sum().backward()
        grads.append((out.detach().numpy(), b.grad.numpy(), x.grad.numpy()))
    for mine, theirs in zip(grads[1], grads[0]):
        assert mine.dtype == theirs.dtype
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)


def _call_err(fn):
    def run(lib):
        return tuple(fn(lib, lib.nn.functional).shape)
    return run


def _t(lib, *shape, dtype=None):
    return lib.ones(*shape, dtype=dtype or lib.float32)


CONV_ERRORS = [
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 1, 3, 3)),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3)),
    lambda lib, f: f.conv2d(_t(lib, 8, 8), _t(lib, 16, 3, 3, 3)),
    lambda lib, f: f.conv2d(_t(lib, 1, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3)),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 9, 9)),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3), stride=2,
                            padding="same"),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3), padding="foo"),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3), padding=-1),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3), stride=0),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3), dilation=0),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 1, 3, 3), groups=2),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 4, 1, 3, 3), groups=3),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 2, 1, 3, 3), groups=3),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 1, 3, 3), groups=0),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3), _t(lib, 15)),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3), _t(lib, 16, 1)),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3, dtype=lib.float64)),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8, dtype=lib.float64), _t(lib, 16, 3, 3, 3)),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3),
                            _t(lib, 16, dtype=lib.float64)),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3),
                            _t(lib, 16, dtype=lib.float64), padding="valid"),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3), stride=(1, 2, 3)),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 16, 3, 3, 3), padding=(1, 2, 3)),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 6, 1, 3, 3, 3), padding="same"),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8), _t(lib, 6, 3, 3, 3), padding="same",
                            stride=(1, 1, 1)),
    lambda lib, f: f.conv2d(_t(lib, 8), _t(lib, 6, 3, 3, 3), padding="same"),
    lambda lib, f: f.conv1d(_t(lib, 2, 3, 8), _t(lib, 16, 3, 3, 3)),
    lambda lib, f: f.conv1d(_t(lib, 2, 3, 8), _t(lib, 16, 4, 3)),
    lambda lib, f: f.conv1d(_t(lib, 2, 3, 8, dtype=lib.float64), _t(lib, 4, 3, 3)),
    lambda lib, f: f.conv_transpose2d(_t(lib, 2, 3, 8, 8), _t(lib, 4, 3, 3, 3)),
    lambda lib, f: f.conv_transpose2d(_t(lib, 2, 3, 8, 8), _t(lib, 3, 3, 3, 3), _t(lib, 4)),
    lambda lib, f: f.conv_transpose2d(_t(lib, 2, 3, 8, 8), _t(lib, 3, 3, 3, 3),
                                      output_padding=1),
    lambda lib, f: f.conv_transpose2d(_t(lib, 2, 3, 8, 8), _t(lib, 3, 3, 3, 3), stride=2,
                                      output_padding=2),
    lambda lib, f: f.conv_transpose2d(_t(lib, 2, 3, 8, 8), _t(lib, 3, 3, 3, 3), groups=2),
    lambda lib, f: f.conv_transpose2d(_t(lib, 2, 3, 8, 8), _t(lib, 3, 3, 3, 3),
                                      padding="same"),
    lambda lib, f: f.conv_transpose1d(_t(lib, 2, 3, 8), _t(lib, 3, 3, 3), output_padding=1),
    lambda lib, f: f.conv2d(_t(lib, 2, 3, 8, 8, dtype=lib.float64),
                            _t(lib, 4, 3, 3, 3, dtype=lib.float64), _t(lib, 4), padding="same"),
]


@pytest.mark.parametrize("k", range(len(CONV_ERRORS)))
def test_conv_errors_match_torch(k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(_call_err(CONV_ERRORS[k]))


def test_same_padding_with_an_even_kernel_warns_once_like_torch():
    from numbagrad.ops.nn import conv_functional as conv_ops
    conv_ops._SAME_WARNED[0] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.conv2d(ng.ones(1, 1, 4, 4), ng.ones(1, 1, 2, 2), padding="same")
        F.conv2d(ng.ones(1, 1, 4, 4), ng.ones(1, 1, 2, 2), padding="same")
    # only torch's warning counts: a ResourceWarning from an unrelated collection may land here
    assert [str(w.message) for w in caught if issubclass(w.category, UserWarning)] == [
        "Using padding='same' with even kernel lengths and odd dilation may require a "
        "zero-padded copy of the input be created"]


# ---- second derivatives ----------------------------------------------------------------------
def _second(lib, fn, arrays, g, v):
    xs = _leaves(lib, arrays)
    out = fn(lib, *xs)
    live = [x for x in xs if x is not None]
    firsts = lib.autograd.grad(out, live, lib.tensor(g), create_graph=True)
    s = sum((f * lib.tensor(vk)).sum() for f, vk in zip(firsts, v))
    seconds = lib.autograd.grad(s, live, allow_unused=True)
    return ([f.detach().numpy().copy() for f in firsts],
            [np.zeros(x.shape) if d is None else (d.detach() + 0).numpy().copy()
             for x, d in zip(live, seconds)])


SECOND = [
    ("conv2d", (2, 3, 6, 5), (4, 3, 3, 2), True, {"stride": (2, 1), "padding": 1}),
    ("conv2d", (1, 4, 7, 7), (4, 2, 3, 3), True, {"groups": 2, "dilation": 2, "padding": 1}),
    ("conv2d", (1, 2, 5, 6), (2, 2, 2, 3), False, {"padding": "same"}),
    ("conv1d", (2, 2, 9), (3, 2, 3), True, {"stride": 3, "padding": 2}),
    ("conv_transpose2d", (1, 4, 3, 3), (4, 1, 3, 2), True,
     {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
]


@pytest.mark.parametrize("name,xs,ws,bias,kw", SECOND)
def test_second_derivatives_match_torch(name, xs, ws, bias, kw):
    rng = np.random.default_rng(7)
    nb = ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0]
    arrays = [_rand(*xs), _rand(*ws, seed=1), _rand(nb, seed=2) if bias else None]

    def fn(lib, x, w, b):
        return getattr(lib.nn.functional, name)(x, w, b, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(torch, *[None if a is None else torch.tensor(a) for a in arrays])
    g = rng.standard_normal(tuple(out.shape))
    v = [rng.standard_normal(a.shape) for a in arrays if a is not None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        firsts_t, seconds_t = _second(torch, fn, arrays, g, v)
    firsts, seconds = _second(ng, fn, arrays, g, v)
    for mine, theirs in zip(firsts + seconds, firsts_t + seconds_t):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-11)


def test_gradgradcheck_conv2d():
    x = ng.tensor(_rand(1, 2, 5, 4), requires_grad=True)
    w = ng.tensor(_rand(4, 1, 2, 3, seed=1), requires_grad=True)
    b = ng.tensor(_rand(4, seed=2), requires_grad=True)

    def fn(x, w, b):
        return F.conv2d(x, w, b, stride=(1, 2), padding=1, groups=2)
    assert ng.autograd.gradcheck(fn, (x, w, b))
    assert ng.autograd.gradgradcheck(fn, (x, w, b))


# ---- pooling ---------------------------------------------------------------------------------
MAXPOOL = [
    ((2, 3, 6, 6), {"kernel_size": 2}),
    ((2, 3, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((1, 2, 7, 8), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 2, 9, 9), {"kernel_size": (2, 3), "stride": (1, 2), "dilation": (2, 1),
                    "padding": (1, 1)}),
    ((2, 5, 6), {"kernel_size": 2, "stride": 1}),
    ((1, 1, 5, 5), {"kernel_size": 2, "stride": 2, "ceil_mode": True}),
    ((8, 16, 20, 20), {"kernel_size": 2}),  # big: planes in parallel
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,kw", MAXPOOL)
def test_max_pool2d(xs, kw, dtype):
    arrays = [_rand(*xs)]
    _compare(lambda lib, x: lib.nn.functional.max_pool2d(x, **kw), arrays, dtype)
    _, idx_t = TF.max_pool2d(torch.tensor(arrays[0]), return_indices=True, **kw)
    _, idx = F.max_pool2d(ng.tensor(arrays[0]), return_indices=True, **kw)
    assert idx.dtype is ng.int64
    np.testing.assert_array_equal(idx.numpy(), idx_t.numpy())


def test_max_pool2d_ties_nan_and_integers():
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, np.nan, 2.0], [3.0, 3.0, 3.0]]]])
    for kw in ({"kernel_size": 2, "stride": 1}, {"kernel_size": 3, "padding": 1}):
        ours = F.max_pool2d(ng.tensor(x), return_indices=True, **kw)
        theirs = TF.max_pool2d(torch.tensor(x), return_indices=True, **kw)
        np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    xi = np.array([[[[-3, -5, 2, -7], [-1, -2, -3, -4], [5, 6, -7, 8], [1, 1, 1, 1]]]])
    np.testing.assert_array_equal(F.max_pool2d(ng.tensor(xi), 2).numpy(),
                                  TF.max_pool2d(torch.tensor(xi), 2).numpy())
    np.testing.assert_array_equal(F.avg_pool2d(ng.tensor(xi), 3, padding=1).numpy(),
                                  TF.avg_pool2d(torch.tensor(xi), 3, padding=1).numpy())


AVGPOOL = [
    ((2, 3, 6, 6), {"kernel_size": 2}),
    ((2, 3, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((1, 2, 7, 8), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 2, 7, 8), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                    "count_include_pad": False}),
    ((1, 2, 5, 5), {"kernel_size": (2, 3), "padding": (1, 1), "divisor_override": 4}),
    ((2, 5, 6), {"kernel_size": 2, "stride": (1, 2), "count_include_pad": False}),
    ((8, 16, 20, 20), {"kernel_size": 2}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,kw", AVGPOOL)
def test_avg_pool2d(xs, kw, dtype):
    _compare(lambda lib, x: lib.nn.functional.avg_pool2d(x, **kw), [_rand(*xs)], dtype)


ADAPTIVE = [
    ((2, 3, 7, 5), (3, 2)),
    ((2, 3, 5, 5), 5),
    ((1, 2, 4, 6), (6, 4)),  # larger than the input: windows overlap
    ((2, 6, 5), (None, 2)),
    ((2, 3, 4, 4), 1),  # MeanBackward1, as torch
    ((2, 3, 4, 4), (1, 1)),
    ((8, 16, 20, 20), (3, 3)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,size", ADAPTIVE)
def test_adaptive_avg_pool2d(xs, size, dtype):
    _compare(lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, size), [_rand(*xs)], dtype)


POOL_ERRORS = [
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8), 3, padding=2),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8), 9),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8), 0),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8), 2, stride=0),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8), 2, stride=-1),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8), 2, dilation=0),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8), 2, padding=-1),
    lambda lib, f: f.max_pool2d(_t(lib, 8, 8), 2),
    lambda lib, f: f.max_pool2d(_t(lib, 1, 2, 3, 8, 8), 2),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8), (2, 2, 2)),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 0, 8), 2),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 0, 8, 8), 2),
    lambda lib, f: f.avg_pool2d(_t(lib, 2, 3, 8, 8), 3, padding=2),
    lambda lib, f: f.avg_pool2d(_t(lib, 2, 3, 8, 8), 9),
    lambda lib, f: f.avg_pool2d(_t(lib, 2, 3, 8, 8), 0),
    lambda lib, f: f.avg_pool2d(_t(lib, 2, 3, 8, 8), 2, stride=0),
    lambda lib, f: f.avg_pool2d(_t(lib, 8, 8), 2),
    lambda lib, f: f.avg_pool2d(_t(lib, 2, 3, 8, 8), 2, divisor_override=0),
    lambda lib, f: f.avg_pool2d(_t(lib, 2, 0, 8, 8), 2),
    lambda lib, f: f.adaptive_avg_pool2d(_t(lib, 2, 3, 8, 8), (2, 2, 2)),
    lambda lib, f: f.adaptive_avg_pool2d(_t(lib, 8, 8), 2),
    lambda lib, f: f.adaptive_avg_pool2d(_t(lib, 2, 3, 8, 8), -1),
    lambda lib, f: f.adaptive_avg_pool2d(_t(lib, 2, 3, 0, 8), 2),
    lambda lib, f: f.adaptive_avg_pool2d(_t(lib, 2, 3, 8, 8, dtype=lib.int64), 2),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8, dtype=lib.bool), 2),
    lambda lib, f: f.avg_pool2d(_t(lib, 2, 3, 8, 8, dtype=lib.bool), 2),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8), 3, stride=2, padding=(1, 0), dilation=2,
                                ceil_mode=True),
    lambda lib, f: f.avg_pool2d(_t(lib, 2, 3, 8, 8), (3, 1), stride=(2,), padding=(1, 0),
                                ceil_mode=True),
    lambda lib, f: f.adaptive_avg_pool2d(_t(lib, 2, 3, 8, 8), (0, 3)),
    lambda lib, f: f.max_pool2d(_t(lib, 2, 3, 8, 8), 2, stride=()),
]


@pytest.mark.parametrize("k", range(len(POOL_ERRORS)))
def test_pool_errors_match_torch(k):
    same(_call_err(POOL_ERRORS[k]))


def test_adaptive_value_error_for_too_few_dims():
    for lib in (torch, ng):
        with pytest.raises(ValueError, match="Input dimension should be at least 3"):
            lib.nn.functional.adaptive_avg_pool2d(lib.ones(4), (2, 2))


POOL_FNS = [
    lambda f, t: f.max_pool2d(t, 3, stride=2, padding=1),
    lambda f, t: f.avg_pool2d(t, 3, stride=2, padding=1, count_include_pad=False),
    lambda f, t: f.adaptive_avg_pool2d(t, (4, 3)),
]


@pytest.mark.parametrize("k", range(len(POOL_FNS)))
def test_pooling_double_backward_matches_torch(k):
    # the recorded first derivative (create_graph) equals the sweep's, and differentiating
    # it with respect to the upstream gradient gives torch's answer
    x, v = _rand(1, 2, 6, 6), _rand(1, 2, 6, 6, seed=4)
    results = []
    for lib in (torch, ng):
        xt = lib.tensor(x, requires_grad=True)
        out = POOL_FNS[k](lib.nn.functional, xt)
        g = lib.tensor(_rand(*out.shape, seed=3), requires_grad=True)
        (gx,) = lib.autograd.grad(out, xt, g, create_graph=True)
        (gx_fast,) = lib.autograd.grad(POOL_FNS[k](lib.nn.functional, xt), xt, g.detach())
        np.testing.assert_allclose(gx.detach().numpy(), gx_fast.numpy(), rtol=1e-12)
        (gg,) = lib.autograd.grad((gx * lib.tensor(v)).sum(), g)
        results.append((gx.detach().numpy(), gg.numpy()))
    for mine, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)


# ---- modules ---------------------------------------------------------------------------------
REPRS = [
    ("Conv2d", (1, 16, 3), {"padding": 1}),
    ("Conv2d", (4, 8, (3, 5)), {"stride": 2, "padding": (1, 2), "dilation": 2, "groups": 2,
                                "bias": False}),
    ("Conv2d", (3, 6, 3), {"padding": "same"}),
    ("Conv2d", (3, 6, 3), {"padding": "valid"}),
    ("Conv1d", (3, 6, 5), {"stride": 2}),
    ("Conv1d", (4, 4, 3), {"groups": 4, "padding": 1, "dilation": 3}),
    ("MaxPool2d", (2,), {}),
    ("MaxPool2d", ((3, 2),), {"stride": 1, "padding": 1, "dilation": 2, "ceil_mode": True}),
    ("AvgPool2d", (2,), {}),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}),
    ("AdaptiveAvgPool2d", ((1, 1),), {}),
    ("AdaptiveAvgPool2d", (5,), {}),
    ("AdaptiveAvgPool2d", ((None, 3),), {}),
]


@pytest.mark.parametrize("name,args,kw", REPRS)
def test_module_reprs(name, args, kw):
    ours = getattr(ng.nn, name)(*args, **kw)
    theirs = getattr(torch.nn, name)(*args, **kw)
    assert repr(ours) == repr(theirs)


def test_conv2d_repr_from_the_issue():
    assert repr(ng.nn.Conv2d(1, 16, 3, padding=1)) == \
        "Conv2d(1, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    assert repr(ng.nn.MaxPool2d(2)) == \
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(ng.nn.AdaptiveAvgPool2d((1, 1))) == "AdaptiveAvgPool2d(output_size=(1, 1))"


@pytest.mark.parametrize("cls,args,kw", [
    ("Conv2d", (4, 6, 3), {"groups": 2}), ("Conv1d", (3, 5, 4), {"bias": False}),
    ("Conv2d", (3, 2, (2, 5)), {})])
def test_conv_module_parameters_and_init(cls, args, kw):
    ng.manual_seed(0)
    ours = getattr(ng.nn, cls)(*args, **kw)
    theirs = getattr(torch.nn, cls)(*args, **kw)
    assert [(k, tuple(p.shape)) for k, p in ours.named_parameters()] == \
        [(k, tuple(p.shape)) for k, p in theirs.named_parameters()]
    assert ours.weight.dtype is ng.float32 and ours.weight.requires_grad
    fan_in = args[0] // kw.get("groups", 1) * math.prod(theirs.kernel_size)
    bound = 1 / math.sqrt(fan_in)
    for p in ours.parameters():
        assert np.all(np.abs(p.detach().numpy()) <= bound)
    w = ours.weight.detach().numpy()
    assert abs(w.std() - bound / math.sqrt(3)) < 0.3 * bound  # U(-b, b) has std b / sqrt(3)
    assert (ours.bias is None) == (theirs.bias is None)
    assert ours.kernel_size == theirs.kernel_size and ours.stride == theirs.stride
    assert ours.padding == theirs.padding and ours.dilation == theirs.dilation
    assert list(ours.state_dict()) == list(theirs.state_dict())
    d = getattr(ng.nn, cls)(*args, dtype=ng.float64, **kw)
    assert d.weight.dtype is ng.float64


def _sorted_sets(message):
    """A message with its {...} set displays sorted (a set's order varies between runs)."""
    import re
    return re.sub(r"\{([^}]*)\}", lambda m: str(sorted(m.group(1).split(", "))), message)


def test_conv_module_constructor_errors():
    for kw in ({"groups": 0}, {"groups": 2, "in_channels": 3}, {"groups": 2, "out_channels": 3},
               {"padding": "full"}, {"padding": "same", "stride": 2},
               {"padding_mode": "mirror"}):
        args = {"in_channels": 4, "out_channels": 6, "kernel_size": 3, **kw}
        with pytest.raises(ValueError) as theirs:
            torch.nn.Conv2d(**args)
        with pytest.raises(ValueError) as ours:
            ng.nn.Conv2d(**args)
        assert _sorted_sets(str(ours.value)) == _sorted_sets(str(theirs.value))
    for mode in ("reflect", "replicate", "circular"):
        with pytest.raises(NotImplementedError, match=f"padding_mode='{mode}'"):
            ng.nn.Conv2d(2, 2, 3, padding_mode=mode)


def _copy_params(ours, theirs):
    for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        p._array()[...] = q.detach().numpy()


def test_small_cnn_matches_torch_with_copied_weights():
    def build(nn):
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(4, 6, 3, stride=2, groups=2), nn.ReLU(),
                             nn.AvgPool2d(2, ceil_mode=True), nn.AdaptiveAvgPool2d((1, 1)),
                             nn.Flatten(), nn.Linear(6, 3))
    ours, theirs = build(ng.nn), build(torch.nn)
    _copy_params(ours, theirs)
    x = _rand(5, 1, 12, 12).astype(np.float32)
    out_n = ours(ng.tensor(x))
    out_t = theirs(torch.tensor(x))
    np.testing.assert_allclose(out_n.detach().numpy(), out_t.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    out_n.pow(2).sum().backward()
    out_t.pow(2).sum().backward()
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)


def test_conv1d_module_and_unbatched_input():
    ours, theirs = ng.nn.Conv1d(3, 4, 3, padding="same"), torch.nn.Conv1d(3, 4, 3, padding="same")
    _copy_params(ours, theirs)
    x = _rand(3, 10).astype(np.float32)
    out_n, out_t = ours(ng.tensor(x)), theirs(torch.tensor(x))
    assert out_n.grad_fn.name() == out_t.grad_fn.name() == "SqueezeBackward1"
    np.testing.assert_allclose(out_n.detach().numpy(), out_t.detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_maxpool_module_return_indices():
    x = _rand(2, 3, 6, 6)
    out, idx = ng.nn.MaxPool2d(2, return_indices=True)(ng.tensor(x))
    out_t, idx_t = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(idx.numpy(), idx_t.numpy())
    np.testing.assert_allclose(out.numpy(), out_t.numpy())


@pytest.mark.parametrize("fn", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("kw", [dict(kernel_size=(1, 2, 3)), dict(kernel_size=2, stride=(1, 2, 3)),
                                dict(kernel_size=2, padding=(1, 2, 3))],
                         ids=["kernel_size", "stride", "padding"])
def test_pooling_window_argument_errors_are_torchs(fn, kw):
    x = _rand(1, 1, 6, 6)
    msg = same(lambda lib: getattr(lib.nn.functional, fn)(lib.tensor(x), **kw))
    assert msg.startswith(f"RuntimeError: {fn}: ")
