"""numbagrad's own file format, a NumPy ``.npz`` archive holding anything ``save`` takes
(optimizer state_dicts, nested checkpoints): a zip of ``.npy`` members, the arrays
``a<i>.npy`` and ``__numbagrad_structure__.npy``, the JSON (as uint8) of the object's
structure: nodes ``{"t": kind, ...}``, "tensor" (array "i", "rg", "param"), "view" (a tensor
whose memory lies in "i", a uint8 span it shares with other tensors: "dtype", "offset",
"shape", "strides", in bytes), "ndarray" ("i"), "dict"/"odict"/"list"/"tuple" ("items"),
"py" ("v"), "pickle" (any other object, a module or an optimizer: its pickle as uint8 array
"i", its tensors' nodes in "refs"; serialization_objects). A tensor or array saved more than
once has a number "o" in each of its nodes, and loads as one object; distinct tensors on one
memory share one array (as torch's storages).

Loading is bounded: sizes the file declares (zip members, .npy headers, the structure) are
checked against the file and ``max_bytes`` before anything is allocated or decompressed.
serialization.py chooses between this format and safetensors."""

import json
import math
import os
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Hashable

import numpy as np

from . import dtypes, serialization_objects
from .nn.module import Parameter
from .tensor import Tensor, _make

_STRUCTURE = "__numbagrad_structure__"
_KINDS = {"tensor", "view", "ndarray", "dict", "odict", "list", "tuple", "py", "pickle"}
# load's default max_bytes: _FLOOR + _PER_FILE_BYTE * the file's size. Python holds a JSON
# structure in up to ~30 times its bytes, so it counts _JSON_FACTOR times: every file save
# writes (uncompressed) fits, while a compressed member expanding more is refused.
_FLOOR = 64 << 20
_PER_FILE_BYTE = 32
_JSON_FACTOR = 32
_CHUNK = 1 << 22  # bytes decompressed per read
_ALIGN = 64  # a shared span starts this aligned relative to its base, as the views were
# the dtypes a tensor holds, by the name a "view" node gives (never parsed from the file)
_VIEW_DTYPES = {np.dtype(n).str: np.dtype(n) for n in (
    "float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool")}
_TORCH_SUFFIXES = (".pt", ".pth")
_CONVERT_TORCH = (
    "numbagrad does not unpickle (unpickling can run code). Convert the checkpoint once, "
    "where PyTorch is installed: for a state_dict, safetensors.torch.save_file(torch.load(path, "
    "weights_only=True), 'model.safetensors') and numbagrad.load that file; or, in one "
    "process, numbagrad.utils.convert.from_torch_state_dict(torch.load(path, weights_only="
    "True)), then numbagrad.save it")


class _Saver:
    """The structure of an object and the arrays it holds, each object once."""

    def __init__(self):
        self.arrays = []
        self.memo = {}  # id -> (object, node): a repeat gets the same node, numbered "o"
        self.tensors = []  # (array, node) of each distinct tensor, placed by place()
        self.objects = 0

    def _repeat(self, obj):
        seen = self.memo.get(id(obj))
        if seen is None:
            return None
        node = seen[1]
        if "o" not in node:
            node["o"] = self.objects
            self.objects += 1
        return node

    def encode(self, obj):
        if isinstance(obj, (Tensor, np.ndarray)):
            node = self._repeat(obj)
            if node is not None:
                return node
            if isinstance(obj, Tensor):
                node = {"t": "tensor", "rg": bool(obj.requires_grad),
                        "param": isinstance(obj, Parameter)}
                self.tensors.append((np.asarray(obj._array()), node))
            else:
                self.arrays.append(obj)
                node = {"t": "ndarray", "i": len(self.arrays) - 1}
            self.memo[id(obj)] = (obj, node)
            return node
        if isinstance(obj, dict):
            kind = "odict" if isinstance(obj, OrderedDict) else "dict"
            return {"t": kind, "items": [[self.encode(k), self.encode(v)]
                                         for k, v in obj.items()]}
        if isinstance(obj, (list, tuple)):
            return {"t": "list" if isinstance(obj, list) else "tuple",
                    "items": [self.encode(v) for v in obj]}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return {"t": "py", "v": obj}
        if isinstance(obj, np.generic):
            return {"t": "py", "v": obj.item()}
        return self._pickled(obj)

    def _pickled(self, obj):
        """Any other object (a module, an optimizer), pickled as torch.save does; it loads as
        one object however often it is held."""
        seen = self.memo.get(id(obj))
        if seen is not None:
            node = seen[1]
            if "o" not in node:
                node["o"] = self.objects
                self.objects += 1
            return node
        data, refs = serialization_objects.dumps(obj, self.encode)
        self.arrays.append(np.frombuffer(data, np.uint8))
        node = {"t": "pickle", "i": len(self.arrays) - 1, "refs": refs}
        self.memo[id(obj)] = (obj, node)
        return node

    def place(self):
        """Give each tensor's node its array. Tensors on one base array share it: those of
        one layout as one array, others as views of the bytes they span in the base."""
        groups = {}
        for a, node in self.tensors:
            root = a
            while isinstance(root.base, np.ndarray):
                root = root.base
            key = id(root) if a.size else id(node)  # an empty tensor shares no memory
            groups.setdefault(key, (root, []))[1].append((a, node))
        for root, members in groups.values():
            layouts = {}
            for a, node in members:
                layouts.setdefault(_layout(a), []).append((a, node))
            span = _span(root, members) if len(layouts) > 1 else None
            if span is None:
                for same in layouts.values():
                    self.arrays.append(same[0][0])
                    for _, node in same:
                        node["i"] = len(self.arrays) - 1
                continue
            start, raw = span
            self.arrays.append(raw)
            for a, node in members:
                node.update(t="view", i=len(self.arrays) - 1, dtype=a.dtype.str,
                            offset=_address(a) - start, shape=list(a.shape),
                            strides=list(a.strides))


def _address(a):
    return a.__array_interface__["data"][0]


def _layout(a):
    return _address(a), a.shape, a.strides, a.dtype.str


def _extent(address, shape, strides, itemsize):
    """The bytes [lo, hi) an array of this geometry spans (it has elements)."""
    lo = address + sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    hi = address + sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0) + itemsize
    return lo, hi


def _span(root, members):
    """(start address, uint8 array) of the bytes of ``root`` the members' views span, or
    None when they cannot be saved as views of it."""
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    if any(a.dtype.str not in _VIEW_DTYPES for a, _ in members):
        return None
    base = _address(root)
    extents = [_extent(_address(a), a.shape, a.strides, a.itemsize) for a, _ in members]
    lo, hi = min(e[0] for e in extents), max(e[1] for e in extents)
    if lo < base or hi > base + root.nbytes:
        return None
    start = base + (lo - base) // _ALIGN * _ALIGN
    return start, root.reshape(-1, order="A").view(np.uint8)[start - base:hi - base]


class _MalformedError(Exception):
    """What is wrong with a file being loaded (load names the file)."""


class _TooBigError(Exception):
    """A size the file declares is over the limit (load names the file)."""


def _int(node, field, minimum=0):
    v = node.get(field)
    if type(v) is not int or v < minimum:
        raise _MalformedError(f"a {node['t']} entry of its structure has a bad {field!r}: "
                              f"{str(v)[:40]}")
    return v


def _ints(node, field):
    v = node.get(field)
    if not isinstance(v, list) or len(v) > 64 or any(type(x) is not int for x in v):
        raise _MalformedError(f"a {node['t']} entry of its structure has a bad {field!r}: "
                              f"{str(v)[:40]}")
    return v


def _items(node):
    items = node.get("items")
    if not isinstance(items, list):
        raise _MalformedError(f"a {node['t']} entry of its structure has no list of items")
    return items


class _Loader:
    """Decodes a structure, reading each array of the archive once, when first used."""

    def __init__(self, read, keys, limit, weights_only=True):
        self.read, self.keys, self.limit = read, keys, limit
        self.weights_only = weights_only
        self.arrays = {}
        self.objects = {}  # "o" -> (node, object)

    def array(self, node):
        key = f"a{node.get('i')}"
        if type(node.get("i")) is not int or key not in self.keys:
            raise _MalformedError(f"its structure refers to an array {key} the archive does "
                                  "not hold")
        if key not in self.arrays:
            self.arrays[key] = self.read(key)
        return self.arrays[key]

    def decode(self, node):
        t = node.get("t") if isinstance(node, dict) else None
        if t not in _KINDS:
            raise _MalformedError(f"its structure has an entry of unknown kind: "
                                  f"{str(node)[:80]}")
        if t in ("tensor", "view", "ndarray", "pickle") and "o" in node:
            o = _int(node, "o")
            if o in self.objects:
                if self.objects[o][0] != node:
                    raise _MalformedError(f"its structure has different entries for object {o}")
                return self.objects[o][1]
            self.objects[o] = (node, self.leaf(node))
            return self.objects[o][1]
        if t in ("tensor", "view", "ndarray", "pickle"):
            return self.leaf(node)
        if t in ("dict", "odict"):
            out = OrderedDict() if t == "odict" else {}
            for pair in _items(node):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _MalformedError("a dict item in its structure is not a [key, value] "
                                          "pair")
                key = self.decode(pair[0])
                if not isinstance(key, Hashable):
                    raise _MalformedError(f"a dict key in its structure is a "
                                          f"{type(key).__name__}")
                out[key] = self.decode(pair[1])
            return out
        if t in ("list", "tuple"):
            items = [self.decode(v) for v in _items(node)]
            return items if t == "list" else tuple(items)
        v = node.get("v")
        if v is not None and not isinstance(v, (bool, int, float, str)):
            raise _MalformedError(f"its structure holds a value of type {type(v).__name__}")
        return v

    def leaf(self, node):
        t = node["t"]
        data = self.array(node)
        if t == "ndarray":
            return data
        if t == "pickle":
            if data.dtype != np.uint8 or data.ndim != 1:
                raise _MalformedError(f"its pickled object a{node['i']} is not bytes")
            refs = [self.decode(r) for r in _items({"items": node.get("refs")})]
            return serialization_objects.loads(data.tobytes(), refs, self.weights_only)
        if t == "view":
            data = self.view(node, data)
        try:
            dtypes.from_numpy_dtype(data.dtype)
        except (TypeError, ValueError):
            raise _MalformedError(f"array a{node['i']} has dtype {data.dtype.str}, which no "
                                  "tensor holds (float64, float32, int64, int32, bool)") from None
        if node.get("param"):
            # made on an empty array, then given the data: Parameter(tensor) would copy it
            out = Parameter(_make(np.empty(0, data.dtype)), requires_grad=False)
            out._data = data
            out.requires_grad = bool(node.get("rg"))
            return out
        out = _make(data)
        if node.get("rg"):
            out.requires_grad_(True)
        return out

    def view(self, node, span):
        """The view a "view" node describes, checked to lie in its span before it is made."""
        dtype = _VIEW_DTYPES.get(node.get("dtype"))
        if dtype is None:
            raise _MalformedError(f"a view in its structure has dtype "
                                  f"{str(node.get('dtype'))[:20]}, which no tensor holds")
        if span.dtype != np.uint8 or span.ndim != 1:
            raise _MalformedError(f"a view in its structure is on array a{node['i']} of "
                                  f"dtype {span.dtype.str} and {span.ndim} dims, not bytes")
        offset, shape, strides = _int(node, "offset"), _ints(node, "shape"), \
            _ints(node, "strides")
        if len(strides) != len(shape) or min(shape, default=0) < 0:
            raise _MalformedError(f"a view in its structure has shape {shape} and strides "
                                  f"{strides}")
        count = math.prod(shape)
        if count * dtype.itemsize > self.limit:
            raise _TooBigError(f"a view in its structure declares shape {tuple(shape)} "
                               f"({count * dtype.itemsize:,} bytes), more than max_bytes="
                               f"{self.limit:,}")
        lo, hi = _extent(offset, shape, strides, dtype.itemsize) if count else (offset,
                                                                                 offset)
        if lo < 0 or hi > span.size:
            raise _MalformedError(f"a view in its structure spans bytes [{lo}, {hi}) of array "
                                  f"a{node['i']}, which holds {span.size}")
        try:
            return np.ndarray(tuple(shape), dtype, buffer=span, offset=offset,
                              strides=tuple(strides))
        except (ValueError, TypeError) as e:
            raise _MalformedError(f"a view in its structure cannot be made ({e})") from None


def _too_big(name, what, limit, max_bytes, size):
    default = "" if max_bytes is not None else \
        f" (the default: {_FLOOR >> 20} MiB plus {_PER_FILE_BYTE} times the file's {size:,} bytes)"
    return RuntimeError(f"numbagrad.load: {name}: {what}, more than max_bytes={limit:,} "
                        f"allows{default}. Pass a larger max_bytes= to load it from a "
                        "trusted source")


def _load_npz(fh, name, max_bytes, bad, weights_only=True):
    pos = fh.tell()
    head = fh.read(6)
    end = fh.seek(0, os.SEEK_END)
    fh.seek(pos)
    size = end - pos
    if head == b"\x93NUMPY":
        raise bad("it holds a single NumPy array (.npy), not a .npz archive")
    if head[:4] not in (b"PK\x03\x04", b"PK\x05\x06"):  # what np.load takes for a zip
        hint = f". If it is a PyTorch checkpoint: {_CONVERT_TORCH}" \
            if str(name).endswith(_TORCH_SUFFIXES) else ""
        raise bad(f"it is not a NumPy .npz archive nor a safetensors file{hint}")
    limit = max_bytes if max_bytes is not None else _FLOOR + _PER_FILE_BYTE * size
    try:
        with zipfile.ZipFile(fh) as z:
            infos = {}
            for info in z.infolist():
                key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                if key in infos:
                    raise _MalformedError(f"its archive has two entries named {info.filename}")
                infos[key] = _checked_member(info, end)
            charges = {key: info.file_size * (_JSON_FACTOR if key == _STRUCTURE else 1)
                       for key, info in infos.items()}
            for key, charge in charges.items():
                if charge > limit:
                    info = infos[key]
                    what = (f"entry {info.filename} declares {info.file_size:,} bytes once "
                            f"decompressed ({info.compress_size:,} bytes in the file)")
                    if key == _STRUCTURE:
                        what += f", which Python holds in about {charge:,}"
                    raise _TooBigError(what)
            if sum(charges.values()) > limit:
                raise _TooBigError(f"its {len(infos)} entries declare {sum(charges.values()):,} "
                                   f"bytes in all (its structure counting {_JSON_FACTOR} "
                                   "times)")
            if _STRUCTURE not in infos:
                raise _MalformedError(f"its archive has no {_STRUCTURE} entry (arrays only: "
                                      f"{', '.join(list(infos)[:5])})")
            text = _read_npy(z, infos[_STRUCTURE]).tobytes()
            try:
                structure = json.loads(text.decode())
            except (UnicodeDecodeError, ValueError):
                raise _MalformedError("its structure entry is not valid JSON") from None
            loader = _Loader(lambda key: _read_npy(z, infos[key]), infos, limit,
                             weights_only is not False)
            return loader.decode(structure)
    except _TooBigError as e:
        raise _too_big(name, str(e), limit, max_bytes, size) from None
    except _MalformedError as e:
        raise bad(str(e)) from None
    except RecursionError:
        raise bad("its structure is nested too deeply") from None
    except (zipfile.BadZipFile, ValueError) as e:  # ZipFile's, on a damaged directory
        raise bad(f"it is a damaged or truncated archive ({type(e).__name__}: "
                  f"{str(e)[:80]})") from None
    except (EOFError, OSError) as e:
        raise bad(f"it cannot be read ({type(e).__name__}: {str(e)[:80]})") from None


def _checked_member(info, end):
    """``info``, once its declared sizes are backed by the file (its data lies in it; a
    stored entry is as long as its data) and it is stored or deflated (zipfile decompresses
    only deflate in bounded steps; NumPy writes nothing else)."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _MalformedError(f"entry {info.filename} is compressed with method "
                              f"{info.compress_type}; numbagrad reads stored and deflated "
                              "entries (those NumPy writes)")
    if info.header_offset + info.compress_size > end:
        raise _MalformedError(f"entry {info.filename} declares {info.compress_size:,} bytes "
                              f"at offset {info.header_offset:,}, past the file's end "
                              f"({end:,} bytes)")
    if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
        raise _MalformedError(f"entry {info.filename} is stored in {info.compress_size:,} "
                              f"bytes but declares {info.file_size:,}")
    return info


def _read_npy(z, info):
    """The array of a .npy entry whose size was checked: its header must declare as many
    bytes as the entry holds, and decompression stops there, read chunk by chunk."""
    try:
        return _read_npy_unchecked(z, info)
    except (ValueError, EOFError, OSError, RuntimeError, NotImplementedError, zlib.error,
            zipfile.BadZipFile) as e:
        raise _MalformedError(f"an entry of its archive cannot be read ({type(e).__name__}: "
                              f"{str(e)[:80]})") from None


def _read_npy_unchecked(z, info):
    with z.open(info) as fp:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            raise _MalformedError(f"entry {info.filename} is a .npy of version {version}")
        if dtype.hasobject:
            raise _MalformedError(f"entry {info.filename} holds Python objects (dtype "
                                  f"{dtype}), which numbagrad never unpickles")
        if any(n < 0 for n in shape):
            raise _MalformedError(f"entry {info.filename} declares shape {shape}")
        count = math.prod(shape)
        nbytes = count * dtype.itemsize
        held = info.file_size - fp.tell()
        if nbytes != held:
            raise _MalformedError(f"entry {info.filename} declares shape {shape} of "
                                  f"{dtype} ({nbytes:,} bytes) but holds {held:,} bytes")
        if dtype.itemsize == 0:
            array = np.ndarray(count, dtype)
        else:
            buf = np.empty(nbytes, np.uint8)
            view, done = memoryview(buf), 0
            while done < nbytes:
                n = fp.readinto(view[done:done + _CHUNK])
                if not n:
                    raise EOFError(f"entry {info.filename} ends after {done:,} of "
                                   f"{nbytes:,} bytes")
                done += n
            array = np.frombuffer(buf, dtype, count)
    if fortran:
        return array.reshape(shape[::-1]).transpose()
    return array.reshape(shape)
