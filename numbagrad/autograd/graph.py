"""numbagrad.autograd.graph: the subset of ``torch.autograd.graph`` that fits a tape, plus
read-only access to the tape itself.

* ``Node`` is the class of every ``grad_fn`` (``isinstance(t.grad_fn, Node)`` holds, as in
  torch); walk a graph with ``node.name()`` and ``node.next_functions``.
* ``node_metadata(node)`` / ``input_metadata(node)``: the shape, dtype and requires_grad of
  a node's output and of each of its inputs (also the ones that need no gradient, which
  ``next_functions`` reports as ``None``). torch keeps this in private attributes; here it
  is read from the tape record, so a graph picture can label its boxes.
* ``tape_arrays(tensor)``: the tape the tensor was recorded on, as read-only NumPy arrays.

Attributes:
    NODE_FIELD_NAMES: the names of a node record's fields, in the order of ``tape_arrays``'
        ``nodes`` columns.
    FLAG_NEEDS_GRAD: the bit of a node's ``flags`` field set when the node needs a gradient.
    FLAG_BIG: the bit set when the node's value is an array of its own, not in the arena.
    FLAG_F32: the bit set when the node's value is float32.
    FLAG_UNWRITTEN: the bit set when no derivative reads the node's value: not kept.
"""

from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..core import tape as tape_mod
from ..core.tape import FLAG_BIG, FLAG_F32, FLAG_NEEDS_GRAD, FLAG_UNWRITTEN
from ..engine.registry import BRIDGE, CONST, LEAF
from ..tensor import AccumulateGrad, GradFn

Node = GradFn  # torch.autograd.graph.Node: the base class of every grad_fn

__all__ = ["Node", "TensorMeta", "node_metadata", "input_metadata", "tape_arrays",
           "NODE_FIELD_NAMES", "FLAG_NEEDS_GRAD", "FLAG_BIG", "FLAG_F32", "FLAG_UNWRITTEN"]

# Public names of the columns of ``tape_arrays(t)["nodes"]``, in column order
NODE_FIELD_NAMES = tape_mod.FIELD_NAMES


class TensorMeta(NamedTuple):
    """What a graph picture needs to know about one tensor of the graph."""

    shape: tuple
    dtype: dtypes.dtype
    requires_grad: bool
    tensor: object  # the Tensor of a leaf or constant (the tape holds it), else None


def source_tensors(tape):
    """node -> Tensor for the leaves, constants and bridges recorded on ``tape``."""
    out = {}
    for t in tape.source_refs:
        node = tape.sources.get(id(t))
        if node is not None:
            out[node] = t
    return out


def _dtype_of(tape, node, sources):
    t = sources.get(node)
    if t is not None:
        return t.dtype
    flags = tape.flags(node)
    big = tape.big_value(node)
    if flags & FLAG_BIG and big is not None:
        return dtypes.from_numpy_dtype(np.asarray(big).dtype)
    # a small op node keeps only a float64 copy of its value; the flag says what it was
    return dtypes.float32 if flags & FLAG_F32 else dtypes.float64


def record_metadata(tape, node, sources=None):
    """TensorMeta of tape node ``node`` (``sources``: a ``source_tensors(tape)`` to reuse)."""
    if sources is None:
        sources = source_tensors(tape)
    code = tape.code(node)
    tensor = sources.get(node) if code in (LEAF.code, CONST.code, BRIDGE.code) else None
    return TensorMeta(tape.shape_of(node), _dtype_of(tape, node, sources),
                      tape.needs_grad(node), tensor)


def node_metadata(node):
    """TensorMeta of what ``node`` (a grad_fn, or an AccumulateGrad) produced; for an
    AccumulateGrad that is its leaf.

    Args:
        node: a grad_fn (``tensor.grad_fn``) or an AccumulateGrad; anything else raises
            TypeError.

    Returns:
        A TensorMeta (shape, dtype, requires_grad, tensor).
    """
    if not isinstance(node, GradFn):
        raise TypeError(f"expected a grad_fn (numbagrad.autograd.graph.Node), got "
                        f"{type(node).__name__}")
    if isinstance(node, AccumulateGrad):
        leaf = node.variable
        if leaf is not None:
            return TensorMeta(tuple(leaf.shape), leaf.dtype, leaf.requires_grad, leaf)
    return record_metadata(node._tape, node._node)


def input_metadata(node):
    """One TensorMeta per input of ``node``, in the order of ``node.next_functions``.

    Args:
        node: a grad_fn (``tensor.grad_fn``); an AccumulateGrad has no inputs.

    Returns:
        A tuple of TensorMeta, empty for an AccumulateGrad.
    """
    if isinstance(node, AccumulateGrad):
        return ()
    tape = node._tape
    sources = source_tensors(tape)
    return tuple(record_metadata(tape, a, sources) for a in tape.arg_nodes(node._node))


def _frozen(buffer, dtype):
    # A copy, not a view: while NumPy holds a view of an array.array, the array cannot grow,
    # so the next op recorded on this tape would raise BufferError. Arrays made from bytes
    # are read-only by construction.
    return np.frombuffer(bytes(buffer), dtype)


def _read_only(a):
    a.flags.writeable = False
    return a


def tape_arrays(tensor):
    """The tape ``tensor`` was recorded on, as a dict of read-only NumPy arrays (a snapshot:
    later ops on the same tape do not appear in it).

    ``nodes`` is (n, 13) int64, one record per node; ``code``, ``voff``, ``size``, ... (see
    NODE_FIELD_NAMES) are its columns. ``args``, ``shapes``, ``iat`` (int64) and ``fat``
    (float64) are the CSR arrays the ``*_ptr``/``n*`` columns index; ``val`` is the float64
    value arena ``voff`` indexes (-1: a big node, whose value is a NumPy array of its own);
    ``root`` is the tensor's node. The ``flags`` column's bits are FLAG_NEEDS_GRAD, FLAG_BIG,
    FLAG_F32 (a float32 value) and FLAG_UNWRITTEN (a value no derivative reads: not kept;
    its ``voff`` is -2, or the place a backward gave its adjoint, NaN in ``val``). A leaf
    has no tape: it raises ValueError.

    Args:
        tensor: a recorded (non-leaf) tensor.

    Returns:
        A dict from the names above to read-only NumPy arrays.
    """
    tape = tensor._tape
    if tape is None:
        raise ValueError("a leaf tensor is not recorded on a tape (it has no grad_fn)")
    nodes = _read_only(tape.records())
    out = {"nodes": nodes}
    for name in NODE_FIELD_NAMES:
        out[name] = tape_mod.column(nodes, name)  # a view of the read-only copy: read-only too
    out["args"] = _frozen(tape.args, np.int64)
    out["shapes"] = _frozen(tape.shapes, np.int64)
    out["iat"] = _frozen(tape.iat, np.int64)
    out["fat"] = _frozen(tape.fat, np.float64)
    val = tape.val.array().copy()
    for i in np.flatnonzero(out["flags"] & FLAG_UNWRITTEN).tolist():
        if out["voff"][i] >= 0:  # (a place a backward gave its adjoint)
            val[out["voff"][i]:out["voff"][i] + out["size"][i]] = np.nan
    out["val"] = _read_only(val)
    out["root"] = np.int64(tensor._node)
    return out

