"""Losses beyond the basics: margin, ranking, embedding, Poisson and Gaussian NLL, composed
from table ops as torch composes them (aten/native/Loss.cpp and torch.nn.functional), so
their values, gradients and second derivatives are torch's. The ones torch runs as one
kernel (soft_margin_loss, multi_margin_loss, multilabel_margin_loss) end here in the
reduction's node instead of torch's SoftMarginLossBackward0 / MultiMarginLossBackward0 /
MultilabelMarginLossBackward0 (README: Limitations)."""

import math

import numpy as np

from ...tensor import _make
from ..elementwise.math_api import clamp_min
from ..elementwise.pointwise import minimum, where
from ..elementwise.public import exp, log, log1p, sqrt
from ..index.indexing import gather
from ..reduce.reductions import mean, norm
from ..reduce.reductions import sum as _sum
from ..shape.movement import unsqueeze
from .activations import logsigmoid
from .loss_common import _legacy


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return _sum(loss)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _clamp_min0(x):
    return clamp_min(x, 0.0)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """mean(max(0, -target * (input1 - input2) + margin))."""
    reduction = _legacy(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.shape}, input2: "
                           f"{input2.shape}, target: {target.shape} ")
    return _reduce(_clamp_min0(-target * (input1 - input2) + margin), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,  # noqa: A002
                         reduction="mean"):
    """input where target is 1, max(0, margin - input) where it is -1."""
    reduction = _legacy(size_average, reduce, reduction)
    zeros = _make(np.zeros_like(np.asarray(input._data)))
    margin_clamp = _clamp_min0(margin - input)
    output_margin = where(target != 1, margin_clamp, zeros)
    output_self = where(target != -1, input, zeros)
    return _reduce(output_margin + output_self, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    """mean(log(1 + exp(-target * input)))."""
    reduction = _legacy(size_average, reduce, reduction)
    return _reduce(log1p(exp(-target * input)), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None,  # noqa: A002
                                reduce=None, reduction="mean"):
    """Per sample, the mean over classes of the binary cross-entropy of sigmoid(input)."""
    reduction = _legacy(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = _sum(loss, class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None,
                          reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""
    reduction = _legacy(size_average, reduce, reduction)
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"cosine_embedding_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.shape}, input2: "
                           f"{input2.shape}, target: {target.shape} ")
    dim = input1.ndim - 1
    eps = 1e-12
    prod_sum = _sum(input1 * input2, dim)
    mag1 = _sum(input1 * input1, dim) + eps
    mag2 = _sum(input2 * input2, dim) + eps
    cos = prod_sum / sqrt(mag1 * mag2)
    zeros = _make(np.zeros_like(np.asarray(cos._data)))
    output_pos = where(target == 1, 1 - cos, zeros)
    output_neg = where(target == -1, _clamp_min0(cos - margin), zeros)
    return _reduce(output_pos + output_neg, reduction)


def _pairwise_distance(x1, x2, p, eps):
    """torch.pairwise_distance: norm(x1 - x2 + eps, p) over the last dim."""
    dim = max(x1.ndim, x2.ndim) - 1
    return norm(x1 - x2 + eps, p, dim=dim)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """mean(max(0, margin + d(anchor, positive) - d(anchor, negative))).

    Args:
        anchor: the anchor embeddings, (N, D) or (D).
        positive: embeddings that should be near the anchors, of ``anchor``'s shape.
        negative: embeddings that should be far from them, of ``anchor``'s shape.
        margin: the wanted gap between the two distances (default 1.0).
        p: the order of the pairwise distance's norm (default 2).
        eps: added to the differences before the norm (default 1e-6).
        swap: if True, use the smaller of d(anchor, negative) and d(positive, negative)
            (default False).
        size_average: deprecated; with ``reduce``, sets ``reduction`` (default None).
        reduce: deprecated; with ``size_average``, sets ``reduction`` (default None).
        reduction: 'mean', 'sum' or 'none' (default 'mean').

    Returns:
        A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each sample.
    """
    reduction = _legacy(size_average, reduce, reduction)
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {dims[0]}D, "
                           f"positive {dims[1]}D, and negative {dims[2]}D inputs")
    dist_pos = _pairwise_distance(anchor, positive, p, eps)
    dist_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, _pairwise_distance(positive, negative, p, eps))
    return _reduce(_clamp_min0(margin + dist_pos - dist_neg), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None,  # noqa: A002
                     eps=1e-8, reduce=None, reduction="mean"):
    """exp(input) - target * input (log_input), else input - target * log(input + eps);
    ``full`` adds Stirling's term where target > 1."""
    reduction = _legacy(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        t = np.asarray(target._data)
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)
        loss = loss + _make(np.where(t <= 1, 0, stirling).astype(t.dtype))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):  # noqa: A002
    """0.5 * (log(var) + (input - target)^2 / var), var clamped below at eps (the clamp
    not differentiated, as torch)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _make(np.full(input.shape, var, np.asarray(input._data).dtype))
    elif np.any(np.asarray(var._data) < 0):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = unsqueeze(var, -1)
        elif input.ndim != var.ndim or sum(y for x, y in zip(input.shape, var.shape)
                                           if x != y) != 1:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    v = np.asarray(var._data)
    var = var + _make(np.maximum(v, eps) - v)  # the clamp, not differentiated (0 elsewhere)
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,  # noqa: A002
                      reduce=None, reduction="mean"):
    """Per sample: sum over classes j != y of max(0, margin - x[y] + x[j])^p, over the class
    count (times weight[y])."""
    reduction = _legacy(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.requires_grad:
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with "
                           "respect to argument 'weight'. This input cannot have "
                           "requires_grad True.")
    x = unsqueeze(input, 0) if input.ndim == 1 else input
    t = np.asarray(target._data).reshape(-1)
    n, c = x.shape
    x_y = gather(x, 1, _make(t.reshape(-1, 1).astype(np.int64)))
    z = _clamp_min0(margin - x_y + x)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * unsqueeze(_make(np.asarray(weight._data)[t]), 1)
    off_target = np.ones((n, c), np.asarray(x._data).dtype)
    off_target[np.arange(n), t] = 0
    loss = _sum(z * _make(off_target), 1) / c
    if input.ndim == 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def _sizes(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def multilabel_margin_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                           reduction="mean"):
    """Per sample: sum over its target classes y (``target``'s row up to the first -1) and the
    other classes i of max(0, 1 - x[y] + x[i]), over the class count.

    Same as ``torch.nn.functional.multilabel_margin_loss``.
    """
    reduction = _legacy(size_average, reduce, reduction)
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0) or \
            (input.ndim == 1 and input.shape[0] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {_sizes(input.shape)}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {_sizes(target.shape)} for input of "
                           f"size: {_sizes(input.shape)}")
    if target.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.scalar_name}")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n, c = x.shape
    t = np.asarray(target._data).reshape(n, c)
    if ((t < -1) | (t >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    # a row's targets end at its first -1; a class listed twice counts twice, as torch's loop
    valid = np.cumprod(t >= 0, axis=1).astype(bool)
    count = np.zeros((n, c), np.asarray(x._data).dtype)
    rows = np.broadcast_to(np.arange(n)[:, None], (n, c))
    np.add.at(count, (rows[valid], t[valid]), 1)
    others = (count == 0).astype(count.dtype)
    pairs = _make(count[:, :, None] * others[:, None, :])  # (sample, target y, class i)
    z = _clamp_min0(1.0 - unsqueeze(x, 2) + unsqueeze(x, 1))
    loss = _sum(z * pairs, (1, 2)) / c
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """mean(max(0, margin + d(anchor, positive) - d(anchor, negative))) with any distance
    ``d`` (``pairwise_distance`` by default).

    Same as ``torch.nn.functional.triplet_margin_with_distance_loss``.

    Args:
        anchor: the anchor embeddings.
        positive: embeddings that should be near the anchors.
        negative: embeddings that should be far from them; all three have as many dimensions.
        distance_function: a callable of two tensors giving their distances (default None:
            ``pairwise_distance`` with p=2).
        margin: the wanted gap between the two distances, positive (default 1.0).
        swap: if True, use the smaller of d(anchor, negative) and d(positive, negative)
            (default False).
        reduction: 'mean', 'sum' or 'none' (default 'mean').

    Returns:
        A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each sample.
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {dims[0]}D, "
                           f"positive {dims[1]}D, and negative {dims[2]}D inputs")
    if distance_function is None:
        def distance_function(x1, x2):
            return _pairwise_distance(x1, x2, 2, 1e-6)
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = minimum(dist_neg, distance_function(positive, negative))
    return _reduce(_clamp_min0(margin + dist_pos - dist_neg), reduction)


__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
           "poisson_nll_loss", "gaussian_nll_loss", "multi_margin_loss",
           "multilabel_margin_loss", "triplet_margin_with_distance_loss"]
