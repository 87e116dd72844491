"""Adding ops to numbagrad's table from outside the package (see examples/adding_an_op.py).

An op declared here is differentiated inside the compiled sweep, at the speed of the
built-in ops: its derivative is either a scalar formula (elementwise ops; the serial and
parallel kernels and the differentiable create_graph form are generated from it) or an
@njit kernel with the sweep's fixed signature. Like a built-in op's, its kernels are
generated into a module of its own and compiled the first time a graph uses the op (cached
on disk under a name that hashes their source).

* ``defop(name, grad_fn, arity, ...)``: the record (see numbagrad/engine/registry.py).
* ``unary(name, x, *float_attrs)`` / ``binary(name, a, b)``: call an elementwise op.
* ``record(op, value, inputs, iat=(), fat=())``: wrap a structured op's NumPy result.
* ``vjp_rule(op)``: attach the differentiable derivative (for create_graph) of a structured op.
* ``unbroadcast``, ``expand_kept``: helpers for writing such rules.
"""

from .engine.record import record
from .engine.registry import Sample, defop, vjp_rule
from .ops.elementwise.pointwise import binary, unary
from .ops.vjp import expand_kept, unbroadcast

__all__ = ["defop", "Sample", "unary", "binary", "record", "vjp_rule", "unbroadcast",
           "expand_kept"]
