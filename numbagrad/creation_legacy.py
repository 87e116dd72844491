"""torch's legacy tensor types (torch.FloatTensor, torch.LongTensor, ...): constructors in
their dtype, isinstance checks by dtype, and targets of ``Tensor.type``."""

import numpy as np

from . import dtypes, factories
from . import tensor as tensor_module
from .core.docs import torch_doc
from .creation_device import check_device
from .ops.shape.movement import alias
from .size import Size
from .tensor import Tensor


class LegacyTensorType(type):
    """The metaclass: ``torch.FloatTensor`` is a class whose instances are float32 tensors."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"

    def __call__(cls, *args, device=None, size=None):
        return construct(cls.dtype, args, device, size)


def construct(dt, args, device=None, size=None, alias_any=False):
    """What torch's legacy constructor of ``dt`` tensors makes of ``args``: data converted to
    ``dt``, sizes (uninitialized values), a tensor of that dtype as it is (of any dtype with
    ``alias_any``, as ``torch.Tensor(t)``: an alias sharing its memory), nothing: empty."""
    kind = str(device).partition(":")[0] if device is not None else "cpu"
    if kind != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                           f"{kind} was passed")
    check_device(device)
    if size is not None:
        if args:
            raise TypeError("new() received an invalid combination of arguments: sizes given "
                            "both as positional arguments and as size=")
        args = (Size(size),)
    if not args:
        return factories.empty(0, dtype=dt)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if alias_any:
            return alias(first)
        if first.dtype is not dt:
            raise TypeError(f"expected {_options(dt)} (got {_options(first.dtype)})")
        return first
    if len(args) == 1 and isinstance(first, (list, tuple, np.ndarray)) and \
            not isinstance(first, Size):
        return factories.tensor(first, dtype=dt)
    if isinstance(first, Size) or all(isinstance(a, (int, np.integer)) and
                                      not isinstance(a, bool) for a in args):
        # sizes: torch leaves the values uninitialized
        return factories.empty(*(first if isinstance(first, Size) else args), dtype=dt)
    if isinstance(first, str):
        raise TypeError("new(): invalid data type 'str'")
    if len(args) > 1:
        raise tensor_module.invalid_legacy_arguments(args)
    name = type(first).__name__
    if type(first).__module__ == "numpy":
        name = "numpy." + name
    raise TypeError(f"new(): data must be a sequence (got {name})")


def _tensor_constructor(args, device, size):
    """``torch.Tensor(...)``: the legacy constructor of the default dtype."""
    return construct(dtypes.get_default_dtype(), args, device, size, alias_any=True)


tensor_module.legacy_constructor = _tensor_constructor


def _options(d):
    return (f"TensorOptions(dtype={d.c_name}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


def _legacy(d):
    name = f"{d.scalar_name}Tensor"
    doc = torch_doc(f"The legacy type of {d.name} tensors: ``{name}(data)`` or ``{name}(*sizes)`` "
                    f"makes one, ``isinstance(t, {name})`` tests a tensor's dtype.",
                    f"torch.{name}")
    return LegacyTensorType(name, (), {"dtype": d, "__slots__": (), "__doc__": doc})


TYPES = {f"{d.scalar_name}Tensor": _legacy(d) for d in dtypes.EVERY}
__all__ = sorted(TYPES)
globals().update(TYPES)
