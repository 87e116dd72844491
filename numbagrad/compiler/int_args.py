"""Integer array arguments of a compiled transform (labels, indices) as inputs of one trace.

A trace keys integer arguments by value at first. Ops that turn one into node attributes
(nll_loss, cross_entropy) leave a recipe recomputing them (core/trace_guards.int_attributes);
any other use of its values makes the argument part of the signature for good. When a second
call brings new values of the same shapes, the function is traced again and the new trace is
compared with the first one's attributes recomputed by the recipes: when they agree, node
for node, later calls with any values of those shapes replay that trace with recomputed
attributes instead of tracing again.
"""

import threading

import numpy as np

from ..core.tape import CONST_CODE, column
from ..tensor import Tensor


def is_int_array(x):
    """An integer or bool NumPy array or Tensor: a label or index argument."""
    d = x._data if isinstance(x, Tensor) else x
    return isinstance(d, np.ndarray) and d.dtype.kind in "biu" or \
        isinstance(x, Tensor) and np.asarray(d).dtype.kind in "biu"


def values_of(x):
    return np.asarray(x._data if isinstance(x, Tensor) else x)


def shape_key(key):
    """``key`` (a call's signature) with the integer arguments' values left out, or None
    when no argument is an integer array."""
    spec, leaves = key
    if not any(leaf[0] == "s" for leaf in leaves):
        return None
    return spec, tuple(leaf[:3] if leaf[0] == "s" else leaf for leaf in leaves)


class IntArgs:
    """One trace's integer arguments: ``leaves`` (flat positions), ``recipes`` (program
    node, leaf, attributes_of); ``dynamic`` when every use of them has a recipe."""

    def __init__(self, program, tape, flat, node_of):
        g = tape.guards
        self.leaves = sorted(set(g.int_args.values()))
        self.recipes = [(node_of(n), k, fn) for n, k, fn in g.int_recipes]
        self.dynamic = bool(self.leaves) and not (g.int_static & set(self.leaves)) and \
            program.stream is None and not program.reads
        self.lock = threading.Lock()

    def attributes(self, program, flat):
        """``program``'s iat and fat (copies) with the recipes' attributes for ``flat``."""
        iat, fat = program.iat.copy(), program.fat.copy()
        self._write(program, flat, iat, fat)
        return iat, fat

    def _write(self, program, flat, iat, fat):
        nodes = program.nodes
        for node, k, fn in self.recipes:
            ia, fa = fn(values_of(flat[k]))
            io, fo = column(nodes, "iat_ptr")[node], column(nodes, "fat_ptr")[node]
            if len(ia) != column(nodes, "niat")[node] or len(fa) != column(nodes, "nfat")[node]:
                raise AssertionError("an integer argument's recipe changed a node's size")
            iat[io:io + len(ia)] = ia
            fat[fo:fo + len(fa)] = fa

    def run(self, program, flat):
        """``program.run(flat)`` with the attributes of ``flat``'s integer values, written in
        place (the replay's eager nodes and kernels read views of them): one call at a time."""
        with self.lock:
            self._write(program, flat, program.iat, program.fat)
            return program.run(flat)


def same_but_values(first, second, flat):
    """Whether trace ``second`` (of ``flat``) is trace ``first`` with its recipes' attributes
    for ``flat``: the same nodes, operands, shapes, attributes and constants."""
    a, b = first.int_args, second.int_args
    if not (a.dynamic and b.dynamic) or len(a.recipes) != len(b.recipes):
        return False
    if not all(np.array_equal(getattr(first, name), getattr(second, name))
               for name in ("nodes", "args", "shapes")):
        return False
    iat, fat = a.attributes(first, flat)
    if not (np.array_equal(iat, second.iat) and
            np.array_equal(fat, second.fat, equal_nan=True)):
        return False
    # constants' values (inputs and computed nodes are written by every replay)
    const = column(first.nodes, "code") == CONST_CODE
    voff, size = column(first.nodes, "voff")[const], column(first.nodes, "size")[const]
    return all(np.array_equal(first.base[o:o + n], second.base[o:o + n], equal_nan=True)
               for o, n in zip(voff.tolist(), size.tolist()))
