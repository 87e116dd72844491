"""Guards of a numbagrad.compile trace: values that leave the graph while it is traced.

A trace records the ops that carry gradients; a value read out of it (``item()``, ``bool()``,
a comparison mask, argmax indices, ``detach()``) is a constant of the trace, right only for
inputs that give the same value. Each such read becomes a guard: a recipe that recomputes it
from the replay's values (``("node", n, shape, dtype)``: node n's value; ``("const", a)``;
``("apply", fn, recipes)``: NumPy ``fn`` of recipes) and the value the trace saw. A replay
whose guards do not all hold is not used: the caller traces again (compiler/compiled.py).

Only the boundary needs guards: anything computed from guarded values and constants alone is
determined by them, so a mask's ``~mask`` or ``mask.any()`` adds none.
"""

import sys
import threading

import numpy as np

from .tape import traced_tape


class _State:
    __slots__ = ("tracing",)


# compile traces in progress in any thread: while none is, every hook returns at once
state = _State()
state.tracing = 0
_count_lock = threading.Lock()  # += on an attribute is not atomic across threads


def entering(n):
    """A trace starts (n = 1) or ends (n = -1) on some thread."""
    with _count_lock:
        state.tracing += n


class TraceReadError(RuntimeError):
    """A traced value was read by Python while tracing with ``fullgraph=True``."""


class Guards:
    """The guards of one trace in progress (``Tape.guards``): ``items`` are
    ``(recipe, value seen, where, what)``; ``derived`` maps id(tensor) of values computed
    from the trace off its tape to (tensor, recipe)."""

    __slots__ = ("items", "derived", "opaque", "sources", "strict", "int_args",
                 "int_recipes", "int_static")

    def __init__(self, strict=False):
        self.items = []
        self.derived = {}
        self.opaque = []  # (where, what) of reads no recipe recomputes: the trace is not used
        self.sources = set()  # source nodes made for a guard (no op may use them: no grad)
        self.strict = strict  # fullgraph=True: a read raises instead of guarding
        # integer array arguments (labels): id -> argument leaf; ops that turn one into node
        # attributes leave (node, leaf, attributes_of(values)) in int_recipes; any other use
        # puts the leaf in int_static (its values stay part of the trace's signature)
        self.int_args, self.int_recipes, self.int_static = {}, [], set()


def recipe_of(tape, t):
    """How to recompute tensor-or-value ``t`` from the replay, or None for a constant."""
    leaf = tape.guards.int_args.get(id(t))
    if leaf is not None:  # Python (or a comparison) reads an integer argument's values
        tape.guards.int_static.add(leaf)
    owner = getattr(t, "_tape", False)
    if owner is tape and t._node >= 0:
        return ("node", t._node, t._data.shape, t._data.dtype)
    if owner is None and t._requires_grad:  # an input or parameter: its source node
        if id(t) not in tape.sources:
            tape.guards.sources.add(tape.source(t))
        return ("node", tape.source(t), t._data.shape, t._data.dtype)
    entry = tape.guards.derived.get(id(t))
    return entry[1] if entry is not None else None


def site():
    """``file:line`` of the first caller outside numbagrad (the user's line)."""
    f = sys._getframe(1)
    while f is not None and f.f_globals.get("__name__", "").split(".")[0] == "numbagrad":
        f = f.f_back
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "?"


def _tracing():
    tape = traced_tape()
    return tape if tape is not None and tape.guards is not None else None


def derive(result, fn, operands, what):
    """Note that Tensor ``result`` is NumPy ``fn`` of ``operands`` (Tensors or constants),
    computed off the tape; when an operand comes from the trace, it becomes a guard.
    Returns ``result``."""
    if not state.tracing:
        return result
    tape = _tracing()
    if tape is None:
        return result
    recipes = [recipe_of(tape, o) for o in operands]
    if all(r is None for r in recipes):
        return result
    recipes = [r if r is not None else ("const", np.asarray(getattr(o, "_data", o)))
               for r, o in zip(recipes, operands)]
    recipe = ("apply", fn, tuple(recipes))
    _guard(tape, recipe, result._data, what)
    tape.guards.derived[id(result)] = (result, recipe)
    return result


def opaque(result, operands, what):
    """Like ``derive`` for a value no recipe here recomputes (an op run under no_grad):
    when it comes from the trace, the trace cannot be replayed. Returns ``result``."""
    if not state.tracing:
        return result
    tape = _tracing()
    if tape is not None and any(recipe_of(tape, o) is not None for o in operands):
        where = site()
        if tape.guards.strict:
            _refuse(what, where)
        tape.guards.opaque.append((where, what))
    return result


def read(t, what):
    """Python reads traced Tensor ``t``'s value (``what``: ``item()``, ``bool()``...)."""
    if not state.tracing:
        return
    tape = _tracing()
    if tape is None or id(t) in tape.guards.derived:  # a derived value is guarded already
        return
    recipe = recipe_of(tape, t)
    if recipe is not None:
        _guard(tape, recipe, t._data, what)


def _guard(tape, recipe, value, what):
    where = site()
    if tape.guards.strict:
        _refuse(what, where)
    tape.guards.items.append((recipe, np.array(value, copy=True), where, what))


def _refuse(what, where):
    raise TraceReadError(
        f"numbagrad.compile(fullgraph=True): {what} at {where} reads a value computed from "
        "the inputs while tracing; the trace would keep it as a constant. Compute it with "
        "tensor ops (torch.where instead of if), move it out of the compiled function, or "
        "compile without fullgraph=True (the read then becomes a guard that traces again "
        "when it changes)")


def remap(items, node_of):
    """The guards with tape node numbers mapped by ``node_of`` (a trace's merged nodes)."""
    def walk(r):
        if r[0] == "node":
            return ("node", node_of(r[1]), r[2], r[3])
        if r[0] == "apply":
            return ("apply", r[1], tuple(walk(s) for s in r[2]))
        return r
    return [(walk(r), v, where, what) for r, v, where, what in items]


def nodes(recipe):
    """The node numbers a recipe reads."""
    if recipe[0] == "node":
        return [recipe[1]]
    return [n for r in recipe[2] for n in nodes(r)] if recipe[0] == "apply" else []


def evaluate(recipe, value_of):
    """The recipe's value, ``value_of(node)`` giving a node's replayed values (flat)."""
    kind = recipe[0]
    if kind == "node":
        return value_of(recipe[1]).reshape(recipe[2]).astype(recipe[3], copy=False)
    if kind == "const":
        return recipe[1]
    return recipe[1](*[evaluate(r, value_of) for r in recipe[2]])


def failing(items, value_of):
    """The first guard that does not hold for the replayed values, or None."""
    for recipe, seen, where, what in items:
        now = np.asarray(evaluate(recipe, value_of))
        if now.shape != seen.shape or now.dtype != seen.dtype:
            return where, what
        # bytes: exact, and cheaper than array_equal (a NaN is the NaN the trace saw)
        if now.tobytes() != seen.tobytes() and not (
                seen.dtype.kind == "f" and np.array_equal(now, seen, equal_nan=True)):
            return where, what
    return None


def int_attributes(t, out, attributes_of):
    """Op-side: the attributes of ``out``'s node are ``attributes_of(values)`` (``(iat,
    fat)``) of integer Tensor ``t``'s values; when ``t`` is an integer argument of a trace,
    a replay recomputes them for the call's values. Returns ``out``."""
    if state.tracing:
        tape = _tracing()
        if tape is not None and id(t) in tape.guards.int_args and out._tape is tape:
            tape.guards.int_recipes.append((out._node, tape.guards.int_args[id(t)],
                                            attributes_of))
    return out


def int_used(tensors):
    """An op used these Tensors' values without a recipe: integer arguments among them stay
    part of the trace's signature."""
    tape = _tracing()
    if tape is not None and tape.guards.int_args:
        for t in tensors:
            leaf = tape.guards.int_args.get(id(t))
            if leaf is not None:
                tape.guards.int_static.add(leaf)
