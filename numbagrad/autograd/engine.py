"""backward(): seed the roots, run the compiled sweep (handing big nodes to their parallel
kernels between segments), and accumulate the leaves' gradients into their ``.grad``."""

import re

import numpy as np

from ..ops import registry
from ..ops.registry import Unwritten
from . import anomaly, codegen
from .tape import (
    F_BIG,
    F_CODE,
    F_FAT,
    F_FLAGS,
    F_IAT,
    F_NFAT,
    F_NIAT,
    F_SIZE,
    F_VOFF,
    FLAG_BIG,
    FLAG_F32,
    FLAG_NEEDS_GRAD,
    NODE_FIELDS,
    retire,
)

_module = None
_module_ops = 0  # how many ops the loaded sweep knows: an op registered later reloads it

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
_EMPTY = np.empty(0)
# a reached node with these flags (big, needing a gradient) is one the sweep hands to Python
_BIG_NEEDS = FLAG_NEEDS_GRAD | FLAG_BIG


def sweep_module():
    """The generated sweep module (generated, compiled or loaded from cache on first use)."""
    global _module, _module_ops
    if _module is None or _module_ops != len(registry.OPS):
        _module = codegen.load()
        _module_ops = len(registry.OPS)
    return _module


class _Run:
    """One backward pass over one tape: its array views, adjoints and touched flags."""

    def __init__(self, tape, retain):
        self.tape = tape
        self.retain = retain
        n = len(tape)
        self.nodes = np.frombuffer(tape.nodes, np.int64).reshape(n, NODE_FIELDS)
        self.args = np.frombuffer(tape.args, np.int64) if tape.args else np.empty(0, np.int64)
        self.shapes = np.frombuffer(tape.shapes, np.int64) if tape.shapes else \
            np.empty(0, np.int64)
        self.iat = np.frombuffer(tape.iat, np.int64) if tape.iat else np.empty(0, np.int64)
        self.fat = np.frombuffer(tape.fat, np.float64) if tape.fat else np.empty(0)
        self.val = np.frombuffer(tape.val, np.float64) if tape.val else np.empty(0)
        self.adj = np.zeros(len(self.val))
        self.big_adj = {}
        self.touched = np.zeros(n, np.uint8)
        if tape.freed is None or len(tape.freed) < n:
            freed = np.zeros(n, np.uint8)
            if tape.freed is not None:
                freed[:len(tape.freed)] = tape.freed
            tape.freed = freed
        self.freed = tape.freed
        self.dirty = np.zeros(n, np.uint8)
        for node in tape.dirty:
            self.dirty[node] = 1
        # the per-node saved-value checks only matter once something was freed or modified
        self.check = tape.any_freed or bool(tape.dirty)
        if not retain:
            tape.any_freed = True

    # --- values and adjoints of a node as flat views, wherever they live ------------------
    def value(self, node):
        row = self.nodes[node]
        if row[F_VOFF] >= 0:
            return self.val[row[F_VOFF]:row[F_VOFF] + row[F_SIZE]]
        v = self.tape.big_val[row[F_BIG]]
        return np.ascontiguousarray(v).reshape(-1)

    def array(self, node, dtype):
        """A node's value as an array in its own shape (big values as stored: no copy)."""
        row = self.nodes[node]
        if row[F_VOFF] >= 0:
            shape = self.tape.shape_of(node)
            return self.val[row[F_VOFF]:row[F_VOFF] + row[F_SIZE]].reshape(shape).astype(dtype)
        return np.asarray(self.tape.big_val[row[F_BIG]])

    def adjoint(self, node, dtype=np.float64):
        row = self.nodes[node]
        if row[F_VOFF] >= 0:
            return self.adj[row[F_VOFF]:row[F_VOFF] + row[F_SIZE]]
        a = self.big_adj.get(node)
        if a is None:
            a = self.big_adj[node] = np.zeros(row[F_SIZE], dtype)
        return a

    def release(self):
        self.nodes = self.args = self.shapes = self.iat = self.fat = self.val = None

    def seed(self, node, grad):
        self.adjoint(node, grad.dtype)[:] += np.asarray(grad, dtype=np.float64).reshape(-1)
        self.touched[node] = 1

    # --- the sweep --------------------------------------------------------------------------
    def run(self, start):
        sweep = sweep_module().sweep
        t = self
        while start >= 0:
            status, i = sweep(t.nodes, t.args, t.shapes, t.iat, t.fat, t.val, t.adj, t.touched,
                              t.freed, t.dirty, start, t.retain, t.check)
            if status == 0:
                return
            if status == 1:
                self.big_node(i)
                start = i - 1
                # nodes the sweep would hand straight back (big, reached, needing a gradient)
                # are taken here, sparing a sweep call each
                while start >= 0 and t.touched[start] and \
                        (t.nodes[start, F_FLAGS] & _BIG_NEEDS) == _BIG_NEEDS and \
                        registry.OPS[t.nodes[start, F_CODE]].arity != 0:
                    self.big_node(start)
                    start -= 1
            elif status == 2:
                raise anomaly.sweep_error(FREED_MSG, self.tape, i)
            else:
                raise anomaly.sweep_error(self.dirty_message(i), self.tape, i)

    def run_hooks(self, node, hooks, shape, dtype):
        """Call ``hooks`` on the node's complete gradient; a hook's return value replaces it."""
        from ..tensor import _make

        g = self.adjoint(node)
        for hook in list(hooks):
            result = hook(_make(g.reshape(shape).astype(dtype)))
            if result is not None:
                g[:] = np.asarray(result._data if hasattr(result, "_data") else result,
                                  np.float64).reshape(-1)

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
        tape, nodes = self.tape, self.nodes
        if tape.hooks and i in tape.hooks:
            hooks, shape, dtype = tape.hooks[i]
            self.run_hooks(i, hooks, shape, dtype)
        if tape.functions:
            call = tape.functions.get(i)
            if call is not None:
                self.custom_function(i, call)
                return
        op = registry.OPS[nodes[i, F_CODE]]
        argn = tape.arg_nodes(i)
        flags = [nodes[a, F_FLAGS] for a in argn]
        needs = [bool(f & FLAG_NEEDS_GRAD) for f in flags]
        reads = set()
        for k, need in enumerate(needs):
            if need:
                reads.update(op.reads(k))
        if reads:
            if self.freed[i]:
                raise anomaly.sweep_error(FREED_MSG, tape, i)
            checked = [i] if "y" in reads else []
            checked += [a for k, a in enumerate(argn) if f"x{k}" in reads]
            if any(self.dirty[a] for a in checked):
                raise anomaly.sweep_error(self.dirty_message(i), tape, i)
        # One compute dtype per call: Numba's np.dot will not mix float32 and float64.
        big_val = tape.big_val
        dts = {big_val[b].dtype for b in (nodes[a, F_BIG] for a in (i, *argn)) if b >= 0}
        if len(dts) == 1:
            dt = dts.pop()
            if dt.kind != "f":
                dt = np.dtype(np.float64)
        else:
            dt = np.result_type(*[d for d in dts if d.kind == "f"] or [np.float64])
        g = self.adjoint(i, dt)
        if g.dtype != dt:
            g = g.astype(dt)
        sh_y = tape.shape_of(i)
        row = nodes[i]
        ia = self.iat[row[F_IAT]:row[F_IAT] + row[F_NIAT]]
        fa = self.fat[row[F_FAT]:row[F_FAT] + row[F_NFAT]]
        # not in anomaly mode: there every node is visited, the t() ones included
        any_layout = op.numpy_bw_any_layout if i not in tape.sites else ()
        grads, sinks = [], []
        reached = list(argn)
        for k, (a, need) in enumerate(zip(argn, needs)):
            if not need:
                grads.append(None)
                continue
            if k in any_layout:
                # This input's derivative (e.g. linalg._add_product) fills a transposed
                # target in its own layout, and stores into an Unwritten one.
                src = tape.transposes.get(a)
                if src is not None and nodes[src, F_VOFF] < 0:
                    # a t() node only this product consumes: hand over its input's gradient,
                    # transposed, so the product lands in that input's own layout
                    target = self.big_adj.get(src)
                    if target is None or target.dtype == dt:
                        reached[k] = src
                        if target is None:
                            target = self.big_adj[src] = np.empty(nodes[src, F_SIZE], dt)
                            grads.append(target.reshape(tape.shape_of(src)).T.view(Unwritten))
                        else:
                            grads.append(target.reshape(tape.shape_of(src)).T)
                        continue
                elif nodes[a, F_VOFF] < 0 and a not in self.big_adj:
                    target = self.big_adj[a] = np.empty(nodes[a, F_SIZE], dt)
                    grads.append(target.view(Unwritten))
                    continue
            target = self.adjoint(a, dt)
            if target.dtype != dt:
                grads.append(np.zeros(target.shape, dt))
                sinks.append((target, grads[-1]))
            else:
                grads.append(target)
        if op.numpy_bw is not None and op.arity != -1:
            xs = [self.array(a, dt) if f"x{k}" in reads else None for k, a in enumerate(argn)]
            gxs = [None if gx is None else gx.reshape(tape.shape_of(a))
                   for a, gx in zip(argn, grads)]
            op.numpy_bw(g.reshape(sh_y), xs, gxs, ia, fa)
        else:
            empty = _EMPTY.astype(dt)
            grads = [empty if gx is None else gx for gx in grads]
            shapes = [np.array(tape.shape_of(a), np.int64) for a in argn]
            sh = np.array(sh_y, np.int64)
            mod = sweep_module()
            if op.arity == -1:
                kernel = getattr(mod, codegen.kernel_name(op))
                for k in range(len(argn)):
                    if needs[k]:
                        kernel(g, grads[k], sh, shapes[k], k, ia, fa)
            else:
                y = self.value(i).astype(dt, copy=False) if "y" in reads else empty
                xs = [self.value(a).astype(dt, copy=False) if f"x{k}" in reads else empty
                      for k, a in enumerate(argn)]
                kernel = getattr(mod, codegen.kernel_name(op, parallel=True))
                kernel(g, y, *xs, *grads, sh, *shapes, *needs, ia, fa)
        for target, tmp in sinks:
            target += tmp
        touched = self.touched
        for a, need in zip(reached, needs):
            if need:
                touched[a] = 1
        if not self.retain:
            self.freed[i] = 1

    def custom_function(self, i, call):
        """A custom autograd.Function's node: its backward is the user's Python code."""
        from ..tensor import _make
        from .grad_mode import no_grad

        tape = self.tape
        if self.freed[i]:
            raise anomaly.sweep_error(FREED_MSG, tape, i)
        argn = tape.arg_nodes(i)
        shape = tape.shape_of(i)
        g = self.adjoint(i)
        dtype = np.float32 if self.nodes[i, F_FLAGS] & FLAG_F32 else np.float64
        with no_grad():
            try:
                grads = call.backward(_make(g.reshape(shape).astype(dtype)),
                                      [tape.shape_of(a) for a in argn])
            except RuntimeError as err:
                if getattr(err, "_numbagrad_sweep", False):  # a wrong gradient: say where
                    err.args = (str(err) + anomaly.forward_site(tape, i),)
                raise
        for a, ga in zip(argn, grads):
            if ga is not None and self.nodes[a, F_FLAGS] & FLAG_NEEDS_GRAD:
                target = self.adjoint(a, ga._data.dtype)
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


def dirty_message(tape, i):
    """torch's message for a saved value of node ``i`` changed in place since."""
    for node in (i, *tape.arg_nodes(i)):
        if node in tape.dirty:
            desc, counter, producer, expected = tape.dirty[node]
            version = counter[0]
            # torch names the forward op here: ExpBackward0 -> Exp
            name = re.sub(r"Backward\d*$", "", producer or "")
            source = f", which is output 0 of {name}," if producer else ""
            return (
                "one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{desc}]{source} is at version {version}; expected "
                f"version {expected} instead. Hint: enable anomaly detection to find the "
                "operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False)."
            )
    return "one of the variables needed for gradient computation has been modified by an " \
           "inplace operation"


def run_backward(roots, grads, retain_graph, inputs, collect=None):
    """Backward from ``roots`` (non-leaf tensors on tapes) seeded with ``grads``: accumulate
    into ``.grad`` of every reached leaf and retained non-leaf, or only of ``inputs``; with
    ``collect`` (a dict), sum the gradients of ``inputs`` there by id instead (autograd.grad).

    A graph may span several tapes (bridge nodes stand for tensors of older tapes). Tapes are
    swept newest first, so every bridge's adjoint is complete before it seeds its tape."""
    pending = {}  # tape serial -> (tape, [(node, flat gradient)])
    for t, g in zip(roots, grads):
        pending.setdefault(t._tape.serial, (t._tape, []))[1].append((t._node, g))
    while pending:
        tape, seeds = pending.pop(max(pending))
        run = _Run(tape, retain_graph)
        try:
            for node, g in seeds:
                run.seed(node, g)
            run.run(max(node for node, _ in seeds))
            _accumulate(run, tape, inputs, collect)
            for node, (older, older_node) in tape.bridges.items():
                g = run.gradient_of(node)
                if g is not None:
                    pending.setdefault(older.serial, (older, []))[1].append(
                        (older_node, np.array(g)))
        finally:
            # the views pin the tape's buffers (np.frombuffer); a live traceback must not keep
            # them, or the next op recorded on this tape could not grow it
            run.release()
        if not retain_graph:
            retire(tape)


def _accumulate(run, tape, inputs, collect=None):
    """Write the gradients this tape's sweep produced into ``.grad`` of leaves (or inputs),
    or into ``collect`` keyed by id(input)."""
    from ..tensor import _accumulate_grad, _make, post_accumulate

    if inputs is None:
        if tape.leaves:
            # one vectorized gather of what every leaf needs, then a plain Python loop
            idx = np.fromiter((node for node, _ in tape.leaves), np.int64, len(tape.leaves))
            touched = run.touched[idx].tolist()
            voffs = run.nodes[idx, F_VOFF]
            sizes = run.nodes[idx, F_SIZE].tolist()
            firsts = run.adj[np.maximum(voffs, 0)].tolist() if len(run.adj) else [0.0] * len(idx)
            voffs = voffs.tolist()
            for k, (node, leaf) in enumerate(tape.leaves):
                if not touched[k] or not leaf._requires_grad:
                    continue
                hooks = getattr(leaf, "_hooks", None)
                if hooks:
                    run.run_hooks(node, hooks, leaf._data.shape, leaf._data.dtype)
                if leaf._grad is None and voffs[k] >= 0 and sizes[k] == 1 and \
                        leaf._data.ndim == 0:
                    # 0-d leaf (scalar graphs): no array round trip
                    leaf._grad = _make(leaf._data.dtype.type(firsts[k]))
                    post_accumulate(leaf)
                else:
                    # a big node's adjoint is a buffer of its own: hand it over, no copy
                    _accumulate_grad(leaf, run.gradient_of(node), owned=voffs[k] < 0)
        for node, t in tape.retained.items():
            g = run.gradient_of(node)
            if g is not None and t._node == node:
                _accumulate_grad(t, g)
    else:
        for t in inputs:
            # a non-leaf of another tape is reached through a bridge, on its own tape
            node = t._node if t._tape is tape else \
                (tape.sources.get(id(t)) if t._tape is None else None)
            if node is not None:
                if not run.touched[node]:
                    continue
                hooks = getattr(t, "_hooks", None) if t._tape is None else None
                if hooks:  # a leaf's hooks (a non-leaf's ran in the sweep)
                    run.run_hooks(node, hooks, t._data.shape, t._data.dtype)
                g = run.gradient_of(node)
                if collect is None:
                    _accumulate_grad(t, g)
                else:  # a leaf used on several tapes gets a part from each
                    part = np.array(g, dtype=np.float64)
                    collect[id(t)] = part if id(t) not in collect else collect[id(t)] + part



