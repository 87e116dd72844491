"""numbagrad.save / numbagrad.load: tensors and nested containers of them (state_dicts of
modules and optimizers) in one NumPy ``.npz`` file. Arrays go into the archive; the
structure (dicts with their key types, lists, tuples, numbers, strings, None) is stored as
JSON beside them. Loading never unpickles: nothing in the file can run code."""

import json
import os
import zipfile
from collections import OrderedDict
from collections.abc import Hashable

import numpy as np

from . import dtypes
from .nn.module import Parameter
from .tensor import Tensor, _make

_STRUCTURE = "__numbagrad_structure__"


def _encode(obj, arrays):
    if isinstance(obj, Tensor):
        arrays.append(np.asarray(obj._array()))
        return {"t": "tensor", "i": len(arrays) - 1, "rg": bool(obj.requires_grad),
                "param": isinstance(obj, Parameter)}
    if isinstance(obj, np.ndarray):
        arrays.append(obj)
        return {"t": "ndarray", "i": len(arrays) - 1}
    if isinstance(obj, dict):
        kind = "odict" if isinstance(obj, OrderedDict) else "dict"
        return {"t": kind, "items": [[_encode(k, arrays), _encode(v, arrays)]
                                     for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {"t": "list" if isinstance(obj, list) else "tuple",
                "items": [_encode(v, arrays) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"t": "py", "v": obj}
    if isinstance(obj, np.generic):
        return {"t": "py", "v": obj.item()}
    raise TypeError(f"numbagrad.save: cannot save an object of type {type(obj).__name__} "
                    "(tensors, arrays, numbers, strings and dict/list/tuple of them only)")


class _MalformedError(Exception):
    """What is wrong with a file being loaded (load names the file)."""


_KINDS = {"tensor", "ndarray", "dict", "odict", "list", "tuple", "py"}


def _array(node, arrays):
    key = f"a{node.get('i')}"
    if type(node.get("i")) is not int or key not in arrays:
        raise _MalformedError(f"its structure refers to an array {key} the archive does not hold")
    return arrays[key]


def _items(node):
    items = node.get("items")
    if not isinstance(items, list):
        raise _MalformedError(f"a {node['t']} entry of its structure has no list of items")
    return items


def _decode(node, arrays):
    t = node.get("t") if isinstance(node, dict) else None
    if t not in _KINDS:
        raise _MalformedError(f"its structure has an entry of unknown kind: {str(node)[:80]}")
    if t == "tensor":
        data = _array(node, arrays)
        try:
            dtypes.from_numpy_dtype(data.dtype)
        except (TypeError, ValueError):
            raise _MalformedError(f"array a{node['i']} has dtype {data.dtype.str}, which no tensor "
                             "holds (float64, float32, int64, int32, bool)") from None
        if node.get("param"):
            return Parameter(_make(data), requires_grad=bool(node.get("rg")))
        out = _make(data)
        if node.get("rg"):
            out.requires_grad_(True)
        return out
    if t == "ndarray":
        return _array(node, arrays)
    if t in ("dict", "odict"):
        cls = OrderedDict if t == "odict" else dict
        out = cls()
        for pair in _items(node):
            if not isinstance(pair, list) or len(pair) != 2:
                raise _MalformedError("a dict item in its structure is not a [key, value] pair")
            key = _decode(pair[0], arrays)
            if not isinstance(key, Hashable):
                raise _MalformedError(f"a dict key in its structure is a {type(key).__name__}")
            out[key] = _decode(pair[1], arrays)
        return out
    if t in ("list", "tuple"):
        items = [_decode(v, arrays) for v in _items(node)]
        return items if t == "list" else tuple(items)
    v = node.get("v")
    if v is not None and not isinstance(v, (bool, int, float, str)):
        raise _MalformedError(f"its structure holds a value of type {type(v).__name__}")
    return v


def save(obj, f):
    """Save ``obj`` (a tensor, or dicts/lists/tuples of tensors, numbers and strings) to the
    path or binary file ``f``."""
    arrays = []
    structure = _encode(obj, arrays)
    payload = {f"a{i}": a for i, a in enumerate(arrays)}
    payload[_STRUCTURE] = np.frombuffer(json.dumps(structure).encode(), np.uint8)
    if isinstance(f, str) and not f.endswith(".npz"):
        with open(f, "wb") as fh:  # np.savez would append .npz to a bare path
            np.savez(fh, **payload)
    else:
        np.savez(f, **payload)


def load(f, map_location=None, weights_only=True):
    """Load what ``save`` wrote. Arrays are read with ``allow_pickle=False``; a file that is
    not such an archive raises a RuntimeError naming it and what is wrong."""
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", repr(f))

    def bad(what):
        return RuntimeError(f"numbagrad.load: {name} is not a file numbagrad.save wrote: {what}")

    try:
        archive = np.load(f, allow_pickle=False)
    except ValueError:
        # NumPy takes anything that is neither .npy nor .npz for a pickle, and refuses it
        raise bad("it is not a NumPy .npz archive") from None
    except (zipfile.BadZipFile, EOFError) as e:
        raise bad(f"it is a damaged or truncated archive ({type(e).__name__}: "
                  f"{str(e)[:80]})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise bad("it holds a single NumPy array (.npy), not a .npz archive")
    try:
        with archive:
            if _STRUCTURE not in archive.files:
                raise bad(f"its archive has no {_STRUCTURE} entry (arrays only: "
                          f"{', '.join(archive.files[:5])})")
            try:
                structure = json.loads(archive[_STRUCTURE].tobytes().decode())
            except (UnicodeDecodeError, ValueError):
                raise bad("its structure entry is not valid JSON") from None
            except RecursionError:
                raise bad("its structure is nested too deeply") from None
            arrays = {key: archive[key] for key in archive.files if key != _STRUCTURE}
    except (ValueError, zipfile.BadZipFile, EOFError, OSError) as e:
        raise bad(f"an entry of its archive cannot be read ({type(e).__name__}: "
                  f"{str(e)[:80]})") from None
    try:
        return _decode(structure, arrays)
    except _MalformedError as e:
        raise bad(str(e)) from None
    except RecursionError:
        raise bad("its structure is nested too deeply") from None
