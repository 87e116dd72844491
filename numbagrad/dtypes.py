"""Torch dtypes over NumPy dtypes, the default dtype, and torch's type-promotion rules."""

import threading

import numpy as np


class dtype:  # noqa: N801 - named as torch.dtype
    """The element type of a tensor (``numbagrad.float32``, ...), over a NumPy dtype.

    Same as ``torch.dtype``. The dtypes are made once, in this module; the arguments are
    its own.

    Args:
        name: the type's name (``'float32'``).
        np_dtype: the NumPy dtype that holds the values (None for bfloat16).
        is_floating_point: whether the type is a floating-point type.
        rank: its position in the promotion order within its kind.
        scalar_name: torch's ScalarType name (``'Float'``).
        c_name: the C++ type name (``'float'``).
        itemsize: the size of one element in bytes (default None: the NumPy dtype's).
        abbr: the short name torch's reprs use (``'f32'``; default "").
    """

    __slots__ = {"name": "The type's name (``'float32'``).",
                 "np": "The NumPy dtype that holds the values (None for bfloat16).",
                 "is_floating_point": "Whether the type is a floating-point type.",
                 "itemsize": "The size of one element in bytes.",
                 "_rank": "", "_kind": "",
                 "scalar_name": "torch's ScalarType name (``'Float'``), as its messages use it.",
                 "c_name": "The C++ type name (``'float'``), as torch's messages use it.",
                 "abbr": "The short name torch's reprs use (``'f32'``)."}

    def __init__(self, name, np_dtype, is_floating_point, rank, scalar_name, c_name,
                 itemsize=None, abbr=""):
        self.name = name
        # the names torch's error messages use: its ScalarType ("Float", as in
        # torch.FloatTensor) and the C++ type ("float")
        self.scalar_name = scalar_name
        self.c_name = c_name
        # None for bfloat16, which NumPy lacks: as_dtype refuses it (see UNSUPPORTED)
        self.np = None if np_dtype is None else np.dtype(np_dtype)
        self.is_floating_point = is_floating_point
        self.itemsize = self.np.itemsize if itemsize is None else itemsize
        self._rank = rank  # position in the promotion order below (within a kind)
        # promotion kind: 0 bool, 1 integer, 2 floating
        self._kind = 2 if is_floating_point else (0 if name == "bool" else 1)
        self.abbr = abbr

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    @property
    def is_signed(self):
        """Whether the type holds negative values."""
        return self.name not in ("bool", "uint8")

    @property
    def is_complex(self):
        """Whether the type is complex (never: numbagrad has no complex dtypes)."""
        return False

    def to_real(self):
        """The real counterpart of the type: the type itself for a real one."""
        return self


bool_ = dtype("bool", np.bool_, False, 0, "Bool", "bool", abbr="b8")
uint8 = dtype("uint8", np.uint8, False, 1, "Byte", "unsigned char", abbr="u8")
int8 = dtype("int8", np.int8, False, 1, "Char", "signed char", abbr="i8")
int16 = dtype("int16", np.int16, False, 2, "Short", "short int", abbr="i16")
int32 = dtype("int32", np.int32, False, 3, "Int", "int", abbr="i32")
int64 = dtype("int64", np.int64, False, 4, "Long", "long int", abbr="i64")
float16 = dtype("float16", np.float16, True, 1, "Half", "c10::Half", abbr="f16")
bfloat16 = dtype("bfloat16", None, True, 1, "BFloat16", "c10::BFloat16", itemsize=2,
                 abbr="bf16")
float32 = dtype("float32", np.float32, True, 2, "Float", "float", abbr="f32")
float64 = dtype("float64", np.float64, True, 3, "Double", "double", abbr="f64")

# the dtypes a tensor can hold (bfloat16 is a name only: NumPy has no such dtype)
ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)
EVERY = ALL + (bfloat16,)
_BY_NP = {d.np: d for d in ALL}
UNSUPPORTED = (bfloat16,)


def _by_name(name):
    return {d.name: d for d in EVERY}[name]


def refuse_unsupported(d):
    if d in UNSUPPORTED:
        raise TypeError(f"numbagrad: dtype torch.{d.name} is not supported (NumPy has no "
                        f"{d.name} type); use torch.float32 or torch.float16")
    return d


def from_numpy_dtype(np_dtype):
    """Map a NumPy dtype to ours; unsupported ones raise torch's style of TypeError."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        if not np.dtype(np_dtype).isnative:
            raise ValueError(
                "given numpy array has byte order different from the native byte order. "
                "Conversion between byte orders is currently not supported.") from None
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only "
            "supported types are: float64, float32, float16, int64, int32, int16, int8, uint8, "
            "and bool."
        ) from None


def as_dtype(d):
    """Accept our dtype, a NumPy dtype or Python type; return our dtype (None stays None)."""
    if d is None:
        return d
    if isinstance(d, dtype):
        return refuse_unsupported(d)
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    return from_numpy_dtype(d)


class _DefaultDtype(threading.local):
    value = float32


_default = _DefaultDtype()


def get_default_dtype():
    """The floating-point dtype that Python floats and new float tensors get.

    Same as ``torch.get_default_dtype``.
    """
    return _default.value


def set_default_dtype(d):
    """Set the floating-point dtype that Python floats and new float tensors get.

    Same as ``torch.set_default_dtype``; float32 and float64 only.
    """
    d = as_dtype(d)
    if d is float16:  # torch takes it; numbagrad's compiled kernels have no float16 loops
        raise TypeError("numbagrad: torch.float16 as the default dtype is not supported (its "
                        "compiled kernels run in float32 and float64)")
    if d not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default.value = d


def promote(a, b):
    """torch.promote_types: the higher kind (bool < integer < floating) wins; within a kind
    the wider type, except uint8 with a signed integer (the smallest signed type holding
    both) and float16 with bfloat16 (float32)."""
    if a is None or a is b:
        return b
    if b is None:
        return a
    if a._kind != b._kind:
        return a if a._kind > b._kind else b
    if {a, b} == {uint8, int8}:
        return int16
    if {a, b} == {float16, bfloat16}:
        return float32
    return a if a._rank >= b._rank else b


def _combine(higher, lower):
    # torch's combine_categories: a lower priority tier only matters when it brings a
    # higher category (e.g. a float scalar with an int tensor).
    if higher is not None and higher.is_floating_point:
        return higher
    if higher is bool_ or (lower is not None and lower.is_floating_point):
        return promote(higher, lower)
    return higher if higher is not None else lower


def scalar_dtype(value):
    """The dtype torch gives a Python number wrapped into an operation."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    return _default.value


def result_type(*operands):
    """torch.result_type: dimensioned tensors outrank 0-d tensors, which outrank Python scalars.

    Each operand is a (dtype, ndim) pair, ndim None for a Python number.
    """
    dim = zero = wrapped = None
    for d, ndim in operands:
        if ndim is None:
            wrapped = promote(wrapped, d)
        elif ndim == 0:
            zero = promote(zero, d)
        else:
            dim = promote(dim, d)
    return _combine(dim, _combine(zero, wrapped))
