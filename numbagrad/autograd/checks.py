"""What a backward checks of what it reads, with torch's messages: a graph already freed, a
saved value changed in place since (and the views of a changed tensor), a hook's result."""

import re

from ..engine import registry
from ..grad_fn import torch_node_name
from ..tensor import Tensor
from . import anomaly

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def mark_dirty_views(tape):
    """Mark dirty the views recorded of a node whose value was changed in place (they share
    its memory and version counter): torch names them as regenerated, "output 0 of
    AsStrided", with their own shape."""
    dirty = tape.dirty
    for v in tape.view_nodes:  # in recording order: a view of a view follows its base
        base = tape.arg_nodes(v)[0]
        if v not in dirty and base in dirty:
            (dtype, _), counter, _, expected, _, exempt = dirty[base]
            dirty[v] = ((dtype, tape.shape_of(v)), counter, "AsStrided", expected, _gone, exempt)


def _gone():
    return None


def dirty_message(tape, i):
    """torch's message for a saved value of node ``i`` changed in place since."""
    for node in (i, *tape.arg_nodes(i)):
        if node in tape.dirty and tape.dirty[node][5] > i:
            (dtype, shape), counter, producer, expected, tensor, _ = tape.dirty[node]
            tensor = tensor()
            if node != i and tensor is not None and tensor._base is not None:
                producer = "AsStrided"  # a view changed since: torch regenerates its grad_fn
            elif node != i and tensor is not None and tensor._tape is not None:
                # a saved input: torch names the op the tensor is the output of now (the
                # last in-place op on it); a node's saved output, the node itself
                producer = tensor._tape.names.get(tensor._node) or \
                    registry.OPS[tensor._tape.code(tensor._node)].grad_fn
            desc = f"torch.{dtype.scalar_name}Tensor [{', '.join(map(str, shape))}]"
            version = counter[0]
            # torch names the forward op here: ExpBackward0 -> Exp
            name = torch_node_name(re.sub(r"Backward\d*$", "", producer or ""))
            source = f", which is output 0 of {name}," if producer else ""
            hint = ("the backtrace further above shows the operation that failed to compute "
                    "its gradient. The variable in question was changed in there or anywhere "
                    "later. Good luck!") if anomaly.state.enabled else (
                "enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
            return (
                "one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{desc}]{source} is at version {version}; expected "
                f"version {expected} instead. Hint: {hint}"
            )
    return "one of the variables needed for gradient computation has been modified by an " \
           "inplace operation"


def checked_hook_result(hook, grad, result):
    """A tensor hook's return value, checked as torch checks it: None, or a Tensor of the
    gradient's dtype and shape."""
    if result is None:
        return None
    name = getattr(hook, "__name__", type(hook).__name__)
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result.dtype is not grad.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was "
                           f"torch.{grad.dtype.scalar_name}Tensor got "
                           f"torch.{result.dtype.scalar_name}Tensor)")
    if tuple(result.shape) != tuple(grad.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return result
