"""After a tape's sweep: the gradients it produced written into the ``.grad`` of its
leaves and retained non-leaves (after their hooks), or of ``inputs`` only, or summed by
input for ``autograd.grad``."""

import numpy as np

from ..core.tape import F_SIZE, F_VOFF, NODE_FIELDS
from ..engine.fast_push import reached_leaves, write_scalar_grads
from ..tensor import _accumulate_grad, _make, post_accumulate

_F64 = np.dtype(np.float64)
# above this many leaves, what each leaf needs is gathered in one vectorized read first
_FEW_LEAVES = 8


def _write_leaf(run, node, leaf, voff, first=None):
    """Write ``leaf``'s gradient (node ``node``, its adjoint at ``voff``) into its ``.grad``,
    after its hooks; ``first``: its adjoint's first value, when already read."""
    data = leaf._data
    hooks = getattr(leaf, "_hooks", None)
    if hooks:
        run.run_hooks(node, hooks, data.shape, data.dtype)
    if leaf._grad is None and voff >= 0 and data.ndim == 0 and not hooks:
        # 0-d leaf (scalar graphs): no array round trip
        g = run.adj[voff] if first is None else first
        leaf._grad = _make(g if data.dtype is _F64 else data.dtype.type(g))
        if getattr(leaf, "_post_hooks", None):
            post_accumulate(leaf)
    else:
        if voff >= 0:  # (reached: the callers read touched)
            size = run.tape.nodes[node * NODE_FIELDS + F_SIZE]
            _accumulate_grad(leaf, run.adj[voff:voff + size])
        else:  # a big node's adjoint is a buffer of its own: hand it over, no copy
            g = run.big_adj.get(node)  # (gradient_of's, the node being reached)
            _accumulate_grad(leaf, g, owned=run.gives_up(g))


def _accumulate_many(run, tape):
    """_accumulate's leaves, when there are many: the reached ones found in one read (many
    graphs alive on one tape hold many leaves; a backward reaches a few), the .grad of the
    0-d ones made by the C extension's loop, then _write_leaf for the others."""
    hit, voffs, firsts = _read_reached(run, tape)
    leaves = tape.leaves
    left = write_scalar_grads(leaves, hit, voffs, firsts, _F64) \
        if write_scalar_grads is not None else None
    for k in range(len(hit)) if left is None else left:
        node, leaf = leaves[hit[k]]
        if leaf._requires_grad:
            _write_leaf(run, node, leaf, voffs[k], firsts[k])


def _read_reached(run, tape):
    """The reached leaves' places in ``tape.leaves``, value offsets and first adjoint
    values: read by the C extension's one loop over their (by then cold) records, or by
    NumPy where it is absent or declines."""
    if reached_leaves is not None:
        n = len(tape.leaf_nodes)
        hit, voffs, firsts = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n)
        k = reached_leaves(tape.leaf_nodes, run.touched, run.nodes, run.adj, hit, voffs,
                           firsts)
        if k >= 0:
            return hit[:k].tolist(), voffs[:k].tolist(), list(firsts[:k])
    return _read_reached_numpy(run, tape)


def _read_reached_numpy(run, tape):
    idx = np.frombuffer(tape.leaf_nodes, np.int64)
    hit = np.flatnonzero(run.touched[idx])
    idx = idx[hit]
    voffs = run.nodes[idx, F_VOFF]
    # (read only for one-element leaves; an empty leaf may sit at the arena's end)
    firsts = list(run.adj[np.minimum(np.maximum(voffs, 0), len(run.adj) - 1)]) \
        if len(run.adj) else [_F64.type(0.0)] * len(idx)
    return hit.tolist(), voffs.tolist(), firsts


def _accumulate(run, tape, inputs, collect=None):
    """Write the gradients this tape's sweep produced into ``.grad`` of leaves (or inputs),
    or into ``collect`` keyed by id(input)."""
    if inputs is None:
        leaves = tape.leaves
        if len(leaves) > _FEW_LEAVES:
            _accumulate_many(run, tape)
        elif leaves:
            tn, touched = tape.nodes, run.touched
            for node, leaf in leaves:
                if touched[node] and leaf._requires_grad:
                    _write_leaf(run, node, leaf, tn[node * NODE_FIELDS + F_VOFF])
        for node, t in tape.retained.items():
            g = run.gradient_of(node)
            if g is not None and t._node == node:
                _accumulate_grad(t, g)
    else:
        for t in inputs:
            # a non-leaf of another tape is reached through a bridge, on its own tape
            node = t._node if t._tape is tape else \
                (tape.sources.get(id(t)) if t._tape is None else None)
            if node is not None:
                if not run.touched[node]:
                    continue
                hooks = getattr(t, "_hooks", None) if t._tape is None else None
                if hooks:  # a leaf's hooks (a non-leaf's ran in the sweep)
                    run.run_hooks(node, hooks, t._data.shape, t._data.dtype)
                g = run.gradient_of(node)
                if collect is None:
                    _accumulate_grad(t, g)
                else:  # a leaf used on several tapes gets a part from each
                    part = np.array(g, dtype=np.float64)
                    collect[id(t)] = part if id(t) not in collect else collect[id(t)] + part
