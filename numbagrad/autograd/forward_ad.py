"""torch.autograd.forward_ad: forward-mode automatic differentiation (dual tensors).

Inside ``with dual_level():`` a tensor made by ``make_dual(primal, tangent)`` carries a
tangent, and every op recorded (numbagrad/engine/record.py calls ``forward_hook`` while a level
is active) gives its output the tangent J @ tangents of its inputs, computed FORWARD:

* elementwise table ops: sum over inputs k of the op's derivative formula k (linear in ``g``)
  evaluated with ``g`` = input k's tangent broadcast to the output shape;
* ops linear in their inputs (views, reshape, expand, repeat, cat, stack, indexing, gather,
  sum, mean, the matmul squeeze): the op's own replay forward kernel run on the tangents;
* the products mm, mv, dot, bmm (bilinear: d(AB) = dA B + A dB) and addmm, the same way;
* softmax and log_softmax: explicit rules (y * (t - sum(y t)), t - sum(softmax * t));
* every other op (convolutions, pooling, norms, losses, var/std/norm, prod, max/min,
  logsumexp, layer_norm, batch_norm, custom Functions excluded) goes through the PER-OP
  FALLBACK ``_jvp_by_op_vjp``: the op's own differentiable derivative (``op.vjp``) is
  applied to a dummy cotangent u on a one-node graph, and the derivative of
  <vjp(u), tangents> with respect to u is J @ tangents (exact, but slower).

Tangents are plain Tensors (no forward-over-forward, no reverse mode through them), kept per
level in a dict keyed by the dual tensor's id and dropped by a weakref callback when the
tensor dies, and all of them when the level exits. Only one level at a time, as in torch.
An in-place op hands its result's tangent to the tensor it changed (numbagrad/_methods.py);
a view or base of that tensor then has a stale tangent, and using it raises.
Custom autograd.Functions have no forward rule: a tangent reaching one's node raises, as in
torch without a ``jvp`` staticmethod; when no input requires grad, Function.apply records no
node and its outputs come out without tangent.
"""

import functools
import weakref
from collections import namedtuple

import numpy as np

from .. import dtypes as _dtypes
from ..core import grad_mode
from ..core import tape as _tape_mod
from ..engine import kernelgen
from ..engine import record as _record_mod
from ..engine.registry import BY_NAME
from ..ops.elementwise.pointwise import to_dtype
from ..ops.elementwise.public import exp
from ..ops.reduce.reductions import mean as _mean
from ..ops.reduce.reductions import sum as _sum
from ..ops.shape.movement import expand, reshape, view
from ..ops.vjp import formula_function
from ..tensor import Tensor, _make
from . import api, differentiable

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

# the one active level (torch supports a single level): id(tensor) -> (weakref, tangent)
_current_level = -1
_tangents = {}
# (tape serial, node) -> tangent of the tensor recorded there, while a level is active
_node_tangents = {}
# while jacfwd carries its columns' tangents as one batch (forward_ad_batched.py): the batch
# size, and the rule giving an op's batch of tangents
batch_size = batched_rule = None


class UnbatchableError(Exception):
    """A pass cannot carry its tangents as one batch (forward_ad_batched.py)."""


# ---- levels ----------------------------------------------------------------------------------
def enter_dual_level():
    """Enter a new forward-grad level; returns its index (0)."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    _tangents.clear()
    _record_mod.forward_hook = _propagate
    return _current_level


def exit_dual_level(*, level=None):
    """Exit the level ``level`` (the current one by default): every tangent is dropped.

    Args:
        level: the level to exit; it must be the current one (default None: the current
            one).
    """
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _record_mod.forward_hook = None
    _tangents.clear()
    _node_tangents.clear()
    _current_level = -1


class dual_level:  # noqa: N801 - torch's name
    """Context manager for a forward AD level: ``with dual_level(): ...``, or a decorator
    (``@dual_level()``) running the function inside one."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()

    def __call__(self, fn):
        @functools.wraps(fn)
        def inside_level(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return inside_level


def _check_level(level, what):
    if level is None:
        level = _current_level
    if level < 0 or level != _current_level:
        raise RuntimeError(f"Invalid level given to {what}")
    return level


# ---- tangent storage -------------------------------------------------------------------------
def _get_tangent(t):
    entry = _tangents.get(id(t))
    if entry is None or entry[0]() is not t:
        return None
    if t._vc[0] != entry[2]:
        # changed in place since (through a view or its base): the tangent no longer fits
        raise RuntimeError("numbagrad forward AD: a dual tensor was modified in place through "
                           "a view or its base after its tangent was set; forward AD follows "
                           "in-place ops only on the tensor they are applied to")
    return entry[1]


def _set_tangent(t, tangent):
    key = id(t)
    store = _tangents

    def drop(_ref, key=key):
        entry = store.get(key)
        if entry is not None and entry[0] is _ref:
            del store[key]

    store[key] = (weakref.ref(t, drop), tangent, t._vc[0])
    if t._tape is not None:
        _node_tangents[(t._tape.serial, t._node)] = tangent


def _node_tangent(t, tape, node):
    """Give ``t``, rebuilt by the differentiable backward for ``node`` of ``tape``, the tangent
    of the tensor recorded there at the current level (if any): tangents then flow through
    the backward (forward over reverse)."""
    if _node_tangents:
        tangent = _node_tangents.get((tape.serial, node))
        if tangent is not None:
            _set_tangent(t, tangent)


differentiable.node_tangent = _node_tangent


def set_tangent(t, tangent):
    """Give ``t`` (a tensor of numbagrad's own making, such as a transform's leaf) the tangent
    ``tangent`` at the current level."""
    if _current_level >= 0 and tangent is not None:
        _set_tangent(t, tangent)


def tangent(t):
    """``t``'s tangent at the current level, or None."""
    if batch_size is not None:  # (see unpack_dual)
        raise UnbatchableError
    return _get_tangent(t) if _current_level >= 0 else None


def take_tangent(target, result):
    """An in-place op on ``target`` computed out of place as ``result`` (numbagrad/_methods.py):
    ``target`` now carries ``result``'s tangent (or none)."""
    if _current_level < 0:
        return
    tangent = _get_tangent(result) if result is not None else None
    if tangent is not None:
        _set_tangent(target, tangent)
    elif id(target) in _tangents:
        del _tangents[id(target)]


def _without_hook(fn, *args):
    """Run ``fn`` with propagation off: the ops computing a tangent get no tangent."""
    hook = _record_mod.forward_hook
    _record_mod.forward_hook = None
    try:
        return fn(*args)
    finally:
        _record_mod.forward_hook = hook


# ---- make_dual / unpack_dual -----------------------------------------------------------------
def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` at the current forward AD level.

    Args:
        tensor: the primal, a floating-point Tensor.
        tangent: a floating-point Tensor of ``tensor``'s shape.
        level: the forward AD level; it must be the current one (default None: the
            current one). A level must have been entered.

    Returns:
        The dual tensor, a view of ``tensor``.
    """
    if _current_level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    level = _check_level(level, "_make_dual")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual(): argument 'primal' and 'tangent' must be Tensor")
    if not tensor.dtype.is_floating_point:
        raise ValueError("Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError("Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    dual = _without_hook(view, tensor, tuple(tensor.shape))
    _set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``UnpackedDualTensor(primal, tangent)``: a view of ``tensor`` without tangent, and the
    tangent (None when it has none at this level, or no level is active).

    Args:
        tensor: the tensor to unpack.
        level: the forward AD level (default None: the current one); another level than
            the current one gives no tangent.

    Returns:
        An ``UnpackedDualTensor`` named tuple (primal, tangent).
    """
    if _current_level < 0 or (level is not None and level != _current_level):
        return UnpackedDualTensor(tensor, None)
    if batch_size is not None:  # (the function reads a tangent: one column at a time)
        raise UnbatchableError
    tangent = _get_tangent(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    primal = _without_hook(view, tensor, tuple(tensor.shape))
    return UnpackedDualTensor(primal, tangent)


# ---- propagation (called by engine/record.py for every op while a level is active) ---------------
def _propagate(op, out, inputs, iat, fat):
    tangents = [_get_tangent(t) for t in inputs] if _tangents else ()
    _record_mod.forward_hook = None
    try:
        result = _record_mod.record(op, out, inputs, iat, fat)
        if any(t is not None for t in tangents) and np.asarray(out).dtype.kind == "f":
            if batched_rule is not None:
                tangent = batched_rule(op, out, inputs, tangents, iat, fat)
            elif _differentiable(op, inputs, tangents, iat):
                # as torch: the tangent's own ops are recorded (through the recorded result),
                # so reverse mode can differentiate it (a loss on a tangent)
                tangent = _output_tangent(op, result, inputs, tangents, iat, fat)
            else:
                tangent = _graphed_fallback(op, out, inputs, tangents, iat, fat)
                if tangent is _NO_GRAPH:
                    with grad_mode.no_grad():
                        tangent = _output_tangent(op, out, inputs, tangents, iat, fat)
                    if tangent is not None and _needs_graph(inputs, tangents):
                        _detached.add(tangent)  # computed without a graph where one was due
            if tangent is not None:
                dt = _dtypes.from_numpy_dtype(np.asarray(out).dtype)
                if tangent.dtype != dt:
                    tangent = to_dtype(tangent, dt)
                _set_tangent(result, tangent)
        return result
    finally:
        _record_mod.forward_hook = _propagate


_NO_GRAPH = object()


def _graphed_fallback(op, out, inputs, tangents, iat, fat):
    """J @ tangents with a graph, for an op with no tangent rule written in recorded ops
    (cumsum, norms, convolutions...) whose tangent is due one: the double-vjp trick on a
    recording of the op over the inputs, u -> <J^T u, t> differentiated in u, every step
    with create_graph. _NO_GRAPH
    where no graph is due, or an input's tangent has none, or the op is a custom Function."""
    if op.python or not _needs_graph(inputs, tangents) or \
            any(t is not None and t in _detached for t in tangents):
        return _NO_GRAPH
    live = [k for k, t in enumerate(tangents) if t is not None]
    with grad_mode.enable_grad():
        # each live input through a node of its own (a view, or a fresh leaf where it does
        # not require grad): the gradients below are then the op's partial derivatives,
        # not totals through inputs computed from one another (layer_norm(x, w, w * 0.5))
        shadow = list(inputs)
        for k in live:
            x = inputs[k]
            shadow[k] = view(x, tuple(x.shape)) if x._requires_grad else \
                _make(x._data).requires_grad_(True)
        return _double_vjp(op, out, shadow, tangents, iat, fat, live, keep_graph=True)


def _needs_graph(inputs, tangents):
    """Whether an op's tangent depends on something that requires grad (grad mode on)."""
    return grad_mode.state.enabled and (
        any(t is not None and (t._requires_grad or t in _detached) for t in tangents) or
        any(x._requires_grad for x in inputs))


def _differentiable(op, inputs, tangents, iat):
    """Whether ``op``'s tangent is due a graph and can have one: its rule is written in
    Tensor ops (_RECORDED) or records ``op`` itself on the tangents (linear ops, products,
    views with their map: on float inputs only), and no input's tangent lost its graph."""
    if not _needs_graph(inputs, tangents) or \
            any(t is not None and t in _detached for t in tangents):
        return False
    if (op.elementwise and not op.python) or op.name in _RECORDED:
        return True
    same_op = op.name in _LINEAR or op.name in _BILINEAR or (op.name in _VIEWS and len(iat))
    return same_op and all(np.asarray(x._data).dtype.kind == "f" for x in inputs)


def _output_tangent(op, out, inputs, tangents, iat, fat):
    if op.python:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    if op.elementwise:
        return _elementwise_jvp(op, out, inputs, tangents, iat, fat)
    rule = _RULES.get(op.name)
    if rule is not None:
        return rule(op, out, inputs, tangents, iat, fat)
    return _jvp_by_op_vjp(op, out, inputs, tangents, iat, fat)


def _elementwise_jvp(op, out, inputs, tangents, iat, fat, widen=None, lead=()):
    """``out``: the op's value, or its recorded result (a Tensor: the derivative is then
    recorded through it). ``widen``: how a tangent takes the output's shape (broadcast by
    default); ``lead``: the tangents' leading batch dims, if any (forward_ad_batched.py)."""
    y = _as_tensor(out)
    out = y._data
    shape = np.shape(out)
    a = inputs[0] if len(inputs) > 0 else None
    b = inputs[1] if len(inputs) > 1 else None
    f0 = fat[0] if len(fat) > 0 else None
    f1 = fat[1] if len(fat) > 1 else None
    m = np.asarray(iat, bool).reshape(shape) if len(iat) else None
    total = None
    for k, formula in enumerate(op.grads):
        t = tangents[k]
        if t is None or formula is None:
            continue
        if widen is not None:
            g = widen(t)
        else:
            g = t if tuple(t.shape) == shape else expand(t, *shape)
        r = formula_function(formula)(g, a, b, y, f0, f1, m)
        if not isinstance(r, Tensor):  # a constant derivative (sign: 0)
            r = _make(np.broadcast_to(np.asarray(r, np.asarray(out).dtype),
                                      (*lead, *shape)).copy())
        total = r if total is None else total + r
    return total


# ---- structured ops: replay kernels on tangents ----------------------------------------------
def _flat(x, dtype):
    return np.ascontiguousarray(x, dtype).reshape(-1)


def _shape_arr(s):
    return np.asarray(s, np.int64)


def _run_kernel(op, out, operands, iat, fat):
    """``op`` on ``operands`` (Tensors: input values, tangents or zeros) by its replay
    forward kernel, recorded as ``op``'s node on them: with grad on and an operand requiring
    grad, the tangent has a graph (the same op's derivative applies)."""
    dtype = np.asarray(_as_tensor(out)._data).dtype
    shape = np.shape(_as_tensor(out)._data)
    y = np.zeros(int(np.prod(shape)), dtype)
    iat_a, fat_a = np.asarray(iat, np.int64), np.asarray(fat, np.float64)
    kernel = kernelgen.kernel_of(op.replay)
    arrays = [x._data for x in operands]
    if op.arity == -1:  # variadic: once per input
        for k, a in enumerate(arrays):
            kernel(y, _flat(a, dtype), _shape_arr(shape), _shape_arr(np.shape(a)), k,
                   iat_a, fat_a)
    else:
        kernel(y, *[_flat(a, dtype) for a in arrays], _shape_arr(shape),
               *[_shape_arr(np.shape(a)) for a in arrays], iat_a, fat_a)
    return _record_mod.record(op, y.reshape(shape), operands, iat, fat)


def _tangent_or_zeros(t, x):
    return _make(np.zeros(np.shape(x._data))) if t is None else t


def _linear_jvp(op, out, inputs, tangents, iat, fat):
    return _run_kernel(op, out, [_tangent_or_zeros(t, x) for t, x in zip(tangents, inputs)],
                       iat, fat)


def _as_tensor(out):
    """The op's value as a Tensor: its recorded result as given, or a new one of its array."""
    return out if isinstance(out, Tensor) else _make(out)


def _reshape_jvp(op, out, inputs, tangents, iat, fat):
    return reshape(tangents[0], tuple(np.shape(_as_tensor(out)._data)))


def _reduction_jvp(op, out, inputs, tangents, iat, fat):
    """sum and mean (whole, or over dims: those of size 1 in the kept shape ``iat``, a kept
    dim of size 1 reduced too, which changes nothing) of the tangent."""
    t, y = tangents[0], _as_tensor(out)
    reduction = _mean if op.name.startswith("mean") else _sum
    if not op.name.endswith("_dim"):
        return reduction(t)
    dims = tuple(d for d, k in enumerate(iat) if k == 1)
    if not dims:
        return reshape(t, tuple(y.shape))
    r = reduction(t, dims, keepdim=y.ndim == t.ndim)
    return r if tuple(r.shape) == tuple(y.shape) else reshape(r, tuple(y.shape))


def _view_jvp(op, out, inputs, tangents, iat, fat):
    """A view's tangent: the same view of the tangent. Its map (iat) is only recorded when
    the input requires grad; otherwise the tangent is laid out in a buffer mirroring the
    input's memory and the output's byte offset and strides are read off that buffer."""
    if len(iat):
        return _linear_jvp(op, out, inputs, tangents, iat, fat)
    x = np.asarray(inputs[0]._data)
    y = np.asarray(out)
    item = x.itemsize
    low = sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides)) + item
    buf = np.zeros((high - low) // item, x.dtype)
    start = -low

    def strided(offset, shape, strides):
        return np.lib.stride_tricks.as_strided(buf[offset // item:], shape, strides)

    strided(start, x.shape, x.strides)[...] = tangents[0]._data
    shift = y.__array_interface__["data"][0] - x.__array_interface__["data"][0]
    return _make(strided(start + shift, y.shape, y.strides).copy())


def _bilinear_jvp(op, out, inputs, tangents, iat, fat):
    """d(op(A, B)) = op(dA, B) + op(A, dB); for addmm(C, A, B) = beta C + alpha A B,
    op(dC, dA, B) + op(0, A, dB)."""
    first, second = (1, 2) if op.name == "addmm" else (0, 1)
    total = None
    if tangents[first] is not None or (first == 1 and tangents[0] is not None):
        operands = list(inputs)
        operands[first] = _tangent_or_zeros(tangents[first], inputs[first])
        if first == 1:
            operands[0] = _tangent_or_zeros(tangents[0], inputs[0])
        total = _run_kernel(op, out, operands, iat, fat)
    if tangents[second] is not None:
        operands = list(inputs)
        operands[second] = tangents[second]
        if first == 1:
            operands[0] = _tangent_or_zeros(None, inputs[0])
        part = _run_kernel(op, out, operands, iat, fat)
        total = part if total is None else total + part
    return total


def _softmax_dims(iat):
    return tuple(i for i, k in enumerate(iat) if k == 1)


def _softmax_jvp(op, out, inputs, tangents, iat, fat):
    y = _as_tensor(out)
    t = tangents[0]
    return y * (t - _sum(y * t, _softmax_dims(iat), keepdim=True))


def _log_softmax_jvp(op, out, inputs, tangents, iat, fat):
    t = tangents[0]
    return t - _sum(exp(_as_tensor(out)) * t, _softmax_dims(iat), keepdim=True)


_RESHAPES = ("view", "unsafe_view", "squeeze", "squeeze_dim", "squeeze_dims", "matmul_squeeze")
_VIEWS = ("unsqueeze", "permute", "transpose", "t", "select", "slice", "split", "split_sizes",
          "unbind", "as_strided")
_LINEAR = ("expand", "repeat", "cat", "stack", "index", "gather", "index_select",
           "index_add_flat", "embedding")
_REDUCTIONS = ("sum", "sum_dim", "mean", "mean_dim")
_BILINEAR = ("mm", "mv", "dot", "bmm", "addmm")
_RULES = {**{n: _linear_jvp for n in _LINEAR if n in BY_NAME},
          **{n: _reshape_jvp for n in _RESHAPES}, **{n: _view_jvp for n in _VIEWS},
          **{n: _bilinear_jvp for n in _BILINEAR},
          **{n: _reduction_jvp for n in _REDUCTIONS},
          "softmax": _softmax_jvp, "log_softmax": _log_softmax_jvp}
# the rules written in Tensor ops: given the op's recorded result, they record the tangent
# (elementwise ops' too). Other rules compute it without a graph; where one was due, it is
# kept in _detached, as is every tangent computed from it (their grad_fn is None).
_RECORDED = {*_RESHAPES, *_REDUCTIONS, "softmax", "log_softmax"}


class _Marks:
    """Tensors marked by identity, forgotten when they die (a WeakSet would compare Tensors
    with ==, which is elementwise)."""

    def __init__(self):
        self._refs = {}

    def add(self, t):
        key, refs = id(t), self._refs

        def drop(_ref, key=key):
            if refs.get(key) is _ref:
                del refs[key]
        refs[key] = weakref.ref(t, drop)

    def __contains__(self, t):
        ref = self._refs.get(id(t))
        return ref is not None and ref() is t


_detached = _Marks()


# ---- the per-op fallback: the op's own differentiable derivative ------------------------------
def _jvp_by_op_vjp(op, out, inputs, tangents, iat, fat):
    """J @ tangents of one node through ``op.vjp``: record the op once more on fresh leaves,
    take its differentiable vjp at a cotangent u, and differentiate <vjp(u), t> in u."""
    live = [k for k, t in enumerate(tangents) if t is not None]
    # on a tape of its own: the backward below retires its tape, which must not be one
    # holding the user's graph (or a graph a backward is walking now)
    previous = _tape_mod.install(_tape_mod.Tape())
    try:
        return _jvp_through_vjp(op, out, inputs, tangents, iat, fat, live)
    finally:
        _tape_mod.install(previous)


def _jvp_through_vjp(op, out, inputs, tangents, iat, fat, live):
    with grad_mode.enable_grad():
        leaves = []
        for k, x in enumerate(inputs):
            leaf = _make(x._data)
            if k in live:
                leaf.requires_grad_(True)
            leaves.append(leaf)
        return _double_vjp(op, out, leaves, tangents, iat, fat, live, keep_graph=False)


def _double_vjp(op, out, operands, tangents, iat, fat, live, keep_graph):
    """J @ tangents of ``op`` recorded over ``operands`` (the ``live`` ones require grad):
    its differentiable vjp at a cotangent u, then <vjp(u), tangents> differentiated in u
    (linear in u: any u gives J @ tangents); ``keep_graph``: that last step keeps its graph
    too. None where the output does not depend on the live operands."""
    y = _record_mod.record(op, out, operands, iat, fat)
    u = _make(np.ones(np.shape(out), np.asarray(out).dtype)).requires_grad_(True)
    grads = api.grad(y, [operands[k] for k in live], grad_outputs=u, create_graph=True,
                     allow_unused=True)
    total = None
    for k, g in zip(live, grads):
        if g is not None:
            term = _sum(g * to_dtype(tangents[k], g.dtype))
            total = term if total is None else total + term
    if total is None or not total.requires_grad:
        return None
    (jt,) = api.grad(total, [u], create_graph=keep_graph, allow_unused=True)
    return jt
