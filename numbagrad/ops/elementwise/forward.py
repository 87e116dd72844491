"""An elementwise op's value computed eagerly, laid out as torch lays it out: by NumPy where
its float32 steps round as the replay's do and NumPy is the faster (kernel_first), else by the
replay's own forward kernel (so eager and replay agree to the bit)."""

import math

import numpy as np

from ...engine import formula, kernel_tables, kernelgen
from ...engine.record import _F64_SCALAR, _NO_INTS

_ARRAY, _SCALAR = {}, {}  # op code -> kernel


def eager_forward(op, *operands):
    """``op.forward`` on NumPy operands (its ``arity`` arrays, then its float attributes).
    A float op whose formula rounds more than once (a transcendental, rsqrt's 1 / sqrt:
    registry's ``rounds_once``) runs instead the replay's own forward kernel, in float64,
    rounded once to float32 for float32 operands: the compiled replay computes exactly
    that, so eager and replay agree to the bit. NumPy's loops would not: its float32 exp
    is not correctly rounded (39% of inputs here), its float64 tanh is its own SIMD code
    (30% of inputs differ from the C library's), SciPy's erf is not the C library's, and a
    derivative read from the output (tanh's 1 - y * y) magnifies a last-bit difference."""
    if len(operands) == 1 and op.arity == 1 and kernel_first(op):  # tanh of an array, lean
        a = operands[0]
        dt = a.dtype
        if (dt is _F32 or dt is _F64) and a.ndim and a.flags.c_contiguous:
            kernel = _ARRAY.get(op.code) or eager_kernel(op)
            y = np.empty_like(a)
            kernel(y.ravel(), a.ravel(), _NO_INTS, _NO_INTS, _NO_INTS, _NO_FLOATS)
            return y
    if op.rounds_once:
        out = op.forward(*operands)
        # (a 0-d result, a NumPy scalar, has no layout: skip the call on scalar graphs)
        return torch_layout(out, operands[:op.arity]) if type(out) is np.ndarray else out
    if op.arity == 1:  # the common case, kept short: a few microseconds on small tensors
        a = operands[0]
        if a.dtype == _F16:  # Numba has no float16: in float32, rounded once (as torch)
            return eager_forward(op, a.astype(_F32), *operands[1:]).astype(_F16)
        if a.dtype.kind != "f":
            return torch_layout(op.forward(*operands), operands[:1])
        if a.ndim == 0:  # on Python floats: a fifth of an array call's cost
            if len(operands) == 1:
                return a.dtype.type(_scalar_value(op, a))
            f0, f1 = (*operands[1:], 0.0)[:2]
            return a.dtype.type(_scalar_value(op, a, float(f0), float(f1)))
        fat = np.asarray(operands[1:], np.float64) if len(operands) > 1 else _NO_FLOATS
        order = None if a.flags.c_contiguous else torch_order(a.shape, [a])
        if order is not None:  # computed in the order torch lays the result out
            a = a.transpose(order)
        y = np.empty(a.size, a.dtype)
        eager_kernel(op)(y, a.ravel(), _NO_INTS, _NO_INTS, _NO_INTS,
                         fat)  # a unary kernel reads no shapes
        if order is not None:
            return y.reshape(a.shape).transpose(np.argsort(order))
        return y.reshape(a.shape)  # (a 0-d operand took the scalar path above)
    arrays = [np.asarray(v) for v in operands[:op.arity]]
    if any(a.dtype.kind != "f" for a in arrays):
        return torch_layout(op.forward(*operands), arrays)
    if all(a.dtype == _F16 for a in arrays):  # (as above)
        return eager_forward(op, *[a.astype(_F32) for a in arrays],
                             *operands[op.arity:]).astype(_F16)
    dtype = arrays[0].dtype if all(a.dtype == arrays[0].dtype for a in arrays) else np.float64
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    order = None if all(a.flags.c_contiguous for a in arrays) else torch_order(shape, arrays)
    if order is not None:  # computed in the order torch lays the result out
        arrays = [a.reshape((1,) * (len(shape) - a.ndim) + a.shape).transpose(order)
                  for a in arrays]
        shape = tuple(shape[d] for d in order)
    flat = [np.ascontiguousarray(a, dtype).reshape(-1) for a in arrays]
    shapes = [np.asarray(s, np.int64) for s in [shape] + [a.shape for a in arrays]]
    y = np.empty(shape, dtype)
    fat = np.asarray(operands[op.arity:], np.float64) if len(operands) > op.arity else _NO_FLOATS
    eager_kernel(op)(y.reshape(-1), *flat, *shapes, _NO_INTS, fat)
    if order is not None:
        return y.transpose(np.argsort(order))
    return y if y.ndim else y[()]


def torch_layout(out, operands):
    """``out``, NumPy's elementwise result of ``operands``, in the layout torch gives it
    (see torch_order): NumPy orders the dims of a result of strided operands its own way."""
    if isinstance(out, np.generic) or out.ndim < 2:
        return out
    for a in operands:
        if isinstance(a, np.ndarray) and not a.flags.c_contiguous:
            break
    else:
        return out  # C-contiguous operands give a C-contiguous result, in both
    order = torch_order(out.shape, [a for a in operands if isinstance(a, np.ndarray)])
    order = order or list(range(out.ndim))
    moved = out.transpose(order)
    if moved.flags.c_contiguous:
        return out
    return np.ascontiguousarray(moved).transpose(np.argsort(order))


def torch_laid_out(fn):
    """``fn`` of arrays (a NumPy ufunc: a comparison, a logical op), its result laid out as
    torch's (torch_layout)."""
    def laid_out(*arrays):
        return torch_layout(fn(*arrays), arrays)
    laid_out.__name__ = fn.__name__
    return laid_out


def torch_order(shape, arrays):
    """The axis order, outermost first, in which torch's elementwise kernels lay out a result
    of ``shape`` from operands ``arrays`` (TensorIterator's reorder_dimensions: dims sorted by
    the operands' strides, the first operand deciding, broadcast dims ignored); None for C
    order. ``.view`` of the result then fails or succeeds as it does in torch."""
    nd = len(shape)
    if len(arrays) == 1 and arrays[0].ndim == nd and nd:
        st = arrays[0].strides  # strides falling outermost to innermost: the sort keeps C
        if st[-1] > 0 and all(s0 > s1 for s0, s1 in zip(st, st[1:])):  # order (a chunk)
            return None
    strides = []
    for a in arrays:
        lead = nd - a.ndim
        strides.append([0 if i < lead or a.shape[i - lead] != shape[i] else
                        a.strides[i - lead] for i in range(nd)])

    def should_swap(d0, d1):
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(nd - 1, -1, -1))  # innermost first, as torch's insertion sort runs
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    order = perm[::-1]
    return None if order == list(range(nd)) else order


def _scalar_value(op, x, f0=0.0, f1=0.0):
    """``op`` (unary) of one number by its replay's scalar kernel, as a Python float."""
    kernel = _SCALAR.get(op.code) or eager_kernel(op, "_sc_")
    return kernel(float(x), f0, f1)


def scalar_forward(op):
    """``op`` (unary, no attributes) of one float64 NumPy scalar, as one. Where its formula
    is one C library function (``sin(a)``), math's: the call its kernel makes, without the
    kernel's dispatch; else its scalar kernel."""
    name = formula.single_call(op.fwd, "a") if op.fwd else None
    if name in kernelgen.LIBM:
        libm = getattr(math, name)

        def forward(x):
            try:
                return _F64_SCALAR(libm(x))
            except (ValueError, OverflowError):  # (math's where the kernel gives nan or inf)
                return _F64_SCALAR(_scalar_value(op, x))
        return forward

    def forward(x):
        return _F64_SCALAR(_scalar_value(op, x))
    return forward


def kernel_first(op):
    """Whether an array's unary ``op`` without attributes runs its kernel rather than NumPy:
    every op whose formula rounds more than once, and those that branch (relu, sign) or
    take a square root: NumPy's NaN-aware maximum and its float32 sqrt take 3-4x the
    kernel's time for the same bits (a branch rounds nothing; sqrt is correctly rounded in
    both)."""
    first = _KERNEL_FIRST.get(op.code)
    if first is None:
        f = op.fwd
        first = _KERNEL_FIRST[op.code] = f is not None and op.arity == 1 and (
            not op.rounds_once or (
            not formula.uses(f, "f0") and not formula.uses(f, "m") and
            bool(formula.compared(f) or formula.calls(f) & {"sqrt", "sgn", "max", "min"})))
    return first


_KERNEL_FIRST = {}  # op code -> kernel_first(op)


def eager_kernel(op, prefix="_fw_"):
    """The eager kernel ``prefix + op.name`` of the op's kernels module, memoized."""
    memo = _SCALAR if prefix == "_sc_" else _ARRAY
    kernel = memo.get(op.code)
    if kernel is None:
        kernel = memo[op.code] = kernel_tables.njit_kernel(op, prefix + op.name)
    return kernel


_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
_NO_FLOATS = np.empty(0, np.float64)


def warmup(ops):
    """Compile (or load from Numba's cache) eager_forward's kernels of ``ops``, float64 and
    float32."""
    for op in ops:
        if not op.elementwise or op.fwd is None:
            continue
        for dt in (np.float64, np.float32):
            if not op.rounds_once:
                for x in (np.ones(2, dt), dt(1.0)):
                    eager_forward(op, *([x] * op.arity), 1.0, 20.0)
            elif kernel_first(op):  # (its arrays' kernel only: no attributes)
                eager_forward(op, np.ones(2, dt))
