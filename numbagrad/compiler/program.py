"""A trace made runnable (Program): recording a function's trace on a tape of its own, the
guards split off, the tape's arrays taken over with identical view nodes merged, the replay's
entry points and arenas."""

import sys

import numpy as np
from numba import njit

from .. import _blas
from ..autograd import sweep
from ..core import grad_mode, trace_guards
from ..core import tape as tape_mod
from ..core.tape import FLAG_NEEDS_GRAD, column
from ..engine import kernel_abi, kernel_tables, registry
from ..engine.record import fresh_view
from ..func import transforms as func_mod
from ..tensor import Tensor, _make
from . import aux_outputs, eager_nodes, float32_nodes, fusion, int_args, scalar_stream, views

# arena pairs a trace keeps for reuse (more concurrent calls allocate, and drop, their own)
_POOLED_ARENAS = 2
_NO_INPUTS, _NO_VALUES = np.zeros(0, np.int64), np.zeros(0)


def _leaf_key(x):
    """The part of a trace's signature one argument leaf contributes."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f":
            return ("a", x.shape, x.dtype.str)
        return ("s", x.shape, x.dtype.str, x.tobytes())  # integer arrays: traced as constants
    if isinstance(x, Tensor):
        d = x._data
        if d.dtype.kind == "f":
            return ("t", d.shape, d.dtype.str)
        return ("s", d.shape, d.dtype.str, np.asarray(d).tobytes())
    if isinstance(x, float):
        return ("f",)
    if isinstance(x, np.floating):
        return ("g", x.dtype.str)
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"numbagrad.compile: an argument of type {type(x).__name__} is neither "
                        "an array, a Tensor, a float nor a hashable static value") from None
    return ("v", type(x), x)  # ints, strings, None...: static, a new value retraces


def _is_dynamic(x):
    return (isinstance(x, (np.ndarray, Tensor)) and np.asarray(
        x._data if isinstance(x, Tensor) else x).dtype.kind == "f") or \
        isinstance(x, (float, np.floating))


# inputs of up to this many elements in all are concatenated for the replay (one call); more
# are written into the arena one by one (a new array of their size costs page faults)
_CONCATENATE_MAX = 1 << 16


class Program:
    """One trace: the tape's arrays, the replay module for its ops, and where the inputs and
    gradients live in its arena."""

    source_spans = None  # (set by _sources_only)

    def __init__(self, compiled, args, kwargs):
        self.kind = compiled.kind
        flat, spec = func_mod._tree_flatten((args, kwargs))
        positions = _diff_positions(compiled.argnums, len(args))
        # which flat leaves belong to differentiated arguments
        owner = []
        for i, a in enumerate(args):
            owner += [i] * len(func_mod._tree_flatten(a)[0])
        owner += [-1] * (len(flat) - len(owner))
        self.diff = [k for k, x in enumerate(flat) if owner[k] in positions]
        for k in self.diff:
            if not _is_dynamic(flat[k]):
                raise TypeError(f"numbagrad.compile: differentiated argument {owner[k]} holds a "
                                f"{type(flat[k]).__name__}; expected floating-point arrays, "
                                "Tensors or floats")
        self.numpy_mode = not any(isinstance(x, Tensor) for x in flat)
        self.positions, self.argnums = positions, compiled.argnums
        self.arg_spec = func_mod._tree_flatten(
            args[compiled.argnums] if isinstance(compiled.argnums, int) else
            tuple(args[i] for i in positions))[1]
        sweep.prefetch()  # on a cold cache, a worker compiles the replay's entry while we trace
        tape, traced, out = _record_trace(compiled.func, flat, spec, compiled.fullgraph)
        self.opaque = tape.guards.opaque
        self.aux = None
        if compiled.has_aux:
            out, aux = aux_outputs.split(out)
        if self.opaque:
            self._check_tape(tape, compiled)  # an op replay lacks is the error to report
            return  # not replayable: the caller runs the function eagerly
        self.blas = tape.blas  # a convolution, or a product on NumPy's BLAS: pools held
        api = f"{compiled.kind}(f)(*args)"
        if not isinstance(out, Tensor):
            raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {out.dim()} dims. Maybe you wanted to use the vjp or "
                               "jacrev APIs instead?")
        self.out_dtype = out._data.dtype
        self.constant_output = out._tape is not tape
        self._check_tape(tape, compiled)
        # identical views (``w.T`` written inside a loop) become one node: see views.merge
        node_of = _take_tape(self, tape, flat, traced, merge=not self.constant_output)
        _split_guards(self, tape, node_of)
        if compiled.has_aux:
            self.aux = aux_outputs.Aux(tape, aux, node_of)
            if self.aux.reads and self.constant_output:  # no replay fills an arena
                self.opaque = [(trace_guards.site(), "an aux output of a constant loss")]
                return
        # the arena holds every node's value only on the generic replay: guards and aux
        # outputs read it, so a trace with them runs neither the scalar stream nor fusion
        reads_arena = bool(self.guards) or self.aux is not None and bool(self.aux.reads)
        # every floating leaf was traced as requiring grad; the sweeps need only what lies
        # above a differentiated input (or a closed-over parameter)
        wanted = [n for k, n in zip(self.inputs, self.slots) if k in self.diff]
        _needs_grad_only_above(self.nodes, self.args, wanted + self.slots[len(self.inputs):])
        # gradients: one per differentiated leaf, zeros for those the output does not use
        self.grad_shapes, grad_off, grad_len = [], [], []
        for k in self.diff:
            t = traced[k]
            node = tape.sources.get(id(t))
            node = node_of(node) if node is not None else None
            self.grad_shapes.append(np.shape(t._data))
            size = int(np.prod(np.shape(t._data), dtype=np.int64))
            grad_off.append(column(self.nodes, "voff")[node] if node is not None else -1)
            grad_len.append(size if node is not None else 0)
        self.grad_present = [o >= 0 for o in grad_off]
        self.grad_sizes = [int(np.prod(s, dtype=np.int64)) for s in self.grad_shapes]
        self.grad_off = np.array([o for o in grad_off if o >= 0], np.int64)
        self.grad_len = np.array([s for s, o in zip(grad_len, grad_off) if o >= 0], np.int64)
        self.grad_total = int(self.grad_len.sum())
        self.out_node = node_of(out._node) if not self.constant_output else -1
        self.out_value = float(np.asarray(out._data))
        # a trace of one-element nodes only runs as a scalar instruction stream (whose
        # values stay inside it: guards need the arena, and so do fused regions below)
        self.stream = scalar_stream.build(self.nodes, self.args, self.iat, self.fat, \
                                          self.out_node) \
            if not self.constant_output and not reads_arena else None
        if self.stream is not None:
            self.module = scalar_stream.load(column(self.nodes, "code"))
            self.out_off = int(column(self.nodes, "voff")[self.out_node])
        # the nodes eager keeps as its own arrays (decided before views become leaves)
        transposes = {node_of(t): node_of(src) for t, src in tape.transposes.items()}
        big = eager_nodes.eager_big(self, transposes)
        if self.stream is None and not self.constant_output:
            # inputs' rows (xs[t]) read in place; not a view whose attributes an integer
            # argument's recipe rewrites at each call (int_args)
            views.alias(self, {node_of(n) for n, _, _ in tape.guards.int_recipes}, big)
        # nodes eager differentiates in float32: its kernels run them (eager_nodes)
        steps = _eager_steps(self, tape, [(self.out_node, self.out_dtype)], transposes, big,
                             node_of) \
            if self.stream is None and not self.constant_output else {}
        # runs of large elementwise nodes: fused kernels, driven from Python (fusion.run)
        regions = fusion.plan(self.nodes, self.args, self.fat, self.out_node, steps) \
            if self.stream is None and not self.constant_output and not reads_arena else []
        if self.stream is None:
            self.replay = sweep.Replay(
                self.nodes, self.args, ("run_forward",) if self.constant_output else
                () if regions or steps else ("run_in",))
        # a trace of float32 steps only: run on float32 arrays, not the arena
        self.f32 = float32_nodes.build(self, steps) if not regions else None
        self.fused = fusion.Plan(regions, self, steps) if (regions or steps) and \
            self.f32 is None else None
        self.tape_len = len(self.nodes)
        self.int_args = int_args.IntArgs(self, tape, flat, node_of)
        self.single_array = len(flat) == 1 and type(flat[0]) is np.ndarray and \
            flat[0].dtype.kind == "f" and self.diff == [0] and not self.constant_output \
            and self.grad_present == [True]
        self.source_spans = _sources_only(self)

    def call_array(self, a):
        """The fast path of a call with one floating NumPy array (differentiated); None when
        the trace's guards (on that array only) fail."""
        dt = np.float32 if self.f32 is not None else np.float64
        x = a.reshape(-1) if a.dtype == dt and a.flags.c_contiguous else \
            np.ascontiguousarray(a, dt).reshape(-1)
        if self.input_guards and trace_guards.failing(self.input_guards, lambda n: x):
            return None
        value, g = self._replay([x] if self.stream is None else x, True)
        g = g.reshape(a.shape) if a.dtype == np.float64 else g.reshape(a.shape).astype(a.dtype)
        value = float(self.out_dtype.type(value))
        if self.kind == "grad":
            return g
        return (value, g) if self.kind == "value_and_grad" else (g, value)

    @staticmethod
    def _check_tape(tape, compiled):
        codes = set(column(tape.records(), "code").tolist())
        missing = [registry.OPS[c] for c in sorted(codes) if not registry.OPS[c].replayable]
        if missing:
            names = ", ".join(sorted({op.grad_fn or op.name for op in missing}))
            raise NotImplementedError(
                f"numbagrad.compile: {getattr(compiled.func, '__name__', 'the function')} uses "
                f"{names}, which compiled replay does not support yet; call the transform "
                "without compile (see README, Limitations, for the supported ops)")
        if tape.hooks:
            raise NotImplementedError("numbagrad.compile: tensor hooks (register_hook) inside "
                                      "a compiled function are not supported")

    def constants_current(self):
        return all(vc[0] == v for vc, v in self.constants)

    def run(self, flat, with_grad=True):
        """The output's value and the gradients, or None when the trace's guards fail."""
        # the generic replay converts the inputs as it copies them (fusion.run, _sweeps): in
        # their own dtype here, so that float32 data is converted once
        dtype = None if self.stream is None and not self.input_guards and \
            not self.constant_output else np.float64
        parts = [np.asarray(flat[k]._data if isinstance(flat[k], Tensor) else flat[k],
                            dtype).reshape(-1) for k in self.inputs]
        parts += [np.asarray(t._data, dtype).reshape(-1) for t in self.captured]
        if self.input_guards and trace_guards.failing(
                self.input_guards, lambda n: parts[self.slot_of[n]]):
            return None
        if self.constant_output:
            if self.guards:
                x = np.concatenate(parts) if parts else _NO_VALUES
                r = self.replay
                val = sweep.run_forward(r.tables, r.arity, self.nodes, self.args, self.shapes,
                                        self.iat, self.fat, self.base, self.in_off,
                                        self.in_len, x)
                if not self._guards_hold(val):
                    return None
            return self.out_value, np.zeros(self.grad_total)
        if self.stream is None:
            return self._replay(parts, with_grad)  # no concatenated copy: see _sweeps
        x = parts[0] if len(parts) == 1 else (np.concatenate(parts) if parts else
                                                np.zeros(0))
        return self._replay(x, with_grad)

    def _guards_hold(self, val):
        """Whether the values the trace read are those of the replay (arena ``val``)."""
        voff, size = column(self.nodes, "voff"), column(self.nodes, "size")
        return trace_guards.failing(
            self.guards, lambda n: val[voff[n]:voff[n] + size[n]]) is None

    def _replay(self, x, with_grad):
        """Forward and reverse sweeps on new inputs ``x`` (the inputs' values, flattened and
        concatenated; with fused regions, a list of them): the output's value and the
        gradients, concatenated; None when the trace's guards do not hold."""
        if self.blas:
            with _blas.one_thread():
                return self._sweeps(x, with_grad)
        return self._sweeps(x, with_grad)

    def _sweeps(self, x, with_grad):
        if self.stream is not None:
            return self.module.run(self.stream[0], self.stream[1], self.base, self.in_off,
                                   self.in_len, x, self.out_off, self.grad_off, self.grad_len,
                                   with_grad)
        if self.f32 is not None:
            return float32_nodes.run(self.f32, x, with_grad)
        # arenas from this trace's pool (list pop/append are atomic: concurrent calls each
        # take their own pair, or allocate one when the pool is empty)
        try:
            arena = self.arenas.pop()
        except IndexError:
            arena = (self._initial_values(), np.empty_like(self.base),
                     np.empty(len(self.nodes), np.uint8))
        val, adj, touched = arena
        try:
            if self.fused is not None:
                out = fusion.run(self.fused, self, val, adj, x, with_grad)
                if self.guards and not self._guards_hold(val):
                    return None
                return out if self.aux is None else (*out, self._aux_values(val))
            r = self.replay
            grads = np.zeros(self.grad_total)
            in_off, in_len = self.in_off, self.in_len
            if len(x) == 1:
                x = np.asarray(x[0], np.float64)
            elif self.in_total <= _CONCATENATE_MAX:
                x = np.concatenate(x, dtype=np.float64) if x else _NO_VALUES
            else:  # large inputs straight into the arena: no concatenated copy
                for o, n, part in zip(in_off, in_len, x):
                    val[o:o + n] = part
                in_off, in_len, x = _NO_INPUTS, _NO_INPUTS, _NO_VALUES
            value = sweep.run_in(r.tables, r.arity, self.nodes, self.args, self.shapes,
                                 self.iat, self.fat, val, adj, touched, in_off, in_len, x,
                                 self.out_node, self.grad_off, self.grad_len, grads,
                                 with_grad)
            if self.guards and not self._guards_hold(val):
                return None
            return (value, grads) if self.aux is None else (value, grads, self._aux_values(val))
        finally:
            if len(self.arenas) < _POOLED_ARENAS:
                self.arenas.append(arena)

    def _initial_values(self):
        """A new values arena: ``base``'s copy, or for a large one, new zero pages (which
        take memory only where a replay writes) with the sources' values."""
        if self.source_spans is None:
            return self.base.copy()
        val = np.zeros(len(self.base))
        for o, n in self.source_spans:
            val[o:o + n] = self.base[o:o + n]
        return val

    def _aux_values(self, val):
        voff, size = column(self.nodes, "voff"), column(self.nodes, "size")
        return self.aux.values(lambda n: val[voff[n]:voff[n] + size[n]])

    def results(self, replayed, flat):
        """The transform's return value, in the kinds of the arguments, from ``replayed``:
        the output's value, the gradients (and the aux leaves' values)."""
        value, grads = replayed[0], replayed[1]
        out = []
        pos = 0
        # sizes from the trace: np.prod per gradient per call cost ~4 us each, a tenth of
        # a small RNN's whole compiled step
        for k, shape, size, present in zip(self.diff, self.grad_shapes, self.grad_sizes,
                                           self.grad_present):
            g = grads[pos:pos + size].reshape(shape) if present else np.zeros(shape)
            pos += size if present else 0
            out.append(_like(g, flat[k]))
        tree = func_mod._tree_unflatten(out, self.arg_spec)
        v = self.out_dtype.type(value)
        v = float(v) if self.numpy_mode else _tensor(v)
        if self.aux is not None:
            aux = self.aux.tree(replayed[2] if len(replayed) > 2 else
                                self.aux.values(None), self.numpy_mode)
            if self.kind == "grad":
                return tree, aux
            v = (v, aux)
        if self.kind == "grad":
            return tree
        if self.kind == "value_and_grad":
            return v, tree
        return tree, v

    def as_numba(self):
        """An @njit ``f(x, grad_out) -> value`` closing over this trace's arrays."""
        if self.captured:
            raise NotImplementedError("as_numba(): the function closes over tensors that "
                                      "require grad; pass them as arguments instead")
        base, in_off, in_len = self.base, self.in_off, self.in_len
        grad_off, grad_len = self.grad_off, self.grad_len
        # the lengths are checked inside: a shorter x would be read out of bounds
        n_x, n_grad = int(in_len.sum()), int(grad_len.sum())
        bad_x = f"as_numba(): x must have {n_x} elements, the traced inputs' total size"
        bad_grad = f"as_numba(): grad_out must have {n_grad} elements (the gradient's size)"
        if self.stream is not None:
            ins, fk, out_off = self.stream[0], self.stream[1], self.out_off
            run = self.module.run

            @njit(nogil=True)
            def stream_value_and_grad(x, grad_out):
                if x.shape[0] != n_x:
                    raise ValueError(bad_x)
                if grad_out.shape[0] != n_grad:
                    raise ValueError(bad_grad)
                value, g = run(ins, fk, base, in_off, in_len, x, out_off, grad_off, grad_len,
                               True)
                for k in range(n_grad):  # a loop: a slice copy compiles for seconds
                    grad_out[k] = g[k]
                return value

            return stream_value_and_grad
        nodes, args, shapes, iat, fat = self.nodes, self.args, self.shapes, self.iat, self.fat
        out_node = self.out_node
        # the kernels' addresses are this process's: read at run time (kernel_abi.tables),
        # never frozen into the function, so a caller cached by Numba stays valid
        run, tables, arity = sweep.run, kernel_abi.tables, self.replay.arity

        @njit(nogil=True)
        def value_and_grad(x, grad_out):
            if x.shape[0] != n_x:
                raise ValueError(bad_x)
            if grad_out.shape[0] != n_grad:
                raise ValueError(bad_grad)
            value, g = run(tables(), arity, nodes, args, shapes, iat, fat, base, in_off,
                           in_len, x, out_node, grad_off, grad_len, True)
            for k in range(n_grad):
                grad_out[k] = g[k]
            return value

        return value_and_grad


def _record_trace(func, flat, spec, fullgraph=False):
    """Run ``func`` eagerly on the arguments ``flat`` (leaves of ``spec``) on a tape of its
    own; returns the tape (``tape.guards``: what the function read out of it), the traced
    leaves and the output."""
    tape = tape_mod.Tape()
    tape.big = sys.maxsize  # every value in the arena: replay never leaves Numba
    tape.keep_all = True  # (the replay's arena holds every value, read or not)
    tape.pinned = True
    tape.traced_casts = []
    tape.guards = trace_guards.Guards(strict=fullgraph)
    # every floating leaf is traced as a leaf requiring grad, so that every op on it is
    # recorded (an op on a constant is computed once and would be baked into the trace)
    # and, as eager func transforms do with NumPy arguments, a NumPy array of integers or
    # bools (labels, masks) reaches func as a Tensor: a constant of the trace
    numpy_mode = not any(isinstance(x, Tensor) for x in flat)
    traced = [_traced_leaf(x) if _is_dynamic(x) else
              func_mod._numpy_arg(x) if numpy_mode else x for x in flat]
    for k, (x, t) in enumerate(zip(flat, traced)):
        if int_args.is_int_array(x):
            tape.guards.int_args[id(t)] = k
    previous = tape_mod.install(tape)
    trace_guards.entering(1)
    try:
        with grad_mode.enable_grad():
            t_args, t_kwargs = func_mod._tree_unflatten(traced, spec)
            out = func(*t_args, **t_kwargs)
            for o in out if isinstance(out, tuple) else (out,):
                if isinstance(o, Tensor) and o._base is not None and o._view[1] != o._vc[0]:
                    fresh_view(o)  # a view returned after its base changed: its current node
    finally:
        trace_guards.entering(-1)
        tape_mod.install(previous)
        tape.pinned = False
    return tape, traced, out


def _split_guards(program, tape, node_of):
    """Set ``program``'s guards: ``input_guards`` read only input slots (checked on the
    inputs, before a replay), ``guards`` read other nodes (checked on the replay's arena,
    which the scalar stream and fused regions do not fill: a program with them runs
    neither); ``reads``, all of them."""
    program.reads = trace_guards.remap(tape.guards.items, node_of)
    program.slot_of = {n: q for q, n in enumerate(program.slots)}
    program.input_guards, program.guards = [], []
    for g in program.reads:
        on_inputs = all(n in program.slot_of for n in trace_guards.nodes(g[0]))
        (program.input_guards if on_inputs else program.guards).append(g)


def _take_tape(program, tape, flat, traced, merge=False):
    """Set ``program``'s copies of the tape's arrays, its input slots (``inputs``: the flat
    leaves read at each call; ``captured``: closed-over tensors that require grad; ``in_off``
    and ``in_len``: where their values go in the arena) and the constants it watches. With
    ``merge``, identical view nodes are merged first (``views.merge``); returns the map
    from the tape's node numbers to the program's."""
    program.nodes = tape.records()
    program.args = np.frombuffer(tape.args, np.int64).copy() if tape.args else \
        np.zeros(1, np.int64)
    program.shapes = _arr(tape.shapes, np.int64)
    program.iat = _arr(tape.iat, np.int64)
    program.fat = _arr(tape.fat, np.float64)
    program.base = _arr(tape.val.array(), np.float64)
    program.arenas = []  # (values, adjoints) pairs kept between calls: see Program._replay
    renumber = views.merge(program) if merge else None
    node_of = (lambda k: k) if renumber is None else (lambda k: int(renumber[k]))
    # inputs: the dynamic argument leaves on the tape, then closed-over tensors that
    # require grad (parameters), whose current values are read at every call
    slots, program.inputs = [], []
    for k, t in enumerate(traced):
        node = tape.sources.get(id(t)) if isinstance(t, Tensor) and _is_dynamic(flat[k]) \
            else None
        if node is not None:
            slots.append(node_of(node))
            program.inputs.append(k)
    program.captured = [t for node, t in tape.leaves if node_of(node) not in slots]
    slots += [node_of(tape.sources[id(t)]) for t in program.captured]
    program.slots = slots
    program.in_off = np.array(column(program.nodes, "voff")[slots], np.int64)
    program.in_len = np.array(column(program.nodes, "size")[slots], np.int64)
    program.in_total = int(program.in_len.sum())
    # constants closed over: a later in-place change of one makes the trace stale
    # (a constant cast to another dtype on the way in is watched through the original)
    program.constants = [(t._vc, t._vc[0]) for t in tape.source_refs + tape.traced_casts
                         if not t._requires_grad and not any(t is x for x in traced)]
    return node_of


# an arena of this many values or more keeps only its sources' (see _sources_only)
_SPARSE_BASE_MIN = 1 << 20


def _sources_only(program):
    """Drop from a large ``program.base`` the traced values of the nodes every replay
    computes (all but the sources: inputs, constants), which nothing reads: a new array of
    zero pages, which take no memory until written, holds the sources' values. Returns the
    sources' (offset, size) spans, which a new arena copies; None when ``base`` is kept
    whole. (A 3 x 4M-element trace held its 448 MB three times over: the base and the
    two arenas of a call, each a full copy.)"""
    base = program.base
    if len(base) < _SPARSE_BASE_MIN or program.opaque:
        return None
    nodes = program.nodes
    source = kernel_tables.arity()[column(nodes, "code")] == 0
    voff, size = column(nodes, "voff")[source], column(nodes, "size")[source]
    spans = sorted(set(zip(voff.tolist(), size.tolist())))
    sparse = np.zeros(len(base))
    for o, n in spans:
        sparse[o:o + n] = base[o:o + n]
    program.base = sparse
    return spans


def _needs_grad_only_above(nodes, args, sources):
    """Clear FLAG_NEEDS_GRAD on every node of ``nodes`` that no path joins to one of the
    source nodes ``sources``: the reverse sweep then skips them, and the gradients of
    their operands (``X`` in ``X @ w`` when only ``w`` is differentiated)."""
    active = [False] * len(nodes)
    for i in sources:
        active[i] = True
    arg_list = args.tolist()  # Python lists: a trace of 14k scalar nodes took 21 ms on arrays
    for i, (p, n) in enumerate(zip(column(nodes, "arg_ptr").tolist(),
                                   column(nodes, "nargs").tolist())):
        if n and not active[i]:
            active[i] = any(active[a] for a in arg_list[p:p + n])
    column(nodes, "flags")[~np.array(active, np.bool_)] &= ~FLAG_NEEDS_GRAD


def _ancestors(nodes, args, roots):
    """The nodes ``roots`` are computed from, ``roots`` included (a tape's operands come
    before the nodes that read them)."""
    reached = set(roots)
    arg_list = args.tolist()
    ptr, nargs = column(nodes, "arg_ptr").tolist(), column(nodes, "nargs").tolist()
    for i in range(len(ptr) - 1, -1, -1):
        if i in reached:
            reached.update(arg_list[ptr[i]:ptr[i] + nargs[i]])
    return reached


def _eager_steps(program, tape, roots, transposes, big, node_of=int):
    """eager_nodes.plan for ``program``'s trace of ``tape`` (``node_of``: the tape's node
    numbers to the program's, when views were merged), seeded at ``roots``: with the
    trace's F.linear t() nodes and their inputs (Tape.transposes, renumbered), the nodes
    eager keeps big (eager_nodes.eager_big) and the dtypes of its sources that the node
    flags do not tell (integer indices, boolean masks)."""
    constants = [(node_of(tape.sources[id(t)]), t._data.dtype) for t in tape.source_refs
                 if t._data.dtype not in (np.float32, np.float64) and id(t) in tape.sources]
    return eager_nodes.plan(program, transposes, constants, roots, big)


def _diff_positions(argnums, nargs):
    if isinstance(argnums, int):
        argnums = (argnums,)
    out = []
    for i in argnums:
        if not -nargs <= i < nargs:
            raise RuntimeError(f"Got argnums={i}, but only {nargs} positional inputs")
        out.append(i % nargs)
    return tuple(out)


def _traced_leaf(x):
    if isinstance(x, Tensor):
        return x.detach().requires_grad_()
    if isinstance(x, (float, np.floating)) and not isinstance(x, np.ndarray):
        dt = np.float64 if isinstance(x, float) else x.dtype
        return _tensor(np.asarray(x, dt)).requires_grad_()
    return _tensor(np.array(x)).requires_grad_()


def _tensor(a):
    return _make(a)


def _arr(buf, dtype):
    a = np.frombuffer(buf, dtype).copy() if len(buf) else np.zeros(0, dtype)
    return a if len(a) else np.zeros(1, dtype)  # Numba wants one array type: never empty


def _like(g, orig):
    """A gradient in the kind of its argument (as torch.func with NumPy inputs)."""
    if isinstance(orig, Tensor):
        return _tensor(np.asarray(g, orig._data.dtype))
    if isinstance(orig, np.ndarray):
        return np.asarray(g, orig.dtype)
    if isinstance(orig, np.floating):
        return orig.dtype.type(g)
    return float(g)
