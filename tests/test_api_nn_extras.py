"""nn extras against torch 2.13: conv_transpose3d (and second derivatives), channel_shuffle,
the pools' *_with_indices forms, fractional max pooling (its random windows after
manual_seed), multilabel_margin_loss, triplet_margin_with_distance_loss, linear_cross_entropy
and their modules (values, gradients in float32 and float64, node names, reprs, errors);
Softmax2d, NLLLoss2d, RNNCellBase, CrossMapLRN2d, AdaptiveLogSoftmaxWithLoss; the lazy modules
(reprs, state_dict keys, initial parameters bit for bit after manual_seed, the class they
become); UninitializedParameter/Buffer; optim.Adafactor's trajectories;
optim.swap_in_optimizer_params_and_state; distributions.Wishart (draws in torch's stream)."""

import warnings

import numpy as np
import pytest
from torch_oracle import outcome, same_as_torch

import numbagrad as ng

torch = pytest.importorskip("torch")

R = np.random.default_rng(7)


def _data(shape):
    """Standard normals of ``shape``, the same whichever tests run before."""
    return np.random.default_rng(sum(shape) * 31 + len(shape)).standard_normal(shape)


def _leaves(v):
    if isinstance(v, (list, tuple)):
        return [leaf for u in v for leaf in _leaves(u)]
    if hasattr(v, "detach"):
        return [(tuple(v.shape), str(v.dtype), np.asarray(v.detach().numpy(), np.float64))]
    return [v]


def close_to_torch(fn, tol):
    """numbagrad's outcome of ``fn`` is torch's: the same exception, or the same structure,
    shapes and dtypes with values within ``tol`` (float32's rounding, where digits compared
    after rounding could fall either side of a boundary)."""
    ours, theirs = outcome(ng, fn, _leaves), outcome(torch, fn, _leaves)
    if not (isinstance(ours, list) and isinstance(theirs, list)):
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if isinstance(t, tuple) and len(t) == 3 and isinstance(t[2], np.ndarray):
            assert o[:2] == t[:2]
            np.testing.assert_allclose(o[2], t[2], rtol=tol, atol=tol, equal_nan=True)
        else:
            assert o == t


def _same(fn, dtype):
    """Exact digits in float64, float32 within its rounding."""
    if dtype == "float64":
        return same_as_torch(fn, decimals=12)
    return close_to_torch(fn, 2e-5)
X3 = R.standard_normal((2, 6, 3))
X4 = R.standard_normal((2, 4, 3, 3))
X5 = R.standard_normal((1, 2, 4, 4, 4))
A, B, C = R.standard_normal((4, 5)), R.standard_normal((4, 5)), R.standard_normal((4, 5))
LABELS = np.array([[3, 0, -1, 1, 2], [1, 2, 3, -1, 0], [2, 2, -1, 0, 0], [4, 1, 0, 3, 2]])

CALLS = [
    ("F.channel_shuffle(x, 3)", X3, "ChannelShuffleBackward0"),
    ("F.channel_shuffle(x, 2)", X4, "ChannelShuffleBackward0"),
    ("F.max_pool1d_with_indices(x, 2)[0]", X3, "SqueezeBackward1"),  # torch's 1-d is 2-d
    ("F.max_pool2d_with_indices(x, 2, 1, 1)[0]", X4, "MaxPool2DWithIndicesBackward0"),
    ("F.max_pool3d_with_indices(x, 2)[0]", X5, "MaxPool3DWithIndicesBackward0"),
    ("F.adaptive_max_pool1d_with_indices(x, 2)[0]", X3, "SqueezeBackward1"),
    ("F.adaptive_max_pool2d_with_indices(x, (2, 1))[0]", X4, "AdaptiveMaxPool2DBackward0"),
    ("F.adaptive_max_pool3d_with_indices(x, 3)[0]", X5, "AdaptiveMaxPool3DBackward0"),
    ("F.multilabel_margin_loss(x, y)", A, None),
    ("F.multilabel_margin_loss(x, y, reduction='none')", A, None),
    ("F.multilabel_margin_loss(x[0], y[0], reduction='sum')", A, None),
    ("F.triplet_margin_with_distance_loss(x, x * 2, x.flip(0))", A, "MeanBackward0"),
    ("F.triplet_margin_with_distance_loss(x, x.roll(1, 0), x.flip(1), swap=True, margin=2.0, "
     "reduction='sum', distance_function=lambda a, b: (a - b).abs().sum(-1))", A,
     "SumBackward0"),
    ("nn.Softmax2d()(x)", X4, "SoftmaxBackward0"),
    ("nn.ChannelShuffle(3)(x)", X3, "ChannelShuffleBackward0"),
    ("nn.MultiLabelMarginLoss(reduction='sum')(x, y)", A, None),
    ("nn.TripletMarginWithDistanceLoss(swap=True)(x, x.flip(0), x * 0.5)", A, "MeanBackward0"),
]


def _run(lib, call, x, dtype):
    xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    env = {"F": lib.nn.functional, "nn": lib.nn, "x": xt, "y": lib.tensor(LABELS)}
    out = eval(call, env)  # noqa: S307 - test expressions
    out.backward(lib.ones_like(out) * 0.5)
    return out.detach().numpy(), xt.grad.numpy(), out.grad_fn.name()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("call,x,node", CALLS, ids=[c[0][:60] for c in CALLS])
def test_values_gradients_and_nodes(call, x, node, dtype):
    ours, theirs = _run(ng, call, x, dtype), _run(torch, call, x, dtype)
    tol = 1e-12 if dtype == "float64" else 1e-5
    for o, t in zip(ours[:2], theirs[:2]):
        assert o.dtype == t.dtype and o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=tol, atol=tol)
    if node is not None:
        assert ours[2] == theirs[2] == node
    else:  # torch's one-kernel loss: numbagrad ends in its reduction's node (a documented gap)
        assert theirs[2] == "MultilabelMarginLossBackward0"


def test_indices_forms_return_torchs_indices():
    for call, x in [("F.max_pool2d_with_indices(x, 2, return_indices=False)", X4),
                    ("F.max_pool1d_with_indices(x, 2, ceil_mode=True)", X3),
                    ("F.adaptive_max_pool3d_with_indices(x, (2, 3, 1))", X5)]:
        same_as_torch(lambda lib, c=call, x=x: eval(c, {"F": lib.nn.functional,  # noqa: S307
                                                         "x": lib.tensor(x)}))


def test_native_channel_shuffle_has_torchs_values_and_no_derivative():
    def fn(lib):
        x = lib.tensor(X4, requires_grad=True)
        y = lib.nn.functional.native_channel_shuffle(x, 2)
        return y, y.grad_fn.name()
    same_as_torch(fn)

    def back(lib):
        x = lib.tensor(X4, requires_grad=True)
        lib.nn.functional.native_channel_shuffle(x, 4).sum().backward()
    same_as_torch(back)


ERRORS = [
    "F.channel_shuffle(lib.zeros(2, 6), 3)",
    "F.channel_shuffle(lib.zeros(2, 6, 3), 4)",
    "F.channel_shuffle(lib.zeros(2, 6, 3), 0)",
    "F.native_channel_shuffle(lib.zeros(6), 2)",
    "F.max_pool2d_with_indices(lib.zeros(2, 3, 4, 4), 5)",
    "F.multilabel_margin_loss(lib.zeros(3, 4), lib.zeros(2, 4, dtype=lib.long))",
    "F.multilabel_margin_loss(lib.zeros(3, 4), lib.zeros(3, 4))",
    "F.multilabel_margin_loss(lib.zeros(3, 4), lib.full((3, 4), 4))",
    "F.multilabel_margin_loss(lib.zeros(2, 3, 4), lib.zeros(2, 3, 4, dtype=lib.long))",
    "F.triplet_margin_with_distance_loss(lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(3))",
    "F.triplet_margin_with_distance_loss(lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(2, 3), "
    "margin=0)",
    "F.triplet_margin_with_distance_loss(lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(2, 3), "
    "reduction='max')",
    "nn.TripletMarginWithDistanceLoss(margin=-1.0)",
    "nn.Softmax2d()(lib.zeros(2, 3))",
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_are_torchs(call):
    result = same_as_torch(lambda lib: eval(call, {"F": lib.nn.functional,  # noqa: S307
                                                   "nn": lib.nn, "lib": lib}))
    assert isinstance(result, tuple) and isinstance(result[0], str)  # it raised


REPRS = ["nn.ChannelShuffle(3)", "nn.Softmax2d()", "nn.MultiLabelMarginLoss(reduction='sum')",
         "nn.TripletMarginWithDistanceLoss(margin=2.0, swap=True)",
         "nn.TripletMarginWithDistanceLoss(distance_function=nn.CosineSimilarity())",
         "nn.NLLLoss2d(ignore_index=1)", "nn.RNNCellBase(3, 4, False, 2)",
         "nn.LazyConv1d(4, 3)", "nn.LazyConv2d(4, 2, stride=2, bias=False)",
         "nn.LazyConv3d(2, 2, groups=2)", "nn.LazyConvTranspose1d(4, 3, output_padding=1, "
         "stride=2)", "nn.LazyConvTranspose2d(4, 3, groups=2, dilation=2)",
         "nn.LazyBatchNorm1d()", "nn.LazyBatchNorm2d(affine=False)",
         "nn.LazyInstanceNorm3d(track_running_stats=False)", "nn.LazyLinear(3, bias=False)",
         "nn.FractionalMaxPool2d(2, output_size=3)",
         "nn.FractionalMaxPool3d(2, output_ratio=0.5, _random_samples=lib.rand(1, 2, 3))"]


@pytest.mark.parametrize("src", REPRS)
def test_reprs_and_state_dict_keys(src):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ours, theirs = (eval(src, {"nn": lib.nn, "lib": lib}) for lib in (ng, torch))  # noqa: S307
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    becomes = [getattr(type(m), "cls_to_become", None) for m in (ours, theirs)]
    assert [c and c.__name__ for c in becomes] == [c and c.__name__ for c in becomes[::-1]]


def test_nllloss2d_warns_and_is_nllloss():
    for lib in (ng, torch):
        with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
            m = lib.nn.NLLLoss2d()
        assert isinstance(m, lib.nn.NLLLoss)
    same_as_torch(lambda lib: lib.nn.NLLLoss2d(reduction="sum")(
        lib.tensor(X4).log_softmax(1), lib.tensor(np.arange(18).reshape(2, 3, 3) % 4)))


def test_rnn_cell_base_draws_torchs_parameters():
    def fn(lib):
        lib.manual_seed(11)
        cell = lib.nn.RNNCellBase(3, 4, True, 3, dtype=lib.float64)
        drawn = [p.detach().clone() for p in cell.parameters()]
        cell.reset_parameters()
        return drawn, list(cell.parameters()), isinstance(lib.nn.GRUCell(2, 2),
                                                          lib.nn.RNNCellBase)
    same_as_torch(fn, decimals=17)


LAZY = [("LazyLinear", (3,), {}, (2, 4)),
        ("LazyConv1d", (4, 3), {}, (2, 3, 6)),
        ("LazyConv1d", (4, 3), {"padding": 1}, (3, 6)),  # unbatched
        ("LazyConv2d", (4, 2), {"stride": 2, "bias": False}, (1, 3, 5, 5)),
        ("LazyConv3d", (2, 2), {"groups": 2}, (1, 4, 3, 3, 3)),
        ("LazyConvTranspose1d", (4, 3), {"stride": 2}, (2, 3, 5)),
        ("LazyConvTranspose2d", (4, 3), {"groups": 2, "dilation": 2}, (1, 2, 4, 4)),
        ("LazyConvTranspose3d", (2, 2), {"stride": 2}, (1, 3, 2, 2, 3)),
        ("LazyBatchNorm1d", (), {}, (4, 3)),
        ("LazyBatchNorm2d", (), {"affine": False}, (2, 3, 2, 2)),
        ("LazyBatchNorm3d", (), {"affine": False, "track_running_stats": False},
         (2, 3, 2, 2, 2)),
        ("LazyInstanceNorm1d", (), {}, (2, 3, 4)),
        ("LazyInstanceNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
        ("LazyInstanceNorm3d", (), {"momentum": 0.5}, (1, 2, 3, 3, 3))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,args,kw,shape", LAZY, ids=[f"{c[0]}-{c[3]}" for c in LAZY])
def test_lazy_modules_materialize_as_torchs(name, args, kw, shape, dtype):
    x = _data(shape)

    def fn(lib):
        lib.manual_seed(5)
        m = getattr(lib.nn, name)(*args, **kw, dtype=getattr(lib, dtype))
        before = (repr(m), list(m.state_dict()), m.has_uninitialized_params())
        held = list(m.parameters())
        xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        y = m(xt)
        y.backward(lib.ones_like(y))
        same = all(p is q for p, q in zip(held, m.parameters()))
        return (before, repr(m), type(m).__name__, same, m.has_uninitialized_params(), y,
                xt.grad, [(n, p, p.grad) for n, p in m.named_parameters()],
                [(n, b) for n, b in m.named_buffers()])
    if dtype == "float64":
        same_as_torch(fn, decimals=17)
    else:
        close_to_torch(fn, 2e-5)
    # the initial parameters bit for bit: torch's random stream
    ours, theirs = [], []
    for lib, out in ((ng, ours), (torch, theirs)):
        lib.manual_seed(5)
        m = getattr(lib.nn, name)(*args, **kw, dtype=getattr(lib, dtype))
        m(lib.tensor(x, dtype=getattr(lib, dtype)))
        out.extend(p.detach().numpy() for p in m.parameters())
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype and np.array_equal(o, t)


LAZY_ERRORS = [
    "nn.LazyConv2d(4, 3)(lib.zeros(2, 3, 5))",
    "nn.LazyConv1d(4, 3, groups=2)(lib.zeros(2, 3, 5))",
    "nn.LazyLinear(3)(lib.tensor(1.0))",
    "nn.LazyInstanceNorm1d()(lib.zeros(3, 5))",  # torch sizes it by dim 1, then refuses
]


@pytest.mark.parametrize("call", LAZY_ERRORS)
def test_lazy_errors_are_torchs(call):
    result = same_as_torch(lambda lib: eval(call, {"nn": lib.nn, "lib": lib}))  # noqa: S307
    assert isinstance(result, tuple) and isinstance(result[0], str)


def test_uninitialized_parameter_and_buffer():
    def fn(lib):
        p = lib.nn.UninitializedParameter(dtype=lib.float64)
        b = lib.nn.UninitializedBuffer()
        facts = [repr(p), repr(b), isinstance(p, lib.nn.Parameter), p.requires_grad,
                 b.requires_grad, str(p.dtype), type(p).cls_to_become is lib.nn.Parameter]
        p.materialize((2, 3))
        b.materialize((4,), dtype=lib.float16)
        return facts + [type(p) is lib.nn.Parameter, tuple(p.shape), str(p.dtype),
                        type(b) is lib.Tensor, tuple(b.shape), str(b.dtype)]
    same_as_torch(fn)


FRACTIONAL = [("F.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)", (2, 3, 9, 8)),
              ("F.fractional_max_pool2d_with_indices(x, (3, 2), output_ratio=(0.5, 0.7))",
               (3, 9, 8)),
              ("F.fractional_max_pool2d(x, 3, (7, 11))", (1, 2, 20, 17)),
              ("F.fractional_max_pool3d(x, 2, output_size=(3, 4, 5), return_indices=True)",
               (1, 2, 7, 6, 8)),
              ("F.fractional_max_pool3d_with_indices(x, (2, 3, 1), output_ratio=0.5)",
               (2, 6, 9, 7)),
              ("F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=lib.tensor("
               "[[[0.2, 0.9], [0.5, 0.5]]], dtype=x.dtype))", (1, 2, 6, 7)),
              ("nn.FractionalMaxPool2d(2, output_ratio=0.6, return_indices=True)(x)", (2, 2, 8, 8)),
              ("nn.FractionalMaxPool3d((2, 1, 2), output_size=3)(x)", (1, 2, 5, 4, 6))]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("call,shape", FRACTIONAL, ids=[c[0][:70] for c in FRACTIONAL])
def test_fractional_max_pool_draws_torchs_windows(call, shape, dtype):
    """After manual_seed the random windows are torch's: values, indices and gradients equal
    bit for bit, and the generator is left where torch leaves it."""
    x0 = _data(shape)

    def fn(lib):
        lib.manual_seed(3)
        x = lib.tensor(x0, dtype=getattr(lib, dtype), requires_grad=True)
        out = eval(call, {"F": lib.nn.functional, "nn": lib.nn, "lib": lib,  # noqa: S307
                          "x": x})
        y = out[0] if isinstance(out, tuple) else out
        y.backward(lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape))
        return out, x.grad, y.grad_fn.name(), lib.rand(2)
    same_as_torch(fn, decimals=17)


FRACTIONAL_ERRORS = [
    "F.fractional_max_pool2d(x, 2)",
    "F.fractional_max_pool2d(x, 4, output_size=5)",
    "F.fractional_max_pool2d(x, (2, 2, 2), output_size=3)",
    "F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5))",
    "F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=lib.rand(2, 3, 3))",
    "F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=lib.rand(1, 3, 2))",
    "F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=lib.rand(2, 3, 2).double())",
    "F.fractional_max_pool2d(lib.zeros(2, 3, 0, 6), 2, output_size=3)",
    "F.fractional_max_pool3d(x, 2, output_size=2)",
    "F.fractional_max_pool3d(lib.zeros(2, 3, 4, 4, 4), 4, output_size=2)",
    "nn.FractionalMaxPool2d(2)",
    "nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)",
    "nn.FractionalMaxPool3d(2, output_ratio=1.5)",
    "nn.FractionalMaxPool3d(0, output_ratio=0.5)",
]


@pytest.mark.parametrize("call", FRACTIONAL_ERRORS)
def test_fractional_max_pool_errors_are_torchs(call):
    def fn(lib):
        x = lib.zeros(2, 3, 7, 6)
        return eval(call, {"F": lib.nn.functional, "nn": lib.nn, "lib": lib,  # noqa: S307
                           "x": x})
    result = same_as_torch(fn)
    assert isinstance(result, tuple) and isinstance(result[0], str)


CONV_T3D = [((1, 2, 3, 2, 3), (2, 3, 2, 2, 1), (3,), {"stride": (2, 1, 2)}),
            ((2, 4, 2, 3, 2), (4, 1, 1, 2, 3), None,
             {"padding": (0, 1, 1), "groups": 2, "dilation": (1, 2, 1),
              "output_padding": (0, 1, 0), "stride": 2}),
            ((2, 3, 3, 3), (2, 2, 2, 2, 2), (2,), {"padding": 1})]  # unbatched


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shapes", CONV_T3D, ids=range(len(CONV_T3D)))
def test_conv_transpose3d_values_gradients_and_second_derivatives(shapes, dtype):
    *sizes, kw = shapes
    arrays = [_data(s) for s in sizes if s is not None]

    def run(lib):
        ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]
        y = lib.nn.functional.conv_transpose3d(*ts, **kw)
        gy = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)
        grads = lib.autograd.grad(y, ts, gy, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), ts, allow_unused=True)
        # (the gradients' own nodes are not torch's ConvolutionBackwardBackward0, as for
        # numbagrad's other convolutions)
        return [y, *grads, *(g for g in second if g is not None)], y.grad_fn.name()
    ours, theirs = run(ng), run(torch)
    assert ours[1:] == theirs[1:]
    tol = 1e-12 if dtype == "float64" else 2e-5
    assert len(ours[0]) == len(theirs[0])
    for o, t in zip(ours[0], theirs[0]):
        assert str(o.dtype) == str(t.dtype)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def test_conv_transpose3d_module_is_torchs():
    x = _data((1, 2, 3, 3, 2))

    def fn(lib):
        lib.manual_seed(4)
        m = lib.nn.ConvTranspose3d(2, 4, (2, 3, 2), stride=2, groups=2, output_padding=1,
                                   dtype=lib.float64)
        y = m(lib.tensor(x), output_size=(6, 7, 5))
        return repr(m), list(m.state_dict()), m.weight, m.bias, y
    same_as_torch(fn, decimals=17)
    same_as_torch(lambda lib: lib.nn.ConvTranspose3d(2, 2, 2, padding_mode="reflect"))


CONV_T3D_ERRORS = [
    "F(lib.ones(1, 2, 3, 3, 3), lib.ones(2, 2, 2, 2, 2), output_padding=2, stride=2)",
    "F(lib.ones(1, 2, 3, 3, 3), lib.ones(3, 2, 2, 2, 2))",
    "F(lib.ones(2, 3, 3, 3), lib.ones(2, 2, 2, 2))",
    "F(lib.ones(1, 2, 3, 3, 3), lib.ones(2, 2, 2, 2, 2), padding='same')",
    "F(lib.ones(1, 2, 3, 3, 3), lib.ones(2, 2, 2, 2, 2), lib.ones(3))",
    "F(lib.ones(1, 2, 1, 1, 1), lib.ones(2, 2, 1, 1, 1), padding=2)",
    "F(lib.ones(1, 2, 3, 3, 3), lib.ones(2, 2, 2, 2, 2), groups=3)",
    "F(lib.ones(1, 2, 3, 3, 3), lib.ones(2, 2, 2, 2, 2), stride=(1, 2))",
]


@pytest.mark.parametrize("call", CONV_T3D_ERRORS)
def test_conv_transpose3d_errors_are_torchs(call):
    result = same_as_torch(lambda lib: eval(call, {  # noqa: S307
        "F": lib.nn.functional.conv_transpose3d, "lib": lib}))
    assert isinstance(result, tuple) and isinstance(result[0], str)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("args,shape", [((5,), (2, 7, 3, 2)), ((3, 0.3, 0.6, 1.5), (1, 4, 2, 3)),
                                        ((4, 1e-2), (2, 2, 2, 2))])
def test_cross_map_lrn2d_is_torchs(args, shape, dtype):
    x0 = _data(shape)

    def fn(lib):
        x = lib.tensor(x0, dtype=getattr(lib, dtype), requires_grad=True)
        m = lib.nn.CrossMapLRN2d(*args)
        y = m(x)
        y.backward(lib.tensor(np.linspace(-1, 1, y.numel()).reshape(shape), dtype=y.dtype))
        return repr(m), y, x.grad, y.grad_fn.name()
    _same(fn, dtype)
    same_as_torch(lambda lib: lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3, 4)))  # not 4-d


def _adaptive(lib, dtype, x0, t0, **kw):
    lib.manual_seed(2)
    m = lib.nn.AdaptiveLogSoftmaxWithLoss(8, 15, [4, 10], dtype=getattr(lib, dtype), **kw)
    x = lib.tensor(x0, dtype=getattr(lib, dtype), requires_grad=True)
    out, loss = m(x, lib.tensor(t0))
    loss.backward()
    single = m(x[0].detach(), lib.tensor(t0[0]))
    return (repr(m), list(m.state_dict()), list(m.parameters()), out, loss, x.grad,
            [p.grad for p in m.parameters()], out.grad_fn.name(), loss.grad_fn.name(),
            m.log_prob(x), m.predict(x), single.output, single.loss)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", [{}, {"div_value": 2.0, "head_bias": True}])
def test_adaptive_log_softmax_is_torchs(kw, dtype):
    x0 = _data((6, 8))
    t0 = np.array([0, 3, 7, 12, 5, 14])
    _same(lambda lib: _adaptive(lib, dtype, x0, t0, **kw), dtype)


ADAPTIVE_ERRORS = [
    "nn.AdaptiveLogSoftmaxWithLoss(8, 15, [])",
    "nn.AdaptiveLogSoftmaxWithLoss(8, 15, [10, 4])",
    "nn.AdaptiveLogSoftmaxWithLoss(8, 15, [4, 15])",
    "m(lib.zeros(3, 8), lib.tensor([0, 1]))",
    "m(lib.zeros(3, 2, 8), lib.tensor([0, 1, 2]))",
    "m(lib.zeros(3, 8), lib.tensor(1))",
    "m(lib.zeros(3, 8), lib.zeros(3, 1, dtype=lib.long))",
    "m(lib.zeros(3, 8), lib.tensor([0, 15, 2]))",
]


@pytest.mark.parametrize("call", ADAPTIVE_ERRORS)
def test_adaptive_log_softmax_errors_are_torchs(call):
    def fn(lib):
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(8, 15, [4, 10])
        return eval(call, {"nn": lib.nn, "lib": lib, "m": m})  # noqa: S307
    result = same_as_torch(fn)
    assert isinstance(result, tuple) and isinstance(result[0], str)


_LCE = np.random.default_rng(5)
LCE_DATA = {"x": _LCE.standard_normal((5, 4)), "w": _LCE.standard_normal((6, 4)),
            "b": _LCE.standard_normal(6), "wk": _LCE.standard_normal((3, 2, 4)),
            "bk": _LCE.standard_normal((3, 2))}
LCE_CALLS = [
    ("F.linear_cross_entropy(x, w, t)", "NllLossBackward0"),
    ("F.linear_cross_entropy(x, w, t, linear_bias=b, weight=lib.tensor(cw, dtype=x.dtype), "
     "reduction='sum', label_smoothing=0.1)", "AddBackward0"),
    ("F.linear_cross_entropy(x, w, t.clamp(min=0), ignore_index=2, reduction='none')",
     "NllLossBackward0"),
    ("F.linear_cross_entropy(x[0], w, t[1])", "NllLossBackward0"),
    ("F.linear_cross_entropy(x, wk, tk, linear_bias=bk)", "NllLoss2DBackward0"),
    ("F.linear_cross_entropy(x, w, probs.to(x.dtype))", "DivBackward1"),
]


def _lce_env(lib, dtype):
    d = getattr(lib, dtype)
    env = {n: lib.tensor(v, dtype=d, requires_grad=True) for n, v in LCE_DATA.items()}
    probs = np.linspace(0.1, 1.0, 30).reshape(5, 6)
    env.update(F=lib.nn.functional, lib=lib, t=lib.tensor([0, 5, 2, -100, 3]),
               cw=np.linspace(0.5, 1.5, 6), tk=lib.tensor([[0, 1], [2, 2], [1, 0], [0, 0],
                                                            [2, 1]]),
               probs=lib.tensor(probs / probs.sum(1, keepdims=True)))
    return env


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("call,node", LCE_CALLS, ids=[c[0][:60] for c in LCE_CALLS])
def test_linear_cross_entropy_is_torchs(call, node, dtype):
    def fn(lib):
        env = _lce_env(lib, dtype)
        y = eval(call, env)  # noqa: S307
        y.sum().backward()
        return y, y.grad_fn.name(), [env[n].grad for n in LCE_DATA]
    _same(fn, dtype)
    assert fn(ng)[1] == node


LCE_ERRORS = [
    "F.linear_cross_entropy(x.reshape(5, 2, 2), w, t)",
    "F.linear_cross_entropy(x, b, t)",
    "F.linear_cross_entropy(x, w[:, :3], t)",
    "F.linear_cross_entropy(x, w, t, linear_bias=b[:5])",
    "F.linear_cross_entropy(x[0], wk, tk[0])",
    "F.linear_cross_entropy(x, w, probs, ignore_index=1)",
    "nn.LinearCrossEntropyLoss(4, 3, weight=lib.ones(2))",
    "nn.LinearCrossEntropyLoss(4, 3, label_smoothing=1.5)",
]


@pytest.mark.parametrize("call", LCE_ERRORS)
def test_linear_cross_entropy_errors_are_torchs(call):
    def fn(lib):
        return eval(call, {**_lce_env(lib, "float32"), "nn": lib.nn})  # noqa: S307
    result = same_as_torch(fn)
    assert isinstance(result, tuple) and isinstance(result[0], str)


def test_linear_cross_entropy_loss_module_is_torchs():
    x0 = LCE_DATA["x"]

    def fn(lib):
        lib.manual_seed(0)
        m = lib.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True,
                                          label_smoothing=0.2, dtype=lib.float64)
        loss = m(lib.tensor(x0), lib.tensor([[0, 1], [2, 2], [1, 0], [0, 0], [2, 1]]))
        loss.backward()
        return repr(m), list(m.state_dict()), list(m.parameters()), loss, m.linear.weight.grad
    same_as_torch(fn, decimals=12)


def test_linear_cross_entropy_options_raise():
    x = ng.zeros(2, 3)
    with pytest.raises(NotImplementedError, match="no chunked path"):
        ng.nn.functional.linear_cross_entropy(x, ng.zeros(4, 3), ng.tensor([0, 1]),
                                              options=object())


def _adafactor(lib, dtype, kw, steps=5):
    rng = np.random.default_rng(3)
    ws = [lib.tensor(rng.standard_normal(s), dtype=getattr(lib, dtype), requires_grad=True)
          for s in [(3, 4), (5,), (2, 3, 2)]]
    opt = lib.optim.Adafactor(ws, **kw)
    trajectory = []
    for _ in range(steps):
        opt.zero_grad()
        sum(((w ** 3).sum() + (w * w).sum()) for w in ws).backward()
        opt.step()
        trajectory.append([w.detach().numpy().copy() for w in ws])
    state = opt.state_dict()
    return trajectory, state


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", [{}, {"lr": 0.1, "weight_decay": 0.1, "maximize": True},
                                {"eps": (1e-4, 1e-2), "d": 1.5, "beta2_decay": -0.5}])
def test_adafactor_follows_torchs_trajectory(kw, dtype):
    ours, our_state = _adafactor(ng, dtype, kw)
    theirs, their_state = _adafactor(torch, dtype, kw)
    tol = 1e-13 if dtype == "float64" else 2e-6
    for o_step, t_step in zip(ours, theirs, strict=True):
        for o, t in zip(o_step, t_step, strict=True):
            assert o.dtype == t.dtype
            np.testing.assert_allclose(o, t, rtol=tol, atol=tol)
    assert our_state["param_groups"] == their_state["param_groups"]
    for k, s in their_state["state"].items():
        assert list(our_state["state"][k]) == list(s)
        for name, v in s.items():
            np.testing.assert_allclose(our_state["state"][k][name].numpy(), v.numpy(),
                                       rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("kw", [{"lr": -1.0}, {"beta2_decay": 0.5}, {"eps": (-1.0, 1e-3)},
                                {"eps": (None, -1.0)}, {"d": 0.5}, {"weight_decay": -0.1}])
def test_adafactor_errors_are_torchs(kw):
    result = same_as_torch(lambda lib: lib.optim.Adafactor([lib.zeros(2, requires_grad=True)],
                                                           **kw))
    assert result[0] == "ValueError"


def _swap_in(lib):
    """An Adam step on other parameters and a changed copy of the state, in the context."""
    w = lib.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    b = lib.tensor([0.1, -0.2], requires_grad=True)
    opt = lib.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    (w.sum() ** 2 + (b * b).sum()).backward()
    opt.step()
    osd = opt.state_dict()
    sd = {"state": {k: {n: v.clone() for n, v in s.items()} for k, s in osd["state"].items()},
          "param_groups": [dict(g) for g in osd["param_groups"]]}
    sd["param_groups"][0]["lr"] = 0.01
    p2 = {"w": lib.tensor([[2.0, 0.0], [1.0, 1.0]], requires_grad=True),
          "b": lib.tensor([1.0, 1.0], requires_grad=True)}
    (p2["w"].sum() + p2["b"].prod()).backward()
    live_params = opt.param_groups[0]["params"]
    with lib.optim.swap_in_optimizer_params_and_state(opt, p2, sd):
        inside = [g["lr"] for g in opt.param_groups]
        opt.step()
    return (p2["w"], p2["b"], w, b, inside, [g["lr"] for g in opt.param_groups],
            opt.param_groups[0]["params"] is live_params, sd["state"][0]["exp_avg"],
            sd["state"][1]["step"], opt.state[w]["step"])


def test_swap_in_optimizer_params_and_state_is_torchs():
    # 6 decimals: numbagrad's Adam kernel may round its first step 1 ulp off torch's
    same_as_torch(_swap_in, decimals=6)


SWAP_ERRORS = [
    "swap(lib.optim.SGD([w], lr=0.1), {'w': w}, {})",  # no state yet
    "swap(stepped(), {'w': w}, [])",
    "swap(stepped(), {'w': w}, {'state': [], 'param_groups': []})",
    "swap(stepped(), {'w': w}, {'state': {}, 'param_groups': []})",
    "swap(stepped(), {'w': w}, {'state': {5: {}}, 'param_groups': stepped().state_dict()"
    "['param_groups']})",
    "swap(stepped(), {}, stepped().state_dict())",
]


@pytest.mark.parametrize("call", SWAP_ERRORS)
def test_swap_in_errors_are_torchs(call):
    def fn(lib):
        w = lib.ones(2, requires_grad=True)

        def stepped():
            opt = lib.optim.Adam([w])
            w.sum().backward()
            opt.step()
            return opt

        def swap(*args):
            with lib.optim.swap_in_optimizer_params_and_state(*args):
                pass
        return eval(call, {"swap": swap, "stepped": stepped, "lib": lib,  # noqa: S307
                           "w": w})
    result = same_as_torch(fn)
    assert isinstance(result, tuple) and result[0] == "RuntimeError"


WISHART_COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])


def _wishart(lib, dtype, kind, shape):
    lib.manual_seed(0)
    d = getattr(lib, dtype)
    cov = lib.tensor(WISHART_COV, dtype=d, requires_grad=True)
    df = lib.tensor([4.0, 5.5], dtype=d, requires_grad=True)
    param = {"covariance_matrix": cov, "scale_tril": lib.linalg.cholesky(cov),
             "precision_matrix": lib.linalg.inv(cov)}[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "Singular sample detected." on every draw
        w = lib.distributions.Wishart(df, **{kind: param})
        s = w.rsample(shape)
    lp = w.log_prob(s.detach())
    values = [s, lp, w.mean, w.variance, w.entropy(), lib.rand(2)]
    grads = []
    if shape == ():  # torch's own backward fails after its correction loop with a sample dim
        (s.sum() + lp.sum() + w.entropy().sum()).backward()
        grads = [cov.grad, df.grad]
    return [v.detach().numpy() for v in values], [g.numpy() for g in grads]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", ["covariance_matrix", "scale_tril", "precision_matrix"])
@pytest.mark.parametrize("shape", [(), (2,)])
def test_wishart_draws_and_densities_are_torchs(kind, shape, dtype):
    (ours, our_grads), (theirs, their_grads) = (_wishart(lib, dtype, kind, shape)
                                                for lib in (ng, torch))
    tol = 1e-12 if dtype == "float64" else 1e-5
    for o, t in zip(ours, theirs, strict=True):  # the draws in torch's stream, then the rest
        assert o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=tol, atol=tol)
    assert len(our_grads) == len(their_grads)
    if our_grads:
        np.testing.assert_allclose(our_grads[0], their_grads[0], rtol=tol * 10, atol=tol * 10)
        # df's gradient goes through Chi2 (Gamma) rsample's, which numbagrad approximates
        # to about 1e-4 of torch's
        np.testing.assert_allclose(our_grads[1], their_grads[1], rtol=1e-3)


WISHART_ERRORS = [
    "W(4.0, covariance_matrix=lib.eye(3), scale_tril=lib.eye(3))",
    "W(4.0)",
    "W(4.0, covariance_matrix=lib.ones(3))",
    "W(1.5, covariance_matrix=lib.eye(3))",
    "W(lib.tensor([4.0, 1.0]), scale_tril=lib.eye(3))",
]


@pytest.mark.parametrize("call", WISHART_ERRORS)
def test_wishart_errors_are_torchs(call):
    result = same_as_torch(lambda lib: eval(call, {  # noqa: S307
        "W": lib.distributions.Wishart, "lib": lib}))
    assert isinstance(result, tuple) and isinstance(result[0], str)


def test_wishart_mode_expand_and_number_df_are_torchs():
    def fn(lib):
        w = lib.distributions.Wishart(lib.tensor([3.5, 6.0]), covariance_matrix=lib.eye(3) * 2)
        lib.manual_seed(1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e = lib.distributions.Wishart(5.0, scale_tril=lib.eye(2)).expand((3,))
            draw = e.sample()
        return (w.mode, tuple(w.batch_shape), tuple(w.event_shape), draw, tuple(e.batch_shape),
                e.precision_matrix, e.log_prob(lib.eye(2)), e.entropy())
    close_to_torch(fn, 2e-5)


@pytest.mark.parametrize("call", [
    "F.linear(np.ones((2, 3)), lib.ones(4, 3), lib.ones(4))",
    "F.linear(lib.ones(2, 3), [1.0], None)",
    "F.linear(lib.ones(2, 3), lib.ones(4, 3), 3)",
    "F.linear(lib.ones(2, 3), np.ones((4, 3)))",
    "F.linear(lib.ones(2, 3), lib.ones(4, 3), [1.0])",
])
def test_linear_arguments_that_are_no_tensor_get_torchs_error(call):
    def fn(lib):
        return eval(call, {"lib": lib, "F": lib.nn.functional, "np": np})  # noqa: S307
    result = same_as_torch(fn)
    assert result[0] == "TypeError" and "must be Tensor" in result[1]
