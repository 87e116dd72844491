"""The in-place and method forms of the wider torch API (scans, shapes, creation, math),
bound on Tensor after numbagrad/_methods.py; and forward AD's hand-over of an in-place op's
tangent, which wraps _methods' ``_inplace``."""

import inspect

import numpy as np

from . import _methods, creation, dtypes, pointwise_extra, predicates
from .autograd import forward_ad
from .core import grad_mode
from .core.docs import documented, forwarded_args, inplace_doc
from .core.tape import READ_X0
from .mutation import _bump_version
from .ops.elementwise import extra, math_api, pointwise, public, special_api
from .ops.linalg import api, matmul
from .ops.reduce import reductions
from .ops.scan import api as scan_api
from .ops.shape import extra as shape_extra
from .ops.shape import gather, inplace, scatter
from .tensor import Tensor


def _inplace(self, compute):
    """_methods' in-place machinery, looked up at each call (forward AD wraps it below)."""
    return _methods._inplace(self, compute)


# ---- scan: in-place forms ---------------------------------------------------------------------
Tensor.cumsum_ = documented(lambda self, dim, *, dtype=None: _inplace(
    self, lambda s: scan_api.cumsum(s, dim, dtype=dtype)), inplace_doc("cumsum"))
Tensor.cumprod_ = documented(lambda self, dim, *, dtype=None: _inplace(
    self, lambda s: scan_api.cumprod(s, dim, dtype=dtype)), inplace_doc("cumprod"))
# NumPy's axis= / keepdims= for the argmax and argmin above
Tensor.argmax = reductions.numpy_aliases(Tensor.argmax, "argmax")
Tensor.argmin = reductions.numpy_aliases(Tensor.argmin, "argmin")

# ---- shape: in-place forms ----------------------------------------------------------------


def _no_out(name, kw):
    """torch's TypeError for ``out=`` given to an in-place form (which writes into self)."""
    if "out" in kw:
        raise TypeError(f"{name}() got an unexpected keyword argument 'out'")


def _inplace_form(fn):
    name = fn.__name__ + "_"

    def op(self, *args, **kw):
        _no_out(name, kw)
        return _inplace(self, lambda s: fn(s, *args, **kw))
    return documented(op, inplace_doc(fn.__name__, forwards=fn), name)


for _fn in (scatter.scatter, scatter.scatter_add, scatter.scatter_reduce,
            scatter.index_add, scatter.index_copy, scatter.index_fill,
            scatter.masked_scatter, scatter.put, gather.tril,
            gather.triu, shape_extra.index_put):
    setattr(Tensor, _fn.__name__ + "_", _inplace_form(_fn))


def _view_inplace(make_view, name):
    """An in-place view op (t_, squeeze_, ...): the tensor itself becomes the view, on the
    view's node, as torch changes a tensor's own sizes and strides. Its values are unchanged,
    so its version is not bumped (torch's is): a node that saved it still has its array, and
    views taken of it earlier keep their maps (a refresh would read them off the new layout)."""
    def op(self, *args):
        if grad_mode.state.enabled and self._tape is None and self._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        view, fn = make_view(self, *args)
        self._data = view._data
        if self._base is not None:  # a view stays one, its view functions extended
            self._view = ((*self._view[0], fn), self._vc[0])
        if view._tape is not None:
            self._rebase(view._tape, view._node)
            self._requires_grad = True
        return self
    return documented(op, inplace_doc(name) + "\n\n" + forwarded_args(make_view, None),
                      name + "_")


Tensor.squeeze_ = _view_inplace(inplace.squeezed, "squeeze")
Tensor.unsqueeze_ = _view_inplace(inplace.unsqueezed, "unsqueeze")
Tensor.t_ = _view_inplace(inplace.t_view, "t")
Tensor.transpose_ = Tensor.swapaxes_ = Tensor.swapdims_ = \
    _view_inplace(inplace.transposed, "transpose")


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal with ``fill_value`` in place.

    Same as ``torch.Tensor.fill_diagonal_`` (``wrap=True``: a tall matrix's diagonal wraps).
    """
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    shape = self.shape
    if self.ndim == 2:
        rows, cols = shape
        end = rows * cols if wrap and rows > cols + 1 else min(rows, cols) * cols
        flat = np.arange(0, end, cols + 1)
    else:
        step = sum(int(np.prod(shape[k + 1:])) for k in range(self.ndim))
        flat = np.arange(shape[0]) * step
    Tensor.__setitem__(self, np.unravel_index(flat, shape), fill_value)
    return self


Tensor.fill_diagonal_ = _fill_diagonal_

# ---- creation: in-place forms
def _inplace_fill(fill):
    """A random fill (creation.INPLACE_FILLS) run through the in-place machinery."""
    def method(self, *args, **kwargs):
        return _inplace(self, fill(self, *args, **kwargs))
    method.__name__ = fill.__name__
    method.__doc__ = inspect.cleandoc(fill.__doc__) + "\n\n" + forwarded_args(fill, "kwargs")
    return method


for _name, _fill in creation.INPLACE_FILLS.items():
    setattr(Tensor, _name, _inplace_fill(_fill))


def _apply_(self, fn):
    """``fn`` on each element (Python numbers in, a number out), written back in place.

    Args:
        fn: a callable taking one Python number and returning a real number; the results
            are cast to this tensor's dtype. The tensor must not require grad.

    Returns:
        This tensor, changed in place.
    """
    if self._requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    data = self._array()
    values = [fn(v) for v in data.reshape(-1).tolist()]
    for v in values:
        if not isinstance(v, (int, float, bool, np.number, np.bool_)):
            raise TypeError(f"must be real number, not {type(v).__name__}")
    # floats through float64, integers as given: the cast to the tensor's dtype truncates
    new = np.asarray(values, np.float64 if data.dtype.kind == "f" else None)
    data[...] = new.reshape(data.shape).astype(data.dtype)
    _bump_version(self)
    return self


Tensor.apply_ = _apply_

# ---- math: in-place forms --------------------------------------------------------------------
def _old_self(s):
    """``s``, cloned when recording: a derivative reading self (asin's, log2's) then reads its
    old value, as torch's in-place ops save the original self."""
    if s._requires_grad and grad_mode.state.enabled:
        return pointwise.unary("clone", s)
    return s


def _inplace_method(fn, name):
    """``self.<name>_(...)``: ``fn`` computed on ``_old_self(self)``."""
    def compute(s, args, kw):
        return fn(_old_self(s), *args, **kw)

    def op(self, *args, **kw):
        _no_out(name, kw)
        return _inplace(self, lambda s: compute(s, args, kw))
    return documented(op, inplace_doc(name[:-1], forwards=fn), name)


def _derived_inplace_method(fn, op, name):
    """``self.<name>()`` of an op made from its record (ops/elementwise/public.py): ``fn``
    on self, cloned first only where the op's derivative reads its input."""
    reads_input = bool(op.value_reads & READ_X0)
    doc = inplace_doc(name[:-1])
    if op.arity == 2:
        def method(self, other):
            return _inplace(self, lambda s: fn(_old_self(s) if reads_input else s, other))
        doc += ("\n\nArgs:\n    other: the second operand, a tensor broadcastable to this "
                "tensor's shape.\n\nReturns:\n    This tensor, changed in place.")
    else:
        def method(self):
            return _inplace(self, lambda s: fn(_old_self(s) if reads_input else s))
    return documented(method, doc, name)


for _name, (_fn, _op) in public.INPLACE_METHODS.items():
    setattr(Tensor, _name + "_", _derived_inplace_method(_fn, _op, _name + "_"))
_MATH_INPLACE = {
    **{n: math_api.TENSOR_METHODS[n] for n in (
        "ceil", "trunc", "fix", "frac", "round", "square", "sgn", "logit", "nan_to_num",
        "clamp_min", "clamp_max", "fmod", "remainder", "addcmul", "addcdiv", "lerp", "xlogy",
        "floor_divide", "logical_and", "logical_or", "logical_xor", "logical_not",
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "clamp", "clip")},
    **{n: special_api.TENSOR_METHODS[n] for n in ("i0", "sinc")}}
for _name, _fn in _MATH_INPLACE.items():
    setattr(Tensor, _name + "_", _inplace_method(_fn, _name + "_"))


def _float_power_(self, exponent):
    """In-place version of :meth:`~Tensor.float_power`, for a float64 tensor.

    Same as ``torch.Tensor.float_power_``.
    """
    if self.dtype is not dtypes.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.scalar_name} "
                           "but the operation's result requires dtype Double")
    return _inplace(self, lambda s: math_api.float_power(s, exponent))


Tensor.float_power_ = _float_power_

# ---- more pointwise math: methods and in-place forms ---------------------------------------
for _name, _fn in {**extra.TENSOR_METHODS, **pointwise_extra.TENSOR_METHODS,
                   **predicates.TENSOR_METHODS}.items():
    setattr(Tensor, _name, _fn)
Tensor.ger = Tensor.outer  # torch's older name
_MORE_INPLACE = {
    **{n: extra.TENSOR_METHODS[n] for n in (
        "copysign", "ldexp", "nextafter", "gcd", "lcm",
        "bitwise_left_shift", "bitwise_right_shift")},
    **pointwise_extra.TENSOR_METHODS,
    **{n: special_api.TENSOR_METHODS[n] for n in (
        "digamma", "erfinv", "lgamma", "mvlgamma")},
    "polygamma": extra.polygamma_inplace_value}
for _name, _fn in _MORE_INPLACE.items():
    setattr(Tensor, _name + "_", _inplace_method(_fn, _name + "_"))


def _comparison_inplace(name):
    def op(self, other):
        return _inplace(self, lambda s: extra.compare_into(s, name, other))
    return documented(op, inplace_doc(name), name + "_")


for _name in ("eq", "ne", "ge", "gt", "le", "lt"):
    setattr(Tensor, _name + "_", _comparison_inplace(_name))
Tensor.greater_, Tensor.greater_equal_ = Tensor.gt_, Tensor.ge_
Tensor.less_, Tensor.less_equal_, Tensor.not_equal_ = Tensor.lt_, Tensor.le_, Tensor.ne_
Tensor.multiply_, Tensor.subtract_ = Tensor.mul_, Tensor.sub_


def _true_divide_(self, other):
    """In place, ``self / other``: ``div_`` without a rounding mode.

    Same as ``torch.Tensor.true_divide_``.

    Args:
        other: the divisor, a tensor or a number.

    Returns:
        ``self``.
    """
    return self.div_(other)


_true_divide_.__name__ = _true_divide_.__qualname__ = "true_divide_"
Tensor.true_divide_ = _true_divide_


def _divide_(self, value, *, rounding_mode=None):
    """In-place version of :meth:`~Tensor.divide`; ``rounding_mode`` "trunc" or "floor"
    rounds the quotient (no derivative then, as in torch).

    Same as ``torch.Tensor.divide_``.
    """
    if rounding_mode is None:
        return self.div_(value)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    rounded = math_api.trunc if rounding_mode == "trunc" else public.floor
    return _inplace(self, lambda s: rounded(s / value) if s.dtype.is_floating_point else
                    (math_api.floor_divide(s, value) if rounding_mode == "floor" else
                     math_api.trunc(s / value).to(s.dtype)))


Tensor.divide_ = _divide_

# ---- products with an added term: in-place forms --------------------------------------------
def _product_inplace(self, fn, args, kw, mismatch=None):
    """``fn(self, *args, **kw)`` written into self: its result must have self's shape (torch
    does not broadcast self here), else torch's message (``mismatch(self, result)`` or its
    common "Bad in-place call")."""
    def compute(s):
        out = fn(_old_self(s), *args, **kw)  # (the products' rules save self)
        if tuple(out.shape) != tuple(s.shape):
            raise RuntimeError(mismatch(s, *args) if mismatch else
                               f"Bad in-place call: input tensor size {list(s.shape)} and "
                               f"output tensor size {list(out.shape)} should match")
        return out
    return _inplace(self, compute)


def _addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """In-place version of :meth:`~Tensor.addmm`."""
    return _product_inplace(self, matmul.addmm, (mat1, mat2),
                            {"beta": beta, "alpha": alpha})


def _addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In-place version of :meth:`~Tensor.addbmm`."""
    return _product_inplace(self, api.addbmm, (batch1, batch2),
                            {"beta": beta, "alpha": alpha})


def _baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In-place version of :meth:`~Tensor.baddbmm`."""
    return _product_inplace(self, api.baddbmm, (batch1, batch2),
                            {"beta": beta, "alpha": alpha})


def _addmv_(self, mat, vec, *, beta=1, alpha=1):
    """In-place version of :meth:`~Tensor.addmv`."""
    return _product_inplace(self, api.addmv, (mat, vec), {"beta": beta, "alpha": alpha})


def _addr_mismatch(s, vec1, vec2):
    if s.ndim != 2:
        return f"2D tensor expected, got {s.ndim}D tensor for input"
    return (f"size mismatch, input: {list(s.shape)}, v1: {list(vec1.shape)}, "
            f"v2: {list(vec2.shape)}")


def _addr_(self, vec1, vec2, *, beta=1, alpha=1):
    """In-place version of :meth:`~Tensor.addr`."""
    return _product_inplace(self, api.addr, (vec1, vec2), {"beta": beta, "alpha": alpha},
                            _addr_mismatch)


Tensor.addmm_, Tensor.addbmm_, Tensor.baddbmm_ = _addmm_, _addbmm_, _baddbmm_
Tensor.addmv_, Tensor.addr_ = _addmv_, _addr_


def addmv_(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002 - torch's keyword names
    """In-place version of :func:`addmv`, on ``input``.

    Same as ``torch.addmv_``.
    """
    return _addmv_(input, mat, vec, beta=beta, alpha=alpha)


# ---- fwdad: in-place forms
# forward AD: an in-place op's tangent, computed on its out-of-place result, moves to self
_inplace_without_tangents = _methods._inplace


def _inplace_with_tangents(self, compute):
    """The same checks, then the result's tangent handed over to self."""
    if forward_ad._current_level < 0:
        return _inplace_without_tangents(self, compute)
    results = []

    def kept(s):
        results.append(compute(s))
        return results[-1]

    _inplace_without_tangents(self, kept)
    forward_ad.take_tangent(self, results[-1] if results else None)
    return self


_methods._inplace = _inplace_with_tangents
