"""NumPy arrays from other libraries' array objects (torch and JAX tensors, anything with
``__dlpack__``, ``__array__`` or ``__array_interface__``) in their own dtype, and the dtype
torch infers for nested Python sequences of numbers and arrays."""

import numpy as np

from . import dtypes

_PLAIN = frozenset((float, int, bool, list, tuple))  # answered without looking for protocols


def is_array_like(obj):
    """Whether ``obj`` is an array of another library (not a NumPy array or scalar)."""
    kind = type(obj)
    if kind in _PLAIN:
        return False
    return not issubclass(kind, (np.ndarray, np.generic)) and (
        hasattr(kind, "__dlpack__") or hasattr(kind, "__array__")
        or hasattr(kind, "__array_interface__"))


def refuse_bfloat16(obj):
    """Name the dtype NumPy lacks before DLPack or NumPy give a vaguer error for it."""
    if str(getattr(obj, "dtype", "")).rsplit(".", 1)[-1] == "bfloat16":
        dtypes.refuse_unsupported(dtypes.bfloat16)


def foreign_array(obj):
    """``obj`` (an array-like of another library) as an ndarray in its own dtype, sharing its
    memory where DLPack allows (read-only for JAX's immutable arrays); None for anything
    else (Python numbers, sequences)."""
    if not is_array_like(obj):
        return None
    refuse_bfloat16(obj)
    kind = type(obj)
    if hasattr(kind, "__dlpack__"):
        if getattr(obj, "requires_grad", False) and callable(getattr(obj, "detach", None)):
            obj = obj.detach()  # torch exports no tensor that requires grad: take its value
        try:
            arr = np.from_dlpack(obj)
        except (BufferError, RuntimeError, TypeError, ValueError):
            if not (hasattr(kind, "__array__") or hasattr(kind, "__array_interface__")):
                raise
            arr = np.asarray(obj)  # e.g. memory DLPack cannot hand to NumPy: its own copy
    else:
        arr = np.asarray(obj)
    refuse_bfloat16(arr)  # JAX's bfloat16 comes through as ml_dtypes' NumPy extension type
    return arr


def sequence_dtype(seq):
    """torch.tensor's dtype for a nested list/tuple: Python floats take the default dtype,
    ints int64, bools bool; NumPy arrays and scalars keep theirs; all promoted together (an
    empty sequence takes the default dtype). None when a leaf is none of these."""
    found = set()
    if not _collect(seq, found):
        return None
    out = None
    for d in found:
        out = dtypes.promote(out, d)
    return out or dtypes.get_default_dtype()


_PYTHON_SCALARS = (bool, int, float)


def _collect(seq, found):
    kinds = set(map(type, seq))  # one C-speed pass for the common all-numbers level
    for kind in kinds:
        if kind is float:
            found.add(dtypes.get_default_dtype())
        elif kind is int:
            found.add(dtypes.int64)
        elif kind is bool:
            found.add(dtypes.bool_)
        elif not issubclass(kind, (list, tuple, np.ndarray, np.generic)):
            return False
    if kinds.difference(_PYTHON_SCALARS):
        for x in seq:
            if isinstance(x, (list, tuple)):
                if not _collect(x, found):
                    return False
            elif isinstance(x, (np.ndarray, np.generic)):
                found.add(dtypes.from_numpy_dtype(x.dtype))
    return True
