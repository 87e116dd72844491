"""The one signature of the per-op kernels, and how a sweep calls a kernel by its address.

Every op's backward and replay-forward kernel is a ``@cfunc`` ``kernel(node, frame)``: the
node's index on the tape and a frame of int64s holding the address and length of each of
the tape's arrays. A sweep (generic @njit code that knows no op) reads node i's op code and
calls ``table[code]`` through ``call_kernel``: 3.9 ns per call against 3.8 for an inlined
if/elif branch (shared/spikes), while the sweep compiles in a fraction of a second whatever
the number of ops. Parallel kernels stay @njit and are called from Python:
``@cfunc(parallel=True)`` with prange compiles, then does nothing (numba 0.68.1).
"""

import numpy as np
from llvmlite import binding as llb
from llvmlite import ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..core.tape import NODE_FIELDS

KERNEL_SIG = types.void(types.int64, types.CPointer(types.int64))

# frame slots: address and length of nodes (rows), args, shapes, iat, fat, val, adj
FRAME_SIZE = 14
# each of the tape's arrays as a kernel reads it from its frame (generated kernels build
# only those they use: every array built is compile time)
FRAME_ARRAYS = {
    "nodes": f"carray(_pointer(frame[0]), (frame[1], {NODE_FIELDS}), np.int64)",
    "args": "carray(_pointer(frame[2]), (frame[3],), np.int64)",
    "shapes": "carray(_pointer(frame[4]), (frame[5],), np.int64)",
    "iat": "carray(_pointer(frame[6]), (frame[7],), np.int64)",
    "fat": "carray(_pointer(frame[8]), (frame[9],), np.float64)",
    "val": "carray(_pointer(frame[10]), (frame[11],), np.float64)",
    "adj": "carray(_pointer(frame[12]), (frame[13],), np.float64)",
}
# the process's block of address tables (engine/kernel_tables): its rows and the symbol compiled
# code finds it by, resolved when that code is loaded, so Numba may cache such code
TABLES_CAPACITY = 4096
TABLES_ROWS = 9
TABLES_SYMBOL = "numbagrad_kernel_tables_v2"


def register_tables(block):
    """Make ``block`` (int64, TABLES_ROWS x TABLES_CAPACITY, never moved) the one that
    ``tables()`` returns in compiled code."""
    assert block.shape == (TABLES_ROWS, TABLES_CAPACITY) and block.dtype == np.int64
    llb.add_symbol(TABLES_SYMBOL, block.ctypes.data)


@intrinsic
def _tables_address(typingctx):
    def codegen(context, builder, signature, args):
        return builder.ptrtoint(_external_global(builder.module, TABLES_SYMBOL), ir.IntType(64))
    return types.int64(), codegen


def _external_global(module, name):
    try:
        return module.get_global(name)
    except KeyError:
        var = ir.GlobalVariable(module, ir.IntType(64), name)
        var.linkage = "external"
        return var


@njit(cache=True)
def tables():
    """The process's block of address tables, read where compiled code runs (not frozen)."""
    return carray(_pointer(_tables_address()), (TABLES_ROWS, TABLES_CAPACITY), np.int64)


@intrinsic
def _pointer(typingctx, address):
    """An int64 address as a void pointer (for numba.carray)."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(address), codegen


@intrinsic
def call_kernel(typingctx, address, node, frame):
    """Call the kernel at ``address`` with ``node`` and the data pointer of ``frame``."""
    def codegen(context, builder, signature, args):
        address_, node_, frame_ = args
        data = context.make_array(signature.args[2])(context, builder, frame_).data
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(64), data.type])
        builder.call(builder.inttoptr(address_, fnty.as_pointer()), [node_, data])
        return context.get_dummy_value()
    return types.void(address, node, frame), codegen


@njit(cache=True)
def make_frame(nodes, args, shapes, iat, fat, val, adj):
    """The frame a sweep hands its kernels: where each of the tape's arrays is, and its size."""
    frame = np.empty(FRAME_SIZE, np.int64)
    frame[0] = nodes.ctypes.data
    frame[1] = nodes.shape[0]
    frame[2] = args.ctypes.data
    frame[3] = args.shape[0]
    frame[4] = shapes.ctypes.data
    frame[5] = shapes.shape[0]
    frame[6] = iat.ctypes.data
    frame[7] = iat.shape[0]
    frame[8] = fat.ctypes.data
    frame[9] = fat.shape[0]
    frame[10] = val.ctypes.data
    frame[11] = val.shape[0]
    frame[12] = adj.ctypes.data
    frame[13] = adj.shape[0]
    return frame


@njit(inline="always")
def tape_arrays(frame):
    """A kernel's views of the tape: (nodes, args, shapes, iat, fat, val, adj)."""
    return (carray(_pointer(frame[0]), (frame[1], NODE_FIELDS), np.int64),
            carray(_pointer(frame[2]), (frame[3],), np.int64),
            carray(_pointer(frame[4]), (frame[5],), np.int64),
            carray(_pointer(frame[6]), (frame[7],), np.int64),
            carray(_pointer(frame[8]), (frame[9],), np.float64),
            carray(_pointer(frame[10]), (frame[11],), np.float64),
            carray(_pointer(frame[12]), (frame[13],), np.float64))
