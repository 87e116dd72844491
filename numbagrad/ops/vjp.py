"""Differentiable derivatives (create_graph=True): what each op's backward is, written with
numbagrad ops so that the backward itself is recorded and can be differentiated again.

Elementwise ops need nothing new: their scalar derivative formulas (the ones the sweep's
@njit kernels are generated from) are compiled a second time, here, into functions over
Tensors. ``x if c else y`` becomes ``where(c, x, y)``, comparisons and ``and``/``or`` are
evaluated on the values (they select, they are not differentiated), and the helper names
(``pw``, ``sgn``, ``sigmoid``, ``gelu_grad``...) map to compositions of numbagrad ops.
Structured ops attach their rule with ``@vjp_rule`` next to their record.
"""

import ast
import math
import operator

import numpy as np

from ..tensor import Tensor, _make


class VjpContext:
    """What a rule sees of one node: its inputs and output as Tensors (rebuilt lazily from
    the tape, connected to the graph), attributes, shapes and which inputs need a gradient."""

    __slots__ = ("op", "inputs", "output", "iat", "fat", "shape", "shapes", "needs", "dtypes")

    def __init__(self, op, inputs, output, iat, fat, shape, shapes, needs, dtypes):
        self.op = op
        self.inputs = inputs  # callables: inputs[k]() -> Tensor
        self.output = output  # callable: output() -> Tensor
        self.iat = iat
        self.fat = fat
        self.shape = shape
        self.shapes = shapes
        self.needs = needs
        self.dtypes = dtypes

    def x(self, k):
        return self.inputs[k]()

    @property
    def y(self):
        return self.output()


# ---- small helpers shared by the rules ------------------------------------------------------
def const(value, dtype):
    """A constant Tensor (no gradient) of NumPy ``value`` in ``dtype``."""
    return _make(np.asarray(value, dtype))


def unbroadcast(t, shape):
    """Sum ``t`` down to ``shape`` (the adjoint of broadcasting ``shape`` to ``t.shape``)."""
    from .reduce import sum as _sum
    from .shape import reshape
    shape = tuple(shape)
    if t._data.shape == shape:
        return t
    lead = t.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and t.shape[lead + i] != 1)
    if dims:
        t = _sum(t, dim=dims, keepdim=True)
    return reshape(t, shape)


def unbroadcast_array(a, shape):
    """NumPy twin of ``unbroadcast``: sum array ``a`` down to ``shape``."""
    shape = tuple(shape)
    lead = a.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and a.shape[lead + i] != 1)
    return a.sum(axis=dims, keepdims=True).reshape(shape) if dims else a.reshape(shape)


def expand_kept(g, kept, shape):
    """A reduction's upstream gradient ``g`` (any keepdim) broadcast back over ``shape``:
    ``kept`` is the input's shape with the reduced dims as 1."""
    from .shape import expand, reshape
    return expand(reshape(g, tuple(kept)), *shape) if shape else reshape(g, ())


def reduced_dims(kept, shape):
    return tuple(i for i, (k, s) in enumerate(zip(kept, shape)) if k == 1 and s != 1)


# ---- elementwise formulas as Tensor functions ------------------------------------------------
def _data(x):
    return x._data if isinstance(x, Tensor) else x


def _cmp(name, left, right):
    return getattr(operator, name)(_data(left), _data(right))


def _and(*values):
    out = values[0]
    for v in values[1:]:
        out = np.logical_and(out, v)
    return out


def _or(*values):
    out = values[0]
    for v in values[1:]:
        out = np.logical_or(out, v)
    return out


def _where(cond, x, y):
    from .pointwise import where
    if isinstance(cond, (bool, np.bool_)):  # decided by attributes: no tensor op at all
        return x if cond else y
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        return np.where(cond, x, y)
    return where(_make(np.asarray(cond)), x, y)


def _unary(name):
    def fn(x):
        if isinstance(x, Tensor):
            from . import pointwise
            return getattr(pointwise, name)(x)
        return getattr(math, name)(x)
    return fn


def _pw(x, e):
    from .pointwise import pow as _pow
    if not isinstance(x, Tensor) and not isinstance(e, Tensor):
        return x ** e
    if not isinstance(e, Tensor) and e == 1.0:  # x**2's derivative: no node for x**1
        return x
    return _pow(x, e)


def _sgn(x):
    from .pointwise import sign
    return sign(x) if isinstance(x, Tensor) else float(np.sign(x))


def _sigmoid(x):
    from .pointwise import sigmoid
    return sigmoid(x)


def _silu_grad(a):
    s = _sigmoid(a)
    return s * (1.0 + a * (1.0 - s))


def _gelu_grad(a, approx):
    from .pointwise import erf, exp, tanh
    if approx != 0.0:
        k = math.sqrt(2.0 / math.pi)
        t = tanh(k * (a + 0.044715 * a * a * a))
        return 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * a * a)
    cdf = 0.5 * (1.0 + erf(a * (1.0 / math.sqrt(2.0))))
    return cdf + a * exp(-0.5 * a * a) * (1.0 / math.sqrt(2.0 * math.pi))


def _mish_grad(a):
    from .pointwise import softplus, tanh
    t = tanh(softplus(a))
    return t + a * _sigmoid(a) * (1.0 - t * t)


_NAMES = {"_cmp": _cmp, "_and": _and, "_or": _or, "_where": _where, "pw": _pw, "sgn": _sgn,
          "mish_grad": _mish_grad, "sigmoid": _sigmoid, "silu_grad": _silu_grad,
          "gelu_grad": _gelu_grad,
          **{n: _unary(n) for n in ("exp", "log", "cos", "sin", "sqrt", "tanh", "erf")}}
_CMP = {ast.Gt: "gt", ast.GtE: "ge", ast.Lt: "lt", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}


class _ToTensorOps(ast.NodeTransformer):
    """Rewrite a scalar formula so it evaluates elementwise on Tensors."""

    def visit_IfExp(self, node):  # noqa: N802 - ast's naming
        self.generic_visit(node)
        return ast.Call(ast.Name("_where", ast.Load()), [node.test, node.body, node.orelse], [])

    def visit_BoolOp(self, node):  # noqa: N802
        self.generic_visit(node)
        fn = "_and" if isinstance(node.op, ast.And) else "_or"
        return ast.Call(ast.Name(fn, ast.Load()), node.values, [])

    def visit_Compare(self, node):  # noqa: N802
        self.generic_visit(node)
        if len(node.ops) != 1:
            raise ValueError("chained comparisons are not supported in derivative formulas")
        return ast.Call(ast.Name("_cmp", ast.Load()),
                        [ast.Constant(_CMP[type(node.ops[0])]), node.left, node.comparators[0]],
                        [])


_compiled = {}


def formula_function(formula):
    """``formula`` (a table derivative) as ``f(g, a, b, y, f0, f1, m)`` over Tensors."""
    fn = _compiled.get(formula)
    if fn is None:
        tree = ast.parse(formula, mode="eval")
        body = ast.fix_missing_locations(_ToTensorOps().visit(tree)).body
        # a real function (not eval per call): the formula is its return expression
        fn_def = ast.parse("def derivative(g, a, b, y, f0, f1, m):\n    return 0")
        fn_def.body[0].body[0].value = body
        code = compile(ast.fix_missing_locations(fn_def), f"<derivative {formula!r}>", "exec")
        namespace = dict(_NAMES)
        exec(code, namespace)  # noqa: S102 - formulas come from the op table
        fn = _compiled[formula] = namespace["derivative"]
    return fn


def elementwise_vjp(ctx, g):
    """The differentiable derivative of an elementwise op, from its table formulas."""
    from .. import dtypes as _dtypes
    from .pointwise import to_dtype
    op = ctx.op
    reads = set(op.reads())
    a = ctx.x(0) if "x0" in reads else None
    b = ctx.x(1) if "x1" in reads else None
    y = ctx.y if "y" in reads else None
    f0 = ctx.fat[0] if len(ctx.fat) > 0 else None
    f1 = ctx.fat[1] if len(ctx.fat) > 1 else None
    m = np.asarray(ctx.iat, bool).reshape(ctx.shape) if len(ctx.iat) else None
    out = []
    for k, formula in enumerate(op.grads):
        if not ctx.needs[k] or formula is None:
            out.append(None)
            continue
        r = formula_function(formula)(g, a, b, y, f0, f1, m)
        dt = _dtypes.from_numpy_dtype(ctx.dtypes[k])
        if not isinstance(r, Tensor):  # a constant derivative (sign: 0)
            r = const(np.broadcast_to(np.asarray(r, dt.np), ctx.shape), dt.np)
        r = unbroadcast(r, ctx.shapes[k])
        out.append(to_dtype(r, dt))
    return out
