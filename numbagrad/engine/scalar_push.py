"""``push_make(tape, code, value, a, b, fat)``: a scalar graph's op recorded and its Tensor
made, ``_make(value, tape, tape.push_0d(code, value, a, b, fat))``, on a tape its caller
found ``plain``.

Most of a scalar op's recording is that pair of Python calls, so the package builds them
as one C function (``_push0d.c``) where a C compiler was there at install. It writes the
same records (tests/test_push0d.py compares them) and hands every other case (values
pending in the arena, a buffer full or viewed) to the Python pair. Without the extension,
or where its layout check refuses this interpreter, the Python pair is all there is.
"""

from array import array

from ..core.arena import Arena
from ..core.tape import (
    F_ARG,
    F_BIG,
    F_CODE,
    F_FAT,
    F_FLAGS,
    F_NARG,
    F_NFAT,
    F_SIZE,
    F_VOFF,
    FLAG_NEEDS_GRAD,
    NODE_FIELDS,
    Tape,
)
from ..tensor import Tensor, _make

# the slots the C function reads or writes, in its order (_push0d.c's enums)
TENSOR_SLOTS = ("_data", "_requires_grad", "_grad", "_tape", "_node", "_vc_list", "_base",
                "_retains_grad", "_captured_by", "_hooks", "_post_hooks")
TAPE_SLOTS = ("nodes", "args", "fat", "val")
ARENA_SLOTS = ("n", "cells", "pending")
LAYOUT = (NODE_FIELDS, F_CODE, F_VOFF, F_SIZE, F_FLAGS, F_ARG, F_NARG, F_FAT, F_NFAT, F_BIG,
          FLAG_NEEDS_GRAD)


def push_make_python(tape, code, value, a, b, fat):
    return _make(value, tape, tape.push_0d(code, value, a, b, fat))


def setup(module):
    """Hand ``module`` (the built extension) the types, slots and layout it writes;
    raises where it refuses them (ValueError, TypeError, RuntimeError)."""
    module.setup(Tensor, TENSOR_SLOTS, Tape, TAPE_SLOTS, Arena, ARENA_SLOTS, LAYOUT,
                 array("q", range(3)), push_make_python)


try:
    from . import _push0d
    setup(_push0d)
except (ImportError, RuntimeError, TypeError, ValueError) as e:
    _push0d = None
    unavailable = f"{type(e).__name__}: {e}"
    push_make = push_make_python
else:
    unavailable = None
    push_make = _push0d.push_make
