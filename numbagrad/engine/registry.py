"""The op table: one OpDef per op; op codes, the sweep's dispatch and the op tests derive from it.

How an op is declared (see numbagrad/ops/elementwise/basic.py etc. for the records):

* ``name``      our name, unique (``"mul"``); the op code is its index in ``OPS``.
* ``doc``       one line saying what the op computes, for the ops whose public function is
  made from the record by name (``numbagrad.sin``, ``Tensor.sin``): its docstring derives
  from it and ``torch`` (``OpDef.docstring``).
* ``grad_fn``   torch's autograd node name (``"MulBackward0"``).
* ``arity``     number of tensor inputs, ``-1`` for variadic (cat, stack).
* Elementwise ops give ``grads``: one scalar formula per input, a Python expression over
  ``g`` (upstream gradient), ``a``/``b`` (inputs), ``y`` (output), ``f0``/``f1`` (float
  attributes) and ``m`` (an integer attribute per output element, e.g. a mask), or None
  when that input is not differentiable. Serial and parallel backward kernels are
  generated from the formulas; what a formula reads is what the op saves.
* Structured ops give ``kernel``: the dotted name of an @njit function with the fixed
  signature ``bw(g, y, x0.., gx0.., sh_y, sh0.., need0.., iat, fat)`` on flat views
  (variadic: ``bw(g, gx, sh_y, sh_x, k, iat, fat)`` once per input ``k``), and ``saves``.
* ``forward``   the NumPy forward of an elementwise op: ``forward(x0, .., *fattrs)``. Eager
  runs it for ops that round once (``rounds_once``) and for integer inputs; the other ops'
  eager value comes from the replay's kernel of ``fwd`` (elementwise.forward.eager_forward), and
  their ``forward`` stays as the NumPy reference the tests hold the kernels to.
* ``fwd``       scalar formula of the forward (elementwise), for compiled replay.
* ``replay``    structured ops: the name of their @njit forward kernel in
  a registered kernel module (kernelgen.KERNEL_MODULES: each family's
  ops/<family>/replay_kernels.py; ``fw(y, x0.., sh_y, sh0.., iat, fat)``), or the @njit
  function itself (ops declared outside the kernels modules, as ``kernel`` and
  ``replay_bw`` may be), for compiled replay (numbagrad.compile); None where an op has none
  yet (compile then says so).
* ``replay_f32`` the op's eager value comes from its replay kernel in the input's dtype
  (``record.replay_value``), and replay runs its float32 nodes the same way, on float32
  copies of their inputs: eager and replay then agree to the last bit by construction.
  For ops whose kernel sums or calls exp/log (reductions, softmax, losses), where a float64
  kernel rounded once differs from NumPy's float32 steps. Set it together with the eager
  op's call to replay_value (which checks it), or with an eager value computed by the
  routine the kernel itself calls: the products' ``gemm.product``, the convolutions'
  ``conv_forward`` steps. A kernel's name instead of True: the op's own float32 kernel,
  called on the arena's float64 views (``fw``'s signature) where the generic one would
  copy every operand to float32 first (a small product's copies cost more than it).
* ``replay_bw`` the backward the replay sweep calls instead of ``kernel`` (same signature),
  for ops whose recorded attributes are data (an argmax's positions): it recomputes them
  from the replayed values, which the recorded ones would not follow.
* ``samples``   how the generated tests call the op: a list of ``Sample``.
* ``vjp``       the differentiable form of the derivative (create_graph=True), written with
  numbagrad ops: ``vjp(ctx, g) -> [gradient Tensor or None per input]``. Elementwise ops
  derive it from their formulas (numbagrad/ops/vjp.py); structured ops attach one with
  ``@vjp_rule(OP)`` next to their record (the movement, indexing and reduction ops' are in
  vjp.py: they are written with one another's front ends).
"""

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..core import tape
from ..core.docs import torch_doc
from ..grad_fn import NONE_OPERANDS
from . import formula

SAVE_NAMES = ("x0", "x1", "x2", "y", "n")  # n: a saved number or mask (saves_number)
# formula functions that are exact or correctly rounded in any dtype
_ONE_ROUNDING_CALLS = {"abs", "min", "max", "sgn", "sqrt", "floor", "rint"}


# every public form of an elementwise op (OpDef.api)
PUBLIC = ("function", "method", "inplace", "inplace_function")


@dataclass(frozen=True)
class Sample:
    """One generated-test case: input shapes, keyword arguments, and the call expression.

    Args:
        shapes: the shapes of the inputs ``x0``, ``x1``...
        kw: keyword arguments of the call.
        call: a Python expression over ``lib`` (numbagrad or torch), ``x0``.. and ``kw``;
            None calls ``lib.<torch name>(x0, .., **kw)``.

    Attributes:
        shapes: the shapes of the inputs ``x0``, ``x1``...
        kw: keyword arguments of the call.
        call: a Python expression over ``lib`` (numbagrad or torch), ``x0``.. and ``kw``;
            None calls ``lib.<torch name>(x0, .., **kw)``.
    """

    shapes: tuple
    kw: dict = field(default_factory=dict)
    call: str | None = None


@dataclass
class OpDef:
    name: str
    grad_fn: str
    arity: int
    grads: tuple | None = None
    kernel: str | None = None
    saves: tuple = ()
    fwd: str | None = None
    replay: str | None = None
    replay_bw: str | None = None
    replay_f32: bool | str = False
    # eager forward on NumPy values (elementwise ops): f(x0, .., attrs) -> ndarray
    forward: object = None
    # structured ops whose eager value depends on its operands' layout (a product of a
    # transposed view): that value, ``value(xs, iat, fat)`` on arrays in their own shapes and
    # layouts, for the compiled replay's float32 arrays (compiler/float32_nodes.py)
    value: object = None
    torch: str | None = None
    # the public forms of an elementwise op with no attributes, made from this record by
    # ops/elementwise/public.py: any of "function" (torch.<name>, with out=), "method"
    # (Tensor.<name>), "inplace" (Tensor.<name>_), "inplace_function" (torch.<name>_);
    # PUBLIC names all four. ``aliases``: torch's other names -> the forms each has
    api: tuple = ()
    aliases: dict = field(default_factory=dict)
    # a two-input public function's integer (and bool) inputs: "float" computes in the
    # default float dtype, "refused" raises torch's NotImplementedError ("<name>_cpu"),
    # "exact" gives NumPy's value in the promoted integer dtype, recording nothing
    int_inputs: str = "float"
    samples: list = field(default_factory=list)
    domain: tuple = (-2.0, 2.0)
    code: int = -1
    # ops whose values never reach a derivative (sources) have no backward at all
    source: bool = False
    vjp: object = None
    # differentiated by Python code (custom autograd.Function), never inside the sweep
    python: bool = False
    # optional NumPy derivative for big nodes (where a BLAS call or a strided view beats a
    # Numba loop): numpy_bw(g, xs, gxs, iat, fat) on arrays in their own shapes; gxs[k] is
    # None when input k needs no gradient, else an array to ADD into
    numpy_bw: object = None
    # inputs whose numpy_bw target may also come in any layout (e.g. the transpose of a
    # contiguous buffer: a t() node's gradient handed over as its input's) or as Unwritten
    # (uninitialized memory to store into, not add to); see autograd/engine.py
    numpy_bw_any_layout: tuple = ()
    # the derivative reads what torch keeps as a saved tensor though it is no input or output
    # (``x * 2``'s wrapped number, dropout's mask): a second backward through it fails
    saves_number: bool = False
    # torch's node also lists an operand that is no node here (the Python number of
    # ``x + 2``, dropout's mask) as (None, 0): "last", "first" or its position
    none_operand: str | int = ""
    doc: str = ""
    # ops whose kernels call BLAS: the input whose last dimension is the product's inner one
    # (-1: any size counts, the convolutions), so that record() can flag a tape holding a
    # product big enough for BLAS to use several threads (its backward then holds the BLAS
    # pools at one thread, numbagrad/_blas.py; a product only where the products run on the
    # user's BLAS, not numbagrad's own copy)
    blas_inner: int | None = None
    # where torch's CPU kernels refuse float16: the kernel its NotImplementedError names, for
    # the op's value (``half``) or its derivative (``half_backward``); None: torch computes it
    half: str | None = None
    half_backward: str | None = None
    _reads: dict = field(default_factory=dict, repr=False)

    @property
    def elementwise(self):
        return self.grads is not None

    @cached_property
    def value_reads(self):
        """What any of the op's derivatives reads, as the tape's READ_* bits: the values the
        tape must keep (core/tape.py: a value none reads stays a hole)."""
        if self.python or self.arity == -1:  # (Python's derivatives may read anything)
            return tape.READ_X0 | tape.READ_X1 | tape.READ_X2 | tape.READ_Y
        names = set(self.reads())
        return sum(bit for name, bit in (("x0", tape.READ_X0), ("x1", tape.READ_X1),
                                          ("x2", tape.READ_X2), ("y", tape.READ_Y))
                   if name in names)

    def docstring(self, torch_name=None, note=None):
        """The docstring of the public function made from this op: ``doc``, then torch's
        function (``torch.<torch>`` unless ``torch_name`` is given) and an optional note."""
        return torch_doc(self.doc, torch_name or f"torch.{self.torch or self.name}", note)

    @property
    def replayable(self):
        """Whether compiled replay can recompute this op's value inside @njit."""
        return self.source or (self.fwd is not None if self.elementwise else
                               self.replay is not None)

    @cached_property
    def rounds_once(self):
        """Whether the elementwise forward formula rounds at most once (one +, -, *, / or
        sqrt, or none: abs, min, max, a branch). Its float32 NumPy steps then equal the
        formula computed in float64 and rounded to float32, which is what compiled replay
        does; any other op's eager float32 forward runs in float64 and rounds once
        (elementwise.forward.eager_forward)."""
        f = self.fwd
        if f is None or formula.calls(f) - _ONE_ROUNDING_CALLS:
            return False
        steps = formula.arithmetic_steps(f)  # (None: a power)
        return steps is not None and steps <= 1

    def takes_int_needs(self):
        """Whether the op's backward is kernelgen's elementwise kernel, which takes each
        input's need as an int (0 none, 1 add, 2 store into an unwritten buffer): always an
        int, so that it compiles for one signature."""
        return bool(self.elementwise and self.arity in (1, 2) and self.numpy_bw is None
                    and not self.replay_bw)

    def passes_gradient(self, k):
        """Whether input ``k``'s gradient is the output's, element for element (add's
        operands, sub's first): an elementwise op whose formula for ``k`` is ``g``."""
        return bool(self.elementwise and self.grads and self.grads[k]
                    and self.grads[k].strip() == "g")

    def reads(self, k=None):
        """Names of the values the derivative reads ("x0", "x1", "y"), from the formulas or
        ``saves``; with ``k``, only what input ``k``'s derivative reads (torch saves an input
        only when another input's gradient needs it)."""
        if not self.elementwise:
            return tuple(self.saves)
        cached = self._reads.get(k)
        if cached is not None:
            return cached
        grads = self.grads if k is None else self.grads[k:k + 1]
        names = {"a": "x0", "b": "x1", "y": "y"}
        out = tuple(v for n, v in names.items() if formula.uses(grads, n))
        if self.saves_number and any(self.grads[i] for i in range(len(self.grads))
                                     if k is None or i == k):
            out += ("n",)
        self._reads[k] = out
        return out

    def save_mask(self, k=None):
        """``reads(k)`` as a bit mask over SAVE_NAMES."""
        return sum(1 << SAVE_NAMES.index(r) for r in self.reads(k))


OPS: list[OpDef] = []
# Tensor-level functions that derivative formulas may call beyond vjp.py's own (name ->
# function over Tensors and numbers), registered by the modules that declare such ops
FORMULA_FUNCTIONS: dict = {}
BY_NAME: dict[str, OpDef] = {}


def defop(name, grad_fn, arity, **kw):
    """Declare an op; returns its OpDef whose ``code`` is the op code on the tape.

    Args:
        name: the op's unique name (its public function's, for table ops).
        grad_fn: torch's name of the op's node (``MulBackward0``), shown as ``grad_fn``.
        arity: the number of tensor inputs (-1: variadic, 0: a source).
        **kw: the rest of the op's record (OpDef's fields: ``fwd`` and ``grads`` formulas
            for an elementwise op, ``kernel``, ``replay``, ``saves``, ``samples``...).

    Returns:
        The op's OpDef.
    """
    if name in BY_NAME:
        raise ValueError(f"op {name!r} declared twice")
    op = OpDef(name=name, grad_fn=grad_fn, arity=arity, code=len(OPS), **kw)
    OPS.append(op)
    BY_NAME[name] = op
    tape.GRAD_FN_NAMES.append(grad_fn)
    if op.none_operand != "":
        NONE_OPERANDS[op.code] = op.none_operand
    return op


def vjp_rule(*ops):
    """Attach the decorated function as the differentiable derivative of ``ops``.

    Args:
        *ops: the OpDefs (``defop``'s results) whose derivative it is.

    Returns:
        A decorator returning the function unchanged.
    """
    def attach(fn):
        for op in ops:
            op.vjp = fn
        return fn
    return attach


# Source nodes: values that enter the graph (leaves that require grad, and constants).
LEAF = defop("leaf", "", 0, source=True)
CONST = defop("const", "", 0, source=True)
# A non-leaf tensor of an older tape used here: its adjoint seeds that tape's own sweep.
BRIDGE = defop("bridge", "", 0, source=True)
# A custom autograd.Function's node: its backward is the user's Python (autograd/function.py).
PY_FUNCTION = defop("py_function", "", -1, python=True)


assert (LEAF.code, CONST.code, BRIDGE.code) == (tape.LEAF_CODE, tape.CONST_CODE, tape.BRIDGE_CODE)


class Unwritten(np.ndarray):
    """A numpy_bw gradient target nothing has written yet (uninitialized memory): the
    derivative stores into it instead of adding, with no zero-fill and no temporary. Handed
    only for inputs an op lists in ``numpy_bw_any_layout``."""
