"""Helpers the distributions share: broadcasting parameters, probabilities and logits, random
draws from numbagrad's generator, lazily computed parameters."""

import math
from functools import update_wrapper
from numbers import Number

import numpy as np

from .. import dtypes
from ..core import torch_rng
from ..core.grad_mode import enable_grad
from ..factories import _engine, tensor
from ..ops.elementwise.pointwise import clamp, where
from ..ops.elementwise.public import log, log1p, sigmoid
from ..ops.reduce.reductions import softmax
from ..size import Size
from ..tensor import Tensor

euler_constant = 0.57721566490153286060


def _tensor(value, dt):
    """A new tensor of ``value`` (dtype ``dt``, or inferred when None)."""
    return tensor(value, dtype=dt)


def broadcast_shapes(*shapes):
    return Size(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def broadcast_all(*values):
    """Tensors and numbers broadcast to one shape (numbers in the first tensor's dtype, else
    the default dtype), as torch.distributions.utils.broadcast_all."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    tensors = [v if isinstance(v, Tensor) else _tensor(v, like.dtype if like is not None
                                                        else dtypes.get_default_dtype())
               for v in values]
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t if tuple(t.shape) == tuple(shape) else t.expand(shape) for t in tensors)


def finfo(dt):
    return np.finfo(dt.np)


def clamp_probs(probs):
    eps = float(finfo(probs.dtype).eps)
    return clamp(probs, min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return log(ps_clamped) - log1p(-ps_clamped)
    return log(ps_clamped)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return sigmoid(logits)
    return softmax(logits, -1)


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (torch.xlogy), without a NaN gradient from the other
    branch."""
    if not isinstance(x, Tensor):
        return x * log(y) if x != 0 else y * 0.0
    zero = x == 0
    safe_y = where(zero, 1.0, y) if isinstance(y, Tensor) else y
    logs = log(safe_y) if isinstance(safe_y, Tensor) else math.log(safe_y)
    return where(zero, 0.0, x * logs)


def sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[:value.ndim - dim], -1).sum(-1)


def _np_dtype(dtype):
    return (dtype or dtypes.get_default_dtype()).np


def standard_normal(shape, dtype):
    """torch's ``empty(shape, dtype).normal_()``."""
    shape = tuple(shape)
    draw = torch_rng.normal(_engine(), math.prod(shape), _np_dtype(dtype))
    return _tensor(draw.reshape(shape), dtype)


def uniform(shape, dtype, low=0.0, high=1.0):
    """torch's ``empty(shape, dtype).uniform_(low, high)`` (``rand`` for [0, 1))."""
    shape = tuple(shape)
    draw = torch_rng.uniform(_engine(), math.prod(shape), _np_dtype(dtype), low, high)
    return _tensor(draw.reshape(shape), dtype)


def exponential(shape, dtype):
    """torch's ``empty(shape, dtype).exponential_()``."""
    shape = tuple(shape)
    draw = torch_rng.exponential(_engine(), math.prod(shape), 1.0)
    return _tensor(draw.astype(_np_dtype(dtype)).reshape(shape), dtype)


class lazy_property:  # noqa: N801 - torch's name
    """A property computed on first access (with grad recording on) and cached on the
    instance, as torch.distributions.utils.lazy_property."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
