"""One graph node for a decomposition or solver (det, inv, qr, svd, eigh, ...): the value comes
from NumPy/LAPACK and the derivative is a Python rule written with numbagrad ops, so that a
second derivative (create_graph=True) records the rule's own ops.

The node is recorded as the tape's Python-function node (``py_function``, as a custom
autograd.Function's and a compiled call's): the sweep hands it back to Python, which calls
``_LinalgCall.backward``. Several outputs are packed into one node and each is a gather of
it, so the rule sees all output gradients at once, as torch's backward of a multi-output op.
"""

import weakref

import numpy as np

from ...core import grad_mode
from ...core.tape import FLAG_HOOK
from ...engine.record import record
from ...engine.registry import PY_FUNCTION
from ...tensor import _make
from ..index.indexing import gather_flat

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
         "after they have already been freed). Saved intermediate values of the graph are freed "
         "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
         "backward through the graph a second time or if you need to access saved tensors after "
         "calling backward.")


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix is singular or not positive-definite."""


class _Saved:
    """A tensor the rule reads, rebuilt connected to its graph on access without keeping the
    tape alive (a leaf or a constant is kept itself: it holds no tape); changed in place
    since, it is refused as torch refuses a modified saved tensor."""

    __slots__ = ("tensor", "data", "tape", "node", "counter", "version")

    def __init__(self, t):
        self.counter, self.version = t._vc, t._vc[0]
        if t._tape is None:
            self.tensor, self.tape = t, None
        else:
            self.tensor, self.data, self.tape, self.node = None, t._data, weakref.ref(t._tape), \
                t._node

    def get(self):
        if self.counter[0] != self.version:
            data = self.tensor._data if self.tensor is not None else self.data
            kind = f"torch.{'Float' if np.asarray(data).dtype == np.float32 else 'Double'}Tensor"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{kind} [{', '.join(map(str, np.shape(data)))}]] is at "
                f"version {self.counter[0]}; expected version {self.version} instead. Hint: "
                "enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        if self.tensor is not None:
            return self.tensor
        tape = self.tape()
        return _make(self.data, tape, self.node) if tape is not None else _make(self.data)


class LinalgCtx:
    """What a rule reads: the inputs and outputs (Tensors), and options of the call."""

    __slots__ = ("_inputs", "_outputs", "options")

    def __init__(self, inputs, options):
        self._inputs = [_Saved(t) for t in inputs]
        self._outputs = []
        self.options = options

    @property
    def inputs(self):
        return [s.get() for s in self._inputs]

    @property
    def outputs(self):
        return [s.get() for s in self._outputs]


class _LinalgCall:
    """The engine's view of the node: ``backward(g, shapes)`` and ``ctx._freed``."""

    __slots__ = ("name", "rule", "lctx", "specs", "packed", "_freed")

    def __init__(self, name, rule, lctx, specs, packed):
        self.name, self.rule, self.lctx, self.specs, self.packed = name, rule, lctx, specs, packed
        self._freed = False

    @property
    def ctx(self):
        return self

    def backward(self, g, shapes):
        if self._freed:
            raise RuntimeError(FREED)
        grads = []
        for shape, offset in self.specs:
            if offset is None:
                grads.append(None)
                continue
            size = int(np.prod(shape, dtype=np.int64))
            part = gather_flat(g, np.arange(offset, offset + size), shape) if self.packed \
                else g.reshape(shape)
            # an output no gradient reached: undefined for the rule, as torch's (a zero one
            # would turn the rule's infinities at repeated eigenvalues into NaN)
            grads.append(part if len(self.specs) == 1 or np.any(part._data) else None)
        # at degenerate points (repeated eigenvalues) the rules divide by zero: torch's
        # infinities and NaNs, without NumPy's warnings
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self.rule(self.lctx, grads)
        return [None if gx is None else gx.reshape(tuple(shape)) if tuple(gx.shape) !=
                tuple(shape) and int(np.prod(gx.shape)) == int(np.prod(shape)) else gx
                for gx, shape in zip(out, shapes)]


def not_differentiable(op):
    """A ``record_node`` rule for an op torch records a ``NotImplemented`` node for: its
    backward raises torch's error naming ``aten::op``."""
    def rule(ctx, grads):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")
    return rule


def record_node(name, values, inputs, rule, differentiable=None, options=None):
    """Tensors for ``values`` (NumPy arrays, one per output), recorded as one node named
    ``name`` when an input requires grad. ``rule(ctx, grads)`` returns one gradient Tensor
    (or None) per input, given one Tensor (or None) per output; ``differentiable`` lists
    which outputs carry a gradient (default: all floating ones)."""
    values = [np.asarray(v) for v in values]
    if differentiable is None:
        differentiable = [v.dtype.kind == "f" for v in values]
    inputs = list(inputs)
    if not (grad_mode.state.enabled and any(t._requires_grad for t in inputs) and
            any(differentiable)):
        return [_make(v) for v in values]
    specs, offset, diff = [], 0, []
    for v, d in zip(values, differentiable):
        specs.append((v.shape, offset if d else None))
        if d:
            diff.append(v)
            offset += v.size
    packed = len(diff) > 1 or diff[0].ndim == 0 and len(values) > 1
    if packed:
        value = np.concatenate([v.reshape(-1) for v in diff])
    else:
        value = diff[0]
    if value.ndim == 0:
        value = value[()]
    node_t = record(PY_FUNCTION, value, inputs)
    tape, node = node_t._tape, node_t._node
    lctx = LinalgCtx(inputs, options)
    call = _LinalgCall(name, rule, lctx, specs, packed)
    tape.functions[node] = call
    tape.names[node] = name
    tape.set_flag(node, FLAG_HOOK)  # the sweep hands it back to Python
    out = []
    for v, (shape, off) in zip(values, specs):
        if off is None:
            out.append(_make(v))
        elif not packed:
            out.append(node_t)
        else:
            t = gather_flat(node_t, np.arange(off, off + v.size), shape)
            t._tape.names[t._node] = name
            out.append(t)
    lctx._outputs = [_Saved(t) for t in out]
    return out
