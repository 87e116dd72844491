# ruff: noqa: A002 - torch's argument names (input)
"""torch.nn.functional.embedding_bag: each bag's rows of the weight summed, averaged
(rows of taps over the weight) or maxed (window maxima), as EmbeddingBagBackward0."""

import numpy as np

from ...tensor import Tensor
from .spatial_maps import EMBEDDING_BAG, EMBEDDING_BAG_MAX, record_rows, record_window_max


def _bags(idx, offsets, include_last_offset):
    """(flat indices, start of each bag, end of each bag), torch's checks."""
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is "
                             f"a mini-batch of fixed length sequences. However, found offsets of "
                             f"type {type(offsets)}")
        b, n = idx.shape
        starts = np.arange(b, dtype=np.int64) * n
        return idx.reshape(-1), starts, starts + n
    if idx.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{idx.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    off = np.asarray(offsets._array() if isinstance(offsets, Tensor) else offsets, np.int64)
    if off.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    if off.size and off[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(off[0])}\n"
                           f"[ torch.LongTensor{{}} ]")
    if include_last_offset:
        starts, ends = off[:-1], off[1:]
    else:
        starts, ends = off, np.append(off[1:], len(idx))
    return idx, starts, np.minimum(ends, len(idx))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxima of bags of rows of ``weight``, without the rows in between.

    Same as ``torch.nn.functional.embedding_bag``; ``max_norm``,
    ``scale_grad_by_freq`` and ``sparse`` raise NotImplementedError, and ``per_sample_weights``
    get no gradient.
    """
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("numbagrad: embedding_bag's max_norm, scale_grad_by_freq and "
                                  "sparse are not implemented")
    idx = np.asarray(input._array() if isinstance(input, Tensor) else input)
    if idx.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got torch.FloatTensor instead "
                           "(while checking arguments for embedding_bag)")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if per_sample_weights is not None and per_sample_weights.requires_grad:
        raise NotImplementedError("numbagrad: embedding_bag's gradient with respect to "
                                  "per_sample_weights is not implemented")
    flat, starts, ends = _bags(idx, offsets, include_last_offset)
    n, dim = weight.shape
    if flat.size and (flat.min() < 0 or flat.max() >= n):
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this "
                           "error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    counts = np.maximum(ends - starts, 0)
    taps = int(counts.max()) if counts.size else 0
    slot = starts[:, None] + np.arange(taps)
    inside = slot < ends[:, None]
    rows = np.where(inside, flat[np.where(inside, slot, 0)] if flat.size else 0, -1)
    if padding_idx is not None:
        rows = np.where(rows == padding_idx, -1, rows)
    # per (bag, column): the weight's flat positions rows * dim + column
    cols = np.where(rows[:, None, :] >= 0, rows[:, None, :] * dim + np.arange(dim)[None, :, None],
                    -1).reshape(-1, taps)
    out_shape = (len(starts), dim)
    if mode == "max":
        return record_window_max(EMBEDDING_BAG_MAX, weight, cols, out_shape)[0]
    if mode == "mean":
        per_bag = np.maximum((rows >= 0).sum(1), 1)
        w = np.broadcast_to((1.0 / per_bag)[:, None], rows.shape)
    elif per_sample_weights is not None:
        psw = per_sample_weights._array().reshape(-1).astype(np.float64)
        w = np.where(inside, psw[np.where(inside, slot, 0)] if psw.size else 0, 0.0)
    else:
        w = np.ones(rows.shape)
    weights = np.broadcast_to(w[:, None, :], (len(starts), dim, taps)).reshape(-1, taps)
    return record_rows(EMBEDDING_BAG, weight, cols, weights, out_shape)


__all__ = ["embedding_bag"]
