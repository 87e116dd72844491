"""Trace-time rewrites of view nodes: identical views merged into one (``merge``), and a
contiguous view of a small input that needs no gradient read in place (``alias``)."""

import numpy as np

from ..core.tape import FLAG_NEEDS_GRAD, LEAF_CODE, column
from ..engine import registry

# Ops whose replay only moves values (views, reshapes, broadcasts): merging two identical
# nodes of these kinds cannot change a result.
_MERGEABLE = ("view_fw", "reshape_fw", "expand_fw")


def merge(program):
    """Common-subexpression elimination of view nodes, at trace time.

    A loop that writes ``h @ w.T`` records a new transpose of ``w`` at every step; the
    replay would copy the whole matrix into the arena each time and scatter its gradient
    back each time (for the Elman RNN of bench_compile.py, 200 transposes holding 88% of the
    arena). A view node with the same op, inputs, shape and attributes as an earlier one
    is dropped and its consumers read the earlier node; the backward sweep then sums
    their gradients into that one node, as it does for any value used twice. The value
    arena is compacted over the nodes kept. Returns the old -> new node index map (None when
    nothing was merged: the arrays are left as they are)."""
    nodes, args, shapes = program.nodes, program.args, program.shapes
    iat, fat = program.iat, program.fat
    codes = {op.code for op in registry.OPS if op.replay in _MERGEABLE}
    code, flags = column(nodes, "code"), column(nodes, "flags")
    arg_ptr, nargs = column(nodes, "arg_ptr"), column(nodes, "nargs")
    shape_ptr, ndim = column(nodes, "shape_ptr"), column(nodes, "ndim")
    iat_ptr, niat = column(nodes, "iat_ptr"), column(nodes, "niat")
    fat_ptr, nfat = column(nodes, "fat_ptr"), column(nodes, "nfat")
    n = len(nodes)
    canon = np.arange(n, dtype=np.int64)
    seen = {}
    merged = False
    for i in range(n):
        if int(code[i]) not in codes:
            continue
        p, na = int(arg_ptr[i]), int(nargs[i])
        for q in range(p, p + na):  # point at the kept nodes first (chains of views)
            args[q] = canon[args[q]]
        s, io, fo = int(shape_ptr[i]), int(iat_ptr[i]), int(fat_ptr[i])
        key = (int(code[i]), int(flags[i]), tuple(args[p:p + na].tolist()),
               tuple(shapes[s:s + ndim[i]].tolist()),
               tuple(iat[io:io + niat[i]].tolist()),
               tuple(fat[fo:fo + nfat[i]].tolist()))
        first = seen.setdefault(key, i)
        if first != i:
            canon[i] = first
            merged = True
    if not merged:
        return None
    keep = canon == np.arange(n)
    renumber = np.cumsum(keep) - 1
    renumber[~keep] = renumber[canon[~keep]]
    # every argument of every node to the kept node's new index
    used = np.zeros(len(args), bool)
    for i in np.flatnonzero(keep):
        used[arg_ptr[i]:arg_ptr[i] + nargs[i]] = True
    args[used] = renumber[canon[args[used]]]
    kept = nodes[keep].copy()
    sizes = column(kept, "size")
    new_off = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    # arena gather: element j of kept node r comes from old offset + j
    src = np.repeat(column(kept, "voff") - new_off, sizes) + np.arange(int(sizes.sum()))
    column(kept, "voff")[:] = new_off
    program.nodes = kept
    program.base = program.base[src] if len(src) else np.zeros(1)
    return renumber


def alias(program, exclude, big):
    """Views of an input read in place, at trace time, on the generic replay.

    ``xs[t]`` of a sequence the gradient is not taken of (an RNN's inputs) is a copy the
    forward makes at every step. When a view node needs no gradient, reads a leaf (an input
    or a parameter, written into the arena before the forward) and is one contiguous run
    of it, the node becomes a leaf whose arena offset is that run: its consumers read the
    input's own values, and nothing is computed for it. Only views of leaves eager keeps
    small (``big``: eager_nodes.eager_big): eager takes everything computed from a big node
    as big, and eager_nodes follows that from the nodes' arguments, which an alias no longer
    has.
    ``exclude``: nodes whose attributes change from call to call (int_args' recipes)."""
    nodes, args, shapes, iat = program.nodes, program.args, program.shapes, program.iat
    code, flags = column(nodes, "code"), column(nodes, "flags")
    voff, nargs = column(nodes, "voff"), column(nodes, "nargs")
    arg_ptr, shape_ptr = column(nodes, "arg_ptr"), column(nodes, "shape_ptr")
    ndim, iat_ptr = column(nodes, "ndim"), column(nodes, "iat_ptr")
    views = {op.code for op in registry.OPS if op.replay == "view_fw"}
    for i in range(len(nodes)):
        if int(code[i]) not in views or flags[i] & FLAG_NEEDS_GRAD or nargs[i] != 1 or \
                i == program.out_node or i in exclude:
            continue
        a = int(args[arg_ptr[i]])
        if code[a] != LEAF_CODE or big[a]:
            continue
        shape = shapes[shape_ptr[i]:shape_ptr[i] + ndim[i]].tolist()
        io = int(iat_ptr[i])  # view_fw's attributes: offset, then y's strides in x
        strides = iat[io + 1:io + 1 + len(shape)].tolist()
        step = 1
        for n, s in zip(reversed(shape), reversed(strides)):
            if n > 1 and s != step:
                break
            step *= n
        else:
            voff[i] = voff[a] + iat[io]
            code[i] = LEAF_CODE
            nargs[i] = 0
