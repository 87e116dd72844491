"""The one path from an op's NumPy result to a Tensor: record a node when gradients flow;
the maps of views, and a view's new node once its base was changed in place."""

import numpy as np

from .. import dtypes
from .. import tensor as _tensor_module
from ..core import anomaly_flags, grad_mode, trace_guards
from ..core.tape import (
    _F32,
    _F64,
    F_FLAGS,
    FLAG_BIG,
    FLAG_F32,
    FLAG_NEEDS_GRAD,
    FLAG_UNWRITTEN,
    NODE_FIELDS,
    READ_X0,
    READ_X1,
    READ_X2,
    READ_Y,
    current_tape,
    fresh_tape,
)
from ..tensor import Tensor, _make  # noqa: F401
from . import fast_push, kernelgen
from .fast_push import push_array_make, push_make
from .gemm import BLAS_THREADS_MIN, on_user_blas
from .registry import BY_NAME

_NO_INTS = np.empty(0, np.int64)
_F16 = np.dtype(np.float16)
# set by numbagrad.autograd.forward_ad while a dual level is active: every op's result then
# passes through it (tangent propagation); None otherwise, the eager path's one extra check
forward_hook = None
_grad = grad_mode.state
_guards = trace_guards.state
_anomaly = anomaly_flags.state


def replay_value(op, inputs, out_size, dtype, iat=(), fat=()):
    """``op``'s value computed by its compiled-replay forward kernel (``op.replay``) on
    ``inputs`` (arrays) converted to ``dtype``, as a flat array of ``out_size``. Eager ops
    whose replay runs in the node's own dtype (``replay_f32``) take their value from here,
    so that eager and replay agree to the last bit: NumPy's float32 exp, for one, rounds
    differently from the libm one a Numba kernel calls, and its float32 sums in another
    order than a float64 kernel's."""
    # the other half of the rule: replay must run this op's float32 nodes in float32 too
    assert op.replay_f32, f"{op.name}: replay_value needs replay_f32=True in its record"
    if dtype == _F16:  # Numba has no float16: computed in float32, rounded once (as torch)
        return replay_value(op, inputs, out_size, _F32, iat, fat).astype(_F16)
    xs = [np.ascontiguousarray(a, dtype).reshape(-1) for a in inputs]
    shapes = [np.asarray(np.shape(a), np.int64) for a in inputs]
    y = np.empty(out_size, dtype)
    kernel = kernelgen.kernel_of(op.replay)
    kernel(y, *xs, _NO_INTS, *shapes, np.asarray(iat, np.int64), np.asarray(fat, np.float64))
    return y


def record(op, out, inputs, iat=(), fat=()):
    """Wrap ``out`` (the op's NumPy value) in a Tensor, recording ``op`` when any input
    requires grad and grad mode is on.

    Args:
        op: the op's OpDef (``defop``'s result).
        out: the op's value, a NumPy array or scalar, computed by the caller.
        inputs: the op's input Tensors, in its argument order.
        iat: the op's int attributes (a tuple, or an int64 array for index maps).
        fat: the op's float attributes.

    Returns:
        A Tensor of ``out``, on the graph when it is recorded.
    """

    if forward_hook is not None:
        return forward_hook(op, out, inputs, iat, fat)
    if not _grad.enabled:
        if _guards.tracing:
            return trace_guards.opaque(_make(out), inputs, f"{op.name} under no_grad")
        return _make(out)
    tape = None
    needed = False
    for t in inputs:
        if t._base is not None and t._view[1] != t._vc_list[0]:
            fresh_view(t)
        elif t._tape is not None and t._tape.dirty and t._node in t._tape.dirty and \
                op.name != "as_strided":
            refresh(t)
        if t._requires_grad:
            needed = True
            # record on the newest tape among the inputs': older ones are bridged into it
            tt = t._tape
            if tt is not None and tt is not tape and (tape is None or tt.serial > tape.serial):
                tape = tt
    if not needed:
        if _guards.tracing:
            trace_guards.int_used(inputs)
        return _make(out)
    if tape is None:
        tape = current_tape()
    if tape.sweeps and not tape.pinned:
        # a backward in another thread holds views of this tape's buffers: record on a new
        # tape, bridging the inputs, as a graph spanning tapes always does
        tape = fresh_tape()
    try:
        if isinstance(out, np.generic):  # a 0-d result: skip NumPy's slow scalar attributes
            size, shape = 1, ()
        else:
            size, shape = out.size, out.shape
        args = []
        for t in inputs:
            tt = t._tape
            if tt is tape:
                a = t._node
            elif tt is None:
                a = tape.source(t)
            else:
                a = tape.bridge(t)
            args.append(a)
        return push_node(tape, op, out, size, shape, inputs, args, iat, fat)
    except BufferError:
        # a backward that started after the check above views the buffers: this tape takes
        # no more nodes (push() left none half-written), the op goes to a new one
        return _on_new_tape(tape, op, out, inputs, iat, fat)


def push_node_python(tape, op, out, size, shape, inputs, args, iat, fat):
    """record()'s node: ``op``'s value ``out`` (``size`` elements of ``shape``) over the
    nodes ``args`` of ``inputs`` on ``tape``, which the caller checked can take it (grad mode
    on, nothing watching, no stale operand); returns the result Tensor. (``push_node``: the
    C form where the extension is built, calling this for what it does not push itself.)"""
    nodes = tape.nodes
    argflags = 0
    for a in args:
        argflags |= nodes[a * NODE_FIELDS + F_FLAGS]
    if argflags & FLAG_UNWRITTEN:  # the operands its derivative reads are written
        reads = op.value_reads
        for k, (t, a) in enumerate(zip(inputs, args)):
            if reads == _READ_ALL or k < 3 and reads >> k & 1:
                tape.need(a, t._data)
    flags = FLAG_NEEDS_GRAD | (FLAG_BIG if size >= tape.big or argflags & FLAG_BIG else 0) | \
        (FLAG_F32 if out.dtype is _F32 else 0)
    if fat and flags & FLAG_F32 and op.elementwise and op.rounds_once:
        # NumPy applies a Python number to a float32 operand rounded to float32 (x * 0.8
        # multiplies by float32(0.8)); recorded so, the replay's float64 formula rounds its
        # one result to eager's, and the backward uses the factor eager applied
        fat = tuple(float(np.float32(f)) for f in fat)
    node = tape.push(op.code, out, size, shape, args, iat, fat, flags, op.value_reads)
    if op.blas_inner is not None and not tape.blas:
        k = op.blas_inner
        tape.blas = k < 0 or on_user_blas and \
            size * inputs[k]._data.shape[-1] >= BLAS_THREADS_MIN
    if _anomaly.enabled:
        anomaly_flags.note(tape, node)
    return _make(out, tape, node)


push_node = fast_push.node_pusher(push_node_python, _anomaly, on_user_blas)


def _on_new_tape(tape, op, out, inputs, iat=(), fat=()):
    """record() once ``tape`` can grow no more: it is marked so, and every op from now on
    records on a new tape."""
    if tape.pinned:
        raise RuntimeError(f"{op.name}: a compile trace's tape cannot grow while a backward "
                           "holds it")
    tape.close()
    return record(op, out, inputs, iat, fat)


def record_0d(op, out, a, b, fat=()):
    """record() of elementwise ``op`` on 0-d float64 tensors ``a`` and ``b`` (None for a
    unary op): a scalar graph's op, recorded in fewer steps when its operands are on one
    tape (or are its sources) and nothing else watches; every other case goes to record()."""
    if forward_hook is None and _grad.enabled and not _anomaly.enabled and \
            a._base is None and (b is None or b._base is None):
        ta = a._tape
        if b is None:
            if not a._requires_grad:
                return _make(out)
            tape = ta if ta is not None else current_tape()
            if tape.plain:
                try:
                    na = a._node if ta is tape else tape.source(a)
                    return push_make(tape, op.code, out, na, -1, fat)
                except BufferError:  # (see record())
                    return _on_new_tape(tape, op, out, (a,), (), fat)
        else:
            tb = b._tape
            tape = ta if ta is not None else tb
            if tape is None:  # two sources
                if not (a._requires_grad or b._requires_grad):
                    return _make(out)
                tape = current_tape()
            if (tb is None or tb is tape) and tape.plain:
                try:
                    na = a._node if ta is tape else tape.source(a)
                    nb = b._node if tb is tape else tape.source(b)
                    return push_make(tape, op.code, out, na, nb, fat)
                except BufferError:  # (see record())
                    return _on_new_tape(tape, op, out, (a, b), (), fat)
    return record(op, out, (a,) if b is None else (a, b), (), fat)


def record_array(op, out, a, b=None, iat=(), fat=()):
    """record() of ``out``, op's array (or float NumPy scalar) result on tensors ``a`` and
    ``b`` (None for one operand), with attribute tuples ``iat`` and ``fat``: an array op's
    common case (operands on one tape or its sources, no stale view, nothing watching,
    nothing big) recorded in fewer steps; every other case goes to record()."""
    tape = a._tape
    if tape is None and b is not None:
        tape = b._tape
    if tape is None and (a._requires_grad or b is not None and b._requires_grad):
        tape = current_tape()  # (leaves only: a new graph starts here, as in record())
    if tape is None and forward_hook is None and not _guards.tracing and a._base is None and \
            (b is None or b._base is None):
        return _make(out)  # nothing requires grad, nothing watches: record()'s last case
    if tape is None or tape.sweeps or forward_hook is not None or not _grad.enabled or \
            _anomaly.enabled or type(out) not in _ARRAY_TYPES or tape.dirty and \
            _stale(tape, a, b) or a._base is not None and \
            a._view[1] != a._vc_list[0] or b is not None and (
                b._base is not None and b._view[1] != b._vc_list[0] or
                b._tape is not tape and b._tape is not None):
        return record(op, out, (a,) if b is None else (a, b), iat, fat)
    f32 = FLAG_F32 if out.dtype is _F32 else 0
    if fat and f32 and op.elementwise and op.rounds_once:  # (as in record())
        fat = tuple(float(np.float32(f)) for f in fat)
    reads = op.value_reads
    try:
        na = a._node if a._tape is tape else tape.source(a)
        nb = -1 if b is None else b._node if b._tape is tape else tape.source(b)
        if tape.has_unwritten and reads & _READ_XS:  # the operands its derivative reads
            if reads & READ_X0:
                tape.need(na, a._data)
            if reads & READ_X1 and nb >= 0:
                tape.need(nb, b._data)
        t = push_array_make(tape, op.code, out, na, nb, iat, fat, f32, reads)
    except BufferError:  # (see record())
        return _on_new_tape(tape, op, out, (a,) if b is None else (a, b), iat, fat)
    if t is None:
        return record(op, out, (a,) if b is None else (a, b), iat, fat)
    if op.blas_inner is not None and not tape.blas:
        k = op.blas_inner
        tape.blas = k < 0 or on_user_blas and \
            out.size * (a if k == 0 else b)._data.shape[-1] >= BLAS_THREADS_MIN
    return t


def scalar_graph_op(op, forward, arrays=None):
    """``two(a, b)``, ``one(a)`` and ``with_number(a, c)``: ``op`` on the values of one
    scalar graph (NumPy float64 scalars on one plain tape, nothing watching: record_0d's
    common case), its value computed by ``forward`` and recorded in the fewest steps a
    scalar graph's op can take; on two tensors, on one, on one and a Python number (the
    op's float attribute). An op whose ``forward`` is its NumPy function (``rounds_once``)
    takes C-ordered float arrays of one dtype too (record_array), unless ``arrays`` is
    False. All return None for any other operands, which the op's general path takes."""
    code = op.code
    arrays = op.rounds_once if arrays is None else arrays

    def two(a, b):
        x, y, tape = a._data, b._data, a._tape
        kind = type(x)
        if kind is _F64_SCALAR:
            if type(y) is _F64_SCALAR and tape is not None and b._tape is tape and \
                    tape.plain and forward_hook is None and _grad.enabled and \
                    not _anomaly.enabled:
                out = forward(x, y)
                try:
                    return push_make(tape, code, out, a._node, b._node, ())
                except BufferError:  # (see record())
                    return _on_new_tape(tape, op, out, (a, b))
            elif type(y) is np.ndarray and y.dtype is _F64 and not y.ndim and \
                    type(b) is Tensor:  # a leaf (a 0-d array) on the right: its source
                # (its value as a NumPy scalar: the same number; 0-d array arithmetic is slow)
                return record_0d(op, forward(x, y[()]), a, b)
        elif kind is np.ndarray and arrays and type(y) is np.ndarray:
            dt = x.dtype
            if dt is y.dtype and (dt is _F32 or dt is _F64) and x.flags.c_contiguous and \
                    y.flags.c_contiguous:
                try:
                    out = forward(x, y)
                except ValueError:
                    return None  # (the general path raises torch's error)
                if type(out) is np.ndarray:
                    return record_array(op, out, a, b)
                if type(out) is _F64_SCALAR and type(b) is Tensor:  # two 0-d leaves
                    return record_0d(op, out, a, b)
        elif kind is np.ndarray and type(y) is _F64_SCALAR and x.dtype is _F64 and \
                not x.ndim and type(b) is Tensor:  # a leaf on the left
            return record_0d(op, forward(x[()], y), a, b)
        return None

    # (one and with_number apart: no star-args call on a scalar op's path)
    def one(a):
        x, tape = a._data, a._tape
        kind = type(x)
        if kind is _F64_SCALAR:
            if tape is not None and tape.plain and forward_hook is None and \
                    _grad.enabled and not _anomaly.enabled:
                out = forward(x)
                try:
                    return push_make(tape, code, out, a._node, -1, ())
                except BufferError:  # (see record())
                    return _on_new_tape(tape, op, out, (a,))
        elif kind is np.ndarray and arrays and x.flags.c_contiguous:
            dt = x.dtype
            if dt is _F32 or dt is _F64:
                out = forward(x)
                if type(out) is np.ndarray:
                    return record_array(op, out, a, None)
        return None

    def with_number(a, c):
        x, tape = a._data, a._tape
        kind = type(x)
        if kind is _F64_SCALAR:
            if tape is not None and tape.plain and forward_hook is None and \
                    _grad.enabled and not _anomaly.enabled:
                out = forward(x, c)
                try:
                    return push_make(tape, code, out, a._node, -1, (c,))
                except BufferError:  # (see record())
                    return _on_new_tape(tape, op, out, (a,), (), (c,))
        elif kind is np.ndarray and arrays and x.flags.c_contiguous:
            dt = x.dtype
            if dt is _F64 and not x.ndim:  # a leaf: record_0d finds its source node
                return record_0d(op, forward(x[()], c), a, None, (float(c),))
            if dt is _F32 or dt is _F64:
                out = forward(x, c)
                if type(out) is np.ndarray:
                    return record_array(op, out, a, None, (), (float(c),))
        return None
    return two, one, with_number


# the operand bits of tape.READ_*; all of them: a Python or variadic op's, which reads all
_READ_XS = READ_X0 | READ_X1
_READ_ALL = READ_X0 | READ_X1 | READ_X2 | READ_Y
_F64_SCALAR = np.float64  # (a 0-d op result's type; views and leaves hold 0-d arrays)
# what record_array takes: arrays, and the NumPy scalars a whole reduction gives
_ARRAY_TYPES = frozenset((np.ndarray, np.float64, np.float32))


def c_strides(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= s
    return tuple(reversed(st))


def _address(a):
    return a.__array_interface__["data"][0]


def view_map(shape, fn, data=None, view=None, same_start=False, offset=None):
    """(offset, strides) of ``fn``'s view in the C-order element space of ``shape``. When
    the input ``data`` is C-contiguous its element space is that order already, so the
    already-made ``view`` is read directly (no dummy array); ``same_start``: ``fn`` only
    reorders axes (t, transpose), so the offset is 0 without reading addresses; ``offset``:
    the caller knows where the view starts in C order (reading an address costs microseconds)."""
    if data is not None and data.flags.c_contiguous and isinstance(view, np.ndarray):
        item = data.itemsize
        if same_start:
            return (0, *(s // item for s in view.strides))
        if offset is None:
            offset = (_address(view) - _address(data)) // item
        return (offset, *(s // item for s in view.strides))
    base = np.zeros(1, np.uint8)
    dummy = np.lib.stride_tricks.as_strided(base, shape=shape, strides=c_strides(shape))
    v = fn(dummy)
    offset = v.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return (offset, *v.strides)


def note_view(t, x, fn):
    """Make ``t``, ``fn(x)`` sharing ``x``'s memory, a view of ``x``'s base: it shares the
    base's version counter and remembers the view functions from the base (fresh_view)."""
    vc = x._vc
    if x._base is None:
        t._base, t._view = x, ((fn,), vc[0])
    else:
        t._base, t._view = x._base, ((*x._view[0], fn), vc[0])
    t._vc_list = vc  # (a view's counter is always made: its readers take the slot)
    if t._tape is not None:
        t._tape.view_nodes.append(t._node)


def fresh_view(t):
    """Point ``t``, a view whose base was changed in place after the view was recorded, at
    an AsStridedBackward0 node over the base's current node, as torch regenerates a view's
    grad_fn: a gradient through the view then goes through the in-place op, not around it.
    (The view's value is the base's memory, current already; only its node was stale.)"""
    if not grad_mode.state.enabled:
        return  # nothing can be recorded: done when next used with gradients
    fns = t._view[0]
    t._view = (fns, t._vc[0])
    base = t._base
    if not base._requires_grad:
        return

    def from_base(a):
        for fn in fns:
            a = fn(a)
        return a

    r = record(BY_NAME["as_strided"], t._array(), (base,), view_map(np.shape(base._data),
                                                                      from_base))
    t._rebase(r._tape, r._node)
    t._requires_grad = True


def _stale(tape, a, b):
    """Whether ``a`` or ``b`` (None) sits on a node of ``tape`` whose value changed since."""
    return a._tape is tape and a._node in tape.dirty or \
        b is not None and b._tape is tape and b._node in tape.dirty


def refresh(t):
    """Point ``t``, whose values changed since its node recorded them (in place under
    no_grad, or through a view or an alias of it: detach(), .data), at an identity
    AsStridedBackward0 node over that node with its current values: later ops use those,
    as torch's read its memory, and their gradient still reaches the old node's inputs.
    (torch's tensor keeps its grad_fn there; the node's savers raise, as torch's.)"""
    r = record(BY_NAME["as_strided"], t._array(), (t,),
               view_map(np.shape(t._data), _identity))
    if _guards.tracing:  # the replay recomputes the node from the old one: not these values
        trace_guards.opaque(r, (t,), "a tensor changed outside the graph (in place under "
                                     "no_grad, or through detach() or .data)")
    t._rebase(r._tape, r._node)


def _identity(a):
    return a


def _refresh_recording(t):
    with grad_mode.enable_grad():  # (``t.data = ...`` under no_grad moves ``t`` all the same)
        refresh(t)


_tensor_module.refresh_hook = _refresh_recording


def shape_error_broadcast(sa, sb):
    """torch's message for shapes that do not broadcast."""
    na, nb = len(sa), len(sb)
    for i in range(1, max(na, nb) + 1):
        da = sa[-i] if i <= na else 1
        db = sb[-i] if i <= nb else 1
        if da != db and da != 1 and db != 1:
            dim = max(na, nb) - i
            return RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b "
                                f"({db}) at non-singleton dimension {dim}")
    return None


def broadcast_shapes(*shapes):
    out = ()
    for s in shapes:
        err = shape_error_broadcast(out, tuple(s))
        if err is not None:
            raise err
        out = tuple(np.broadcast_shapes(out, tuple(s)))
    return out


def float_dtype_for(t):
    """The floating dtype an op like exp computes in for tensor ``t`` (ints -> default)."""
    d = t.dtype
    return d if d.is_floating_point else dtypes.get_default_dtype()
