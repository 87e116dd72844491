"""Tensor factories (tensor, zeros, randn, ...) and the conversion of Python data to NumPy."""

import operator
import threading

import numpy as np

from . import dtypes
from .core import torch_rng
from .core.docs import documented, torch_doc
from .core.tape import traced_tape
from .creation_device import check_device
from .tensor import Tensor, _make, _to_numpy, require_grad


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


def _finish(arr, requires_grad, device=None):
    check_device(device)
    t = _make(arr)
    if requires_grad:
        require_grad(t)
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """A new leaf tensor of a copy of ``data`` (nested lists, numbers, arrays, tensors).

    Same as ``torch.tensor``.

    Examples:
        >>> import numbagrad as torch
        >>> x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        >>> x
        tensor([[1., 2.],
                [3., 4.]], requires_grad=True)
        >>> torch.tensor([1, 2, 3]).dtype
        torch.int64
    """
    check_device(device)
    return _finish(_to_numpy(data, dtype), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """``data`` as a tensor, sharing memory with a NumPy array or tensor of the dtype asked.

    Same as ``torch.as_tensor``.
    """
    check_device(device)
    if isinstance(data, Tensor) and (dtype is None or dtypes.as_dtype(dtype) is data.dtype):
        return data
    return _make(_to_numpy(data, dtype, copy=False))


def from_numpy(arr):
    """A tensor sharing memory with the NumPy array ``arr``, in its dtype.

    Same as ``torch.from_numpy``.

    Examples:
        >>> import numbagrad as torch
        >>> import numpy as np
        >>> a = np.array([1., 2.])
        >>> t = torch.from_numpy(a)
        >>> a[0] = 5.
        >>> t
        tensor([5., 2.], dtype=torch.float64)

    Args:
        arr: a NumPy array.

    Returns:
        A tensor of ``arr``'s shape and dtype, sharing its memory.
    """
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    dtypes.from_numpy_dtype(arr.dtype)
    return _make(arr)  # shares memory, as torch.from_numpy does


def _dt(dtype):
    return (dtypes.as_dtype(dtype) or dtypes.get_default_dtype()).np


def zeros(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` filled with zeros.

    Same as ``torch.zeros``.
    """
    return _finish(np.zeros(_shape(size), _dt(dtype)), requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` filled with ones.

    Same as ``torch.ones``.
    """
    return _finish(np.ones(_shape(size), _dt(dtype)), requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` with uninitialized values.

    Same as ``torch.empty``.
    """
    return _finish(np.empty(_shape(size), _dt(dtype)), requires_grad, device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value``, its dtype inferred from it.

    Same as ``torch.full``.
    """
    if isinstance(fill_value, str):
        raise TypeError("full(): argument 'fill_value' (position 2) must be Number, not str")
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    return _finish(np.full(_shape((size,)), fill_value, _dt(dtype)), requires_grad, device)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """A 2-D tensor with ones on the diagonal and zeros elsewhere, ``n`` by ``m`` (or ``n``).

    Same as ``torch.eye``.
    """
    check_device(device)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    return _finish(np.eye(n, m, dtype=_dt(dtype)), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """A 1-D tensor of the numbers from ``start`` up to ``end`` (excluded) by ``step``.

    Same as ``torch.arange``.
    """
    check_device(device)
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
    """A 1-D tensor of ``steps`` evenly spaced numbers from ``start`` to ``end``, both included.

    Same as ``torch.linspace``.
    """
    check_device(device)
    if not hasattr(steps, "__index__"):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _finish(np.linspace(start, end, steps).astype(_dt(dtype)), requires_grad)


def _like(fn):
    def like(t, *, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, **kw):
        return fn(*t.shape, dtype=dtype or t.dtype, device=device, requires_grad=requires_grad,
                  **kw)
    name = fn.__name__ + "_like"
    return documented(like, torch_doc(f"A tensor of ``t``'s shape as ``{fn.__name__}`` makes, in "
                                      "``t``'s dtype by default.", f"torch.{name}"), name)


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """A tensor of ``t``'s shape filled with ``fill_value``, in ``t``'s dtype by default.

    Same as ``torch.full_like``.
    """
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype, device=device,
                requires_grad=requires_grad)


# ---- random numbers: torch's mt19937 streams, one default generator per process -------------
class Generator:
    """torch.Generator on the CPU: torch's mt19937 engine, seeding and state layout, so a seed
    draws the numbers torch draws and states move between the two libraries.

    Attributes:
        DEFAULT_SEED: the seed of a new Generator (torch's).

    Args:
        device: the device, "cpu" or one naming the CPU (default "cpu"); a CUDA device
            raises RuntimeError.
    """

    DEFAULT_SEED = torch_rng.DEFAULT_SEED  # torch's seed of a new Generator

    def __init__(self, device="cpu"):
        if str(device).startswith("cuda"):
            raise RuntimeError("Cannot get CUDA generator without ATen_cuda library.")
        self.device = check_device(device)
        self._engine = torch_rng.Engine(self.DEFAULT_SEED)

    def manual_seed(self, seed):
        """Seed the generator; returns it."""
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        self._engine.manual_seed(seed % 2 ** 64)  # torch reads a negative seed as its bits
        return self

    def seed(self):
        """Seed from the operating system's entropy; returns the seed."""
        s = torch_rng.entropy_seed()
        self._engine.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed the generator was last seeded with."""
        return self._engine.seed

    def get_state(self):
        """The generator's state as a uint8 tensor (torch's layout: restores in torch too)."""
        return _make(self._engine.get_state())

    def set_state(self, new_state):
        """Restore a state from ``get_state`` (numbagrad's or torch's)."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not dtypes.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != torch_rng.STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size "
                               f"{torch_rng.STATE_BYTES} but found the input RNG state size "
                               f"to be {new_state.numel()}")
        self._engine.set_state(np.ascontiguousarray(new_state._data).tobytes())
        return self


_default = []            # the process's default Generator, made on first use
_default_lock = threading.Lock()


def default_generator():
    """The default Generator (torch.default_generator: one per process, every thread draws
    from it), seeded from the system's entropy when first used."""
    if not _default:
        with _default_lock:
            if not _default:
                gen = Generator()
                gen.seed()
                _default.append(gen)
    return _default[0]


def manual_seed(seed):
    """Seed the default random generator; returns it.

    Same as ``torch.manual_seed``: the same seed draws the same numbers as in torch.

    Examples:
        >>> import numbagrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.rand(3)
        tensor([0.4963, 0.7682, 0.0885])
    """
    return default_generator().manual_seed(seed)


def _engine(generator=None):
    """The torch_rng.Engine to draw from: ``generator``'s, else the default one's."""
    if traced_tape() is not None:
        # a draw made while numbagrad.compile traces would be baked into the trace and
        # replayed, the same numbers, on every call: refuse rather than be silently wrong
        raise NotImplementedError(
            "numbagrad.compile: random ops (dropout in training mode, rand, randn, randint, "
            "randperm, nn.init) inside a compiled function would replay the trace's draws on "
            "every call; draw outside and pass the values as an argument, or call "
            "model.eval() to turn dropout off")
    if generator is not None:
        if not isinstance(generator, Generator):
            raise TypeError(f"expected a torch.Generator, but got "
                            f"{type(generator).__name__}")
        return generator._engine
    return default_generator()._engine


def _normal_array(shape, dtype, generator=None):
    """A NumPy array of shape drawn as torch's ``empty(shape, dtype).normal_()``."""
    shape = tuple(shape)
    n = int(np.prod(shape))
    return torch_rng.normal(_engine(generator), n, np.dtype(dtype)).reshape(shape)


def _keep_mask(shape, keep_p, like=None):
    """The dropout mask torch draws: ``empty_like(like).bernoulli_(keep_p)`` as booleans (a
    double uniform per element, in like's memory order), or ``empty(shape)``'s."""
    shape = tuple(shape)
    draw = torch_rng.bernoulli_scalar(_engine(), int(np.prod(shape)), keep_p)
    if like is None:
        return draw.reshape(shape)
    return torch_rng.place(draw, shape, np.asarray(like).strides)


def _dropout_noise(keep, p, dtype):
    """noise.div_(1 - p) on the 0/1 mask, in the dtype (the division torch makes)."""
    dt = np.dtype(dtype)
    return keep.astype(dt) / dt.type(1.0 - p)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` of numbers drawn uniformly from [0, 1).

    Same as ``torch.rand``.
    """
    shape = _shape(size)
    dt = _dt(dtype)
    n = int(np.prod(shape))
    return _finish(torch_rng.uniform(_engine(generator), n, dt).reshape(shape), requires_grad,
                   device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` of numbers drawn from the standard normal distribution.

    Same as ``torch.randn``.
    """
    shape = _shape(size)
    dt = _dt(dtype)
    n = int(np.prod(shape))
    return _finish(torch_rng.normal(_engine(generator), n, dt).reshape(shape), requires_grad,
                   device)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    """A tensor of shape ``size`` of integers drawn uniformly from [low, high).

    Same as ``torch.randint``.
    """
    if high is None:
        low, high = 0, low
    elif size is None and isinstance(high, (tuple, list)):  # torch's randint(high, size)
        low, high, size = 0, low, high
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    dt = dtypes.as_dtype(dtype) or dtypes.int64
    shape = _shape((size,))
    draw = torch_rng.random_from_to(_engine(generator), int(np.prod(shape)), int(low), int(high))
    return _finish(draw.astype(dt.np).reshape(shape), requires_grad, device)


def rand_like(t, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """A tensor of ``t``'s shape of numbers drawn uniformly from [0, 1).

    Same as ``torch.rand_like``.
    """
    return rand(*t.shape, generator=generator, dtype=dtype or t.dtype, device=device,
                requires_grad=requires_grad)


def randn_like(t, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """A tensor of ``t``'s shape of numbers drawn from the standard normal distribution.

    Same as ``torch.randn_like``.
    """
    return randn(*t.shape, generator=generator, dtype=dtype or t.dtype, device=device,
                 requires_grad=requires_grad)

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"arange": "factory", "empty": "factory", "eye": "factory", "full": "factory",
             "linspace": "factory", "ones": "factory", "rand": "factory", "randint": "factory",
             "randn": "factory", "zeros": "factory"}
