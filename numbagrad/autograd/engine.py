"""backward(): seed the roots, run the compiled sweep (handing big nodes to their parallel
kernels between segments), and accumulate the leaves' gradients into their ``.grad``."""


import numpy as np

from .. import _blas
from .._threads import fit_threads
from ..core import grad_mode
from ..core.tape import (
    F_BIG,
    F_CODE,
    F_FLAGS,
    F_SIZE,
    F_VOFF,
    FLAG_BIG,
    FLAG_F32,
    FLAG_HOOK,
    FLAG_NEEDS_GRAD,
    NODE_FIELDS,
    retire,
)
from ..engine import kernel_tables, registry
from ..engine.registry import Unwritten
from ..grad_fn import none_position
from ..tensor import _make
from . import anomaly, sweep, written
from .big_nodes import _BigNode, _statics_for
from .checks import FREED_MSG, checked_hook_result, dirty_message, mark_dirty_views
from .leaf_grads import _accumulate
from .written import ADD, ADD_NEW, FLIP, FLIP_NEW, NEEDS, PASS, SHARE, STORE, UNWRITTEN

# (read-only stand-ins for a tape's empty buffers)
_NO_INTS = np.empty(0, np.int64)
_I64, _F64 = np.dtype(np.int64), np.dtype(np.float64)
_NO_FLOATS = np.empty(0)
_NO_DIRT = np.empty(0, np.int64)
# a reached node needing a gradient with one of these flags is one the sweep hands to Python
_HANDED_BACK = FLAG_BIG | FLAG_HOOK
# nodes _Run.walk skips in Python in a row before it leaves the rest to the sweep (a layer's
# leaves: weight, bias, the weight's t())
_WALK_SKIP = 16


class _Run:
    """One backward pass over one tape: its array views, adjoints and touched flags."""

    def __init__(self, tape, retain):
        self.tape = tape
        self.retain = retain
        self.stops = ()  # input nodes the derivative stops at (autograd.grad's non-leaves)
        # nodes whose adjoint is read after the sweep: it is never handed to an input
        self.kept = tape.retained
        tape.add_sweep(self)  # until release(): recording elsewhere moves to a new tape
        # np.frombuffer, not np.ndarray(buffer=): its view holds the buffer exported, so a
        # recorder in another thread cannot resize (move) it under the sweep (BufferError);
        # the node count is read from that view: one may be pushed until it exists
        nodes = np.frombuffer(tape.nodes, _I64)
        n = len(nodes) // NODE_FIELDS
        self.nodes = nodes.reshape(n, NODE_FIELDS)
        self.args = np.frombuffer(tape.args, _I64) if tape.args else _NO_INTS
        self.shapes = np.frombuffer(tape.shapes, _I64) if tape.shapes else _NO_INTS
        self.iat = np.frombuffer(tape.iat, _I64) if tape.iat else _NO_INTS
        self.fat = np.frombuffer(tape.fat, _F64) if tape.fat else _NO_FLOATS
        if tape.unwritten_nodes:
            tape.place_unwritten()
        self.val = tape.val.array()  # (shorter than the arena's n: no value was placed)
        self.adj = np.zeros(tape.val.n)
        self.big_adj = {}
        self.spare = []  # adjoints of big nodes already differentiated, for reuse
        # an adjoint handed to both operands of an add, as torch shares one gradient tensor:
        # id -> [buffer, holders]; whoever writes into it first takes a copy (see _own)
        self.shared = {}
        self.statics = None  # this graph's _BigNode records, looked up at the first big node
        # what this run does, as written.build reads it (None: not noted)
        self.log = None
        self.touched = np.zeros(n, np.uint8)
        if tape.freed is None or len(tape.freed) < n:
            freed = np.zeros(n, np.uint8)
            if tape.freed is not None:
                freed[:len(tape.freed)] = tape.freed
            tape.freed = freed
        self.freed = tape.freed
        # the per-node saved-value checks only matter once something was freed or modified
        self.check = tape.any_freed or bool(tape.dirty)
        # (read by the sweep only with check, which is when it is filled)
        # per node changed in place: the nodes below this one fail reading it (0: none do)
        self.dirty = np.zeros(n, np.int64) if self.check else _NO_DIRT
        if tape.dirty and tape.view_nodes:
            mark_dirty_views(tape)
        for node, entry in tape.dirty.items():
            self.dirty[node] = entry[5]
        if not retain:
            tape.any_freed = True

    # --- values and adjoints of a node as flat views, wherever they live ------------------
    # (fields read from the tape's array.array: Python ints, cheaper than NumPy scalars)
    def value(self, node):
        tn, base = self.tape.nodes, node * NODE_FIELDS
        voff = tn[base + F_VOFF]
        if voff >= 0:
            return self.val[voff:voff + tn[base + F_SIZE]]
        v = self.tape.big_val[tn[base + F_BIG]]
        return np.ascontiguousarray(v).reshape(-1)

    def array(self, node, dtype):
        """A node's value as an array in its own shape (big values as stored: no copy)."""
        tn, base = self.tape.nodes, node * NODE_FIELDS
        voff = tn[base + F_VOFF]
        if voff >= 0:
            shape = self.tape.shape_of(node)
            return self.val[voff:voff + tn[base + F_SIZE]].reshape(shape).astype(dtype)
        return np.asarray(self.tape.big_val[tn[base + F_BIG]])

    def adjoint(self, node, dtype=np.float64):
        tn, base = self.tape.nodes, node * NODE_FIELDS
        voff = tn[base + F_VOFF]
        if voff >= 0:
            return self.adj[voff:voff + tn[base + F_SIZE]]
        a = self.big_adj.get(node)
        if a is None:
            a = self.big_adj[node] = self._zeros(tn[base + F_SIZE], dtype)
        return a

    def _own(self, node, a):
        """Big adjoint ``a`` of ``node``, to be written: a copy of its own if another node
        shares it."""
        entry = self.shared.get(id(a))
        if entry is None:
            return a
        self._unshare(entry)
        a = self.big_adj[node] = a.copy()
        return a

    def _unshare(self, entry):
        """One holder of a shared adjoint lets go of it."""
        entry[1] -= 1
        if entry[1] == 1:
            del self.shared[id(entry[0])]

    def writable(self, node, dtype=np.float64):
        """``adjoint(node)`` for adding into: never an array another node shares."""
        a = self.adjoint(node, dtype)
        return self._own(node, a) if self.shared and id(a) in self.shared else a

    def _may_share(self, node):
        """Whether ``node``'s adjoint may be an array another node holds too: not one read
        or replaced from Python during or after the sweep (hooks, retain_grad, inputs)."""
        tape = self.tape
        return node not in self.kept and node not in self.stops and \
            not (tape.hooks and node in tape.hooks) and \
            not (tape.node_post_hooks and node in tape.node_post_hooks)

    def gives_up(self, buf):
        """Whether ``buf`` (an adjoint read after the sweep) is the caller's to keep: false
        while another node shares it, and then that node is left as its only holder."""
        entry = self.shared.get(id(buf)) if self.shared else None
        if entry is None:
            return True
        self._unshare(entry)
        return False

    def _spare(self, size, dtype):
        """A dead node's adjoint of this size and dtype, taken from the spares, or None."""
        for k, b in enumerate(self.spare):
            if b.size == size and b.dtype == dtype:
                return self.spare.pop(k)
        return None

    def _unwritten(self, size, dtype):
        """A buffer for a first gradient that is stored, not added."""
        b = self._spare(size, dtype)
        return np.empty(size, dtype) if b is None else b

    def _zeros(self, size, dtype):
        """A zeroed buffer: a dead node's adjoint if one fits (its memory is mapped and
        maybe cached already, where fresh pages fault in one by one), else a new one."""
        b = self._spare(size, dtype)
        if b is None:
            return np.zeros(size, dtype)
        b.fill(0)
        return b

    def release(self):
        self.nodes = self.args = self.shapes = self.iat = self.fat = self.val = None
        self.tape.drop_sweep(self)

    def seed(self, node, grad):
        voff = self.tape.nodes[node * NODE_FIELDS + F_VOFF]
        if voff >= 0 and grad.size == 1:  # a scalar loss's seed: no array arithmetic
            self.adj[voff] += grad.item()
        elif voff < 0 and node not in self.big_adj:  # a copy of grad, in its dtype
            self.big_adj[node] = np.array(grad, grad.dtype).reshape(-1)
        else:
            self.writable(node, grad.dtype)[:] += np.asarray(grad, dtype=np.float64).reshape(-1)
        self.touched[node] = 1

    # --- the sweep --------------------------------------------------------------------------
    def run(self, start):
        t = self
        while True:
            start = self.walk(start)
            if start < 0:
                return
            block, arity, saves = kernel_tables.sweep_tables()
            status, i, row = sweep.sweep(block, sweep.BW, arity, saves, t.nodes, t.args,
                                         t.shapes, t.iat, t.fat, t.val, t.adj, t.touched,
                                         t.freed, t.dirty, start, t.retain, t.check)
            if self.log is not None:
                self.log.append(("sweep", start, status, i))
            if status == sweep.DONE:
                return
            if status == sweep.HAND_BACK:
                self.big_node(i)
                start = i - 1
            elif status == sweep.NOT_COMPILED:
                # the op's first use in this process: compile its kernel, then resume
                kernel_tables.ensure(int(t.nodes[i, F_CODE]), kernel_tables.KINDS[row])
                start = i
            elif status == sweep.FREED:
                raise anomaly.sweep_error(FREED_MSG, self.tape, i)
            else:
                raise anomaly.sweep_error(self.dirty_message(i), self.tape, i)

    def walk(self, start):
        """Walk down from ``start`` in Python while the sweep would hand each node straight
        back (big or hooked, reached, needing a gradient: differentiated here) or skip it
        (not reached, needing none, a leaf); returns the first node the sweep must take, or
        -1. Each sweep call saved is several microseconds of a training step, whose graph
        is big nodes and leaves only."""
        tn = self.tape.nodes
        touched = self.touched
        ops = registry.OPS
        skipped = 0
        while start >= 0:
            flags = tn[start * NODE_FIELDS + F_FLAGS]
            if not touched[start] or not flags & FLAG_NEEDS_GRAD or \
                    ops[tn[start * NODE_FIELDS + F_CODE]].arity == 0:
                # a long run of these (an unrelated graph on the same tape, thousands of
                # leaves) is the sweep's to skip, in a loop of nanoseconds per node
                skipped += 1
                if skipped > _WALK_SKIP:
                    break
                start -= 1
            elif flags & _HANDED_BACK:
                self.big_node(start)
                skipped = 0
                start -= 1
            else:
                break
        return start

    def run_hooks(self, node, hooks, shape, dtype):
        """Call ``hooks`` on the node's complete gradient; a hook's return value replaces it."""
        g = self.writable(node)
        for hook in list(hooks):
            grad = _make(g.reshape(shape).astype(dtype))
            result = checked_hook_result(hook, grad, hook(grad))
            if result is not None:
                g[:] = np.asarray(result._data, np.float64).reshape(-1)

    def big_node(self, i):
        """Differentiate a node too large for the serial sweep (or one with hooks, or one
        recorded in anomaly mode) with its op's own kernel."""
        tape = self.tape
        if i not in tape.sites or not anomaly.state.check_nan:
            self._big_node(i)
            return
        argn = [a for a in tape.arg_nodes(i) if self.nodes[a, F_FLAGS] & FLAG_NEEDS_GRAD]
        had_nan = [bool(np.isnan(self.adjoint(a)).any()) for a in argn]
        self._big_node(i)
        for k, (a, before) in enumerate(zip(argn, had_nan)):
            if not before and np.isnan(self.adjoint(a)).any():
                name = tape.names.get(i) or registry.OPS[self.nodes[i, F_CODE]].grad_fn
                raise anomaly.nan_error(tape, i, name, k)

    def _big_node(self, i):
        tape = self.tape
        if tape.hooks and i in tape.hooks:
            hooks, shape, dtype = tape.hooks[i]
            self.run_hooks(i, hooks, shape, dtype)
        if i in self.stops:  # a non-leaf input: its gradient is the result; go no further
            return
        post = tape.node_post_hooks.get(i) if tape.node_post_hooks else None
        if post:
            self._node_with_post_hooks(i, post)
            return
        self._node_derivative(i)
        # its adjoint is read no more (a hook may hold it as a tensor: not then)
        if i not in self.kept and not (tape.hooks and i in tape.hooks):
            dead = self.big_adj.pop(i, None)
            entry = self.shared.get(id(dead)) if self.shared else None
            if entry is not None:
                self._unshare(entry)  # another node still reads it
            elif dead is not None and dead.base is None:
                self.spare.append(dead)

    def _node_with_post_hooks(self, i, hooks):
        """Run node i's derivative into zeroed input adjoints, so that what it sends each
        input (torch's grad_inputs) can be shown to ``hook(grad_inputs, grad_outputs)`` and
        replaced, then added to what the inputs had."""
        tape = self.tape
        args = tape.arg_nodes(i)
        wanted = [a if self.nodes[a, F_FLAGS] & FLAG_NEEDS_GRAD else None for a in args]
        before = {a: self.adjoint(a).copy() for a in wanted if a is not None}
        for a in before:
            self.writable(a)[:] = 0.0
        self._node_derivative(i)

        def as_tensor(node):
            return _make(self.adjoint(node).reshape(tape.shape_of(node)).astype(
                tape.float_dtype(node)))
        grad_inputs = tuple(None if a is None else as_tensor(a) for a in wanted)
        at = none_position(tape.code(i), len(grad_inputs))  # torch lists a number's None too
        if at is not None:
            grad_inputs = (*grad_inputs[:at], None, *grad_inputs[at:])
        grad_outputs = (as_tensor(i),)
        for hook in list(hooks):
            result = hook(grad_inputs, grad_outputs)
            if result is not None:
                grad_inputs = tuple(result)
        for a in before:  # (an input used twice got both its gradients in one adjoint)
            k = wanted.index(a)
            g = grad_inputs[k + (at is not None and k >= at)]
            self.writable(a)[:] = before[a] + (0.0 if g is None else
                                               np.asarray(g._data, np.float64).reshape(-1))
            self.touched[a] = 1

    def _node_derivative(self, i):
        tape = self.tape
        if tape.functions:
            call = tape.functions.get(i)
            if call is not None:
                self.custom_function(i, call)
                return
        statics = self.statics
        if statics is None:
            statics = self.statics = _statics_for(tape)
        s = statics.get(i)
        if s is None:
            s = statics[i] = _BigNode(self, i)
        if s.reads:
            if self.freed[i]:
                raise anomaly.sweep_error(FREED_MSG, tape, i)
            if tape.dirty and any(self.dirty[a] > i for a in s.checked):
                raise anomaly.sweep_error(self.dirty_message(i), tape, i)
        dt = s.dt
        big_adj = self.big_adj
        log = self.log
        if log is not None:  # (what written.build needs: how each input was reached)
            acts = []
            noted = ["node", i, i in big_adj, False, acts]
            log.append(noted)
        g = self.adjoint(i, dt)
        if g.dtype != dt:
            g = g.astype(dt)
            if log is not None:
                noted[3] = True
        ia, fa = self.iat[s.io:s.io_end], self.fat[s.fo:s.fo_end]
        # Where each input's gradient goes: decided here, at run time, because it depends on
        # what earlier nodes of this sweep wrote (which adjoint arrays exist, in what dtype)
        grads, sinks = [], None
        reached = list(s.argn)
        needs = s.needs
        handed = s.passes and g is big_adj.get(i) and i not in self.kept
        given = None  # node i's adjoint once handed on: an add's other operand shares it
        if s.int_needs:
            needs = tuple(map(int, needs))
        for k, a, size_a, may_store, src in s.inputs:
            if size_a < 0:  # needs no gradient
                grads.append(None)
                continue
            if k in s.stores and a not in big_adj:
                if handed and k in s.passes:
                    given = big_adj[a] = big_adj.pop(i)  # node i's adjoint is read no more
                    handed = False
                    needs = needs[:k] + (0,) + needs[k + 1:]
                    grads.append(None)
                    act = (PASS, k, a)
                elif given is not None and k in s.passes and self._may_share(a):
                    big_adj[a] = given
                    entry = self.shared.get(id(given))
                    if entry is None:
                        self.shared[id(given)] = [given, 2]
                    else:
                        entry[1] += 1
                    needs = needs[:k] + (0,) + needs[k + 1:]
                    grads.append(None)
                    act = (SHARE, k, a)
                else:
                    target = big_adj[a] = self._unwritten(size_a, dt)
                    needs = needs[:k] + (2,) + needs[k + 1:]
                    grads.append(target)
                    act = (STORE, k, a)
                if log is not None:
                    acts.append(act)
                continue
            if src is not None:
                # a t() node only this product consumes (F.linear): its input's gradient,
                # transposed, so the product lands in that input's own layout
                src_node, src_shape, src_size = src
                target = big_adj.get(src_node)
                if target is not None and self.shared:
                    target = self._own(src_node, target)
                if target is None or target.dtype == dt:
                    reached[k] = src_node
                    if log is not None:
                        acts.append((FLIP_NEW if target is None else FLIP, k, src_node))
                    if target is None:
                        target = big_adj[src_node] = np.empty(src_size, dt)
                        grads.append(target.reshape(src_shape).T.view(Unwritten))
                    else:
                        grads.append(target.reshape(src_shape).T)
                    continue
            elif may_store and a not in big_adj:
                # this input's derivative (e.g. linalg._add_product) stores into an
                # Unwritten target instead of adding into a zeroed one
                target = big_adj[a] = np.empty(size_a, dt)
                grads.append(target.view(Unwritten))
                if log is not None:
                    acts.append((UNWRITTEN, k, a))
                continue
            new = log is not None and self.nodes[a, F_VOFF] < 0 and a not in big_adj
            target = self.writable(a, dt)
            if log is not None:
                acts.append((ADD_NEW if new else ADD, k, a, target.dtype != dt))
            if target.dtype != dt:
                tmp = np.zeros(target.shape, dt)
                grads.append(tmp)
                if sinks is None:
                    sinks = []
                sinks.append((target, tmp))
            else:
                grads.append(target)
        op = s.op
        if s.kernel is None:  # the op's NumPy derivative (matrix products, convolutions)
            xs = [self.array(a, dt) if r else None for a, r in zip(s.argn, s.read_x)]
            gxs = [None if gx is None else gx.reshape(shape)
                   for gx, shape in zip(grads, s.arg_shapes)]
            op.numpy_bw(g.reshape(s.shape), xs, gxs, ia, fa)
        else:
            empty = s.empty
            grads = [empty if gx is None else gx for gx in grads]
            if op.arity == -1:
                for k, need in enumerate(needs):
                    if need:
                        s.kernel(g, grads[k], s.sh, s.sh_args[k], k, ia, fa)
            elif any(needs):
                y = self.value(i).astype(dt, copy=False) if s.read_y else empty
                xs = [self.value(a).astype(dt, copy=False) if r else empty
                      for a, r in zip(s.argn, s.read_x)]
                s.kernel(g, y, *xs, *grads, s.sh, *s.sh_args, *needs, ia, fa)
        if log is not None:
            acts.append((NEEDS, needs, tuple(reached)))
        if sinks:
            for target, tmp in sinks:
                target += tmp
        touched = self.touched
        for a, need in zip(reached, s.needs):
            if need:
                touched[a] = 1
        if not self.retain:
            self.freed[i] = 1

    def custom_function(self, i, call):
        """A custom autograd.Function's node: its backward is the user's Python code."""
        tape = self.tape
        if self.freed[i]:
            raise anomaly.sweep_error(FREED_MSG, tape, i)
        argn = tape.arg_nodes(i)
        shape = tape.shape_of(i)
        g = self.adjoint(i)
        dtype = np.float32 if self.nodes[i, F_FLAGS] & FLAG_F32 else np.float64
        with grad_mode.no_grad():
            try:
                grads = call.backward(_make(g.reshape(shape).astype(dtype)),
                                      [tape.shape_of(a) for a in argn])
            except RuntimeError as err:
                if getattr(err, "_numbagrad_sweep", False):  # a wrong gradient: say where
                    anomaly.warn_forward_site(tape, i)
                raise
        for a, ga in zip(argn, grads):
            if ga is not None and self.nodes[a, F_FLAGS] & FLAG_NEEDS_GRAD:
                target = self.writable(a, ga._data.dtype)
                target += np.asarray(ga._data, np.float64).reshape(-1)
                self.touched[a] = 1
        if not self.retain:
            self.freed[i] = 1
            call.ctx._freed = True

    def dirty_message(self, i):
        return dirty_message(self.tape, i)

    def gradient_of(self, node):
        """The accumulated adjoint of ``node`` as a flat array, or None if never reached."""
        if not self.touched[node]:
            return None
        if self.nodes[node, F_VOFF] >= 0:
            return self.adjoint(node)
        return self.big_adj.get(node)


def run_backward(roots, grads, retain_graph, inputs, collect=None):
    """Backward from ``roots`` (non-leaf tensors on tapes) seeded with ``grads``: accumulate
    into ``.grad`` of every reached leaf and retained non-leaf, or only of ``inputs``; with
    ``collect`` (a dict), sum the gradients of ``inputs`` there by id instead (autograd.grad).

    A graph may span several tapes (bridge nodes stand for tensors of older tapes). Tapes are
    swept newest first, so every bridge's adjoint is complete before it seeds its tape."""
    mode = grad_mode.state  # as torch's engine: hooks and custom backwards record nothing
    enabled, mode.enabled = mode.enabled, False  # (no_grad() without its object)
    try:
        _run_backward(roots, grads, retain_graph, inputs, collect)
    finally:
        mode.enabled = enabled


def _run_backward(roots, grads, retain_graph, inputs, collect):
    if len(roots) == 1:  # (a loss's backward: one tape to start from)
        tape, seeds = roots[0]._tape, [(roots[0]._node, grads[0])]
        # older tapes are reached through bridges only (a tape being swept records none)
        order = sweep.TapeOrder() if tape.bridges else None
    else:
        order = sweep.TapeOrder()
        for t, g in zip(roots, grads):
            order.add(t._tape, t._node, g)
        tape, seeds = order.pop()
    while tape is not None:
        if tape.has_big or tape.blas:  # (the rest of the sweep runs on this thread alone)
            fit_threads()
            with _blas.one_thread(tape.blas):
                _sweep_tape(tape, seeds, order, retain_graph, inputs, collect)
        else:
            _sweep_tape(tape, seeds, order, retain_graph, inputs, collect)
        tape, seeds = order.pop() if order is not None else (None, None)


def _sweep_tape(tape, seeds, order, retain_graph, inputs, collect):
    """One tape's part of a backward: its sweep from ``seeds``; its bridges' gradients go
    into ``order`` (sweep.TapeOrder) for the older tapes."""
    run = _Run(tape, retain_graph)
    stops = flags = ()
    if inputs:
        stops = _stops(tape, inputs)
        flags = [run.nodes[i, F_FLAGS] for i in stops]
    try:
        if inputs:
            run.kept = set(tape.retained) | {t._node for t in inputs if t._tape is tape}
        if stops:  # torch runs only what the inputs' gradients need: the sweep hands
            run.stops = set(stops)  # each non-leaf input back to Python, which stops
            run.nodes[stops, F_FLAGS] |= FLAG_HOOK
        for node, g in seeds:
            run.seed(node, g)
        written.run_from(run, seeds, inputs, collect)
        _accumulate(run, tape, inputs, collect)
        if tape.bridges:
            for node, (older, older_node) in tape.bridges.items():
                g = run.gradient_of(node)
                if g is not None:
                    order.add(older, older_node, np.array(g))
    finally:
        if stops:
            for i, f in zip(stops, flags):
                run.nodes[i, F_FLAGS] = f
        # the views pin the tape's buffers (np.frombuffer); a live traceback must not keep
        # them, or the next op recorded on this tape could not grow it
        run.release()
    if not retain_graph:
        retire(tape)
    if tape.outgrown():  # new graphs on its live tensors go on tapes that die with them
        tape.close()


def _stops(tape, inputs):
    """The non-leaf inputs on ``tape`` whose derivative torch does not run: those with no
    other input (nor an older tape, which may hold one) below them."""
    targets = {t._node for t in inputs if t._tape is tape}
    targets |= {tape.sources[id(t)] for t in inputs if t._tape is None and id(t) in tape.sources}
    stops = []
    for node in {t._node for t in inputs if t._tape is tape}:
        seen, todo, needed = set(), list(tape.arg_nodes(node)), False
        while todo and not needed:
            a = todo.pop()
            if a in seen:
                continue
            seen.add(a)
            needed = a in targets or a in tape.bridges
            todo.extend(tape.arg_nodes(a))
        if not needed:
            stops.append(node)
    return stops


