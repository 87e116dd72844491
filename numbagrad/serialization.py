"""numbagrad.save / numbagrad.load: tensors and nested containers of them (state_dicts of
modules and optimizers) in one NumPy ``.npz`` file. Arrays go into the archive; the
structure (dicts with their key types, lists, tuples, numbers, strings, None) is stored as
JSON beside them. Loading never unpickles: nothing in the file can run code."""

import json
from collections import OrderedDict

import numpy as np

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


def _decode(node, arrays):
    t = node["t"]
    if t == "tensor":
        data = arrays[node["i"]]
        if node.get("param"):
            return Parameter(_make(data), requires_grad=node["rg"])
        out = _make(data)
        if node["rg"]:
            out.requires_grad_(True)
        return out
    if t == "ndarray":
        return arrays[node["i"]]
    if t in ("dict", "odict"):
        cls = OrderedDict if t == "odict" else dict
        return cls((_decode(k, arrays), _decode(v, arrays)) for k, v in node["items"])
    if t in ("list", "tuple"):
        items = [_decode(v, arrays) for v in node["items"]]
        return items if t == "list" else tuple(items)
    return node["v"]


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
    """Load what ``save`` wrote. Arrays are read with ``allow_pickle=False``."""
    with np.load(f, allow_pickle=False) as archive:
        structure = json.loads(archive[_STRUCTURE].tobytes().decode())
        arrays = [archive[f"a{i}"] for i in range(len(archive.files) - 1)]
    return _decode(structure, arrays)
