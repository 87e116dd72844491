"""The differentiable backward (create_graph=True): the reverse sweep run in Python, each
node's derivative computed with numbagrad ops (its ``vjp`` rule), so the backward is
recorded on the tape like any forward and can be differentiated again, to any order.

It walks as the compiled sweep does, with the sweep's own parts (autograd/sweep.py): the
tapes newest first, every bridge's adjoint seeding its older tape (``TapeOrder``), and on
each the nodes reached and needing a gradient in decreasing index (``Walk``, the sweep's
``reached`` test); only what it does at a node differs. The gradient graph is
appended to the tapes of the tensors it uses, so its nodes point straight at the original
graph's nodes (a saved input of a rule is the node itself, as torch's saved variables are).
Cost: a few eager ops per node (microseconds each), paid only when create_graph=True; the
backward *of* the recorded gradient graph is the compiled sweep again.
"""

import numpy as np

from ..core.tape import retire
from ..engine import registry
from ..factories import empty_like
from ..ops.elementwise.pointwise import to_dtype
from ..ops.shape.movement import reshape
from ..ops.vjp import VjpContext, elementwise_vjp
from ..tensor import Tensor, _make, post_accumulate
from . import anomaly
from .checks import FREED_MSG, checked_hook_result, dirty_message
from .sweep import TapeOrder, Walk

_LEAF, _CONST, _BRIDGE = registry.LEAF.code, registry.CONST.code, registry.BRIDGE.code
# set by numbagrad.autograd.forward_ad: gives a tensor rebuilt for a node the tangent the
# node's tensor had (so tangents flow through this backward: forward over reverse)
node_tangent = None


class _TapeView:
    """Read access to one tape's nodes as Tensors, without pinning its buffers (the tape
    grows while we walk it: the gradient graph is recorded onto it)."""

    def __init__(self, tape):
        self.tape = tape
        self.by_node = {}  # source node -> its tensor (leaves, constants, bridged tensors)
        for t in tape.source_refs:
            node = tape.sources.get(id(t))
            if node is not None:
                self.by_node[node] = t
        self.made = {}

    def tensor(self, node):
        """The Tensor whose value is ``node``'s, connected to the graph at ``node``."""
        t = self.by_node.get(node)
        if t is not None:
            return t
        t = self.made.get(node)
        if t is None:
            t = self.made[node] = _make(self.tape.value(node), self.tape, node)
            if node_tangent is not None:
                node_tangent(t, self.tape, node)
        return t


def _accumulate_tensor(t, g):
    """``t.grad += g`` out of place, keeping g's graph (torch does this under create_graph)."""
    if tuple(g.shape) != t._data.shape:
        g = reshape(g, t._data.shape)
    g = to_dtype(g, t.dtype)
    if t._grad is None:
        if g._requires_grad:
            # torch copies the first gradient into a buffer laid out like the variable
            # (AccumulateGrad's clone_obey_contract), so .grad shows CopyBackwards
            g = empty_like(g).copy_(g)
        t._grad = g
    else:
        t._grad = t._grad + g
    if t._tape is None:
        post_accumulate(t)


def _run_hooks(hooks, g):
    for hook in list(hooks):
        result = checked_hook_result(hook, g, hook(g))
        if result is not None:
            g = result
    return g


def _check_saved(tape, i, op, argn, needs):
    """torch's errors for saved values that were freed or modified in place."""
    reads = set()
    for k, need in enumerate(needs):
        if need:
            reads.update(op.reads(k))
    if not reads:
        return
    if tape.freed is not None and i < len(tape.freed) and tape.freed[i]:
        raise anomaly.sweep_error(FREED_MSG, tape, i)
    checked = ([i] if "y" in reads else []) + \
        [a for k, a in enumerate(argn) if f"x{k}" in reads]
    if any(a in tape.dirty and tape.dirty[a][5] > i for a in checked):
        raise anomaly.sweep_error(dirty_message(tape, i), tape, i)


def _push(adj, argn, needs, grads, touched=None):
    """Add a node's input gradients into its arguments' adjoints (same tape), marking each
    argument reached (``touched``, the walk's)."""
    for a, need, ga in zip(argn, needs, grads):
        if need and ga is not None:
            prev = adj.get(a)
            adj[a] = ga if prev is None else prev + ga
            if touched is not None:
                touched[a] = 1


def run_backward_graph(roots, seeds, retain_graph, inputs, collect=None):
    """As engine.run_backward, with Tensor adjoints: ``seeds`` are Tensors (they may require
    grad themselves), the gradients that reach ``.grad`` or ``collect`` are Tensors with a
    grad_fn wherever they depend on something that requires grad."""
    order = TapeOrder()
    for t, g in zip(roots, seeds):
        order.add(t._tape, t._node, g if isinstance(g, Tensor) else _make(np.asarray(g)))
    wanted = None if inputs is None else {id(t) for t in inputs}
    nonleaf_inputs = {} if inputs is None else \
        {(t._tape.serial, t._node): t for t in inputs if t._tape is not None}

    def deliver(t, g):
        if collect is None:
            _accumulate_tensor(t, g)
        else:
            collect[id(t)] = g if id(t) not in collect else collect[id(t)] + g

    for tape, tape_seeds in order:
        adj = {}  # node -> its adjoint Tensor, summed as its gradients arrive
        _push(adj, [node for node, _ in tape_seeds], [True] * len(tape_seeds),
              [g for _, g in tape_seeds])
        view = _TapeView(tape)
        walk = Walk(tape, adj)
        visited = []
        for i in walk:
            g = adj.pop(i, None)
            if g is None:
                continue
            code = tape.code(i)
            if i in tape.hooks and code != _LEAF:
                g = _run_hooks(tape.hooks[i][0], g)
            if inputs is None and i in tape.retained and tape.retained[i]._node == i:
                deliver(tape.retained[i], g)
            t_in = nonleaf_inputs.get((tape.serial, i))
            if t_in is not None:
                deliver(t_in, g)
            if code == _LEAF:
                leaf = view.by_node.get(i)
                if leaf is not None and leaf._requires_grad and \
                        (wanted is None or id(leaf) in wanted):
                    hooks = getattr(leaf, "_hooks", None)
                    deliver(leaf, _run_hooks(hooks, g) if hooks and collect is None else g)
                continue
            if code == _CONST:
                continue
            if code == _BRIDGE:
                older, older_node = tape.bridges[i]
                order.add(older, older_node, g)
                continue
            op = registry.OPS[code]
            argn = tape.arg_nodes(i)
            needs = [tape.needs_grad(a) for a in argn]
            call = tape.functions.get(i)
            if call is not None:  # a custom Function: its backward runs with grad mode on
                if call.ctx._freed:
                    raise anomaly.sweep_error(FREED_MSG, tape, i)
                grads = call.backward(g, [tape.shape_of(a) for a in argn])
                if not retain_graph:
                    call.ctx._freed = True
                visited.append(i)
                _push(adj, argn, needs, grads, walk.touched)
                continue
            _check_saved(tape, i, op, argn, needs)
            rule = op.vjp or (elementwise_vjp if op.elementwise else None)
            if rule is None:
                raise NotImplementedError(f"numbagrad: {op.grad_fn} has no differentiable "
                                          "derivative (create_graph=True)")
            iat, fat = tape.attrs(i)
            ctx = VjpContext(op, [lambda a=a: view.tensor(a) for a in argn],
                             lambda: view.tensor(i), iat, fat, tape.shape_of(i),
                             [tape.shape_of(a) for a in argn], needs,
                             [tape.float_dtype(a) for a in argn])
            grads = rule(ctx, g)
            if i in tape.sites and anomaly.state.check_nan:
                for k, ga in enumerate(grads):
                    if ga is not None and np.isnan(np.asarray(ga._data)).any():
                        raise anomaly.nan_error(tape, i, op.grad_fn, k)
            visited.append(i)
            _push(adj, argn, needs, grads, walk.touched)
        if not retain_graph:
            if tape.freed is None or len(tape.freed) < len(tape):
                freed = np.zeros(len(tape), np.uint8)
                if tape.freed is not None:
                    freed[:len(tape.freed)] = tape.freed
                tape.freed = freed
            tape.freed[visited] = 1
            tape.any_freed = True
            retire(tape)
