"""Tensor methods of the creation area: new_* factories, dtype casts and type(), device
moves (CPU only), memory layout queries (stride, storage_offset, nbytes), H/mH, membership,
deepcopy and the storage no-ops."""

import copy
import warnings

import numpy as np

from . import creation_device, dtypes, factories
from .core.docs import documented, torch_doc
from .creation_device import CPU, check_device
from .creation_legacy import TYPES as _LEGACY_TYPES
from .creation_legacy import LegacyTensorType
from .ops.elementwise import pointwise
from .ops.shape import movement
from .tensor import Tensor, _init_tensor, _wrap_dim


# ---- new_* : a factory in this tensor's dtype (and device) -----------------------------------
def _sizes(size):
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size


def _new(fn):
    def new(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
            pin_memory=False):
        return fn(*_sizes(size), dtype=dtype or self.dtype, device=device,
                  requires_grad=requires_grad)
    name = "new_" + fn.__name__
    return documented(new, torch_doc(f"A tensor of ``size`` as ``{fn.__name__}`` makes, in this "
                                     "tensor's dtype unless ``dtype`` is given.",
                                     f"torch.Tensor.{name}"), name)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    """A tensor of ``size`` filled with ``fill_value``, in this tensor's dtype by default.

    Same as ``torch.Tensor.new_full``.
    """
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    return factories.full(tuple(size), fill_value, dtype=dtype or self.dtype, device=device,
                          requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
    """A tensor of a copy of ``data``, in this tensor's dtype by default.

    Same as ``torch.Tensor.new_tensor``.
    """
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    return factories.tensor(data, dtype=dtype or self.dtype, device=device,
                            requires_grad=requires_grad)


def new(self, *args, device=None):
    """The legacy ``Tensor.new``: the legacy constructor of this tensor's dtype.

    Args:
        *args: what the legacy constructor takes (``torch.FloatTensor(...)``): sizes, a
            sequence of values, or nothing for an empty tensor.
        device: the device; only the CPU (default None).

    Returns:
        A new tensor of this tensor's dtype.
    """
    return _LEGACY_TYPES[f"{self.dtype.scalar_name}Tensor"](*args, device=device)


# ---- dtype casts ----------------------------------------------------------------------------
def _cast(dt, name):
    def cast(self, memory_format=None):
        return pointwise.to_dtype(self, dtypes.refuse_unsupported(dt))
    note = "numbagrad has no bfloat16: this raises TypeError." if dt is dtypes.bfloat16 else None
    return documented(cast, torch_doc(f"This tensor as {dt.name}: ``self.to({dt.name})``.",
                                      f"torch.Tensor.{name}", note), name)


_BY_TYPE_NAME = {f"torch.{d.scalar_name}Tensor": d for d in dtypes.EVERY}


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """``type()``: torch's legacy type name ('torch.FloatTensor'); ``type(t)``: a cast to the
    dtype ``t`` (a dtype or such a name)."""
    if dtype is None:
        return f"torch.{self.dtype.scalar_name}Tensor"
    if isinstance(dtype, str):
        if dtype not in _BY_TYPE_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _BY_TYPE_NAME[dtype]
    elif isinstance(dtype, LegacyTensorType):  # Tensor.type(torch.DoubleTensor)
        dtype = dtype.dtype
    return pointwise.to_dtype(self, dtypes.as_dtype(dtype))


# ---- devices: the CPU is the only place data lives ------------------------------------------
def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False,
       memory_format=None):
    """This tensor in another dtype (a copy when the dtype changes or ``copy=True``).

    Same as ``torch.Tensor.to``; the only device is the CPU.

    Args:
        *args: a dtype, a device (a string, int or device) or a tensor whose dtype to take,
            positionally.
        dtype: the target dtype (default None: keep this tensor's).
        device: the target device; only the CPU (default None).
        non_blocking: accepted for torch's signature and ignored.
        copy: if True, return a copy even when nothing changes (default False).
        memory_format: accepted for torch's signature and ignored.

    Returns:
        This tensor itself when neither the dtype changes nor ``copy`` is set, else a new
        tensor.
    """
    for a in args:
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, int, creation_device.device)) and not isinstance(a, bool):
            device = a  # check_device gives torch's error for a string naming no device
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__}), but expected a dtype, device or Tensor")
    check_device(device)
    if dtype is None:
        return self.clone() if copy else self
    out = pointwise.to_dtype(self, dtypes.as_dtype(dtype))
    return out.clone() if copy and out is self else out


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """Raise torch's error for a build without CUDA: numbagrad computes on the CPU only.

    Same as ``torch.Tensor.cuda`` without a GPU.
    """
    if device is not None and isinstance(device, int):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    raise AssertionError("Torch not compiled with CUDA enabled")


def pin_memory(self, device=None):
    """Raise torch's error for a machine without an accelerator, which numbagrad never uses.

    Same as ``torch.Tensor.pin_memory`` without a GPU.

    Args:
        device: accepted for torch's signature and ignored.

    Raises:
        RuntimeError: always.
    """
    raise RuntimeError("Cannot access accelerator device when none is available.")


def get_device(self):
    """-1, the device index of a CPU tensor.

    Same as ``torch.Tensor.get_device``.
    """
    return -1  # torch's answer for a CPU tensor


# ---- memory layout --------------------------------------------------------------------------
def _root(arr):
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def stride(self, dim=None):
    """The step in elements between neighbours along each dimension, or along ``dim``.

    Same as ``torch.Tensor.stride``.
    """
    data = self._data
    if isinstance(data, np.ndarray):
        strides = tuple(s // data.itemsize for s in data.strides)
    else:
        strides = ()
    if dim is None:
        return strides
    return strides[_wrap_dim(dim, self.ndim)] if self.ndim else _stride_of_scalar(dim)


def _stride_of_scalar(dim):
    raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def storage_offset(self):
    """The position of the first element in the underlying buffer, in elements.

    Same as ``torch.Tensor.storage_offset``.
    """
    data = self._data
    if not isinstance(data, np.ndarray) or data.size == 0:
        return 0
    root = _root(data)
    start = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return start // data.itemsize


def data_ptr(self):
    """The memory address of the first element (0 for an empty tensor).

    Same as ``torch.Tensor.data_ptr``.
    """
    data = self._array()
    return 0 if data.size == 0 else data.__array_interface__["data"][0]


def _nbytes(self):
    """The number of bytes of the elements, ``numel() * itemsize``.

    Same as ``torch.Tensor.nbytes``.
    """
    return self.numel() * self._data.itemsize


def resize_(self, *size):
    """Reshape in place to ``size``, keeping the leading elements (new ones are zero here;
    torch leaves them uninitialized).

    Args:
        *size: the new shape, as integers or one tuple, list or Size. The tensor must not
            require grad.

    Returns:
        This tensor, changed in place.
    """
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    size = factories._int_sizes(_sizes(size))
    if any(s < 0 for s in size):
        raise RuntimeError("numel: integer multiplication overflow")
    flat = np.asarray(self._data).reshape(-1)
    n = int(np.prod(size, dtype=np.int64))
    new = np.zeros(n, flat.dtype)
    new[:min(n, flat.size)] = flat[:n]
    self._data = new.reshape(size)
    self._vc[0] += 1
    return self


# ---- conjugate transposes: the transposes, for real tensors -----------------------------------
def _H(self):
    """The conjugate transpose of a matrix: its transpose, as numbagrad tensors are real.

    Same as ``torch.Tensor.H``.
    """
    if self.ndim not in (0, 2):
        hint = (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else "")
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.{hint}")
    return movement.transpose(self, 0, 1) if self.ndim == 2 else self


def _mH(self):
    """The conjugate transpose of the last two dimensions: their transpose (real tensors).

    Same as ``torch.Tensor.mH``.
    """
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return movement.transpose(self, -2, -1)


# ---- Python protocols -----------------------------------------------------------------------
def _contains(self, element):
    if isinstance(element, Tensor):
        value = element._data
    elif isinstance(element, (int, float, bool, np.number, np.bool_)):
        value = element
    else:
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed "
                           f"in a {type(element)}.")
    return bool(np.any(np.asarray(self._data) == value))


def _deepcopy(self, memo):
    """A copy of a leaf with its data, requires_grad, .grad and class (nn.Parameter stays a
    Parameter), as torch's deepcopy."""
    if self._tape is not None:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                           "the deepcopy protocol at the moment.  If you were attempting to "
                           "deepcopy a module, this may be because of a torch.nn.utils."
                           "weight_norm usage, see https://github.com/pytorch/pytorch/pull/"
                           "103001")
    if id(self) in memo:
        return memo[id(self)]
    new = type(self).__new__(type(self))
    _init_tensor(new, np.array(self._data))
    new._requires_grad = self._requires_grad
    memo[id(self)] = new
    if self._grad is not None:
        new._grad = copy.deepcopy(self._grad, memo)
    extra = getattr(self, "__dict__", None)
    if extra:
        new.__dict__.update(copy.deepcopy(extra, memo))
    return new


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack export (``torch.Tensor.__dlpack__``, NumPy 2's ``ndarray.__dlpack__``): a
    CPU capsule sharing this tensor's memory (``copy=True``: of a copy). A tensor that
    requires grad is refused, as torch refuses it; detach it first."""
    if self._requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if stream not in (None, -1):  # -1: no synchronization, which a CPU tensor never needs
        raise AssertionError("stream should be None on cpu.")
    arr = self._array()
    if any(s < 0 for s in arr.strides):
        # DLPack allows negative strides, but torch.from_dlpack aborts the process on them
        # (torch has none): hand out a compact copy instead
        if copy is False:
            raise BufferError("Can't export a tensor with negative strides without a copy; "
                              "pass copy=None or copy=True")
        arr, copy = np.asarray(arr, order="C"), None
    # only the arguments given: NumPy before 2.1 takes no others, and consumers retry
    # without them on a TypeError
    kwargs = {name: value for name, value in (("max_version", max_version),
                                              ("dl_device", dl_device), ("copy", copy))
              if value is not None}
    return arr.__dlpack__(**kwargs)


def _dlpack_device(self):
    """Where the data is for DLPack, ``(kDLCPU, 0)`` (as ``torch.Tensor.__dlpack_device__``)."""
    return self._array().__dlpack_device__()


def _is_shared(self):
    """Always False: numbagrad does not move tensors to shared memory.

    Same as ``torch.Tensor.is_shared``.
    """
    return False


def _cpu(self, memory_format=None):
    """This tensor itself: numbagrad tensors are in host memory.

    Same as ``torch.Tensor.cpu``.
    """
    return self


def _device(self):
    """The device, always the CPU.

    Same as ``torch.Tensor.device``.
    """
    return CPU


def _is_cpu(self):
    """Always True: numbagrad tensors are in host memory.

    Same as ``torch.Tensor.is_cpu``.
    """
    return True


def _is_pinned(self, device=None):
    """Always False: numbagrad never pins memory.

    Same as ``torch.Tensor.is_pinned``.

    Args:
        device: accepted for torch's signature and ignored.

    Returns:
        False.
    """
    return False


def _share_memory_(self):
    """This tensor itself, unchanged: numbagrad does not move tensors to shared memory.

    Same as ``torch.Tensor.share_memory_``, as a no-op.
    """
    return self


def _ndimension(self):
    """The number of dimensions; alias for :meth:`~Tensor.dim`.

    Same as ``torch.Tensor.ndimension``.
    """
    return self.ndim


def _itemsize(self):
    """The size of one element in bytes.

    Same as ``torch.Tensor.itemsize``.
    """
    return self._data.itemsize


def _is_complex(self):
    """Always False: numbagrad has no complex dtypes.

    Same as ``torch.Tensor.is_complex``.
    """
    return False


def _is_signed(self):
    """Whether the dtype holds negative numbers (not bool or uint8).

    Same as ``torch.Tensor.is_signed``.
    """
    return self.dtype.is_signed


TENSOR_METHODS = {
    "new_zeros": _new(factories.zeros), "new_ones": _new(factories.ones),
    "new_empty": _new(factories.empty), "new_full": new_full, "new_tensor": new_tensor,
    "new": new,
    "half": _cast(dtypes.float16, "half"), "bfloat16": _cast(dtypes.bfloat16, "bfloat16"),
    "byte": _cast(dtypes.uint8, "byte"), "char": _cast(dtypes.int8, "char"),
    "short": _cast(dtypes.int16, "short"),
    "type": type_, "to": to, "cuda": cuda, "pin_memory": pin_memory,
    "cpu": _cpu, "get_device": get_device,
    "device": property(_device), "is_cpu": property(_is_cpu),
    "is_pinned": _is_pinned,
    "share_memory_": _share_memory_, "is_shared": _is_shared,
    "ndimension": _ndimension, "stride": stride, "storage_offset": storage_offset,
    "data_ptr": data_ptr, "nbytes": property(_nbytes),
    "itemsize": property(_itemsize), "resize_": resize_,
    "H": property(_H), "mH": property(_mH),
    "__dlpack__": _dlpack, "__dlpack_device__": _dlpack_device,
    "is_complex": _is_complex, "is_signed": _is_signed,
    "__contains__": _contains, "__deepcopy__": _deepcopy,
}
