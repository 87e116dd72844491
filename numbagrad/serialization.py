"""numbagrad.save / numbagrad.load, in one of two formats, told apart on loading by the
file's first bytes (not its name):

* safetensors, for a flat dict of str -> Tensor (a module's state_dict) saved to a path ending
  in ``.safetensors``: the file PyTorch (``safetensors.torch.load_file``), NumPy and JAX
  (``safetensors.numpy`` / ``safetensors.flax``) read, and which ``load`` reads back from
  them (``safetensors.torch.save_file``'s files).
* otherwise a NumPy ``.npz`` archive holding anything ``save`` takes (optimizer state_dicts,
  nested checkpoints): the arrays go into the archive; the structure (dicts with their key
  types, lists, tuples, numbers, strings, None) is stored as JSON beside them.

Loading never unpickles: nothing in a file can run code. PyTorch's own checkpoints
(``torch.save``'s zip or legacy pickle) are refused with the way to convert them."""

import io
import json
import os
import warnings
import zipfile
from collections import OrderedDict
from collections.abc import Hashable, Mapping

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


# safetensors' dtype names for the dtypes a tensor holds
_SAFETENSORS_DTYPES = {"F64", "F32", "F16", "I64", "I32", "I16", "I8", "U8", "BOOL"}
_SAFETENSORS_MAX_HEADER = 100_000_000  # the safetensors library's own limit


def _sniff(f):
    """The format of the file ``f`` from its first bytes: "safetensors", "torch zip"
    (torch.save's zip, which also starts as an .npz does), "pickle", or None (left to
    NumPy, which reads .npz archives and names what else it finds)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _sniff(fh)
    pos = f.tell()
    try:
        head = f.read(9)
        if head[:1] == b"\x80":  # a pickle's PROTO opcode
            return "pickle"
        size = int.from_bytes(head[:8], "little")
        if head[8:9] == b"{" and 2 <= size <= _SAFETENSORS_MAX_HEADER:
            return "safetensors"  # an 8-byte header length, then the header's JSON
        if head[:2] == b"PK":
            f.seek(pos)
            try:
                with zipfile.ZipFile(f) as z:
                    names = z.namelist()
            except (zipfile.BadZipFile, OSError, EOFError, ValueError):
                return None
            if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
                return "torch zip"
        return None
    finally:
        f.seek(pos)


def _load_safetensors(f, name):
    from safetensors import SafetensorError
    from safetensors.numpy import load as load_bytes
    from safetensors.numpy import load_file

    def bad(what):
        return RuntimeError(f"numbagrad.load: {name} is a safetensors file numbagrad cannot "
                            f"load: {what}")

    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            header = _safetensors_header(fh, bad)
        read = lambda: load_file(f)  # memory-mapped, read tensor by tensor
    else:
        data = f.read()
        header = _safetensors_header(io.BytesIO(data), bad)
        read = lambda: load_bytes(data)
    header.pop("__metadata__", None)
    unheld = {k: v.get("dtype") if isinstance(v, dict) else v for k, v in header.items()
              if not (isinstance(v, dict) and v.get("dtype") in _SAFETENSORS_DTYPES)}
    if unheld:
        listed = ", ".join(f"{k} ({v})" for k, v in list(unheld.items())[:5])
        raise bad(f"tensors of dtypes no numbagrad tensor holds: {listed}; numbagrad holds "
                  "F64, F32, F16, I64, I32, I16, I8, U8 and BOOL (convert others first, e.g. "
                  "bfloat16 with torch's .float())")
    try:
        arrays = read()
    except (SafetensorError, ValueError, KeyError) as e:
        raise bad(f"it is damaged ({type(e).__name__}: {str(e)[:80]})") from None
    # copies only of the read-only arrays (those of an in-memory file)
    return {k: _make(arrays[k] if arrays[k].flags.writeable else arrays[k].copy())
            for k in header}


def _safetensors_header(fh, bad):
    size = int.from_bytes(fh.read(8), "little")
    try:
        header = json.loads(fh.read(size).decode())
    except (UnicodeDecodeError, ValueError):
        raise bad("its header is not valid JSON") from None
    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    return header


_TORCH_SUFFIXES = (".pt", ".pth")
_CONVERT_TORCH = (
    "numbagrad does not unpickle (unpickling can run code). Convert the checkpoint once, "
    "where PyTorch is installed: for a state_dict, safetensors.torch.save_file(torch.load(path, "
    "weights_only=True), 'model.safetensors') and numbagrad.load that file; or, in one "
    "process, numbagrad.utils.convert.from_torch_state_dict(torch.load(path, weights_only="
    "True)), then numbagrad.save it")


def save(obj, f):
    """Save ``obj`` (a tensor, or dicts/lists/tuples of tensors, numbers and strings) to the
    path or binary file ``f``; as ``torch.save``.

    A path ending in ``.safetensors`` is written in the safetensors format, which holds a
    flat dict of str -> Tensor only (a module's state_dict; anything else is a TypeError)
    and keeps values only (no requires_grad, no nn.Parameter class). Any other path or file
    gets numbagrad's ``.npz`` archive, which holds every kind of object above. A path ending
    in ``.pt`` or ``.pth`` also gets the ``.npz`` archive, with a UserWarning: ``torch.load``
    cannot read it (``numbagrad.load`` can), while a script ported from torch keeps running.
    For a file torch reads, save a state_dict to a ``.safetensors`` path."""
    if isinstance(f, os.PathLike):
        f = os.fspath(f)
    if isinstance(f, str) and f.endswith(".safetensors"):
        _save_safetensors(obj, f)
        return
    if isinstance(f, str) and f.endswith(_TORCH_SUFFIXES):
        warnings.warn(f"numbagrad.save: {f} is written in numbagrad's format (a NumPy .npz "
                      "archive), which torch.load cannot read; numbagrad.load reads it. For "
                      "a file PyTorch reads, save a state_dict to a path ending in "
                      "'.safetensors' (safetensors.torch.load_file reads it)", UserWarning,
                      stacklevel=2)
    arrays = []
    structure = _encode(obj, arrays)
    payload = {f"a{i}": a for i, a in enumerate(arrays)}
    payload[_STRUCTURE] = np.frombuffer(json.dumps(structure).encode(), np.uint8)
    if isinstance(f, str) and not f.endswith(".npz"):
        with open(f, "wb") as fh:  # np.savez would append .npz to a bare path
            np.savez(fh, **payload)
    else:
        np.savez(f, **payload)


def _save_safetensors(obj, path):
    from safetensors.numpy import save_file  # imported on use: numbagrad's import time

    if not (isinstance(obj, Mapping) and all(isinstance(k, str) and isinstance(v, Tensor)
                                             for k, v in obj.items())):
        raise TypeError(f"numbagrad.save: a .safetensors file holds a flat dict of str -> "
                        f"Tensor only (a module's state_dict); save this "
                        f"{type(obj).__name__} (nested, or holding other values) to a path "
                        "with another ending (numbagrad's .npz archive)")
    arrays = {k: np.asarray(v._array(), order="C") for k, v in obj.items()}  # 0-d stays 0-d
    # "pt": the tensors are named and laid out as a PyTorch module's (the tag Hugging
    # Face's loaders look for)
    save_file(arrays, path, metadata={"format": "pt"})


def load(f, map_location=None, weights_only=True):
    """Load what ``save`` wrote, or any safetensors file (a dict of str -> Tensor, e.g.
    from ``safetensors.torch.save_file``); as ``torch.load``. The format is read from the
    file's first bytes. Nothing is unpickled: a PyTorch checkpoint (``torch.save``'s
    ``.pt``/``.pth``) raises a RuntimeError saying how to convert it, and a file that is
    none of these raises a RuntimeError naming it and what is wrong. ``map_location`` and
    ``weights_only`` are taken for torch's signature: tensors load to the CPU, and only
    weights and plain data ever load."""
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", repr(f))

    def bad(what):
        return RuntimeError(f"numbagrad.load: {name} is not a file numbagrad.save wrote: {what}")

    kind = _sniff(f)
    if kind == "safetensors":
        return _load_safetensors(f, name)
    if kind == "torch zip":
        raise bad(f"it is a PyTorch checkpoint (torch.save's zip archive). {_CONVERT_TORCH}")
    if kind == "pickle":
        raise bad(f"it is a Python pickle (torch.save's legacy format?). {_CONVERT_TORCH}")
    try:
        archive = np.load(f, allow_pickle=False)
    except ValueError:
        # NumPy takes anything that is neither .npy nor .npz for a pickle, and refuses it
        hint = f". If it is a PyTorch checkpoint: {_CONVERT_TORCH}" \
            if str(name).endswith(_TORCH_SUFFIXES) else ""
        raise bad(f"it is not a NumPy .npz archive nor a safetensors file{hint}") from None
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
