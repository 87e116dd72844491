"""Front ends of the elementwise ops: type promotion, broadcasting errors, then record()."""

import numpy as np

from ... import dtypes
from ...core import tape as tape_mod
from ...core import trace_guards
from ...engine import kernel_tables  # noqa: F401 - elementwise declares the records used below
from ...engine import record as record_module
from ...engine.record import (
    _F64_SCALAR,
    broadcast_shapes,
    record,
    record_0d,
    record_array,
    shape_error_broadcast,
)
from ...engine.registry import BY_NAME
from ...tensor import Tensor, _make  # noqa: F401
from ..out_api import into
from . import basic  # noqa: F401 - elementwise declares the records used below
from .forward import _F32, _F64, eager_forward, torch_layout

# ops that keep integer dtypes (the rest compute in the default float dtype)
_INT_OK = {"neg", "abs", "sign", "relu", "clamp", "clone", "masked_fill", "maximum", "minimum",
           "add", "sub", "mul", "where", "pow_scalar", "pow", "floor", "round"}


def to_dtype(t, dt):
    """Cast a tensor, recording ToCopyBackward0 when it carries a gradient."""
    if t.dtype is dt:
        return t
    out = torch_layout(np.asarray(t._data).astype(dt.np), (t._data,))
    # (forward AD's hook sees every float cast: a tangent goes through it)
    if (t._requires_grad or record_module.forward_hook is not None) and dt.is_floating_point:
        return record(BY_NAME["to_copy"], out, (t,))
    tape = tape_mod.traced_tape()
    if tape is not None:
        tape.traced_casts.append(t)
        if t._requires_grad:  # a traced value cast to integers leaves the graph: a guard
            return trace_guards.derive(_make(out), lambda v: v.astype(dt.np), (t,),
                                       f"a cast to {dt.name}")
    return _make(out)


def _operand(x, dt):
    """A Tensor operand in dtype ``dt``; Python numbers become constants."""
    if isinstance(x, Tensor):
        return to_dtype(x, dt)
    return _make(np.asarray(x, dt.np))


def _check_number(x, opname):
    if not isinstance(x, (int, float, bool, np.number, np.bool_)):
        raise TypeError(f"{opname}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(x).__name__}")




def _bool_unary(name, x):
    """torch's answers for -, abs, sign, floor and round of a bool tensor (NumPy's neg
    raises TypeError)."""
    if name == "neg":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    if name in ("abs", "floor", "round"):
        kernel = "abs_cpu" if name == "abs" else name + "_vml_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    return _make(x._array().copy())  # sign


def unary(name, x, *fattrs):
    """Call the elementwise op ``name`` of the op table on ``x`` (with its float attributes
    ``fattrs``), recorded as that op's node.

    Args:
        name: the op's name in the table (``defop``'s first argument).
        x: the input tensor.
        *fattrs: the op's float attributes, in its formula's order.

    Returns:
        The op's result, a new tensor recorded on ``x``'s graph when ``x`` requires grad.
    """
    op = BY_NAME[name]
    d = x._data
    dt = d.dtype
    if dt is _F64 or dt is _F32:  # the common case, in fewer steps
        if dt is _F64 and d.shape == ():  # a scalar graph's op
            return record_0d(op, eager_forward(op, d, *fattrs), x, None, fattrs)
        return record_array(op, eager_forward(op, d, *fattrs), x, None, (), fattrs)
    dt = x.dtype
    if dt is dtypes.bool_ and name in ("neg", "abs", "sign", "floor", "round"):
        return _bool_unary(name, x)
    if not dt.is_floating_point and name not in _INT_OK:
        x = to_dtype(x, dtypes.get_default_dtype())
    if dt is dtypes.float16 and op.half is not None:
        raise NotImplementedError(f'"{op.half}" not implemented for \'Half\'')
    out = record(op, eager_forward(op, x._data, *fattrs), (x,), (), fattrs)
    if dt is dtypes.float16 and op.half_backward is not None and out._requires_grad:
        out.register_hook(_refuses_half(op.half_backward))  # torch's backward refuses it
    return out


def _refuses_half(kernel):
    def refuse(grad):
        raise NotImplementedError(f'"{kernel}" not implemented for \'Half\'')
    return refuse


def binary(name, a, b):
    """Call the elementwise two-operand op ``name`` of the op table on ``a`` and ``b``,
    broadcast and promoted as torch does, recorded as that op's node.

    Args:
        name: the op's name in the table (``defop``'s first argument).
        a: a tensor.
        b: a tensor or a Python number.

    Returns:
        The op's result, a new tensor recorded when either operand requires grad.
    """
    da = a._data
    if type(da) is _F64_SCALAR or (da.dtype is _F64 and da.shape == ()):
        ops = _SCALAR_GRAPH_OPS.get(name)
        if ops is not None:  # a scalar graph's op
            if type(b) is Tensor:
                db = b._data
                if type(db) is _F64_SCALAR or (db.dtype is _F64 and db.shape == ()):
                    return record_0d(ops[0], ops[0].forward(da, db), a, b)
            elif type(b) is float or type(b) is int:
                return record_0d(ops[1], ops[1].forward(da, b), a, None, (float(b),))
    op = BY_NAME[name]
    if isinstance(b, Tensor):  # two float tensors of one dtype, the common case, in fewer steps
        db = b._data
        dt = da.dtype
        if dt is db.dtype and (dt is _F32 or dt is _F64) and op.rounds_once:
            try:
                out = op.forward(da, db)
            except ValueError:
                err = shape_error_broadcast(np.shape(da), np.shape(db))
                if err is None:
                    raise
                raise err from None
            return record_array(op, torch_layout(out, (da, db)), a, b)
    if name == "sub" and a.dtype is dtypes.bool_ and isinstance(b, Tensor) and \
            b.dtype is dtypes.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if isinstance(b, Tensor):
        da = a._data.dtype
        if da == b._data.dtype and (da.kind == "f" or name in _INT_OK):
            ta, tb = a, b  # the common case: no promotion
        else:
            dt = dtypes.result_type((a.dtype, a.ndim), (b.dtype, b.ndim))
            ta, tb = _promoted(name, dt, a, b)
    elif a._data.dtype.kind == "f" and type(b) in (float, int) and name in _WITH_SCALAR:
        # a Python number never promotes a float tensor; it is recorded as an attribute
        op = BY_NAME[name + "_scalar"]
        out = op.forward(a._data, b)
        if type(out) is np.ndarray:
            out = torch_layout(out, (a._data,))
        return record_array(op, out, a, None, (), (float(b),))
    else:
        _check_number(b, name)
        dt = dtypes.result_type((a.dtype, a.ndim), (dtypes.scalar_dtype(b), None))
        ta, tb = _promoted(name, dt, a, b)
    try:
        out = eager_forward(op, ta._data, tb._data)
    except ValueError:
        err = shape_error_broadcast(np.shape(ta._data), np.shape(tb._data))
        if err is None:
            raise
        raise err from None
    return record(op, out, (ta, tb))


_WITH_SCALAR = {"add", "sub", "mul", "div"}
# name -> (op on two tensors, op on a tensor and a Python number)
_SCALAR_GRAPH_OPS = {name: (BY_NAME[name], BY_NAME[name + "_scalar"]) for name in _WITH_SCALAR}
# name -> (f(a, b) on two tensors, g(a, number)): the arithmetic operators' scalar graph
# recorders (record.scalar_graph_op), for Tensor's operators to try first
SCALAR_GRAPH_ARITHMETIC = {
    name: (record_module.scalar_graph_op(ops[0], ops[0].forward)[0],
           record_module.scalar_graph_op(ops[1], ops[1].forward)[2])
    for name, ops in _SCALAR_GRAPH_OPS.items()}


# ``number - x``'s recorder, tried first by Tensor.__rsub__ as the above by the operators
RSUB_NUMBER = record_module.scalar_graph_op(BY_NAME["rsub_scalar"],
                                            BY_NAME["rsub_scalar"].forward)[2]


def _promoted(name, dt, a, b):
    if not dt.is_floating_point and name not in _INT_OK:
        dt = dtypes.get_default_dtype()  # true division and friends of integers give floats
    return _operand(a, dt), _operand(b, dt)


def rbinary(name, a, b):
    """``b op a`` for a Python number ``b``, recorded as torch records it."""
    _check_number(b, name)
    if name == "sub":
        if a._data.dtype.kind != "f" and not isinstance(b, float):
            return binary("add", unary("neg", a), b)  # integers: never recorded
        if a._data.dtype.kind != "f":
            a = to_dtype(a, dtypes.get_default_dtype())
        return unary("rsub_scalar", a, float(b))
    if name == "div":  # torch: 2 / x is recorded as a reciprocal times 2 (MulBackward0)
        return binary("mul", pow_scalar(a, -1.0) if a.dtype.is_floating_point else
                      pow_scalar(to_dtype(a, dtypes.get_default_dtype()), -1.0), b)
    if name == "pow":
        return rpow_scalar(a, b)
    return binary(name, a, b)


def pow_scalar(x, e):
    d = x._data
    if d.dtype.kind != "f" and not x.dtype.is_floating_point:
        if type(e) is int and e < 0:  # torch's type, not NumPy's
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if isinstance(e, float):
            x = to_dtype(x, dtypes.get_default_dtype())
            d = x._data
    # the kernel's pw squares for 2: NumPy's product is the same bits, without a kernel call
    if isinstance(e, (int, float)) and e == 2 and d.dtype.kind == "f":
        out = d * d
        if d.ndim > 1 and not d.flags.c_contiguous:  # (else NumPy's layout is torch's)
            out = torch_layout(out, (d,))
        return record_array(_POW_SCALAR, out, x, None, (), (2.0,))
    return unary("pow_scalar", x, float(e))


_POW_SCALAR = BY_NAME["pow_scalar"]


def rpow_scalar(x, base):
    if not x.dtype.is_floating_point:
        x = to_dtype(x, dtypes.get_default_dtype())
    return unary("rpow_scalar", x, float(base))


def pow(input, exponent):  # noqa: A001 - torch's name
    """Element-wise power ``x ** e``; either may be a Python number.

    Same as ``torch.pow``.
    """
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        return pow_scalar(input, exponent)
    if not isinstance(input, Tensor):
        return rpow_scalar(exponent, input)
    return binary("pow", input, exponent)


def where(condition, x=None, y=None):
    """Elements of ``x`` where ``condition`` is true, of ``y`` elsewhere, broadcast.

    Same as ``torch.where``; ``where(condition)`` is ``nonzero(condition, as_tuple=True)``.
    """
    if x is None and y is None:  # torch.where(condition): the indices of the nonzeros
        data = np.atleast_1d(np.asarray(condition._data))
        return tuple(_make(i.astype(np.int64)) for i in np.nonzero(data))
    if not isinstance(condition, Tensor) or x is None or y is None:
        got = ", ".join(type(a).__name__ for a in (condition, x, y) if a is not None)
        raise TypeError(f"where() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n * (Tensor condition)\n * (Tensor condition, "
                        "Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor "
                        "condition, Number self, Tensor other)\n * (Tensor condition, Tensor "
                        "input, Number other)\n * (Tensor condition, Number self, Number other)\n")
    if condition.dtype is not dtypes.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype.scalar_name}")
    cond = np.asarray(condition._data)
    # two numbers too: torch.where(c, 1, 0) is int64, (c, 1, 0.5) the default float
    dt = dtypes.result_type(*[(t.dtype, t.ndim) if isinstance(t, Tensor) else
                              (dtypes.scalar_dtype(t), None) for t in (x, y)])
    tx, ty = _operand(x, dt), _operand(y, dt)
    shape = broadcast_shapes(cond.shape, np.shape(tx._data), np.shape(ty._data))
    out = torch_layout(np.where(cond, tx._data, ty._data), (cond, tx._data, ty._data))
    mask = np.broadcast_to(cond, shape).reshape(-1).astype(np.int64)
    return record(BY_NAME["where"], out, (tx, ty), mask)


def masked_fill(input, mask, value):
    """A copy of ``x`` with ``value`` (a number or a 0-d tensor) where ``mask`` is true.

    Same as ``torch.masked_fill``.
    """
    m = np.asarray(mask._data if isinstance(mask, Tensor) else mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                           f"dtype {dtypes.from_numpy_dtype(m.dtype).c_name}")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if not isinstance(value, (Tensor, int, float, np.number, np.bool_)):
        raise TypeError(f"masked_fill() received an invalid combination of arguments - got "
                        f"(Tensor, {type(value).__name__}), but expected one of:\n"
                        " * (Tensor mask, Tensor value)\n * (Tensor mask, Number value)\n")
    # _item: the value's own node carries it in a compiled replay (no guard needed)
    v = value._item() if isinstance(value, Tensor) else value
    _check_fits(v, input.dtype)
    shape = broadcast_shapes(m.shape, input.shape)
    if shape != tuple(input.shape):
        # torch broadcasts self against the mask: the gradient sums back over the new dims
        input = record(BY_NAME["expand"], np.broadcast_to(input._data, shape), (input,))
    # torch fills a contiguous copy of self, whatever self's layout
    out = np.where(m, np.asarray(v, input._data.dtype), input._data)
    out = np.ascontiguousarray(out) if out.ndim else out[()]
    mask_flat = np.broadcast_to(m, shape).reshape(-1).astype(np.int64)
    if isinstance(value, Tensor):  # a tensor value gets the masked positions' gradient
        return record(BY_NAME["masked_fill_tensor"], out, (input, to_dtype(value, input.dtype)),
                      mask_flat)
    return record(BY_NAME["masked_fill"], out, (input,), mask_flat, (float(v),))


# the C++ type torch's overflow check names
_FILL_TYPE_NAMES = {"int64": "int64_t", "int32": "int", "float32": "float", "float64": "double"}


def _check_fits(v, dt):
    """torch's check of a fill value: it must be representable in ``dt`` (NaN and inf only
    in a float, no float32 beyond its range); bools take anything."""
    if dt is dtypes.bool_:
        return
    if dt.is_floating_point:
        fits = not np.isfinite(v) or np.abs(v) <= np.finfo(dt.np).max  # (abs: the op here)
    else:
        info = np.iinfo(dt.np)
        fits = bool(np.isfinite(v)) and info.min <= v <= info.max
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_FILL_TYPE_NAMES[dt.name]} "
                           "without overflow")


def clamp(x, min=None, max=None):  # noqa: A002 - torch's names
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    for bound in (min, max):
        if isinstance(bound, Tensor):  # torch's broadcast error, not float()'s ValueError
            err = shape_error_broadcast(tuple(x.shape), tuple(bound.shape))
            if err is not None:
                raise err
    lo = -np.inf if min is None else float(min)
    hi = np.inf if max is None else float(max)
    if not x.dtype.is_floating_point and (isinstance(min, float) or isinstance(max, float)):
        x = to_dtype(x, dtypes.get_default_dtype())
    return unary("clamp", x, lo, hi)


def leaky_relu(x, negative_slope=0.01):
    """Element-wise leaky ReLU: ``x`` where positive, ``negative_slope * x`` elsewhere.

    Same as ``torch.nn.functional.leaky_relu``, without ``inplace``.
    """
    return unary("leaky_relu", x, float(negative_slope))


def gelu(x, approximate="none"):
    """Element-wise GELU, ``x * Phi(x)`` (``approximate="tanh"``: its tanh approximation).

    Same as ``torch.nn.functional.gelu``.

    Args:
        x: the input tensor.
        approximate: ``"none"`` (the exact form, with erf) or ``"tanh"``.

    Returns:
        A new tensor of ``x``'s shape.
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return unary("gelu", x, 1.0 if approximate == "tanh" else 0.0)


def softplus(x, beta=1.0, threshold=20.0):
    """Element-wise softplus, ``log(1 + exp(beta * x)) / beta``; ``x`` beyond ``threshold``.

    Same as ``torch.nn.functional.softplus``.

    Args:
        x: the input tensor.
        beta: the scale of ``x`` inside the exponential (default 1).
        threshold: where ``beta * x`` exceeds it, the result is ``x`` itself (default 20).

    Returns:
        A new tensor of ``x``'s shape.
    """
    return unary("softplus", x, float(beta), float(threshold))


def _binary_fn(name):
    def fn(input, other, *, out=None):
        if out is not None:
            return into(name, out, fn, input, other)
        if not isinstance(input, Tensor):
            return (rbinary(name, other, input) if name in ("sub", "div")
                    else binary(name, other, input))
        return binary(name, input, other)
    fn.__name__ = name
    fn.__doc__ = BY_NAME[name].docstring(note=_NOTES.get(name))
    return fn


# where numbagrad's function takes fewer arguments than torch's
_NOTES = {"div": "No ``rounding_mode``: ``trunc(input / other)`` rounds the quotient toward "
                 "zero, ``floor(input / other)`` down."}


def _scaled_by_alpha(a, b, alpha):
    """``alpha * b`` for torch.add/sub's ``alpha`` (checked as torch checks it)."""
    ints = [not t.dtype.is_floating_point if isinstance(t, Tensor) else
            isinstance(t, (int, np.integer)) for t in (a, b)]
    if all(ints) and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if isinstance(alpha, (bool, np.bool_)) and not all(
            isinstance(t, Tensor) and t.dtype is dtypes.bool_ for t in (a, b)):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    return binary("mul", b, alpha) if isinstance(b, Tensor) else b * alpha


def _alpha_fn(name):
    def fn(input, other, *, alpha=1, out=None):
        if out is not None:
            return into(name, out, fn, input, other, alpha=alpha)
        if not (type(alpha) is int and alpha == 1):
            other = _scaled_by_alpha(input, other, alpha)
        if not isinstance(input, Tensor):
            return rbinary(name, other, input) if name == "sub" else binary(name, other, input)
        return binary(name, input, other)
    fn.__name__ = name
    fn.__doc__ = BY_NAME[name].docstring()
    return fn


add = _alpha_fn("add")
sub = _alpha_fn("sub")
mul = _binary_fn("mul")
div = _binary_fn("div")
maximum = _binary_fn("maximum")
minimum = _binary_fn("minimum")
subtract, multiply, divide, true_divide = sub, mul, div, div
clip = clamp


# ---- float binary table ops on promoted operands (math_api's, public.py's) ---------------
def not_implemented_for(kernel, t):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{t.dtype.scalar_name}'")


def _promote(a, b):
    """torch's promoted dtype of ``a`` and ``b`` (a Tensor, or a Python number: weak); a
    shape error for Tensors that do not broadcast."""
    kind_b = (b.dtype, b.ndim) if isinstance(b, Tensor) else (dtypes.scalar_dtype(b), None)
    dt = dtypes.result_type((a.dtype, a.ndim), kind_b)
    if isinstance(b, Tensor):
        err = shape_error_broadcast(tuple(a.shape), tuple(b.shape))
        if err is not None:
            raise err
    return dt


def binary_op(name, a, b, fname, fattrs=(), layout=None):
    """Record the float binary table op ``name`` on Tensors ``a`` and ``b`` (promoted; integer
    operands compute in the default dtype). ``layout``: the Tensors torch's op reads, whose
    memory order decides the result's (where ``b`` is computed from several)."""
    dt = _promote(a, b)
    if not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    ta, tb = _operand(a, dt), _operand(b, dt)
    out = eager_forward(BY_NAME[name], ta._data, tb._data, *fattrs)
    if layout is not None and type(out) is np.ndarray:
        out = torch_layout(out, _arrays(layout))
    return record(BY_NAME[name], out, (ta, tb), (), fattrs)


def _arrays(tensors):
    return [t._data for t in tensors if isinstance(t, Tensor)]

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"pow": "one", "where": "one"}
