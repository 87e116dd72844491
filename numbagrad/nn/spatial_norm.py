# ruff: noqa: A002 - torch's argument names (input)
"""GroupNorm, InstanceNorm1d/2d/3d, RMSNorm, LocalResponseNorm, the feature and alpha
dropouts, CosineSimilarity, PairwiseDistance and EmbeddingBag, with torch's
parameters, buffers, initialisation and reprs."""

import warnings

import numpy as np

from .. import dtypes
from ..factories import _normal_array
from ..ops.nn import spatial as _sp
from . import functional as F  # noqa: N812 - torch's idiom
from .module import Module, Parameter
from .normalization import _NormBase


def _dtype(dtype):
    return (dtypes.as_dtype(dtype) or dtypes.get_default_dtype()).np


class GroupNorm(Module):
    """Group normalization over groups of channels, with a learned affine per channel.

    Same as ``torch.nn.GroupNorm``.
    """

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, bias=True, device=None,
                 dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        dt = _dtype(dtype)
        if affine:
            self.weight = Parameter(np.ones(num_channels, dt))
            if bias:
                self.bias = Parameter(np.zeros(num_channels, dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        """``group_norm`` of ``input`` with this layer's groups, affine parameters and eps.

        Args:
            input: (N, num_channels, *).

        Returns:
            A tensor of ``input``'s shape.
        """
        return _sp.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(_NormBase):
    _no_batch_dim = 2

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)

    def _check_input_dim(self, x):
        dims = (self._no_batch_dim, self._no_batch_dim + 1)
        if x.ndim not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {x.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          f"can silence this warning by not passing in num_features, which is "
                          f"not used because affine=False", stacklevel=2)
        if input.ndim == self._no_batch_dim:
            return self._apply(input.unsqueeze(0)).squeeze(0)
        return self._apply(input)

    def _apply(self, x):
        return _sp.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                 self.training or not self.track_running_stats,
                                 self.momentum if self.momentum is not None else 0.0, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine="
                f"{self.affine}, bias={self.bias is not None}, track_running_stats="
                f"{self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) or (C, L) input: statistics per sample and channel.

    Same as ``torch.nn.InstanceNorm1d``, without ``bias`` (the shift comes with ``affine``).
    """

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) or (C, H, W) input: statistics per sample and channel.

    Same as ``torch.nn.InstanceNorm2d``, without ``bias`` (the shift comes with ``affine``).
    """

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of (N, C, D, H, W) or (C, D, H, W) input, per sample and channel.

    Same as ``torch.nn.InstanceNorm3d``, without ``bias`` (the shift comes with ``affine``).
    """

    _no_batch_dim = 4


class RMSNorm(Module):
    """Root-mean-square normalization over the last dimensions, with a learned scale.

    Same as ``torch.nn.RMSNorm``.
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
            tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(np.ones(shape, _dtype(dtype)))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        """``rms_norm`` of ``x`` over its last dimensions (``normalized_shape``).

        Args:
            x: a tensor whose trailing dimensions are ``normalized_shape``.

        Returns:
            A tensor of ``x``'s shape.
        """
        return _sp.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Local response normalization across neighbouring channels.

    Same as ``torch.nn.LocalResponseNorm``.
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        """``local_response_norm`` of ``input`` with this layer's settings.

        Args:
            input: (N, C, *), at least 3-D.

        Returns:
            A tensor of ``input``'s shape.
        """
        return _sp.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


# ---- dropout variants ------------------------------------------------------------------------
class _DropoutNd(Module):
    _fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of a 1-D signal with probability ``p`` in training.

    Same as ``torch.nn.Dropout1d``.
    """

    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of a 2-D signal with probability ``p`` in training.

    Same as ``torch.nn.Dropout2d``.
    """

    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of a 3-D signal with probability ``p`` in training.

    Same as ``torch.nn.Dropout3d``.
    """

    _fn = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps the mean and variance of SELU activations, in training.

    Same as ``torch.nn.AlphaDropout``.
    """

    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels, in training.

    Same as ``torch.nn.FeatureAlphaDropout``.
    """

    _fn = staticmethod(F.feature_alpha_dropout)


# ---- distances -------------------------------------------------------------------------------
class CosineSimilarity(Module):
    """The cosine similarity of two inputs along ``dim``.

    Same as ``torch.nn.CosineSimilarity``.
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        """``cosine_similarity`` of ``x1`` and ``x2`` along this layer's ``dim``.

        Args:
            x1: a tensor.
            x2: a tensor broadcastable with ``x1``.

        Returns:
            The similarities, the broadcast shape without ``dim``.
        """
        return _sp.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The ``p``-norm distance between the rows of two inputs.

    Same as ``torch.nn.PairwiseDistance``.
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        """``pairwise_distance`` of ``x1`` and ``x2``: the p-norm of ``x1 - x2 + eps`` along
        the last dimension.

        Args:
            x1: (N, D) or (D).
            x2: of ``x1``'s shape, or broadcastable with it.

        Returns:
            (N), or () for 1-D inputs; the last dimension is kept as size 1 with ``keepdim``.
        """
        return _sp.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


# ---- embedding bags, lazy linear -------------------------------------------------------------
class EmbeddingBag(Module):
    """Sums, means or maxima of bags of rows of a learned embedding table.

    Same as ``torch.nn.EmbeddingBag``.
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            w = _normal_array((num_embeddings, embedding_dim), _dtype(dtype))
            if padding_idx is not None:
                w[padding_idx] = 0
            self.weight = Parameter(w)
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        self.mode, self.sparse = mode, sparse
        self.include_last_offset = include_last_offset

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose weight is ``embeddings`` (frozen unless ``freeze=False``)."""
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def forward(self, input, offsets=None, per_sample_weights=None):
        return _sp.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                                 self.scale_grad_by_freq, self.mode, self.sparse,
                                 per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode='{self.mode}'"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


__all__ = ["GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm",
           "LocalResponseNorm", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout", "CosineSimilarity", "PairwiseDistance", "EmbeddingBag"]
