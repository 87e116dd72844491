"""The scans of integers and bins, never differentiated: unique, unique_consecutive, bincount,
histc, bucketize, searchsorted (NumPy's routines, read as torch reads its arguments)."""

import numpy as np

from ... import dtypes
from ...tensor import Tensor, _make
from ..shape.movement import _wrap


def _array(t):
    return np.asarray(t._data) if isinstance(t, Tensor) else np.asarray(t)


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    out = [_make(values)]
    if return_inverse:
        out.append(_make(np.asarray(inverse, np.int64)))
    if return_counts:
        out.append(_make(np.asarray(counts, np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique(x, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """torch.unique: sorted whatever ``sorted`` says (torch's CPU kernel sorts too)."""
    data = _array(x)
    if dim is None:
        values, inverse, counts = np.unique(data.reshape(-1), return_inverse=True,
                                            return_counts=True)
        return _unique_result(values, inverse.reshape(data.shape), counts, return_inverse,
                              return_counts)
    d = _wrap(dim, data.ndim)
    values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True, axis=d)
    return _unique_result(values, inverse.reshape(-1), counts, return_inverse, return_counts)


def unique_consecutive(x, return_inverse=False, return_counts=False, dim=None):
    """The elements with each run of equal neighbours reduced to one.

    Same as ``torch.unique_consecutive``.
    """
    data = _array(x)
    if dim is None:
        flat = data.reshape(-1)
        starts = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else \
            np.zeros(0, bool)
        values = flat[starts]
        inverse = (np.cumsum(starts) - 1).reshape(data.shape)
    else:
        d = _wrap(dim, data.ndim)
        moved = np.moveaxis(data, d, 0).reshape(data.shape[d], -1)
        change = np.any(moved[1:] != moved[:-1], axis=1) if moved.shape[0] else \
            np.zeros(0, bool)
        starts = np.concatenate([[True], change]) if moved.shape[0] else np.zeros(0, bool)
        values = np.compress(starts, data, axis=d)
        inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), starts.size))
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ... occurs in a 1-D non-negative integer tensor (or weighted).

    Same as ``torch.bincount``.
    """
    data = _array(input)
    if data.dtype.kind not in "iub" or (data.dtype == np.bool_):
        if data.dtype == np.bool_:
            data = data.astype(np.int64)
        else:
            name = dtypes.from_numpy_dtype(data.dtype).scalar_name
            raise NotImplementedError(f'"bincount_cpu" not implemented for \'{name}\'')
    if data.ndim != 1 or (data.size and data.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _make(np.bincount(data, minlength=minlength).astype(np.int64))
    w = _array(weights)
    if w.ndim != 1 or w.shape[0] != data.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out_dtype = w.dtype if w.dtype.kind == "f" else np.float64
    return _make(np.bincount(data, weights=w.astype(np.float64),
                             minlength=minlength).astype(out_dtype))


def histc(input, bins=100, min=0, max=0):  # noqa: A002
    """A histogram: counts in ``bins`` equal bins over [min, max] (the data's range if equal).

    Same as ``torch.histc``.
    """
    data = _array(input)
    if data.dtype.kind != "f":
        name = dtypes.from_numpy_dtype(data.dtype).scalar_name
        raise NotImplementedError(f'"histogram_cpu" not implemented for \'{name}\'')
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and data.size:
        lo, hi = float(data.min()), float(data.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc(): range of [{lo:g}, {hi:g}] is not finite")
    v = data.reshape(-1).astype(np.float64)
    v = v[(v >= lo) & (v <= hi)]
    # torch's bin of a value: (v - min) * bins / (max - min), the maximum in the last bin
    pos = np.minimum(((v - lo) * bins / (hi - lo)).astype(np.int64), bins - 1)
    return _make(np.bincount(pos, minlength=bins).astype(data.dtype))


def _index_dtype(out_int32):
    return np.int32 if out_int32 else np.int64


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The index of the bucket of the sorted 1-D ``boundaries`` each element falls in.

    Same as ``torch.bucketize``.
    """
    b = _array(boundaries)
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    v = _array(input)
    side = "right" if right else "left"
    return _make(np.asarray(np.searchsorted(b, v, side=side), _index_dtype(out_int32)))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Where ``values`` would go into the sorted last dimension of ``sorted_sequence``: indices.

    Same as ``torch.searchsorted``.
    """
    seq = _array(sorted_sequence)
    v = _array(input)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    order = None if sorter is None else _array(sorter)
    how = "right" if right else "left"
    if seq.ndim <= 1:
        return _make(np.asarray(np.searchsorted(seq.reshape(-1), v, side=how, sorter=order),
                                _index_dtype(out_int32)))
    if v.ndim != seq.ndim or v.shape[:-1] != seq.shape[:-1]:
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor {list(seq.shape)} "
                           f"and input value tensor {list(v.shape)}")
    rows_s = seq.reshape(-1, seq.shape[-1])
    rows_v = v.reshape(-1, v.shape[-1])
    rows_o = None if order is None else order.reshape(-1, order.shape[-1])
    out = np.stack([np.searchsorted(rows_s[i], rows_v[i], side=how,
                                    sorter=None if rows_o is None else rows_o[i])
                    for i in range(rows_s.shape[0])]) if rows_s.shape[0] else \
        np.zeros(rows_v.shape, np.int64)
    return _make(np.asarray(out.reshape(v.shape), _index_dtype(out_int32)))

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"bucketize": "one", "histc": "one", "searchsorted": "one"}
