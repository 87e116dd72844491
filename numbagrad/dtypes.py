"""Torch dtypes over NumPy dtypes, the default dtype, and torch's type-promotion rules."""

import threading

import numpy as np


class dtype:  # noqa: N801 - named as torch.dtype
    __slots__ = ("name", "np", "is_floating_point", "itemsize", "_rank", "scalar_name", "c_name")

    def __init__(self, name, np_dtype, is_floating_point, rank, scalar_name, c_name):
        self.name = name
        # the names torch's error messages use: its ScalarType ("Float", as in
        # torch.FloatTensor) and the C++ type ("float")
        self.scalar_name = scalar_name
        self.c_name = c_name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = is_floating_point
        self.itemsize = self.np.itemsize
        self._rank = rank  # position in the promotion lattice below

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    @property
    def is_signed(self):
        return self.name != "bool"


bool_ = dtype("bool", np.bool_, False, 0, "Bool", "bool")
int32 = dtype("int32", np.int32, False, 1, "Int", "int")
int64 = dtype("int64", np.int64, False, 2, "Long", "long int")
float32 = dtype("float32", np.float32, True, 3, "Float", "float")
float64 = dtype("float64", np.float64, True, 4, "Double", "double")

ALL = (bool_, int32, int64, float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_RANK = {d._rank: d for d in ALL}


def _by_name(name):
    return {d.name: d for d in ALL}[name]


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
            "supported types are: float64, float32, int64, int32, and bool."
        ) from None


def as_dtype(d):
    """Accept our dtype, a NumPy dtype or Python type; return our dtype (None stays None)."""
    if d is None or isinstance(d, dtype):
        return d
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
    return _default.value


def set_default_dtype(d):
    d = as_dtype(d)
    if d not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default.value = d


def promote(a, b):
    """Promote two dtypes: bool < int32 < int64 < float32 < float64 is a chain for our set."""
    if a is None:
        return b
    if b is None:
        return a
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
