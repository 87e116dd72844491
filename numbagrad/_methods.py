"""Tensor's operators and methods, bound to the op front ends (an in-place one changes the
tensor through numbagrad/mutation.py)."""

import warnings

import numpy as np

from . import creation, dtypes
from .autograd import api
from .core import grad_mode, trace_guards
from .core.docs import documented, inplace_doc, torch_doc
from .engine.record import fresh_view, record, shape_error_broadcast
from .engine.registry import BY_NAME
from .mutation import _bump_version, _inplace
from .ops.elementwise import forward, math_api, pointwise, public, special_api
from .ops.index import indexing
from .ops.linalg import api as linalg_api
from .ops.linalg import matmul
from .ops.reduce import reductions
from .ops.scan import api as scan_api
from .ops.shape import api as shape_api
from .ops.shape import join, movement
from .tensor import Tensor, _make


# ---- backward: the autograd layer's, which the Tensor class sits below ---------------------
def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the ``.grad`` of the leaves it depends on.

    Same as ``torch.Tensor.backward``.

    Examples:
        >>> import numbagrad as torch
        >>> x = torch.tensor([1., 2., 3.], requires_grad=True)
        >>> y = (x ** 2).sum()
        >>> y.backward()
        >>> x.grad
        tensor([2., 4., 6.])
    """
    api.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


Tensor.backward = backward


_guards = trace_guards.state


# ---- comparisons: never differentiable ------------------------------------------------------
def _compare(ufunc, declines_ndarray=False):
    """The comparison ``ufunc`` as a Tensor method. ``declines_ndarray``: an ndarray operand
    gets NotImplemented, so that Python raises torch's TypeError (for ``!=``, Python's
    identity test answers, as in torch)."""
    ufunc = forward.torch_laid_out(ufunc)  # torch's layout, not NumPy's

    def cmp(self, other):
        o = other._data if isinstance(other, Tensor) else other
        if other is None or declines_ndarray and isinstance(other, np.ndarray):
            return NotImplemented
        try:
            out = _make(np.asarray(ufunc(self._data, o)))
        except ValueError:
            raise shape_error_broadcast(self.shape, np.shape(o)) from None
        if _guards.tracing:
            return trace_guards.derive(out, ufunc, (self, other), "a comparison")
        return out
    return cmp


for _name, _uf in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)):
    setattr(Tensor, f"__{_name}__", _compare(_uf, declines_ndarray=_name != "eq"))
    setattr(Tensor, _name, _compare(_uf))
Tensor.__hash__ = object.__hash__
Tensor.greater, Tensor.less = Tensor.gt, Tensor.lt


def _logical(ufunc):
    ufunc = forward.torch_laid_out(ufunc)

    def op(self, other):
        o = other._data if isinstance(other, Tensor) else other
        return _make(np.asarray(ufunc(self._data, o)))
    return op


Tensor.__and__ = _logical(np.logical_and)
Tensor.__or__ = _logical(np.logical_or)
Tensor.__xor__ = _logical(np.logical_xor)
Tensor.__invert__ = lambda self: _make(np.asarray(np.logical_not(self._data)
                                                  if self._data.dtype == np.bool_
                                                  else np.invert(self._data)))


# ---- arithmetic -------------------------------------------------------------------------------
def _binop(name):
    # a scalar graph's op is tried first: it takes the fewest steps there is
    on_tensor, on_number = pointwise.SCALAR_GRAPH_ARITHMETIC[name]

    def op(self, other):
        if isinstance(other, Tensor):
            out = on_tensor(self, other)
            return pointwise.binary(name, self, other) if out is None else out
        kind = type(other)
        if kind is float or kind is int:
            out = on_number(self, other)
            return pointwise.binary(name, self, other) if out is None else out
        if isinstance(other, (int, float, bool, np.number, np.bool_)):
            return pointwise.binary(name, self, other)
        if isinstance(other, np.ndarray):
            return pointwise.binary(name, self, _make(other))
        return NotImplemented
    return op


def _rbinop(name):
    # number + x and number * x are recorded as x + number and x * number: the same first step
    on_number = pointwise.SCALAR_GRAPH_ARITHMETIC[name][1] if name in ("add", "mul") else \
        pointwise.RSUB_NUMBER if name == "sub" else None

    def op(self, other):
        kind = type(other)
        if on_number is not None and (kind is float or kind is int):
            out = on_number(self, other)
            if out is not None:
                return out
        if isinstance(other, (int, float, bool, np.number, np.bool_)):
            return pointwise.rbinary(name, self, other)
        return NotImplemented
    return op


for _name in ("add", "sub", "mul"):
    setattr(Tensor, f"__{_name}__", _binop(_name))
    setattr(Tensor, f"__r{_name}__", _rbinop(_name))
Tensor.__truediv__ = _binop("div")
_rdiv_number = _rbinop("div")


def _rtruediv(self, other):
    """``other / self``. An ndarray on the left divides as torch's does: ``__rdiv__`` takes
    ``self.reciprocal() * other``, which NumPy computes (the ndarray's ``__rmul__``, NumPy's
    type promotion) and wraps as a Tensor; a tensor that requires grad raises the
    RuntimeError of its conversion to NumPy."""
    if isinstance(other, np.ndarray):
        _goes_to_numpy(self)
        return _make(np.asarray(np.multiply(pointwise.unary("reciprocal", self)._data, other)))
    return _rdiv_number(self, other)


Tensor.__rtruediv__ = _rtruediv


def _pow(self, e):
    # a Python number straight to pow_scalar (its x ** 2 is one NumPy product)
    if type(e) is int or type(e) is float:
        return pointwise.pow_scalar(self, e)
    if isinstance(e, np.ndarray):  # torch's: NumPy's power (its promotion), as a Tensor
        _goes_to_numpy(self)
        return _make(np.asarray(np.power(self._data, e)))
    return pointwise.pow(self, e)


def _goes_to_numpy(t):
    """torch computes an ndarray operand its operators do not take by converting the tensor
    to NumPy: a tensor that requires grad raises that conversion's RuntimeError."""
    if t._requires_grad:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")


Tensor.__pow__ = _pow
# an ndarray base: torch's TypeError (Python's, once both sides decline)
Tensor.__rpow__ = lambda self, base: NotImplemented if isinstance(base, np.ndarray) else \
    pointwise.rpow_scalar(self, base)
Tensor.__neg__ = lambda self: pointwise.unary("neg", self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: pointwise.unary("abs", self)
Tensor.__matmul__ = matmul.matmul  # (input, other): the operator with no extra frame
# an ndarray (or a list) on the left: torch's TypeError, as for its other operators
Tensor.__rmatmul__ = lambda self, other: matmul.matmul(other, self) \
    if isinstance(other, Tensor) else NotImplemented
Tensor.__getitem__ = lambda self, idx: indexing.getitem(self, idx)


def _integer_division(fn):
    """``fn`` (floor_divide, mod) on the values; an integer division by zero raises as in
    torch, where NumPy would give 0 with a warning."""
    def op(self, other):
        o = other._data if isinstance(other, Tensor) else other  # a Python number stays weak
        if self._data.dtype.kind in "biu" and np.asarray(o).dtype.kind in "biu" and \
                not np.all(o):
            raise RuntimeError("ZeroDivisionError")
        with np.errstate(divide="ignore", invalid="ignore"):  # floats: inf and NaN, silently
            return _make(np.asarray(fn(self._data, o)))
    return op


Tensor.__floordiv__ = _integer_division(np.floor_divide)
Tensor.__mod__ = _integer_division(np.mod)

for _name, _fn in public.METHODS.items():  # (the in-place forms: _inplace_forms.py)
    setattr(Tensor, _name, _fn)
for _name in ("add", "sub", "mul", "div", "maximum", "minimum"):
    setattr(Tensor, _name, getattr(pointwise, _name))
Tensor.subtract, Tensor.multiply, Tensor.divide = Tensor.sub, Tensor.mul, Tensor.div
Tensor.true_divide = Tensor.div
Tensor.pow = pointwise.pow
Tensor.clamp = pointwise.clamp
Tensor.clip = pointwise.clamp
Tensor.masked_fill = pointwise.masked_fill


def _where(self, condition, other):
    """Elements of this tensor where ``condition`` is true, of ``other`` elsewhere.

    Same as ``torch.Tensor.where``.
    """
    return pointwise.where(condition, self, other)


Tensor.where = _where


def _after_fresh_view(getter):
    """A property getter that first points a view whose base changed in place at its new
    node (record.fresh_view): torch shows the regenerated grad_fn."""
    def get(self):
        if self._base is not None and self._view[1] != self._vc[0]:
            fresh_view(self)
        return getter(self)
    get.__doc__ = getter.__doc__
    return get


Tensor.grad_fn = property(_after_fresh_view(Tensor.grad_fn.fget))
Tensor.is_leaf = property(_after_fresh_view(Tensor.is_leaf.fget))
Tensor.requires_grad = property(_after_fresh_view(Tensor.requires_grad.fget),
                                Tensor.requires_grad.fset)
Tensor.is_contiguous = documented(
    lambda self: bool(self._array().flags.c_contiguous),
    torch_doc("Whether the elements lie in memory in row-major (C) order, without gaps.",
              "torch.Tensor.is_contiguous"))
Tensor.T = property(movement.reverse_dims)


def _mT(self):
    """The transpose of the last two dimensions, a view.

    Same as ``torch.Tensor.mT``.
    """
    if self.ndim == 0:  # torch returns the tensor itself, with a deprecation warning
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity "
                      "in these cases.", UserWarning, stacklevel=2)
        return self
    if self.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return movement.transpose(self, -2, -1)


Tensor.mT = property(_mT)
Tensor.view_as = documented(lambda self, other: movement.view(self, *other.shape), torch_doc(
    "A view of this tensor in ``other``'s shape: ``self.view(other.shape)``.",
    "torch.Tensor.view_as"))
Tensor.reshape_as = documented(lambda self, other: movement.reshape(self, *other.shape), torch_doc(
    "This tensor in ``other``'s shape: ``self.reshape(other.shape)``.", "torch.Tensor.reshape_as"))


def _arg(fn, doc):
    def arg(self, dim=None, keepdim=False):
        data = np.asarray(self._data)
        if dim is None:
            if data.size == 0:
                raise IndexError(f"{fn.__name__}(): Expected reduction dim to be specified for "
                                 "input.numel() == 0.")
            out = _make(np.asarray(fn(data), np.int64)[()])
            return trace_guards.derive(out, fn, (self,), f"{fn.__name__}()")
        d = movement._wrap(dim, data.ndim)
        if data.ndim and data.shape[d] == 0:
            raise IndexError(f"{fn.__name__}(): Expected reduction dim {d} to have non-zero size.")
        out = fn(data, axis=d) if data.ndim else np.zeros((), np.int64)
        if keepdim and data.ndim:
            out = np.expand_dims(out, dim)
        return trace_guards.derive(_make(np.asarray(out, np.int64)),
                                   lambda a: arg(_make(a), dim, keepdim)._data, (self,),
                                   f"{fn.__name__}()")
    return documented(arg, torch_doc(doc, f"torch.{fn.__name__}"))


Tensor.argmax = _arg(np.argmax, "The index of the largest element along ``dim``, or of the "
                     "flattened tensor; the first on ties.")
Tensor.argmin = _arg(np.argmin, "The index of the smallest element along ``dim``, or of the "
                     "flattened tensor; the first on ties.")
Tensor.all = lambda self, dim=None: _make(np.asarray(np.all(self._data, axis=dim)))
Tensor.any = lambda self, dim=None: _make(np.asarray(np.any(self._data, axis=dim)))
Tensor.isnan = lambda self: trace_guards.derive(_make(np.asarray(np.isnan(self._data))),
                                                np.isnan, (self,), "isnan()")
Tensor.isfinite = lambda self: trace_guards.derive(_make(np.asarray(np.isfinite(self._data))),
                                                   np.isfinite, (self,), "isfinite()")


# ---- dtype conversions --------------------------------------------------------------------------
_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
                 "lazy, vulkan, mps, meta, hpu, mtia, privateuseone")


def _to(self, *args, dtype=None, copy=False, **kw):
    for a in args:
        if isinstance(a, str) and a.split(":")[0] not in _DEVICE_TYPES.split(", "):
            # a misspelt device (or a dtype name) would otherwise be ignored silently
            raise RuntimeError(f"Expected one of {_DEVICE_TYPES} device type at start of device "
                               f"string: {a}")
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
    if dtype is None:
        return self
    out = pointwise.to_dtype(self, dtypes.as_dtype(dtype))
    return out.clone() if copy and out is self else out


Tensor.to = _to


def _cast_to(dt, name):
    """The method ``name`` (``float``, ``double``, ...): this tensor in dtype ``dt``."""
    def cast(self):
        return pointwise.to_dtype(self, dt)
    return documented(cast, torch_doc(f"This tensor as {dt.name}: ``self.to({dt.name})``.",
                                      f"torch.Tensor.{name}"), name)


Tensor.float = _cast_to(dtypes.float32, "float")
Tensor.double = _cast_to(dtypes.float64, "double")
Tensor.long = _cast_to(dtypes.int64, "long")
Tensor.int = _cast_to(dtypes.int32, "int")
Tensor.bool = _cast_to(dtypes.bool_, "bool")
Tensor.type_as = documented(lambda self, other: pointwise.to_dtype(self, other.dtype), torch_doc(
    "This tensor in ``other``'s dtype: ``self.to(other.dtype)``.", "torch.Tensor.type_as") + """

Args:
    other: the tensor whose dtype the result takes.

Returns:
    This tensor itself if its dtype is already ``other``'s, else a copy in that dtype.""")
Tensor.cpu = lambda self: self
# numbagrad's inference_mode is no_grad and makes no inference tensors: none ever is one
Tensor.is_inference = documented(lambda self: False, torch_doc(
    "Whether this tensor is an inference tensor: always False in numbagrad (inference_mode "
    "records nothing, as no_grad, and marks no tensor).", "torch.Tensor.is_inference"),
    "is_inference")
Tensor.clone = documented(lambda self: pointwise.unary("clone", self), torch_doc(
    "A copy of this tensor; the copy's gradient flows back to it.", "torch.Tensor.clone"))


# ---- in-place ops (numbagrad/mutation.py changes the tensor) -----------------------------
def _inplace_binary(name):
    if name in ("add", "sub"):
        def op(self, other, *, alpha=1):
            return _inplace(self, lambda s: getattr(pointwise, name)(s, other, alpha=alpha))
    else:
        def op(self, other):
            return _inplace(self, lambda s: pointwise.binary(name, s, other))
    return documented(op, inplace_doc(name), name + "_")


for _name in ("add", "sub", "mul", "div"):
    setattr(Tensor, f"{_name}_", _inplace_binary(_name))
    setattr(Tensor, f"__i{_name if _name != 'div' else 'truediv'}__", _inplace_binary(_name))


def _fill_(self, value):
    """Fill this tensor with ``value`` (a number or a 0-d tensor) in place.

    Same as ``torch.Tensor.fill_``.

    Args:
        value: the number (or 0-d tensor) every element takes, cast to this tensor's dtype.

    Returns:
        This tensor.
    """
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")
    v = value.item() if isinstance(value, Tensor) else value
    return _inplace(self, lambda s: pointwise.masked_fill(s, np.ones(s.shape, bool), v))


Tensor.fill_ = _fill_
Tensor.zero_ = documented(lambda self: _fill_(self, 0),
                         torch_doc("Fill this tensor with zeros in place.", "torch.Tensor.zero_"))
Tensor.clamp_ = lambda self, min=None, max=None: _inplace(  # noqa: A006
    self, lambda s: pointwise.clamp(s, min, max))
Tensor.clip_ = Tensor.clamp_
Tensor.masked_fill_ = documented(lambda self, mask, value: _inplace(
    self, lambda s: pointwise.masked_fill(s, mask, value)), inplace_doc("masked_fill"))
Tensor.pow_ = documented(lambda self, e: _inplace(self, lambda s: pointwise.pow(s, e)),
                         inplace_doc("pow") + """

Args:
    e: the exponent, a number or a tensor broadcastable to this tensor's shape.

Returns:
    This tensor, each element raised to the power ``e``.""")


def _copy_(self, src):
    """Copy the values of ``src`` (broadcast, cast to this dtype) into this tensor in place.

    Same as ``torch.Tensor.copy_``.
    """
    src_t = src if isinstance(src, Tensor) else _make(np.asarray(src))
    err = shape_error_broadcast(tuple(self.shape), tuple(src_t.shape))
    if err is not None:  # torch's RuntimeError, not NumPy's ValueError
        raise err

    def compute(s):
        value = np.array(np.broadcast_to(np.asarray(src_t._data), s.shape), s._data.dtype)
        if s._requires_grad or src_t._requires_grad:
            return record(BY_NAME["copy"], value[()] if value.ndim == 0 else value,
                          (s, pointwise.to_dtype(src_t, s.dtype)))
        return _make(value)
    return _inplace(self, compute)


Tensor.copy_ = _copy_


def _takes_a_view(shape, idx):
    """Whether torch's ``x[idx] = v`` writes through a view of x it takes first: the index
    holds an int, None, a bool or a slice that is not the whole dim (the basic part torch
    applies as a view before its copy or index_put)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    dims = len(shape) - sum(1 for i in items if i is not None and i is not Ellipsis and
                            not isinstance(i, bool))
    dim = 0
    for item in items:
        if item is Ellipsis:
            dim += max(dims, 0)
        elif item is None or isinstance(item, (bool, np.bool_)) or \
                isinstance(item, (int, np.integer)):
            return True
        elif isinstance(item, slice):
            if dim < len(shape) and item.indices(shape[dim]) != (0, shape[dim], 1):
                return True
            dim += 1
        else:
            dim += getattr(item, "ndim", 1) if getattr(item, "dtype", None) in (
                bool, np.bool_, dtypes.bool_) else 1
    return False


def _setitem(self, idx, value):
    if idx is False:  # torch writes nothing and checks nothing
        return
    if grad_mode.state.enabled and self._requires_grad and self._tape is None and \
            self._base is None and _takes_a_view(self.shape, idx):
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    if grad_mode.state.enabled and (self._requires_grad or
                                    (isinstance(value, Tensor) and value._requires_grad)):
        return _inplace(self, lambda s: indexing.setitem(s, idx, value))
    indexing.assign(self, idx, value)
    _bump_version(self)


Tensor.__setitem__ = _setitem


# ---- reductions, shapes, indexing, products and the wider torch API: each family's module
# lists the methods it adds (in this order: a later module's method of a name wins)
for _module in (reductions, movement, join, indexing, matmul, math_api, special_api, scan_api,
                linalg_api, shape_api, creation):
    for _name, _fn in _module.TENSOR_METHODS.items():
        setattr(Tensor, _name, _fn)
