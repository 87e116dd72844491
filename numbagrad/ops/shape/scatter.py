"""Writes into a copy of a tensor at indexed positions: scatter, index_copy, masked_scatter,
put (overwrite), scatter_add, index_add, put(accumulate) (add), scatter/index_fill (a value),
scatter_reduce.

Every one is read as flat C-order positions of the input (``positions``) and one of three
records whose kernels exist already:
* overwrite: y = x with y.flat[p[k]] = src.flat[k] (the CopySlices kernels, index_put_*);
* add: y = x + b, b = zeros with b.flat[p[k]] += src.flat[k] (index_add_flat's node), an
  elementwise record;
* masked: y = m ? value : x (elementwise, m the written positions), and scatter_reduce's
  y = m ? reduced : x, ``reduced`` computed by the existing ops.
"""

import numpy as np

from ...core import grad_mode
from ...dtypes import from_numpy_dtype
from ...engine.record import broadcast_shapes, record
from ...engine.registry import Sample, defop, vjp_rule
from ...tensor import Tensor, _make
from ..elementwise.pointwise import binary, to_dtype
from ..index.indexing import gather_flat, index_add_flat
from ..vjp import const, unbroadcast
from .movement import _wrap, expand, narrow, reshape


def _copies(name, grad_fn, samples):
    return defop(name, grad_fn, 2, kernel="index_put_bw", replay="index_put_fw",
                 samples=samples)


_I = "lib.tensor([[0, 2, 1, 0], [2, 1, 2, 2]])"
SCATTER = _copies("scatter", "ScatterBackward0", [
    Sample(((3, 4), (2, 4)), {}, f"x0.scatter(0, {_I}, x1)"),
    Sample(((3, 4), (1, 3)), {}, f"lib.scatter(x0, 0, {_I}[:1, :3], x1)")])
INDEX_COPY = _copies("index_copy", "IndexCopyBackward0", [
    Sample(((3, 4), (2, 4)), {}, "x0.index_copy(0, lib.tensor([2, 0]), x1)"),
    Sample(((3, 4), (3, 1)), {}, "lib.index_copy(x0, 1, lib.tensor([1]), x1)")])
MASKED_SCATTER = _copies("masked_scatter", "MaskedScatterBackward0", [
    Sample(((3, 4), (13,)), {}, "x0.masked_scatter(x0 > 0, x1)"),
    Sample(((3, 4), (2, 3)), {}, "lib.masked_scatter(x0, lib.tensor([True, False, False, "
                                 "True]), x1)")])
PUT = _copies("put", "PutBackward0", [
    Sample(((3, 4), (2, 2)), {}, "x0.put(lib.tensor([[0, 11], [5, -2]]), x1)")])


def _adds(name, grad_fn, samples):
    return defop(name, grad_fn, 2, grads=("g", "g"), fwd="a + b", samples=samples)


SCATTER_ADD = _adds("scatter_add", "ScatterAddBackward0", [
    Sample(((3, 4), (2, 4)), {}, f"x0.scatter_add(0, {_I}, x1)"),
    Sample(((3, 4), (2, 2)), {}, f"lib.scatter_add(x0, 1, {_I}[:, :2], x1)")])
INDEX_ADD = _adds("index_add", "IndexAddBackward0", [
    Sample(((3, 4), (3, 4)), {}, "x0.index_add(0, lib.tensor([2, 0, 2]), x1)"),
    Sample(((3, 4), (3, 2)), {}, "lib.index_add(x0, 1, lib.tensor([1, 1]), x1, alpha=-2.0)")])
PUT_ADD = _adds("put_accumulate", "PutBackward0", [
    Sample(((3, 4), (3,)), {}, "x0.put(lib.tensor([0, 11, 0]), x1, accumulate=True)")])


def _masked(name, grad_fn, samples):
    return defop(name, grad_fn, 1, grads=("0.0 if m else g",), fwd="f0 if m else a",
                 samples=samples)


SCATTER_VALUE = _masked("scatter_value", "ScatterBackward1", [
    Sample(((3, 4),), {}, f"x0.scatter(1, {_I}, 0.5)")])
INDEX_FILL = _masked("index_fill", "IndexFillBackward0", [
    Sample(((3, 4),), {}, "x0.index_fill(1, lib.tensor([0, -1]), -1.5)")])
# index_fill with a 0-d tensor value: the value gets the gradient of the filled positions
INDEX_FILL_TENSOR = defop("index_fill_tensor", "IndexFillBackward1", 2,
                          grads=("0.0 if m else g", "g if m else 0.0"), fwd="b if m else a",
                          samples=[Sample(((3, 4), ()), {},
                                          "x0.index_fill(1, lib.tensor([0, 0, 2]), x1)")])
# y = m ? b : a, b the reduced values (sum or mean, self included or not)
SCATTER_REDUCE = defop("scatter_reduce", "ScatterReduceBackward0", 2,
                       grads=("0.0 if m else g", "g if m else 0.0"), fwd="b if m else a",
                       samples=[Sample(((3, 4), (2, 4)), {}, f"x0.scatter_reduce(0, {_I}, x1, "
                                       "'sum')"),
                                Sample(((3, 4), (2, 4)), {}, f"x0.scatter_reduce(0, {_I}, x1, "
                                       "'mean', include_self=False)"),
                                Sample(((3, 4), (2, 4)), {}, f"x0.scatter_reduce(0, {_I}, x1, "
                                       "'mean')")])


@vjp_rule(SCATTER, INDEX_COPY, MASKED_SCATTER, PUT)
def _copies_vjp(ctx, g):
    nd = int(ctx.iat[0])
    region = tuple(int(s) for s in ctx.iat[1:1 + nd])
    pos = np.asarray(ctx.iat[1 + nd:], np.int64)
    gx = gv = None
    if ctx.needs[0]:
        keep = np.ones(int(np.prod(ctx.shape)), g._data.dtype)
        keep[pos] = 0
        gx = g * const(keep.reshape(ctx.shape), g._data.dtype)
    if ctx.needs[1]:
        gv = unbroadcast(gather_flat(g, pos, region), ctx.shapes[1])
    return [gx, gv]


# ---- positions -------------------------------------------------------------------------------
def _index_array(index, op, dtypes_ok=(np.int64, np.int32), message=None):
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    idx = index._array()
    if idx.dtype not in dtypes_ok:
        raise RuntimeError(message or f"{op}(): Expected dtype int32/int64 for index")
    return idx.astype(np.int64, copy=False)


def _scatter_positions(x, dim, index, src, op):
    """Flat positions in x written by ``index`` along ``dim`` (C order over the index), as
    torch's scatter/gather family checks them; ``src``: the source array or None."""
    d = _wrap(dim, x.ndim)
    idx = _index_array(index, op)
    nd = max(x.ndim, 1)
    if max(idx.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and max(src.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    shape = x.shape or (1,)
    ishape = idx.shape or (1,)
    for k in range(nd):
        if (k != d and ishape[k] > shape[k]) or (src is not None and
                                                 ishape[k] > (src.shape or (1,))[k]):
            extra = "" if src is None else \
                f" and to be no larger size than src {list(src.shape)}"
            raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                               f"{list(x.shape)} apart from dimension {d}{extra}")
    idx = idx.reshape(ishape)
    bad = (idx < 0) | (idx >= shape[d])
    if bad.any():
        raise RuntimeError(f"index {int(idx[bad].flat[0])} is out of bounds for dimension {d} "
                           f"with size {shape[d]}")
    grid = np.arange(x.numel(), dtype=np.int64).reshape(shape)
    sub = grid[tuple(slice(0, s) if k != d else slice(None) for k, s in enumerate(ishape))]
    return np.take_along_axis(sub, idx, d).reshape(-1), idx.shape


def _same_dtype(x, src, message):
    if src.dtype is not x.dtype:
        raise RuntimeError(message)


def _leading_part(src, shape):
    """src[:shape[0], :shape[1], ...]: the part of src an index of ``shape`` reads."""
    if tuple(src.shape) == tuple(shape):
        return src
    part = src
    for k, s in enumerate(shape):
        if part.shape[k] != s:
            part = narrow(part, k, 0, s)
    return part


def _overwrite(op, x, positions, src):
    """y = x with y.flat[positions[k]] = src.flat[k] (src's shape is the written region)."""
    new = x._array().copy()
    new.reshape(-1)[positions] = src._array().reshape(-1)
    region = tuple(src.shape)
    iat = np.concatenate([[len(region)], region, positions]).astype(np.int64)
    return record(op, new, (x, src), iat)


def _added(op, x, positions, src):
    """y = x + b, b = zeros with b.flat[positions[k]] += src.flat[k]."""
    b = index_add_flat(src, positions, tuple(x.shape))
    return record(op, x._array() + b._array(), (x, b))


def _filled(op, x, positions, value):
    data = x._array()
    mask = np.zeros(data.size, bool)
    mask[positions] = True
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"{op.name}_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        if value.requires_grad and op is INDEX_FILL:
            v = to_dtype(value, x.dtype)
            out = np.where(mask.reshape(data.shape), v._array(), data)
            return record(INDEX_FILL_TENSOR, out, (x, v), mask.astype(np.int64))
        value = value.item()
    out = np.where(mask.reshape(data.shape), np.asarray(value).astype(data.dtype), data)
    return record(op, out, (x,), mask.astype(np.int64), (float(value),))


# ---- front ends ------------------------------------------------------------------------------
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of ``x`` with ``src`` (or ``value``) written along ``dim`` at ``index``.

    Same as ``torch.scatter``.
    """
    if src is None:
        src = value
    if not isinstance(src, Tensor):
        positions, _ = _scatter_positions(input, dim, index, None, "scatter")
        if reduce is not None:
            return _reduced_no_grad(input, positions, np.full(positions.size, src), reduce)
        return _filled(SCATTER_VALUE, input, positions, src)
    _same_dtype(input, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    positions, ishape = _scatter_positions(input, dim, index, src, "scatter")
    part = _leading_part(src, ishape)
    if reduce is not None:
        return _reduced_no_grad(input, positions, part._array().reshape(-1), reduce,
                                needs=part.requires_grad)
    return _overwrite(SCATTER, input, positions, part)


def _reduced_no_grad(x, positions, values, reduce, needs=False):
    """scatter's deprecated ``reduce`` ('add', 'multiply'): not differentiable."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    if needs or x.requires_grad:
        raise NotImplementedError("numbagrad: scatter with reduce= is not differentiable here; "
                                  "use scatter_add or scatter_reduce")
    out = x._array().copy()
    (np.add if reduce == "add" else np.multiply).at(out.reshape(-1), positions,
                                                    np.asarray(values, out.dtype))
    return _make(out)


def scatter_add(input, dim, index, src):
    """A copy of ``x`` with ``src`` added along ``dim`` at ``index``.

    Same as ``torch.scatter_add``.
    """
    _same_dtype(input, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    positions, ishape = _scatter_positions(input, dim, index, src, "scatter_add")
    return _added(SCATTER_ADD, input, positions, _leading_part(src, ishape))


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """A copy of ``x`` with ``src`` reduced into it along ``dim`` at ``index`` by ``reduce``.

    Same as ``torch.scatter_reduce``.
    """
    _same_dtype(input, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # torch's aliases
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    positions, ishape = _scatter_positions(input, dim, index, src, "scatter_reduce")
    part = _leading_part(src, ishape)
    data = input._array()
    covered = np.zeros(data.size, bool)
    covered[positions] = True
    if reduce in ("prod", "amax", "amin"):
        grads = grad_mode.state.enabled and (input.requires_grad or part.requires_grad)
        if reduce == "prod" and grads:
            raise NotImplementedError("numbagrad: scatter_reduce with reduce='prod' is not "
                                      "differentiable here yet (sum, mean, amax, amin are)")
        ufunc = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
        out = data.copy().reshape(-1)
        if not include_self:
            first = {"prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
            if data.dtype.kind in "iub" and reduce != "prod":
                info = np.iinfo(data.dtype) if data.dtype.kind != "b" else None
                first = (info.min if reduce == "amax" else info.max) if info else 0
            out[covered] = first
        ufunc.at(out, positions, part._array().reshape(-1))
        out = out.reshape(data.shape)
        if not grads:
            return _make(out)
        return _extreme_recorded(input, part, positions, covered, out, include_self)
    total = index_add_flat(part, positions, tuple(input.shape))
    if include_self:
        total = binary("add", total, input)
    if reduce == "mean":
        counts = np.bincount(positions, minlength=data.size) + int(include_self)
        counts = np.maximum(counts, 1).reshape(data.shape)
        if data.dtype.kind in "iub":
            total = _make(np.floor_divide(total._array(), counts).astype(data.dtype))
        else:
            total = binary("div", total, _make(counts.astype(data.dtype)))
    out = np.where(covered.reshape(data.shape), total._array(), data)
    return record(SCATTER_REDUCE, out, (input, total), covered.astype(np.int64))


def _extreme_recorded(x, part, positions, covered, out, include_self):
    """amax/amin with torch's gradient: shared evenly by the elements equal to the result
    (self's included when include_self). The reduced input is the sum of those elements
    weighted 1/count, whose value equals the result (to the last bit but for ties)."""
    data = x._array().reshape(-1)
    result = out.reshape(-1)
    eq_src = part._array().reshape(-1) == result[positions]
    eq_self = covered & (data == result) if include_self else np.zeros(data.size, bool)
    count = np.bincount(positions, weights=eq_src, minlength=data.size) + eq_self
    dt = data.dtype
    w_src = (eq_src / count[positions]).astype(dt).reshape(part.shape)
    w_self = np.where(eq_self, 1.0 / np.maximum(count, 1), 0.0).astype(dt).reshape(x.shape)
    total = index_add_flat(binary("mul", part, _make(w_src)), positions, tuple(x.shape))
    if include_self:
        total = binary("add", total, binary("mul", x, _make(w_self)))
    return record(SCATTER_REDUCE, out, (x, total), covered.astype(np.int64))


def _index_along(x, dim, index, op, *, dtypes_ok=(np.int64, np.int32), message=None,
                 error=RuntimeError, prefix=""):
    """Wrapped dim, and the index vector along it, in range (torch's messages)."""
    d = _wrap(dim, x.ndim)
    idx = _index_array(index, op, dtypes_ok, message)
    if idx.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    idx = idx.reshape(-1)
    n = x.shape[d] if x.ndim else 1
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise error(f"{prefix}index {int(idx[bad][0])} is out of bounds for dimension {d} with "
                    f"size {n}")
    return d, idx


def _along_positions(x, d, idx):
    grid = np.arange(x.numel(), dtype=np.int64).reshape(x.shape or (1,))
    return np.take(grid, idx, axis=d)


def _check_source(x, d, idx, source, op, sep):
    if source.ndim and idx.size != source.shape[d if x.ndim else 0]:
        n = source.shape[d] if source.ndim else 1
        raise (IndexError if op == "index_copy_" else RuntimeError)(
            f"{op}(): Number of indices ({idx.size}) should be equal to source.size(dim){sep} "
            f"({n}){'' if op == 'index_copy_' else f', for dim: {d}'}")
    others = [s for k, s in enumerate(x.shape) if k != d]
    if source.ndim != x.ndim or [s for k, s in enumerate(source.shape) if k != d] != others:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} source.shape "
                           f"= {list(source.shape)}")


def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``x`` with ``alpha * source`` added at the positions ``index`` along ``dim``.

    Same as ``torch.index_add``.
    """
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({input.dtype.scalar_name}) and source "
                           f"({source.dtype.scalar_name}) must have the same scalar type")
    d, idx = _index_along(input, dim, index, "index_add_",
                          message=f"index_add_(): Expected dtype int32/int64 for index but got: "
                                  f"{index.dtype.scalar_name}")
    _check_source(input, d, idx, source, "index_add_", ":")
    if alpha != 1:
        source = binary("mul", source, alpha)
    return _added(INDEX_ADD, input, _along_positions(input, d, idx).reshape(-1),
                  reshape(source, -1) if source.ndim == 0 else source)


def index_copy(input, dim, index, source):
    """A copy of ``x`` with ``source`` written at the positions ``index`` along ``dim``.

    Same as ``torch.index_copy``.
    """
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {input.dtype.scalar_name} and (source) "
                           f"{source.dtype.scalar_name}")
    d, idx = _index_along(input, dim, index, "index_copy_", dtypes_ok=(np.int64,),
                          message=f"index_copy_(): Expected a long tensor for index, but got "
                                  f"{index.dtype.scalar_name}",
                          error=IndexError, prefix="index_copy_(): ")
    _check_source(input, d, idx, source, "index_copy_", "")
    positions = _along_positions(input, d, idx).reshape(-1)
    return _overwrite(INDEX_COPY, input, positions, source)


def index_fill(input, dim, index, value):
    """A copy of ``x`` with ``value`` at the positions ``index`` along ``dim``.

    Same as ``torch.index_fill``.
    """
    d = _wrap(dim, input.ndim)
    if not isinstance(index, Tensor) or index._array().dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    idx = index._array().reshape(-1)
    n = input.shape[d] if input.ndim else 1
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"index {int(idx[bad][0])} is out of bounds for dimension {d} with "
                         f"size {n}")
    positions = _along_positions(input, d, idx % max(n, 1)).reshape(-1)
    return _filled(INDEX_FILL, input, positions, value)


def masked_scatter(input, mask, source):
    """A copy of ``x`` with the elements of ``source``, in order, where ``mask`` is true.

    Same as ``torch.masked_scatter``.
    """
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{input.dtype.scalar_name} and {source.dtype.scalar_name}")
    m = mask._array() if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {from_numpy_dtype(m.dtype).scalar_name}")
    shape = broadcast_shapes(m.shape, tuple(input.shape))
    if tuple(input.shape) != shape:
        input = expand(input, size=shape)
    positions = np.flatnonzero(np.broadcast_to(m, shape))
    if source.numel() < positions.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    part = narrow(reshape(source, -1), 0, 0, positions.size)
    return _overwrite(MASKED_SCATTER, input, positions, part)


def put(x, index, source, accumulate=False):
    """A copy of this tensor with ``source`` at the flat positions ``index``, or added to them.

    Same as ``torch.Tensor.put``.
    """
    if source.dtype is not x.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {x.dtype.scalar_name} and source.dtype = "
                           f"{source.dtype.scalar_name}")
    if not isinstance(index, Tensor) or index._array().dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{index.dtype.scalar_name}")
    idx = index._array().reshape(-1)
    if source.numel() != idx.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() "
                         f"= {idx.size}")
    n = x.numel()
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[bad][0])} on a tensor "
                         f"of {n} elements.")
    positions = idx % max(n, 1)
    flat = reshape(source, -1)
    if accumulate:
        return _added(PUT_ADD, x, positions, flat)
    return _overwrite(PUT, x, positions, flat)

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"index_add": "one"}
