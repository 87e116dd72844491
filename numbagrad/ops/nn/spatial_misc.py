# ruff: noqa: A002 - torch's argument names (input)
"""torch.nn.functional's one_hot, normalize, cosine similarity, distances and the feature
and alpha dropouts, composed of numbagrad ops as torch composes them."""

import math
import warnings

import numpy as np

from ... import dtypes
from ...factories import _keep_mask
from ...tensor import _make
from ..elementwise.pointwise import to_dtype
from ..reduce.reductions import norm as _norm
from ..vjp import const


def one_hot(tensor, num_classes=-1):
    """The integer classes ``tensor`` as one-hot vectors of length ``num_classes`` (int64).

    Same as ``torch.nn.functional.one_hot``.
    """
    idx = tensor._array()
    if idx.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (idx[..., None] == np.arange(num_classes)).astype(np.int64)
    return _make(out)


def _clamped_norm(x, p, dim, eps):
    """norm(x) clamped below at eps in value only: torch clamps its norm in place under
    no_grad, so the gradient is the unclamped norm's."""
    n = _norm(x, p, dim, keepdim=True)
    v = n._array()
    return n + const(np.maximum(v, eps) - v, v.dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input`` divided by its ``p``-norm along ``dim`` (at least ``eps``).

    Same as ``torch.nn.functional.normalize``; ``out=`` raises NotImplementedError.
    """
    if out is not None:
        raise NotImplementedError("numbagrad: normalize(out=) is not supported")
    denom = _norm(input, p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return input / denom


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``.

    Same as ``torch.nn.functional.cosine_similarity``.
    """
    common = np.result_type(x1._array().dtype, x2._array().dtype)
    if common.kind != "f":
        x1, x2 = to_dtype(x1, dtypes.get_default_dtype()), to_dtype(x2, dtypes.get_default_dtype())
    a, b = x1, x2
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    if tuple(a.shape) != shape:
        a = a.expand(*shape)
    if tuple(b.shape) != shape:
        b = b.expand(*shape)
    return ((a / _clamped_norm(a, 2, dim, eps)) * (b / _clamped_norm(b, 2, dim, eps))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The ``p``-norm distance between the rows of ``x1`` and ``x2``.

    Same as ``torch.nn.functional.pairwise_distance``.

    Args:
        x1: (N, D) or (D).
        x2: of ``x1``'s shape, or broadcastable with it.
        p: the norm's order (default 2.0).
        eps: added to ``x1 - x2`` before the norm (default 1e-6).
        keepdim: whether to keep the last dimension, as size 1 (default False).

    Returns:
        The distances along the last dimension, (N) or ().
    """
    dim = max(x1.ndim, x2.ndim)
    return _norm(x1 - x2 + eps, p, dim - 1 if dim else None, keepdim=keepdim)


def pdist(input, p=2):
    """The ``p``-norm distances between every two rows of a matrix, as a 1-D tensor.

    Same as ``torch.nn.functional.pdist``.
    """
    x = input
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = x.shape[0]
    i, j = np.triu_indices(n, 1)
    return _norm(x[i] - x[j], p, 1)


# ---- dropout variants ------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_mask(x, p):
    """Keep each (sample, channel) with probability 1 - p, as a multiplier over x."""
    shape = (*x.shape[:2], *([1] * (x.ndim - 2)))
    return _keep_mask(shape, 1.0 - p) if p < 1.0 else np.zeros(shape, bool)


def _feature_dropout(x, p, training):
    _check_p(p)
    if not training or p == 0.0 or x.numel() == 0:
        return x
    keep = _feature_mask(x, p)
    dt = x._array().dtype
    noise = keep.astype(dt) / dt.type(1.0 - p) if p < 1.0 else np.zeros(keep.shape, dt)
    return x * const(noise, dt)


def _unbatched(x, fn):
    return fn(x.unsqueeze(0)).squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a 1-D signal with probability ``p`` (in training), scaling the rest.

    Same as ``torch.nn.functional.dropout1d``; ``inplace`` is accepted and ignored (the result is a
    new tensor).
    """
    x = input
    _check_p(p)
    if x.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {x.ndim}D "
                           f"input. Note that dropout1d exists to provide channel-wise dropout "
                           f"on inputs with 1 spatial dimension, a channel dimension, and an "
                           f"optional batch dimension (i.e. 2D or 3D inputs).")
    if x.ndim == 2:
        return _unbatched(x, lambda t: _feature_dropout(t, p, training))
    return _feature_dropout(x, p, training)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a 2-D signal with probability ``p`` (in training), scaling the rest.

    Same as ``torch.nn.functional.dropout2d``; ``inplace`` is accepted and ignored (the result is a
    new tensor).
    """
    x = input
    _check_p(p)
    if x.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {x.ndim}-D input to dropout2d, which is deprecated "
                      f"and will result in an error in a future release. To retain the behavior "
                      f"and silence this warning, please use dropout instead. Note that dropout2d "
                      f"exists to provide channel-wise dropout on inputs with 2 spatial "
                      f"dimensions, a channel dimension, and an optional batch dimension (i.e. 3D "
                      f"or 4D inputs).", stacklevel=2)
    if x.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape (C, H, "
                      "W). To maintain the 1D channel-wise dropout behavior, please switch to "
                      "using dropout1d instead.", stacklevel=2)
    return _feature_dropout(x, p, training)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a 3-D signal with probability ``p`` (in training), scaling the rest.

    Same as ``torch.nn.functional.dropout3d``; ``inplace`` is accepted and ignored (the result is a
    new tensor).
    """
    x = input
    _check_p(p)
    if x.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {x.ndim}-D input to dropout3d, which is deprecated "
                      f"and will result in an error in a future release. To retain the behavior "
                      f"and silence this warning, please use dropout instead. Note that dropout3d "
                      f"exists to provide channel-wise dropout on inputs with 3 spatial "
                      f"dimensions, a channel dimension, and an optional batch dimension (i.e. 4D "
                      f"or 5D inputs).", stacklevel=2)
    if x.ndim == 4:
        return _unbatched(x, lambda t: _feature_dropout(t, p, training))
    return _feature_dropout(x, p, training)


_SELU_ALPHA = 1.7580993408473766  # -selu's scale * alpha: the value a dropped unit takes


def _alpha_dropout(x, p, training, feature):
    _check_p(p)
    if p == 0.0 or not training or x.numel() == 0:
        return x
    dt = x._array().dtype
    if p == 1.0:
        return x * const(np.zeros((), dt), dt)
    if feature:
        keep = _feature_mask(x, p)
    else:
        keep = _keep_mask(tuple(x.shape), 1.0 - p, x._array())
    a = 1.0 / math.sqrt((_SELU_ALPHA ** 2 * p + 1) * (1 - p))
    noise = keep.astype(dt)
    b = (noise - 1) * dt.type(_SELU_ALPHA * a) + dt.type(_SELU_ALPHA * a * p)
    return x * const(noise * dt.type(a), dt) + const(b, dt)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps the mean and variance of SELU activations (in training).

    Same as ``torch.nn.functional.alpha_dropout``; ``inplace`` is accepted and ignored (the result
    is a new tensor).
    """
    return _alpha_dropout(input, p, training, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """``alpha_dropout`` of whole channels (in training).

    Same as ``torch.nn.functional.feature_alpha_dropout``; ``inplace`` is accepted and ignored (the
    result is a new tensor).
    """
    return _alpha_dropout(input, p, training, True)


__all__ = ["one_hot", "normalize", "cosine_similarity", "pairwise_distance", "pdist",
           "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
