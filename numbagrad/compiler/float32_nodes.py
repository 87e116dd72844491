"""The compiled replay of a float32 trace whose every computed node eager differentiates in
float32 (an MLP, a classifier on a batch): run on float32 arrays, without the arena.

The replay's arena holds float64. A node eager keeps in float32 is then read into float32
copies for each of its kernels and its gradients written back (eager_nodes), and the
forward sweep converts each float32 product's operands: on a float32 MLP those
conversions cost a third of the call. Here every node's value and adjoint is an array of
its own dtype, computed by eager's own routines, so the bits are eager's by construction:

* forward: an elementwise node through ``eager_forward``; a view (t(), permute, slice...)
  as a strided NumPy view, as eager's; an op that declares eager's value on its operands'
  arrays as they are (``value``: the products, on transposed views too) through it; an op
  whose eager value comes from its replay kernel in float32 (``replay_f32``: softmax,
  losses) through that kernel on float32 arrays, as ``record.replay_value``; any other op
  through its replay kernel in float64, rounded to float32, as the arena's forward sweep
  computes it;
* backward: each node's ``eager_nodes.Step`` in the order the reverse sweep would reach
  it, its gradients stored straight into new arrays or added into existing ones; the
  traced function's float32 inputs get theirs in the returned buffer itself.

A trace qualifies (``build``) when each node the output depends on is a float32 source
or a float32 node whose derivative eager_nodes hands back (or a small view, a weight's t()),
and nothing reads the arena (guards, aux outputs); any other trace runs on the arena.
Products then read their operands as eager does, transposed views included: on machines
where OpenBLAS rounds a transposed operand differently (gemm.layout_sensitive), the arena
replay, which copies t() nodes, does not equal eager to the bit, and this path does.
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..core.tape import FLAG_F32, FLAG_NEEDS_GRAD, column
from ..engine import kernelgen, registry
from ..ops.elementwise.forward import eager_forward
from . import eager_nodes, float32_source
from .result_buffers import ResultBuffers

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


class Node:
    """One node's forward: its op, operands, shape and attributes."""

    __slots__ = ("i", "op", "argn", "shape", "sh", "sh_args", "ia", "fa", "size", "kernel",
                 "own_f32", "view")


class View:
    """A view op's node (``view_fw``: t(), permute, transpose, select, slice...): its value
    is a strided view of its operand's, as eager's; its backward, when the node is small,
    adds its gradient into its operand's float64 adjoint through the same strides, as
    eager's sweep does."""

    __slots__ = ("node", "src", "shape", "ia", "size_of_src")

    def __init__(self, node, src, shape, ia):
        self.node, self.src, self.shape, self.ia = node, src, shape, ia

    def of(self, x, writeable=False):
        """The view on ``x``, the operand's array (or its adjoint's), flat in C order. (The
        map is read at each call: an integer argument's recipe may rewrite it.)"""
        strides = [st * x.itemsize for st in self.ia[1:1 + len(self.shape)].tolist()]
        return as_strided(x[int(self.ia[0]):], self.shape, strides, writeable=writeable)

    def run(self, adjs):
        a = adjs[self.src]
        if a is None:
            a = adjs[self.src] = np.zeros(self.size_of_src, _F64)
        target = self.of(a, writeable=True)
        target += adjs[self.node].reshape(self.shape)


class Plan:
    """The forward nodes in recording order, the steps in the reverse sweep's order, and
    where the sources' values come from and the gradients go."""

    def __init__(self, program, forward, order, slot_nodes, constants, grads):
        self.forward, self.order = forward, order
        self.constants = constants
        self.slots = [(node, q, eager_nodes.node_shape(program.nodes, program.shapes, node))
                      for node, q in slot_nodes.items()]
        self.grads = grads  # (node, position in the returned buffer, size) per gradient
        self.slot_of = {node: (pos, n) for node, pos, n in grads}
        self.grad_total = int(program.grad_len.sum())
        self.results = ResultBuffers(self.grad_total, _F32)
        self.out_node, self.out_dtype = program.out_node, program.out_dtype
        self.n = len(program.nodes)
        self.source_run = None


def build(program, steps):
    """A Plan for ``program``'s trace, or None when it does not qualify (module doc)."""
    if not steps or program.guards or program.aux is not None or program.out_node < 0:
        return None
    nodes, args = program.nodes, program.args
    code, flags = column(nodes, "code"), column(nodes, "flags")
    arg_ptr, nargs = column(nodes, "arg_ptr"), column(nodes, "nargs")
    needed = np.zeros(len(nodes), bool)  # what the output is computed from
    needed[program.out_node] = True
    for i in range(program.out_node, -1, -1):
        if needed[i]:
            needed[args[arg_ptr[i]:arg_ptr[i] + nargs[i]]] = True
    if not all(flags[i] & FLAG_F32 for i in np.flatnonzero(needed).tolist()):
        return None
    # the reverse sweep's walk, as it goes at every call: from the output, each reached
    # node that needs a gradient must be a step, whose targets it reaches next
    touched = np.zeros(len(nodes), bool)
    touched[program.out_node] = True
    order = []
    targets = {}  # node -> the dtypes the steps keep its adjoint in
    for s in steps.values():
        for t in s.targets:
            targets.setdefault(t.node, set()).add(t.dtype)
    for i in range(program.out_node, -1, -1):
        op = registry.OPS[int(code[i])]
        if not touched[i] or not flags[i] & FLAG_NEEDS_GRAD or op.arity == 0:
            continue
        s = steps.get(i)
        if s is None:
            # a small view (a t() of a weight a product reads): eager's sweep adds its
            # gradient into its operand's float64 adjoint, which no step writes
            src = int(args[arg_ptr[i]])
            if op.replay != kernelgen.GATHER or targets.get(i) != {_F64} or src in targets:
                return None
            order.append(_view(program, i, src))
            touched[src] = True
            continue
        order.append(s)
        for t in s.targets:
            touched[t.node] = True
    slot_nodes = {n: q for q, n in enumerate(program.slots)}
    forward, constants = [], {}
    voff, size = column(nodes, "voff"), column(nodes, "size")
    for i in np.flatnonzero(needed).tolist():
        op = registry.OPS[int(code[i])]
        shape = eager_nodes.node_shape(nodes, program.shapes, i)
        if op.arity == 0:
            if i not in slot_nodes:  # a constant: its value, once
                o, n = int(voff[i]), int(size[i])
                constants[i] = program.base[o:o + n].astype(_F32).reshape(shape)
            continue
        if op.arity == -1 or (op.forward is None if op.elementwise else op.replay is None):
            return None  # (variadic ops; elementwise ops eager computes by other means)
        forward.append(_node(program, i, op, shape))
    grads, pos = [], 0
    node_at = {int(voff[n]): n for n in program.slots}
    for o, n in zip(program.grad_off.tolist(), program.grad_len.tolist()):
        grads.append((node_at[o], pos, n))
        pos += n
    plan = Plan(program, forward, order, slot_nodes, constants, grads)
    plan.source_run = float32_source.build(plan)
    return plan


def _view(program, i, src):
    nodes = program.nodes
    io = column(nodes, "iat_ptr")[i]
    v = View(i, src, eager_nodes.node_shape(nodes, program.shapes, i),
             program.iat[io:io + column(nodes, "niat")[i]])
    v.size_of_src = int(column(nodes, "size")[src])
    return v


def _node(program, i, op, shape):
    nodes = program.nodes
    f = Node()
    f.i, f.op, f.shape = i, op, shape
    p, n = column(nodes, "arg_ptr")[i], column(nodes, "nargs")[i]
    f.argn = program.args[p:p + n].tolist()
    f.sh = np.array(shape, np.int64)
    f.sh_args = [np.array(eager_nodes.node_shape(nodes, program.shapes, a), np.int64)
                 for a in f.argn]
    io, fo = column(nodes, "iat_ptr")[i], column(nodes, "fat_ptr")[i]
    # views: an integer argument's recipe rewrites them in place at each call (int_args)
    f.ia = program.iat[io:io + column(nodes, "niat")[i]]
    f.fa = program.fat[fo:fo + column(nodes, "nfat")[i]]
    f.size = int(column(nodes, "size")[i])
    f.kernel = None if op.elementwise or op.replay == kernelgen.GATHER else \
        kernelgen.kernel_of(op.replay)
    f.view = _view(program, i, f.argn[0]) if op.replay == kernelgen.GATHER else None
    f.own_f32 = bool(op.replay_f32)
    return f


def _value(f, vals):
    """Node ``f``'s value from its operands' in ``vals`` (see the module doc)."""
    xs = [vals[a] for a in f.argn]
    if f.view is not None:
        return f.view.of(np.ascontiguousarray(xs[0]).reshape(-1))
    if f.op.value is not None:  # on the operands as they are, views included, as eager
        return f.op.value(xs, f.ia, f.fa)
    if f.kernel is None:  # elementwise: eager's own forward, attributes as eager passes them
        y = eager_forward(f.op, *xs, *f.fa.tolist())
        return np.asarray(y, _F32).reshape(f.shape)
    dt = _F32 if f.own_f32 else np.float64
    flat = [np.ascontiguousarray(x, dt).reshape(-1) for x in xs]
    y = np.empty(f.size, dt)
    f.kernel(y, *flat, f.sh, *f.sh_args, f.ia, f.fa)
    return (y if f.own_f32 else y.astype(_F32)).reshape(f.shape)


def run(plan, parts, with_grad):
    """The output's value and the gradients (concatenated, float32) of one call on the
    inputs ``parts`` (flat arrays, in ``program.slots`` order)."""
    if plan.source_run is not None:  # the same calls, decided at build (float32_source)
        return plan.source_run(parts, plan.results.get() if with_grad else None, with_grad)
    vals = [None] * plan.n
    for node, q, shape in plan.slots:
        vals[node] = np.asarray(parts[q], _F32).reshape(shape)
    for node, c in plan.constants.items():
        vals[node] = c
    for f in plan.forward:
        vals[f.i] = _value(f, vals)
    value = vals[plan.out_node].reshape(-1)[0]
    if not with_grad:
        return value, np.zeros(plan.grad_total, _F32)
    grads = plan.results.get()
    slot_of = plan.slot_of
    placed = set()  # the gradients written in place in ``grads``
    adjs = [None] * plan.n
    adjs[plan.out_node] = np.ones(1, plan.out_dtype)

    def fresh(t, zero):
        """Target ``t``'s adjoint array: a gradient's place in ``grads`` when its dtype is
        the result's, else a new array."""
        node = t.node
        if adjs[node] is not None:  # (an earlier target of the same step made it)
            return adjs[node]
        where = slot_of.get(node)
        if where is not None and t.dtype == _F32:
            buf = grads[where[0]:where[0] + where[1]]
            placed.add(node)
            if zero:
                buf[:] = 0.0
        else:
            buf = np.zeros(t.size, t.dtype) if zero else np.empty(t.size, t.dtype)
        adjs[node] = buf
        return buf

    for s in plan.order:
        if type(s) is View:
            s.run(adjs)
            continue
        xs = [vals[a] if r else None for a, r in zip(s.argn, s.read_x)]
        eager_nodes.differentiate(s, adjs[s.node], vals[s.node], xs,
                                  [adjs[t.node] for t in s.targets], fresh)
    for node, pos, n in plan.grads:
        a = adjs[node]
        if a is None:
            grads[pos:pos + n] = 0.0
        elif node not in placed:
            grads[pos:pos + n] = a
    return value, grads

