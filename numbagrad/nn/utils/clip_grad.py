"""Gradient clipping and flat parameter vectors, as torch.nn.utils's."""

import math

import numpy as np

from ...core.grad_mode import no_grad
from ...factories import tensor
from ...ops.shape.join import cat
from ...ops.shape.movement import reshape
from ...tensor import Tensor, _make


def _as_list(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def _vector_norm(a, norm_type):
    """torch.linalg.vector_norm of a NumPy array, in its dtype."""
    a = np.abs(a.reshape(-1))
    if norm_type == math.inf:
        return a.max(initial=0).astype(a.dtype)
    if norm_type == -math.inf:
        return a.min().astype(a.dtype)
    if norm_type == 0:
        return np.asarray(np.count_nonzero(a), a.dtype)
    if norm_type == 2:
        return np.sqrt(np.dot(a, a)).astype(a.dtype)
    return (np.sum(a ** norm_type) ** (1.0 / norm_type)).astype(a.dtype)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of ``tensors`` (as if they were one vector)."""
    arrays = [np.asarray(t._data) for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not arrays:
        return tensor(0.0)
    norms = [_vector_norm(a, norm_type) for a in arrays]
    dt = np.result_type(*norms)
    total = _vector_norm(np.stack([np.asarray(n, dt) for n in norms]), norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return _make(np.asarray(total, dt))


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients in place by max_norm / (total_norm + 1e-6), if that is below 1."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    total = np.asarray(total_norm._data if isinstance(total_norm, Tensor) else total_norm)
    dt = total.dtype.type if total.dtype.kind == "f" else np.float32
    # in the norm's dtype, as torch computes it: max_norm / (total + 1e-6), at most 1
    coef = min(dt(max_norm) / (dt(total) + dt(1e-6)), dt(1.0))
    with no_grad():
        for g in grads:
            data = g._array()
            data *= data.dtype.type(coef)
            g._vc[0] += 1


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Clip the gradients' total norm to ``max_norm`` in place; returns the total norm
    before clipping."""
    params = _as_list(parameters)
    total = get_total_norm([p.grad for p in params if p.grad is not None], norm_type,
                           error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            data = p.grad._array()
            np.clip(data, -clip_value, clip_value, out=data)
            p.grad._vc[0] += 1


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one vector (differentiable)."""
    return cat([reshape(p, (-1,)) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of ``vec`` into the parameters' data."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    data, offset = np.asarray(vec._data), 0
    for p in parameters:
        n = p.numel()
        p.data = _make(data[offset:offset + n].reshape(tuple(p.shape)).astype(p._data.dtype))
        offset += n


__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters"]
