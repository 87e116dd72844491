"""Whether a transformed function's outputs depend on a tensor that requires grad other than
the transform's own inputs (a module's weights, closed over): torch's transforms then keep
the results' graph to it, so numbagrad's differentiate with ``create_graph`` and hand back
results with their graph."""

import weakref

from ..tensor import Tensor

# the leaves transforms made for their differentiated inputs (id -> weak reference): an outer
# transform's graph reaches an inner one's, which is no closed-over tensor
_made = {}


def mark_made(t):
    """Note ``t`` as a leaf a transform made for an input of its own; returns ``t``."""
    key = id(t)

    def drop(_ref, key=key):
        if _made.get(key) is _ref:
            del _made[key]
    _made[key] = weakref.ref(t, drop)
    return t


def _made_by_a_transform(t):
    ref = _made.get(id(t))
    return ref is not None and ref() is t


def reaches_other_leaf(outputs, leaves):
    """Whether the graph of ``outputs`` (Tensors) reaches a tensor that requires grad other
    than ``leaves`` and the leaves transforms made: a leaf of its tape, or a tensor of an
    older tape (a bridge)."""
    own = {id(x) for x in leaves}
    for o in outputs:
        if not isinstance(o, Tensor) or not o._requires_grad:
            continue
        tape = o._tape
        if tape is None:  # the function returned a leaf that requires grad
            if id(o) not in own:
                return True
            continue
        others = {node for node, t in tape.leaves
                  if id(t) not in own and not _made_by_a_transform(t)}
        others.update(tape.bridges)
        if not others:
            continue
        seen, todo = set(), [o._node]
        while todo:
            node = todo.pop()
            if node in others:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(tape.arg_nodes(node))
    return False
