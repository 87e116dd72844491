"""Whole objects (modules, optimizers, a user's classes) in ``numbagrad.save``'s archive, as
``torch.save`` pickles them: the object is pickled with its tensors and arrays left out
(persistent ids naming the archive's own tensor entries, so shared and tied tensors stay
shared), and ``numbagrad.load`` unpickles it only as ``torch.load`` does: with
``weights_only=False``, or when every global the pickle names is allowlisted
(``add_safe_globals``, or the ``safe_globals`` context manager). A restricted load imports
nothing and calls nothing that is not allowlisted."""

import collections
import io
import pickle
import sys
import threading
import types

import numpy as np

from .tensor import Tensor

_DEFAULT_SAFE = (collections.OrderedDict, set, frozenset, slice, complex, range, bytearray)
_safe = []  # add_safe_globals' objects (or (object, "module.name") pairs), in order
_local = threading.local()  # the safe_globals() contexts entered in this thread


def add_safe_globals(safe_globals):
    """Allow these classes and functions in ``load(..., weights_only=True)``; as
    ``torch.serialization.add_safe_globals``. An entry may be ``(obj, "module.name")``."""
    _safe.extend(safe_globals)


def get_safe_globals():
    """The globals ``add_safe_globals`` allowed; as ``torch.serialization.get_safe_globals``."""
    return list(_safe)


def clear_safe_globals():
    """Forget every global ``add_safe_globals`` allowed."""
    _safe.clear()


class safe_globals:  # noqa: N801 - torch's name
    """Allow these globals in ``load(..., weights_only=True)`` inside a ``with`` block (this
    thread only); as ``torch.serialization.safe_globals``."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        _local.__dict__.setdefault("stack", []).append(self.safe_globals)

    def __exit__(self, *exc):
        _local.stack.pop()


def _allowed():
    """{"module.name": object} of every global a restricted load may use now."""
    out = {}
    for entry in (*_DEFAULT_SAFE, *_safe, *(g for s in getattr(_local, "stack", ()) for g in s)):
        obj, name = entry if isinstance(entry, tuple) else (entry, None)
        if name is None:
            name = f"{obj.__module__}.{obj.__qualname__}"
        out[name] = obj
    return out


class _Pickler(pickle.Pickler):
    def __init__(self, file, encode):
        super().__init__(file, protocol=4)
        self.encode, self.refs = encode, []

    def persistent_id(self, obj):
        if isinstance(obj, (Tensor, np.ndarray)):
            self.refs.append(self.encode(obj))  # the archive's own entry for it
            return len(self.refs) - 1
        return None

    def reducer_override(self, obj):
        # a function a factory made (F.relu) is its module's attribute of its own name
        if isinstance(obj, types.FunctionType) and "<locals>" in obj.__qualname__ and \
                getattr(sys.modules.get(obj.__module__), obj.__name__, None) is obj:
            return obj.__name__
        return NotImplemented


def dumps(obj, encode):
    """The pickle of ``obj`` and the archive entries (``encode(tensor)``) of its tensors."""
    buf = io.BytesIO()
    pickler = _Pickler(buf, encode)
    pickler.dump(obj)
    return buf.getvalue(), pickler.refs


_REFUSED = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, "
    "do those steps only if you trust the source of the checkpoint. \n\t(1) Re-running "
    "`numbagrad.load` with `weights_only` set to `False` will likely succeed, but it can result "
    "in arbitrary code execution. Do it only if you got the file from a trusted source.\n\t(2) "
    "Alternatively, to load with `weights_only=True` please check the recommended steps in the "
    "following error message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL {g} was "
    "not an allowed global by default. Please use "
    "`numbagrad.serialization.add_safe_globals([{g}])` or the "
    "`numbagrad.serialization.safe_globals([{g}])` context manager to allowlist this global "
    "if you trust this class/function.")


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, refs, restricted):
        super().__init__(file)
        self.refs = refs
        self.allowed = _allowed() if restricted else None

    def persistent_load(self, pid):
        if type(pid) is not int or not 0 <= pid < len(self.refs):
            raise pickle.UnpicklingError(f"the pickle refers to tensor {pid!r}, which the "
                                         "archive does not hold")
        return self.refs[pid]

    def find_class(self, module, name):
        if self.allowed is None:
            return super().find_class(module, name)
        obj = self.allowed.get(f"{module}.{name}")
        if obj is None:  # checked by name: nothing is imported for a refused global
            raise pickle.UnpicklingError(_REFUSED.format(g=f"{module}.{name}"))
        return obj


def loads(data, refs, weights_only):
    """The object pickled in ``data`` (bytes), its tensors ``refs``."""
    return _Unpickler(io.BytesIO(data), refs, weights_only).load()
