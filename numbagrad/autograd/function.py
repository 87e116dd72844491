"""Custom ops written in Python: ``numbagrad.autograd.Function``, as torch.autograd.Function.

A call of ``MyFn.apply(...)`` runs ``forward`` without recording, then records ONE node on
the tape (op ``py_function``) whose arguments are the Tensor arguments. The node is flagged
so that the compiled sweep hands it to Python, which calls ``MyFn.backward`` with Tensors
and adds what it returns into the arguments' adjoints. Cost: one round trip from the sweep
to Python per call of the function in the graph (a few microseconds plus the user's code);
an op that should run at the sweep's speed belongs in the op table instead (README,
"Adding an op").

Several outputs are recorded as one packed node (their values flattened into one vector)
and one gather node per output, so a backward receives all output gradients at once.
"""

import weakref

import numpy as np

from ..core import grad_mode
from ..core.tape import FLAG_HOOK
from ..engine.record import record
from ..engine.registry import PY_FUNCTION
from ..ops.elementwise.pointwise import to_dtype
from ..ops.index.indexing import gather_flat
from ..ops.shape.movement import reshape
from ..ops.vjp import unbroadcast
from ..tensor import Tensor, _make
from . import anomaly, forward_ad
from .checks import FREED_MSG


class FunctionCtx:
    """The ``ctx`` a custom Function's forward and backward share."""

    def __init__(self):
        self._saved = ()
        self._freed = False
        self._non_differentiable = set()
        self.materialize_grads = True
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        """Keep tensors for ``backward`` (read back as ``ctx.saved_tensors``).

        Args:
            *tensors: Tensors or None; anything else raises TypeError. A later call
                replaces them.
        """
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument 0 is "
                                f"of type {type(t).__name__}")
        self._saved = tensors

    @property
    def saved_tensors(self):
        """The tensors ``save_for_backward`` saved, as a tuple (an error once freed by a
        backward without ``retain_graph``)."""
        if self._freed:
            raise RuntimeError(FREED_MSG)
        return tuple(s.tensor() if isinstance(s, _SavedOutput) else s for s in self._saved)

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that get no gradient (their grad in ``backward`` is zeros).

        Args:
            *tensors: outputs of ``forward`` (the objects it returns).
        """
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        """Declare inputs that ``forward`` modified in place.

        Args:
            *tensors: the modified inputs; accepted for torch's API and otherwise unused
                (the outputs are recorded as new values anyway).
        """
        # accepted for torch compatibility: the outputs are recorded as new values anyway
        pass

    def set_materialize_grads(self, value):
        """Whether ``backward`` gets zeros (True, the default) or None for outputs that
        received no gradient.

        Args:
            value: True for zeros, False for None (made a bool).
        """
        self.materialize_grads = bool(value)


class _SavedOutput:
    """A saved output of the forward: rebuilt on access as the recorded output (connected
    to the graph, as torch's saved outputs are) without the ctx holding the tape alive."""

    __slots__ = ("data", "tape", "node")

    def __init__(self, t):
        self.data, self.tape, self.node = t._data, weakref.ref(t._tape), t._node

    def tensor(self):
        tape = self.tape()
        return _make(self.data, tape, self.node) if tape is not None else _make(self.data)


class _Call:
    """One recorded call: what the backward needs to run the user's code."""

    __slots__ = ("fn", "ctx", "n_args", "tensor_pos", "outputs", "packed", "name")

    def __init__(self, fn, ctx, n_args, tensor_pos, outputs, packed):
        self.fn = fn
        self.ctx = ctx
        self.n_args = n_args
        self.tensor_pos = tensor_pos  # forward-argument position of each node argument
        # per forward output: (shape, dtype, offset into the packed vector) or None
        self.outputs = outputs
        self.packed = packed
        self.name = f"{fn.__name__}Backward"

    def backward(self, g, shapes):
        """Run the user's backward on node gradient ``g`` (a Tensor); returns one gradient
        Tensor (or None) per node argument, checked against the argument ``shapes``."""
        grads_out = []
        for spec in self.outputs:
            if spec is None:  # not a Tensor
                grads_out.append(None)
                continue
            shape, dtype, offset = spec
            if offset is None:  # a non-differentiable output: its gradient is zero
                grads_out.append(_make(np.zeros(shape, dtype.np)) if self.ctx.materialize_grads
                                 else None)
                continue
            size = int(np.prod(shape))
            if self.packed:
                part = gather_flat(g, np.arange(offset, offset + size), shape)
            else:
                part = g if tuple(g.shape) == shape else reshape(g, shape)
            grads_out.append(to_dtype(part, dtype))
        result = self.fn.backward(self.ctx, *grads_out)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != self.n_args:
            if len(result) > self.n_args and all(r is None for r in result[self.n_args:]):
                result = result[:self.n_args]
            else:
                raise anomaly.sweep_error(
                    f"function {self.name} returned an incorrect number of gradients "
                    f"(expected {self.n_args}, got {len(result)})")
        out = []
        for pos, shape in zip(self.tensor_pos, shapes):
            gk = result[pos]
            if gk is None:
                out.append(None)
                continue
            if not isinstance(gk, Tensor):
                gk = _make(np.asarray(gk))
            out.append(_fit(gk, tuple(shape), pos, self.name))
        return out


def _fit(g, shape, index, name):
    """torch's rule: a gradient may have the argument's shape or one that sums down to it."""
    if tuple(g.shape) == shape:
        return g
    try:
        np.broadcast_shapes(shape, tuple(g.shape))
        ok = np.broadcast_shapes(shape, tuple(g.shape)) == tuple(g.shape) and \
            len(g.shape) >= len(shape)
    except ValueError:
        ok = False
    if not ok:
        raise anomaly.sweep_error(
            f"Function {name} returned an invalid gradient at index {index} - got "
            f"{list(g.shape)} but expected shape compatible with {list(shape)}")
    return unbroadcast(g, shape)


class Function:
    """torch.autograd.Function: subclass it with static ``forward(ctx, *args)`` and
    ``backward(ctx, *grad_outputs)`` (or ``forward(*args)`` + ``setup_context``), and call
    ``MyFn.apply(*args)``.

    Examples:
        >>> import numbagrad as torch
        >>> class Square(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * g
        >>> x = torch.tensor([3.], requires_grad=True)
        >>> y = Square.apply(x)
        >>> y.backward()
        >>> x.grad
        tensor([6.])
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """The computation, on Tensors; subclasses define it (with ``ctx`` first, or without
        it when ``setup_context`` is defined).

        Args:
            ctx: the context to save what ``backward`` needs on (absent when the subclass
                defines ``setup_context``).
            *args: the arguments given to ``apply``.
            **kwargs: the keyword arguments given to ``apply``.

        Returns:
            The output: a Tensor or a tuple of values.
        """
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save what ``backward`` needs on ``ctx`` from the inputs and the output; subclasses
        whose ``forward`` takes no ``ctx`` define it.

        Args:
            ctx: the context to save on.
            inputs: the tuple of arguments given to ``apply``.
            output: what ``forward`` returned.
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """The gradients of the inputs from the gradients of the outputs (one per input;
        None for an input that needs none); subclasses define it.

        Args:
            ctx: the context ``forward`` or ``setup_context`` saved into.
            *grad_outputs: one gradient per output of ``forward``.

        Returns:
            One gradient (a Tensor or None) per input of ``forward``, a tuple when there
            are several.
        """
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the function on ``args``: ``forward`` without recording, then one node whose
        backward is this class's ``backward``; returns ``forward``'s outputs.

        Args:
            *args: ``forward``'s arguments (after ``ctx``); gradients flow to the Tensors
                among them that require grad.
            **kwargs: ``forward``'s keyword arguments.

        Returns:
            ``forward``'s output, a Tensor or a tuple; its Tensors are new ones, recorded
            as the node's outputs when an input requires grad.
        """
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        separate = cls.setup_context is not Function.setup_context
        with grad_mode.no_grad():
            if separate:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        is_tuple = isinstance(out, tuple)
        outs = out if is_tuple else (out,)
        # fresh output Tensors (a forward may return an input itself)
        fresh = [_make(o._data) if isinstance(o, Tensor) else o for o in outs]
        diff = [k for k, o in enumerate(outs) if isinstance(o, Tensor) and
                id(o) not in ctx._non_differentiable and o.dtype.is_floating_point]
        if not (grad_mode.state.enabled and any(ctx.needs_input_grad) and diff):
            if forward_ad._current_level >= 0 and any(
                    isinstance(a, Tensor) and forward_ad._get_tangent(a) is not None
                    for a in args):  # torch's error: a custom Function has no forward rule
                raise NotImplementedError("You must implement the jvp function for custom "
                                          "autograd.Function to use it with forward mode AD.")
            return tuple(fresh) if is_tuple else fresh[0]
        tensor_pos = [k for k, a in enumerate(args) if isinstance(a, Tensor)]
        inputs = [args[k] for k in tensor_pos]
        specs, offset = [None] * len(outs), 0
        for k, o in enumerate(outs):
            if isinstance(o, Tensor) and k not in diff:
                specs[k] = (tuple(o.shape), o.dtype, None)
        for k in diff:
            shape = tuple(outs[k].shape)
            specs[k] = (shape, outs[k].dtype, offset)
            offset += int(np.prod(shape))
        packed = len(diff) > 1
        if packed:
            dt = np.result_type(*[np.asarray(outs[k]._data).dtype for k in diff])
            value = np.concatenate([np.asarray(outs[k]._data, dt).reshape(-1) for k in diff])
        else:
            value = outs[diff[0]]._data
        node_t = record(PY_FUNCTION, value, inputs)
        tape, node = node_t._tape, node_t._node
        call = _Call(cls, ctx, len(args), tensor_pos, specs, packed)
        tape.functions[node] = call
        tape.names[node] = call.name
        tape.set_flag(node, FLAG_HOOK)  # the sweep hands it to us
        if not packed:
            fresh[diff[0]] = node_t
        else:
            for k in diff:
                shape, dtype, off = specs[k]
                t = gather_flat(node_t, np.arange(off, off + int(np.prod(shape))), shape)
                t = to_dtype(t, dtype)
                t._tape.names[t._node] = call.name
                if t._tape.output_of is None:
                    t._tape.output_of = {}
                t._tape.output_of[t._node] = (node, k)  # all outputs share the call's grad_fn
                fresh[k] = t
        # a saved output is the recorded one, so a second derivative flows through it
        recorded = {id(outs[k]): fresh[k] for k in diff}
        ctx._saved = tuple(_SavedOutput(recorded[id(s)]) if id(s) in recorded else s
                           for s in ctx._saved)
        return tuple(fresh) if is_tuple else fresh[0]


class once_differentiable:  # noqa: N801 - torch's name
    """Decorator accepted for torch compatibility (backward runs without recording unless
    create_graph=True, in which case a once-differentiable backward is not differentiated)."""

    def __new__(cls, fn):
        return fn
