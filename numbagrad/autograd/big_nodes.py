"""What the backward of a big node needs that depends on its graph alone: the op's plan for
the inputs that need a gradient, the compute dtype, where each input's gradient goes
(F.linear's transposed weight in the weight's own layout), worked out once per graph shape
and remembered across the steps of a training loop. Eager's engine and the compiled replay's
handed-back nodes (compiler/eager_nodes.py) both follow it."""

import numpy as np

from ..core.tape import (
    F_BIG,
    F_CODE,
    F_FAT,
    F_FLAGS,
    F_IAT,
    F_NFAT,
    F_NIAT,
    F_SIZE,
    F_VOFF,
    FLAG_NEEDS_GRAD,
    NODE_FIELDS,
)
from ..engine import kernel_tables, kernelgen, registry

_F64 = np.dtype(np.float64)
_EMPTIES = {}  # dtype -> an empty array: the kernels' stand-in for what they do not read
_PLANS = {}  # (op code, which inputs need a gradient, parallel) -> _node_plan's answer
# elements from which a big node's elementwise derivative runs on Numba's threads: below,
# the parallel kernel's launch costs more than it saves, even on idle cores (bench_eager)
PARALLEL_MIN = 1 << 16


def compute_dtype(dts):
    """A big node's one compute dtype (Numba's np.dot will not mix float32 and float64):
    that of its big arrays (itself and its big inputs, their dtypes the set ``dts``) if
    they share one, else their floating result; float64 for non-float ones alone. The
    compiled replay follows the same rule (eager_nodes)."""
    if len(dts) == 1:
        (dt,) = dts
        return dt if dt.kind == "f" else _F64
    return np.result_type(*[d for d in dts if d.kind == "f"] or [np.float64])


def _node_plan(code, needs, size):
    """(op, reads y, reads x_k for each input, kernel or None for the op's NumPy derivative,
    reads any saved value) of a big node of op ``code`` and ``size`` elements whose inputs
    need a gradient as ``needs`` says: the derivatives of the inputs needing one decide
    which saved values are read. An elementwise kernel is the parallel one from
    PARALLEL_MIN elements on; eager and the compiled replay choose alike."""
    parallel = size >= PARALLEL_MIN
    plan = _PLANS.get((code, needs, parallel))
    if plan is None:
        op = registry.OPS[code]
        reads = set()
        for k, need in enumerate(needs):
            if need:
                reads.update(op.reads(k))
        if op.numpy_bw is not None and op.arity != -1:
            kernel = None
        else:
            kernel = kernel_tables.njit_kernel(
                op, kernelgen.kernel_name(op, parallel and op.arity != -1))
        plan = _PLANS[(code, needs, parallel)] = (op, "y" in reads,
                                        tuple(f"x{k}" in reads for k in range(len(needs))),
                                        kernel, bool(reads))
    return plan


def layout_route(any_layout, k, a, transposes, is_big):
    """Where input ``k`` (node ``a``) of a big node sends its gradient when the op's
    derivative fills that input's target in any layout (``any_layout``: the op's
    ``numpy_bw_any_layout``, e.g. linalg._add_product's products), as ``(src, may_store)``:
    ``src``, the input of the t() node ``a`` is (F.linear's weight: Tape.transposes), whose
    own gradient the product then fills transposed, in the weight's layout; ``may_store``,
    ``a`` is big and its first gradient may be stored into an unwritten array rather than
    added into a zeroed one. ``(None, False)``: the usual adjoint. Eager (``_BigNode``)
    and the compiled replay's plan of eager's nodes (eager_nodes._target) both follow it."""
    if k not in any_layout:
        return None, False
    src = transposes.get(a)
    if src is not None and is_big(src):
        return src, False
    return None, is_big(a)


class _BigNode:
    """What the backward of big node ``i`` needs that depends on the graph alone (its op,
    kernel, compute dtype, shapes, attribute spans, and each input's gradient-target kind):
    worked out once per graph shape (``_statics_for``) rather than at every backward, since
    this Python is a training step's overhead (an MLP's backward is a handful of these)."""

    __slots__ = ("op", "kernel", "argn", "needs", "read_y", "read_x", "reads", "checked",
                 "dt", "shape", "arg_shapes", "sh", "sh_args", "io", "io_end", "fo", "fo_end",
                 "inputs", "empty", "passes", "stores", "int_needs")

    def __init__(self, run, i):
        tape = run.tape
        tn = tape.nodes
        base = i * NODE_FIELDS
        self.argn = argn = tape.arg_nodes(i)
        self.needs = needs = tuple(bool(tn[a * NODE_FIELDS + F_FLAGS] & FLAG_NEEDS_GRAD)
                                   for a in argn)
        op, read_y, read_x, kernel, self.reads = _node_plan(tn[base + F_CODE], needs,
                                                            tn[base + F_SIZE])
        self.op, self.read_y, self.read_x, self.kernel = op, read_y, read_x, kernel
        self.checked = ([i] if read_y else []) + [a for a, r in zip(argn, read_x) if r]
        # One compute dtype per call: Numba's np.dot will not mix float32 and float64.
        big_val = tape.big_val
        dts = {big_val[tn[a * NODE_FIELDS + F_BIG]].dtype for a in (i, *argn)
               if tn[a * NODE_FIELDS + F_BIG] >= 0}
        self.dt = dt = compute_dtype(dts)
        self.empty = _EMPTIES.get(dt)
        if self.empty is None:
            self.empty = _EMPTIES[dt] = np.empty(0, dt)
        self.shape = tape.shape_of(i)
        self.arg_shapes = [tape.shape_of(a) for a in argn]
        self.sh = np.array(self.shape, np.int64)
        self.sh_args = [np.array(sh, np.int64) for sh in self.arg_shapes]
        self.io, self.fo = tn[base + F_IAT], tn[base + F_FAT]
        self.io_end, self.fo_end = self.io + tn[base + F_NIAT], self.fo + tn[base + F_NFAT]
        # not in anomaly mode: there every node is visited, the t() ones included
        any_layout = op.numpy_bw_any_layout if not tape.sites or i not in tape.sites else ()
        inputs = []
        for k, (a, need) in enumerate(zip(argn, needs)):
            if not need:
                inputs.append((k, a, -1, False, None))
                continue
            t, may_store = layout_route(any_layout, k, a, tape.transposes,
                                        lambda n: tn[n * NODE_FIELDS + F_VOFF] < 0)
            src = None if t is None else (t, tape.shape_of(t), tn[t * NODE_FIELDS + F_SIZE])
            inputs.append((k, a, tn[a * NODE_FIELDS + F_SIZE], may_store, src))
        self.inputs = inputs
        # Inputs of an elementwise kernel whose gradient covers them element for element
        # (their size is the node's; the other operand's may be broadcast, a bias: the
        # kernels store in every case): a first gradient is stored into an unwritten buffer
        # (need 2) rather than added into a zeroed one.
        # Of those, ``passes``: a gradient that is the node's own (add's, sub's first), which
        # they take as it is, buffer and all, as torch's engine hands a gradient on.
        # (An arena node's adjoint is in the arena: never one of them.)
        size = tn[base + F_SIZE]
        self.int_needs = kernel is not None and op.takes_int_needs()
        self.stores = () if not self.int_needs else tuple(
                k for k, a, size_a, may_store, src in inputs
                if size_a == size and src is None and not may_store and argn.count(a) == 1
                and tn[a * NODE_FIELDS + F_VOFF] < 0)
        self.passes = tuple(k for k in self.stores if op.passes_gradient(k))


# graph signature -> {node: _BigNode}: a training loop records the same graph every step
_STATICS = {}


_STATICS_MAX = 64  # graphs remembered (all forgotten at once beyond: a cheap bound)


_STATICS_NODES = 4096  # larger tapes are not remembered: their signature costs a copy


def _statics_for(tape):
    """The per-node record dict for ``tape``'s graph, shared with every earlier tape of the
    same graph: the same nodes, arguments, shapes, value dtypes and F.linear transposes.
    (What the records hold depends on nothing else; where gradients go, which depends on
    the seeds and on what the sweep wrote so far, is decided at every backward.)"""
    if len(tape) > _STATICS_NODES or tape.sites:
        return {}
    key = (tape.nodes.tobytes(), bytes(tape.args), tape.shapes.tobytes(),
           tuple([v.dtype.char for v in tape.big_val]), tuple(tape.transposes.items()))
    statics = _STATICS.get(key)
    if statics is None:
        if len(_STATICS) >= _STATICS_MAX:
            _STATICS.clear()
        statics = _STATICS[key] = {}
    return statics
