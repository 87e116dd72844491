"""Fused elementwise runs for compiled replay (numbagrad.compile).

A traced tape often holds a run of elementwise ops over one large size:
``tanh(x * w + b) * exp(-x * x) + 0.5 * (w - b) ** 2`` is eleven nodes of 4M elements. The
interpreted replay runs them one node at a time: each reads its operands from memory and
writes its value (and, backward, its adjoints) back, 24 passes over 32 MB arrays, with libm
calls that never vectorize. Here such a run becomes a *region* with two generated kernels:

* forward: one loop over the elements computing every node of the region in registers,
  writing only the values used outside it (its *exits*);
* backward: one loop that recomputes the region's values in registers from its inputs and
  applies the chain rule through it in reverse, reading the exits' adjoints and adding into
  the inputs' adjoints, with nothing in between going to memory.

Both are generated from the op table's formulas (``fwd``, ``grads``), the same the replay
sweeps use, with exp, log, tanh and sigmoid bound to the vectorizable versions of
numbagrad.ops.vmath (within 2 ulp of NumPy's), so LLVM compiles the loops to AVX2 code.
A kernel depends only on the region's structure (ops and wiring), not on its size or arena
offsets (passed in an array), and its module is named by a hash of its source, so a
structure compiles once per machine (Numba's on-disk cache).

Python drives a fused trace (``run``): the interpreted forward sweep up to a region, the
region's kernel, and so on; backward, the interpreted reverse sweep stops at a region (its
nodes carry the big-node flag, which makes the sweep hand a node back), the region's kernel
runs, and the sweep resumes below it. The driver's few calls cost microseconds, against the
milliseconds a region of FUSE_MIN or more elements takes.

Not fused (README, Limitations): float32 nodes (eager rounds each op to float32, the fused
loop would need the same rounding per op), nodes below FUSE_MIN elements, broadcasts other
than one-element operands, compiled functions of Tensors and ``as_numba()`` (they keep the
one-call interpreted replay).
"""

import os
import re
import sys
import threading
from pathlib import Path

import numpy as np

from ..ops import registry, vmath
from . import codegen, replay_codegen
from .tape import (
    F_ARG,
    F_FAT,
    F_FLAGS,
    F_IAT,
    F_NARG,
    F_SIZE,
    F_VOFF,
    FLAG_BIG,
    FLAG_F32,
    FLAG_HOOK,
    FLAG_NEEDS_GRAD,
)

# Smallest node (elements) fused: a region costs a few Python-level calls (~10 us); an
# elementwise pass over 64K float64 elements costs ~50 us or more. Env var for experiments.
FUSE_MIN = int(os.environ.get("NUMBAGRAD_FUSE_MIN", 65536))

_HEADER = (codegen._HEADER + replay_codegen._HEADER_EXTRA + '''
# the vectorizable transcendentals replace libm's in this module's formulas
from numbagrad.ops.vmath import vexp as exp, vlog as log, vsigmoid as sigmoid  # noqa: E402,F811
from numbagrad.ops.vmath import vtanh as tanh  # noqa: E402,F811
''')


class Region:
    """A fused run: nodes ``start..end`` (the members; sources may sit between them)."""

    def __init__(self, members, nodes, args, fat, consumers, out_node):
        self.members = members
        self.start, self.end = members[0], members[-1]
        self.size = int(nodes[members[0], F_SIZE])
        inside = set(members)
        self.exits = [i for i in members
                      if i == out_node or any(c not in inside for c in consumers[i])]
        # members nothing reads: the interpreted sweeps would compute them; here they are
        # dead code (their values and adjoints reach nothing)
        self.live = [i for i in members if consumers[i] or i in self.exits]
        self.inputs = []  # external operand nodes of the live members, in first-use order
        for i in self.live:
            for a in _operands(nodes, args, i):
                if a not in inside and a not in self.inputs:
                    self.inputs.append(a)
        needs = {i: bool(nodes[i, F_FLAGS] & FLAG_NEEDS_GRAD) for i in members + self.inputs}
        self.grad_inputs = np.array([a for a in self.inputs if needs[a]], np.int64)
        # exits whose adjoint the backward kernel reads: if the sweep never reached one of
        # them, the region's backward falls back to the interpreted sweep (see run)
        self.grad_exits = np.array([i for i in self.exits if needs[i]], np.int64)
        self.source, self.off = _generate(self, nodes, args, fat, needs)
        self.fw = self.bw = None


def _operands(nodes, args, i):
    p = nodes[i, F_ARG]
    return args[p:p + nodes[i, F_NARG]].tolist()


def _eligible(nodes, args, i):
    op = registry.OPS[nodes[i, 0]]
    n = nodes[i, F_SIZE]
    if not op.elementwise or op.arity not in (1, 2) or n < FUSE_MIN or op.fwd is None:
        return False
    if nodes[i, F_FLAGS] & (FLAG_F32 | FLAG_HOOK) or nodes[i, F_NARG] != op.arity:
        return False
    return all(nodes[a, F_SIZE] in (n, 1) for a in _operands(nodes, args, i))


def plan(nodes, args, fat, out_node):
    """The fused regions of a traced tape (a list, maybe empty): maximal runs of eligible
    elementwise nodes of one size, in recording order, sources allowed between them."""
    n = len(nodes)
    if not (nodes[:, F_SIZE] >= FUSE_MIN).any():
        return []  # most traces: no node large enough, no per-node walk at trace time
    consumers = [[] for _ in range(n)]
    for i in range(n):
        for a in _operands(nodes, args, i):
            consumers[a].append(i)
    regions, run = [], []

    def close():
        if len(run) >= 2 or (run and _has_transcendental(nodes[run[0], 0])):
            regions.append(Region(list(run), nodes, args, fat, consumers, out_node))
        run.clear()

    for i in range(n):
        if registry.OPS[nodes[i, 0]].source:
            continue
        eligible = _eligible(nodes, args, i)
        if not (eligible and run and nodes[i, F_SIZE] == nodes[run[0], F_SIZE]):
            close()
        if eligible:
            run.append(i)
    close()
    return regions


def _has_transcendental(code):
    op = registry.OPS[code]
    return bool(re.search(r"\b(exp|log|tanh|sigmoid)\(", op.fwd + " ".join(op.grads)))


# ---- code generation --------------------------------------------------------------------


# formulas whose attributes choose a branch: pw(a, f0) tests its exponent
_BRANCHY = re.compile(r"\b(pw|gelu|gelu_grad|softplus)\(|\bf\d\s*(==|!=|<|>)")


def _subst(formula, names):
    return re.sub(r"\b(g|a|b|y|m|f0|f1)\b", lambda mt: names[mt.group(1)], formula)


def _generate(region, nodes, args, fat, needs):
    """The region's kernel module source and its offsets array: [inputs' arena offsets,
    members' value offsets, members' iat offsets, members' fat offsets]."""
    members, inputs = region.live, region.inputs
    local = {i: j for j, i in enumerate(members)}
    p_in, p_val = 0, len(inputs)
    p_iat, p_fat = p_val + len(members), p_val + 2 * len(members)
    off = np.array([nodes[a, F_VOFF] for a in inputs] + [nodes[i, F_VOFF] for i in members]
                   + [nodes[i, F_IAT] for i in members] + [nodes[i, F_FAT] for i in members],
                   np.int64)
    scalar = [nodes[a, F_SIZE] == 1 for a in inputs]
    ops = [registry.OPS[nodes[i, 0]] for i in members]
    # the formulas each kernel evaluates per member: forward's, backward's (both)
    texts = {False: [op.fwd for op in ops],
             True: [op.fwd + " " + " ".join(f for f in op.grads if f) for op in ops]}

    def operand(a):
        return f"v{local[a]}" if a in local else f"e{inputs.index(a)}"

    def names(j, i):
        ab = _operands(nodes, args, i)
        return {"a": operand(ab[0]), "b": operand(ab[1]) if len(ab) > 1 else "0.0",
                "y": f"v{j}", "g": f"g{j}", "m": f"m{j}", "f0": f"f0_{j}", "f1": f"f1_{j}"}

    def hoisted(backward):
        out = []
        for q, a in enumerate(inputs):
            if scalar[q]:
                out.append(f"e{q} = val[off[{p_in + q}]]")
            else:
                # views, indexed by the loop counter alone: an index ``offset + k`` would
                # carry Numba's negative-index check, which keeps LLVM from vectorizing
                out.append(f"x{q} = val[off[{p_in + q}]:off[{p_in + q}] + n]")
                if backward and needs[a]:
                    out.append(f"ax{q} = adj[off[{p_in + q}]:off[{p_in + q}] + n]")
        for j, (i, text) in enumerate(zip(members, texts[backward])):
            for t in (0, 1):
                if re.search(rf"\bf{t}\b", text):
                    # attributes that select a formula's branch (pow's exponent) are written
                    # into the source, so LLVM folds the branch and the loop vectorizes
                    value = repr(float(fat[nodes[i, F_FAT] + t])) if _BRANCHY.search(text) \
                        else f"fat[off[{p_fat + j}] + {t}]"
                    out.append(f"f{t}_{j} = {value}")
            if re.search(r"\bm\b", text):
                out.append(f"mk{j} = iat[off[{p_iat + j}]:off[{p_iat + j}] + n]")
            if i in region.exits:
                if backward:
                    if needs[i]:
                        out.append(f"ay{j} = adj[off[{p_val + j}]:off[{p_val + j}] + n]")
                else:
                    out.append(f"vy{j} = val[off[{p_val + j}]:off[{p_val + j}] + n]")
        return out

    def forward_body(backward):
        out = [f"e{q} = x{q}[k]" for q in range(len(inputs)) if not scalar[q]]
        for j, (i, op, text) in enumerate(zip(members, ops, texts[backward])):
            if re.search(r"\bm\b", text):
                out.append(f"m{j} = mk{j}[k] != 0")
            out.append(f"v{j} = {_subst(op.fwd, names(j, i))}")
        return out

    w = []
    w.append("@njit(cache=True, nogil=True, error_model='numpy')")
    w.append("def fw(val, iat, fat, off, n):")
    w += ["    " + s for s in hoisted(False)]
    w.append("    for k in range(n):")
    w += ["        " + s for s in forward_body(False)]
    w += [f"        vy{j}[k] = v{j}" for j, i in enumerate(members) if i in region.exits]
    w.append("")
    w.append("")
    w.append("@njit(cache=True, nogil=True, error_model='numpy')")
    w.append("def bw(val, adj, iat, fat, off, n):")
    w += ["    " + s for s in hoisted(True)]
    acc = {}  # operand -> the variable its adjoint accumulates in
    for q, a in enumerate(inputs):
        if needs[a]:
            acc[a] = f"s{q}" if scalar[q] else f"h{q}"
            if scalar[q]:
                w.append(f"    s{q} = 0.0")
    for j, i in enumerate(members):
        acc[i] = f"g{j}"
    w.append("    for k in range(n):")
    body = forward_body(True)
    # adjoints: the exits' from the arena (what the sweep gathered below the region), the
    # inputs' current values (so each addition rounds as the sweep's would), members' 0
    for j, i in enumerate(members):
        if needs[i]:
            body.append(f"g{j} = ay{j}[k]" if i in region.exits else f"g{j} = 0.0")
    body += [f"h{q} = ax{q}[k]" for q, a in enumerate(inputs) if needs[a] and not scalar[q]]
    for j in range(len(members) - 1, -1, -1):
        i, op = members[j], ops[j]
        if not needs[i]:
            continue
        nm = names(j, i)
        for a, formula in zip(_operands(nodes, args, i), op.grads):
            if formula and needs[a]:
                body.append(f"{acc[a]} += {_subst(formula, nm)}")
    body += [f"ax{q}[k] = h{q}" for q, a in enumerate(inputs)
             if needs[a] and not scalar[q]]
    w += ["        " + s for s in body]
    w += [f"    adj[off[{p_in + q}]] += s{q}" for q, a in enumerate(inputs)
          if needs[a] and scalar[q]]
    return "\n".join(w) + "\n", off


def load(region):
    """Compile (or load from the cache) ``region``'s kernels."""
    module = codegen.load_module("numbagrad_fused_", _HEADER + "\n\n" + region.source, (),
                                 salt_files=(Path(vmath.__file__),))
    region.fw, region.bw = module.fw, module.bw


class Plan:
    """A trace's regions and the node table the fused reverse sweep walks (the regions'
    members flagged, so the sweep hands them back)."""

    def __init__(self, regions, nodes, arena_size):
        self.regions = regions
        self.nodes = nodes.copy()
        self.region_of = {}
        for r in regions:
            for i in r.members:
                self.nodes[i, F_FLAGS] |= FLAG_BIG
                self.region_of[i] = r
            load(r)
        # the adjoint arena's ranges a call must zero: all but the regions' inner members,
        # whose adjoints live in registers (~30 MB each on a 4M-element region: the memset
        # would cost as much as a fused pass)
        inner = sorted((int(nodes[i, F_VOFF]), int(nodes[i, F_SIZE])) for r in regions
                       for i in r.members if i not in r.exits)
        self.zero, pos = [], 0
        for o, n in inner:
            if o > pos:
                self.zero.append((pos, o))
            pos = max(pos, o + n)
        if pos < arena_size:
            self.zero.append((pos, arena_size))
        self.grad_buffers = []
        self.lock = threading.Lock()

    def gradient_buffer(self, size):
        """An array for a call's gradients: one an earlier call returned, if nothing refers
        to it any more (the caller dropped every gradient, and the views share its base),
        else a new one. Fresh memory is expensive here: writing 3 x 4M new float64 costs
        ~100 ms of page faults, four times the copy itself."""
        with self.lock:
            for buf in self.grad_buffers:
                # references: the list, this loop's name, getrefcount's argument
                if sys.getrefcount(buf) == 3:
                    return buf
            buf = np.empty(size)
            if len(self.grad_buffers) < 2:
                self.grad_buffers.append(buf)
            return buf


def run(plan, program, val, adj, parts, with_grad):
    """``program``'s replay (as its module's ``run_in``) with ``plan``'s regions fused, on
    the inputs ``parts`` (flat float64 arrays, in ``program.in_off`` order)."""
    m = program.module
    nodes, args, shapes, iat, fat = (program.nodes, program.args, program.shapes, program.iat,
                                     program.fat)
    for o, n, part in zip(program.in_off.tolist(), program.in_len.tolist(), parts):
        val[o:o + n] = part
    pos = 0
    for r in plan.regions:
        if pos < r.start:
            m.forward(nodes, args, shapes, iat, fat, val, pos, r.start)
        r.fw(val, iat, fat, r.off, r.size)
        pos = r.end + 1
    if pos < len(nodes):
        m.forward(nodes, args, shapes, iat, fat, val, pos, len(nodes))
    out = program.out_node
    value = val[nodes[out, F_VOFF]]
    if not with_grad:
        return value, np.zeros(int(program.grad_len.sum()))
    n = len(nodes)
    for lo, hi in plan.zero:
        adj[lo:hi] = 0.0
    touched = np.zeros(n, np.uint8)
    freed = np.zeros(n, np.uint8)
    dirty = np.zeros(n, np.uint8)
    adj[nodes[out, F_VOFF]] = 1.0
    touched[out] = 1
    sweep_nodes, start = plan.nodes, out
    while start >= 0:
        status, i = m.sweep(sweep_nodes, args, shapes, iat, fat, val, adj, touched, freed,
                            dirty, start, True, False)
        if status == 0:
            break
        r = plan.region_of[i]
        if touched[r.grad_exits].all():
            r.bw(val, adj, iat, fat, r.off, r.size)
            touched[r.grad_inputs] = 1
            start = r.start - 1
        else:
            # some exit got no gradient: the interpreted sweep, which skips what no gradient
            # reaches, takes this region on its recomputed values
            m.forward(nodes, args, shapes, iat, fat, val, r.start, r.end + 1)
            sweep_nodes = sweep_nodes.copy()
            sweep_nodes[r.start:r.end + 1, F_FLAGS] = nodes[r.start:r.end + 1, F_FLAGS]
            start = i
    grads = plan.gradient_buffer(int(program.grad_len.sum()))
    pos = 0
    for o, n in zip(program.grad_off.tolist(), program.grad_len.tolist()):
        grads[pos:pos + n] = adj[o:o + n]
        pos += n
    return value, grads
