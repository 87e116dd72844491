"""torch.nn.functional's spatial functions and the nn modules over them, against torch 2.13:
values, grad_fn names, float64 gradients, the main errors, module reprs and state dicts.
(tests/test_ops.py checks the table ops' samples in both dtypes, both sweep paths, finite
differences and second derivatives.)"""

import warnings

import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng

torch = pytest.importorskip("torch")


def _pair(shapes, seed, lo=-2.0, hi=2.0):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(lo, hi, s) for s in shapes]
    return ([ng.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _grad_check(fn, shapes, seed=0, lo=-2.0, hi=2.0, grad_fn=True):
    """fn(lib, *xs) on numbagrad and torch: value, dtype, grad_fn name, float64 gradients."""
    ours, theirs = _pair(shapes, seed, lo, hi)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y, yt = fn(ng, *ours), fn(torch, *theirs)
    assert tuple(y.shape) == tuple(yt.shape)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    if grad_fn:
        assert y.grad_fn.name() == yt.grad_fn.name()
    g = np.random.default_rng(seed + 1).standard_normal(tuple(yt.shape))
    y.backward(ng.tensor(g))
    yt.backward(torch.tensor(g))
    for a, b in zip(ours, theirs):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-11)
    return y


F = "nn.functional."
CASES = {
    # padding, every mode; constant with negative pads and a value
    "pad_constant": (lambda lib, x: lib.nn.functional.pad(x, (2, -1, 0, 1), value=1.5), [(2, 3, 4)]),
    "pad_reflect2d": (lambda lib, x: lib.nn.functional.pad(x, (1, 2, 2, 0), mode="reflect"),
                      [(2, 3, 4)]),
    "pad_replicate3d": (lambda lib, x: lib.nn.functional.pad(x, (1, 0, 2, 1, 0, 2),
                                                         mode="replicate"), [(1, 2, 2, 3)]),
    "pad_circular1d": (lambda lib, x: lib.nn.functional.pad(x, (3, 1), mode="circular"),
                       [(2, 2, 3)]),
    # interpolation
    "nearest_scale": (lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=1.7), [(1, 2, 3, 5)]),
    "nearest_exact": (lambda lib, x: lib.nn.functional.interpolate(x, size=(7, 2),
                                                               mode="nearest-exact"),
                      [(1, 2, 3, 5)]),
    "bilinear": (lambda lib, x: lib.nn.functional.interpolate(x, size=(5, 7), mode="bilinear"),
                 [(2, 1, 3, 4)]),
    "bilinear_ac": (lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=(0.6, 2.5),
                                                             mode="bilinear",
                                                             align_corners=True),
                    [(1, 2, 5, 2)]),
    "bicubic": (lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=1.5, mode="bicubic"),
                [(1, 2, 4, 3)]),
    "linear_down": (lambda lib, x: lib.nn.functional.interpolate(x, size=3, mode="linear"),
                    [(2, 2, 7)]),
    "trilinear": (lambda lib, x: lib.nn.functional.interpolate(x, size=(3, 2, 4), mode="trilinear",
                                                           align_corners=True),
                  [(1, 1, 2, 3, 2)]),
    "area": (lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 3), mode="area"),
             [(1, 2, 5, 7)]),
    "upsample_bilinear": (lambda lib, x: lib.nn.functional.upsample_bilinear(x, scale_factor=2),
                          [(1, 1, 2, 3)]),
    # layout
    "pixel_shuffle": (lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2), [(2, 8, 2, 3)]),
    "pixel_unshuffle": (lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 3), [(1, 6, 3)]),
    "unfold": (lambda lib, x: lib.nn.functional.unfold(x, (2, 3), dilation=(1, 2), padding=1,
                                                   stride=2), [(2, 2, 5, 6)]),
    "fold": (lambda lib, x: lib.nn.functional.fold(x, (4, 5), (2, 3), padding=(1, 0)),
             [(2, 12, 15)]),
    # pooling
    "max_pool1d": (lambda lib, x: lib.nn.functional.max_pool1d(x, 3, 2, 1), [(2, 3, 8)]),
    "avg_pool1d": (lambda lib, x: lib.nn.functional.avg_pool1d(x, 3, 2, 1, count_include_pad=False),
                   [(2, 3, 8)]),
    "adaptive_avg_pool1d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x, 3), [(3, 7)]),
    "adaptive_max_pool1d": (lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, 4), [(2, 3, 7)]),
    "adaptive_max_pool2d": (lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, (3, None)),
                            [(2, 2, 5, 4)]),
    "max_pool3d": (lambda lib, x: lib.nn.functional.max_pool3d(x, 2, ceil_mode=True),
                   [(1, 2, 3, 4, 5)]),
    "avg_pool3d": (lambda lib, x: lib.nn.functional.avg_pool3d(x, 3, 2, 1, divisor_override=5),
                   [(1, 2, 3, 4, 5)]),
    "adaptive_avg_pool3d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, (2, 2, 3)),
                            [(2, 3, 3, 4)]),
    # normalization
    "group_norm": (lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w, b), [(3, 4, 2, 3), (4,),
                                                                              (4,)]),
    "instance_norm": (lambda lib, x, w, b: lib.nn.functional.instance_norm(x, weight=w, bias=b),
                      [(2, 3, 4), (3,), (3,)]),
    "lrn3d": (lambda lib, x: lib.nn.functional.local_response_norm(x, 3), [(2, 5, 4)]),
    "lrn4d": (lambda lib, x: lib.nn.functional.local_response_norm(x, 2, k=2.0), [(1, 4, 2, 3)]),
    "rms_norm": (lambda lib, x, w: lib.nn.functional.rms_norm(x, (3,), w), [(2, 3), (3,)]),
    "normalize": (lambda lib, x: lib.nn.functional.normalize(x, p=3, dim=0), [(3, 4)]),
    "cosine_similarity": (lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, dim=-1),
                          [(2, 3, 4), (3, 4)]),
    "embedding_bag_mean": (lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([1, 2, 4, 2, 4, 3]), w, lib.tensor([0, 3, 3]), padding_idx=2), [(5, 3)]),
    "embedding_bag_sum": (lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([1, 2, 4, 2]), w, lib.tensor([0, 1, 4]), mode="sum", include_last_offset=True,
        per_sample_weights=lib.tensor([1.0, 2.0, 0.5, -1.0], dtype=lib.float64)), [(5, 3)]),
    "conv3d_same": (lambda lib, x, w, b: lib.nn.functional.conv3d(x, w, b, padding="same",
                                                                  dilation=(1, 2, 1), groups=2),
                    [(2, 4, 3, 4, 3), (2, 2, 2, 2, 1), (2,)]),
    "conv3d_unbatched": (lambda lib, x, w: lib.nn.functional.conv3d(x, w, stride=2, padding=1),
                         [(2, 3, 4, 5), (3, 2, 3, 2, 2)]),
    "embedding_bag_max": (lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([[1, 2], [4, 1]]), w, mode="max"), [(5, 3)]),
}


@pytest.mark.parametrize("name", CASES)
def test_values_names_and_gradients(name):
    fn, shapes = CASES[name]
    _grad_check(fn, shapes)


@pytest.mark.parametrize("mode,padding_mode,align", [
    ("bilinear", "zeros", False), ("bilinear", "border", True), ("bilinear", "reflection", False),
    ("bilinear", "reflection", True), ("nearest", "zeros", True)])
def test_grid_sample(mode, padding_mode, align):
    # a composite here (torch's node is GridSampler2DBackward0): values and both gradients
    def fn(lib, x, grid):
        return lib.nn.functional.grid_sample(x, grid, mode, padding_mode, align)
    _grad_check(fn, [(2, 3, 4, 5), (2, 3, 4, 2)], seed=5, lo=-1.3, hi=1.3, grad_fn=False)
    if padding_mode != "reflection":
        return
    x = ng.tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 3)), requires_grad=True)
    grid = ng.tensor(np.random.default_rng(1).uniform(-1.2, 1.2, (1, 2, 2, 2)),
                     requires_grad=True)
    assert ng.autograd.gradgradcheck(lambda a, b: fn(ng, a, b), (x, grid), atol=1e-5, rtol=1e-3)


def test_affine_grid_and_theta_gradient():
    _grad_check(lambda lib, th: lib.nn.functional.affine_grid(th, (2, 1, 3, 4), False),
                [(2, 2, 3)])
    _grad_check(lambda lib, th: lib.nn.functional.affine_grid(th, [1, 2, 2, 3, 2], True),
                [(1, 3, 4)])


@pytest.mark.parametrize("name", ["pdist", "pairwise_distance"])
def test_distances_with_other_grad_fn_names(name):
    # torch's PdistBackward0 and NormBackward1 are composites here (a norm's node)
    fn = {"pdist": lambda lib, x: lib.nn.functional.pdist(x, p=1.5),
          "pairwise_distance": lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b, p=1)}[name]
    _grad_check(fn, [(4, 3)] if name == "pdist" else [(3, 4), (3, 4)], grad_fn=False)


def test_pool_indices_and_integer_values():
    def f(lib):
        x = lib.tensor(np.random.default_rng(3).standard_normal((2, 3, 5, 4)))
        return [lib.nn.functional.adaptive_max_pool2d(x, (2, 3), return_indices=True)[1],
                lib.nn.functional.max_pool1d(x[0], 2, return_indices=True)[1],
                lib.nn.functional.max_pool3d(x[None], 2, return_indices=True)[1],
                lib.nn.functional.adaptive_max_pool1d(x[0], 3, return_indices=True)[1]]
    same_as_torch(f)

    def g(lib):
        x = lib.arange(24).reshape(1, 2, 3, 4)
        return [lib.nn.functional.pad(x, (1, 1), value=2.5), lib.nn.functional.pad(x, (1, 0, 0, 2),
                                                                                mode="reflect"),
                lib.nn.functional.pixel_shuffle(x.reshape(1, 8, 1, 3), 2),
                lib.nn.functional.one_hot(lib.tensor([[0, 3], [2, 1]])),
                lib.nn.functional.one_hot(lib.tensor([1, 0]), 4)]
    same_as_torch(g)


ERRORS = [
    lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1,)),
    lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1, 1, 1, 1, 1, 1)),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (3, 3), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (4, 0), mode="circular"),
    lambda lib: lib.nn.functional.pad(lib.ones(2, 3, 4, 5), (1, 1), mode="replicate"),
    lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1, 1), mode="bogus"),
    lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1, 1), mode="reflect", value=2.0),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 3), scale_factor=2, mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(2, 3), scale_factor=2),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 3), size=2, scale_factor=2),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 3), size=(2, 2)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 3), size=2, align_corners=True),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 3), size=0),
    lambda lib: lib.nn.functional.interpolate(lib.arange(6).reshape(1, 2, 3), scale_factor=2,
                                          mode="linear"),
    lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(1, 5, 2, 2), 2),
    lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(1, 1, 3, 4), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 13, 6), (3, 4), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 12, 5), (3, 4), 2),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(3), 2),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(3), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(2, 3, 0), 2),
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(2, 3), 2),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 3, 4), 2),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4, 4), 2, lib.ones(3)),
    lambda lib: lib.nn.GroupNorm(2, 4)(lib.ones(2, 4, 3, dtype=lib.float64)),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4, 4, dtype=lib.int64), 2),
    lambda lib: lib.nn.functional.local_response_norm(lib.ones(2, 3), 2),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1.0])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([3]), 2),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(3, 2)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(3, 2), lib.tensor([1]),
                                            mode="max"),
    lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5)),
    lambda lib: lib.nn.functional.instance_norm(lib.ones(2, 3, 1)),
    lambda lib: lib.nn.functional.conv3d(lib.ones(3, 4, 5), lib.ones(1, 3, 1, 1, 1)),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 2, 3, 4), lib.ones(2, 2, 2, 2),
                                              align_corners=False),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 2, 3, 4), lib.ones(1, 2, 2, 3),
                                              align_corners=False),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 2, 3, 4), lib.ones(1, 2, 2, 2),
                                              mode="box"),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(2, 3, 3), (2, 1, 3, 4), False),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(2, 2, 3), (2, 1, 3), False),
    lambda lib: lib.nn.functional.conv3d(lib.ones(1, 2, 3, 4, 5), lib.ones(1, 3, 1, 1, 1)),
    lambda lib: lib.nn.functional.conv3d(lib.ones(1, 2, 3, 4, 5), lib.ones(1, 2, 4, 1, 1)),
    lambda lib: lib.nn.functional.conv3d(lib.arange(24).reshape(1, 1, 2, 3, 4),
                                         lib.ones(2, 1, 1, 2, 2, dtype=lib.int64)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    same_as_torch(ERRORS[k])


def test_dropout_variants_drop_whole_channels_and_scale():
    ng.manual_seed(0)
    x = ng.ones(20, 30, 4, 5, requires_grad=True)
    y = ng.nn.functional.dropout2d(x, 0.4)
    assert y.grad_fn.name() == "MulBackward0"
    v = y.detach().numpy()
    per_channel = v.reshape(20, 30, -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # whole channels kept or dropped
    assert np.all(np.isclose(v, 0) | np.isclose(v, 1 / 0.6))
    assert 0.3 < (v == 0).mean() < 0.5
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), v)
    kept = ng.nn.functional.dropout1d(x[0], 0.5, training=False)
    assert kept is x[0] or np.array_equal(kept.detach().numpy(), x[0].detach().numpy())
    # alpha dropout keeps a standardized input's mean 0 and variance 1
    ng.manual_seed(1)
    z = ng.tensor(np.random.default_rng(0).standard_normal((400, 500)), requires_grad=True)
    s = ng.nn.functional.alpha_dropout(z, 0.3, training=True)
    assert s.grad_fn.name() == "AddBackward0"
    v = s.detach().numpy()
    assert abs(v.mean()) < 0.02 and abs(v.std() - 1.0) < 0.02
    assert ng.nn.functional.alpha_dropout(z, 0.3) is z  # training=False by default
    f = ng.nn.functional.feature_alpha_dropout(z[:, :, None], 0.3, training=True).detach()
    assert np.all(f.numpy().min(-1) == f.numpy().max(-1))


MODULES = [
    "nn.EmbeddingBag(10, 3)", "nn.EmbeddingBag(10, 3, mode='sum', padding_idx=0, max_norm=1.0)",
    "nn.ConvTranspose1d(2, 3, 3, stride=2, output_padding=1)",
    "nn.ConvTranspose2d(2, 4, 3, groups=2, bias=False, dilation=2)", "nn.MaxPool1d(2)",
    "nn.AvgPool1d(3, 2, 1, True, False)", "nn.AdaptiveAvgPool1d(3)",
    "nn.AdaptiveMaxPool2d((2, 3))", "nn.Upsample(scale_factor=2)",
    "nn.Upsample(size=(3, 4), mode='bilinear', align_corners=True)",
    "nn.UpsamplingNearest2d(scale_factor=2)", "nn.UpsamplingBilinear2d(size=4)",
    "nn.PixelShuffle(2)", "nn.PixelUnshuffle(2)", "nn.ZeroPad2d((1, 2, 3, 4))",
    "nn.ConstantPad1d(2, 3.5)", "nn.ConstantPad2d((1, 0, 2, 0), 1)", "nn.ReflectionPad1d(2)",
    "nn.ReflectionPad2d((1, 1, 2, 0))", "nn.ReplicationPad1d(1)", "nn.ReplicationPad2d(1)",
    "nn.GroupNorm(2, 4)", "nn.GroupNorm(2, 4, affine=False)", "nn.InstanceNorm1d(3)",
    "nn.InstanceNorm2d(3, affine=True, track_running_stats=True)", "nn.RMSNorm(4)",
    "nn.RMSNorm([2, 3], eps=1e-5, elementwise_affine=False)", "nn.LocalResponseNorm(2)",
    "nn.Dropout1d()", "nn.Dropout2d(0.3)", "nn.AlphaDropout(0.2)", "nn.CosineSimilarity()",
    "nn.PairwiseDistance()", "nn.LazyLinear(3)", "nn.Fold((4, 5), 2)",
    "nn.Unfold(2, padding=1)", "nn.MaxPool3d(2)", "nn.AvgPool3d(2)",
    "nn.Conv3d(4, 6, (1, 2, 3), stride=2, padding=(0, 1, 1), groups=2, bias=False)",
    "nn.Conv3d(2, 2, 3, padding='same', padding_mode='reflect')",
]


def test_module_reprs_and_state_dicts():
    for src in MODULES:
        ours, theirs = eval("ng." + src), eval("torch." + src)  # noqa: S307
        assert repr(ours) == repr(theirs)
        if "Lazy" in src:  # torch's uninitialized parameters have no shape
            continue
        assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
            {k: tuple(v.shape) for k, v in theirs.state_dict().items()}


def _load(ours, theirs):
    ours.load_state_dict({k: ng.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})


@pytest.mark.parametrize("src,shape", [
    ("nn.ConvTranspose2d(4, 6, (2, 3), stride=2, padding=1, groups=2, dtype=DT)", (2, 4, 3, 3)),
    ("nn.ConvTranspose1d(2, 3, 3, stride=2, dtype=DT)", (2, 2, 4)),
    ("nn.GroupNorm(3, 6, dtype=DT)", (2, 6, 3)),
    ("nn.Conv3d(2, 3, 2, padding=1, dtype=DT)", (1, 2, 2, 3, 2)),
    ("nn.Conv3d(2, 2, (1, 2, 3), padding=(0, 1, 2), padding_mode='circular', dtype=DT)",
     (1, 2, 2, 3, 2)),
    ("nn.EmbeddingBag(6, 3, mode='max', dtype=DT)", None),
])
def test_modules_loaded_from_torch_agree(src, shape):
    theirs = eval("torch." + src.replace("DT", "torch.float64"))  # noqa: S307
    ours = eval("ng." + src.replace("DT", "ng.float64"))  # noqa: S307
    _load(ours, theirs)
    if shape is None:
        args = [(lib.tensor([[0, 2, 5], [1, 1, 3]]),) for lib in (ng, torch)]
    else:
        x = np.random.default_rng(0).standard_normal(shape)
        args = [(ng.tensor(x),), (torch.tensor(x),)]
    y, yt = ours(*args[0]), theirs(*args[1])
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    y.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-10,
                               atol=1e-12)


def test_conv_transpose_output_size():
    def f(lib):
        lib.manual_seed(0)
        m = lib.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
        _ = m
        x = lib.ones(1, 2, 4, 4, dtype=lib.float64)
        return [tuple(m(x, output_size=(8, 8)).shape), tuple(m(x, output_size=[1, 3, 7, 8]).shape)]
    same_as_torch(f)
    m = ng.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    with pytest.raises(ValueError, match="requested an output size"):
        m(ng.ones(1, 2, 4, 4), output_size=(10, 8))


def test_instance_norm_running_stats_and_eval():
    theirs = torch.nn.InstanceNorm1d(3, affine=True, track_running_stats=True).double()
    ours = ng.nn.InstanceNorm1d(3, affine=True, track_running_stats=True).double()
    x = np.random.default_rng(1).standard_normal((4, 3, 5))
    for _ in range(2):
        ours(ng.tensor(x))
        theirs(torch.tensor(x))
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(ours, name).numpy(), getattr(theirs, name).numpy(),
                                   rtol=1e-12)
    ours.eval()
    theirs.eval()
    y = ours(ng.tensor(x[0]))  # unbatched
    assert y.grad_fn is None or y.grad_fn.name()
    np.testing.assert_allclose(y.detach().numpy(), theirs(torch.tensor(x[0])).detach().numpy(),
                               rtol=1e-10)


def test_lazy_linear_materializes_on_first_call():
    m = ng.nn.LazyLinear(4)
    params = list(m.parameters())
    y = m(ng.ones(2, 5))
    assert tuple(y.shape) == (2, 4) and type(m) is ng.nn.Linear
    assert repr(m) == "Linear(in_features=5, out_features=4, bias=True)"
    assert [tuple(p.shape) for p in params] == [(4, 5), (4,)]  # the same objects, filled
    assert params[0] is m.weight and params[1] is m.bias
    y.sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), np.full((4, 5), 2.0))
