"""Fused elementwise runs for compiled replay (numbagrad.compile).

A traced tape often holds a run of elementwise ops over one large size:
``tanh(x * w + b) * exp(-x * x) + 0.5 * (w - b) ** 2`` is eleven nodes of 4M elements. The
interpreted replay runs them one node at a time: each reads its operands from memory and
writes its value (and, backward, its adjoints) back, 24 passes over 32 MB arrays, with libm
calls that never vectorize. Here such a run becomes a *region* with generated kernels:

* forward: one loop over the elements computing every node of the region in registers,
  writing only the values used outside it (its *exits*);
* backward: one loop that recomputes the region's values in registers from its inputs and
  applies the chain rule through it in reverse, reading the exits' adjoints and adding into
  the inputs' adjoints, with nothing in between going to memory.

Both are generated from the op table's formulas (``fwd``, ``grads``), the same the replay
sweeps and eager use, with the same exp, log, tanh and sigmoid (numbagrad.engine.vmath, as in
every generated kernel), so a fused loop computes eager's values to the bit, and LLVM
compiles it to AVX2 code.
A kernel depends only on the region's structure (ops and wiring), not on its size or arena
offsets (passed in an array), and its module is named by a hash of its source, so a
structure compiles once per machine (Numba's on-disk cache).

A full ``sum()`` of the run's one exit joins the region as its *tail*: the forward kernel
sums the values in NumPy's pairwise order (numbagrad.engine.reduction_tree: the leaves' sums,
then the tree) without writing them, and the backward kernel reads the sum's one adjoint.
When the tail is the traced function's output and no input of the region is read elsewhere,
the tail's adjoint is the seed (1.0) before anything runs backward, so one kernel (``fwbw``)
does both passes at once: it reads the caller's arrays in place and writes the gradients
straight into the result (one read of the inputs and one write of the gradients in all).

Each kernel takes a range (of elements, or of the tail's leaves); a region of 2 * PAR_MIN
elements or more runs in chunks on a thread pool (the kernels release the GIL), as many as
Numba's thread count allows. Leaves do not depend on the chunks, so the sum is the same on
any number of threads. (A node whose one-element operand needs a gradient is not fused.)

Python drives a fused trace (``run``): the interpreted forward sweep up to a region, the
region's kernel, and so on; backward, the interpreted reverse sweep stops at a region (its
nodes carry the big-node flag, which makes the sweep hand a node back), the region's kernel
runs, and the sweep resumes below it. The nodes eager_nodes differentiates are handed back
the same way (``Plan.steps``), so a trace with such nodes runs here even without regions.

float32 members are computed in float64 and rounded to float32 after each op, as the
interpreted replay does (and eager's float32 arithmetic: bit for bit for +, -, *, /); a
float32 tail adds its leaves and tree in float32, as np.sum does.

Not fused (README, Limitations): nodes below FUSE_MIN elements, broadcasts other than
one-element operands, the nodes eager_nodes differentiates, reductions other than a full
sum, compiled functions of Tensors and ``as_numba()`` (the one-call interpreted replay).
"""

import os

import numba
import numpy as np

from .._threads import fit_threads, in_parallel
from ..core.tape import FLAG_BIG, FLAG_F32, FLAG_HOOK, FLAG_NEEDS_GRAD, column
from ..engine import formula, kernel_tables, kernelgen, reduction_tree, registry
from . import eager_nodes
from .result_buffers import ResultBuffers

# Smallest node (elements) fused: a region costs a few Python-level calls (~10 us); an
# elementwise pass over 64K float64 elements costs ~50 us or more. Env var for experiments.
FUSE_MIN = int(os.environ.get("NUMBAGRAD_FUSE_MIN", 65536))

# (_block_sum is private: a star-import of kernel_helpers does not bring it)
_BLOCK_SUM = "from numbagrad.ops.kernel_helpers import _block_sum  # noqa: E402\n"


class Region:
    """A fused run: elementwise ``members`` (sources may sit between them) and maybe a
    ``tail``: a full sum of the run's one exit, fused in as a reduction."""

    def __init__(self, members, nodes, args, fat, consumers, out_node, tail):
        voff, size, flags = column(nodes, "voff"), column(nodes, "size"), column(nodes, "flags")
        self.members, self.tail = members, tail
        self.start = members[0]
        self.end = tail if tail is not None else members[-1]
        self.size = int(size[members[0]])
        inside = set(members)
        # the member the tail sums: its values never reach memory, only the leaves' sums
        self.reduced = _operands(nodes, args, tail)[0] if tail is not None else None
        self.exits = [tail] if tail is not None else [
            i for i in members if i == out_node or any(c not in inside for c in consumers[i])]
        # members nothing reads: the interpreted sweeps would compute them; here they are
        # dead code (their values and adjoints reach nothing)
        self.live = [i for i in members if consumers[i] or i == out_node]
        # arena ranges of the adjoints that live in registers (the call never zeroes them)
        self.inner = [(int(voff[i]), int(size[i])) for i in members if i not in self.exits]
        self.inputs = []  # external operand nodes of the live members, in first-use order
        for i in self.live:
            for a in _operands(nodes, args, i):
                if a not in inside and a not in self.inputs:
                    self.inputs.append(a)
        needs = {i: bool(flags[i] & FLAG_NEEDS_GRAD) for i in members + self.inputs + self.exits}
        # inputs only this region reads: their adjoints are the region's alone
        self.enclosed = [all(c in inside for c in consumers[a]) for a in self.inputs]
        self.grad_inputs = np.array([a for a in self.inputs if needs[a]], np.int64)
        # arena offsets of the one-element inputs needing a gradient, in the order of the
        # kernels' ``partial`` sums
        self.scalar_grad_off = [int(voff[a]) for a in self.inputs if needs[a] and size[a] == 1]
        # exits whose adjoint the backward kernel reads: if the sweep never reached one of
        # them, the region's backward falls back to the interpreted sweep (see run)
        self.grad_exits = np.array([i for i in self.exits if needs[i]], np.int64)
        # One pass: the tail is the traced function's output, so its adjoint is the seed,
        # 1.0, before any backward runs, and no input's adjoint gets anything from outside
        # the region. Then the gradients are computed in the forward pass, from values still
        # in registers, straight into their destinations: one read of the inputs and one
        # write of the gradients in all.
        self.one_pass = tail is not None and tail == out_node and needs[tail] and all(
            e for e, a in zip(self.enclosed, self.inputs) if needs[a])
        if tail is not None:
            self.bounds, self.post = reduction_tree.pairwise_leaves(self.size)
            self.tail_f32 = bool(flags[tail] & FLAG_F32)
            self.tail_off = int(voff[tail])
        self.source, self.off = _generate(self, nodes, args, fat, needs)
        self.fw = self.bw = self.fwbw = None


def _operands(nodes, args, i):
    p = column(nodes, "arg_ptr")[i]
    return args[p:p + column(nodes, "nargs")[i]].tolist()


def _eligible(nodes, args, i, exclude):
    if i in exclude:
        return False  # its backward is eager's own kernel (eager_nodes)
    size = column(nodes, "size")
    op = registry.OPS[column(nodes, "code")[i]]
    n = size[i]
    if not op.elementwise or op.arity not in (1, 2) or n < FUSE_MIN or op.fwd is None:
        return False
    if column(nodes, "flags")[i] & FLAG_HOOK or column(nodes, "nargs")[i] != op.arity:
        return False
    return all(size[a] in (n, 1) for a in _operands(nodes, args, i))


def _tail(nodes, args, consumers, run, i, out_node, exclude):
    """Node ``i`` (the one after ``run``) if it is a full sum of the run's one exit,
    which nothing else reads: the reduction then joins the region."""
    if i is None or registry.OPS[column(nodes, "code")[i]].name != "sum" or \
            column(nodes, "size")[i] != 1:
        return None
    if column(nodes, "flags")[i] & FLAG_HOOK or i in exclude:
        return None
    (e,) = _operands(nodes, args, i)
    inside = set(run)
    if e not in inside or consumers[e] != [i] or e == out_node:
        return None
    others = any(j != e and (j == out_node or any(c not in inside for c in consumers[j]))
                 for j in run)
    return None if others else i


def plan(nodes, args, fat, out_node, exclude=()):
    """The fused regions of a traced tape (a list, maybe empty): maximal runs of eligible
    elementwise nodes of one size, in recording order, sources allowed between them, each
    with the full sum that follows it if that sum is all the run's values feed. Nodes in
    ``exclude`` (those eager_nodes differentiates) are not fused."""
    n = len(nodes)
    code, size = column(nodes, "code"), column(nodes, "size")
    if not (size >= FUSE_MIN).any():
        return []  # most traces: no node large enough, no per-node walk at trace time
    consumers = [[] for _ in range(n)]
    for i in range(n):
        for a in _operands(nodes, args, i):
            consumers[a].append(i)
    regions, run = [], []

    def close(after):
        tail = _tail(nodes, args, consumers, run, after, out_node, exclude) if run else None
        if len(run) >= 2 or tail is not None or (run and _has_transcendental(code[run[0]])):
            regions.append(Region(list(run), nodes, args, fat, consumers, out_node, tail))
        run.clear()

    for i in range(n):
        if registry.OPS[code[i]].source:
            continue
        eligible = _eligible(nodes, args, i, exclude)
        if not (eligible and run and size[i] == size[run[0]]):
            close(i)
        if eligible:
            run.append(i)
    close(None)
    return regions


def _has_transcendental(code):
    op = registry.OPS[code]
    return any(formula.calls(f) & _TRANSCENDENTAL for f in (op.fwd, *op.grads) if f)


_TRANSCENDENTAL = {"exp", "log", "tanh", "sigmoid"}


# ---- code generation --------------------------------------------------------------------


# calls whose attributes choose a branch: pw(a, f0) tests its exponent
_BRANCHING_CALLS = {"pw", "gelu", "gelu_grad", "softplus"}


def _branchy(formulas):
    """Whether ``formulas``' attributes choose a branch: a call above, or one compared."""
    return any(formula.calls(f) & _BRANCHING_CALLS or formula.compared(f) & {"f0", "f1"}
               for f in formulas)


def _generate(region, nodes, args, fat, needs):
    """The region's kernel module source and its offsets array: [members' value offsets,
    members' iat offsets, members' fat offsets, the tail's value offset].

    Kernels (each over a range, so the driver can run chunks on several threads):
      fw(ins, val, iat, fat, off, lo, hi)            elements lo..hi, exits written to val
      fw(ins, iat, fat, off, bounds, L0, L1, sums)   with a tail: leaves L0..L1, their sums
      bw(ins, outs, val, adj, iat, fat, off, lo, hi, partial)
      fwbw(ins, outs, iat, fat, off, bounds, L0, L1, sums, partial, gs)   one-pass regions
    ``ins``: the inputs' values (full arrays); ``outs``: the adjoints of the inputs of more
    than one element that need a gradient; ``partial``: the sums, over the range, of the
    one-element inputs' gradients (the driver adds them up)."""
    members, inputs, tail = region.live, region.inputs, region.tail
    local = {i: j for j, i in enumerate(members)}
    p_val, p_iat, p_fat, p_tail = 0, len(members), 2 * len(members), 3 * len(members)
    voff, iat_ptr, fat_ptr = column(nodes, "voff"), column(nodes, "iat_ptr"), \
        column(nodes, "fat_ptr")
    off = np.array([voff[i] for i in members] + [iat_ptr[i] for i in members]
                   + [fat_ptr[i] for i in members]
                   + ([voff[tail]] if tail is not None else []), np.int64)
    scalar = [column(nodes, "size")[a] == 1 for a in inputs]
    vector_grads = [q for q, a in enumerate(inputs) if needs[a] and not scalar[q]]
    scalar_grads = [q for q, a in enumerate(inputs) if needs[a] and scalar[q]]
    ops = [registry.OPS[column(nodes, "code")[i]] for i in members]
    # the formulas each kernel evaluates per member: forward's, backward's (both)
    texts = {False: [(op.fwd,) for op in ops],
             True: [(op.fwd, *[f for f in op.grads if f]) for op in ops]}

    def operand(a):
        return f"v{local[a]}" if a in local else f"e{inputs.index(a)}"

    def names(j, i):
        ab = _operands(nodes, args, i)
        return {"a": operand(ab[0]), "b": operand(ab[1]) if len(ab) > 1 else "0.0",
                "y": f"v{j}", "g": f"g{j}", "m": f"m{j}", "f0": f"f0_{j}", "f1": f"f1_{j}"}

    def constants(backward):
        """Per-call values: one-element inputs, attributes."""
        out = [f"e{q} = ins[{q}][0]" for q in range(len(inputs)) if scalar[q]]
        for j, (i, text) in enumerate(zip(members, texts[backward])):
            for t in (0, 1):
                if formula.uses(text, f"f{t}"):
                    # attributes that select a formula's branch (pow's exponent) are written
                    # into the source, so LLVM folds the branch and the loop vectorizes
                    # (not a power's base: LLVM rewrites pow(2.0, x) as exp2(x), which
                    # rounds differently from the pow eager calls)
                    literal = _branchy(text) and not any(formula.powers_of(f, f"f{t}")
                                                         for f in text)
                    value = repr(float(fat[fat_ptr[i] + t])) if literal \
                        else f"fat[off[{p_fat + j}] + {t}]"
                    out.append(f"f{t}_{j} = {value}")
        return out

    def views(backward, exits):
        """The arrays the element loop reads and writes, over lo..hi: views indexed by the
        loop counter alone (an index ``offset + k`` would carry Numba's negative-index
        check, which keeps LLVM from vectorizing)."""
        out = [f"x{q} = ins[{q}][lo:hi]" for q in range(len(inputs)) if not scalar[q]]
        out += [f"ax{q} = outs[{r}][lo:hi]" for r, q in enumerate(vector_grads) if backward]
        for j, text in enumerate(texts[backward]):
            if formula.uses(text, "m"):
                out.append(f"mk{j} = iat[off[{p_iat + j}] + lo:off[{p_iat + j}] + hi]")
        for j, i in enumerate(members):
            if exits and i in region.exits and (not backward or needs[i]):
                arena = "adj" if backward else "val"
                out.append(f"{'ay' if backward else 'vy'}{j} = "
                           f"{arena}[off[{p_val + j}] + lo:off[{p_val + j}] + hi]")
        return out

    def forward_body(backward):
        out = [f"e{q} = x{q}[k]" for q in range(len(inputs)) if not scalar[q]]
        for j, (i, op, text) in enumerate(zip(members, ops, texts[backward])):
            if formula.uses(text, "m"):
                out.append(f"m{j} = mk{j}[k] != 0")
            value = formula.rename(op.fwd, names(j, i))
            if column(nodes, "flags")[i] & FLAG_F32:
                # eager rounds every float32 op's result; so does the interpreted replay
                value = f"np.float64(np.float32({value}))"
            out.append(f"v{j} = {value}")
        return out

    acc = {a: (f"s{q}" if scalar[q] else f"h{q}") for q, a in enumerate(inputs) if needs[a]}
    acc.update({i: f"g{j}" for j, i in enumerate(members)})

    def chain_rule(first_pass):
        """The reverse pass through the region, in registers. Adjoints start from: the
        exits' in the arena (or the tail's, ``gs``), members' at 0, the inputs' at their
        current value (so each addition rounds as the sweep's would) or, in one pass, 0."""
        out = []
        for j, i in enumerate(members):
            if needs[i]:
                out.append(f"g{j} = gs" if i == region.reduced else
                           f"g{j} = ay{j}[k]" if i in region.exits else f"g{j} = 0.0")
        out += [f"h{q} = {'0.0' if first_pass else f'ax{q}[k]'}" for q in vector_grads]
        for j in range(len(members) - 1, -1, -1):
            i, op = members[j], ops[j]
            if not needs[i]:
                continue
            nm = names(j, i)
            for a, grad in zip(_operands(nodes, args, i), op.grads):
                if grad and needs[a]:
                    out.append(f"{acc[a]} += {formula.rename(grad, nm)}")
        return out + [f"ax{q}[k] = h{q}" for q in vector_grads]

    def leaf_loop(body, backward):
        """The element loop over leaves L0..L1 of the tail's sum, the summed member's values
        kept in a buffer, then each leaf summed as NumPy sums it. A flat loop: nested in a
        loop over chunks, LLVM reloaded vmath's constants at every iteration."""
        # a float32 tail sums in float32, as np.sum does (and the replay's sum_fw)
        dtype = ", np.float32" if region.tail_f32 else ""
        return (["lo = bounds[L0]", "hi = bounds[L1]", f"tmp = np.empty(hi - lo{dtype})"]
                + views(backward, False)
                + ["for k in range(hi - lo):"] + ["    " + s for s in body]
                + ["for leaf in range(L0, L1):",
                   "    sums[leaf] = _block_sum(tmp, bounds[leaf] - lo, "
                   "bounds[leaf + 1] - bounds[leaf])"])

    decorator = "@njit(cache=True, nogil=True, error_model='numpy')"
    scalar_out = [f"partial[{r}] = s{q}" for r, q in enumerate(scalar_grads)]
    scalar_in = [f"s{q} = 0.0" for q in scalar_grads]
    w = [decorator]
    if tail is None:
        w.append("def fw(ins, val, iat, fat, off, lo, hi):")
        body = constants(False) + views(False, True) + ["for k in range(hi - lo):"]
        body += ["    " + s for s in forward_body(False)]
        body += [f"    vy{j}[k] = v{j}" for j, i in enumerate(members) if i in region.exits]
    else:
        w.append("def fw(ins, iat, fat, off, bounds, L0, L1, sums):")
        body = constants(False) + leaf_loop(
            forward_body(False) + [f"tmp[k] = v{local[region.reduced]}"], False)
    w += ["    " + s for s in body] + ["", "", decorator]
    w.append("def bw(ins, outs, val, adj, iat, fat, off, lo, hi, partial):")
    body = constants(True) + scalar_in + views(True, True)
    if tail is not None:
        body.append(f"gs = adj[off[{p_tail}]]")
    body += ["for k in range(hi - lo):"]
    body += ["    " + s for s in forward_body(True) + chain_rule(False)]
    w += ["    " + s for s in body + scalar_out]
    if region.one_pass:
        w += ["", "", decorator,
              "def fwbw(ins, outs, iat, fat, off, bounds, L0, L1, sums, partial, gs):"]
        body = constants(True) + scalar_in + leaf_loop(
            forward_body(True) + [f"tmp[k] = v{local[region.reduced]}"] + chain_rule(True),
            True)
        w += ["    " + s for s in body + scalar_out]
    return "\n".join(w) + "\n", off


def load(region):
    """Compile (or load from the cache) ``region``'s kernels."""
    source = kernelgen.header() + _BLOCK_SUM + "\n\n" + region.source
    module = kernel_tables.load_generated("numbagrad_fused_", source)
    region.fw, region.bw = module.fw, module.bw
    region.fwbw = getattr(module, "fwbw", None)


# ---- the driver -------------------------------------------------------------------------


class Plan:
    """A trace's regions, where each region's inputs come from and its gradients go, and
    the node table the fused reverse sweep walks (the regions' nodes flagged, so the sweep
    hands them back, as it hands back ``steps``: nodes eager_nodes differentiates)."""

    def __init__(self, regions, program, steps=None):
        nodes = program.nodes
        voff, size, flags = column(nodes, "voff"), column(nodes, "size"), column(nodes, "flags")
        self.regions = regions
        self.steps = steps or {}
        self.nodes = eager_nodes.sweep_nodes(nodes, self.steps)
        self.out_off = int(voff[program.out_node])  # run() reads the value there, seeds it
        sweep_flags = column(self.nodes, "flags")  # a view: written through
        self.region_of = {}
        for r in regions:
            for i in r.members + ([r.tail] if r.tail is not None else []):
                sweep_flags[i] |= FLAG_BIG
                self.region_of[i] = r
            load(r)
        in_off, in_len = program.in_off.tolist(), program.in_len.tolist()
        part_of = {o: p for p, o in enumerate(in_off)}
        grad_at, pos = {}, 0  # a returned gradient's arena offset -> its place in the output
        for o, n in zip(program.grad_off.tolist(), program.grad_len.tolist()):
            grad_at[o] = pos
            pos += n
        read_in_place, written_in_place, overwritten = set(), set(), []
        for r in regions:
            # each input: (the part to read it from in place, or -1; arena offset; size).
            # A one-pass region reads the traced function's inputs that only it uses from
            # the caller's arrays, and writes their gradients straight into the result
            r.in_src, r.out_dst = [], []
            for a, enclosed in zip(r.inputs, r.enclosed):
                o, n = int(voff[a]), int(size[a])
                p = part_of.get(o, -1) if r.one_pass and enclosed and n == r.size else -1
                if p >= 0 and in_len[p] != n:
                    p = -1
                r.in_src.append((p, o, n))
                if p >= 0:
                    read_in_place.add(p)
                if n > 1 and flags[a] & FLAG_NEEDS_GRAD:
                    in_result = r.one_pass and o in grad_at
                    r.out_dst.append((grad_at[o] if in_result else -1, o, n))
                    if in_result:
                        written_in_place.add(o)
                    if r.one_pass:
                        overwritten.append((o, n))
        self.copy_in = [(o, n, p) for p, (o, n) in enumerate(zip(in_off, in_len))
                        if p not in read_in_place]
        self.copy_out = [(o, n, grad_at[o]) for o, n in zip(program.grad_off.tolist(),
                                                            program.grad_len.tolist())
                         if o not in written_in_place]
        self.grad_size = pos
        # the adjoint arena's ranges a call must zero: all but the regions' inner members,
        # whose adjoints live in registers (~30 MB each on a 4M-element region: the memset
        # would cost as much as a fused pass), and the adjoints one-pass kernels overwrite
        # and those of nodes no gradient flows through (a large input's, in X @ w)
        unneeded = [(int(voff[i]), int(size[i]))
                    for i in np.flatnonzero((flags & FLAG_NEEDS_GRAD) == 0)]
        skip = sorted([span for r in regions for span in r.inner] + overwritten + unneeded +
                      eager_nodes.stored_spans(program, self.steps))
        self.zero, pos = [], 0
        for o, n in skip:
            if o > pos:
                self.zero.append((pos, o))
            pos = max(pos, o + n)
        if pos < len(program.base):
            self.zero.append((pos, len(program.base)))
        self.results = ResultBuffers(self.grad_size)


# Elements per thread below which a region runs on one thread: a chunk handed to the pool
# costs ~20-50 us; 1M elements cost ~3 ms or more.
PAR_MIN = int(os.environ.get("NUMBAGRAD_FUSE_PAR_MIN", 1 << 20))


def _chunks(size):
    """How many threads a region of ``size`` elements runs on: Numba's thread count
    (``numba.set_num_threads``, which torch.set_num_threads' users set too), at most one
    per PAR_MIN elements."""
    if size < 2 * PAR_MIN:
        return 1
    return max(1, min(numba.get_num_threads(), size // PAR_MIN))


def _split(bounds, parts):
    """``parts`` ranges of the positions 0..len(bounds) - 1, cut where ``bounds`` (element
    boundaries, increasing) is nearest an equal share of the elements."""
    cuts = np.searchsorted(bounds, np.linspace(bounds[0], bounds[-1], parts + 1)).tolist()
    cuts[0], cuts[-1] = 0, len(bounds) - 1
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


# Leaves of a tail's sum per kernel call: its buffer of the summed values is at most this
# many leaves of 128 elements (1 MB of float64), its calls a few dozen per 4M elements
LEAVES_PER_CALL = 1024


def _leaf_pieces(r):
    """Each thread's leaves, in ranges of at most LEAVES_PER_CALL, in order."""
    return [[(c, min(c + LEAVES_PER_CALL, b)) for c in range(a, b, LEAVES_PER_CALL)]
            for a, b in _split(r.bounds, _chunks(r.size))]


def _element_ranges(r):
    parts = _chunks(r.size)
    return [(r.size * c // parts, r.size * (c + 1) // parts) for c in range(parts)]


def _add_partials(r, adj, partial):
    """The one-element inputs' gradient sums, chunk by chunk, into their adjoints."""
    for q, o in enumerate(r.scalar_grad_off):
        for row in partial:
            adj[o] += row[q]


def run(plan, program, val, adj, parts, with_grad):
    """``program``'s replay (as its module's ``run_in``) with ``plan``'s regions fused, on
    the inputs ``parts`` (flat arrays of the inputs' own dtypes, in ``program.in_off``
    order)."""
    fit_threads()
    replay = program.replay
    nodes, iat, fat = program.nodes, program.iat, program.fat
    for o, n, p in plan.copy_in:
        val[o:o + n] = parts[p]
    grads = plan.results.get() if with_grad else None
    done = None  # the one-pass region that already computed its gradients
    pending = []  # its one-element inputs' gradient sums, added once the arena is zeroed
    pos = 0
    for r in plan.regions:
        if pos < r.start:
            replay.forward(program, val, pos, r.start)
        ins = tuple(_input(parts, val, p, o, n) for p, o, n in r.in_src)
        if r.tail is None:
            in_parallel([lambda lo=lo, hi=hi: r.fw(ins, val, iat, fat, r.off, lo, hi)
                         for lo, hi in _element_ranges(r)])
        else:
            sums = np.empty(len(r.bounds) - 1, np.float32 if r.tail_f32 else np.float64)
            pieces = _leaf_pieces(r)
            if with_grad and r.one_pass:
                outs = tuple(grads[g:g + n] if g >= 0 else adj[o:o + n]
                             for g, o, n in r.out_dst)
                nq = max(1, len(r.scalar_grad_off))
                partial = np.zeros((len(pieces), max(map(len, pieces)), nq))
                calls = [[lambda a=a, b=b, row=partial[c, j]: r.fwbw(
                    ins, outs, iat, fat, r.off, r.bounds, a, b, sums, row, 1.0)
                    for j, (a, b) in enumerate(piece)] for c, piece in enumerate(pieces)]
                done, pending = r, partial.reshape(-1, nq)
            else:
                calls = [[lambda a=a, b=b: r.fw(ins, iat, fat, r.off, r.bounds, a, b, sums)
                          for a, b in piece] for piece in pieces]
            in_parallel([lambda cs=cs: [c() for c in cs] for cs in calls])
            total = reduction_tree.pairwise_combine(sums, r.post)
            val[r.tail_off] = np.float32(total) if r.tail_f32 else total
        pos = r.end + 1
    if pos < len(nodes):
        replay.forward(program, val, pos, len(nodes))
    out = program.out_node
    value = val[plan.out_off]
    if not with_grad:
        return value, np.zeros(int(program.grad_len.sum()))
    n = len(nodes)
    for lo, hi in plan.zero:
        adj[lo:hi] = 0.0
    if done is not None:
        _add_partials(done, adj, pending)
    touched = np.zeros(n, np.uint8)
    adj[plan.out_off] = 1.0
    touched[out] = 1
    sweep_nodes, start = plan.nodes, out
    while start >= 0:
        status, i = replay.sweep(program, sweep_nodes, val, adj, touched, start)
        if status == 0:
            break
        r = plan.region_of.get(i)
        if r is None:
            eager_nodes.backward(plan.steps[i], val, adj, touched)
            start = i - 1
        elif r is done:
            touched[r.grad_inputs] = 1
            start = r.start - 1
        elif touched[r.grad_exits].all():
            ins = tuple(_input(parts, val, p, o, n) for p, o, n in r.in_src)
            outs = tuple(adj[o:o + n] for _, o, n in r.out_dst)
            ranges = _element_ranges(r)
            partial = np.zeros((len(ranges), max(1, len(r.scalar_grad_off))))
            in_parallel([lambda c=c, lo=lo, hi=hi: r.bw(ins, outs, val, adj, iat, fat, r.off,
                                                        lo, hi, partial[c])
                         for c, (lo, hi) in enumerate(ranges)])
            _add_partials(r, adj, partial)
            touched[r.grad_inputs] = 1
            start = r.start - 1
        else:
            # some exit got no gradient: the interpreted sweep, which skips what no gradient
            # reaches, takes this region on its recomputed values (and on zeroed adjoints
            # for its inner members, which a fused call leaves as they were)
            replay.forward(program, val, r.start, r.end + 1)
            for o, n in r.inner:
                adj[o:o + n] = 0.0
            sweep_nodes = sweep_nodes.copy()
            column(sweep_nodes, "flags")[r.start:r.end + 1] = \
                column(nodes, "flags")[r.start:r.end + 1]
            start = i
    for o, n, g in plan.copy_out:
        grads[g:g + n] = adj[o:o + n]
    return value, grads


def _input(parts, val, p, o, n):
    """An input's values: the caller's array when the region reads it in place (and Numba
    can take it as it is: writable, contiguous), else the arena's copy."""
    if p >= 0:
        x = parts[p]
        if x.flags.c_contiguous and x.flags.writeable and x.dtype == np.float64:
            return x
        val[o:o + n] = x
    return val[o:o + n]
