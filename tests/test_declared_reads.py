"""Every op's derivative reads only the values its record declares (``OpDef.reads``, from
its formulas or ``saves``): the values the sweep checks against in-place changes and freed
graphs. Each generated case is recorded, every value no derivative declares it reads is
overwritten with NaN, and the backward must give the same gradients: a read that is not
declared would see NaN (and, in real use, a value changed in place without the error, or
a value never written: the tape leaves those out)."""

import numpy as np
import pytest
from test_ops import CASES, IDS, _call, _first, _inputs

import numbagrad as ng
from numbagrad.core import tape as tape_mod
from numbagrad.engine.registry import OPS, SAVE_NAMES

_Y = 1 << SAVE_NAMES.index("y")


def _declared(tape):
    """The nodes of ``tape`` whose values some recorded derivative declares it reads."""
    read = set()
    for i in range(len(tape)):
        op = OPS[tape.code(i)]
        if op.source:
            continue
        args = tape.arg_nodes(i)
        if op.arity == -1 or op.python or i in tape.functions:
            read.update(args)  # (variadic and custom ops: every input, to be safe)
            read.add(i)
            continue
        mask = op.save_mask()
        if mask & _Y:
            read.add(i)
        for k, a in enumerate(args[:3]):
            if mask & (1 << k):
                read.add(a)
    return read


def _poison(tape):
    """NaN into every value no derivative declares it reads."""
    read = _declared(tape)
    val = tape.val.array()
    for i in range(len(tape)):
        if i in read:
            continue
        big = tape.big_value(i)
        voff, size = tape.field(i, tape_mod.F_VOFF), tape.field(i, tape_mod.F_SIZE)
        if big is not None:
            a = np.asarray(big)
            if a.dtype.kind == "f":
                tape.big_val[tape.field(i, tape_mod.F_BIG)] = np.full(a.shape, np.nan, a.dtype)
        elif voff >= 0:
            val[voff:voff + size] = np.nan


def _grads(op, sample, arrays, g, poison):
    xs = [ng.tensor(a, requires_grad=True) for a in arrays]
    out = _first(_call(ng, op, sample, xs))
    if not out.requires_grad:
        return None
    if poison:
        _poison(out._tape)
    out.backward(ng.tensor(g.astype(out.dtype.np)))
    return [None if x.grad is None else x.grad.numpy().copy() for x in xs]


@pytest.mark.parametrize("mode", ["sweep", "big", "unwritten"])
@pytest.mark.parametrize("op,i,sample", CASES, ids=IDS)
def test_derivative_reads_only_declared_values(op, i, sample, mode, monkeypatch):
    """(``unwritten``: every value of two elements or more that no derivative reads is left
    out of the arena, as large ones are, instead of being poisoned.)"""
    if mode == "big":
        monkeypatch.setattr(tape_mod, "BIG", 0)
    rng = np.random.default_rng(2000 + i)
    arrays = _inputs(op, sample, rng, np.float64)
    try:
        xs = [ng.tensor(a, requires_grad=True) for a in arrays]
        out = _first(_call(ng, op, sample, xs))
    except (RuntimeError, IndexError, ValueError, TypeError):
        pytest.skip("a sample the op refuses")
    if not out.requires_grad or out._tape is None:
        pytest.skip("nothing recorded")
    g = rng.standard_normal(tuple(out.shape))
    clean = _grads(op, sample, arrays, g, poison=False)
    if mode == "unwritten":
        monkeypatch.setattr(tape_mod, "_LATE_MIN", 2)
    poisoned = _grads(op, sample, arrays, g, poison=mode != "unwritten")
    for a, b in zip(poisoned, clean):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_array_equal(a, b)
