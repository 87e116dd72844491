"""The compiled replay's backward for the nodes eager differentiates in float32.

Eager (engine._Run._big_node) keeps a node of ``tape.BIG`` elements or more, and every node
computed from one, as its own array, and differentiates it with its op's parallel kernel or
NumPy derivative in the dtype of the big arrays involved: float32 when they all are, into
adjoint arrays whose dtype is that of the first gradient written to them. A trace keeps
every node in the float64 arena, where the replay sweep differentiates in float64: for
float32 data, a gradient then differs from eager's by float32 rounding (hundreds of ulps
where a product's or a softmax's terms cancel).

So the replay hands these nodes back to Python, as it hands back fused regions (the node
table the sweep walks gives them the big-node flag: ``fusion.Plan``, ``fusion.run``), and
``backward`` runs eager's own kernel on them, with eager's compute dtype, its accumulation
targets (in place, a zeroed temporary added afterwards, or a store into an unwritten
target) and F.linear's transposed weight gradient written in the weight's own layout. No
kernel is compiled for this: they are eager's, compiled already and cached. The dtypes of
eager's adjoint arrays depend only on the graph, so they are worked out once per trace
(``plan``); in the arena, an adjoint eager keeps in float32 holds float32 values.

A float64 node whose kernel sums a gradient for a one-element input (``x * s``, ``s`` a
one-element tensor) is handed back too: eager's parallel kernel sums it as a ``prange``
reduction, in chunks per thread, which the replay's serial kernel would not repeat to the
bit. Everything else, float64 big nodes included, stays in the compiled sweep, where the
replay already equals eager (the products through one routine, gemm.product).

The backward of a compiled function of Tensors runs here too (``run_backward``).
``as_numba()`` keeps the all-float64 sweep: it cannot leave Numba (README, Limitations).
"""

import numpy as np

from ..autograd import big_nodes
from ..core import tape as tape_mod
from ..core.tape import CONST_CODE, FLAG_BIG, FLAG_F32, FLAG_NEEDS_GRAD, LEAF_CODE, column
from ..engine import kernelgen, registry
from ..engine.registry import Unwritten

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)

# How a handed-back node's input gradient reaches that input's adjoint, as in eager:
IN_PLACE = 0  # eager's adjoint array has the compute dtype: the kernel adds into it
SINK = 1  # it has another dtype: a zeroed temporary in the compute dtype, added afterwards
STORE = 2  # nothing wrote it yet and the derivative stores (registry.Unwritten)


class Target:
    """Where input ``k`` of a handed-back node sends its gradient: ``node``'s adjoint (the
    input itself, or, ``flip``ped, the input of the t() node that input is), kept by eager
    in ``dtype``, reached by ``mode``."""

    __slots__ = ("k", "node", "dtype", "mode", "flip", "off", "size", "shape")

    def __init__(self, k, node, dtype, mode, flip, nodes, shape):
        self.k, self.node, self.dtype, self.mode, self.flip = k, node, dtype, mode, flip
        self.off, self.size = int(column(nodes, "voff")[node]), int(column(nodes, "size")[node])
        self.shape = shape


class Step:
    """One handed-back node: its op, compute dtype, operands and gradient targets."""

    __slots__ = ("node", "op", "dt", "argn", "needs", "need_args", "read_y", "read_x", "kernel",
                 "targets", "shape", "arg_shapes", "arg_dtypes", "sh", "sh_args", "ia", "fa",
                 "off", "size", "arg_spans")


def _node_dtypes(nodes, program_sources):
    """Each node's dtype as eager stores it: float32 or float64 from the node's flag, and
    the actual dtype of constants (an integer index or boolean mask is not float64)."""
    dtypes = [_F32 if f & FLAG_F32 else _F64 for f in column(nodes, "flags").tolist()]
    for node, dtype in program_sources:
        dtypes[node] = dtype
    return dtypes


def eager_big(program, transposes):
    """Which of ``program``'s nodes eager keeps as big (a bool array), decided in eager's
    order: a node of ``tape.BIG`` elements or more, or with a big operand; and F.linear's
    operands new to the tape (weight, bias, a 2-d input: leaves or constants of two
    elements or more) when its product is big (matmul._big_operands). ``transposes``:
    F.linear's t() nodes -> their weights."""
    nodes, args = program.nodes, program.args
    size, arg_ptr, nargs = column(nodes, "size"), column(nodes, "arg_ptr"), column(nodes, "nargs")
    big = size >= tape_mod.BIG
    if not big.any():
        return big
    code = column(nodes, "code")
    source = ((code == LEAF_CODE) | (code == CONST_CODE)) & (size > 1)
    used = np.zeros(len(nodes), bool)
    product = {}  # F.linear's t() node -> the product it feeds
    if transposes:
        for i in range(len(nodes)):
            p, na = arg_ptr[i], nargs[i]
            for a in args[p:p + na].tolist():
                if a in transposes and a not in product:
                    product[a] = i
    for i in range(len(nodes)):
        p, na = arg_ptr[i], nargs[i]
        if na == 0:
            continue
        argn = args[p:p + na].tolist()
        if i in product:
            j = product[i]
            operands = args[arg_ptr[j]:arg_ptr[j] + nargs[j]].tolist()
            addmm = registry.OPS[int(code[j])].name == "addmm"
            x = operands[1] if addmm else operands[0]
            w = argn[0]
            product_big = size[j] >= tape_mod.BIG or (x != i and big[x])
            if product_big and source[w] and not used[w]:
                big[w] = True
            if product_big or big[w]:
                for a in (operands[0], x) if addmm else (x,):
                    if a != i and source[a] and not used[a]:
                        big[a] = True
        if big[i] or big[argn].any():
            big[i] = True
        used[argn] = True
    return big


def plan(program, transposes, sources, roots, big):
    """The handed-back nodes of ``program``'s trace (a dict node -> Step, empty when eager's
    big-node backward is float64 throughout). ``transposes``: the trace's F.linear t() nodes
    and their inputs (Tape.transposes, renumbered); ``sources``: (node, dtype) of its
    constants; ``roots``: (node, dtype) of the outputs the backward is seeded at, the dtype
    being that of the seed (eager's adjoint array for the output)."""
    nodes, args, shapes = program.nodes, program.args, program.shapes
    size, arg_ptr, nargs = column(nodes, "size"), column(nodes, "arg_ptr"), column(nodes, "nargs")
    if not big.any():
        return {}  # most traces: no per-node walk at trace time
    n = len(nodes)
    dtypes = _node_dtypes(nodes, sources)
    if not any(dtypes[i] == _F32 for i in np.flatnonzero(big).tolist()) and \
            not _scalar_operands(nodes, args, big):
        return {}
    needs_grad = (column(nodes, "flags") & FLAG_NEEDS_GRAD) != 0
    store = {}  # big node -> the dtype of eager's adjoint array (its first writer's)
    touched = np.zeros(n, bool)
    for node, dtype in roots:
        if big[node]:
            store[node] = np.dtype(dtype)
        touched[node] = True
    steps = {}
    for i in range(max(node for node, _ in roots), -1, -1):
        code = int(column(nodes, "code")[i])
        op = registry.OPS[code]
        if not touched[i] or not needs_grad[i] or op.arity == 0:
            continue
        p, na = arg_ptr[i], nargs[i]
        argn = args[p:p + na].tolist()
        needs = tuple(bool(needs_grad[a]) for a in argn)
        if not big[i]:  # the serial sweep's, in eager too: its inputs are small
            touched[[a for a, need in zip(argn, needs) if need]] = True
            continue
        dt = big_nodes.compute_dtype({dtypes[a] for a in (i, *argn) if big[a]})
        targets = []
        for k, (a, need) in enumerate(zip(argn, needs)):
            if not need:
                continue
            target = _target(k, a, op, dt, transposes, big, store, nodes, shapes)
            targets.append(target)
            touched[target.node] = True
        reduces = op.elementwise and op.numpy_bw is None and any(
            need and size[a] == 1 < size[i] for a, need in zip(argn, needs))
        if dt != _F32 and not reduces and all(t.dtype != _F32 for t in targets):
            continue  # float64 throughout: the compiled sweep's result is eager's
        steps[i] = _step(program, i, op, dt, argn, needs, targets, dtypes, big)
    return steps


def _scalar_operands(nodes, args, big):
    """Whether some big elementwise node has a one-element operand (see the module doc)."""
    code, size = column(nodes, "code"), column(nodes, "size")
    arg_ptr, nargs = column(nodes, "arg_ptr"), column(nodes, "nargs")
    for i in np.flatnonzero(big).tolist():
        op = registry.OPS[int(code[i])]
        if op.elementwise and size[i] > 1:
            p, na = arg_ptr[i], nargs[i]
            if any(size[a] == 1 for a in args[p:p + na].tolist()):
                return True
    return False


def node_shape(nodes, shapes, a):
    """Node ``a``'s shape, a tuple."""
    s = column(nodes, "shape_ptr")[a]
    return tuple(shapes[s:s + column(nodes, "ndim")[a]].tolist())


def _target(k, a, op, dt, transposes, big, store, nodes, shapes):
    """Input ``k`` (node ``a``)'s gradient target, as engine._Run._big_node chooses it (the
    product's layout rule is big_nodes.layout_route); records in ``store`` the dtype of an
    adjoint array eager would create."""
    src, may_store = big_nodes.layout_route(op.numpy_bw_any_layout, k, a, transposes,
                                         big.__getitem__)
    if src is not None and store.get(src, dt) == dt:
        # a t() node only this product consumes: its input's gradient, transposed
        mode = IN_PLACE if src in store else STORE
        store[src] = dt
        return Target(k, src, dt, mode, True, nodes, node_shape(nodes, shapes, src))
    if may_store and a not in store:
        store[a] = dt
        return Target(k, a, dt, STORE, False, nodes, node_shape(nodes, shapes, a))
    kept = store.setdefault(a, dt) if big[a] else _F64  # small: the float64 arena
    return Target(k, a, kept, IN_PLACE if kept == dt else SINK, False, nodes,
                  node_shape(nodes, shapes, a))


def _step(program, i, op, dt, argn, needs, targets, dtypes, big):
    nodes, shapes = program.nodes, program.shapes
    s = Step()
    s.node, s.op, s.dt, s.argn, s.needs, s.targets = i, op, dt, argn, needs, targets
    _, s.read_y, s.read_x, s.kernel, _ = big_nodes._node_plan(
        int(column(nodes, "code")[i]), needs, int(column(nodes, "size")[i]))
    if op.replay_bw:  # recorded positions are the trace's: recompute them, as the sweep
        s.kernel = kernelgen.kernel_of(op.replay_bw)
        s.read_y, s.read_x = True, (True,) * len(argn)  # from the values they read
    s.need_args = tuple(map(int, needs)) if s.kernel is not None and op.takes_int_needs() \
        else needs
    s.shape = node_shape(nodes, shapes, i)
    s.arg_shapes = [node_shape(nodes, shapes, a) for a in argn]
    # eager's NumPy derivatives read big inputs as stored (their own dtype), small ones
    # converted to the compute dtype; its kernels read all of them in the compute dtype
    s.arg_dtypes = [dtypes[a] if big[a] and s.kernel is None else dt for a in argn]
    s.sh = np.array(s.shape, np.int64)
    s.sh_args = [np.array(sh, np.int64) for sh in s.arg_shapes]
    voff, size = column(nodes, "voff"), column(nodes, "size")
    io, fo = column(nodes, "iat_ptr")[i], column(nodes, "fat_ptr")[i]
    s.ia = program.iat[io:io + column(nodes, "niat")[i]]
    s.fa = program.fat[fo:fo + column(nodes, "nfat")[i]]
    s.off, s.size = int(voff[i]), int(size[i])
    s.arg_spans = [(int(voff[a]), int(size[a])) for a in argn]
    return s


def backward(s, val, adj, touched):
    """Step ``s`` on the arenas, as eager's engine runs its node (see ``plan``)."""
    spans = [adj[t.off:t.off + t.size] for t in s.targets]
    xs = [val[o:o + n] for o, n in s.arg_spans]
    differentiate(s, adj[s.off:s.off + s.size], val[s.off:s.off + s.size], xs, spans)
    for t in s.targets:
        touched[t.node] = 1


def differentiate(s, g, y, xs, spans, fresh=None):
    """Step ``s``'s derivative: ``g`` its node's adjoint (flat), ``y`` its value and ``xs``
    its operands' (any float dtype, flat or shaped: converted to what eager computes in;
    None where the derivative reads nothing), ``spans`` its targets' adjoint arrays (flat).
    Those may be None when ``fresh(target, zero)`` is given: it makes the target's adjoint
    array, zeroed or not, which gets the gradient (float32_nodes: adjoints as arrays of
    their own, made when first written)."""
    dt = s.dt
    g = g.astype(dt, copy=False)
    grads = [None] * len(s.argn)
    shared = {}  # node -> the array its gradients go into (x * x: both into one, as eager)
    after = []  # (adjoint, array, dtype of eager's adjoint for a sink, else None)
    for t, span in zip(s.targets, spans):
        gx = shared.get(t.node) if t.mode == IN_PLACE else None
        if gx is not None:
            pass
        elif t.mode == STORE:
            if span is None:  # an array of its own: the gradient is stored straight in it
                buf = shared[t.node] = fresh(t, False)
            else:
                buf = shared[t.node] = np.empty(t.size, dt)
                after.append((span, buf, None))
            gx = buf.view(Unwritten)
        elif t.mode == SINK:
            gx = np.zeros(t.size, dt)
            after.append((fresh(t, True) if span is None else span, gx, t.dtype))
        elif span is None:
            gx = shared[t.node] = fresh(t, True)
        elif span.dtype == dt:
            gx = shared[t.node] = span  # eager's array (the arena in float64): added into
        else:
            gx = shared[t.node] = span.astype(dt)  # float32 values, held exactly
            after.append((span, gx, None))
        if t.flip:
            gx = gx.reshape(t.shape).T
        grads[t.k] = gx
    if s.kernel is None:  # the op's NumPy derivative (matrix products, convolutions)
        xs = [x.reshape(sh).astype(d, copy=False) if r else None
              for x, sh, d, r in zip(xs, s.arg_shapes, s.arg_dtypes, s.read_x)]
        # (a flipped target is already the t() node's shape: reshaping it is a view)
        gxs = [None if gx is None else gx.reshape(sh) for gx, sh in zip(grads, s.arg_shapes)]
        s.op.numpy_bw(g.reshape(s.shape), xs, gxs, s.ia, s.fa)
    else:
        empty = np.empty(0, dt)
        grads = [empty if gx is None else gx for gx in grads]
        if s.op.arity == -1:
            for k, need in enumerate(s.needs):
                if need:
                    s.kernel(g, grads[k], s.sh, s.sh_args[k], k, s.ia, s.fa)
        else:
            y = y.reshape(-1).astype(dt, copy=False) if s.read_y else empty
            xs = [x.reshape(-1).astype(dt, copy=False) if r else empty
                  for x, r in zip(xs, s.read_x)]
            s.kernel(g, y, *xs, *grads, s.sh, *s.sh_args, *s.need_args, s.ia, s.fa)
    for span, buf, kept in after:  # kept: the dtype of eager's adjoint array, for a sink
        if kept is None:
            span[:] = buf
        elif kept == _F64:
            span += buf  # eager's float64 adjoint += the float32 temporary
        else:
            span[:] = (span + buf).astype(_F32)  # its float32 adjoint += a float64 one


def run_backward(program, val, seed):
    """The replay module's ``run_backward`` (the reverse sweep on arena ``val``, seeded with
    ``seed`` at ``program.out_nodes``) with ``program.steps`` handed to eager's kernels;
    returns the adjoints of the input slots, concatenated. For compiled functions of
    Tensors (compiler._CompiledCall)."""
    nodes = program.nodes
    voff, sizes = column(nodes, "voff"), column(nodes, "size")
    adj = np.zeros(len(val))
    touched = np.zeros(len(nodes), np.uint8)
    pos = 0
    for i in program.out_nodes.tolist():
        o, size = int(voff[i]), int(sizes[i])
        adj[o:o + size] += seed[pos:pos + size]
        pos += size
        touched[i] = 1
    start = int(program.out_nodes.max())
    while start >= 0:
        status, i = program.replay.sweep(program, program.sweep_nodes, val, adj, touched, start)
        if status == 0:
            break
        backward(program.steps[i], val, adj, touched)
        start = i - 1
    return np.concatenate([adj[o:o + k] for o, k in zip(program.in_off.tolist(),
                                                         program.in_len.tolist())]) \
        if len(program.in_off) else np.zeros(0)


def stored_spans(program, steps):
    """The adjoint spans the handed-back ``steps`` write first by storing (``STORE``:
    a weight's or an activation's whole gradient) and nothing else writes: they need no
    zeroing (a 784 x 256 weight's: as long as its product's backward)."""
    if not steps:
        return []
    nodes, args = program.nodes, program.args
    arg_ptr, nargs = column(nodes, "arg_ptr").tolist(), column(nodes, "nargs").tolist()
    others = set()  # nodes some node other than a handed-back step reads
    for j, (p, n) in enumerate(zip(arg_ptr, nargs)):
        if n and j not in steps:
            others.update(args[p:p + n].tolist())
    return [(t.off, t.size) for s in steps.values() for t in s.targets
            if t.mode == STORE and t.node not in others]


def sweep_nodes(nodes, steps):
    """``nodes`` with the big-node flag on ``steps``, which makes the sweep hand them back."""
    flagged = nodes.copy()
    flags = column(flagged, "flags")  # a view: written through
    for i in steps:
        flags[i] |= FLAG_BIG
    return flagged
