"""A graph's backward written out as one straight-line Python function.

A training loop records the same graph at every step, and the engine (engine._Run) decides
the same things for it at every backward: where each input's gradient goes, which adjoint
arrays exist and in what dtype, where the compiled sweep hands a node back. On a graph of
big nodes that Python is a visible part of each step. So the second backward of a graph
notes what the engine did (``_Run.log``; a graph met once may never come back), ``build``
writes that out as the source of a function calling the same kernels and NumPy
derivatives on the same arrays in the same order, and later backwards of the graph run it:
the same bits by construction (tests/test_written_backward.py compares them with the
interpreted engine's).

Only what cannot change between two backwards of one graph is written out (``eligible``):
one seed, no hooks, custom Functions, retained gradients, ``inputs=``, anomaly mode,
in-place changes or freed values; anything else is interpreted, as before. The leaves'
``.grad`` are written by the engine after either.
"""

import numpy as np

from ..core.tape import F_BIG, F_SIZE, F_VOFF, NODE_FIELDS
from ..engine import kernel_tables
from ..engine.pysource import Source
from ..engine.registry import Unwritten
from . import sweep
from .big_nodes import _statics_for

# How a big node's input got its gradient target (engine._Run._node_derivative notes it):
PASS = 0  # the node's own adjoint, handed on (an add's first operand)
SHARE = 1  # the adjoint the node handed on, shared with a second operand
STORE = 2  # a new array the kernel stores into (a first, full-size gradient)
FLIP_NEW = 3  # F.linear's weight: a new array, filled through its transpose
FLIP = 4  # the same, added into the weight's existing adjoint
UNWRITTEN = 5  # a new array a NumPy derivative stores into (registry.Unwritten)
ADD_NEW = 6  # a new zeroed array, added into
ADD = 7  # the input's existing adjoint, added into (through a temporary if dtypes differ)
NEEDS = 8  # (last) what the derivative was called with: its needs, the nodes reached

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_SEEN = "seen once"  # a graph whose next backward is noted and written out
_NOT_WRITTEN = "not written"  # a graph the engine interprets at every backward
# longer logs are not written out: compiling their source is paid per node, once, by a
# graph that may not recur often enough to earn it back (bench/bench_written.py)
_MAX_STEPS = 500


def eligible(run, seeds, inputs, collect):
    """Whether ``run``, a backward from ``seeds``, has big nodes (without, the compiled sweep
    runs it all) and makes no decision another backward of the same graph would make
    differently (``run.check``: a value was freed or changed)."""
    tape = run.tape
    return tape.has_big and len(seeds) == 1 and not inputs and collect is None and \
        not run.check and not tape.functions and not tape.hooks and \
        not tape.node_post_hooks and not tape.retained and not tape.bridges and not tape.sites


def run_from(run, seeds, inputs, collect):
    """Run the backward of ``run`` from its ``seeds`` (added already): written out where its
    graph was, else interpreted (the first time, noting what it does to write it out)."""
    if not eligible(run, seeds, inputs, collect):
        run.run(seeds[0][0] if len(seeds) == 1 else max(node for node, _ in seeds))
        return
    node, grad = seeds[0]
    statics = run.statics = _statics_for(run.tape)
    key = ("written", node, grad.dtype.char, run.retain)  # (the seed has the node's size)
    fn = statics.get(key)
    if callable(fn):
        fn(run)
        return
    if fn is None:  # a graph met once is not written out: it may not come again
        statics[key] = _SEEN
    elif fn is _SEEN:
        run.log = []
    run.run(node)
    # nothing is kept when the run compiled a kernel on the way (its sweeps differ)
    if run.log is not None and not any(e[0] == "sweep" and e[2] == sweep.NOT_COMPILED
                                       for e in run.log):
        written = build(run, run.log) if len(run.log) <= _MAX_STEPS else None
        statics[key] = _NOT_WRITTEN if written is None else written


def _dt(dt):
    return "_F32" if dt == _F32 else "_F64" if dt == _F64 else f"np.dtype({dt.str!r})"


class _Writer(Source):
    """The written backward's source, and what it reads of ``run``'s tape to write it."""

    def __init__(self, run, log):
        super().__init__(np=np, _F32=_F32, _F64=_F64, _Unwritten=Unwritten, _sweep=sweep.sweep,
                         _BW=sweep.BW, _diverged=_diverged)
        self.run, self.tape = run, run.tape
        # an adjoint shared by two nodes (an add's operands): what is written into it, and
        # its release, go through the engine's own bookkeeping (copied when first written)
        self.shares = any(act[0] == SHARE for e in log if e[0] == "node" for act in e[4])

    def field(self, node, f):
        return self.tape.nodes[node * NODE_FIELDS + f]

    def value(self, node, dt):
        """Source of ``_Run.value(node).astype(dt, copy=False)``."""
        voff = self.field(node, F_VOFF)
        if voff >= 0:
            flat = f"val[{voff}:{voff + self.field(node, F_SIZE)}]"
        else:
            flat = f"np.ascontiguousarray(bv[{self.field(node, F_BIG)}]).reshape(-1)"
        return f"{flat}.astype({_dt(dt)}, copy=False)"

    def array(self, node, dt, shape):
        """Source of ``_Run.array(node, dt)``."""
        voff = self.field(node, F_VOFF)
        if voff >= 0:
            return f"val[{voff}:{voff + self.field(node, F_SIZE)}].reshape({shape!r})" \
                f".astype({_dt(dt)})"
        return f"np.asarray(bv[{self.field(node, F_BIG)}])"

    def adjoint(self, node):
        """Source of an existing adjoint of ``node``: its arena span or its own array."""
        voff = self.field(node, F_VOFF)
        if voff >= 0:
            return f"adj[{voff}:{voff + self.field(node, F_SIZE)}]"
        return f"big_adj[{node}]"

    def writable(self, node, dt):
        """Source of ``_Run.writable(node, dt)`` for an existing adjoint."""
        if self.shares and self.field(node, F_VOFF) < 0:
            return f"run.writable({node}, {_dt(dt)})"
        return self.adjoint(node)


def _diverged(i, status, node):
    raise RuntimeError(f"numbagrad: a backward written out for this graph expected the sweep to "
                       f"stop at node {node}, it stopped at {i} (status {status}): please report "
                       "this as a bug")


def build(run, log):
    """The function ``written(run)`` doing what ``log`` says ``run`` did after its seeds."""
    w = _Writer(run, log)
    w.add("big_adj, adj, val, bv = run.big_adj, run.adj, run.val, run.tape.big_val",
          "iat, fat, touched, freed, spare = run.iat, run.fat, run.touched, run.freed, "
          "run.spare")
    if any(e[0] == "sweep" for e in log):
        w.add("block, arity, saves = tables()")
        w.bind("tables", kernel_tables.sweep_tables)
    for e in log:
        if e[0] == "sweep":
            _, start, status, i = e
            w.add(f"status, i, _ = _sweep(block, _BW, arity, saves, run.nodes, run.args, "
                  f"run.shapes, iat, fat, val, adj, touched, freed, run.dirty, {start}, "
                  f"run.retain, run.check)",
                  f"if status != {status} or i != {i}:",
                  f"    _diverged(i, status, {i})")
        else:
            _node(w, e)
    return w.function("written(run)", "<numbagrad written backward>")


def _node(w, entry):
    """Node ``i``'s derivative as engine._Run._node_derivative ran it, and its adjoint let
    go of as _Run._big_node does."""
    _, i, had, converted, acts = entry
    s = w.run.statics[i]
    sn = w.bind(f"s{i}", s)
    dt = _dt(s.dt)
    if w.field(i, F_VOFF) >= 0 or had:
        w.add(f"g = {w.adjoint(i)}")
    else:
        w.add(f"g = run.adjoint({i}, {dt})")
    if converted:
        w.add(f"g = g.astype({dt})")
    w.add(f"ia, fa = iat[{s.io}:{s.io_end}], fat[{s.fo}:{s.fo_end}]")
    grads = [None] * len(s.argn)
    after = []
    needs, reached = s.needs, s.argn
    for act in acts:
        kind = act[0]
        if kind == NEEDS:
            needs, reached = act[1], act[2]
            continue
        k, a = act[1], act[2]
        gk = f"g{k}"
        size_a = w.field(a, F_SIZE)
        if kind == PASS:
            w.add(f"given = big_adj[{a}] = big_adj.pop({i})")
            continue
        if kind == SHARE:
            w.add(f"big_adj[{a}] = given", "entry = run.shared.get(id(given))",
                  "if entry is None:", "    run.shared[id(given)] = [given, 2]", "else:",
                  "    entry[1] += 1")
            continue
        if kind == STORE:
            w.add(f"{gk} = big_adj[{a}] = run._unwritten({size_a}, {dt})")
        elif kind in (FLIP_NEW, FLIP):
            shape = w.tape.shape_of(a)
            if kind == FLIP_NEW:
                w.add(f"{gk} = big_adj[{a}] = np.empty({size_a}, {dt})",
                      f"{gk} = {gk}.reshape({shape!r}).T.view(_Unwritten)")
            else:
                own = f"run._own({a}, big_adj[{a}])" if w.shares else f"big_adj[{a}]"
                w.add(f"{gk} = {own}.reshape({shape!r}).T")
        elif kind == UNWRITTEN:
            w.add(f"{gk} = big_adj[{a}] = np.empty({size_a}, {dt})",
                  f"{gk} = {gk}.view(_Unwritten)")
        elif kind == ADD_NEW:
            w.add(f"{gk} = big_adj[{a}] = run._zeros({size_a}, {dt})")
        elif act[3]:  # ADD through a temporary in the compute dtype
            w.add(f"t{k} = {w.writable(a, s.dt)}", f"{gk} = np.zeros(t{k}.shape, {dt})")
            after.append(f"t{k} += {gk}")
        else:
            w.add(f"{gk} = {w.writable(a, s.dt)}")
        grads[k] = gk
    if s.kernel is None:
        xs = [w.array(a, s.dt, sh) if r else "None"
              for a, r, sh in zip(s.argn, s.read_x, s.arg_shapes)]
        gxs = ["None" if gk is None else f"{gk}.reshape({sh!r})"
               for gk, sh in zip(grads, s.arg_shapes)]
        w.add(f"{sn}.op.numpy_bw(g.reshape({s.shape!r}), [{', '.join(xs)}], "
              f"[{', '.join(gxs)}], ia, fa)")
    else:
        gs = [f"{sn}.empty" if gk is None else gk for gk in grads]
        if s.op.arity == -1:
            for k, need in enumerate(needs):
                if need:
                    w.add(f"{sn}.kernel(g, {gs[k]}, {sn}.sh, {sn}.sh_args[{k}], {k}, ia, fa)")
        elif any(needs):
            y = w.value(i, s.dt) if s.read_y else f"{sn}.empty"
            xs = [w.value(a, s.dt) if r else f"{sn}.empty" for a, r in zip(s.argn, s.read_x)]
            tail = [f"{sn}.sh"] + [f"{sn}.sh_args[{k}]" for k in range(len(s.argn))] + \
                [repr(n) for n in needs]
            w.add(f"{sn}.kernel(g, {y}, {', '.join(xs + gs + tail)}, ia, fa)")
    w.add(*after)
    for a, need in zip(reached, s.needs):
        if need:
            w.add(f"touched[{a}] = 1")
    if not w.run.retain:
        w.add(f"freed[{i}] = 1")
    w.add(f"dead = big_adj.pop({i}, None)")
    if w.shares:
        w.add("entry = run.shared.get(id(dead)) if run.shared else None",
              "if entry is not None:", "    run._unshare(entry)",
              "elif dead is not None and dead.base is None:", "    spare.append(dead)")
    else:
        w.add("if dead is not None and dead.base is None:", "    spare.append(dead)")
