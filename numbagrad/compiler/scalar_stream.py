"""The scalar instruction stream: compiled replay of traces made only of one-element nodes.

A graph of thousands of scalar ops (an objective written element by element, a small ODE
right-hand side) spends the generic replay's time reading each node's thirteen fields,
shapes and offsets. Such a trace is rewritten here as a stream of fixed-width instructions
``(op code, out, a, b, mask)`` whose operands are arena offsets, and replayed by one loop
per direction whose branches are generated from the op table's ``fwd`` and ``grads``
formulas: the same formulas, in the same order, as the eager sweep, so results are equal
bit for bit.

Only elementwise ops and one-element views/copies qualify; anything else (a node with more
than one element, a float32 node, a reduction) leaves the trace to the generic replay.
"""

import numpy as np

from ..core.tape import FLAG_F32, column
from ..engine import kernel_tables, kernelgen, registry
from ..engine.formula import uses

# instruction columns
I_CODE, I_OUT, I_A, I_B, I_MASK = range(5)
WIDTH = 5
# the instruction of a one-element view or copy: out = a (its code is outside the table)
COPY = -1


def scalar_ops():
    """The table's ops the stream can run: elementwise ops with a forward formula."""
    return [op for op in registry.OPS if op.elementwise and op.fwd and not op.python]


def _operand_loads(formulas):
    """Statements binding the names ``formulas`` (one or several) read from instruction
    ``i``."""
    loads = [("y", "yv = val[ins[i, 1]]"), ("a", "av = val[ins[i, 2]]"),
             ("b", "bv = val[ins[i, 3]]"), ("m", "m = ins[i, 4] != 0"),
             ("f0", "f0 = fk[i, 0]"), ("f1", "f1 = fk[i, 1]")]
    return [line for name, line in loads if uses(formulas, name)]


def _forward_branch(op):
    return _operand_loads(op.fwd) + [f"val[ins[i, 1]] = {kernelgen.expr(op.fwd)}"]


def _backward_branch(op):
    lines = _operand_loads(op.grads)
    for q, formula in enumerate(op.grads):
        if formula:
            lines.append(f"adj[ins[i, {2 + q}]] += {kernelgen.expr(formula)}")
    return lines


def generate_source(ops):
    lines = [kernelgen.header()]
    w = lines.append
    w("")
    w("@njit(cache=True, nogil=True, error_model='numpy')")
    w("def run(ins, fk, base, in_off, in_len, x, out_off, grad_off, grad_len, with_grad):")
    w('    """Replay an instruction stream on new inputs ``x``: its value at ``out_off`` and')
    w('    (``with_grad``) the adjoints at ``grad_off``, concatenated."""')
    w("    val = base.copy()")
    w("    pos = 0")
    w("    for q in range(in_off.shape[0]):")
    w("        o = in_off[q]")
    w("        for k in range(in_len[q]):")
    w("            val[o + k] = x[pos + k]")
    w("        pos += in_len[q]")
    w("    n = ins.shape[0]")
    w("    for i in range(n):")
    w("        c = ins[i, 0]")
    w(f"        if c == {COPY}:")
    w("            val[ins[i, 1]] = val[ins[i, 2]]")
    for op in ops:
        w(f"        elif c == {op.code}:  # {op.name}")
        lines.extend("            " + s for s in _forward_branch(op))
    w("    value = val[out_off]")
    w("    total = 0")
    w("    for q in range(grad_len.shape[0]):")
    w("        total += grad_len[q]")
    w("    grads = np.zeros(total)")
    w("    if not with_grad:")
    w("        return value, grads")
    w("    adj = np.zeros(val.shape[0])")
    w("    adj[out_off] = 1.0")
    w("    for i in range(n - 1, -1, -1):")
    w("        c = ins[i, 0]")
    w("        gv = adj[ins[i, 1]]")
    w(f"        if c == {COPY}:")
    w("            adj[ins[i, 2]] += gv")
    for op in ops:
        w(f"        elif c == {op.code}:  # {op.name}")
        lines.extend("            " + s for s in _backward_branch(op))
    w("    pos = 0")
    w("    for q in range(grad_off.shape[0]):")
    w("        o = grad_off[q]")
    w("        for k in range(grad_len[q]):")
    w("            grads[pos + k] = adj[o + k]")
    w("        pos += grad_len[q]")
    w("    return value, grads")
    return "\n".join(lines) + "\n"


def load(codes):
    """The compiled stream interpreter for the scalar ops among op ``codes`` (a trace's):
    generated per set of ops, so a trace compiles the branches of its own ops only."""
    used = set(int(c) for c in codes)
    ops = [op for op in scalar_ops() if op.code in used]
    return kernel_tables.load_generated("numbagrad_scalar_", generate_source(ops))


def build(nodes, args, iat, fat, out_node):
    """The instruction stream of a trace, or None when a node is not a one-element
    elementwise op, view or copy (the generic replay runs those). Instructions whose result
    cannot reach ``out_node`` are dropped: they change neither the value nor a gradient."""
    scalar_codes = {op.code for op in scalar_ops()}
    n = nodes.shape[0]
    ins = np.zeros((n, WIDTH), np.int64)
    fk = np.zeros((n, 2), np.float64)
    code, voff, size, flags = (column(nodes, f) for f in ("code", "voff", "size", "flags"))
    arg_ptr, nargs = column(nodes, "arg_ptr"), column(nodes, "nargs")
    iat_ptr, niat = column(nodes, "iat_ptr"), column(nodes, "niat")
    fat_ptr, nfat = column(nodes, "fat_ptr"), column(nodes, "nfat")
    count = 0
    for i in range(n):
        op = registry.OPS[code[i]]
        if op.source:
            continue
        if size[i] != 1 or flags[i] & FLAG_F32:
            return None
        p = arg_ptr[i]
        arg_nodes = args[p:p + nargs[i]]
        offsets = [voff[a] for a in arg_nodes]
        out = ins[count]
        out[I_OUT] = voff[i]
        if op.code in scalar_codes:
            out[I_CODE] = op.code
            for q, o in enumerate(offsets[:2]):
                out[I_A + q] = o
            if niat[i]:
                out[I_MASK] = iat[iat_ptr[i]]
            for k in range(min(2, nfat[i])):
                fk[count, k] = fat[fat_ptr[i] + k]
        elif op.replay == kernelgen.GATHER and len(offsets) == 1:
            out[I_CODE] = COPY  # iat = [offset in the source, strides...]
            out[I_A] = offsets[0] + iat[iat_ptr[i]]
        elif op.replay == kernelgen.COPY and len(offsets) == 1:
            out[I_CODE] = COPY
            out[I_A] = offsets[0]
        else:
            return None
        count += 1
    keep = _reaching(ins[:count], voff[out_node])
    return ins[:count][keep].copy(), fk[:count][keep].copy()


def _reaching(ins, out_off):
    """Which instructions the output depends on (dead code elimination, backwards)."""
    live = {int(out_off)}
    keep = np.zeros(ins.shape[0], bool)
    for i in range(ins.shape[0] - 1, -1, -1):
        if int(ins[i, I_OUT]) in live:
            keep[i] = True
            live.add(int(ins[i, I_A]))
            if ins[i, I_CODE] != COPY:
                live.add(int(ins[i, I_B]))
    return keep
