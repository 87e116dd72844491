"""The smaller creation functions (asarray, scalar_tensor) and the global switches training
scripts set (default device, deterministic algorithms, float32 matmul precision)."""

import warnings

import numpy as np

from . import dtypes, factories
from ._foreign import foreign_array, is_array_like
from .creation_device import CPU, check_device
from .tensor import Tensor

_UNSET = object()
_INTEGER_GRAD = "Only Tensors of floating point and complex dtype can require gradients"


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=_UNSET):
    """A tensor from ``obj``, sharing its memory where the dtype allows and ``copy`` is not
    True (a tensor comes back as itself; NumPy, torch and JAX arrays are shared through
    DLPack); ``copy=False`` refuses a conversion."""
    check_device(device)
    if requires_grad is True and dtype is not None and \
            not dtypes.as_dtype(dtype).is_floating_point:
        raise RuntimeError(_INTEGER_GRAD)
    if not isinstance(obj, Tensor):
        if not copy and is_array_like(obj):  # a torch or JAX array: shared, as an ndarray
            obj = foreign_array(obj)
        if isinstance(obj, np.ndarray) and not copy:
            dt = dtypes.as_dtype(dtype)
            if copy is False and dt is not None and dt.np != obj.dtype:
                src = dtypes.from_numpy_dtype(obj.dtype).scalar_name
                raise ValueError(f"can't alias tensor with dtype '{src}' into dtype "
                                 f"'{dt.scalar_name}'.")
            out = factories.as_tensor(obj, dtype=dtype)
        else:
            out = factories.tensor(obj, dtype=dtype)
        if requires_grad is True:
            if not out.dtype.is_floating_point:
                raise RuntimeError(_INTEGER_GRAD)
            out.requires_grad_()
        return out
    explicit = requires_grad is not _UNSET
    if not explicit and obj.requires_grad:
        warnings.warn("torch.asarray: unspecified requires_grad now defaults to "
                      "obj.requires_grad instead of False. Pass requires_grad=False explicitly "
                      "to get the old behavior and silence this warning.", UserWarning,
                      stacklevel=2)
    dt = dtypes.as_dtype(dtype) or obj.dtype
    if copy is False and dt is not obj.dtype:
        raise ValueError(f"can't alias tensor with dtype '{obj.dtype.scalar_name}' into dtype "
                         f"'{dt.scalar_name}'.")
    out = obj if dt is obj.dtype else obj.to(dt)
    if copy and out is obj:
        out = obj.clone()
    if explicit and not requires_grad and out.grad_fn is not None:
        out = out.detach()
    elif requires_grad is True and out.is_leaf:
        if not out.dtype.is_floating_point:
            raise RuntimeError(_INTEGER_GRAD)
        out.requires_grad_()
    return out


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False):
    """A 0-d tensor of the number ``s``, in the default float dtype unless ``dtype`` is given.

    Same as ``torch.scalar_tensor``.

    Args:
        s: a number (or a one-element tensor, whose value is taken).
        dtype: the dtype (default None: the default float dtype).
        device: the device; only the CPU (default None).
        requires_grad: whether the tensor requires grad (default False).
        layout: accepted for torch's signature and ignored (default None).
        pin_memory: accepted for torch's signature and ignored (default False).

    Returns:
        A 0-d tensor.
    """
    if isinstance(s, Tensor):
        s = s.item()
    if not isinstance(s, (int, float, bool, np.number, np.bool_)):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{type(s).__name__}")
    # any number, bool and int too, lands in the default dtype unless one is given
    return factories.full((), s, dtype=dtype or dtypes.get_default_dtype(), device=device,
                          requires_grad=requires_grad)


# ---- global switches ------------------------------------------------------------------------
def get_default_device():
    """The device new tensors are made on: always the CPU.

    Same as ``torch.get_default_device``.
    """
    return CPU


def set_default_device(device):
    """Only the CPU (or None, the same) can be the default here."""
    check_device(device)


class _Switches:
    deterministic = False
    warn_only = False
    matmul_precision = "highest"


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded for the queries below; numbagrad has no separate deterministic kernels to
    switch to."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must "
                        f"be bool, not {type(mode).__name__}")
    _Switches.deterministic, _Switches.warn_only = mode, bool(warn_only)


def are_deterministic_algorithms_enabled():
    """Whether ``use_deterministic_algorithms(True)`` is in effect.

    Same as ``torch.are_deterministic_algorithms_enabled``; numbagrad records the switch only.
    """
    return _Switches.deterministic


def is_deterministic_algorithms_warn_only_enabled():
    """Whether ``use_deterministic_algorithms`` was called with ``warn_only=True``.

    Same as ``torch.is_deterministic_algorithms_warn_only_enabled``.
    """
    return _Switches.warn_only


def set_float32_matmul_precision(precision):
    """Recorded only: numbagrad's float32 products always run at full float32 precision."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _Switches.matmul_precision = precision


def get_float32_matmul_precision():
    """The precision last set with ``set_float32_matmul_precision``.

    Same as ``torch.get_float32_matmul_precision``; numbagrad's float32 products always run at
    full precision.
    """
    return _Switches.matmul_precision


__all__ = ["are_deterministic_algorithms_enabled", "asarray", "get_default_device",
           "get_float32_matmul_precision", "is_deterministic_algorithms_warn_only_enabled",
           "scalar_tensor", "set_default_device", "set_float32_matmul_precision",
           "use_deterministic_algorithms"]
