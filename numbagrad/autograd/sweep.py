"""The generic sweeps: @njit loops over a tape that call each node's kernel by its address.

Nothing here depends on the op table: a sweep reads node i's op code, checks what must be
checked (reached, needing a gradient, saved values freed or changed in place, handed to
Python) and calls ``table[code]`` (engine/kernel_tables), so this module compiles once, in a
fraction of a second, whatever the number of ops. Eager backward, ``autograd.grad`` and the
compiled replay run one reverse walk (eager through ``sweep``, the replay through
``replay_sweep``: one source, ``_reverse_walk``, pruned of eager's checks for the replay);
the differentiable backward (create_graph) walks with its parts (``TapeOrder``, ``Walk``);
the replay's entry points (``run``, ``run_in``, ``run_forward``, ``run_backward``) are here.
"""

import numpy as np
from numba import njit, types

from ..core import compile_pool, safe_cache
from ..core.tape import F_ARG, F_FLAGS, F_NARG, F_SIZE, F_VOFF, FLAG_F32
from ..engine import kernel_tables
from ..engine.kernel_abi import call_kernel, make_frame
from ..engine.kernelgen import INLINE_MAX

# sweep statuses
DONE, HAND_BACK, FREED, DIRTY, NOT_COMPILED = range(5)
# rows of the block of address tables (kernel_tables.KINDS)
FW, BW_SMALL, RBW, SMALL_OK, BW, FW_BCAST, BW_BCAST, FW32, OWN_F32 = range(9)
# what the replay's walk never reads (eager's saved-value checks), as constants
_NO_SAVES = np.zeros((1, 3), np.int64)
_NO_FLAGS = np.zeros(1, np.uint8)
_NO_DIRT = np.zeros(1, np.int64)


@njit(cache=True, inline="always", error_model="numpy")
def broadcasts(nodes, args, i, nargs):
    """Whether some operand of node i has another size than the node."""
    ny = nodes[i, F_SIZE]
    p = nodes[i, F_ARG]
    for q in range(nargs):
        if nodes[args[p + q], F_SIZE] != ny:
            return True
    return False


@njit(cache=True, inline="always", error_model="numpy")
def reverse_row(tables, flat_row, nodes, args, i, nargs):
    """The row of ``tables`` whose kernel differentiates node i: for an elementwise node,
    BW_BCAST when an operand has another size, BW_SMALL when it has at most INLINE_MAX
    elements; else ``flat_row`` (eager's BW, the replay's RBW)."""
    if tables[SMALL_OK, nodes[i, 0]] == 0:
        return flat_row
    if broadcasts(nodes, args, i, nargs):
        return BW_BCAST
    return BW_SMALL if nodes[i, F_SIZE] <= INLINE_MAX else flat_row


@njit(cache=True, inline="always", error_model="numpy")
def forward_row(tables, nodes, args, i, nargs):
    """The row of ``tables`` whose kernel recomputes node i: FW_BCAST for an elementwise
    node with an operand of another size, FW32 for a float32 node of a ``replay_f32`` op,
    else FW."""
    c = nodes[i, 0]
    if tables[SMALL_OK, c] != 0:
        return FW_BCAST if broadcasts(nodes, args, i, nargs) else FW
    if nodes[i, F_FLAGS] & FLAG_F32 and tables[OWN_F32, c] != 0:
        return FW32
    return FW


@njit(cache=True, inline="always", error_model="numpy")
def reached(nodes, touched, i):
    """Whether a reverse pass reaches node i (``touched``: the seeds, then every input a
    differentiated node's gradient reaches) and the node needs a gradient."""
    return touched[i] != 0 and (nodes[i, F_FLAGS] & 1) != 0


@njit(cache=True, error_model="numpy")
def next_reached(nodes, touched, i):
    """The first node from i down that a reverse pass reaches and that needs a gradient,
    sources included; -1 if none (the differentiable backward's walk: ``Walk``)."""
    while i >= 0 and not reached(nodes, touched, i):
        i -= 1
    return i


@njit(cache=True, inline="always", error_model="numpy")
def inputs_to_differentiate(nodes, arity, touched, i):
    """Node i's number of inputs if a reverse pass differentiates it (reached, needing a
    gradient, not a source: -1 for a variadic op), else 0. (``reached``'s test written out:
    through ``reached`` the sweeps compiled to a slower loop)"""
    if touched[i] == 0 or (nodes[i, F_FLAGS] & 1) == 0:
        return 0
    return arity[nodes[i, 0]]


@njit(cache=True, inline="always", error_model="numpy")
def mark_inputs(nodes, args, i, touched):
    """Node i's inputs that need a gradient are reached."""
    p = nodes[i, F_ARG]
    for k in range(nodes[i, F_NARG]):
        a = args[p + k]
        if nodes[a, F_FLAGS] & 1:
            touched[a] = 1


def _reverse_walk(eager):
    """The one reverse walk, made twice from this source: eager's (``eager`` True: with its
    checks, called from Python) and the replay's (False: a constant, so what only eager
    needs is pruned before the replay's entry points compile the loop they inline)."""
    @njit(cache=True, inline="always", error_model="numpy")
    def sweep(tables, flat_row, arity, saves, nodes, args, shapes, iat, fat, val, adj,
              touched, freed, dirty, start, retain, check):
        """Walk nodes start..0, calling each reached node's kernel from the row
        ``reverse_row`` picks in ``tables`` (the block, rows as kernel_tables.KINDS). Returns
        (DONE, -1, 0) when done, (HAND_BACK, i, 0) to hand node i (big, hooked, or a custom
        Function's) to Python; eager's also (FREED, i, 0) when its saved values were freed,
        (DIRTY, i, 0) when one was modified in place (checked only with ``check``: when some
        node of the tape is freed or dirty), (NOT_COMPILED, i, row) when the kernel it needs
        is not, and frees each node's saved values unless ``retain``."""
        frame = make_frame(nodes, args, shapes, iat, fat, val, adj)
        for i in range(start, -1, -1):
            nargs = inputs_to_differentiate(nodes, arity, touched, i)
            if nargs == 0:
                continue
            if nodes[i, F_FLAGS] & 6:  # a big node, or one with hooks: Python takes it
                return HAND_BACK, i, 0
            if eager:
                if check:
                    c = nodes[i, 0]
                    p = nodes[i, F_ARG]
                    s = 0
                    for q in range(min(nargs, 3)):
                        if nodes[args[p + q], F_FLAGS] & 1:
                            s |= saves[c, q]
                    if s != 0:
                        if freed[i]:
                            return FREED, i, 0
                        if (s & 8) and dirty[i] > i:
                            return DIRTY, i, 0
                        for q in range(3):
                            if (s >> q) & 1 and dirty[args[p + q]] > i:
                                return DIRTY, i, 0
            row = reverse_row(tables, flat_row, nodes, args, i, nargs)
            address = tables[row, nodes[i, 0]]
            if eager:
                if address == 0:
                    return NOT_COMPILED, i, row
            call_kernel(address, i, frame)
            mark_inputs(nodes, args, i, touched)
            if eager:
                if not retain:
                    freed[i] = 1
        return DONE, -1, 0
    return sweep


# eager backward's and autograd.grad's reverse pass, and the replay's (see replay_sweep)
sweep = _reverse_walk(True)
_replay_walk = _reverse_walk(False)


@njit(cache=True, error_model="numpy")
def forward(tables, arity, nodes, args, shapes, iat, fat, val, start, stop):
    """Recompute nodes start..stop-1 in recording order (sources keep their values) with
    the forward kernels of ``tables`` (the block, rows as kernel_tables.KINDS); float32 nodes
    round as eager float32 arithmetic does after every op."""
    frame = make_frame(nodes, args, shapes, iat, fat, val, val[:0])
    for i in range(start, stop):
        c = nodes[i, 0]
        nargs = arity[c]
        if nargs == 0:
            continue
        call_kernel(tables[forward_row(tables, nodes, args, i, nargs), c], i, frame)
        if nodes[i, F_FLAGS] & FLAG_F32:
            oy = nodes[i, F_VOFF]
            for k in range(oy, oy + nodes[i, F_SIZE]):
                val[k] = np.float32(val[k])


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


@njit(cache=True, inline="always", error_model="numpy")
def replay_sweep(tables, arity, nodes, args, shapes, iat, fat, val, adj, touched, start):
    """The reverse pass of a replay, all inside Numba: the reverse walk without what only
    eager needs (freeing, in-place checks, uncompiled kernels: pruned as it compiles).
    ``tables``: the block (rows as kernel_tables.KINDS)."""
    status, _, _ = _replay_walk(tables, RBW, arity, _NO_SAVES, nodes, args, shapes, iat, fat,
                                val, adj, touched, _NO_FLAGS, _NO_DIRT, start, True, False)
    if status != DONE:  # a trace is recorded without big nodes; hooks are not replayed
        raise RuntimeError("numbagrad: a replayed node could not be differentiated in Numba")


@njit(cache=True, nogil=True, error_model="numpy")
def run(tables, arity, nodes, args, shapes, iat, fat, base, in_off, in_len, x, out_node,
        grad_off, grad_len, with_grad):
    """Replay the tape on new inputs: write ``x`` (the inputs, flat and concatenated) into
    the arena at ``in_off``, run the forward, then (``with_grad``) the reverse sweep seeded
    with 1 at ``out_node``; returns the output's value and the adjoints at ``grad_off``
    concatenated. ``tables`` holds the forward and the replay-backward address tables.
    Every call owns its arenas, so concurrent calls (nogil) are safe."""
    total = 0
    for q in range(grad_len.shape[0]):
        total += grad_len[q]
    grads = np.zeros(total)
    value = run_in(tables, arity, nodes, args, shapes, iat, fat, base.copy(),
                   np.empty(base.shape[0]), np.empty(nodes.shape[0], np.uint8), in_off,
                   in_len, x, out_node, grad_off, grad_len, grads, with_grad)
    return value, grads


@njit(cache=True, nogil=True, error_model="numpy")
def run_in(tables, arity, nodes, args, shapes, iat, fat, val, adj, touched, in_off, in_len, x,
           out_node, grad_off, grad_len, grads, with_grad):
    """``run`` on arrays the caller owns (no allocation here: each kind of allocation is a
    compile of its own): ``val`` holds the trace's values (a copy of its arena, or this
    function's result from an earlier call: the forward rewrites every non-source node and
    constants never change); ``adj`` any array of its size, ``touched`` one flag per node;
    ``grads`` (zeros, the gradients' total size) receives the adjoints at ``grad_off``.
    Returns the output's value. Reusing arenas spares large traces a fresh allocation per
    call, which costs a page fault per 4 KiB page on first touch."""
    write_inputs(val, in_off, in_len, x)
    forward(tables, arity, nodes, args, shapes, iat, fat, val, 0, nodes.shape[0])
    oy = nodes[out_node, F_VOFF]
    if with_grad:
        for k in range(touched.shape[0]):
            touched[k] = 0
        for i in range(nodes.shape[0]):  # only adjoints a sweep may add to: not a large
            if nodes[i, F_FLAGS] & 1:    # input's that no gradient is asked of
                o = nodes[i, F_VOFF]
                adj[o:o + nodes[i, F_SIZE]] = 0.0
        adj[oy] = 1.0
        touched[out_node] = 1
        replay_sweep(tables, arity, nodes, args, shapes, iat, fat, val, adj, touched, out_node)
        pos = 0
        for q in range(grad_off.shape[0]):
            o = grad_off[q]
            for k in range(grad_len[q]):
                grads[pos + k] = adj[o + k]
            pos += grad_len[q]
    return val[oy]


@njit(cache=True, nogil=True, error_model="numpy")
def run_forward(tables, arity, nodes, args, shapes, iat, fat, base, in_off, in_len, x):
    """The forward sweep alone, on a new arena: ``x`` written at ``in_off`` (as ``run``);
    returns the arena, which the caller keeps for ``run_backward`` (compile of a function
    of Tensors: one arena per call, so several calls may await one backward)."""
    val = base.copy()
    write_inputs(val, in_off, in_len, x)
    forward(tables, arity, nodes, args, shapes, iat, fat, val, 0, nodes.shape[0])
    return val


@njit(cache=True, nogil=True, error_model="numpy")
def run_backward(tables, arity, nodes, args, shapes, iat, fat, val, out_nodes, seed,
                 grad_off, grad_len):
    """The reverse sweep on arena ``val`` (from ``run_forward``), seeded with ``seed`` (the
    output nodes' adjoints, flat and concatenated in ``out_nodes`` order, any shapes);
    returns the adjoints at ``grad_off``, concatenated."""
    adj = np.zeros(val.shape[0])
    touched = np.zeros(nodes.shape[0], np.uint8)
    pos = 0
    start = 0
    for q in range(out_nodes.shape[0]):
        i = out_nodes[q]
        o = nodes[i, F_VOFF]
        for k in range(nodes[i, F_SIZE]):
            adj[o + k] += seed[pos + k]
        pos += nodes[i, F_SIZE]
        touched[i] = 1
        start = max(start, i)
    replay_sweep(tables, arity, nodes, args, shapes, iat, fat, val, adj, touched, start)
    return read_gradients(adj, grad_off, grad_len)


class TapeOrder:
    """The tapes a backward sweeps, newest first, each with the gradients that seed it
    ((node, gradient) pairs). A bridge's gradient, added while a newer tape is swept, seeds
    its older tape, which comes after every newer one: its seeds are complete by then."""

    __slots__ = ("pending",)

    def __init__(self):
        self.pending = {}  # tape serial -> (tape, [(node, gradient)])

    def add(self, tape, node, g):
        self.pending.setdefault(tape.serial, (tape, []))[1].append((node, g))

    def pop(self):
        """The newest tape left and its seeds, or (None, None)."""
        pending = self.pending
        return pending.pop(max(pending)) if pending else (None, None)

    def __iter__(self):
        tape, seeds = self.pop()
        while tape is not None:
            yield tape, seeds
            tape, seeds = self.pop()


class Walk:
    """The nodes of ``tape`` that a backward from nodes ``seeds`` reaches and that need a
    gradient, sources included, in the sweep's order (iterate). Whoever differentiates a
    node marks the inputs its gradient reaches in ``touched``. The tape may grow
    meanwhile: the walk reads a copy of its records."""

    def __init__(self, tape, seeds):
        self.nodes = tape.records()
        self.touched = np.zeros(len(self.nodes), np.uint8)
        self.touched[list(seeds)] = 1
        self.start = max(seeds)

    def __iter__(self):
        i = next_reached(self.nodes, self.touched, self.start)
        while i >= 0:
            yield i
            i = next_reached(self.nodes, self.touched, i - 1)


class Replay:
    """What a replay of one trace calls: the address tables (kernel_tables.block: rows forward,
    small backward, backward on views, whether each op has a small backward), with every
    kernel the trace's nodes need compiled, and the sweeps over its arrays."""

    def __init__(self, nodes, args, entries=("run_in",)):
        """Compile (or load) every kernel the trace's nodes need and the entry points
        ``entries`` the caller will call, several processes sharing a cold start."""
        self.tables = kernel_tables.block()
        self.arity, self.saves = kernel_tables.arity(), kernel_tables.saves()
        compile_pool.POOL.run([entry_job("kernels_needed")])  # a worker may have it
        need = np.zeros(self.tables.shape, np.uint8)
        kernels_needed(self.tables, self.arity, nodes, args, need)
        kernel_tables.ensure_many([(int(code), kernel_tables.KINDS[row])
                                for row, code in zip(*np.nonzero(need))],
                               [entry_job(name) for name in entries if not entry_ready(name)])

    def forward(self, p, val, start, stop):
        """Recompute nodes start..stop-1 of program ``p`` on arena ``val``."""
        forward(self.tables, self.arity, p.nodes, p.args, p.shapes, p.iat, p.fat, val, start,
                stop)

    def sweep(self, p, nodes, val, adj, touched, start):
        """The reverse sweep over ``nodes`` (program ``p``'s, some flagged to be handed back):
        (status, node) as ``sweep``."""
        n = len(nodes)
        status, i, _ = sweep(self.tables, RBW, self.arity, self.saves, nodes, p.args, p.shapes,
                             p.iat, p.fat, val, adj, touched, np.zeros(n, np.uint8),
                             np.zeros(n, np.uint8), start, True, False)
        return status, i


@njit(cache=True, error_model="numpy")
def kernels_needed(tables, arity, nodes, args, need):
    """Which kernels a replay of ``nodes`` calls, by the rules its passes follow: ``need``
    (rows, op codes, zeros) gets a 1 where that row's kernel of that op is needed."""
    for i in range(nodes.shape[0]):
        c = nodes[i, 0]
        nargs = arity[c]
        if nargs != 0:
            need[forward_row(tables, nodes, args, i, nargs), c] = 1
            need[reverse_row(tables, RBW, nodes, args, i, nargs), c] = 1


# ---- the entry points' signatures, so that a worker process can compile them ahead ------
_ARRAY = {"I1": types.int64[::1], "I2": types.int64[:, ::1], "F1": types.float64[::1],
          "U1": types.uint8[::1], "U2": types.uint8[:, ::1]}
_SCALAR = {"i": types.int64, "b": types.boolean}
_ENTRIES = {
    "kernels_needed": "I2 I1 I2 I1 U2",
    "run_in": "I2 I1 I2 I1 I1 I1 F1 F1 F1 U1 I1 I1 F1 i I1 I1 F1 b",
    "run_forward": "I2 I1 I2 I1 I1 I1 F1 F1 I1 I1 F1",
    "run_backward": "I2 I1 I2 I1 I1 I1 F1 F1 I1 F1 I1 I1",
}


def entry_signature(name):
    """The argument types the replay calls entry point ``name`` with."""
    return tuple(_ARRAY.get(t) or _SCALAR[t] for t in _ENTRIES[name].split())


def compile_entry(name):
    """Compile (or load from Numba's cache) entry point ``name`` for the replay's types."""
    globals()[name].compile(entry_signature(name))


def entry_job(name):
    """``compile_entry(name)`` as a compile job (core/compile_pool)."""
    return (__name__, "compile_entry", name)


def entry_ready(name):
    """Whether entry point ``name`` is compiled in this process or in Numba's cache."""
    fn = globals()[name]
    return entry_signature(name) in fn.overloads or safe_cache.on_disk(fn)


def prefetch(entries=("kernels_needed", "run_in")):
    """Have a worker process compile the replay's entry points not in Numba's cache yet,
    while this process traces: a cold start then compiles on two cores."""
    cold = [entry_job(name) for name in entries if not entry_ready(name)]
    if cold:
        compile_pool.POOL.prefetch(cold)
