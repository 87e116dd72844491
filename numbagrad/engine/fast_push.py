"""An op's node pushed and its Tensor made in one call, the common path of every scalar and
small array op:

- ``push_make(tape, code, value, a, b, fat)``: ``_make(value, tape, tape.push_0d(code,
  value, a, b, fat))``, on a tape its caller found ``plain``;
- ``push_array_make(tape, code, value, a, b, iat, fat, f32, reads)``: ``tape.push_array``
  (same arguments) and ``_make``, or None where push() is needed (nothing pushed);
- ``addresses(tensors, format, sizes, writable)``: the data addresses an optimizer's kernel
  reads, or None where its Python must work them out (None: no extension);
- ``push_big``: ``Tape.push`` of a big node (a training step's nodes are mostly big), which
  push() calls first (``core.tape._native_push_big``); None where Python must push it;
- ``source_big``: ``Tape.source`` of a tensor new to the tape that becomes a big node (a
  training step's parameters, on each step's new tape), which source() calls first
  (``core.tape._native_source``); None where Python must push it;
- ``push_node``: ``record.push_node`` of a big node, its Tensor made (``node_pusher``), the
  other cases handed to its Python body;
- ``reached_leaves``: after a backward's sweep, the leaves it reached and their adjoints read
  in one loop (None: no extension; -1 where its Python must read them);
  ``write_scalar_grads``: the ``.grad`` of those that are 0-d, without hooks, made in one
  loop (the others' places handed back to its Python).

Most of a small op's recording was those Python pairs, so the package builds them as C
functions (``_fast_push.c``) where a C compiler was there at install. They write the same
records (tests/test_fast_push.py compares them byte for byte) and hand every other case (a
flush due, a buffer full or viewed, a big operand) to the Python pairs. Without the
extension, or where its layout check refuses this interpreter, the Python pairs are all
there is.
"""

from array import array

import numpy as np

from ..core import tape as tape_module
from ..core.arena import _FLUSH_AT, Arena
from ..core.tape import (
    CONST_CODE,
    F_ARG,
    F_BIG,
    F_CODE,
    F_FAT,
    F_FLAGS,
    F_IAT,
    F_NARG,
    F_NDIM,
    F_NFAT,
    F_NIAT,
    F_SHP,
    F_SIZE,
    F_VOFF,
    FLAG_BIG,
    FLAG_F32,
    FLAG_NEEDS_GRAD,
    FLAG_UNWRITTEN,
    LEAF_CODE,
    NODE_FIELDS,
    READ_Y,
    UNSET,
    Tape,
)
from ..tensor import Tensor, _make

# the slots the C functions read or write, in their order (_fast_push.c's enums)
TENSOR_SLOTS = ("_data", "_requires_grad", "_grad", "_tape", "_node", "_vc_list", "_base",
                "_retains_grad", "_captured_by", "_hooks", "_post_hooks")
TAPE_SLOTS = ("nodes", "args", "shapes", "iat", "fat", "val", "big", "has_big", "keep_all",
              "unwritten_nodes", "has_unwritten", "big_val", "plain", "sources", "source_refs",
              "leaves", "leaf_nodes", "guards", "blas")
ARENA_SLOTS = ("n", "cells", "pending", "start")
LAYOUT = (NODE_FIELDS, F_CODE, F_VOFF, F_SIZE, F_FLAGS, F_ARG, F_NARG, F_NDIM, F_SHP, F_IAT,
          F_NIAT, F_FAT, F_NFAT, F_BIG, FLAG_NEEDS_GRAD, FLAG_UNWRITTEN, UNSET, _FLUSH_AT,
          READ_Y, FLAG_BIG, FLAG_F32, LEAF_CODE, CONST_CODE, tape_module._PRUNE_AT)


def push_make_python(tape, code, value, a, b, fat):
    return _make(value, tape, tape.push_0d(code, value, a, b, fat))


def push_array_make_python(tape, code, value, a, b, iat, fat, f32, reads):
    node = tape.push_array(code, value, a, b, iat, fat, f32, reads)
    return None if node < 0 else _make(value, tape, node)


def setup(module, push_0d=push_make_python, push_array=push_array_make_python):
    """Hand ``module`` (the built extension) the types, slots and layout it writes, and the
    Python pairs it calls for the other cases; raises where it refuses them (ValueError,
    TypeError, RuntimeError)."""
    module.setup(Tensor, TENSOR_SLOTS, Tape, TAPE_SLOTS, Arena, ARENA_SLOTS, np.ndarray, LAYOUT,
                 array("q", range(3)), push_0d, push_array, vars(tape_module))


try:
    from . import _fast_push
    setup(_fast_push)
except (ImportError, RuntimeError, TypeError, ValueError) as e:
    _fast_push = None
    unavailable = f"{type(e).__name__}: {e}"
    push_make, push_array_make = push_make_python, push_array_make_python
    addresses = reached_leaves = write_scalar_grads = None
else:
    unavailable = None
    push_make, push_array_make = _fast_push.push_make, _fast_push.push_array_make
    addresses = _fast_push.addresses
    reached_leaves = _fast_push.reached_leaves
    write_scalar_grads = _fast_push.write_scalar_grads
    tape_module._native_push_big = _fast_push.push_big
    tape_module._native_source = _fast_push.source_big


def node_pusher(python, anomaly_state, products_hold):
    """record.push_node: the C form of its Python body ``python`` (a big node pushed and its
    Tensor made in one call, the other cases handed to ``python``), or ``python`` without
    the extension."""
    if _fast_push is None:
        return python
    _fast_push.setup_push_node(python, anomaly_state, products_hold)
    return _fast_push.push_node
