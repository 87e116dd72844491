"""torch's top-level forms of nn.functional ops (torch.conv2d, torch.layer_norm, torch.kl_div
with its int reduction, ...) against torch 2.13: values in float32 and float64, grad_fn
names, gradients, keyword calls, the random ops' draws after manual_seed, and errors."""

import warnings

import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng

torch = pytest.importorskip("torch")

FLOAT = "f"  # an input drawn as floats that requires grad
CONST = "c"  # floats that do not (targets, running statistics)


def _arrays(spec, seed):
    rng = np.random.default_rng(seed)
    out = []
    for s in spec:
        if isinstance(s, np.ndarray):  # given as is (indices, signs)
            out.append((s, False))
        else:
            kind, shape, lo, hi = (*s, -2.0, 2.0)[:4]  # (kind, shape[, lo, hi])
            out.append((rng.uniform(lo, hi, shape), kind == FLOAT))
    return out


def _run(lib, fn, arrays, dtype):
    """fn's outputs, its first output's node and the inputs' gradients of a weighted sum."""
    dt = getattr(lib, dtype)
    ts = [lib.tensor(a, dtype=dt, requires_grad=g) if a.dtype.kind == "f"
          else lib.tensor(a) for a, g in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, *ts)
    outs = out if isinstance(out, tuple) else (out,)
    first = outs[0]
    node = first.grad_fn.name() if first.grad_fn is not None else None
    grads = None
    if first.requires_grad:
        w = np.cos(np.arange(first.numel()) + 0.5).reshape(tuple(first.shape))
        (first * lib.tensor(w, dtype=dt)).sum().backward()
        grads = [None if t.grad is None else t.grad.numpy() for t in ts]
    return [o.detach().numpy() for o in outs], node, grads


def _i(*v):
    return np.array(v, np.int64)


SIGNS = np.array([1.0, -1.0, 1.0])
# name -> (fn(lib, *inputs), input specs, check the grad_fn name)
CASES = {
    "adaptive_avg_pool1d": (lambda lib, x: lib.adaptive_avg_pool1d(x, 2), [(FLOAT, (2, 3, 5))]),
    "adaptive_max_pool1d": (lambda lib, x: lib.adaptive_max_pool1d(x, output_size=3),
                            [(FLOAT, (2, 3, 5))]),
    "affine_grid_generator": (lambda lib, t: lib.affine_grid_generator(t, [2, 1, 3, 4], False),
                              [(FLOAT, (2, 2, 3))]),
    "affine_grid_generator_3d": (lambda lib, t: lib.affine_grid_generator(
        theta=t, size=[1, 1, 2, 3, 2], align_corners=True), [(FLOAT, (1, 3, 4))]),
    "avg_pool1d": (lambda lib, x: lib.avg_pool1d(x, 3, 2, 1, False, False), [(FLOAT, (2, 3, 6))]),
    "batch_norm_train": (lambda lib, x, w, b: lib.batch_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                         True),
                         [(FLOAT, (4, 3)), (FLOAT, (3,)), (FLOAT, (3,))]),
    "batch_norm_eval": (lambda lib, x, w, b, m, v: lib.batch_norm(
        input=x, weight=w, bias=b, running_mean=m, running_var=v, training=False, momentum=0.1,
        eps=1e-5, cudnn_enabled=False),
        [(FLOAT, (4, 3, 2)), (FLOAT, (3,)), (FLOAT, (3,)), (CONST, (3,)), (CONST, (3,), 0.5, 2)]),
    "bilinear": (lambda lib, a, b, w, c: lib.bilinear(a, b, w, c),
                 [(FLOAT, (3, 2)), (FLOAT, (3, 4)), (FLOAT, (5, 2, 4)), (FLOAT, (5,))]),
    "bce_with_logits_none": (lambda lib, x, t: lib.binary_cross_entropy_with_logits(x, t),
                             [(FLOAT, (3, 4)), (CONST, (3, 4), 0, 1)]),
    "bce_with_logits_mean": (lambda lib, x, t, w, p: lib.binary_cross_entropy_with_logits(
        x, t, w, pos_weight=p, reduction=1),
        [(FLOAT, (3, 4)), (CONST, (3, 4), 0, 1), (CONST, (3, 4), 0, 1), (CONST, (4,), 0, 2)]),
    "celu": (lambda lib, x: lib.celu(x, 0.5), [(FLOAT, (3, 4))]),
    # (the in-place nodes: torch's CeluBackward1, EluBackward1, ThresholdBackward1; numbagrad
    # names them as the out-of-place ones, as F.celu_, selu_ and threshold_ do. An alpha that
    # float32 holds exactly: torch's celu_ backward takes 1 / alpha in float32)
    "celu_": (lambda lib, x: lib.celu_(x * 1.0, alpha=0.5), [(FLOAT, (3, 4))], False),
    "constant_pad_nd": (lambda lib, x: lib.constant_pad_nd(x, [1, 2, 0, -1], 0.5), [(FLOAT, (2, 3))]),
    "conv1d": (lambda lib, x, w, b: lib.conv1d(x, w, b, 2, 1), [(FLOAT, (2, 3, 7)), (FLOAT, (4, 3, 3)),
                                                            (FLOAT, (4,))]),
    "conv1d_same": (lambda lib, x, w: lib.conv1d(input=x, weight=w, padding="same", dilation=2),
                    [(FLOAT, (1, 2, 6)), (FLOAT, (2, 2, 3))]),
    "conv2d": (lambda lib, x, w, b: lib.conv2d(x, w, b, 1, 1, 1, 2),
               [(FLOAT, (1, 4, 4, 5)), (FLOAT, (2, 2, 3, 3)), (FLOAT, (2,))]),
    "conv3d": (lambda lib, x, w: lib.conv3d(x, w, None, 1, (0, 1, 0)),
               [(FLOAT, (1, 2, 3, 3, 4)), (FLOAT, (2, 2, 2, 2, 2))]),
    "conv_transpose1d": (lambda lib, x, w, b: lib.conv_transpose1d(x, w, b, 2, 1, 1),
                         [(FLOAT, (2, 3, 4)), (FLOAT, (3, 2, 3)), (FLOAT, (2,))]),
    "conv_transpose2d": (lambda lib, x, w: lib.conv_transpose2d(x, w, stride=2, dilation=1),
                         [(FLOAT, (1, 2, 3, 3)), (FLOAT, (2, 3, 2, 2))]),
    "cosine_embedding_loss": (lambda lib, a, b, t: lib.cosine_embedding_loss(a, b, t, 0.1, 1),
                              [(FLOAT, (3, 4)), (FLOAT, (3, 4)), SIGNS]),
    "cosine_similarity": (lambda lib, a, b: lib.cosine_similarity(a, b, 0),
                          [(FLOAT, (3, 4)), (FLOAT, (3, 4))]),
    "ctc_loss": (lambda lib, x, tg: lib.ctc_loss(x.log_softmax(2), tg, [6, 5], [2, 3], 0, 1),
                 [(FLOAT, (6, 2, 4)), _i([1, 2, 0], [3, 1, 2])]),
    "ctc_loss_none": (lambda lib, x, tg: lib.ctc_loss(x.log_softmax(2), tg, lib.tensor([6, 5]),
                                                  lib.tensor([2, 3]), zero_infinity=True),
                      [(FLOAT, (6, 2, 4)), _i([1, 2, 0], [3, 1, 2])]),
    "embedding": (lambda lib, w, i: lib.embedding(w, i), [(FLOAT, (5, 3)), _i([[1, 4], [1, 0]])]),
    "embedding_padding": (lambda lib, w, i: lib.embedding(weight=w, indices=i, padding_idx=1),
                          [(FLOAT, (5, 3)), _i(1, 3, 1, 2)]),
    "embedding_bag_sum": (lambda lib, w, i, o: lib.embedding_bag(w, i, o)[0],
                          [(FLOAT, (5, 3)), _i(0, 2, 4, 1, 3), _i(0, 2)]),
    "embedding_bag_weighted": (lambda lib, w, i, o, p: lib.embedding_bag(
        w, i, o, per_sample_weights=p)[0],
        [(FLOAT, (5, 3)), _i(0, 2, 4, 1), _i(0, 1), (CONST, (4,))]),
    "embedding_bag_mean": (lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, 1)[0],
                           [(FLOAT, (5, 3)), _i(0, 2, 4, 1, 3), _i(0, 2, 5)]),
    "embedding_bag_max": (lambda lib, w, i, o: lib.embedding_bag(w, i, o, mode=2,
                                                             include_last_offset=True)[0],
                          [(FLOAT, (5, 3)), _i(0, 2, 4, 1, 3), _i(0, 2, 5)]),
    "grid_sampler": (lambda lib, x, g: lib.grid_sampler(x, g, 0, 1, False),
                     [(FLOAT, (1, 2, 3, 4)), (FLOAT, (1, 2, 3, 2), -1.2, 1.2)], False),
    "grid_sampler_2d": (lambda lib, x, g: lib.grid_sampler_2d(x, g, 1, 2, True),
                        [(FLOAT, (2, 1, 3, 3)), (CONST, (2, 2, 2, 2), -1.2, 1.2)], False),
    "grid_sampler_3d": (lambda lib, x, g: lib.grid_sampler_3d(x, g, 0, 2, False),
                        [(FLOAT, (1, 2, 2, 3, 4)), (FLOAT, (1, 2, 2, 3, 3), -1.2, 1.2)], False),
    "grid_sampler_3d_nearest": (lambda lib, x, g: lib.grid_sampler(x, g, 1, 1, True),
                                [(FLOAT, (2, 1, 3, 2, 2)), (FLOAT, (2, 1, 2, 2, 3), -1.2, 1.2)],
                                False),
    # (F.grid_sample's own 5-D path, which grid_sampler_3d runs)
    "grid_sampler_3d_functional": (lambda lib, x, g: lib.nn.functional.grid_sample(
        x, g, "bilinear", "zeros", True), [(FLOAT, (1, 1, 2, 2, 3)), (FLOAT, (1, 3, 1, 2, 3))],
        False),
    "group_norm": (lambda lib, x, w, b: lib.group_norm(x, 2, w, b, 1e-5, False),
                   [(FLOAT, (2, 4, 3)), (FLOAT, (4,)), (FLOAT, (4,))]),
    "hardshrink": (lambda lib, x: lib.hardshrink(x, 0.3), [(FLOAT, (3, 4))]),
    "hardshrink_method": (lambda lib, x: x.hardshrink(lambd=0.7), [(FLOAT, (3, 4))]),
    "hinge_embedding_loss": (lambda lib, x, t: lib.hinge_embedding_loss(x, t, 0.5, 2),
                             [(FLOAT, (3,)), SIGNS]),
    "instance_norm": (lambda lib, x, w, b: lib.instance_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                         False),
                      [(FLOAT, (2, 3, 4)), (FLOAT, (3,)), (FLOAT, (3,))]),
    "kl_div_none": (lambda lib, x, t: lib.kl_div(x, t), [(FLOAT, (3, 4)), (CONST, (3, 4), 0, 1)]),
    "kl_div_mean": (lambda lib, x, t: lib.kl_div(x, t, 1), [(FLOAT, (3, 4)), (CONST, (3, 4), 0, 1)]),
    "kl_div_log_target": (lambda lib, x, t: lib.kl_div(x, t, reduction=2, log_target=True),
                          [(FLOAT, (3, 4)), (FLOAT, (3, 4))]),
    "layer_norm": (lambda lib, x, w, b: lib.layer_norm(x, [4], w, b, 1e-5, False),
                   [(FLOAT, (3, 4)), (FLOAT, (4,)), (FLOAT, (4,))]),
    "margin_ranking_loss": (lambda lib, a, b, t: lib.margin_ranking_loss(a, b, t, 0.2, 1),
                            [(FLOAT, (3,)), (FLOAT, (3,)), SIGNS]),
    "max_pool1d": (lambda lib, x: lib.max_pool1d(x, 3, 2, 1, 1, True), [(FLOAT, (2, 3, 7))]),
    "max_pool1d_with_indices": (lambda lib, x: lib.max_pool1d_with_indices(x, 3, 2, 1)[0],
                                [(FLOAT, (2, 3, 7))]),
    "channel_shuffle": (lambda lib, x: lib.channel_shuffle(x, 2), [(FLOAT, (2, 4, 3))]),
    "conv_transpose3d": (lambda lib, x, w: lib.conv_transpose3d(x, w, stride=2),
                         [(FLOAT, (1, 2, 2, 3, 2)), (FLOAT, (2, 3, 2, 2, 2))]),
    "max_pool2d": (lambda lib, x: lib.max_pool2d(x, 2), [(FLOAT, (1, 2, 4, 5))]),
    "max_pool3d": (lambda lib, x: lib.max_pool3d(x, kernel_size=2, stride=1, padding=1),
                   [(FLOAT, (1, 1, 3, 2, 3))]),
    # (torch's nodes NormBackward1 and PdistBackward0; numbagrad's F functions compose norms)
    "pairwise_distance": (lambda lib, a, b: lib.pairwise_distance(a, b, 3.0, 1e-6, True),
                          [(FLOAT, (3, 4)), (FLOAT, (3, 4))], False),
    "pdist": (lambda lib, x: lib.pdist(x, 1.5), [(FLOAT, (4, 3))], False),
    "pixel_shuffle": (lambda lib, x: lib.pixel_shuffle(x, 2), [(FLOAT, (1, 8, 2, 3))]),
    "pixel_unshuffle": (lambda lib, x: lib.pixel_unshuffle(x, downscale_factor=2),
                        [(FLOAT, (1, 2, 4, 2))]),
    "poisson_nll_loss": (lambda lib, x, t: lib.poisson_nll_loss(x, t, True, True, 1e-8, 1),
                         [(FLOAT, (3, 4)), (CONST, (3, 4), 0, 3)]),
    "poisson_nll_loss_none": (lambda lib, x, t: lib.poisson_nll_loss(x, t, False, False, 1e-8, 0),
                              [(FLOAT, (3, 4), 0.1, 2), (CONST, (3, 4), 0, 3)]),
    "prelu": (lambda lib, x, w: lib.prelu(x, w), [(FLOAT, (2, 3, 4)), (FLOAT, (3,))]),
    "prelu_method": (lambda lib, x, w: x.prelu(w), [(FLOAT, (2, 3)), (FLOAT, (1,))]),
    "rms_norm": (lambda lib, x, w: lib.rms_norm(x, [2, 4], w, 1e-6),
                 [(FLOAT, (3, 2, 4)), (FLOAT, (2, 4))]),
    # (torch's node is RreluWithNoiseBackward0, numbagrad's leaky_relu's, as F.rrelu's)
    "rrelu_eval": (lambda lib, x: lib.rrelu(x, 0.1, 0.3), [(FLOAT, (3, 4))], False),
    "selu": (lambda lib, x: lib.selu(x), [(FLOAT, (3, 4))]),
    "selu_": (lambda lib, x: lib.selu_(x * 1.0), [(FLOAT, (3, 4))], False),
    "threshold": (lambda lib, x: lib.threshold(x, 0.1, 2.0), [(FLOAT, (3, 4))]),
    "threshold_": (lambda lib, x: lib.threshold_(x * 1.0, threshold=-0.5, value=0.0),
                   [(FLOAT, (3, 4))], False),
    "triplet_margin_loss": (lambda lib, a, p, n: lib.triplet_margin_loss(a, p, n, 0.5, 1.0, 1e-6,
                                                                     True, 1),
                            [(FLOAT, (3, 4)), (FLOAT, (3, 4)), (FLOAT, (3, 4))]),
    "triplet_margin_loss_none": (lambda lib, a, p, n: lib.triplet_margin_loss(a, p, n),
                                 [(FLOAT, (3, 4)), (FLOAT, (3, 4)), (FLOAT, (3, 4))]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_nodes_and_gradients(name, dtype):
    fn, spec, *flags = CASES[name]
    arrays = _arrays(spec, sum(map(ord, name)))
    ours, node, grads = _run(ng, fn, arrays, dtype)
    theirs, tnode, tgrads = _run(torch, fn, arrays, dtype)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-11}
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, **tol)
    if not flags or flags[0]:
        assert node == tnode
    assert (grads is None) == (tgrads is None)
    for a, b in zip(grads or (), tgrads or (), strict=True):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, **tol)


def test_embedding_bag_returns_four_tensors():
    # torch specifies the output only: the other three are its backward's buffers
    w = np.random.default_rng(0).standard_normal((5, 3))
    for mode in (0, 1, 2):
        r = ng.embedding_bag(ng.tensor(w), ng.tensor([0, 2, 4, 1]), ng.tensor([0, 2]), False,
                             mode)
        t = torch.embedding_bag(torch.tensor(w), torch.tensor([0, 2, 4, 1]),
                                torch.tensor([0, 2]), False, mode)
        assert len(r) == len(t) == 4 and all(a.dtype is ng.int64 for a in r[1:])
        np.testing.assert_allclose(r[0].numpy(), t[0].numpy(), rtol=1e-12)


def test_embedding_renorm_():
    def fn(lib):
        w = lib.tensor(np.linspace(-2, 2, 15).reshape(5, 3))
        r = lib.embedding_renorm_(w, lib.tensor([0, 3, 0, 2]), 1.0, 2.0)
        return r is w, w, w._version > 0
    same_as_torch(fn)
    same_as_torch(lambda lib: lib.embedding_renorm_(lib.ones(5, 3), lib.tensor([0, 7, 9]),
                                                    1.0, 2.0))
    same_as_torch(lambda lib: lib.embedding_renorm_(lib.ones(2, 3, requires_grad=True),
                                                    lib.tensor([0]), 9.0, 2.0))
    same_as_torch(lambda lib: lib.embedding_renorm_(
        lib.tensor(np.linspace(-2, 2, 15).reshape(5, 3), dtype=lib.float32),
        lib.tensor([4, 1]), max_norm=0.5, norm_type=1.0), decimals=6)


def test_top_level_forms_are_the_functional_ones_where_torch_s_are():
    assert ng.conv2d is ng.nn.functional.conv2d and ng.pdist is ng.nn.functional.pdist
    assert ng.rrelu_ is ng.nn.functional.rrelu_ and ng.celu_ is ng.nn.functional.celu_
    assert ng.conv_transpose3d is ng.nn.functional.conv_transpose3d
    assert ng.channel_shuffle is ng.nn.functional.channel_shuffle


def _random_cases():
    return {
        "dropout": lambda lib, x: lib.dropout(input=x, p=0.4, train=True),
        "dropout_": lambda lib, x: lib.dropout_(x, 0.4, True),
        "alpha_dropout": lambda lib, x: lib.alpha_dropout(x, 0.3, True),
        "alpha_dropout_": lambda lib, x: lib.alpha_dropout_(x, p=0.3, train=True),
        "feature_dropout": lambda lib, x: lib.feature_dropout(x, 0.5, True),
        "feature_dropout_": lambda lib, x: lib.feature_dropout_(x, 0.5, train=True),
        "feature_alpha_dropout": lambda lib, x: lib.feature_alpha_dropout(x, 0.5, True),
        "feature_alpha_dropout_": lambda lib, x: lib.feature_alpha_dropout_(x, 0.5, True),
        "rrelu_train": lambda lib, x: lib.rrelu(x, 0.1, 0.3, True),
        "rrelu_train_": lambda lib, x: lib.rrelu_(x, 0.1, 0.3, training=True),
    }


@pytest.mark.parametrize("name", sorted(_random_cases()))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_forms_draw_as_torch(name, dtype):
    fn = _random_cases()[name]
    x = np.random.default_rng(3).uniform(-2, 2, (4, 3, 5))

    def run(lib):
        lib.manual_seed(7)
        t = lib.tensor(x, dtype=getattr(lib, dtype))
        first = fn(lib, t)
        second = fn(lib, lib.tensor(x, dtype=getattr(lib, dtype)))  # the stream goes on
        return first, second, (first is t) == name.endswith("_")
    same_as_torch(run, decimals=5 if dtype == "float32" else 12)


def test_random_forms_off_and_gradients():
    x = np.random.default_rng(4).uniform(-2, 2, (3, 4))
    for name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
        def run(lib, name=name):
            t = lib.tensor(x)
            off = getattr(lib, name)(t, 0.5, False)
            lib.manual_seed(2)
            leaf = lib.tensor(x, requires_grad=True)
            y = getattr(lib, name)(leaf, 0.5, True)
            y.backward(lib.ones_like(y))
            return off is t, y, leaf.grad
        same_as_torch(run)

    def feature_edges(lib):
        t = lib.tensor(x[0])  # 1-d: no mask drawn, no error
        return (lib.feature_dropout(t, 0.5, False) is t, lib.feature_alpha_dropout(t, 0.0, True) is t,
                lib.feature_dropout(t, 1.0, True), lib.feature_alpha_dropout(t, 1.0, True))
    same_as_torch(feature_edges)

    def rrelu_grad(lib):
        lib.manual_seed(5)
        leaf = lib.tensor(x, requires_grad=True)
        y = lib.rrelu(leaf, training=True)
        y.sum().backward()
        gen = lib.Generator().manual_seed(9)
        return y, leaf.grad, lib.rrelu(lib.tensor(x), 0.2, 0.4, True, gen)
    same_as_torch(rrelu_grad)


def _t(lib, *shape):
    return lib.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape))


ERRORS = {
    "adaptive_avg_pool1d": lambda lib: lib.adaptive_avg_pool1d(_t(lib, 3), 2),
    "adaptive_max_pool1d": lambda lib: lib.adaptive_max_pool1d(_t(lib, 3), 2),
    "affine_grid_generator": lambda lib: lib.affine_grid_generator(_t(lib, 1, 2, 3), [1, 1, 2], False),
    "alpha_dropout": lambda lib: lib.alpha_dropout(_t(lib, 3), 1.5, True),
    "alpha_dropout_": lambda lib: lib.alpha_dropout_(_t(lib, 3), -0.5, True),
    "dropout": lambda lib: lib.dropout(_t(lib, 3), 1.5, True),
    "dropout_": lambda lib: lib.dropout_(_t(lib, 3), 1.5, True),
    "feature_dropout": lambda lib: lib.feature_dropout(_t(lib, 3), 0.5, True),
    "feature_dropout_": lambda lib: lib.feature_dropout_(_t(lib, 3, 2), 2.0, True),
    "feature_alpha_dropout": lambda lib: lib.feature_alpha_dropout(_t(lib, 4), 0.5, True),
    "feature_alpha_dropout_": lambda lib: lib.feature_alpha_dropout_(_t(lib, 4), 0.5, True),
    "avg_pool1d": lambda lib: lib.avg_pool1d(_t(lib, 1, 1, 4), 2, 1, 2),
    "batch_norm": lambda lib: lib.batch_norm(_t(lib, 2, 3), None, None, _t(lib, 2), _t(lib, 2), False, 0.1,
                                         1e-5, False),
    "bilinear": lambda lib: lib.bilinear(_t(lib, 2, 3), _t(lib, 2, 4), _t(lib, 5, 2, 4)),
    "binary_cross_entropy_with_logits": lambda lib: lib.binary_cross_entropy_with_logits(
        _t(lib, 2), _t(lib, 2), None, None, "mean"),
    "celu": lambda lib: lib.celu(lib.tensor([1, 2])),
    "celu_": lambda lib: lib.celu_(lib.tensor([1.0], requires_grad=True)),
    "constant_pad_nd": lambda lib: lib.constant_pad_nd(_t(lib, 2, 3), [1, 1, 1]),
    "conv1d": lambda lib: lib.conv1d(_t(lib, 1, 2, 5), _t(lib, 3, 3, 2)),
    "conv2d": lambda lib: lib.conv2d(_t(lib, 1, 2, 5), _t(lib, 3, 3, 2, 2)),
    "conv3d": lambda lib: lib.conv3d(_t(lib, 1, 2, 3, 3, 3), _t(lib, 1, 3, 2, 2, 2)),
    "conv_transpose1d": lambda lib: lib.conv_transpose1d(_t(lib, 1, 2, 5), _t(lib, 3, 3, 2)),
    "conv_transpose2d": lambda lib: lib.conv_transpose2d(_t(lib, 1, 2, 3, 3), _t(lib, 3, 3, 2, 2)),
    "cosine_embedding_loss": lambda lib: lib.cosine_embedding_loss(_t(lib, 2, 3), _t(lib, 2, 4),
                                                               lib.tensor([1.0, -1.0])),
    "cosine_similarity": lambda lib: lib.cosine_similarity(_t(lib, 2, 3), _t(lib, 2, 3), 2),
    "ctc_loss": lambda lib: lib.ctc_loss(_t(lib, 4, 1, 3), lib.tensor([[1, 2]]), [4], [2], 5, 1),
    "embedding": lambda lib: lib.embedding(_t(lib, 3, 2), lib.tensor([0, 3])),
    "embedding_bag": lambda lib: lib.embedding_bag(_t(lib, 3, 2), lib.tensor([0, 1]), lib.tensor([0]),
                                               False, 3),
    "embedding_renorm_": lambda lib: lib.embedding_renorm_(_t(lib, 3, 2), lib.tensor([0.0]), 1.0, 2.0),
    "grid_sampler_2d": lambda lib: lib.grid_sampler_2d(_t(lib, 1, 1, 2, 2, 2), _t(lib, 1, 1, 1, 1, 3),
                                                   0, 0, False),
    "grid_sampler": lambda lib: lib.grid_sampler(_t(lib, 2, 1, 2, 2), _t(lib, 1, 1, 1, 2), 0, 0, False),
    "grid_sampler_3d": lambda lib: lib.grid_sampler_3d(_t(lib, 1, 1, 2, 2), _t(lib, 1, 1, 1, 2),
                                                   0, 0, False),
    "grid_sampler_3d_bicubic": lambda lib: lib.grid_sampler_3d(_t(lib, 1, 1, 2, 2, 2),
                                                           _t(lib, 1, 1, 1, 1, 3), 2, 0, False),
    "group_norm": lambda lib: lib.group_norm(_t(lib, 2, 3, 2), 2),
    "hardshrink": lambda lib: lib.hardshrink(lib.tensor([1, 2])),
    "hinge_embedding_loss": lambda lib: lib.hinge_embedding_loss(_t(lib, 3), _t(lib, 3), 1.0, 1.5),
    "instance_norm": lambda lib: lib.instance_norm(_t(lib, 2, 3, 4), _t(lib, 2), None, None, None, True,
                                               0.1, 1e-5, False),
    "kl_div": lambda lib: lib.kl_div(_t(lib, 3), _t(lib, 3), "mean"),
    "layer_norm": lambda lib: lib.layer_norm(_t(lib, 2, 3), [2]),
    "margin_ranking_loss": lambda lib: lib.margin_ranking_loss(_t(lib, 3), _t(lib, 3), _t(lib, 3), 0.0,
                                                           "sum"),
    "max_pool1d": lambda lib: lib.max_pool1d(_t(lib, 1, 1, 4), 2, return_indices=True),
    "max_pool1d_with_indices": lambda lib: lib.max_pool1d_with_indices(_t(lib, 1, 1, 4), 9),
    "channel_shuffle": lambda lib: lib.channel_shuffle(_t(lib, 1, 3, 2), 2),
    "conv_transpose3d": lambda lib: lib.conv_transpose3d(_t(lib, 1, 2, 3, 3, 3),
                                                         _t(lib, 3, 3, 2, 2, 2)),
    "max_pool2d": lambda lib: lib.max_pool2d(_t(lib, 1, 1, 4, 4), 2, 1, 2),
    "max_pool3d": lambda lib: lib.max_pool3d(_t(lib, 1, 1, 2, 2, 2), 3),
    "pairwise_distance": lambda lib: lib.pairwise_distance(_t(lib, 2, 3), _t(lib, 3, 3)),
    "pdist": lambda lib: lib.pdist(_t(lib, 2, 3, 2)),
    "pixel_shuffle": lambda lib: lib.pixel_shuffle(_t(lib, 1, 3, 2, 2), 2),
    "pixel_unshuffle": lambda lib: lib.pixel_unshuffle(_t(lib, 1, 1, 3, 2), 2),
    "poisson_nll_loss": lambda lib: lib.poisson_nll_loss(_t(lib, 3), _t(lib, 3), True, False, 1e-8,
                                                     "mean"),
    "prelu": lambda lib: lib.prelu(_t(lib, 2, 3), _t(lib, 2)),
    "rms_norm": lambda lib: lib.rms_norm(_t(lib, 2, 3), [2]),
    "rrelu": lambda lib: lib.rrelu(_t(lib, 3), 0.3, 0.1, True),
    "rrelu_": lambda lib: lib.rrelu_(lib.tensor([1, 2]), 0.1, 0.3, True),
    "selu": lambda lib: lib.selu(_t(lib, 3), True),
    "selu_": lambda lib: lib.selu_(lib.tensor([1.0], requires_grad=True)),
    "threshold": lambda lib: lib.threshold(lib.tensor([True]), 0.5, 0.0),
    "threshold_": lambda lib: lib.threshold_(lib.tensor([1.0], requires_grad=True), 0.5, 0.0),
    "triplet_margin_loss": lambda lib: lib.triplet_margin_loss(_t(lib, 2, 3), _t(lib, 2, 3), _t(lib, 2, 4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_torchs(name):
    kind, _ = same_as_torch(ERRORS[name])
    assert kind in ("RuntimeError", "TypeError", "IndexError", "ValueError",
                    "NotImplementedError")


def test_every_name_is_called_and_has_an_error_case():
    names = set(ng.torch_nn_aliases.__all__)
    source = open(__file__).read()
    assert not [n for n in names if f"lib.{n}(" not in source]
    assert names == set(ERRORS) - {"grid_sampler_3d_bicubic"}


def test_batch_norm_running_statistics_and_a_single_value_per_channel():
    # torch.batch_norm has no F's batch size check: one value per channel normalizes to 0
    def fn(lib, shape):
        x = lib.tensor(np.linspace(-1, 2, int(np.prod(shape))).reshape(shape), dtype=lib.float32,
                       requires_grad=True)
        rm, rv = lib.zeros(3), lib.ones(3)
        y = lib.batch_norm(x, None, None, rm, rv, True, 0.2, 1e-5, False)
        y.backward(lib.ones_like(y))
        return y, rm, rv, x.grad
    same_as_torch(lambda lib: fn(lib, (1, 3)), decimals=6, nan_equal=True)
    same_as_torch(lambda lib: fn(lib, (4, 3, 2)), decimals=6)


@pytest.mark.parametrize("name", ["hardshrink", "threshold"])
def test_out_keyword(name):
    # of these names, torch's Python binding takes out= for hardshrink and threshold only
    args = {"hardshrink": (0.4,), "threshold": (0.1, -1.0)}[name]

    def fn(lib, out, grad=False):
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=grad)
        r = getattr(lib, name)(x, *args, out=out)
        return r is out, out
    same_as_torch(lambda lib: fn(lib, lib.zeros(2, 3)))
    same_as_torch(lambda lib: fn(lib, lib.zeros(2, 3, dtype=lib.float64)))
    same_as_torch(lambda lib: fn(lib, lib.zeros(5, dtype=lib.float64)))
    same_as_torch(lambda lib: fn(lib, lib.zeros(2, 3, dtype=lib.float64), grad=True))
    with pytest.raises(TypeError):
        ng.celu(ng.zeros(2), out=ng.zeros(2))  # as torch.celu: no out=
