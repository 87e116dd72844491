"""Reductions, scans and sorting: cumsum, sort, topk, median, unique and kin."""

import numpy as np

from .. import dtypes
from ..core.docs import documented, torch_doc
from ..tensor import Tensor, _make
from . import pointwise, reduce, scan_misc, scan_ops, scan_quantile, scan_select, scan_stats, shape
from .reduce import numpy_aliases

__all__ = ["all", "any", "count_nonzero", "cumsum", "cumprod", "logcumsumexp", "cummax",
           "cummin", "diff", "trace", "nansum", "nanmean", "sort", "argsort", "msort", "topk",
           "kthvalue", "median", "nanmedian", "mode", "std_mean", "var_mean", "aminmax",
           "quantile", "nanquantile", "unique", "unique_consecutive", "bincount", "histc",
           "bucketize", "searchsorted", "dist"]
# torch has these as functions only
_NO_METHOD = ("std_mean", "var_mean", "bucketize", "searchsorted")


def _truth(name, np_fn, doc):
    def reduce_bool(x, dim=None, keepdim=False):
        data = np.asarray(x._data)
        if isinstance(dim, (tuple, list)) and len(dim) == 0:
            dim = None
        dims = reduce._dims(dim, x.ndim, name)
        out = np_fn(data, axis=dims, keepdims=keepdim) if data.ndim else np_fn(data)
        # torch keeps uint8 as uint8; every other dtype answers in bool
        return _make(np.asarray(out, np.uint8 if data.dtype == np.uint8 else np.bool_))
    return numpy_aliases(documented(reduce_bool, torch_doc(doc, f"torch.{name}"), name), name)


all = _truth("all", np.all, "Whether every element is true, of all or over ``dim``.")  # noqa: A001
any = _truth("any", np.any, "Whether any element is true, of all or over ``dim``.")  # noqa: A001


@numpy_aliases
def count_nonzero(x, dim=None):
    """The number of nonzero elements, of all or over ``dim``.

    Same as ``torch.count_nonzero``.
    """
    data = np.asarray(x._data)
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None
    dims = reduce._dims(dim, x.ndim, "count_nonzero")
    return _make(np.asarray(np.count_nonzero(data, axis=dims) if data.ndim else
                            np.count_nonzero(data), np.int64))


cumsum = numpy_aliases(scan_ops.cumsum, "cumsum")
cumprod = numpy_aliases(scan_ops.cumprod, "cumprod")
logcumsumexp = numpy_aliases(scan_ops.logcumsumexp, "logcumsumexp")
cummax = numpy_aliases(scan_select.cummax, "cummax")
cummin = numpy_aliases(scan_select.cummin, "cummin")
trace = scan_ops.trace
nansum = numpy_aliases(scan_ops.nansum, "nansum")
sort = numpy_aliases(scan_select.sort, "sort")
argsort = numpy_aliases(scan_select.argsort, "argsort")
msort = scan_select.msort
topk = numpy_aliases(scan_select.topk, "topk")
kthvalue = numpy_aliases(scan_select.kthvalue, "kthvalue")
median = numpy_aliases(scan_select.median, "median")
nanmedian = numpy_aliases(scan_select.nanmedian, "nanmedian")
mode = numpy_aliases(scan_select.mode, "mode")
std_mean = numpy_aliases(scan_stats.std_mean, "std_mean")
var_mean = numpy_aliases(scan_stats.var_mean, "var_mean")
aminmax = numpy_aliases(scan_stats.aminmax, "aminmax")
dist = scan_stats.dist
quantile = numpy_aliases(scan_quantile.quantile, "quantile")
nanquantile = numpy_aliases(scan_quantile.nanquantile, "nanquantile")
unique = scan_misc.unique
unique_consecutive = scan_misc.unique_consecutive
bincount = scan_misc.bincount
histc = scan_misc.histc
bucketize = scan_misc.bucketize
searchsorted = scan_misc.searchsorted


@numpy_aliases
def nanmean(x, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN elements, of all or over ``dim``.

    Same as ``torch.nanmean``.
    """
    if dtype is not None:
        x = pointwise.to_dtype(x, dtypes.as_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {x.dtype.scalar_name}")
    count = count_nonzero(_make(~np.isnan(np.asarray(x._data))), dim)
    if keepdim:
        count = _make(np.asarray(count._data).reshape(
            reduce._kept(x.shape, reduce._dims(dim, x.ndim, "nanmean"))))
    return nansum(x, dim, keepdim) / count


@numpy_aliases
def diff(x, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (after ``prepend``, before ``append``).

    Same as ``torch.diff``.
    """
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = shape._wrap(dim, x.ndim)
    parts = [t for t in (prepend, x, append) if t is not None]
    if len(parts) > 1:
        parts = [_diff_operand(t, x, d) for t in parts]
        x = shape.cat(parts, d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = shape.narrow(x, d, 1, m - 1), shape.narrow(x, d, 0, m - 1)
        if x.dtype is dtypes.bool_:  # torch: logical_xor for bools
            x = _make(np.asarray(np.logical_xor(hi._data, lo._data)))
        else:
            x = hi - lo
    return x


def _diff_operand(t, x, d):
    if not isinstance(t, Tensor):  # a number: one slice of x's shape along d
        size = list(x.shape)
        size[d] = 1
        return _make(np.full(size, t, np.asarray(x._data).dtype))
    if t.ndim != x.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    return t


# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {name: globals()[name] for name in __all__ if name not in _NO_METHOD}
