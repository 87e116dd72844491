"""Differentiable derivatives (create_graph=True): what each op's backward is, written with
numbagrad ops so that the backward itself is recorded and can be differentiated again.

Elementwise ops need nothing new: their scalar derivative formulas (the ones the sweep's
@njit kernels are generated from) are compiled a second time, here, into functions over
Tensors. ``x if c else y`` becomes ``where(c, x, y)``, comparisons and ``and``/``or`` are
evaluated on the values (they select, they are not differentiated), and the helper names
(``pw``, ``sgn``, ``sigmoid``, ``gelu_grad``...) map to compositions of numbagrad ops.
The rules of the movement, indexing and reduction ops are here too, above the three
modules: each family's derivatives are written with the others' front ends (expand's
derivative is a sum, a sum's is an expand). The ops above (products, losses, norms,
convolutions) attach their rule with ``@vjp_rule`` next to their record.
"""

import math
import operator

import numpy as np

from .. import dtypes as _dtypes
from ..engine import formula
from ..engine.registry import FORMULA_FUNCTIONS, vjp_rule
from ..tensor import Tensor, _make
from .elementwise import public
from .elementwise.pointwise import pow as _pow
from .elementwise.pointwise import softplus, to_dtype, where
from .elementwise.public import abs as _abs
from .elementwise.public import erf, exp, sigmoid, sign, tanh
from .index.indexing import (
    COPY_SLICES,
    GATHER,
    INDEX,
    INDEX_ADD_FLAT,
    INDEX_SELECT,
    gather_flat,
    index_add_flat,
)
from .reduce.reductions import (
    AMAX,
    AMIN,
    LOG_SOFTMAX,
    LOGSUMEXP,
    MAX_ALL,
    MAX_DIM,
    MEAN,
    MEAN_DIM,
    MIN_ALL,
    MIN_DIM,
    NORM,
    PROD,
    PROD_DIM,
    SOFTMAX,
    STD,
    SUM,
    SUM_DIM,
    VAR,
)
from .reduce.reductions import mean as _mean
from .reduce.reductions import prod as _prod
from .reduce.reductions import sum as _sum
from .shape.join import CAT, REPEAT, SPLIT, SPLIT_SIZES, STACK, UNBIND, unbind
from .shape.movement import (
    ALIAS,
    AS_STRIDED,
    EXPAND,
    PERMUTE,
    SELECT,
    SLICE,
    SQUEEZE,
    SQUEEZE_DIM,
    SQUEEZE_DIMS,
    TRANSPOSE,
    UNSAFE_VIEW,
    UNSQUEEZE,
    VIEW,
    T,
    expand,
    narrow,
    permute,
    reshape,
    unsqueeze,
)


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
    """Sum ``t`` down to ``shape`` (the adjoint of broadcasting ``shape`` to ``t.shape``).

    Args:
        t: a tensor (a gradient of the broadcast shape).
        shape: a shape that broadcasts to ``t.shape``.

    Returns:
        A tensor of ``shape``; ``t`` itself when its shape already is ``shape``.
    """
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
    ``kept`` is the input's shape with the reduced dims as 1.

    Args:
        g: the reduction's output gradient, with or without the reduced dims.
        kept: the input's shape with the reduced dims as 1.
        shape: the input's shape.

    Returns:
        A tensor of ``shape`` (an expanded view).
    """
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
    if isinstance(cond, (bool, np.bool_)):  # decided by attributes: no tensor op at all
        return x if cond else y
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        return np.where(cond, x, y)
    return where(_make(np.asarray(cond)), x, y)


def _unary(name):
    def fn(x):
        if isinstance(x, Tensor):
            return getattr(public, name)(x)
        try:
            return getattr(math, name)(x)
        except (ValueError, OverflowError):  # log(0.) is -inf, as in the kernels: no error
            with np.errstate(all="ignore"):
                return float(getattr(np, name)(x))
    return fn


def _pw(x, e):
    if not isinstance(x, Tensor) and not isinstance(e, Tensor):
        return x ** e
    if not isinstance(e, Tensor) and e == 1.0:  # x**2's derivative: no node for x**1
        return x
    return _pow(x, e)


def _sgn(x):
    return sign(x) if isinstance(x, Tensor) else (float(np.sign(x)) if x == x else 0.0)


def _sigmoid(x):
    return sigmoid(x)


def _silu_grad(a):
    s = _sigmoid(a)
    return s * (1.0 + a * (1.0 - s))


def _gelu_grad(a, approx):
    if approx != 0.0:
        k = math.sqrt(2.0 / math.pi)
        t = tanh(k * (a + 0.044715 * a * a * a))
        return 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * a * a)
    cdf = 0.5 * (1.0 + erf(a * (1.0 / math.sqrt(2.0))))
    return cdf + a * exp(-0.5 * a * a) * (1.0 / math.sqrt(2.0 * math.pi))


def _mish_grad(a):
    t = tanh(softplus(a))
    return t + a * _sigmoid(a) * (1.0 - t * t)


_NAMES = {"_cmp": _cmp, "_and": _and, "_or": _or, "_where": _where, "pw": _pw, "sgn": _sgn,
          "mish_grad": _mish_grad, "sigmoid": _sigmoid, "silu_grad": _silu_grad,
          "gelu_grad": _gelu_grad,
          **{n: _unary(n) for n in ("exp", "log", "cos", "sin", "sqrt", "tanh", "erf")}}
_compiled = {}


def formula_function(text):
    """``text`` (a table derivative) as ``f(g, a, b, y, f0, f1, m)`` over Tensors."""
    fn = _compiled.get(text)
    if fn is None:
        fn = _compiled[text] = formula.elementwise_function(
            text, ("g", "a", "b", "y", "f0", "f1", "m"), {**_NAMES, **FORMULA_FUNCTIONS})
    return fn


def elementwise_vjp(ctx, g):
    """The differentiable derivative of an elementwise op, from its table formulas."""
    op = ctx.op
    reads = set(op.reads())
    a = ctx.x(0) if "x0" in reads else None
    b = ctx.x(1) if "x1" in reads else None
    y = ctx.y if "y" in reads else None
    f0 = ctx.fat[0] if len(ctx.fat) > 0 else None
    f1 = ctx.fat[1] if len(ctx.fat) > 1 else None
    m = np.asarray(ctx.iat, bool).reshape(ctx.shape) if len(ctx.iat) else None
    out = []
    for k, grad in enumerate(op.grads):
        if not ctx.needs[k] or grad is None:
            out.append(None)
            continue
        r = formula_function(grad)(g, a, b, y, f0, f1, m)
        dt = _dtypes.from_numpy_dtype(ctx.dtypes[k])
        if not isinstance(r, Tensor):  # a constant derivative (sign: 0)
            r = const(np.broadcast_to(np.asarray(r, dt.np), ctx.shape), dt.np)
        r = unbroadcast(r, ctx.shapes[k])
        out.append(to_dtype(r, dt))
    return out


# ---- movement ops (ops/shape/movement.py) --------------------------------------------------------
@vjp_rule(VIEW, UNSAFE_VIEW, ALIAS, SQUEEZE, SQUEEZE_DIM, SQUEEZE_DIMS)
def _reshape_vjp(ctx, g):
    return [reshape(g, ctx.shapes[0])]


def _view_positions(ctx):
    """The flat input position of each element of a view: offset + coord . strides."""
    offset, strides = int(ctx.iat[0]), [int(s) for s in ctx.iat[1:]]
    positions = np.full(ctx.shape, offset, np.int64)
    for d, st in enumerate(strides):
        shape = [1] * len(ctx.shape)
        shape[d] = ctx.shape[d]
        positions = positions + np.arange(ctx.shape[d], dtype=np.int64).reshape(shape) * st
    return positions


@vjp_rule(UNSQUEEZE, PERMUTE, TRANSPOSE, T, SELECT, SLICE, SPLIT, SPLIT_SIZES, UNBIND)
def _view_vjp(ctx, g):
    return [index_add_flat(g, _view_positions(ctx), ctx.shapes[0], unique=True)]


@vjp_rule(AS_STRIDED)
def _as_strided_vjp(ctx, g):
    # (an expanded view repeats elements: their gradients add up)
    return [index_add_flat(g, _view_positions(ctx), ctx.shapes[0])]


@vjp_rule(EXPAND)
def _expand_vjp(ctx, g):
    return [unbroadcast(g, ctx.shapes[0])]


@vjp_rule(REPEAT)
def _repeat_vjp(ctx, g):
    shape_x = tuple(ctx.shapes[0])
    padded = (1,) * (len(ctx.shape) - len(shape_x)) + shape_x
    reps = tuple(s // p if p else 0 for s, p in zip(ctx.shape, padded))
    positions = np.tile(np.arange(int(np.prod(shape_x)), dtype=np.int64).reshape(padded), reps)
    return [index_add_flat(g, positions, shape_x)]


@vjp_rule(CAT)
def _cat_vjp(ctx, g):
    d = int(ctx.iat[0])
    # (a skipped legacy empty input, shape (0,), gets an empty gradient)
    return [None if not need else
            const(np.zeros(0), ctx.dtypes[k]) if tuple(ctx.shapes[k]) == (0,) else
            narrow(g, d, int(ctx.iat[1 + k]), ctx.shapes[k][d])
            for k, need in enumerate(ctx.needs)]


@vjp_rule(STACK)
def _stack_vjp(ctx, g):
    d = int(ctx.iat[0])
    parts = unbind(g, d)
    return [parts[k] if need else None for k, need in enumerate(ctx.needs)]


# ---- indexing (ops/index/indexing.py) ------------------------------------------------------------
@vjp_rule(INDEX, GATHER, INDEX_SELECT)
def _gather_vjp(ctx, g):
    return [index_add_flat(g, ctx.iat, ctx.shapes[0])]


@vjp_rule(INDEX_ADD_FLAT)
def _index_add_vjp(ctx, g):
    return [gather_flat(g, ctx.iat, ctx.shapes[0])]


@vjp_rule(COPY_SLICES)
def _copy_slices_vjp(ctx, g):
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


# ---- reductions (ops/reduce/reductions.py); iat of a node is the kept shape ----------------------
def _kept_grad(ctx, g):
    return expand_kept(g, ctx.iat, ctx.shapes[0])


def _kept_value(ctx, t):
    """An output-shaped Tensor (the node's y) reshaped to the kept shape, broadcastable."""
    return reshape(t, tuple(int(s) for s in ctx.iat))


def _dims_of(ctx):
    return reduced_dims(ctx.iat, ctx.shapes[0])


@vjp_rule(SUM, SUM_DIM, MEAN, MEAN_DIM)
def _sum_vjp(ctx, g):
    out = _kept_grad(ctx, g)
    return [out if ctx.fat[0] == 1.0 else out * ctx.fat[0]]


@vjp_rule(MAX_DIM, MIN_DIM)
def _select_vjp(ctx, g):
    return [index_add_flat(g, ctx.iat[:len(ctx.iat) - len(ctx.shapes[0])], ctx.shapes[0])]


@vjp_rule(AMAX, AMIN)
def _extreme_vjp(ctx, g):
    # torch: shared evenly among the ties, NaN over a group whose extremum is NaN (no element
    # equals it: 0 / 0); the selection itself is not differentiated
    x = np.asarray(ctx.x(0)._data)
    y = np.asarray(ctx.y._data).reshape(tuple(ctx.iat))
    mask = (x == y).astype(x.dtype)
    with np.errstate(invalid="ignore"):
        share = mask / np.sum(mask, axis=_dims_of(ctx), keepdims=True)
    return [_kept_grad(ctx, g) * const(share, x.dtype)]


@vjp_rule(MAX_ALL, MIN_ALL)
def _extreme_all_vjp(ctx, g):
    # torch's evenly_distribute_backward: g / count on the elements equal to the result (the
    # NaNs when it is NaN), exactly 0 elsewhere
    x = np.asarray(ctx.x(0)._data)
    y = np.asarray(ctx.y._data)
    mask = np.isnan(x) if np.isnan(y) else x == y
    share = _kept_grad(ctx, g) / float(np.count_nonzero(mask))
    return [where(const(mask, bool), share, 0.0)]


@vjp_rule(LOGSUMEXP)
def _logsumexp_vjp(ctx, g):
    return [_kept_grad(ctx, g) * exp(ctx.x(0) - _kept_value(ctx, ctx.y))]


def _group_size(ctx):
    shape = ctx.shapes[0]
    return int(np.prod([shape[d] for d in _dims_of(ctx)])) if shape else 1


def _centered(x, dims):
    """x minus its group mean, less the mean of that (kernels._group_mean's correction): 0
    for a group of equal values, where one rounded mean leaves an ulp."""
    c = x - _mean(x, dims, keepdim=True)
    shift = _mean(c, dims, keepdim=True)
    # an inf or nan group keeps torch's x - mean
    return c - shift if np.isfinite(np.asarray(shift._data)).all() else c


@vjp_rule(VAR)
def _var_vjp(ctx, g):
    x = ctx.x(0)
    dof = _group_size(ctx) - ctx.fat[0]
    if len(ctx.fat) > 1 and ctx.fat[1] and dof <= 0:  # as kernels.var_bw
        data = np.asarray(x._data, np.float64)
        mean = np.mean(data)
        shift = np.mean(data - mean)
        at_mean = data == (mean + shift if np.isfinite(shift) else mean)
        return [_kept_grad(ctx, g) * const(np.where(at_mean, np.nan, np.inf), x._data.dtype)]
    centered = _centered(x, _dims_of(ctx))
    return [_kept_grad(ctx, g) * centered * (2.0 / dof if dof else np.inf)]


def _masked(ctx, t, y):
    """Zero the gradient where the group's output is 0, as torch does for std and norms."""
    zero = np.asarray(y._data).reshape(tuple(ctx.iat)) == 0
    if not zero.any():
        return t
    return where(const(np.broadcast_to(zero, ctx.shapes[0]), bool), 0.0, t)


@vjp_rule(STD)
def _std_vjp(ctx, g):
    x, y = ctx.x(0), ctx.y
    centered = _centered(x, _dims_of(ctx))
    grad = _kept_grad(ctx, g) * centered / (_kept_value(ctx, y) * (_group_size(ctx) - ctx.fat[0]))
    return [_masked(ctx, grad, y)]


@vjp_rule(NORM)
def _norm_vjp(ctx, g):
    """torch's norm_backward op for op (kernels.norm_bw), so the second derivative is its."""
    p = ctx.fat[0]
    x, y = ctx.x(0), ctx.y
    if p == 0.0:
        return [None]
    gk = _kept_grad(ctx, g)
    if p == 1.0:
        return [sign(x) * gk]
    yk = _kept_value(ctx, y)
    kept = np.asarray(y._data).reshape(tuple(int(s) for s in ctx.iat))
    at_zero = const(kept == 0, bool)
    if p == 2.0:
        return [gk * where(at_zero, 0.0, x / yk)]
    xd = np.asarray(x._data)
    if abs(p) == np.inf:  # shared by the extremes, and NaNs
        top = (np.abs(xd) == kept) | np.isnan(xd)
        count = np.sum(top, axis=_dims_of(ctx), keepdims=True)
        return [sign(x) * ((gk / const(count, xd.dtype)) * const(top, xd.dtype))]
    if p < 1.0:
        scaled = sign(x) * where(const(xd == 0, bool), 0.0, _abs(x) ** (p - 1.0))
        return [scaled * gk * yk ** (1.0 - p)]
    scaled = sign(x) * _abs(x) ** (p - 1.0) if p < 2.0 else x * _abs(x) ** (p - 2.0)
    return [scaled * where(at_zero, 0.0, gk / yk ** (p - 1.0))]


@vjp_rule(PROD, PROD_DIM)
def _prod_vjp(ctx, g):
    x = ctx.x(0)
    gk = _kept_grad(ctx, g)
    if np.all(np.asarray(x._data) != 0):
        return [gk * _kept_value(ctx, ctx.y) / x]
    return [gk * _prod_of_others(x, _dims_of(ctx), const)]


def _prod_of_others(x, dims, const):
    """For every element, the product of the other elements of its group, with zeros (the
    case y / x cannot take): the group is repeated n times with the diagonal set to 1."""
    shape = tuple(x.shape)
    if len(dims) != 1:  # prod over everything: one group
        flat = reshape(x, (-1,))
        return reshape(_prod_of_others(flat, (0,), const), shape)
    d = dims[0]
    order = [i for i in range(len(shape)) if i != d] + [d]
    moved = permute(x, *order)  # the group's dim last
    n = shape[d]
    rep = expand(unsqueeze(moved, -2), *moved.shape[:-1], n, n)
    others = _prod(rep.masked_fill(const(np.eye(n, dtype=bool), bool), 1.0), -1)
    inverse = [order.index(i) for i in range(len(shape))]
    return permute(others, *inverse)


def _softmax_dims(ctx):
    # every dim kept as 1 (a size-1 softmax dim included: summing over it is harmless)
    return tuple(i for i, k in enumerate(ctx.iat) if k == 1)


@vjp_rule(SOFTMAX)
def _softmax_vjp(ctx, g):
    y = ctx.y
    return [y * (g - _sum(g * y, _softmax_dims(ctx), keepdim=True))]


@vjp_rule(LOG_SOFTMAX)
def _log_softmax_vjp(ctx, g):
    return [g - exp(ctx.y) * _sum(g, _softmax_dims(ctx), keepdim=True)]
