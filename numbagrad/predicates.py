"""Small predicates and global switches of torch's namespace: is_nonzero, is_same_size,
is_signed, typename, is_inference_mode_enabled, set_warn_always / is_warn_always_enabled and
the deterministic debug mode (an alternative interface to use_deterministic_algorithms)."""

from .core.grad_mode import is_inference_mode_enabled
from .creation_misc import (
    are_deterministic_algorithms_enabled,
    is_deterministic_algorithms_warn_only_enabled,
    use_deterministic_algorithms,
)
from .ops.elementwise.logic import need_tensor
from .tensor import Tensor


def is_nonzero(input):  # noqa: A002 - torch's keyword
    """Whether a one-element tensor is not zero (NaN counts as nonzero).

    Same as ``torch.is_nonzero``: empty and many-element tensors are refused.
    """
    need_tensor(input, "is_nonzero")
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_same_size(input, other):  # noqa: A002
    """Whether two tensors have the same shape.

    Same as ``torch.is_same_size``.

    Args:
        input: a tensor (the tensor itself, as a method).
        other: the tensor to compare with.

    Returns:
        A Python bool.
    """
    need_tensor(input, "is_same_size")
    need_tensor(other, "is_same_size", "other", 2)
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):  # noqa: A002
    """Whether the tensor's dtype is a signed type (floats and signed integers).

    Same as ``torch.is_signed``.

    Args:
        input: the input tensor.

    Returns:
        A Python bool.
    """
    need_tensor(input, "is_signed")
    return bool(input.dtype.is_signed)


def typename(obj, /):
    """The fully qualified name of ``obj``'s type: a tensor's legacy type name
    (``"torch.FloatTensor"``), else its module and qualified name.

    Same as ``torch.typename``.
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


class _Warn:
    always = False


def set_warn_always(b, /):
    """Recorded only: numbagrad's warnings follow Python's own filters.

    Same as ``torch.set_warn_always``.
    """
    _Warn.always = bool(b)


def is_warn_always_enabled():
    """The flag last set with ``set_warn_always``.

    Same as ``torch.is_warn_always_enabled``.
    """
    return _Warn.always


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """0 / "default", 1 / "warn" or 2 / "error": ``use_deterministic_algorithms`` off, on with
    ``warn_only``, or on.

    Same as ``torch.set_deterministic_debug_mode``.
    """
    if not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The deterministic debug mode: 0 (off), 1 (warn) or 2 (error).

    Same as ``torch.get_deterministic_debug_mode``.
    """
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2


__all__ = ["is_nonzero", "is_same_size", "is_signed", "typename", "set_warn_always",
           "is_warn_always_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "is_inference_mode_enabled"]

# Tensor methods this module adds (bound in numbagrad/_inplace_forms.py)
TENSOR_METHODS = {"is_nonzero": is_nonzero, "is_same_size": is_same_size,
                  "is_signed": is_signed}
