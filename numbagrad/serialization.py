"""numbagrad.save / numbagrad.load, in one of two formats, told apart on loading by the
file's first bytes (not its name):

* safetensors, for a flat dict of str -> Tensor (a module's state_dict) saved to a path ending
  in ``.safetensors``: the file PyTorch (``safetensors.torch.load_file``), NumPy and JAX
  (``safetensors.numpy`` / ``safetensors.flax``) read, and which ``load`` reads back from
  them (``safetensors.torch.save_file``'s files).
* otherwise numbagrad's own format, a NumPy ``.npz`` archive holding anything ``save``
  takes (optimizer state_dicts, nested checkpoints): serialization_npz.py.

Loading unpickles as ``torch.load`` does: a "pickle" entry loads with ``weights_only=False``,
or when every global it names is allowlisted (``add_safe_globals``); otherwise nothing in a
file can run code. PyTorch's own checkpoints
(``torch.save``'s zip or legacy pickle) are refused with the way to convert them. Loading is
bounded: sizes the file declares (zip members, .npy headers, the structure) are checked
against the file and ``max_bytes`` before anything is allocated or decompressed."""

import io
import json
import operator
import os
import warnings
import zipfile
from collections.abc import Mapping

import numpy as np

from .serialization_npz import (
    _CONVERT_TORCH,
    _STRUCTURE,
    _TORCH_SUFFIXES,
    _load_npz,
    _Saver,
    _too_big,
)
from .serialization_objects import (  # noqa: F401 - torch.serialization's names
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from .tensor import Tensor, _make

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


def _load_safetensors(f, name, max_bytes):
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
    if max_bytes is not None:  # the library checks the offsets against the file
        sizes = {k: v["data_offsets"][1] - v["data_offsets"][0] for k, v in header.items()
                 if isinstance(v.get("data_offsets"), list) and len(v["data_offsets"]) == 2
                 and all(type(x) is int for x in v["data_offsets"])}
        if sum(sizes.values()) > max_bytes:
            big = max(sizes, key=sizes.get)
            raise _too_big(name, f"its tensors declare {sum(sizes.values()):,} bytes (the "
                                 f"largest, {big}, {sizes[big]:,})", max_bytes, max_bytes, 0)
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




def save(obj, f):
    """Save ``obj`` (a tensor, or dicts/lists/tuples of tensors, numbers and strings, or any
    object pickle takes: a module, an optimizer) to the path or binary file ``f``; as
    ``torch.save``.

    A path ending in ``.safetensors`` is written in the safetensors format, which holds a
    flat dict of str -> Tensor only (a module's state_dict; anything else is a TypeError)
    and keeps values only (no requires_grad, no nn.Parameter class). Any other path or file
    gets numbagrad's ``.npz`` archive, which holds every kind of object above. A path ending
    in ``.pt`` or ``.pth`` also gets the ``.npz`` archive, with a UserWarning: ``torch.load``
    cannot read it (``numbagrad.load`` can), while a script ported from torch keeps running.
    For a file torch reads, save a state_dict to a ``.safetensors`` path.

    In the ``.npz`` archive, as in torch's format, a tensor held twice loads as one tensor
    (``loaded["a"] is loaded["b"]``) and tensors sharing memory (views of one tensor, tied
    weights) load sharing memory; a safetensors file holds each tensor's values apart.

    Examples:
        >>> import numbagrad as torch
        >>> import io
        >>> buffer = io.BytesIO()
        >>> torch.save({"w": torch.ones(2)}, buffer)
        >>> _ = buffer.seek(0)
        >>> torch.load(buffer)
        {'w': tensor([1., 1.])}
    """
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
    saver = _Saver()
    structure = saver.encode(obj)
    saver.place()
    payload = {f"a{i}": a for i, a in enumerate(saver.arrays)}
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


def load(f, map_location=None, weights_only=True, *, max_bytes=None):
    """Load what ``save`` wrote, or any safetensors file (a dict of str -> Tensor, e.g.
    from ``safetensors.torch.save_file``); as ``torch.load``. The format is read from the
    file's first bytes. A PyTorch checkpoint (``torch.save``'s ``.pt``/``.pth``) raises a
    RuntimeError saying how to convert it, and a file that is none of these raises a
    RuntimeError naming it and what is wrong. Tensors load to the CPU (``map_location`` is
    taken for torch's signature). A whole object that ``save`` pickled (a module, an
    optimizer) loads as in ``torch.load``: with ``weights_only=False``, or when the classes
    and functions it names are allowlisted (``numbagrad.serialization.add_safe_globals`` or
    the ``safe_globals`` context manager); otherwise an UnpicklingError names the first
    one, and nothing in the file has run.

    ``max_bytes`` (numbagrad's addition; torch.load has no such keyword) bounds the memory
    a load takes: the bytes the file's entries declare once decompressed (its structure
    counting 32 times, about what Python makes of its JSON), checked before anything is
    allocated or decompressed. The default, None, is 64 MiB plus 32 times the file's size:
    every file ``save`` writes fits, while a compressed entry that would expand more (a
    "zip bomb") raises a RuntimeError naming the entry and the sizes. Pass a larger
    ``max_bytes`` to load such a file from a trusted source."""
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", repr(f))
    if max_bytes is not None:
        given = max_bytes
        try:
            max_bytes = -1 if isinstance(given, bool) else operator.index(given)
        except TypeError:
            max_bytes = -1
        if max_bytes < 0:
            raise TypeError(f"numbagrad.load: max_bytes must be a non-negative int or None, "
                            f"not {given!r}")

    def bad(what):
        return RuntimeError(f"numbagrad.load: {name} is not a file numbagrad.save wrote: {what}")

    kind = _sniff(f)
    if kind == "safetensors":
        return _load_safetensors(f, name, max_bytes)
    if kind == "torch zip":
        raise bad(f"it is a PyTorch checkpoint (torch.save's zip archive). {_CONVERT_TORCH}")
    if kind == "pickle":
        raise bad(f"it is a Python pickle (torch.save's legacy format?). {_CONVERT_TORCH}")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_npz(fh, name, max_bytes, bad, weights_only)
    return _load_npz(f, name, max_bytes, bad, weights_only)


