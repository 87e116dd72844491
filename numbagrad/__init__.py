"""numbagrad: PyTorch's autograd API on NumPy arrays, differentiated by a compiled tape sweep.

Attributes:
    pi: the constant pi, a Python float (as ``torch.pi``).
    e: Euler's number, a Python float (as ``torch.e``).
    inf: positive infinity, a Python float (as ``torch.inf``).
    nan: not a number, a Python float (as ``torch.nan``).
"""

import importlib
import inspect as _inspect
import math as _math
import sys as _sys
import types as _types
import warnings as _warnings

# torch computes 1/0 = inf and log(0) = -inf without a word; NumPy warns. Silence NumPy's
# floating-point RuntimeWarnings raised from numbagrad's own modules only (the filter
# matches the module that made the NumPy call, so the user's NumPy code is untouched).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"numbagrad(\.|$)")

from .core import gc_pause, progress, thread_wait
progress.install()  # say so when a first use compiles kernels for long
gc_pause.install()  # and compile without the garbage collector walking the process
thread_wait.install()  # Numba's idle OpenMP threads sleep soon: no spinning on busy cores

from . import dtypes as _dtypes
from .dtypes import dtype, get_default_dtype, set_default_dtype
from .tensor import Tensor
from .size import Size
from . import _methods  # noqa: F401 - binds Tensor's operators and methods
from . import _inplace_forms  # noqa: F401 - the wider API's in-place and method forms
from .factories import default_generator as _default_generator
from .factories import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                        linspace, manual_seed, ones, ones_like, rand, rand_like, randint, randn,
                        randn_like, tensor, zeros, zeros_like)
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from . import autograd
from . import func  # noqa: F401 - torch.func
from .autograd import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .ops.elementwise.pointwise import (add, clamp, clip, div, divide, maximum, minimum, mul,
                                        multiply, pow, sub, subtract, true_divide, where)
from .ops.elementwise.public import *  # noqa: F401,F403 - exp, tanh...: made from their records
# the structured families' front ends: each module lists its own in __all__
from .ops.reduce.reductions import *  # noqa: F401,F403
from .ops.shape.movement import *  # noqa: F401,F403
from .ops.shape.join import *  # noqa: F401,F403
from .ops.linalg.matmul import *  # noqa: F401,F403
from .ops.index.indexing import *  # noqa: F401,F403
from ._format import get_printoptions, set_printoptions
from . import nn  # noqa: F401 - torch.nn
from . import optim  # noqa: F401 - torch.optim
from .serialization import load, save
from .interop import from_dlpack
from . import utils  # noqa: F401 - torch.utils.data
from .compiler.compiled import compile  # noqa: A004 - torch.compile's name
from . import optimize  # noqa: F401 - scipy.optimize with compiled derivatives
from . import viz  # noqa: F401 - graph pictures and the tape as a table
from . import profiler  # noqa: F401 - torch.profiler
# the wider torch namespace, one module per area (each lists its names in __all__)
from .ops.elementwise.math_api import *  # noqa: F401,F403
from .ops.elementwise.special_api import *  # noqa: F401,F403
from .ops.scan.api import *  # noqa: F401,F403
from .ops.linalg.api import *  # noqa: F401,F403
from .ops.shape.api import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from . import linalg  # noqa: F401
from . import random  # noqa: F401,A004 - torch.random
from . import special  # noqa: F401 - torch.special
from . import fft  # noqa: F401 - torch.fft's real-valued helpers
from .ops.elementwise.extra import *  # noqa: F401,F403
from .pointwise_extra import *  # noqa: F401,F403
from .predicates import *  # noqa: F401,F403
from .windows import *  # noqa: F401,F403
from .tensor_extras import *  # noqa: F401,F403,A004
from .stats_extras import *  # noqa: F401,F403
from ._inplace_forms import addmv_
from .interop import to_dlpack
from .func import vmap
from .torch_nn_aliases import *  # noqa: F401,F403
from . import accelerator, functional, onnx  # noqa: F401 - torch.accelerator, .functional, .onnx

float32 = float = _dtypes.float32
float64 = double = _dtypes.float64
int64 = long = _dtypes.int64
int32 = int = _dtypes.int32
bool = _dtypes.bool_

concat = concatenate = cat  # noqa: F405 - join's
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan  # torch's constants: Python floats
masked_fill = Tensor.masked_fill


def _index_of_extreme(name, which):
    def fn(input, *args, **kwargs):  # (dim, keepdim, or NumPy's axis, keepdims)
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__signature__ = _inspect.signature(lambda input, dim=None, keepdim=False: None)
    fn.__doc__ = f"""The index of the {which} element of ``input`` along ``dim``, or of the
    flattened tensor; the first on ties.

    Same as ``torch.{name}`` (NumPy's ``axis`` and ``keepdims`` are taken too, as torch takes
    them).

    Args:
        input: the tensor.
        dim: the dimension to reduce; None (the default) reduces the flattened tensor.
        keepdim: keep the reduced dimension, with size 1 (default False).

    Returns:
        A new int64 tensor of the indices.
    """
    return fn


argmax = _index_of_extreme("argmax", "largest")
argmin = _index_of_extreme("argmin", "smallest")


def numel(input):
    """The number of elements of ``input``.

    Same as ``torch.numel``.

    Args:
        input: the tensor.

    Returns:
        An int.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.numel()


def is_tensor(obj):
    """Whether ``obj`` is a numbagrad Tensor.

    Same as ``torch.is_tensor``.
    """
    return isinstance(obj, Tensor)


def result_type(a, b):
    """The dtype an arithmetic operation on ``a`` and ``b`` (tensors or numbers) gives.

    Same as ``torch.result_type``.

    Args:
        a: a tensor or a number.
        b: a tensor or a number.

    Returns:
        A dtype.
    """
    def kind(x):
        if isinstance(x, Tensor):
            return (x.dtype, x.ndim)
        return (_dtypes.scalar_dtype(x), None)
    return _dtypes.result_type(kind(a), kind(b))


from ._blas import configure as _configure_blas
from ._blas import set_blas_threads

_configure_blas()

from .core import safe_cache as _safe_cache

_safe_cache.guard_loaded()  # every cached @njit function of the package heals a bad entry


from . import _out_forms

_out_forms.install()
ger = outer  # noqa: F405 - torch's older name of outer (with its out=)


def _name_factory_functions():
    """Functions made by factories (``F.relu``) are their modules' attributes under their own
    names: qualified so, pickle finds them by reference, as it finds torch's."""
    for module in list(_sys.modules.values()):
        if getattr(module, "__name__", "").split(".")[0] != "numbagrad":
            continue
        for name, obj in list(vars(module).items()):
            if type(obj) is _types.FunctionType and obj.__name__ == name and \
                    obj.__module__ == module.__name__ and "<locals>" in obj.__qualname__:
                obj.__qualname__ = name


_name_factory_functions()

__version__ = "0.1.0"

# imported on first use: import time is part of every user's cold start
_LAZY_SUBMODULES = {"distributions", "testing", "distributed"}


def __getattr__(name):
    if name == "default_generator":  # made (and seeded from entropy) on first use
        return _default_generator()
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'numbagrad' has no attribute '{name}'")
