"""DLPack exchange with other array libraries (torch, JAX, NumPy, CuPy's host arrays...):
``from_dlpack`` and ``to_dlpack``, as torch.from_dlpack and torch.utils.dlpack. The export
side is ``Tensor.__dlpack__``; NumPy's DLPack implementation does the work both ways."""

import numpy as np

from . import dtypes
from ._foreign import refuse_bfloat16
from .creation_device import check_device
from .tensor import Tensor, _make

# torch's one error for anything that is not a live DLPack capsule (consumed, or no capsule)
_INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can "
                    "be consumed only once, so you might have already constructed a tensor "
                    "from it once.")


class _Capsule:
    """A bare DLPack capsule (``to_dlpack``'s) in the ``__dlpack__`` form NumPy consumes."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU; NumPy checks the capsule's own device and refuses others


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing the memory of ``ext_tensor``, an object with ``__dlpack__`` (a torch
    or JAX array, a NumPy array...) or a DLPack capsule; ``copy=True`` copies. As
    ``torch.from_dlpack`` / ``np.from_dlpack``. CPU memory only; JAX's arrays come in
    read-only, as JAX never changes an array."""
    check_device(device)
    if hasattr(ext_tensor, "__dlpack__"):
        ext_tensor.__dlpack_device__()  # as torch: AttributeError for a half-made producer
    else:
        if device is not None or copy is not None:  # torch's words for a capsule
            raise AssertionError("device and copy kwargs not supported when ext_tensor is "
                                 "already a DLPack capsule.")
        ext_tensor = _Capsule(ext_tensor)
    refuse_bfloat16(ext_tensor)
    try:
        arr = np.from_dlpack(ext_tensor, **({} if copy is None else {"copy": copy}))
    except ValueError as exc:
        # NumPy passes on CPython's words for a capsule it cannot open
        if not str(exc).startswith("PyCapsule_GetPointer"):
            raise
        raise RuntimeError(_INVALID_CAPSULE) from None
    dtypes.from_numpy_dtype(arr.dtype)  # TypeError for the dtypes a tensor cannot hold
    return _make(arr)


def to_dlpack(tensor):
    """A DLPack capsule sharing ``tensor``'s memory, for a consumer's ``from_dlpack``; as
    ``torch.utils.dlpack.to_dlpack`` (the legacy form: prefer passing the tensor itself)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'data' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    return tensor.__dlpack__()


__all__ = ["from_dlpack", "to_dlpack"]
