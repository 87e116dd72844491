"""A float32 plan (float32_nodes) as the source of one straight-line Python function.

Which adjoint arrays exist before each backward step, their dtypes, and which gradients
are stored straight into the returned buffer depend on the plan alone: ``float32_nodes.run``
decides them again at every call, as eager's engine does, and that interpretation cost
more than the kernels it calls on an MLP. Here they are decided once, at build, and each
node becomes a line or two calling what ``run`` would call, on the same arrays, so the
results are ``run``'s to the bit. A plan with a step this does not cover (a variadic op, an
input read twice, an adjoint converted between dtypes) keeps ``run``.
"""

import numpy as np

from ..engine import formula
from ..engine.pysource import Source
from ..engine.registry import Unwritten
from ..ops.elementwise import forward
from .eager_nodes import IN_PLACE, SINK, STORE, Step

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def build(plan):
    """``run(parts, grads, with_grad) -> (value, grads)`` for ``plan`` (``grads``: the
    returned buffer), or None when a step is not one this covers (module doc)."""
    src = Source(np=np, _F32=_F32, _F64=_F64, _Unwritten=Unwritten,
                 _eager_forward=forward.eager_forward, _NO_INTS=np.empty(0, np.int64))
    for node, q, shape in plan.slots:
        src.add(f"v{node} = np.asarray(parts[{q}], _F32).reshape({shape!r})")
    for node, c in plan.constants.items():
        src.add(f"v{node} = {src.bind(f'c{node}', c)}")
    for f in plan.forward:
        _forward(src, f)
    src.add(f"value = v{plan.out_node}.reshape(-1)[0]", "if not with_grad:",
            f"    return value, np.zeros({plan.grad_total}, _F32)",
            f"a{plan.out_node} = np.ones(1, {src.bind('out_dtype', plan.out_dtype)})")
    made = {plan.out_node: np.dtype(plan.out_dtype)}  # adjoints made so far -> dtype
    placed = set()  # gradients stored in place in ``grads``
    writers = {}  # node -> how many steps write its adjoint
    for s in plan.order:
        for node in [t.node for t in s.targets] if isinstance(s, Step) else [s.src]:
            writers[node] = writers.get(node, 0) + 1
    for s in plan.order:
        if not (_step(src, s, made, placed, plan.slot_of, writers) if isinstance(s, Step)
                else _view_backward(src, s, made)):
            return None
    for node, pos, n in plan.grads:
        if node not in made:
            src.add(f"grads[{pos}:{pos + n}] = 0.0")
        elif node not in placed:
            src.add(f"grads[{pos}:{pos + n}] = a{node}")
    src.add("return value, grads")
    return src.function("run(parts, grads, with_grad)", "<numbagrad float32 plan>")


def _forward(src, f):
    """Node ``f``'s value, as float32_nodes._value computes it."""
    i = f.i
    fn = src.bind(f"f{i}", f)
    xs = ", ".join(f"v{a}" for a in f.argn)
    if f.view is not None:
        src.add(f"v{i} = {fn}.view.of(np.ascontiguousarray(v{f.argn[0]}).reshape(-1))")
    elif f.op.value is not None:
        src.add(f"v{i} = {fn}.op.value([{xs}], {fn}.ia, {fn}.fa)")
    elif f.kernel is None and f.op.fwd is not None and f.op.arity in (1, 2) and \
            not formula.uses(f.op.fwd, "m") and len(f.shape) and \
            all(len(sh) for sh in f.sh_args):
        # eager_forward's kernel on arrays (NumPy's loop for an op that rounds once: the
        # same bits), without its checks: float32 operands of one or more dims, no mask
        kernel = src.bind(f"k{i}", forward.eager_kernel(f.op))
        flat = ", ".join(f"np.ascontiguousarray(v{a}).reshape(-1)" for a in f.argn)
        # (a unary kernel reads no shapes)
        shapes = f"{fn}.sh, {fn}.sh_args[0], {fn}.sh_args[1]" if f.op.arity == 2 else \
            "_NO_INTS, _NO_INTS"
        src.add(f"y = np.empty({f.size}, _F32)",
                f"{kernel}(y, {flat}, {shapes}, _NO_INTS, {fn}.fa)",
                f"v{i} = y.reshape({fn}.shape)")
    elif f.kernel is None:
        src.add(f"v{i} = np.asarray(_eager_forward({fn}.op, {xs}, *{fn}.fa.tolist()), "
                f"_F32).reshape({fn}.shape)")
    else:
        dt = "_F32" if f.own_f32 else "_F64"
        flat = ", ".join(f"np.ascontiguousarray(v{a}, {dt}).reshape(-1)" for a in f.argn)
        sh_args = "".join(f", {fn}.sh_args[{k}]" for k in range(len(f.argn)))
        src.add(f"y = np.empty({f.size}, {dt})",
                f"{fn}.kernel(y, {flat}, {fn}.sh{sh_args}, {fn}.ia, {fn}.fa)",
                f"v{i} = y.reshape({fn}.shape)" if f.own_f32 else
                f"v{i} = y.astype(_F32).reshape({fn}.shape)")


def _view_backward(src, v, made):
    """float32_nodes.View.run: the view's gradient added into its operand's float64 adjoint."""
    if v.node not in made:
        return False
    fn = src.bind(f"view{v.node}", v)
    if v.src not in made:
        src.add(f"a{v.src} = np.zeros({v.size_of_src}, _F64)")
        made[v.src] = _F64
    src.add(f"t = {fn}.of(a{v.src}, writeable=True)",
            f"t += a{v.node}.reshape({fn}.shape)")
    return True


def _fresh(t, zero, slot_of, placed):
    """Source of target ``t``'s new adjoint array, as float32_nodes.run's ``fresh``."""
    where = slot_of.get(t.node)
    if where is not None and t.dtype == _F32:
        placed.add(t.node)
        buf = f"grads[{where[0]}:{where[0] + where[1]}]"
        return [f"a{t.node} = {buf}"] + ([f"a{t.node}[:] = 0.0"] if zero else [])
    make = "zeros" if zero else "empty"
    return [f"a{t.node} = np.{make}({t.size}, {_dtype_name(t.dtype)})"]


def _dtype_name(dt):
    return "_F32" if dt == _F32 else "_F64"


def _step(src, s, made, placed, slot_of, writers):
    """Step ``s`` as eager_nodes.differentiate runs it with float32_nodes.run's ``fresh``;
    False when it is not a case covered here."""
    if s.op.arity == -1 or s.node not in made or \
            len({t.node for t in s.targets}) != len(s.targets):
        return False
    dt, i = s.dt, s.node
    fn = src.bind(f"s{i}", s)
    lines = [f"g = a{i}" if made[i] == dt else f"g = a{i}.astype({_dtype_name(dt)})"]
    grads = ["None"] * len(s.argn)
    after = []
    needs = [f"{fn}.need_args[{k}]" for k in range(len(s.argn))]
    # eager's stores and passes (big_nodes._BigNode): an elementwise kernel's first
    # gradient for a full-size input is stored (need 2), or is the node's own, handed on
    storable = s.kernel is not None and s.op.takes_int_needs()
    # the node's adjoint goes to one input at most, and not when converted (a copy: eager
    # hands on none then)
    may_hand = made[i] == dt
    for t in s.targets:
        have = made.get(t.node)
        gx = f"a{t.node}"
        if storable and t.mode == IN_PLACE and have is None and not t.flip and \
                t.size == s.size:
            if s.op.passes_gradient(t.k) and may_hand:
                lines.append(f"a{t.node} = g")
                needs[t.k], may_hand = "0", False
                made[t.node] = dt
                continue
            lines += _fresh(t, False, slot_of, placed)
            needs[t.k] = "2"
        elif t.mode == STORE:
            if have is not None:
                return False
            lines += _fresh(t, False, slot_of, placed)
            if s.kernel is None:
                gx = f"a{t.node}.view(_Unwritten)"
        elif t.mode == SINK and have is None and writers[t.node] == 1 and dt == _F32 and \
                t.dtype == _F64 and t.node in slot_of:
            # a returned gradient with no other term: its float64 adjoint would hold the
            # float32 sum exactly and give it back unchanged; summed in its place instead
            pos, n = slot_of[t.node]
            gx = f"tmp{t.k}"
            lines += [f"{gx} = grads[{pos}:{pos + n}]", f"{gx}[:] = 0.0"]
            placed.add(t.node)
            made[t.node] = _F32
        elif t.mode == SINK:
            if have is None:
                lines += _fresh(t, True, slot_of, placed)
            gx = f"tmp{t.k}"
            lines.append(f"{gx} = np.zeros({t.size}, {_dtype_name(dt)})")
            after.append(f"a{t.node} += {gx}" if t.dtype == _F64 else
                         f"a{t.node}[:] = (a{t.node} + {gx}).astype(_F32)")
        elif have is None:
            lines += _fresh(t, True, slot_of, placed)
        elif have != dt:
            return False
        made.setdefault(t.node, t.dtype)
        if t.flip:
            gx = f"{gx}.reshape({t.shape!r}).T"
        grads[t.k] = gx
    if s.kernel is None:  # the op's NumPy derivative
        xs = [f"v{a}.reshape({sh!r})" + ("" if d == _F32 else f".astype({_dtype_name(d)})")
              if r else "None"
              for a, sh, d, r in zip(s.argn, s.arg_shapes, s.arg_dtypes, s.read_x)]
        gxs = ["None" if gx == "None" else f"{gx}.reshape({sh!r})"
               for gx, sh in zip(grads, s.arg_shapes)]
        lines.append(f"{fn}.op.numpy_bw(g.reshape({s.shape!r}), [{', '.join(xs)}], "
                     f"[{', '.join(gxs)}], {fn}.ia, {fn}.fa)")
    else:
        empty = src.bind(f"e{_dtype_name(dt)}", np.empty(0, dt))
        conv = "" if dt == _F32 else f".astype({_dtype_name(dt)})"
        y = f"v{i}.reshape(-1){conv}" if s.read_y else empty
        xs = [f"v{a}.reshape(-1){conv}" if r else empty for a, r in zip(s.argn, s.read_x)]
        gxs = [empty if gx == "None" else gx for gx in grads]
        tail = [f"{fn}.sh"] + [f"{fn}.sh_args[{k}]" for k in range(len(s.argn))] + needs
        lines.append(f"{fn}.kernel(g, {y}, {', '.join(xs + gxs + tail)}, {fn}.ia, {fn}.fa)")
    src.add(*lines, *after)
    return True
