"""Generate a replay module for a set of ops: forward kernels, forward and reverse sweeps, and
the @njit entry points that run a traced tape (numbagrad.compile): ``run`` (forward and
backward in one call, for the gradient transforms) and ``run_forward`` / ``run_backward``
(the two halves apart, for compiled functions of Tensors).

By default one module covers every replayable op of the table: ``python -m numbagrad warmup``
compiles it once (about a minute and a half on 2 cores) and every later trace, whatever ops it
uses, loads it from Numba's on-disk cache in well under a second. With ``EVERY_OP = False`` a
module covers only the ops of one trace (a cold compile of ~40 s instead, but one per op set).
A module's file name hashes its source, so a changed table makes a new module.
"""

import re
from pathlib import Path

from ..ops import registry, replay_kernels
from . import codegen
from .tape import (
    F_ARG,
    F_FAT,
    F_FLAGS,
    F_IAT,
    F_NARG,
    F_NDIM,
    F_NFAT,
    F_NIAT,
    F_SHP,
    F_SIZE,
    F_VOFF,
    FLAG_F32,
)

_HEADER_EXTRA = '''from numbagrad.ops.replay_kernels import *  # noqa: F401,F403


@njit(cache=True, inline="always", error_model="numpy")
def softplus(x, beta, threshold):
    z = x * beta
    if z > threshold:
        return x
    return log1p(exp(min(z, threshold))) / beta


@njit(cache=True, inline="always", error_model="numpy")
def gelu(x, approx):
    if approx != 0.0:
        k = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))
'''

# View ops whose forward is a gather through the recorded (offset, strides) map, and ops
# whose forward is a plain copy: both get an inline one-element path in the forward sweep.
_GATHER = "view_fw"
# Set (tests) to build every trace's replay from the one module of all replayable ops
EVERY_OP = True
_COPY = "reshape_fw"


def _fwd_expr(op):
    return codegen._expr(op.fwd)


def _fwd_attrs(op, base="fat[{i}]"):
    return [f"f{i} = {base.format(i=i)}" for i in (0, 1) if re.search(rf"\bf{i}\b", op.fwd)]


def _fw_name(op):
    return f"_fw_{op.name}" if op.elementwise else op.replay


def _fw_unary(op):
    lines = ["@njit(cache=True, error_model='numpy')",
             f"def {_fw_name(op)}(y, x0, sh_y, sh0, iat, fat):"]
    lines += ["    " + s for s in _fwd_attrs(op)]
    # float64 whatever the arrays' dtype: eager passes float32 arrays (and a float32 y,
    # whose store rounds once), the replay's arena is float64 already
    lines += ["    for k in range(y.shape[0]):", "        av = np.float64(x0[k])"]
    if re.search(r"\bm\b", op.fwd):
        lines.append("        m = iat[k] != 0")
    lines.append(f"        y[k] = {_fwd_expr(op)}")
    return "\n".join(lines) + "\n"


def _fw_scalar(op):
    """A unary op's forward on one value (eager's 0-d tensors: a call on Python floats costs
    a fraction of one on arrays); the same expression as ``_fw_unary``'s loop, so the same
    bits."""
    lines = ["@njit(cache=True, error_model='numpy')",
             f"def _sc_{op.name}(av, f0, f1):",
             f"    return {_fwd_expr(op)}"]
    return "\n".join(lines) + "\n"


def _fw_binary(op):
    lines = ["@njit(cache=True, error_model='numpy')",
             f"def {_fw_name(op)}(y, x0, x1, sh_y, sh0, sh1, iat, fat):"]
    lines += ["    " + s for s in _fwd_attrs(op)]
    lines += ["    n = y.shape[0]", "    m0 = x0.shape[0]", "    m1 = x1.shape[0]"]
    mask = ["m = iat[k] != 0"] if re.search(r"\bm\b", op.fwd) else []
    cases = [("m0 == n and m1 == n", "x0[k]", "x1[k]"), ("m0 == n and m1 == 1", "x0[k]", "x1[0]"),
             ("m0 == 1 and m1 == n", "x0[0]", "x1[k]")]
    for c, (cond, a, b) in enumerate(cases):
        lines += [f"    {'if' if c == 0 else 'elif'} {cond}:", "        for k in range(n):",
                  f"            av = np.float64({a})", f"            bv = np.float64({b})"]
        lines += ["            " + s for s in mask]
        lines.append(f"            y[k] = {_fwd_expr(op)}")
    lines += ["    else:", "        i0 = bcast_index(sh0, sh_y)",
              "        i1 = bcast_index(sh1, sh_y)", "        for k in range(n):",
              "            av = np.float64(x0[i0[k]])", "            bv = np.float64(x1[i1[k]])"]
    lines += ["            " + s for s in mask]
    lines.append(f"            y[k] = {_fwd_expr(op)}")
    return "\n".join(lines) + "\n"


def _scalar_fwd(op, n):
    """Statements computing an elementwise op on one-element operands in the arena."""
    lines = [f"{name}v = val[o{q}]" for q, name in enumerate("ab"[:n])
             if re.search(rf"\b{name}\b", op.fwd)]
    if re.search(r"\bm\b", op.fwd):
        lines.append("m = iat[io] != 0")
    lines += _fwd_attrs(op, "fat[fo + {i}]")
    return lines + [f"val[oy] = {_fwd_expr(op)}"]


def _forward(ops):
    """The forward sweep: recompute every non-source node, in recording order."""
    L = []  # noqa: N806
    w = L.append
    w("@njit(cache=True, error_model=\"numpy\")")
    w("def forward(nodes, args, shapes, iat, fat, val, start, stop):")
    w("    for i in range(start, stop):")
    w("        c = nodes[i, 0]")
    w("        nargs = ARITY[c]")
    w("        if nargs == 0:")
    w("            continue")
    w(f"        oy = nodes[i, {F_VOFF}]")
    w(f"        ny = nodes[i, {F_SIZE}]")
    w(f"        p = nodes[i, {F_ARG}]")
    w(f"        io = nodes[i, {F_IAT}]")
    w(f"        fo = nodes[i, {F_FAT}]")
    w(f"        sh_y = shapes[nodes[i, {F_SHP}]:nodes[i, {F_SHP}] + nodes[i, {F_NDIM}]]")
    for n in (1, 2, 3):
        w(f"        {'if' if n == 1 else 'elif'} nargs == {n}:")
        for q in range(n):
            w(f"            o{q} = nodes[args[p + {q}], {F_VOFF}]")
            w(f"            n{q} = nodes[args[p + {q}], {F_SIZE}]")
        # One-element fast path: elementwise formulas, gathers and copies on arena entries,
        # without building views or calling a kernel (the scalar graphs' whole forward).
        inline = [op for op in ops if op.arity == n and op.elementwise]
        gathers = [op for op in ops if op.arity == n and op.replay in (_GATHER, _COPY)]
        w("            done = False")
        if inline or gathers:
            cond = " and ".join(["ny == 1"] + [f"n{q} == 1" for q in range(n)])
            w(f"            if {cond}:")
            w("                done = True")
            first = True
            for op in inline:
                w(f"                {'if' if first else 'elif'} c == {op.code}:  # {op.name}")
                for line in _scalar_fwd(op, n):
                    w("                    " + line)
                first = False
            if gathers:
                gather_codes = [op.code for op in gathers if op.replay == _GATHER]
                copy_codes = [op.code for op in gathers if op.replay == _COPY]
                if gather_codes:
                    w(f"                {'if' if first else 'elif'} "
                      + " or ".join(f"c == {k}" for k in gather_codes) + ":")
                    w("                    val[oy] = val[o0 + iat[io]]")
                    first = False
                if copy_codes:
                    w(f"                {'if' if first else 'elif'} "
                      + " or ".join(f"c == {k}" for k in copy_codes) + ":")
                    w("                    val[oy] = val[o0]")
                    first = False
            w("                else:")
            w("                    done = False")
        # Equal sizes (no broadcast), small nodes: the same formulas as a loop on the arena,
        # without the views and the kernel call, which cost more than the loop on an RNN's
        # (1, 32) rows (codegen.INLINE_MAX: larger nodes take the kernel's vectorized loop)
        if inline:
            codegen.inline_loops(w, inline, n, _scalar_fwd)
            # a gather of one element from a larger input (x[i] of a vector)
        if n == 1 and any(op.replay == _GATHER for op in ops if op.arity == 1):
            codes = [op.code for op in ops if op.arity == 1 and op.replay == _GATHER]
            w("            if not done and ny == 1 and ("
              + " or ".join(f"c == {k}" for k in codes) + "):")
            w("                val[oy] = val[o0 + iat[io]]")
            w("                done = True")
        w("            if not done:")
        w("                y = val[oy:oy + ny]")
        w(f"                ia = iat[io:io + nodes[i, {F_NIAT}]]")
        w(f"                fa = fat[fo:fo + nodes[i, {F_NFAT}]]")
        for q in range(n):
            w(f"                x{q} = val[o{q}:o{q} + n{q}]")
            w(f"                a{q} = args[p + {q}]")
            w(f"                sh{q} = shapes[nodes[a{q}, {F_SHP}]:nodes[a{q}, {F_SHP}]"
              f" + nodes[a{q}, {F_NDIM}]]")
        xs = ", ".join(f"x{q}" for q in range(n))
        shs = ", ".join(f"sh{q}" for q in range(n))
        first = True
        for op in ops:
            if op.arity != n:
                continue
            w(f"                {'if' if first else 'elif'} c == {op.code}:  # {op.name}")
            call = f"{_fw_name(op)}({{}}, {{}}, sh_y, {shs}, ia, fa)"
            if op.replay_f32:
                # float32 node: the kernel in float32, as eager runs it (registry.replay_f32)
                xs32 = ", ".join(f"x{q}.astype(np.float32)" for q in range(n))
                w(f"                    if nodes[i, {F_FLAGS}] & {FLAG_F32}:")
                w("                        y32 = np.empty(ny, np.float32)")
                w("                        " + call.format("y32", xs32))
                w("                        y[:] = y32")
                w("                    else:")
                w("                        " + call.format("y", xs))
            else:
                w("                    " + call.format("y", xs))
            first = False
    variadic = [op for op in ops if op.arity == -1 and not op.python]
    if variadic:
        w("        else:")
        w("            y = val[oy:oy + ny]")
        w(f"            ia = iat[io:io + nodes[i, {F_NIAT}]]")
        w(f"            fa = fat[fo:fo + nodes[i, {F_NFAT}]]")
        w(f"            for k in range(nodes[i, {F_NARG}]):")
        w("                ak = args[p + k]")
        w(f"                ok = nodes[ak, {F_VOFF}]")
        w(f"                xk = val[ok:ok + nodes[ak, {F_SIZE}]]")
        w(f"                shk = shapes[nodes[ak, {F_SHP}]:"
          f"nodes[ak, {F_SHP}] + nodes[ak, {F_NDIM}]]")
        for j, op in enumerate(variadic):
            w(f"                {'if' if j == 0 else 'elif'} c == {op.code}:  # {op.name}")
            w(f"                    {_fw_name(op)}(y, xk, sh_y, shk, k, ia, fa)")
    # float32 nodes: round as eager float32 arithmetic does after every op
    w(f"        if nodes[i, {F_FLAGS}] & {FLAG_F32}:")
    w("            for k in range(oy, oy + ny):")
    w("                val[k] = np.float32(val[k])")
    return "\n".join(L) + "\n"


_RUN = f'''
@njit(cache=True, inline="always", error_model="numpy")
def write_inputs(val, in_off, in_len, x):
    """Write the inputs ``x`` (flat, concatenated) into the arena at ``in_off``."""
    pos = 0
    for q in range(in_off.shape[0]):
        o = in_off[q]
        for k in range(in_len[q]):
            val[o + k] = x[pos + k]
        pos += in_len[q]


@njit(cache=True, inline="always", error_model="numpy")
def read_gradients(adj, grad_off, grad_len):
    """The adjoints at ``grad_off`` (``grad_len`` each), concatenated in a new array."""
    grads = np.zeros(grad_len.sum())
    pos = 0
    for q in range(grad_off.shape[0]):
        o = grad_off[q]
        for k in range(grad_len[q]):
            grads[pos + k] = adj[o + k]
        pos += grad_len[q]
    return grads


@njit(cache=True, nogil=True, error_model="numpy")
def run(nodes, args, shapes, iat, fat, base, in_off, in_len, x, out_node, grad_off, grad_len,
        with_grad):
    """Replay the tape on new inputs: write ``x`` (the inputs, flat and concatenated) into
    the arena at ``in_off``, run the forward, then (``with_grad``) the reverse sweep seeded
    with 1 at ``out_node``; returns the output's value and the adjoints at ``grad_off``
    concatenated. Every call owns its arenas, so concurrent calls (nogil) are safe."""
    return run_in(nodes, args, shapes, iat, fat, base.copy(), np.empty(base.shape[0]), in_off,
                  in_len, x, out_node, grad_off, grad_len, with_grad)


@njit(cache=True, nogil=True, error_model="numpy")
def run_in(nodes, args, shapes, iat, fat, val, adj, in_off, in_len, x, out_node, grad_off,
           grad_len, with_grad):
    """``run`` on arenas the caller owns: ``val`` holds the trace's values (a copy of its
    arena, or this function's result from an earlier call: the forward rewrites every
    non-source node and constants never change); ``adj`` any array of its size. Reusing
    them spares large traces a fresh allocation per call, which costs a page fault per
    4 KiB page on first touch (most of a 4M-element replay's time here)."""
    write_inputs(val, in_off, in_len, x)
    forward(nodes, args, shapes, iat, fat, val, 0, nodes.shape[0])
    oy = nodes[out_node, {F_VOFF}]
    value = val[oy]
    if with_grad:
        n = nodes.shape[0]
        adj[:] = 0.0
        touched = np.zeros(n, np.uint8)
        freed = np.zeros(n, np.uint8)
        dirty = np.zeros(n, np.uint8)
        adj[oy] = 1.0
        touched[out_node] = 1
        sweep(nodes, args, shapes, iat, fat, val, adj, touched, freed, dirty, out_node, True,
              False)
        return value, read_gradients(adj, grad_off, grad_len)
    return value, np.zeros(grad_len.sum())


@njit(cache=True, nogil=True, error_model="numpy")
def run_forward(nodes, args, shapes, iat, fat, base, in_off, in_len, x):
    """The forward sweep alone, on a new arena: ``x`` written at ``in_off`` (as ``run``);
    returns the arena, which the caller keeps for ``run_backward`` (compile of a function
    of Tensors: one arena per call, so several calls may await one backward)."""
    val = base.copy()
    write_inputs(val, in_off, in_len, x)
    forward(nodes, args, shapes, iat, fat, val, 0, nodes.shape[0])
    return val


@njit(cache=True, nogil=True, error_model="numpy")
def run_backward(nodes, args, shapes, iat, fat, val, out_nodes, seed, grad_off, grad_len):
    """The reverse sweep on arena ``val`` (from ``run_forward``), seeded with ``seed`` (the
    output nodes' adjoints, flat and concatenated in ``out_nodes`` order, any shapes);
    returns the adjoints at ``grad_off``, concatenated."""
    n = nodes.shape[0]
    adj = np.zeros(val.shape[0])
    touched = np.zeros(n, np.uint8)
    freed = np.zeros(n, np.uint8)
    dirty = np.zeros(n, np.uint8)
    pos = 0
    start = 0
    for q in range(out_nodes.shape[0]):
        i = out_nodes[q]
        o = nodes[i, {F_VOFF}]
        for k in range(nodes[i, {F_SIZE}]):
            adj[o + k] += seed[pos + k]
        pos += nodes[i, {F_SIZE}]
        touched[i] = 1
        start = max(start, i)
    sweep(nodes, args, shapes, iat, fat, val, adj, touched, freed, dirty, start, True, False)
    return read_gradients(adj, grad_off, grad_len)
'''


def generate_source(ops):
    """The replay module's source for ``ops`` (op records; sources need no code)."""
    ops = [op for op in ops if not op.source]
    funcs = []
    for op in ops:
        if op.elementwise:
            funcs.append({1: codegen._ew_unary, 2: codegen._ew_binary}[op.arity](op, False))
            funcs.append({1: _fw_unary, 2: _fw_binary}[op.arity](op))
    table = registry.OPS
    return (codegen._HEADER + _HEADER_EXTRA + "\n\n" + "\n\n".join(funcs) + "\n\n"
            + codegen._sweep(ops, table, replay=True) + "\n\n" + _forward(ops) + _RUN)


_eager = None


def eager_kernels():
    """The replay's forward kernels (``_fw_<name>``, from the same generator) of the
    elementwise ops whose formula rounds more than once (registry's ``rounds_once``), in a
    small module of their own, with a one-value version of each unary one (``_sc_<name>``):
    eager computes those ops with them (pointwise.eager_forward), so eager values are the
    replay's by construction. Each kernel compiles on first use
    (well under a second), then loads from Numba's cache."""
    global _eager
    if _eager is None:
        ops = [op for op in registry.OPS
               if op.elementwise and op.fwd is not None and not op.rounds_once]
        funcs = [{1: _fw_unary, 2: _fw_binary}[op.arity](op) for op in ops]
        funcs += [_fw_scalar(op) for op in ops if op.arity == 1]
        _eager = codegen.load_module("numbagrad_eager_", codegen._HEADER + _HEADER_EXTRA
                                     + "\n\n" + "\n\n".join(funcs), (),
                                     salt_files=(Path(replay_kernels.__file__),))
    return _eager


def load(ops, every_op=False):
    """The compiled replay module for ``ops`` (imported once per process, cached on disk):
    with ``EVERY_OP`` (the default) or ``every_op``, the one module of every replayable op."""
    if every_op or EVERY_OP:
        ops = [op for op in registry.OPS if op.replayable and not op.python]
    ops = sorted({op.code: op for op in ops}.values(), key=lambda op: op.code)
    return codegen.load_module("numbagrad_replay_", generate_source(ops),
                               codegen._extension_kernels(ops),
                               salt_files=(Path(replay_kernels.__file__),))
