# ruff: noqa: A002 - torch's argument names (input)
# Over 600 lines: a table of thin forms, one per torch name, with no logic of its own to split.
"""torch's top-level forms of nn.functional ops (torch.conv2d, torch.layer_norm, ...), over
the F functions: ATen's signatures, which order and name the arguments otherwise (weight
before running_mean, ``train`` for ``training``, a required ``cudnn_enabled``), take enums as
ints (reduction 0 none, 1 mean, 2 sum; grid modes) and raise RuntimeError on a bad dropout p.
Where F's function is torch's top-level one itself (torch.conv2d is F.conv2d), it is
re-exported as it is."""

import numpy as np

from .core.grad_mode import no_grad
from .nn import functional as F  # noqa: N812 - torch's idiom
from .nn.functional import (  # noqa: F401 - torch's F.<name> is torch.<name>
    adaptive_avg_pool1d,
    avg_pool1d,
    bilinear,
    celu_,
    channel_shuffle,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    cosine_similarity,
    hardshrink,
    pairwise_distance,
    pdist,
    pixel_shuffle,
    pixel_unshuffle,
    prelu,
    rrelu_,
    selu_,
    threshold_,
)
from .ops.nn import spatial_misc as _spm
from .ops.nn.nll_loss import kl_div_enum
from .ops.nn.norm import aten_batch_norm
from .tensor import Tensor, _make

# ---- enums -----------------------------------------------------------------------------------
_INTERPOLATION = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def _enum(op, reduction, position):
    """ATen's reduction enum: 1 mean, 2 sum, any other int none (as torch)."""
    if isinstance(reduction, bool) or not isinstance(reduction, (int, np.integer)):
        raise TypeError(f"{op}(): argument 'reduction' (position {position}) must be int, not "
                        f"{type(reduction).__name__}")
    return {1: 1, 2: 2}.get(int(reduction), 0)


def _reduction(op, reduction, position):
    """ATen's reduction enum as F's string."""
    return ("none", "mean", "sum")[_enum(op, reduction, position)]


def _check_p(p):
    # torch's ATen dropouts raise RuntimeError where F's Python check raises ValueError, and
    # print p as C++ does
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def _check_feature(input, p, train):
    # (only where a mask is drawn: torch returns the input, or zeros for p = 1, without it)
    if train and 0.0 < p < 1.0 and input.numel() and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")


# ---- dropout ---------------------------------------------------------------------------------
def dropout(input, p, train):
    """Zero each element with probability ``p`` (when ``train``), scaling the rest by
    1 / (1 - p).

    Same as ``torch.dropout``.

    Args:
        input: the input tensor.
        p: the probability of dropping, in [0, 1].
        train: whether to apply it; False returns ``input`` as it is.

    Returns:
        A tensor of ``input``'s shape.
    """
    _check_p(p)
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    """In-place ``dropout(input, p, train)``. Same as ``torch.dropout_``.

    Args:
        input: the input tensor.
        p: the probability of dropping, in [0, 1].
        train: whether to apply it; False returns ``input`` as it is.

    Returns:
        ``input`` itself, changed in place.
    """
    _check_p(p)
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    """Dropout that keeps the mean and variance of SELU activations (when ``train``).

    Same as ``torch.alpha_dropout``.

    Args:
        input: the input tensor.
        p: the probability of dropping, in [0, 1].
        train: whether to apply it; False returns ``input`` as it is.

    Returns:
        A tensor of ``input``'s shape.
    """
    _check_p(p)
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    """In-place :func:`alpha_dropout`. Same as ``torch.alpha_dropout_``.

    Args:
        input: the input tensor.
        p: the probability of dropping, in [0, 1].
        train: whether to apply it; False returns ``input`` as it is.

    Returns:
        ``input``, or the result written into it when ``train``.
    """
    _check_p(p)
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    """``alpha_dropout`` of whole channels (dim 1) of an input of 2 or more dims.

    Same as ``torch.feature_alpha_dropout``.

    Args:
        input: a tensor of 2 or more dimensions (N, C, *).
        p: the probability of dropping, in [0, 1].
        train: whether to apply it; False returns ``input`` as it is.

    Returns:
        A tensor of ``input``'s shape.
    """
    _check_p(p)
    _check_feature(input, p, train)
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    """In-place :func:`feature_alpha_dropout`. Same as ``torch.feature_alpha_dropout_``.

    Args:
        input: a tensor of 2 or more dimensions (N, C, *).
        p: the probability of dropping, in [0, 1].
        train: whether to apply it; False returns ``input`` as it is.

    Returns:
        ``input``, or the result written into it when ``train``.
    """
    _check_p(p)
    _check_feature(input, p, train)
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """Zero whole channels (dim 1) with probability ``p`` (when ``train``), scaling the rest.

    Same as ``torch.feature_dropout`` (what F.dropout2d and dropout3d run).

    Args:
        input: a tensor of 2 or more dimensions (N, C, *).
        p: the probability of dropping, in [0, 1].
        train: whether to apply it; False returns ``input`` as it is.

    Returns:
        A tensor of ``input``'s shape.
    """
    _check_p(p)
    _check_feature(input, p, train)
    return _spm._feature_dropout(input, p, train)


def feature_dropout_(input, p, train):
    """In-place :func:`feature_dropout`. Same as ``torch.feature_dropout_``.

    Args:
        input: a tensor of 2 or more dimensions (N, C, *).
        p: the probability of dropping, in [0, 1].
        train: whether to apply it; False returns ``input`` as it is.

    Returns:
        ``input`` itself, changed in place.
    """
    _check_p(p)
    _check_feature(input, p, train)
    return F._dropout_inplace(_spm._feature_dropout, input, p, train)


# ---- activations -----------------------------------------------------------------------------
def celu(input, alpha=1.0):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)). Same as ``torch.celu``.

    Args:
        input: the input tensor.
        alpha: the ``alpha`` of the formula (default 1.0).

    Returns:
        A tensor of ``input``'s shape.
    """
    return F.celu(input, alpha)


def selu(input):
    """scale * elu(x, alpha) with the self-normalizing constants. Same as ``torch.selu``.

    Args:
        input: the input tensor.

    Returns:
        A tensor of ``input``'s shape.
    """
    return F.selu(input)


def threshold(input, threshold, value):
    """x where x > threshold, else value. Same as ``torch.threshold``.

    Args:
        input: the input tensor.
        threshold: the elements above it are kept.
        value: what replaces the other elements.

    Returns:
        A tensor of ``input``'s shape.
    """
    return F.threshold(input, threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Randomized leaky ReLU (slopes drawn from U(lower, upper) when ``training``).

    Same as ``torch.rrelu``.

    Args:
        input: the input tensor.
        lower: the lowest random slope (default 1/8).
        upper: the highest random slope (default 1/3).
        training: random slopes if True, else the middle slope (default False).
        generator: the Generator the slopes are drawn from (default None: the global one).

    Returns:
        A tensor of ``input``'s shape.
    """
    return F._rrelu(input, lower, upper, training, generator)


# ---- convolution, pooling, padding, sampling -------------------------------------------------
def _stride(stride):
    # ATen's default stride=[] means the kernel size, F's None
    return None if isinstance(stride, (list, tuple)) and not stride else stride


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Max pooling over a 1-D signal (no indices). Same as ``torch.max_pool1d``.

    Args:
        input: (N, C, *spatial) or (C, *spatial), with 1 spatial dimension.
        kernel_size: the window size, an int or 1-tuple.
        stride: the window step (default None, or []: ``kernel_size``).
        padding: the implicit padding (-inf) on both sides (default 0).
        dilation: the spacing of a window's elements (default 1).
        ceil_mode: whether to round the output size up rather than down (default
            False).

    Returns:
        The pooled tensor.
    """
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False):
    """Max pooling over a 1-D signal and the indices of the maxima.

    Same as ``torch.max_pool1d_with_indices``.

    Args:
        input: (N, C, *spatial) or (C, *spatial), with 1 spatial dimension.
        kernel_size: the window size, an int or 1-tuple.
        stride: the window step (default None, or []: ``kernel_size``).
        padding: the implicit padding (-inf) on both sides (default 0).
        dilation: the spacing of a window's elements (default 1).
        ceil_mode: whether to round the output size up rather than down (default
            False).

    Returns:
        A pair (pooled values, indices of the maxima).
    """
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Max pooling over a 2-D signal (no indices). Same as ``torch.max_pool2d``.

    Args:
        input: (N, C, *spatial) or (C, *spatial), with 2 spatial dimensions.
        kernel_size: the window size, an int or 2-tuple.
        stride: the window step (default None, or []: ``kernel_size``).
        padding: the implicit padding (-inf) on both sides (default 0).
        dilation: the spacing of a window's elements (default 1).
        ceil_mode: whether to round the output size up rather than down (default
            False).

    Returns:
        The pooled tensor.
    """
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Max pooling over a 3-D signal (no indices). Same as ``torch.max_pool3d``.

    Args:
        input: (N, C, *spatial) or (C, *spatial), with 3 spatial dimensions.
        kernel_size: the window size, an int or 3-tuple.
        stride: the window step (default None, or []: ``kernel_size``).
        padding: the implicit padding (-inf) on both sides (default 0).
        dilation: the spacing of a window's elements (default 1).
        ceil_mode: whether to round the output size up rather than down (default
            False).

    Returns:
        The pooled tensor.
    """
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def adaptive_max_pool1d(input, output_size):
    """Max pooling into ``output_size`` windows: (values, indices).

    Same as ``torch.adaptive_max_pool1d``.

    Args:
        input: (N, C, L) or (C, L).
        output_size: the output length L_out.

    Returns:
        A pair (values, indices), each (N, C, L_out) or (C, L_out).
    """
    return tuple(F.adaptive_max_pool1d(input, output_size, return_indices=True))


def constant_pad_nd(input, pad, value=0):
    """``input`` padded with ``value``: ``pad`` lists (before, after) pairs from the last dim.

    Same as ``torch.constant_pad_nd``.

    Args:
        input: the input tensor.
        pad: (before, after) pairs, from the last dimension backwards.
        value: the fill value (default 0).

    Returns:
        The padded tensor.
    """
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    return F.pad(input, pad, "constant", value)


def affine_grid_generator(theta, size, align_corners):
    """The sampling grid of the affine maps ``theta`` for an output of ``size``.

    Same as ``torch.affine_grid_generator``.

    Args:
        theta: the affine maps, (N, 2, 3) for 2-D or (N, 3, 4) for 3-D.
        size: the output's size, (N, C, H, W) or (N, C, D, H, W).
        align_corners: as for ``grid_sampler``.

    Returns:
        The grid, (N, H, W, 2) or (N, D, H, W, 3).
    """
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    return F.affine_grid(theta, size, bool(align_corners))


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``input`` sampled at ``grid`` (modes as ints: 0 bilinear, 1 nearest, 2 bicubic; padding
    0 zeros, 1 border, 2 reflection).

    Same as ``torch.grid_sampler``; 4-D input with bilinear or nearest interpolation only.

    Args:
        input: (N, C, H_in, W_in) (or (N, C, D, H, W) for 3-D).
        grid: (N, H_out, W_out, 2) (or (N, D, H, W, 3)): sampling positions in [-1, 1].
        interpolation_mode: 0 bilinear, 1 nearest, 2 bicubic.
        padding_mode: 0 zeros, 1 border, 2 reflection (for positions outside).
        align_corners: whether -1 and 1 are the centres of the corner pixels rather than
            their outer edges.

    Returns:
        (N, C, H_out, W_out) (or (N, C, D, H, W)).
    """
    return F.grid_sample(input, grid, _INTERPOLATION.get(interpolation_mode, interpolation_mode),
                         _PADDING.get(padding_mode, padding_mode), bool(align_corners))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """:func:`grid_sampler` of a 4-D input.

    Same as ``torch.grid_sampler_2d``; bilinear or nearest interpolation only.

    Args:
        input: (N, C, H_in, W_in) (or (N, C, D, H, W) for 3-D).
        grid: (N, H_out, W_out, 2) (or (N, D, H, W, 3)): sampling positions in [-1, 1].
        interpolation_mode: 0 bilinear, 1 nearest, 2 bicubic.
        padding_mode: 0 zeros, 1 border, 2 reflection (for positions outside).
        align_corners: whether -1 and 1 are the centres of the corner pixels rather than
            their outer edges.

    Returns:
        (N, C, H_out, W_out).
    """
    if input.ndim != 4 or grid.ndim != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """:func:`grid_sampler` of a 5-D input.

    Same as ``torch.grid_sampler_3d``; trilinear or nearest interpolation.

    Args:
        input: (N, C, H_in, W_in) (or (N, C, D, H, W) for 3-D).
        grid: (N, H_out, W_out, 2) (or (N, D, H, W, 3)): sampling positions in [-1, 1].
        interpolation_mode: 0 bilinear, 1 nearest, 2 bicubic.
        padding_mode: 0 zeros, 1 border, 2 reflection (for positions outside).
        align_corners: whether -1 and 1 are the centres of the corner pixels rather than
            their outer edges.

    Returns:
        (N, C, D_out, H_out, W_out).
    """
    if input.ndim != 5 or grid.ndim != 5:
        raise RuntimeError(f"grid_sampler(): expected 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


# ---- normalization and embeddings ------------------------------------------------------------
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """Batch normalization (``cudnn_enabled`` has no effect on the CPU).

    Same as ``torch.batch_norm``.

    Args:
        input: (N, C, *), at least 2-D.
        weight: the scale per channel, (C), or None for 1.
        bias: the shift per channel, (C), or None for 0.
        running_mean: the running means per channel, (C), or None; updated in place in
            training.
        running_var: the running variances per channel, (C), or None; updated likewise.
        training: whether to normalize with the batch's statistics rather than the running
            ones.
        momentum: the weight of the new batch in the running statistics.
        eps: added to the variance.
        cudnn_enabled: ignored (no effect on the CPU).

    Returns:
        A tensor of ``input``'s shape.
    """
    return aten_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                           eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """Instance normalization (``cudnn_enabled`` has no effect on the CPU).

    Same as ``torch.instance_norm``.

    Args:
        input: (N, C, *spatial).
        weight: the scale per channel, (C), or None for 1.
        bias: the shift per channel, (C), or None for 0.
        running_mean: the running means per channel, (C), or None.
        running_var: the running variances per channel, (C), or None.
        use_input_stats: whether to normalize with each sample's own statistics.
        momentum: the weight of the new statistics in the running ones.
        eps: added to the variance.
        cudnn_enabled: ignored (no effect on the CPU).

    Returns:
        A tensor of ``input``'s shape.
    """
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """Layer normalization over the last dims ``normalized_shape``.

    Same as ``torch.layer_norm``.

    Args:
        input: a tensor whose trailing dimensions are ``normalized_shape``.
        normalized_shape: the shape normalized over (an int or a sequence).
        weight: the scale, of shape ``normalized_shape``, or None (default None).
        bias: the shift, of shape ``normalized_shape``, or None (default None).
        eps: added to the variance (default 1e-5).
        cudnn_enable: ignored (default True).

    Returns:
        A tensor of ``input``'s shape.
    """
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """Group normalization over ``num_groups`` groups of channels.

    Same as ``torch.group_norm``.

    Args:
        input: (N, C, *), at least 2-D.
        num_groups: the number of groups; it divides C.
        weight: the scale per channel, (C), or None (default None).
        bias: the shift per channel, (C), or None (default None).
        eps: added to the variance (default 1e-5).
        cudnn_enabled: ignored (default True).

    Returns:
        A tensor of ``input``'s shape.
    """
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """RMS normalization over the last dims ``normalized_shape``. Same as ``torch.rms_norm``.

    Args:
        input: a tensor whose trailing dimensions are ``normalized_shape``.
        normalized_shape: the shape normalized over (an int or a sequence).
        weight: the scale, of shape ``normalized_shape``, or None (default None).
        eps: added to the mean square (default None: the dtype's machine epsilon).

    Returns:
        A tensor of ``input``'s shape.
    """
    return F.rms_norm(input, normalized_shape, weight, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` at ``indices`` (a negative ``padding_idx``: none).

    Same as ``torch.embedding``.

    Args:
        weight: the embedding matrix, (num_embeddings, embedding_dim).
        indices: an integer tensor of row indices, of any shape.
        padding_idx: a row whose gradient stays zero; negative for none (default -1).
        scale_grad_by_freq: must be False (True raises NotImplementedError).
        sparse: must be False (True raises NotImplementedError).

    Returns:
        A tensor of shape (*indices.shape, embedding_dim).
    """
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None, None, 2.0,
                       scale_grad_by_freq, sparse)


_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums (mode 0), means (1) or maxima (2) of bags of rows of ``weight``: (output,
    offset2bag, bag_size, max_indices).

    Same as ``torch.embedding_bag`` for the output; the other three are torch's internal
    buffers for the backward, here each index's bag, each bag's size and (mode 2) the index
    of each maximum.

    Args:
        weight: the embedding matrix, (num_embeddings, embedding_dim).
        indices: 1-D row indices of all the bags, one after another.
        offsets: where each bag starts in ``indices``, 1-D.
        scale_grad_by_freq: as for ``nn.functional.embedding_bag`` (default False).
        mode: 0 sum, 1 mean, 2 max (default 0).
        sparse: as for ``nn.functional.embedding_bag`` (default False).
        per_sample_weights: a weight per index, or None (default None).
        include_last_offset: whether ``offsets`` ends with the end of the last bag (default
            False).
        padding_idx: a row left out of the bags, or None (default None).

    Returns:
        A tuple (output (bags, embedding_dim), offset2bag, bag_size, max_indices).
    """
    if mode not in _BAG_MODES:
        raise RuntimeError("`mode` must be sum, mean, or max.")
    out = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                          _BAG_MODES[mode], sparse, per_sample_weights, include_last_offset,
                          padding_idx)
    idx = indices._array().reshape(-1).astype(np.int64)
    starts = offsets._array().reshape(-1).astype(np.int64)
    if include_last_offset:
        starts = starts[:-1]
    offset2bag = np.maximum(np.searchsorted(starts, np.arange(idx.size), side="right") - 1, 0)
    bag_size = np.bincount(offset2bag, minlength=starts.size)[:starts.size].astype(np.int64)
    if mode == 2:
        # the row each maximum came from, per (bag, column)
        w = weight._array()
        best = np.zeros(out.shape, np.int64)
        for b in range(starts.size):
            rows = idx[offset2bag == b]
            if rows.size:
                best[b] = rows[np.argmax(w[rows], axis=0)]
        max_indices = best
    else:
        max_indices = bag_size.copy()
    return (out, *(_make(a) for a in (offset2bag, bag_size, max_indices)))


def embedding_renorm_(input, indices, max_norm, norm_type):
    """The rows of ``input`` at ``indices`` whose ``norm_type``-norm exceeds ``max_norm``
    scaled in place to norm ``max_norm`` (over 1e-7 more, as torch).

    Same as ``torch.embedding_renorm_``.

    Args:
        input: the embedding matrix, changed in place.
        indices: an integer tensor of the rows to renormalize.
        max_norm: the largest norm a row keeps.
        norm_type: the order of the norm.

    Returns:
        ``input`` itself, changed in place.
    """
    idx = indices._array()
    if idx.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the "
                           "following scalar types: Long, Int; but got torch.FloatTensor instead "
                           "(while checking arguments for embedding_renorm_)")
    rows = np.unique(idx.reshape(-1))
    n = input.shape[0]
    bad = rows[(rows < -n) | (rows >= n)]
    if bad.size:  # torch selects the sorted rows one by one
        raise IndexError(f"select(): index {bad[0]} out of range for tensor of size "
                         f"{list(input.shape)} at dimension 0")
    with no_grad():
        norms = input.detach()[_make(rows)].norm(norm_type, 1)._array().astype(np.float64)
    big = norms > max_norm
    scale = np.ones((input.shape[0], 1), np.float64)
    # torch: row *= max_norm / (norm + 1e-7), the factor a double
    scale[rows[big], 0] = max_norm / (norms[big] + 1e-7)
    dt = input._array().dtype
    return F._inplace(input, lambda s: s * _make(scale.astype(dt)), clone=False)


# ---- losses (reduction an int enum: omitted, torch's Python binding takes 0, none) -----------
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """Binary cross-entropy of ``sigmoid(input)`` and ``target``.

    Same as ``torch.binary_cross_entropy_with_logits``.

    Args:
        input: logits.
        target: targets in [0, 1], of ``input``'s shape.
        weight: a weight broadcast over the elements, or None (default None).
        pos_weight: a weight of the positive term per class, or None (default None).
        reduction: ATen's enum as an int: 1 mean, 2 sum, any other none (default 0).

    Returns:
        A 0-d tensor, unless ``reduction`` is none; then the loss of each element, of
            ``input``'s shape.
    """
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits",
                                                    reduction, 5), pos_weight=pos_weight)


def kl_div(input, target, reduction=0, *, log_target=False):
    """The Kullback-Leibler divergence of ``target`` from the log-probabilities ``input``.

    Same as ``torch.kl_div``.

    Args:
        input: log-probabilities.
        target: probabilities (log-probabilities with ``log_target``), of ``input``'s shape.
        reduction: ATen's enum as an int: 1 mean, 2 sum, any other none (default 0).
        log_target: whether ``target`` holds log-probabilities (default False).

    Returns:
        A 0-d tensor, unless ``reduction`` is none; then the loss of each element, of
            ``input``'s shape.
    """
    return kl_div_enum(input, target, _enum("kl_div", reduction, 3), log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """max(0, -target * (input1 - input2) + margin). Same as ``torch.margin_ranking_loss``.

    Args:
        input1: the first scores.
        input2: the second scores.
        target: 1 or -1 per element.
        margin: the wanted margin (default 0.0).
        reduction: ATen's enum as an int: 1 mean, 2 sum, any other none (default 0).

    Returns:
        A 0-d tensor, unless ``reduction`` is none; then the loss of each element.
    """
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction, 5))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """x where target is 1, max(0, margin - x) where it is -1.

    Same as ``torch.hinge_embedding_loss``.

    Args:
        input: the distances or scores.
        target: 1 or -1 per element.
        margin: the margin (default 1.0).
        reduction: ATen's enum as an int: 1 mean, 2 sum, any other none (default 0).

    Returns:
        A 0-d tensor, unless ``reduction`` is none; then the loss of each element.
    """
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction("hinge_embedding_loss", reduction, 4))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1.

    Same as ``torch.cosine_embedding_loss``.

    Args:
        input1: the first embeddings, (N, D) or (D).
        input2: the second embeddings, of ``input1``'s shape.
        target: 1 or -1 per pair, (N) or ().
        margin: the margin (default 0.0).
        reduction: ATen's enum as an int: 1 mean, 2 sum, any other none (default 0).

    Returns:
        A 0-d tensor, unless ``reduction`` is none; then the loss of each pair.
    """
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction, 5))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=0):
    """max(d(anchor, positive) - d(anchor, negative) + margin, 0).

    Same as ``torch.triplet_margin_loss``.

    Args:
        anchor: the anchor embeddings, (N, D) or (D).
        positive: embeddings that should be near the anchors.
        negative: embeddings that should be far from them.
        margin: the wanted gap between the distances (default 1.0).
        p: the order of the pairwise distance's norm (default 2.0).
        eps: added to the differences before the norm (default 1e-6).
        swap: whether to use the smaller of d(anchor, negative) and d(positive, negative)
            (default False).
        reduction: ATen's enum as an int: 1 mean, 2 sum, any other none (default 0).

    Returns:
        A 0-d tensor, unless ``reduction`` is none; then the loss of each triplet.
    """
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction, 8))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """The negative log-likelihood of ``target`` under Poisson(``input``).

    Same as ``torch.poisson_nll_loss``.

    Args:
        input: the predicted rates (their logarithms with ``log_input``).
        target: the counts, of ``input``'s shape.
        log_input: whether ``input`` holds log rates.
        full: whether to add the Stirling approximation term.
        eps: added inside the log when not ``log_input``.
        reduction: ATen's enum as an int: 1 mean, 2 sum, any other none.

    Returns:
        A 0-d tensor, unless ``reduction`` is none; then the loss of each element, of
            ``input``'s shape.
    """
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction, 6))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """The Connectionist Temporal Classification loss. Same as ``torch.ctc_loss``.

    Args:
        log_probs: log-probabilities, (T, N, C) or (T, C).
        targets: the target sequences, (N, S) padded or concatenated 1-D.
        input_lengths: the length of each input sequence.
        target_lengths: the length of each target sequence.
        blank: the blank class index (default 0).
        reduction: ATen's enum as an int: 1 mean, 2 sum, any other none (default 0).
        zero_infinity: whether to zero infinite losses and their gradients (default
            False).

    Returns:
        A 0-d tensor, unless ``reduction`` is none; then the loss of each sample.
    """
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction("ctc_loss", reduction, 6), zero_infinity)


# the method forms torch has of these (x.hardshrink(0.5), x.prelu(w))
Tensor.hardshrink = hardshrink
Tensor.prelu = prelu

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout",
    "alpha_dropout_", "avg_pool1d", "batch_norm", "bilinear", "binary_cross_entropy_with_logits",
    "celu", "celu_", "channel_shuffle", "constant_pad_nd", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_embedding_loss",
    "cosine_similarity", "ctc_loss", "dropout", "dropout_", "embedding", "embedding_bag",
    "embedding_renorm_", "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout",
    "feature_dropout_", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "group_norm",
    "hardshrink", "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm",
    "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d",
    "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu",
    "rms_norm", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_",
    "triplet_margin_loss",
]

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"threshold": "one"}
