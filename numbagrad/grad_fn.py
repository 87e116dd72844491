"""What ``tensor.grad_fn`` returns: a node of the graph as torch shows it.

Each node's object is an instance of a class named as torch's (``type(y.grad_fn).__name__``
is ``"AddBackward0"``), one object per node while anyone holds it (``y.grad_fn is
y.grad_fn``), shared by all outputs of one custom Function call. ``next_functions`` lists
the inputs as torch does, with ``(None, 0)`` for a Python number torch counts as an operand;
``metadata`` is a dict kept with the graph; ``register_prehook`` and ``register_hook`` run in
the backward as torch's node hooks do.
"""

import weakref

from .core.tape import BRIDGE_CODE, CONST_CODE, F_CODE, FLAG_HOOK, LEAF_CODE, NODE_FIELDS

# torch qualifies the nodes it implements by hand (CopySlices, AccumulateGrad)
_QUALIFIED = {"CopySlices", "CopyBackwards", "AccumulateGrad"}


def torch_node_name(short):
    """torch's ``grad_fn.name()`` of a node whose class is ``short`` (``MulBackward0``,
    ``torch::autograd::CopySlices``), as its messages name it too."""
    return f"torch::autograd::{short}" if short in _QUALIFIED else short

# op code -> "first", "last" or a position: torch's node also lists an operand that is no
# node here (x + 2: AddBackward0 has two next_functions, the second (None, 0)); filled by the
# op table
NONE_OPERANDS = {}


def none_position(code, n):
    """Where torch lists a None among the ``n`` inputs of a node of op ``code``, or None."""
    at = NONE_OPERANDS.get(code) if NONE_OPERANDS else None
    if at is None:
        return None
    return 0 if at == "first" else n if at == "last" else at


class GradFn:
    """A node of the graph: ``name()``, ``next_functions``, ``metadata`` and node hooks.

    Nodes are reached through ``tensor.grad_fn`` rather than made directly.

    Args:
        tape: the tape the node is recorded on.
        node: the node's index on that tape.
    """

    __slots__ = ("_tape", "_node", "__weakref__")

    def __init__(self, tape, node):
        self._tape = tape
        self._node = node

    def _short_name(self):
        return self._tape.grad_fn_name(self._node)

    def name(self):
        """The node's class name, as torch's (``MulBackward0``)."""
        return torch_node_name(self._short_name())

    def __repr__(self):
        custom = self._tape.names and self._node in self._tape.names
        prefix = "torch.autograd.function." if custom else ""  # a custom Function's node
        return f"<{prefix}{self._short_name()} object at {hex(id(self))}>"

    def __eq__(self, other):
        return isinstance(other, GradFn) and other._tape is self._tape and \
            other._node == self._node

    def __hash__(self):
        return hash((id(self._tape), self._node))

    @property
    def next_functions(self):
        """The nodes of this node's inputs, with each one's output index: ``((node, 0), ...)``,
        None for an input that needs no gradient."""
        tape = self._tape
        out = []
        for a in tape.arg_nodes(self._node):
            code = tape.code(a)
            if not tape.needs_grad(a) or code == CONST_CODE:
                out.append((None, 0))
            elif code == BRIDGE_CODE:
                out.append(node_output(*tape.bridges[a]))
            elif code == LEAF_CODE:
                out.append((node_object(tape, a, AccumulateGrad), 0))
            else:
                out.append(node_output(tape, a))
        at = none_position(tape.nodes[self._node * NODE_FIELDS + F_CODE], len(out))
        if at is not None:
            out.insert(at, (None, 0))
        return tuple(out)

    @property
    def metadata(self):
        """A dict kept with the graph for as long as the node lives (torch's ``metadata``)."""
        tape = self._tape
        if tape.node_metadata is None:
            tape.node_metadata = {}
        return tape.node_metadata.setdefault(self._node, {})

    def register_prehook(self, hook):
        """Call ``hook(grad_outputs)`` before this node's derivative runs; a returned tuple
        replaces the gradients. Returns a removable handle.

        Args:
            hook: a callable taking the tuple of the gradients of the node's outputs and
                returning None or a tuple to use instead.

        Returns:
            A handle whose ``remove()`` unregisters the hook.
        """
        def on_grad(grad):
            result = hook((grad,))
            return None if result is None else result[0]
        return self._add_hook(on_grad, hook)

    def register_hook(self, hook):
        """Call ``hook(grad_inputs, grad_outputs)`` after this node's derivative ran; a
        returned tuple replaces ``grad_inputs``. Returns a removable handle.

        Args:
            hook: a callable taking (grad_inputs, grad_outputs), tuples, and returning None
                or a tuple to use as the gradients of the inputs.

        Returns:
            A handle whose ``remove()`` unregisters the hook.
        """
        tape, node = self._tape, self._node
        if tape.node_post_hooks is None:
            tape.node_post_hooks = {}
        hooks = tape.node_post_hooks.setdefault(node, [])
        hooks.append(hook)
        tape.set_flag(node, FLAG_HOOK)  # the sweep hands the node to Python
        return HookHandle(hooks, hook)

    def _add_hook(self, on_grad, hook):
        tape, node = self._tape, self._node
        entry = tape.hooks.get(node)
        if entry is None:
            shape = tape.shape_of(node)
            entry = tape.hooks[node] = ([], shape, tape.float_dtype(node))
        entry[0].append(on_grad)
        tape.set_flag(node, FLAG_HOOK)
        return HookHandle(entry[0], on_grad)


class AccumulateGrad(GradFn):
    __slots__ = ()

    def _short_name(self):
        return "AccumulateGrad"

    @property
    def variable(self):
        for node, t in self._tape.leaves:
            if node == self._node:
                return t
        return None

    @property
    def next_functions(self):
        """The nodes of this node's inputs, with each one's output index: ``((node, 0), ...)``,
        None for an input that needs no gradient."""
        return ()


class HookHandle:
    """What register_hook returns: ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


_classes = {}


def node_class(name, base=GradFn):
    """The class torch's node of this name has (``AddBackward0``), made once."""
    cls = _classes.get((name, base))
    if cls is None:
        cls = _classes[(name, base)] = type(name, (base,), {"__slots__": ()})
    return cls


def node_output(tape, node):
    """``(grad_fn, output index)`` of ``node``: the node itself, or for one output of a custom
    Function call, that call's node and the output's position."""
    owner = tape.output_of.get(node) if tape.output_of else None
    if owner is not None:
        return node_object(tape, owner[0]), owner[1]
    return node_object(tape, node), 0


def node_object(tape, node, base=GradFn):
    """The one live object of ``node`` (made on first use; kept only while referenced, so
    the tape and its node objects form no reference cycle)."""
    key = (node, base is AccumulateGrad)
    if tape.node_objects is None:
        tape.node_objects = weakref.WeakValueDictionary()
    obj = tape.node_objects.get(key)
    if obj is None:
        name = "AccumulateGrad" if base is AccumulateGrad else tape.grad_fn_name(node)
        obj = node_class(name, base)(tape, node)
        tape.node_objects[key] = obj
    return obj


def grad_fn_of(tape, node):
    """``tensor.grad_fn`` for the tensor recorded at ``node``."""
    return node_output(tape, node)[0]

