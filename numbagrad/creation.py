"""Creation, dtypes and devices beyond the basics: logspace, meshgrid, tril/triu_indices,
torch.device, the smaller dtypes and their finfo/iinfo, promotion queries, the thread count,
and the CUDA/MPS availability queries of a CPU-only build. Random sampling is in
creation_random.py, the Tensor methods in creation_methods.py."""

import warnings

import numba
import numpy as np

from . import _threads, backends, creation_legacy, creation_misc, cuda, dtypes
from .core.docs import documented
from .creation_device import device
from .creation_legacy import *  # noqa: F403 - torch.FloatTensor and kin
from .creation_methods import TENSOR_METHODS as _METHOD_TABLE
from .creation_misc import *  # noqa: F403 - asarray, scalar_tensor and the global switches
from .creation_random import (
    INPLACE_FILLS,  # noqa: F401 - bound by _methods' in-place block
    Generator,
    bernoulli,
    get_rng_state,
    initial_seed,
    multinomial,
    normal,
    poisson,
    randint_like,
    randperm,
    seed,
    set_rng_state,
)
from .creation_random import TENSOR_METHODS as _RANDOM_METHODS
from .factories import _finish, linspace
from .ops.shape import movement
from .tensor import Tensor

float16 = half = dtypes.float16
bfloat16 = dtypes.bfloat16
int8 = dtypes.int8
uint8 = dtypes.uint8
int16 = short = dtypes.int16


# ---- dtype queries --------------------------------------------------------------------------
def _need_dtype(fn, position, name, value):
    if not isinstance(value, dtypes.dtype):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be torch.dtype, "
                        f"not {type(value).__name__}")


def promote_types(type1, type2):
    """The dtype an operation on the two dtypes gives, by torch's promotion rules.

    Same as ``torch.promote_types``.

    Args:
        type1: a dtype.
        type2: a dtype.

    Returns:
        The promoted dtype.
    """
    _need_dtype("promote_types", 1, "type1", type1)
    _need_dtype("promote_types", 2, "type2", type2)
    return dtypes.promote(type1, type2)


def can_cast(from_, to):
    """Whether casting keeps the kind: no floating -> integer, no number -> bool."""
    _need_dtype("can_cast", 1, "from_", from_)
    _need_dtype("can_cast", 2, "to", to)
    return from_._kind <= to._kind


def _need_tensor(fn, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")


def is_floating_point(input):  # noqa: A002 - torch's argument name
    """Whether ``input``'s dtype is a floating-point type.

    Same as ``torch.is_floating_point``.
    """
    _need_tensor("is_floating_point", input)
    return input.dtype.is_floating_point


def is_complex(input):  # noqa: A002
    """Whether ``input``'s dtype is complex: always False, numbagrad has no complex dtypes.

    Same as ``torch.is_complex``.
    """
    _need_tensor("is_complex", input)
    return False


def _short(x):
    """A number as torch's finfo/iinfo repr prints it (C's %g)."""
    return f"{x:g}"


class finfo:  # noqa: N801 - named as torch.finfo
    """Machine limits of a floating dtype (the default dtype if none is given).

    Args:
        type: a floating-point dtype (default None: the default dtype); anything else
            raises TypeError.
    """

    # bfloat16's limits (8 exponent bits as float32, 8 significand bits)
    _BF16 = {"bits": 16, "eps": 2.0 ** -7, "max": 3.3895313892515355e+38,
             "tiny": 2.0 ** -126, "resolution": 0.01}

    def __init__(self, type=None):  # noqa: A002 - torch's argument name
        type = dtypes.get_default_dtype() if type is None else type
        if not (isinstance(type, dtypes.dtype) and type.is_floating_point):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        self.dtype = type.name
        if type is dtypes.bfloat16:
            info = self._BF16
            self.bits, self.eps, self.max = info["bits"], info["eps"], info["max"]
            self.tiny, self.resolution = info["tiny"], info["resolution"]
        else:
            info = np.finfo(type.np)
            self.bits = info.bits
            self.eps, self.max = float(info.eps), float(info.max)
            self.tiny, self.resolution = float(info.tiny), 10.0 ** -info.precision
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={_short(self.resolution)}, min={_short(self.min)}, "
                f"max={_short(self.max)}, eps={_short(self.eps)}, "
                f"smallest_normal={_short(self.smallest_normal)}, tiny={_short(self.tiny)}, "
                f"dtype={self.dtype})")


class iinfo:  # noqa: N801 - named as torch.iinfo
    """Limits of an integer dtype.

    Args:
        type: an integer dtype other than bool; anything else raises TypeError.
    """

    def __init__(self, type):  # noqa: A002
        if type is dtypes.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(type, dtypes.dtype) or type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits, self.min, self.max = info.bits, int(info.min), int(info.max)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={_short(self.min)}, max={_short(self.max)}, dtype={self.dtype})"


# ---- threads: numbagrad's parallel kernels are Numba's ---------------------------------------
def set_num_threads(int):  # noqa: A002 - torch's argument name
    """Set the number of threads of the parallel (Numba) kernels, at most the pool's size.

    Same as ``torch.set_num_threads``.

    Args:
        int: the number of threads, a positive int; capped at Numba's pool size
            (``NUMBA_NUM_THREADS``).
    """
    if not hasattr(int, "__index__") or int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    # Numba's pool is sized at start (NUMBA_NUM_THREADS); more than that is not available
    numba.set_num_threads(min(int, numba.config.NUMBA_NUM_THREADS))
    _threads.wanted(numba.get_num_threads())


def get_num_threads():
    """The number of threads numbagrad's parallel (Numba) kernels use.

    Same as ``torch.get_num_threads``.
    """
    return numba.get_num_threads()


# ---- creation -------------------------------------------------------------------------------
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """A 1-D tensor of ``base`` to the powers ``linspace(start, end, steps)``.

    Same as ``torch.logspace``.
    """
    start, end = (float(v) for v in (start, end))  # 0-d tensors too, as torch takes them
    exponents = linspace(start, end, steps, dtype=dtypes.float64)
    dt = dtypes.as_dtype(dtype) or dtypes.get_default_dtype()
    values = np.power(float(base), np.asarray(exponents._data))
    if not dt.is_floating_point:
        values = np.trunc(values)  # torch computes in double, then truncates
    return _finish(values.astype(dt.np), requires_grad, device)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors, indexed ``"ij"`` (matrix) or ``"xy"`` (Cartesian).

    Same as ``torch.meshgrid``.
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if any(t.ndim > 1 for t in tensors):
        raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                           + next(repr(t) for t in tensors if t.ndim > 1))
    flat = [t.reshape(-1) for t in tensors]
    axes = list(range(len(flat)))
    if indexing == "xy" and len(flat) >= 2:  # "xy": the first two inputs' axes trade places
        axes[0], axes[1] = 1, 0
    sizes = [0] * len(flat)
    for k, t in enumerate(flat):
        sizes[axes[k]] = t.shape[0]
    out = []
    for k, t in enumerate(flat):
        view = [1] * len(flat)
        view[axes[k]] = t.shape[0]
        out.append(movement.expand(t.reshape(*view), *sizes))
    return tuple(out)


def _triangle_indices(name, lower, row, col, offset, dtype, device):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = dtypes.as_dtype(dtype) or dtypes.int64
    if dt.is_floating_point or dt is dtypes.bool_:
        raise NotImplementedError(f"\"{name}\" not implemented for '{dt.scalar_name}'")
    rows, cols = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    return _finish(np.stack([rows, cols]).astype(dt.np).reshape(2, -1), False, device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The coordinates of the lower triangle of a ``row`` by ``col`` matrix, a 2 x N tensor.

    Same as ``torch.tril_indices``.
    """
    return _triangle_indices("tril_indices", True, row, col, offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The coordinates of the upper triangle of a ``row`` by ``col`` matrix, a 2 x N tensor.

    Same as ``torch.triu_indices``.
    """
    return _triangle_indices("triu_indices", False, row, col, offset, dtype, device)


def _no_complex(name):
    def refuse(*args, **kwargs):
        raise TypeError(f"numbagrad: torch.{name} makes a complex tensor, and numbagrad has no "
                        "complex dtypes; keep the real and imaginary parts as two real tensors")
    return documented(refuse, f"Raise TypeError: ``torch.{name}`` makes a complex tensor, and "
                      "numbagrad has no complex dtypes.\n\nArgs:\n    *args: accepted and "
                      "ignored: any call raises.\n    **kwargs: the same.", name)


complex = _no_complex("complex")  # noqa: A001 - torch's name
polar = _no_complex("polar")

__all__ = ["Generator", "backends", "bernoulli", "bfloat16", "can_cast", "complex", "cuda",
           "device", "finfo", "float16", "get_num_threads", "get_rng_state", "half", "iinfo",
           "initial_seed", "int16", "int8", "is_complex", "is_floating_point", "logspace",
           "meshgrid", "multinomial", "normal", "poisson", "polar", "promote_types",
           "randint_like", "randperm", "seed", "set_num_threads", "set_rng_state", "short",
           "tril_indices", "triu_indices", "uint8", *creation_misc.__all__,
           *creation_legacy.__all__]

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {**_METHOD_TABLE, **_RANDOM_METHODS}

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"logspace": "factory", "tril_indices": "factory", "triu_indices": "factory"}
