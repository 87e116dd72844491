"""Reductions, scans and sorting: cumsum, sort, topk, median, unique and kin."""

import numpy as np

from ... import dtypes
from ...core.docs import documented, torch_doc
from ...tensor import Tensor, _make
from ..elementwise import pointwise
from ..reduce import reductions
from ..reduce.reductions import numpy_aliases
from ..shape import join, movement
from . import misc, records, select, stats
from . import quantile as scan_quantile

__all__ = ["all", "any", "count_nonzero", "cumsum", "cumprod", "logcumsumexp", "cummax",
           "cummin", "diff", "trace", "nansum", "nanmean", "sort", "argsort", "msort", "topk",
           "kthvalue", "median", "nanmedian", "mode", "std_mean", "var_mean", "aminmax",
           "quantile", "nanquantile", "unique", "unique_consecutive", "bincount", "histc",
           "bucketize", "searchsorted", "dist", "trapezoid", "trapz", "cumulative_trapezoid"]
# torch has these as functions only
_NO_METHOD = ("std_mean", "var_mean", "bucketize", "searchsorted", "trapezoid", "trapz",
              "cumulative_trapezoid")


def _truth(name, np_fn, doc):
    def reduce_bool(input, dim=None, keepdim=False):
        data = np.asarray(input._data)
        if isinstance(dim, (tuple, list)) and len(dim) == 0:
            dim = None
        dims = reductions._dims(dim, input.ndim, name)
        out = np_fn(data, axis=dims, keepdims=keepdim) if data.ndim else np_fn(data)
        # torch keeps uint8 as uint8; every other dtype answers in bool
        return _make(np.asarray(out, np.uint8 if data.dtype == np.uint8 else np.bool_))
    return numpy_aliases(documented(reduce_bool, torch_doc(doc, f"torch.{name}"), name), name)


all = _truth("all", np.all, "Whether every element is true, of all or over ``dim``.")  # noqa: A001
any = _truth("any", np.any, "Whether any element is true, of all or over ``dim``.")  # noqa: A001


@numpy_aliases
def count_nonzero(input, dim=None):
    """The number of nonzero elements, of all or over ``dim``.

    Same as ``torch.count_nonzero``.
    """
    data = np.asarray(input._data)
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None
    dims = reductions._dims(dim, input.ndim, "count_nonzero")
    return _make(np.asarray(np.count_nonzero(data, axis=dims) if data.ndim else
                            np.count_nonzero(data), np.int64))


cumsum = numpy_aliases(records.cumsum, "cumsum")
cumprod = numpy_aliases(records.cumprod, "cumprod")
logcumsumexp = numpy_aliases(records.logcumsumexp, "logcumsumexp")
cummax = numpy_aliases(select.cummax, "cummax")
cummin = numpy_aliases(select.cummin, "cummin")
trace = records.trace
nansum = numpy_aliases(records.nansum, "nansum")
sort = numpy_aliases(select.sort, "sort")
argsort = numpy_aliases(select.argsort, "argsort")
msort = select.msort
topk = numpy_aliases(select.topk, "topk")
kthvalue = numpy_aliases(select.kthvalue, "kthvalue")
median = numpy_aliases(select.median, "median")
nanmedian = numpy_aliases(select.nanmedian, "nanmedian")
mode = numpy_aliases(select.mode, "mode")
std_mean = numpy_aliases(stats.std_mean, "std_mean")
var_mean = numpy_aliases(stats.var_mean, "var_mean")
aminmax = numpy_aliases(stats.aminmax, "aminmax")
dist = stats.dist
quantile = numpy_aliases(scan_quantile.quantile, "quantile")
nanquantile = numpy_aliases(scan_quantile.nanquantile, "nanquantile")
unique = misc.unique
unique_consecutive = misc.unique_consecutive
bincount = misc.bincount
histc = misc.histc
bucketize = misc.bucketize
searchsorted = misc.searchsorted


@numpy_aliases
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN elements, of all or over ``dim``.

    Same as ``torch.nanmean``.
    """
    if dtype is not None:
        input = pointwise.to_dtype(input, dtypes.as_dtype(dtype))
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype.scalar_name}")
    count = count_nonzero(_make(~np.isnan(np.asarray(input._data))), dim)
    if keepdim:
        count = _make(np.asarray(count._data).reshape(
            reductions._kept(input.shape, reductions._dims(dim, input.ndim, "nanmean"))))
    return nansum(input, dim, keepdim) / count


@numpy_aliases
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (after ``prepend``, before ``append``).

    Same as ``torch.diff``.
    """
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = movement._wrap(dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    if len(parts) > 1:
        parts = [_diff_operand(t, input, d) for t in parts]
        input = join.cat(parts, d)
    for _ in range(n):
        m = input.shape[d]
        if m == 0:
            break
        hi, lo = movement.narrow(input, d, 1, m - 1), movement.narrow(input, d, 0, m - 1)
        if input.dtype is dtypes.bool_:  # torch: logical_xor for bools
            input = _make(np.asarray(np.logical_xor(hi._data, lo._data)))
        else:
            input = hi - lo
    return input


def _diff_operand(t, x, d):
    if not isinstance(t, Tensor):  # a number: one slice of x's shape along d
        size = list(x.shape)
        size[d] = 1
        return _make(np.full(size, t, np.asarray(x._data).dtype))
    if t.ndim != x.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    return t


# trapezoid and cumulative_trapezoid follow aten/src/ATen/native/Integration.cpp
def _spacing(name, y, x, dx, dim):
    """The wrapped dim, and x's spacings along it (a Tensor) or the constant dx (a float)."""
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: pass x or "
                        "dx, not both")
    if not isinstance(y, Tensor):
        raise TypeError(f"{name}(): argument 'y' (position 1) must be Tensor, not "
                        f"{type(y).__name__}")
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = movement._wrap(dim, y.ndim)
    if y.dtype is dtypes.bool_ or (isinstance(x, Tensor) and x.dtype is dtypes.bool_):
        what = "`x` or `y`" if isinstance(x, Tensor) else "`y`"
        raise RuntimeError(f"{name}: received a bool input for {what}, but bool is not "
                           "supported")
    if not isinstance(x, Tensor):
        return d, float(1.0 if dx is None else dx) if x is None else float(x)
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y.ndim
        sizes[d] = x.shape[0]
        x = x.reshape(sizes)
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    m = x.shape[d]
    return d, movement.narrow(x, d, 1, m - 1) - movement.narrow(x, d, 0, m - 1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: spacing 1, the constant ``dx``, or the sample
    points ``x``.

    Same as ``torch.trapezoid``.
    """
    d, step = _spacing("trapezoid", y, x, dx, dim)
    n = y.shape[d]
    if n == 0:
        kept = tuple(s for k, s in enumerate(y.shape) if k != d)
        return _make(np.zeros(kept, np.asarray(y._data).dtype))
    if not isinstance(step, Tensor):
        ends = y.select(d, 0) + y.select(d, -1)
        return (y.sum(d) - ends * 0.5) * step
    return (step * (movement.narrow(y, d, 0, n - 1) + movement.narrow(y, d, 1, n - 1))).sum(d) / 2.0


def trapz(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule (``trapezoid``'s older name).

    Same as ``torch.trapz``.
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule along ``dim`` (one element fewer than ``y``).

    Same as ``torch.cumulative_trapezoid``.
    """
    d, step = _spacing("cumulative_trapezoid", y, x, dx, dim)
    n = y.shape[d]
    pairs = movement.narrow(y, d, 0, max(n - 1, 0)) + \
        movement.narrow(y, d, min(1, n), max(n - 1, 0))
    if not isinstance(step, Tensor):
        return (pairs * (step / 2.0)).cumsum(d)
    return ((step * pairs) / 2.0).cumsum(d)


# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {name: globals()[name] for name in __all__ if name not in _NO_METHOD}

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"all": "one", "nanmean": "one", "diff": "one", "any": "one"}
