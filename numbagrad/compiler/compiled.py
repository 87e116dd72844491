"""numbagrad.compile: trace a gradient function once, then replay its forward and backward
inside one @njit call per evaluation.

The first call with a given signature (argument shapes and dtypes) runs the function eagerly
on a tape of its own, with every value kept in the float64 arena; later calls write the new
inputs into the tape's source slots and run ``replay_codegen``'s ``run`` on it. The trace is
one path through the function: Python control flow that depends on input values is the
not recorded: a value the function reads out of the trace (``item()``, ``if`` on a tensor,
a comparison mask, argmax indices, ``detach()``) becomes a guard (core/trace_guards.py), and
a replay whose guards do not hold is traced again (``max_traces`` per signature, then the
signature runs eagerly); ``fullgraph=True`` makes such a read an error instead.

A plain function of Tensors (``CompiledFunction``) is traced the same way, but a call runs
only the forward (``run_forward``) on an arena of its own, which the output's one graph node
keeps for ``run_backward``: the reverse sweep seeded with the output's gradient.

This module holds what a user calls (``compile`` and the callables it returns); the trace
itself, recorded and made runnable, is program.py's ``Program``.
"""


import numpy as np

from .. import _blas
from ..autograd import sweep
from ..autograd.checks import FREED_MSG
from ..core import grad_mode, trace_guards
from ..core.tape import FLAG_HOOK, column
from ..engine import registry
from ..engine.record import record
from ..func import transforms as func_mod
from ..ops.elementwise.pointwise import to_dtype
from ..ops.index.indexing import gather_flat
from ..tensor import Tensor
from . import eager_nodes, int_args
from .program import (
    Program,
    _ancestors,
    _eager_steps,
    _is_dynamic,
    _leaf_key,
    _record_trace,
    _split_guards,
    _take_tape,
    _tensor,
)
from .traces import Traces

_KINDS = ("grad", "value_and_grad", "grad_and_value")


def compile(fn=None, *, check=False, max_traces=8, fullgraph=False):  # noqa: A001 - torch's name
    """Compile ``numbagrad.func.grad(f)`` / ``value_and_grad(f)`` / ``grad_and_value(f)``:
    the result takes and returns what the transform does (NumPy arrays and Python floats
    for NumPy inputs), computed by replaying a trace of ``f`` inside Numba.

    Any other callable ``f`` (a function of Tensors returning a Tensor or a tuple of Tensors,
    an ``nn.Module``) compiles as under torch.compile: its forward is replayed inside Numba
    and, when an input or a closed-over parameter requires grad, the output carries one
    ``CompiledFunctionBackward`` node whose backward is the trace's reverse sweep, also in
    Numba; ``.backward()`` then fills ``.grad`` as usual.

    A value the function reads from the trace in Python (``item()``, ``float()``, an ``if``
    on a tensor, ``tolist()``, ``numpy()``) or computes off the graph (comparison masks,
    argmax indices, ``detach()``) is a guard: a call whose values differ is traced again.
    ``max_traces`` bounds the traces kept per signature (argument shapes, dtypes and static
    values; least recently used signatures dropped beyond it): a signature that needs more
    runs eagerly from then on, with a warning. ``fullgraph=True`` makes every such read a
    ``TraceReadError`` naming its line, as torch.compile's ``fullgraph`` does for graph breaks.

    ``check=True`` (or a number of calls) also runs the transform eagerly on the first calls
    and raises if the replay differs.

    Examples:
        >>> import numbagrad as torch
        >>> import numpy as np
        >>> from numbagrad.func import value_and_grad
        >>> f = torch.compile(value_and_grad(lambda x: (x ** 2).sum()))
        >>> f(np.array([1., 2., 3.]))
        (14.0, array([2., 4., 6.]))
    """
    if fn is None:
        return lambda f: compile(f, check=check, max_traces=max_traces, fullgraph=fullgraph)
    transform = getattr(fn, "_numbagrad_transform", None)
    if transform is not None and transform[0] in _KINDS:
        return Compiled(fn, transform, check, max_traces, fullgraph)
    if not callable(fn):
        raise TypeError(f"numbagrad.compile: expected a callable, got {type(fn).__name__}")
    return CompiledFunction(fn, check, max_traces, fullgraph)


class Compiled:
    """A compiled gradient transform: call it like the transform; ``as_numba()`` gives a
    function that @njit code can call."""

    def __init__(self, fn, transform, check, max_traces, fullgraph=False):
        self.fn = fn
        self.kind, self.func, self.argnums, self.has_aux = transform
        self.checks_left = (3 if check is True else int(check)) if check else 0
        self.max_traces = max_traces
        self.fullgraph = fullgraph
        self.traces = Traces(getattr(self.func, "__name__", "the function"), max_traces, 5)
        self.fast = {}  # (shape, dtype) -> Program without guards, for calls with one array
        # signatures without integer arguments' values -> a trace replayed for any values
        # (compile_ints), and the first trace of such a signature, to compare the next with
        self.int_traces, self.first_int_trace = {}, {}
        self.__name__ = getattr(fn, "__name__", "compiled")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __repr__(self):
        return f"<numbagrad.compile({self.kind}({getattr(self.func, '__name__', '?')}))>"

    # --- calling ------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if not kwargs and len(args) == 1 and type(args[0]) is np.ndarray and \
                not self.checks_left:
            # the optimizer's call, f(x) on one array: straight to the trace's replay
            a = args[0]
            program = self.fast.get((a.shape, a.dtype.str))
            if program is not None:
                out = program.call_array(a)
                if out is not None:  # else its guards failed: the general path below
                    return out
        flat, spec = func_mod._tree_flatten((args, kwargs))
        key = (spec, tuple([_leaf_key(x) for x in flat]))
        if key in self.traces.eager:
            return self.fn(*args, **kwargs)
        ints_key = int_args.shape_key(key)
        program = self.int_traces.get(ints_key) if ints_key is not None else None
        found = None
        if program is not None and program.constants_current():
            out = program.int_args.run(program, flat)  # new labels: the same trace
            found = (program, out) if out is not None else None
        if found is None:
            found = self.traces.replay(key, lambda p: p.run(flat))
        if found is None:
            program = self._trace(key, args, kwargs)
            out = program.run(flat) if program is not None else None
            if out is None:  # not replayable, or its replay disagrees with its own reads
                return self.fn(*args, **kwargs)
            if ints_key is not None:
                self._integer_inputs(ints_key, program, flat)
            found = program, out
        program, out = found
        result = program.results(out, flat)
        if self.checks_left:
            self.checks_left -= 1
            _check_against_eager(self, args, kwargs, result)
        return result

    def _integer_inputs(self, ints_key, program, flat):
        """After a new trace for new integer values: the first trace of these shapes, or one
        that agrees with it for these values (compile_ints), which then serves them all."""
        first = self.first_int_trace.get(ints_key)
        if first is None or first is program or not program.int_args.dynamic:
            self.first_int_trace[ints_key] = program
        elif int_args.same_but_values(first, program, flat):
            self.int_traces[ints_key] = program
            while len(self.int_traces) > self.max_traces:
                del self.int_traces[next(iter(self.int_traces))]
        else:
            self.first_int_trace[ints_key] = program
        while len(self.first_int_trace) > self.max_traces:
            del self.first_int_trace[next(iter(self.first_int_trace))]

    def _trace(self, key, args, kwargs):
        program = Program(self, args, kwargs)
        if not self.traces.add(key, program):
            return None
        kept = self.traces.programs()
        self.fast = {k: p for k, p in self.fast.items() if p in kept}
        if program.single_array and not program.constants and not program.captured and \
                not program.guards and program.aux is None:
            a = args[0]
            self.fast[(a.shape, a.dtype.str)] = program
        return program

    def as_numba(self, *example_args):
        """An @njit function ``f(x, grad_out) -> value`` for one float64 vector argument
        ``x`` (several arguments: their flattened concatenation, in order); it writes the
        gradient into ``grad_out``. With ``example_args``, the trace for their signature;
        without, the only trace made so far."""
        if example_args:
            self(*example_args)
            flat, spec = func_mod._tree_flatten((example_args, {}))
            programs = self.traces.by_key.get((spec, tuple(_leaf_key(x) for x in flat)))
        else:
            programs = self.traces.programs()
        if not programs or len(programs) > 1:
            raise RuntimeError("as_numba(): call the compiled function once first (or pass "
                               "example arguments) so there is one trace to export; there "
                               f"are {len(programs or ())}")
        program = programs[0]
        if program.reads:
            recipe, seen, where, what = program.reads[0]
            raise NotImplementedError(
                f"as_numba(): the trace reads a value computed from its inputs ({what} at "
                f"{where}), which a @njit caller cannot check; compute it with tensor ops "
                "(torch.where instead of if) to export the function")
        return program.as_numba()



def _check_against_eager(compiled, args, kwargs, result):
    """check=True: the replay must reproduce an eager run of the transform."""
    expected = compiled.fn(*args, **kwargs)
    got_flat = func_mod._tree_flatten(result)[0]
    exp_flat = func_mod._tree_flatten(expected)[0]
    for got, exp in zip(got_flat, exp_flat):
        if not isinstance(exp, (Tensor, np.ndarray, np.generic, float, int)):
            continue  # an aux output's Python value: the trace's own, not replayed
        e = np.asarray(exp._data if isinstance(exp, Tensor) else exp)
        tol = 1e-5 if e.dtype == np.float32 else 1e-10
        e = e.astype(np.float64)
        g = np.asarray(got._data if isinstance(got, Tensor) else got, np.float64)
        if g.shape != e.shape or not np.allclose(g, e, rtol=tol, atol=tol, equal_nan=True):
            diff = np.max(np.abs(g - e)) if g.shape == e.shape else "shapes differ"
            raise RuntimeError(
                f"numbagrad.compile(check=True): the replay of "
                f"{getattr(compiled.func, '__name__', 'the function')} differs from an eager "
                f"run (max abs difference {diff}). A trace records one path through the "
                "function: if its Python control flow depends on input values (an `if` on a "
                "tensor, a loop bound read from data), it cannot be replayed; keep that "
                "function eager or move the decision out of it.")


# --- functions of Tensors -----------------------------------------------------------------

BACKWARD_NAME = "CompiledFunctionBackward"  # torch.compile's grad_fn name


class CompiledFunction:
    """``numbagrad.compile(f)`` for a function of Tensors returning Tensors: call it as ``f``.
    One trace per signature (argument shapes, dtypes and static values; ``max_traces`` of
    them, least recently used dropped); ``check=True`` compares the first calls with eager
    ``f``."""

    def __init__(self, fn, check, max_traces, fullgraph=False):
        self.func = fn
        self.checks_left = (3 if check is True else int(check)) if check else 0
        self.max_traces = max_traces
        self.fullgraph = fullgraph
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.traces = Traces(self.__name__, max_traces, 4)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __repr__(self):
        return f"<numbagrad.compile({self.__name__})>"

    def __call__(self, *args, **kwargs):
        flat, spec = func_mod._tree_flatten((args, kwargs))
        key = (spec, tuple(_leaf_key(x) for x in flat), getattr(self.func, "training", None))
        if key in self.traces.eager:
            return self.func(*args, **kwargs)
        found = self.traces.replay(key, lambda p: p.call(flat))
        if found is None:
            program = TensorProgram(self, flat, spec)
            result = program.call(flat) if self.traces.add(key, program) else None
            if result is None:  # not replayable, or its replay disagrees with its own reads
                return self.func(*args, **kwargs)
        else:
            result = found[1]
        if self.checks_left:
            self.checks_left -= 1
            self._check(args, kwargs, result)
        return result

    def _check(self, args, kwargs, result):
        """check=True: the replayed outputs must equal an eager call's."""
        with grad_mode.no_grad():
            expected = self.func(*args, **kwargs)
        got = result if isinstance(result, tuple) else (result,)
        exp = expected if isinstance(expected, (tuple, list)) else (expected,)
        bad = len(got) != len(exp)
        diff = "numbers of outputs differ" if bad else None
        for g, e in zip(got, exp) if not bad else ():
            e = np.asarray(e._data if isinstance(e, Tensor) else e)
            tol = 1e-5 if e.dtype == np.float32 else 1e-10
            g = np.asarray(g._data, np.float64)
            if g.shape != e.shape:
                bad, diff = True, "shapes differ"
            elif not np.allclose(g, e.astype(np.float64), rtol=tol, atol=tol, equal_nan=True):
                bad, diff = True, np.max(np.abs(g - e))
        if bad:
            raise RuntimeError(
                f"numbagrad.compile(check=True): the replay of {self.__name__} differs from an "
                f"eager run (max abs difference {diff}). A trace records one path through the "
                "function: if its Python control flow depends on input values (an `if` on a "
                "tensor, a loop bound read from data), it cannot be replayed; keep that "
                "function eager or move the decision out of it.")


class TensorProgram:
    """One trace of a function of Tensors: the tape's arrays, its input slots and output
    nodes; ``call`` replays the forward and records the backward on the caller's tape."""

    def __init__(self, compiled, flat, spec):
        name = compiled.__name__
        sweep.prefetch(("kernels_needed", "run_forward"))
        tape, traced, out = _record_trace(compiled.func, flat, spec, compiled.fullgraph)
        self.opaque = tape.guards.opaque
        if self.opaque:
            Program._check_tape(tape, compiled)  # an op replay lacks is the error to report
            return  # not replayable: the caller runs the function eagerly
        self.is_tuple = isinstance(out, (tuple, list))
        outs = tuple(out) if self.is_tuple else (out,)
        if not outs or not all(isinstance(o, Tensor) for o in outs):
            kinds = ", ".join(sorted({type(o).__name__ for o in outs})) or "an empty tuple"
            raise NotImplementedError(
                f"numbagrad.compile: {name} returned {kinds}; a compiled function of Tensors "
                "must return a Tensor or a tuple of Tensors (other outputs, nested structures "
                "included, are not supported yet: keep such a function eager)")
        if tape.bridges:
            raise NotImplementedError(_FOREIGN.format(name))
        self.blas = tape.blas  # a convolution, or a product on NumPy's BLAS: pools held
        Program._check_tape(tape, compiled)
        node_of = _take_tape(self, tape, flat, traced)
        _split_guards(self, tape, node_of)
        # what each output is: a node of the trace, or a constant (independent of inputs)
        self.outputs, out_nodes = [], []
        # outputs that are an argument itself (``x.double()`` of a float64 x returns x): the
        # call returns that argument, as eager does, not the trace's value of it
        self.passthrough = {}
        for q, o in enumerate(outs):
            arg = next((k for k, t in enumerate(traced) if t is o), None)
            if arg is not None and _is_dynamic(flat[arg]):
                self.passthrough[q] = arg
                self.outputs.append((None, None, o.dtype))
                continue
            if o._tape is tape:
                node = o._node
            elif o._tape is None:
                node = tape.sources.get(id(o))  # an input (or parameter) returned as is
                if node is not None and not column(self.nodes, "code")[node] == registry.LEAF.code:
                    node = None  # a constant tensor: its value is the output's
            else:
                raise NotImplementedError(_FOREIGN.format(name))
            if node is not None and o._data.dtype.kind != "f":
                raise NotImplementedError(
                    f"numbagrad.compile: {name} returns a {o._data.dtype} tensor computed "
                    "from its inputs; compiled replay computes floating outputs only")
            if node is None:
                self.outputs.append((None, np.array(o._data), o.dtype))
            else:
                self.outputs.append((node, o._data.shape, o.dtype))
                out_nodes.append(node)
        self.out_nodes = np.array(out_nodes, np.int64)
        # inputs no output is computed from get no gradient (None), as eager gives them: one
        # only a guard reads, or one whose only path ends in a cast to integers
        reached = _ancestors(self.nodes, self.args, out_nodes)
        self.read_only = {q for q, n in enumerate(self.slots) if n not in reached}
        # where each output node's values sit in the arena (read at every call)
        voff, size = column(self.nodes, "voff"), column(self.nodes, "size")
        self.out_spans = [(int(voff[node]), int(size[node])) if node is not None else None
                          for node, _, _ in self.outputs]
        self.diff = [k for k, (node, _, _) in enumerate(self.outputs) if node is not None]
        # the input slots' shapes and, for the Tensors among them, where they come from
        self.slot_shapes = [np.shape(flat[k]._data if isinstance(flat[k], Tensor) else flat[k])
                            for k in self.inputs] + [t._data.shape for t in self.captured]
        self.slot_ends = np.cumsum(self.in_len).tolist()
        self.replay = sweep.Replay(self.nodes, self.args, ("run_forward",))
        # nodes eager differentiates in float32: the backward hands them to its kernels
        transposes = {int(t): int(src) for t, src in tape.transposes.items()}
        self.steps = _eager_steps(
            self, tape, [(node, dtype.np) for node, _, dtype in self.outputs if node is not None],
            transposes, eager_nodes.eager_big(self, transposes)) if out_nodes else {}
        self.sweep_nodes = eager_nodes.sweep_nodes(self.nodes, self.steps)

    def constants_current(self):
        return all(vc[0] == v for vc, v in self.constants)

    def call(self, flat):
        slot_tensors = [flat[k] if isinstance(flat[k], Tensor) else None
                        for k in self.inputs] + list(self.captured)
        parts = [np.asarray(flat[k]._data if isinstance(flat[k], Tensor) else flat[k],
                            np.float64).reshape(-1) for k in self.inputs]
        parts += [np.asarray(t._data, np.float64).reshape(-1) for t in self.captured]
        if self.input_guards and trace_guards.failing(
                self.input_guards, lambda n: parts[self.slot_of[n]]):
            return None
        x = parts[0] if len(parts) == 1 else (np.concatenate(parts) if parts else
                                                np.zeros(0))
        r = self.replay
        with _blas.one_thread(self.blas):
            val = sweep.run_forward(r.tables, r.arity, self.nodes, self.args, self.shapes,
                                    self.iat, self.fat, self.base, self.in_off, self.in_len, x)
        if self.guards and not Program._guards_hold(self, val):
            return None
        values = []
        for q, (node, shape, dtype) in enumerate(self.outputs):
            if q in self.passthrough:
                values.append(None)  # the argument itself, below
            elif node is None:
                values.append(shape.copy())  # a constant output (shape holds its value)
            else:
                o, n = self.out_spans[q]
                values.append(val[o:o + n].reshape(shape).astype(dtype.np))
        fresh = [_tensor(v) if v is not None else None for v in values]
        for q, k in self.passthrough.items():
            fresh[q] = flat[k] if isinstance(flat[k], Tensor) else _tensor(np.asarray(flat[k]))
        needs = [q for q, t in enumerate(slot_tensors) if t is not None and t._requires_grad
                 and q not in self.read_only]
        if grad_mode.state.enabled and needs and self.diff:
            self._record(val, values, fresh, slot_tensors, needs)
        return tuple(fresh) if self.is_tuple else fresh[0]

    def _record(self, val, values, fresh, slot_tensors, needs):
        """One node on the caller's tape for this call, its backward the trace's sweep."""
        packed = len(self.diff) > 1
        if packed:
            dt = np.result_type(*[values[k].dtype for k in self.diff])
            value = np.concatenate([values[k].astype(dt).reshape(-1) for k in self.diff])
        else:
            value = values[self.diff[0]]
        node_t = record(registry.PY_FUNCTION, value, [slot_tensors[q] for q in needs])
        tape, node = node_t._tape, node_t._node
        tape.blas = tape.blas or self.blas  # this call's backward runs in that tape's sweep
        call = _CompiledCall(self, val, needs, [slot_tensors[q]._data.dtype for q in needs])
        tape.functions[node] = call
        tape.names[node] = BACKWARD_NAME
        tape.set_flag(node, FLAG_HOOK)  # the sweep hands it to us
        if not packed:
            fresh[self.diff[0]] = node_t
            return
        offset = 0
        for k in self.diff:
            shape, dtype = self.outputs[k][1], self.outputs[k][2]
            size = int(np.prod(shape, dtype=np.int64))
            t = to_dtype(gather_flat(node_t, np.arange(offset, offset + size), shape), dtype)
            t._tape.names[t._node] = BACKWARD_NAME
            fresh[k] = t
            offset += size


_FOREIGN = ("numbagrad.compile: {} combines its inputs with a tensor that belongs to another "
            "autograd graph (a non-leaf tensor closed over); compiled replay reads only its "
            "arguments and leaf parameters: pass that tensor as an argument")


class _CompiledCall:
    """One call's graph node: its arena (the forward's values, saved for the backward) and
    which input slots need gradients. It is its own ``ctx`` for the engine (``_freed``)."""

    __slots__ = ("program", "val", "needs", "dtypes")
    name = BACKWARD_NAME

    def __init__(self, program, val, needs, dtypes):
        self.program, self.val, self.needs, self.dtypes = program, val, needs, dtypes

    @property
    def ctx(self):
        return self

    @property
    def _freed(self):
        return self.val is None

    @_freed.setter
    def _freed(self, freed):
        if freed:
            self.val = None  # the saved arena goes with the graph, as torch's saved tensors

    def backward(self, g, shapes):
        """The gradients of the node's inputs (Tensors) for output gradient ``g``."""
        if grad_mode.state.enabled:
            raise NotImplementedError(
                "numbagrad.compile: create_graph=True through a compiled function is not "
                "supported (its backward is a compiled sweep, not recorded ops); call the "
                "function without compile to take higher derivatives")
        if self.val is None:
            raise RuntimeError(FREED_MSG)
        p = self.program
        seed = np.ascontiguousarray(g._data, np.float64).reshape(-1)
        if p.steps:
            grads = eager_nodes.run_backward(p, self.val, seed)
        else:
            r = p.replay
            grads = sweep.run_backward(r.tables, r.arity, p.nodes, p.args, p.shapes,
                                       p.iat, p.fat, self.val, p.out_nodes, seed, p.in_off,
                                       p.in_len)
        out = []
        for q, dtype in zip(self.needs, self.dtypes):
            start = p.slot_ends[q] - p.in_len[q]
            gq = grads[start:p.slot_ends[q]].reshape(p.slot_shapes[q])
            out.append(_tensor(gq.astype(dtype, copy=dtype != np.float64)))
        return out
