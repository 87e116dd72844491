"""torch.autograd.profiler: per-op CPU timings of numbagrad code.

While a ``profile`` is active, the public op functions and Tensor methods are replaced by
timing wrappers, and put back when the last profile stops. Each call of one records an event
named as torch names the aten op (``aten::mm``, ``aten::add``; ``aten::<name>`` for
numbagrad's own names), with its start and end (time.perf_counter_ns), its input shapes when
``record_shapes``, and the event it ran inside: the ops an op calls, and the ops inside a
``record_function`` range, are its children, so self time is total time less the children's,
as torch computes it. ``backward()`` and ``autograd.grad`` are one event each,
``numbagrad::backward`` and ``numbagrad::grad`` (the whole tape sweep, not torch's per-node
``autograd::engine::evaluate_function`` events). An optimizer's ``step`` and ``zero_grad``
are ranges named as torch's (``Optimizer.step#SGD.step``).

Why wrappers rather than numbagrad/engine/record.py's ``record()``, which every op's result
passes through: record() sees an op only at its end, so the op's start would have to be the
previous op's end, charging the caller's Python between two ops to the second op; and its
one hook slot (``forward_hook``) belongs to forward AD, whose being set also turns off the
scalar-graph fast paths. Wrappers swapped in only while profiling cost the eager path
nothing when no profile is active: not even a check.

What is wrapped: Tensor's op methods and operators, and the public functions of numbagrad,
numbagrad.nn.functional, numbagrad.linalg and numbagrad.special, both where those namespaces
hold them and in the module defining them (so that ``_conv.conv2d`` inside nn.Conv2d is
timed too), and the ones nn layer classes hold (nn.ReLU's closure, nn.MaxPool1d's
staticmethod). A call reached through a name imported directly into another module (``from x
import f``) is not seen: its time counts as its caller's self time.
"""

import functools
import itertools
import sys
import threading
import time
import types

from ..tensor import Tensor
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]

# torch's aten names of Tensor's operators
_DUNDER_OPS = {
    "__abs__": "abs", "__add__": "add", "__radd__": "add", "__iadd__": "add_",
    "__sub__": "sub", "__rsub__": "rsub", "__isub__": "sub_", "__mul__": "mul",
    "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div", "__rtruediv__": "div",
    "__itruediv__": "div_", "__floordiv__": "floor_divide", "__mod__": "remainder",
    "__pow__": "pow", "__rpow__": "pow", "__matmul__": "matmul", "__rmatmul__": "matmul",
    "__neg__": "neg", "__pos__": "positive", "__invert__": "bitwise_not",
    "__and__": "bitwise_and", "__rand__": "bitwise_and", "__or__": "bitwise_or",
    "__ror__": "bitwise_or", "__xor__": "bitwise_xor", "__rxor__": "bitwise_xor",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
    "__ge__": "ge", "__getitem__": "index", "__setitem__": "index_put_",
}
# public callables that are no op: metadata, conversions out, hooks, settings, files
_NOT_OPS = frozenset({
    "cpu", "cuda", "data_ptr", "dim", "element_size", "ndimension", "nelement", "numel",
    "numpy", "register_hook", "register_post_accumulate_grad_hook", "requires_grad_",
    "retain_grad", "size", "storage_offset", "stride", "tolist", "type", "pin_memory",
    "share_memory_", "apply_", "result_type", "manual_seed", "seed", "initial_seed", "load",
    "save", "compile", "set_blas_threads", "typename", "can_cast", "promote_types",
})
_NOT_OP_PREFIXES = ("is_", "set_", "get_", "use_", "are_")
# where torch's aten name differs from the Python function's
_ATEN = {"cross_entropy": "cross_entropy_loss"}
# (namespace module, prefix of its functions' event names); looked up in sys.modules when a
# profile starts (importing numbagrad here would be a cycle: numbagrad imports autograd)
_NAMESPACES = (("numbagrad", "aten::"), ("numbagrad.nn.functional", "aten::"),
               ("numbagrad.linalg", "aten::linalg_"), ("numbagrad.special", "aten::special_"))
_AUTOGRAD = (("numbagrad.autograd", "backward", "numbagrad::backward"),
             ("numbagrad.autograd", "grad", "numbagrad::grad"),
             ("numbagrad.autograd.api", "backward", "numbagrad::backward"),
             ("numbagrad.autograd.api", "grad", "numbagrad::grad"))

_sessions = []  # the active profiles, in start order: every event goes to each
_record_shapes = False  # whether any active profile records input shapes
_lock = threading.Lock()
_local = threading.local()  # .stack: this thread's open events, innermost last
_ids = itertools.count()
_patched = []  # (owner, attribute, original) put back when the last profile stops
_hooks = []  # the optimizer step hooks' handles, removed then
_originals = {}  # id(wrapper) -> (wrapper, function) while patched


def _stack():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _shape(a):
    return list(a.shape) if isinstance(a, Tensor) else []


def _open(name, args=(), kwargs=None, annotation=False):
    """Start an event ``name`` inside this thread's innermost open one."""
    shapes = []
    if _record_shapes and not annotation:
        shapes = [_shape(a) for a in args]
        if kwargs:
            shapes += [_shape(a) for a in kwargs.values()]
    stack = _stack()
    while stack and stack[-1].time_range.end is not None:
        stack.pop()  # left open by an exception and closed by stop(): no parent now
    ev = FunctionEvent(next(_ids), name, threading.get_ident(), 0.0, None, shapes,
                       annotation)
    if stack:
        ev.cpu_parent = stack[-1]
        stack[-1].cpu_children.append(ev)
    stack.append(ev)
    for session in _sessions:
        session._events.append(ev)
    ev.time_range.start = time.perf_counter_ns() / 1e3  # last: the bookkeeping is not timed
    return ev


def _close(ev):
    """End ``ev`` now and leave it."""
    end = time.perf_counter_ns() / 1e3
    if ev.time_range.end is None:
        ev.time_range.end = end
    stack = _stack()
    if ev in stack:
        del stack[stack.index(ev):]


def _timed(fn, name, annotation=False):
    """``fn`` recording an event ``name`` per call while a profile is active; a name
    ``"Optimizer.zero_grad"`` is completed as torch's, ``Optimizer.zero_grad#SGD.zero_grad``,
    after the instance's class."""
    @functools.wraps(fn)
    def profiled(*args, **kwargs):
        if not _sessions:
            return fn(*args, **kwargs)
        event = _optimizer_range(args[0], "zero_grad") if annotation else name
        stack = getattr(_local, "stack", None)
        # an alias forwarding to its op (F.relu to relu, x.relu() to relu) is one event
        if stack and stack[-1].name == event:
            return fn(*args, **kwargs)
        ev = _open(event, args, kwargs, annotation)
        try:
            return fn(*args, **kwargs)
        finally:
            _close(ev)
    return profiled


def _optimizer_range(optimizer, method):
    return f"Optimizer.{method}#{type(optimizer).__name__}.{method}"


def _step_begins(optimizer, args, kwargs):
    """A global optimizer step pre-hook: open the step's range (torch's name for it)."""
    if _sessions:
        _open(_optimizer_range(optimizer, "step"), annotation=True)


def _step_ends(optimizer, args, kwargs):
    """The matching post-hook: close the range (a step that raised leaves it to stop())."""
    name = _optimizer_range(optimizer, "step")
    for ev in reversed(_stack()):
        if ev.name == name:
            _close(ev)
            return


def _is_op(name, fn):
    return type(fn) is types.FunctionType and not name.startswith("_") and \
        fn.__module__.startswith("numbagrad") and name not in _NOT_OPS and \
        not name.startswith(_NOT_OP_PREFIXES)


def _ops():
    """{id(function): (function, event name)} of every op to time, named where found first."""
    ops = {}
    for name, fn in vars(Tensor).items():
        if type(fn) is not types.FunctionType:
            continue
        if name in _DUNDER_OPS:
            ops.setdefault(id(fn), (fn, "aten::" + _DUNDER_OPS[name]))
        elif name == "backward":
            ops.setdefault(id(fn), (fn, "numbagrad::backward"))
        elif _is_op(name, fn):
            ops.setdefault(id(fn), (fn, "aten::" + _ATEN.get(name, name)))
    for module_name, prefix in _NAMESPACES:
        module = sys.modules.get(module_name)
        public = getattr(module, "__all__", None)  # (helpers it imports are not its ops)
        for name, fn in vars(module).items() if module is not None else ():
            if _is_op(name, fn) and (public is None or name in public):
                ops.setdefault(id(fn), (fn, prefix + _ATEN.get(name, name)))
    for module_name, name, event in _AUTOGRAD:
        fn = getattr(sys.modules.get(module_name), name, None)
        if type(fn) is types.FunctionType:
            ops.setdefault(id(fn), (fn, event))
    return ops


def _sites(ops):
    """(owner, attribute, value) of every place holding an op that a call looks up at call
    time: Tensor's attributes; the namespaces' and the defining modules' globals, private
    aliases too (F.linear's ``_addmm``); nn layer classes' attributes and the closure cells of
    their methods (nn.ReLU's forward calls the ``fn`` it was made with)."""
    names = [n for n, _ in _NAMESPACES] + [n for n, _, _ in _AUTOGRAD]
    modules = {sys.modules.get(n) for n in names} - {None}
    modules |= {sys.modules.get(fn.__module__) for fn, _ in ops.values()} - {None}
    owners = [Tensor, *modules]
    nn = sys.modules.get("numbagrad.nn")
    if nn is not None:
        owners += [c for c in vars(nn).values() if isinstance(c, type)]
    for owner in owners:
        for name, value in list(vars(owner).items()):
            fn = value.__func__ if isinstance(value, staticmethod) else value
            if id(fn) in ops and ops[id(fn)][0] is fn:
                yield owner, name, value
            elif isinstance(owner, type) and type(fn) is types.FunctionType and fn.__closure__:
                for cell in fn.__closure__:
                    try:
                        inner = cell.cell_contents
                    except ValueError:  # an empty cell
                        continue
                    if id(inner) in ops and ops[id(inner)][0] is inner:
                        yield cell, "cell_contents", inner


def _patch():
    ops = _ops()
    wrappers = {}  # id(function) -> its one wrapper
    done = set()
    for owner, name, value in _sites(ops):
        if (id(owner), name) in done:
            continue
        done.add((id(owner), name))
        fn = value.__func__ if isinstance(value, staticmethod) else value
        wrapper = wrappers.get(id(fn))
        if wrapper is None:
            wrapper = wrappers[id(fn)] = _timed(fn, ops[id(fn)][1])
            _originals[id(wrapper)] = (wrapper, fn)
        _patched.append((owner, name, value))
        setattr(owner, name, staticmethod(wrapper) if isinstance(value, staticmethod)
                else wrapper)
    # an optimizer's step goes through its class's step hooks: Optimizer rewrites a class's
    # step when first instantiated, so a wrapper set on the class could outlive the profile
    optimizer = sys.modules.get("numbagrad.optim.optimizer")
    if optimizer is not None:
        _hooks.append(optimizer.register_optimizer_step_pre_hook(_step_begins))
        _hooks.append(optimizer.register_optimizer_step_post_hook(_step_ends))
        zero_grad = optimizer.Optimizer.zero_grad
        _patched.append((optimizer.Optimizer, "zero_grad", zero_grad))
        optimizer.Optimizer.zero_grad = _timed(zero_grad, "Optimizer.zero_grad", True)


def _unpatch():
    while _hooks:
        _hooks.pop().remove()
    while _patched:
        owner, name, value = _patched.pop()
        setattr(owner, name, value)
    # a module imported while profiling (numbagrad.distributions loads lazily, a user's
    # ``from numbagrad import relu``) took wrappers into its globals: give it the originals
    for module in list(sys.modules.values()):
        space = getattr(module, "__dict__", None)
        for name, value in list(space.items()) if type(space) is dict else ():
            if type(value) is types.FunctionType and id(value) in _originals and \
                    _originals[id(value)][0] is value:
                space[name] = _originals[id(value)][1]
    _originals.clear()


def _start(session):
    global _record_shapes
    with _lock:
        if not _sessions:
            _patch()
        _sessions.append(session)
        _record_shapes = any(s.record_shapes for s in _sessions)


def _stop(session):
    global _record_shapes
    with _lock:
        _sessions.remove(session)
        _record_shapes = any(s.record_shapes for s in _sessions)
        if not _sessions:
            _unpatch()
    end = time.perf_counter_ns() / 1e3
    for ev in session._events:  # still open (a range left by an exception elsewhere)
        if ev.time_range.end is None:
            ev.time_range.end = end


class profile:  # noqa: N801 - torch's name
    """Context manager recording the CPU time of every numbagrad op run inside it.

    Same as ``torch.autograd.profiler.profile`` (CPU only: ``use_cuda``, ``profile_memory``,
    ``with_flops``, ``with_stack`` and ``with_modules`` are accepted and record nothing).
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.use_device = None
        self.function_events = None
        self.entered = False
        self._events = []

    def __enter__(self):
        if not self.enabled:
            return None  # torch's: ``with profile(enabled=False) as p`` binds None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._events = []
        _start(self)
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        _stop(self)
        self.function_events = EventList(self._events)
        self.entered = False
        return False

    def _finished(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def events(self):
        """The recorded events (FunctionEvent), in start order."""
        return self._finished()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events summed by name (and input shapes when ``group_by_input_shape``)."""
        return self._finished().key_averages(group_by_input_shape)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """torch's table of the recorded events (one row per event, not averaged)."""
        return self._finished().table(sort_by, row_limit, max_src_column_width,
                                      max_name_column_width, max_shapes_column_width,
                                      header, top_level_events_only)

    def total_average(self):
        """All recorded events summed into one average."""
        return self._finished().total_average()

    @property
    def self_cpu_time_total(self):
        """The sum of all events' self CPU times, in microseconds."""
        return self._finished().self_cpu_time_total

    def export_chrome_trace(self, path):
        """Write the recorded events as a Chrome trace JSON file."""
        return self._finished().export_chrome_trace(path)

    def __str__(self):
        return self.key_averages().table() if self.function_events is not None else \
            "<unfinished numbagrad.autograd.profiler.profile>"


class record_function:  # noqa: N801 - torch's name
    """Context manager (or decorator) marking a named range: while a profile is active it is
    one event, and the ops run inside it are its children.

    Same as ``torch.autograd.profiler.record_function``.
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._event = None

    def __enter__(self):
        if _sessions:
            self._event = _open(self.name, annotation=True)
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            _close(self._event)
            self._event = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def in_range(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return in_range
