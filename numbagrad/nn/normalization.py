"""Embedding, LayerNorm, BatchNorm1d/2d: torch's parameters, buffers, initialisation, reprs."""

import numpy as np

from .. import dtypes
from ..factories import _normal_array
from ..func.batch_norm import BATCH_NORM_TYPES
from ..ops.nn import norm as _norm
from ..tensor import _make
from .module import Module, Parameter


def _dtype(dtype):
    return (dtypes.as_dtype(dtype) or dtypes.get_default_dtype()).np


class Embedding(Module):
    """A lookup table: the rows of the learned ``weight`` at the input's indices.

    Same as ``torch.nn.Embedding``.
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            w = _normal_array((num_embeddings, embedding_dim), _dtype(dtype))
            if padding_idx is not None:
                w[padding_idx] = 0
            self.weight = Parameter(w, requires_grad=not _freeze)
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, **kw):
        """An Embedding whose weight is ``embeddings`` (frozen unless ``freeze=False``)."""
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, _weight=embeddings, _freeze=freeze,
                   **kw)

    def forward(self, input):  # noqa: A002 - torch's names
        """The rows of this layer's weight that ``input`` indexes (a layer with ``max_norm``,
        ``scale_grad_by_freq`` or ``sparse`` set raises NotImplementedError).

        Args:
            input: an integer tensor of indices in [0, num_embeddings), of any shape.

        Returns:
            A tensor of shape (*input.shape, embedding_dim).
        """
        return _norm.embedding(input, self.weight, self.padding_idx, self.max_norm,
                               self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        return s


class LayerNorm(Module):
    """Layer normalization over the last dimensions ``normalized_shape``, with learned affine.

    Same as ``torch.nn.LayerNorm``.
    """

    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
            tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        dt = _dtype(dtype)
        if elementwise_affine:
            self.weight = Parameter(np.ones(shape, dt))
            self.bias = Parameter(np.zeros(shape, dt)) if bias else None
            if not bias:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):  # noqa: A002
        """``layer_norm`` of ``input`` over its last dimensions (``normalized_shape``).

        Args:
            input: a tensor whose trailing dimensions are ``normalized_shape``.

        Returns:
            A tensor of ``input``'s shape.
        """
        return _norm.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine="
                f"{self.elementwise_affine}, bias={self.bias is not None}")


class _NormBase(Module):
    """Batch and instance norm's parameters and running statistics (torch's _NormBase)."""

    def __init__(self, num_features, eps, momentum, affine, track_running_stats, dtype):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dt = _dtype(dtype)
        if affine:
            self.weight = Parameter(np.ones(num_features, dt))
            self.bias = Parameter(np.zeros(num_features, dt))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _make(np.zeros(num_features, dt)))
            self.register_buffer("running_var", _make(np.ones(num_features, dt)))
            self.register_buffer("num_batches_tracked", _make(np.array(0, np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean._array()[...] = 0
            self.running_var._array()[...] = 1
            self.num_batches_tracked._array()[...] = 0

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            self.weight._array()[...] = 1
            self.bias._array()[...] = 0


class _BatchNorm(_NormBase):
    _dims = ()

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)

    def forward(self, input):  # noqa: A002
        if input.ndim not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got "
                             f"{input.ndim}D input)")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            _norm._refuse_in_trace()
            self.num_batches_tracked._array()[...] += 1
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or not self.track_running_stats
        stats = (self.running_mean, self.running_var) \
            if not self.training or self.track_running_stats else (None, None)
        return _norm.batch_norm(input, *stats, self.weight, self.bias, use_batch, momentum,
                                self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine="
                f"{self.affine}, bias={self.bias is not None}, track_running_stats="
                f"{self.track_running_stats}")


BATCH_NORM_TYPES.append(_BatchNorm)  # (replace_all_batch_norm_modules_)


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) input, with running statistics for eval.

    Same as ``torch.nn.BatchNorm1d``, without ``bias`` (the shift comes with ``affine``).
    """

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) input, with running statistics for eval.

    Same as ``torch.nn.BatchNorm2d``, without ``bias`` (the shift comes with ``affine``).
    """

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) input, with running statistics for eval.

    Same as ``torch.nn.BatchNorm3d``, without ``bias`` (the shift comes with ``affine``).
    """

    _dims = (5,)


__all__ = ["Embedding", "LayerNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
