"""``has_aux`` outputs of a compiled gradient transform: how each leaf of the aux pytree is
recomputed at a replay.

A Tensor leaf computed on the trace's tape is read from the replay's arena (its node), one
derived off the tape (``detach()``, a comparison) is recomputed by its guard recipe, and
anything else (a constant tensor, a Python value) is what the trace saw: it cannot depend on
the inputs without a read the trace guards.
"""

import numpy as np

from ..core import trace_guards
from ..func import transforms as func_mod
from ..tensor import Tensor, _make


class Aux:
    """The recipes of one trace's aux pytree: ``("value", x)`` for a leaf that is not a
    Tensor, else a guard recipe (core/trace_guards; ``("const", array)`` for a constant)."""

    __slots__ = ("recipes", "spec", "reads")

    def __init__(self, tape, aux, node_of):
        leaves, self.spec = func_mod._tree_flatten(aux)
        self.recipes = []
        for x in leaves:
            r = trace_guards.recipe_of(tape, x) if isinstance(x, Tensor) else None
            if r is not None:
                r = trace_guards.remap([(r, None, None, None)], node_of)[0][0]
            elif isinstance(x, Tensor):
                r = ("const", np.array(x._data, copy=True))
            else:
                r = ("value", x)
            self.recipes.append(r)
        # the nodes whose replayed values the leaves need: the replay must fill its arena
        self.reads = sorted({n for r in self.recipes if r[0] != "value"
                             for n in trace_guards.nodes(r)})


    def values(self, value_of):
        """The leaves' arrays (copies: the arena is reused), ``value_of(node)`` giving a
        node's replayed values."""
        return [r[1] if r[0] in ("value", "const") else
                np.array(trace_guards.evaluate(r, value_of), copy=True) for r in self.recipes]

    def tree(self, leaves, numpy_mode):
        """The aux pytree as eager's transform hands it back: NumPy leaves (a 0-d one as a
        Python number) in NumPy mode, else detached Tensors."""
        def out(r, x):
            if r[0] == "value":
                return x
            if numpy_mode:
                a = np.asarray(x)
                return a.item() if a.ndim == 0 else a
            return _make(np.array(x, copy=True))
        return func_mod._tree_unflatten([out(r, x) for r, x in zip(self.recipes, leaves)],
                                        self.spec)


def split(out):
    """``(output, aux)`` of a ``has_aux`` function's result; eager's error otherwise."""
    return func_mod._split_aux(out, True, "grad_and_value(f)(*args)")
