"""DLPack exchange with other array libraries (torch, JAX, NumPy, CuPy's host arrays...):
``from_dlpack`` and ``to_dlpack``, as torch.from_dlpack and torch.utils.dlpack. The export
side is ``Tensor.__dlpack__``; NumPy's DLPack implementation does the work both ways."""

import numpy as np

from . import dtypes
from ._foreign import refuse_bfloat16
from .creation_device import check_device
from .tensor import Tensor, _make


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
    if not hasattr(ext_tensor, "__dlpack__"):
        if device is not None or copy is not None:  # torch's words for a capsule
            raise AssertionError("device and copy kwargs not supported when ext_tensor is "
                                 "already a DLPack capsule.")
        ext_tensor = _Capsule(ext_tensor)
    refuse_bfloat16(ext_tensor)
    arr = np.from_dlpack(ext_tensor, **({} if copy is None else {"copy": copy}))
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
