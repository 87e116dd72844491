"""Reductions and softmax: records and front ends. ``iat`` of a node is the kept shape (the
input's shape with reduced dims as 1), which maps every input element to its group."""

import functools
import inspect
from collections import namedtuple

import numpy as np

from ... import dtypes
from ...core import trace_guards
from ...engine.record import float_dtype_for, record, record_array, replay_value
from ...engine.registry import Sample, defop
from ...tensor import Tensor, _make  # noqa: F401
from ..elementwise.pointwise import maximum, minimum, to_dtype

# the package's functions (numbagrad star-imports them); each is a Tensor method too
__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "logsumexp", "var", "std", "norm",
           "softmax", "log_softmax"]

_SH = [(), (5,), (3, 4), (2, 3, 4)]


def _s(call, shapes=_SH, kws=({},)):
    return [Sample((s,), kw, call) for s in shapes for kw in kws]


_DIMS = ({"dim": 0}, {"dim": -1, "keepdim": True}, {"dim": (0, -1)})
# reductions of every element have kernels of their own: one pairwise sum, one broadcast,
# without the group machinery of a reduction over some dims (half the compile)
SUM = defop("sum", "SumBackward0", 1, replay="sum_all_fw", replay_f32=True,
            kernel="sum_all_bw", samples=_s("x0.sum()"))
SUM_DIM = defop("sum_dim", "SumBackward1", 1, replay="sum_fw", replay_f32=True, kernel="sum_bw",
                samples=_s("x0.sum(**kw)", _SH[1:], _DIMS))
MEAN = defop("mean", "MeanBackward0", 1, replay="mean_all_fw", replay_f32=True,
             kernel="sum_all_bw", samples=_s("x0.mean()"))
MEAN_DIM = defop("mean_dim", "MeanBackward1", 1, replay="mean_fw", replay_f32=True, kernel="sum_bw",
                 samples=_s("x0.mean(**kw)", _SH[1:], _DIMS))
PROD = defop("prod", "ProdBackward0", 1, replay="prod_fw", replay_f32=True, kernel="prod_bw",
             saves=("x0", "y"), samples=_s("x0.prod()"))
PROD_DIM = defop("prod_dim", "ProdBackward1", 1, replay="prod_fw", replay_f32=True,
                 kernel="prod_dim_bw", saves=("x0", "y"),
                 samples=_s("x0.prod(**kw)", _SH[1:], ({"dim": 0}, {"dim": -1, "keepdim": True})))
MAX_ALL = defop("max", "MaxBackward1", 1, replay="amax_fw", kernel="extreme_all_bw",
                saves=("x0", "y"), samples=_s("x0.max()"))
MIN_ALL = defop("min", "MinBackward1", 1, replay="amin_fw", kernel="extreme_all_bw",
                saves=("x0", "y"), samples=_s("x0.min()"))
MAX_DIM = defop("max_dim", "MaxBackward0", 1, replay="argmax_dim_fw", replay_bw="arg_dim_bw",
                kernel="index_bw",
                samples=_s("x0.max(**kw)[0]", _SH[1:], ({"dim": 0}, {"dim": -1, "keepdim": True})))
MIN_DIM = defop("min_dim", "MinBackward0", 1, replay="argmin_dim_fw", replay_bw="arg_dim_bw",
                kernel="index_bw",
                samples=_s("x0.min(**kw)[0]", _SH[1:], ({"dim": 0}, {"dim": 1, "keepdim": True})))
AMAX = defop("amax", "AmaxBackward0", 1, replay="amax_fw", kernel="amax_bw", saves=("x0", "y"),
             samples=_s("x0.amax(**kw)", _SH[1:], _DIMS))
AMIN = defop("amin", "AminBackward0", 1, replay="amin_fw", kernel="amax_bw", saves=("x0", "y"),
             samples=_s("x0.amin(**kw)", _SH[1:], _DIMS))
LOGSUMEXP = defop("logsumexp", "LogsumexpBackward0", 1, replay="logsumexp_fw", replay_f32=True,
                  kernel="logsumexp_bw",
                  saves=("x0", "y"), samples=_s("x0.logsumexp(**kw)", _SH[1:], _DIMS))
VAR = defop("var", "VarBackward0", 1, replay="var_fw", replay_f32=True, kernel="var_bw",
            saves=("x0",),
            samples=_s("x0.var(**kw)", _SH[1:], ({}, {"dim": 0}, {"dim": -1, "correction": 0})))
STD = defop("std", "StdBackward0", 1, replay="std_fw", replay_f32=True, kernel="std_bw",
            saves=("x0", "y"),
            samples=_s("x0.std(**kw)", _SH[1:], ({}, {"dim": 0}, {"dim": -1, "keepdim": True})))
NORM = defop("norm", "LinalgVectorNormBackward0", 1, replay="norm_fw", replay_f32=True,
             kernel="norm_bw", saves=("x0", "y"),
             samples=_s("x0.norm(**kw)", _SH[1:],
                        ({}, {"p": 1}, {"p": 3.0, "dim": -1}, {"p": float("inf")})))
SOFTMAX = defop("softmax", "SoftmaxBackward0", 1, replay="softmax_fw", replay_f32=True,
                kernel="softmax_bw", saves=("y",),
                samples=_s("x0.softmax(**kw)", _SH[1:], ({"dim": 0}, {"dim": -1})))
LOG_SOFTMAX = defop("log_softmax", "LogSoftmaxBackward0", 1, replay="log_softmax_fw",
                    replay_f32=True, kernel="log_softmax_bw",
                    saves=("y",),
                    samples=_s("x0.log_softmax(**kw)", _SH[1:], ({"dim": 0}, {"dim": -1})))


_F64, _F32 = np.dtype(np.float64), np.dtype(np.float32)


def _dims(dim, ndim, name):
    """Normalized reduced dims as a sorted tuple; None means all."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = ndim if ndim > 1 else 1
    out = []
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}]"
                             f", but got {d})")
        d %= n
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(d for d in out if d < ndim)) if ndim else ()


def _kept(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _reduce(op, x, dims, keepdim, value, fat=()):
    kept = _kept(x.shape, dims)
    out = np.asarray(value).reshape(kept if keepdim else
                                    tuple(s for i, s in enumerate(x.shape) if i not in dims))
    if out.ndim == 0:
        out = out[()]  # 0-d results are NumPy scalars, as a ufunc's would be
    elif not out.flags.c_contiguous:  # torch's reductions are C-ordered (NumPy's follow x's)
        out = np.ascontiguousarray(out)
    return record(op, out, (x,), kept, fat)


def _trailing(shape, dims):
    """Whether the reduced ``dims`` (sorted) are the last ones of ``shape``."""
    return tuple(dims) == tuple(range(len(shape) - len(dims), len(shape)))


def _group_value(op, x, dims, fat):
    """One value per group of a float reduction, by ``op``'s replay kernel (replay_value)
    in ``x``'s dtype."""
    data = np.asarray(x._data)
    kept = _kept(data.shape, dims)
    if op in (SUM, SUM_DIM) and data.flags.c_contiguous and _trailing(data.shape, dims):
        # each group is one contiguous run: np.sum adds it pairwise, as the kernel does
        # (the same bits), and the kernel's compile waits for a replay that needs it
        return np.sum(data, axis=dims).reshape(-1)
    return replay_value(op, (data,), int(np.prod(kept)), data.dtype, kept, fat)


def _float_input(x):
    return to_dtype(x, float_dtype_for(x))


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """The sum of all elements, or over ``dim`` (an int or a tuple of ints).

    Same as ``torch.sum``.
    """
    data = input._data
    if dim is None and dtype is None and data.ndim and \
            (data.dtype is _F64 or data.dtype is _F32) and data.flags.c_contiguous:
        # the whole sum of a float array, in fewer steps (np.sum's own call)
        kept = (1,) * data.ndim
        value = np.add.reduce(data, axis=tuple(range(data.ndim)))
        return record_array(SUM, value.reshape(kept) if keepdim else value, input, None, kept,
                            (1.0,))
    if dtype is not None:
        input = to_dtype(input, dtypes.as_dtype(dtype))
    elif not input.dtype.is_floating_point and input.dtype is not dtypes.int64:
        input = to_dtype(input, dtypes.int64)  # torch sums bools and integers in int64
    dims = _dims(dim, input.ndim, "sum")
    op = SUM if dim is None else SUM_DIM
    if input.dtype.is_floating_point:
        # the replay's pairwise/group sums: np.sum of a strided view, or over several dims,
        # adds in another order
        return _reduce(op, input, dims, keepdim, _group_value(op, input, dims, (1.0,)), (1.0,))
    value = np.sum(input._data, axis=dims, keepdims=keepdim)
    return _reduce(op, input, dims, keepdim, value, (1.0,))


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of all elements, or over ``dim`` (an int or a tuple of ints).

    Same as ``torch.mean``.
    """
    if not input.dtype.is_floating_point and dtype is None:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {input.dtype.scalar_name}")
    dims = _dims(dim, input.ndim, "mean")
    n = int(np.prod([input.shape[d] for d in dims])) if dims else 1
    op = MEAN if dim is None else MEAN_DIM
    fat = (1.0 / n if n else np.nan,)
    if not n:
        value = np.full(_kept(input.shape, dims), np.nan, input._data.dtype)
    elif input.dtype.is_floating_point:
        value = _group_value(op, input, dims, fat)  # the replay's sums, as sum() above
    else:
        value = np.mean(input._data, axis=dims, keepdims=keepdim)
    return _reduce(op, input, dims, keepdim, value, fat)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """The product of all elements, or along ``dim``.

    Same as ``torch.prod``.
    """
    if dtype is not None:  # torch casts the input first
        input = to_dtype(input, dtypes.as_dtype(dtype))
    dims = _dims(dim, input.ndim, "prod")
    op = PROD if dim is None else PROD_DIM
    if input.dtype.is_floating_point:  # in order, one rounding per product, as replay
        return _reduce(op, input, dims, keepdim, _group_value(op, input, dims, ()))
    return _reduce(op, input, dims, keepdim, np.prod(input._data, axis=dims, keepdims=keepdim))


MaxMin = namedtuple("MaxMin", ["values", "indices"])


class _ReturnType(MaxMin):
    _name = "max"

    def __repr__(self):
        return (f"torch.return_types.{self._name}(\nvalues={self.values!r},\n"
                f"indices={self.indices!r})")


class max_return(_ReturnType):  # noqa: N801
    _name = "max"


class min_return(_ReturnType):  # noqa: N801
    _name = "min"


def _extreme(x, dim, keepdim, is_max, other=None):
    if other is not None:  # torch.max(a, b) is maximum
        return maximum(x, other) if is_max else minimum(x, other)
    if dim is None:
        if x.numel() == 0:
            raise RuntimeError(f"{'max' if is_max else 'min'}(): Expected reduction dim to be "
                               "specified for input.numel() == 0. Specify the reduction dim "
                               "with the 'dim' argument.")
        dims = tuple(range(x.ndim))
        value = np.max(x._data) if is_max else np.min(x._data)
        return _reduce(MAX_ALL if is_max else MIN_ALL, x, dims, False, value)
    d = _dims(dim, x.ndim, "max")
    d = d[0] if d else 0
    data = np.asarray(x._data)
    if data.ndim and data.shape[d] == 0:  # else NumPy's ValueError from argmax
        raise IndexError(f"{'max' if is_max else 'min'}(): Expected reduction dim {d} to have "
                         "non-zero size.")
    if data.ndim == 0:
        idx = np.zeros((), np.int64)
    else:
        # torch returns the first index among ties, like NumPy's argmax
        idx = np.argmax(data, axis=d) if is_max else np.argmin(data, axis=d)
    idx_k = np.expand_dims(idx, d) if data.ndim else idx
    values = np.take_along_axis(data, idx_k, d) if data.ndim else data
    flat = np.take_along_axis(np.arange(data.size).reshape(data.shape), idx_k, d) \
        if data.ndim else np.zeros((), np.int64)
    if not keepdim and data.ndim:
        values = values.squeeze(d)
        idx_k = idx_k.squeeze(d)
    if values.ndim:  # C-ordered, as torch's (np.ascontiguousarray makes a 0-d array 1-d)
        values, idx_k = np.ascontiguousarray(values), np.ascontiguousarray(idx_k)
    # iat: the flat input position of each output (what the backward reads), then the kept
    # shape (compiled replay recomputes the positions: they are data)
    iat = np.concatenate([flat.reshape(-1), np.array(_kept(x.shape, (d,)), np.int64)])
    out = record(MAX_DIM if is_max else MIN_DIM, values, (x,), iat)
    cls = max_return if is_max else min_return
    indices = trace_guards.derive(_make(np.asarray(idx_k, np.int64)),
                                  lambda a: _extreme(_make(a), d, keepdim, is_max)[1]._data,
                                  (x,), f"{'max' if is_max else 'min'}(dim) indices")
    return cls(out, indices)


def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """The largest element; along ``dim``, ``(values, indices)``; with a tensor, ``maximum``.

    Same as ``torch.max``.
    """
    if dim is not None and not isinstance(dim, int):
        return _extreme(input, None, False, True, other=dim)
    return _extreme(input, dim, keepdim, True, other)


def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """The smallest element; along ``dim``, ``(values, indices)``; with a tensor, ``minimum``.

    Same as ``torch.min``.
    """
    if dim is not None and not isinstance(dim, int):
        return _extreme(input, None, False, False, other=dim)
    return _extreme(input, dim, keepdim, False, other)


def _nonempty(x, dim, name):
    """torch's errors for amax / amin over no elements (NumPy's ValueError names no op),
    checked as torch checks them: before the dims are deduplicated, one by one, each named
    as given."""
    if x._data.size:
        return
    if dim == () or dim is None:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in (dim,) if isinstance(dim, int) else tuple(dim):
        if x.shape[_dims(d, x.ndim, name)[0]] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def amax(input, dim=(), keepdim=False):
    """The largest values over ``dim`` (an int or a tuple; all dims by default).

    Same as ``torch.amax``.
    """
    _nonempty(input, dim, "amax")
    dims = _dims(None if dim == () else dim, input.ndim, "amax")
    return _reduce(AMAX, input, dims, keepdim, np.amax(input._data, axis=dims, keepdims=keepdim))


def amin(input, dim=(), keepdim=False):
    """The smallest values over ``dim`` (an int or a tuple; all dims by default).

    Same as ``torch.amin``.
    """
    _nonempty(input, dim, "amin")
    dims = _dims(None if dim == () else dim, input.ndim, "amin")
    return _reduce(AMIN, input, dims, keepdim, np.amin(input._data, axis=dims, keepdims=keepdim))


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow.

    Same as ``torch.logsumexp``.
    """
    input = _float_input(input)
    dims = _dims(dim, input.ndim, "logsumexp")
    data = np.asarray(input._data)
    if data.size:
        # log(sum(exp(x - m))) + m, m the max (0 where not finite: stable, as torch does)
        value = _group_value(LOGSUMEXP, input, dims, ())
    else:
        value = np.log(np.sum(np.exp(data), axis=dims, keepdims=True))
    return _reduce(LOGSUMEXP, input, dims, keepdim, value.astype(data.dtype))


def _correction(unbiased, correction):
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def _float_only(x):
    if not x.dtype.is_floating_point:  # torch computes no variance of integers
        raise RuntimeError("std and var only support floating point and complex dtypes")


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The variance over ``dim`` (all dims by default), dividing by ``N - correction``.

    Same as ``torch.var``.
    """
    _float_only(input)
    if isinstance(dim, bool):  # var(unbiased) positional form
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    dims = _dims(dim, input.ndim, "var")
    # fat[1]: no dim given, where torch's gradient differs once no degree of freedom is left
    fat = (c, 1.0 if dim is None or input.ndim == 0 else 0.0)
    return _reduce(VAR, input, dims, keepdim, _group_value(VAR, input, dims, fat), fat)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The standard deviation over ``dim`` (all dims by default), with ``N - correction``.

    Same as ``torch.std``.
    """
    _float_only(input)
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    dims = _dims(dim, input.ndim, "std")
    return _reduce(STD, input, dims, keepdim, _group_value(STD, input, dims, (c,)), (c,))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm: a vector norm (``linalg.vector_norm``) of the dims given, all for None or
    (); "fro" over at most two dims is the 2-norm, any other string is a matrix norm."""
    if isinstance(p, str):
        if p != "fro" or not (dim is None or isinstance(dim, int) or len(dim) <= 2):
            _matrix_norm(input, p, dim, dtype)
        p = 2.0
    p = 2.0 if p is None else float(p)
    if not input.dtype.is_floating_point:  # torch takes no norm of integers
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {input.dtype.scalar_name}")
    if not isinstance(dim, int) and dim is not None and len(dim) == 0:
        dim = None
    if input.numel() == 0 and (p < 0.0 or p == np.inf):
        _no_identity(input, p, dim)
    if dtype is not None:
        input = to_dtype(input, _norm_dtype(input, dtypes.as_dtype(dtype), "linalg.vector_norm"))
    input = _float_input(input)
    dims = _dims(dim, input.ndim, "norm")
    # inf: max |x|; -inf: min |x|; 2: sqrt(sum x^2); 0: count of nonzeros; else
    # sum(|x|^p)^(1/p)
    return _reduce(NORM, input, dims, keepdim, _group_value(NORM, input, dims, (p,)), (p,))


def _no_identity(x, p, dim):
    """torch's errors for a norm with no identity (p < 0, inf) over an empty dim."""
    what = f"linalg.vector_norm cannot compute the {p:g} norm on"
    if dim is None:
        raise RuntimeError(f"{what} an empty tensor because the operation does not have an "
                           "identity")
    for d in (dim,) if isinstance(dim, int) else dim:
        if x.shape[_dims(d, x.ndim, "norm")[0]] == 0:
            raise RuntimeError(f"{what} the dimension {d}because this dimension is empty and "
                               "the operation does not have an identity")  # torch's spacing


def _norm_dtype(x, dt, name):
    if not dt.is_floating_point:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{dt.scalar_name}")
    if dtypes.promote(x.dtype, dt) is not dt:
        raise RuntimeError(f"{name}: the dtype of the input ({x.dtype.scalar_name}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({dt.scalar_name})")
    return dt


def _matrix_norm(x, p, dim, dtype):
    """torch's checks of a matrix norm (torch.norm with a string other than "fro" over at
    most two dims); past them, the nuclear norm, which numbagrad does not compute."""
    if p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if x.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if not x.dtype.is_floating_point:
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {x.dtype.scalar_name}")
    dims = list(range(x.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dims))}")
    d0, d1 = (_dims(d, x.ndim, "norm")[0] for d in dims)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if dtype is not None:
        _norm_dtype(x, dtypes.as_dtype(dtype), "linalg.matrix_norm")
    raise NotImplementedError(f"norm(p='nuc'): the nuclear norm (the sum of the singular "
                              f"values over dims ({d0}, {d1})) is not supported by numbagrad")


def _softmax_value(data, d, log):
    if not data.size:
        return data.copy()
    value = replay_value(LOG_SOFTMAX if log else SOFTMAX, (data,), data.size, data.dtype,
                         _kept(data.shape, d))
    return value.reshape(data.shape)


def softmax(input, dim, dtype=None):
    """Softmax along ``dim``: ``exp(x)`` normalized to sum to 1.

    Same as ``torch.softmax``.
    """
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim, dtype=None):
    """The logarithm of the softmax along ``dim``, computed stably.

    Same as ``torch.log_softmax``.

    Args:
        input: the input tensor (the tensor itself, as a method).
        dim: the dimension along which the softmax is taken.
        dtype: if given, ``input`` is cast to this dtype first (default None).

    Returns:
        A new tensor of ``input``'s shape.
    """
    return _softmax(input, dim, dtype, True)


def _softmax(x, dim, dtype, log):
    if dtype is None and not x.dtype.is_floating_point:  # torch has no integer kernel
        name = "log_softmax" if log else "softmax"
        raise NotImplementedError(f'"{name}" not implemented for \'{x.dtype.scalar_name}\'')
    x = to_dtype(x, dtypes.as_dtype(dtype)) if dtype is not None else _float_input(x)
    dims = _dims(dim, x.ndim, "softmax")
    data = np.asarray(x._data)
    # a 0-d input too: its softmax is exp(x - x) / 1, NaN at an infinite or NaN x
    value = _softmax_value(data, dims, log)
    value = value[()] if value.ndim == 0 else value
    return record(LOG_SOFTMAX if log else SOFTMAX, value, (x,), _kept(x.shape, dims))


def numpy_aliases(fn, name=None):
    """``fn`` taking NumPy's ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``, as
    torch's argument parser does; both spellings of one argument: torch's TypeError."""
    name = name or fn.__name__
    params = list(inspect.signature(fn).parameters)
    at = {p: params.index(p) for p in ("dim", "keepdim") if p in params}

    @functools.wraps(fn)
    def aliased(*args, **kw):
        if kw and ("axis" in kw or "keepdims" in kw):
            for alias, real in (("axis", "dim"), ("keepdims", "keepdim")):
                if alias in kw:
                    if real in kw or len(args) > at.get(real, len(args)):
                        raise TypeError(f"{name}() got an unexpected keyword argument "
                                        f"'{alias}'")
                    kw[real] = kw.pop(alias)
        return fn(*args, **kw)
    return aliased


for _name in __all__:
    if _name != "norm":  # (torch.norm takes neither alias)
        globals()[_name] = numpy_aliases(globals()[_name])

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {name: globals()[name] for name in __all__}

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"amax": "one", "amin": "one", "logsumexp": "one", "norm": "one", "std": "one", "var":
             "one", "sum": "one", "mean": "one", "prod": "one", "softmax": "one", "log_softmax":
             "one", "max": "several", "min": "several"}
