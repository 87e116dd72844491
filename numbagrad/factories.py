"""Tensor factories (tensor, zeros, randn, ...) and the conversion of Python data to NumPy."""

import operator
import threading

import numpy as np

from . import dtypes
from .core.tape import traced_tape
from .tensor import Tensor, _make, _to_numpy


def _int_sizes(size):
    """The sizes as ints; torch takes no float sizes (int() would truncate them)."""
    out = []
    for s in size:
        try:
            out.append(operator.index(s))
        except TypeError:
            raise TypeError(f"size must be tuple of ints, but got {type(s).__name__}") from None
    return tuple(out)


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = _int_sizes(size)
    if any(s < 0 for s in shape):
        bad = next(s for s in shape if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: "
                           f"{list(shape)}")
    return shape


def _finish(arr, requires_grad):
    t = _make(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    return _finish(_to_numpy(data, dtype), requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and (dtype is None or dtypes.as_dtype(dtype) is data.dtype):
        return data
    return _make(_to_numpy(data, dtype, copy=False))


def from_numpy(arr):
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    dtypes.from_numpy_dtype(arr.dtype)
    return _make(arr)  # shares memory, as torch.from_numpy does


def _dt(dtype):
    return (dtypes.as_dtype(dtype) or dtypes.get_default_dtype()).np


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _finish(np.zeros(_shape(size), _dt(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _finish(np.ones(_shape(size), _dt(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return _finish(np.empty(_shape(size), _dt(dtype)), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if isinstance(fill_value, str):
        raise TypeError("full(): argument 'fill_value' (position 2) must be Number, not str")
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    return _finish(np.full(_shape((size,)), fill_value, _dt(dtype)), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    return _finish(np.eye(n, m, dtype=_dt(dtype)), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (np.isfinite(start) and np.isfinite(end)):
        raise RuntimeError(f"unsupported range: {float(start):g} -> {float(end):g}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = dtypes.get_default_dtype() if is_float else dtypes.int64
    return _finish(np.arange(start, end, step).astype(_dt(dtype)), requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    if not hasattr(steps, "__index__"):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _finish(np.linspace(start, end, steps).astype(_dt(dtype)), requires_grad)


def _like(fn):
    def like(t, *, dtype=None, device=None, requires_grad=False, **kw):
        return fn(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, **kw)
    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(tuple(t.shape), fill_value, dtype=dtype or t.dtype, requires_grad=requires_grad)


# ---- random numbers: one generator per thread, seeded by manual_seed -----------------------
class _Rng(threading.local):
    gen = None


_rng = _Rng()


def manual_seed(seed):
    _rng.gen = np.random.default_rng(int(seed))
    return _rng.gen


def _gen():
    if traced_tape() is not None:
        # a draw made while numbagrad.compile traces would be baked into the trace and
        # replayed, the same numbers, on every call: refuse rather than be silently wrong
        raise NotImplementedError(
            "numbagrad.compile: random ops (dropout in training mode, rand, randn, randint, "
            "randperm, nn.init) inside a compiled function would replay the trace's draws on "
            "every call; draw outside and pass the values as an argument, or call "
            "model.eval() to turn dropout off")
    if _rng.gen is None:
        _rng.gen = np.random.default_rng()
    return _rng.gen


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    return _finish(_gen().random(_shape(size)).astype(_dt(dtype)), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None):
    return _finish(_gen().standard_normal(_shape(size)).astype(_dt(dtype)), requires_grad)


def randint(low, high=None, size=None, *, dtype=None, device=None, requires_grad=False):
    if high is None:
        low, high = 0, low
    elif size is None and isinstance(high, (tuple, list)):  # torch's randint(high, size)
        low, high, size = 0, low, high
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    dt = dtypes.as_dtype(dtype) or dtypes.int64
    return _finish(_gen().integers(low, high, _shape((size,))).astype(dt.np), requires_grad)


def rand_like(t, *, dtype=None, requires_grad=False):
    return rand(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def randn_like(t, *, dtype=None, requires_grad=False):
    return randn(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)
