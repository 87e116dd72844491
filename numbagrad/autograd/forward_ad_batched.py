"""Forward mode with a batch of tangents: all of jacfwd's columns in one pass.

Inside ``batched(n)`` a dual tensor's tangent has a leading dimension of ``n`` (one tangent
per column of the Jacobian), and each op's tangent is computed for all of them at once, the
primal once: elementwise ops from their formulas (the batch broadcasts), products with one
NumPy matmul, sums, means and reshapes on the batch; every other op's rule runs once per
column. Where a tangent is due a graph (an input requires grad) or the function reads a
tangent itself, ``UnbatchableError`` is raised and jacfwd goes back to one pass per column.
"""

import contextlib

import numpy as np

from ..core import grad_mode
from ..tensor import _make
from . import forward_ad
from .forward_ad import UnbatchableError


@contextlib.contextmanager
def batched(n):
    """Tangents carry a leading batch dimension of ``n`` while this is active."""
    forward_ad.batched_rule = _tangent
    forward_ad.batch_size = n
    try:
        yield
    finally:
        forward_ad.batched_rule = None
        forward_ad.batch_size = None


def make_dual(tensor, tangents):
    """``forward_ad.make_dual`` with ``tangents`` of shape (n, *tensor.shape)."""
    dual = forward_ad._without_hook(forward_ad.view, tensor, tuple(tensor.shape))
    forward_ad._set_tangent(dual, tangents)
    return dual


def tangent(t):
    """``t``'s batch of tangents, or None."""
    return forward_ad._get_tangent(t)


def _tangent(op, out, inputs, tangents, iat, fat):
    """The batch of tangents of ``op``'s output (``out``, its value)."""
    if op.python or forward_ad._needs_graph(inputs, tangents):
        raise UnbatchableError
    n = forward_ad.batch_size
    with grad_mode.no_grad():
        if op.elementwise:
            return _elementwise(op, out, inputs, tangents, iat, fat, n)
        rule = _RULES.get(op.name)
        shape = np.shape(out)
        if rule is not None:
            r = rule(op, out, inputs, [None if t is None else t._data for t in tangents],
                     iat, fat, n)
            return _make(np.ascontiguousarray(r).reshape((n, *shape)))
        return _per_column(op, out, inputs, tangents, iat, fat, n)


def _broadcast(t, shape, n):
    """A batch of tangents ``t`` (n, *s) broadcast to (n, *shape), as a Tensor (no copy)."""
    data = t._data
    s = data.shape[1:]
    if s == tuple(shape):
        return t
    lead = (1,) * (len(shape) - len(s))
    return _make(np.broadcast_to(data.reshape((n, *lead, *s)), (n, *shape)))


def _elementwise(op, out, inputs, tangents, iat, fat, n):
    shape = np.shape(out)
    r = forward_ad._elementwise_jvp(op, out, inputs, tangents, iat, fat,
                                    widen=lambda t: _broadcast(t, shape, n), lead=(n,))
    if r is not None and tuple(r.shape) != (n, *shape):
        raise UnbatchableError
    return r


def _product_terms(inputs, tangents, first, second):
    """d(A B) = dA B + A dB for the operands at ``first`` and ``second``, NumPy's matmul
    broadcasting the batch (vectors as matmul reads them)."""
    a, b = inputs[first]._data, inputs[second]._data
    ta, tb = tangents[first], tangents[second]
    total = None
    if ta is not None:
        total = np.matmul(ta, b)
    if tb is not None:
        # A @ dB: a vector dB (n, k) is n rows, whose product is dB @ A^T
        part = np.matmul(tb, a.T) if b.ndim == 1 else np.matmul(a, tb)
        total = part if total is None else total + part
    return total


def _mm(op, out, inputs, tangents, iat, fat, n):
    r = _product_terms(inputs, tangents, 0, 1)
    return np.zeros((n, *np.shape(out)), np.asarray(out).dtype) if r is None else r


def _addmm(op, out, inputs, tangents, iat, fat, n):
    beta, alpha = fat[0], fat[1]
    shape = np.shape(out)
    r = _product_terms(inputs, tangents, 1, 2)
    r = np.zeros((n, *shape), np.asarray(out).dtype) if r is None else r * alpha
    tc = tangents[0]
    if tc is not None and beta != 0:
        s = tc.shape[1:]
        r = r + beta * tc.reshape((n, *(1,) * (len(shape) - len(s)), *s))
    return r


def _reduction(op, out, inputs, tangents, iat, fat, n):
    t = tangents[0]
    if op.name.endswith("_dim"):
        axes = tuple(d + 1 for d, k in enumerate(iat) if k == 1)
    else:
        axes = tuple(range(1, t.ndim))
    r = t.sum(axis=axes) if axes else t
    if op.name.startswith("mean") and axes:
        r = r / ((t.size // n) // max(r.size // n, 1))  # (elements summed per output)
    return r


def _reshape(op, out, inputs, tangents, iat, fat, n):
    return tangents[0]


def _per_column(op, out, inputs, tangents, iat, fat, n):
    """Any other op: its own rule on each column's tangents."""
    shape = np.shape(out)
    cols = np.zeros((n, *shape), np.asarray(out).dtype)
    for j in range(n):
        tj = [None if t is None else _make(np.ascontiguousarray(t._data[j])) for t in tangents]
        r = forward_ad._output_tangent(op, out, inputs, tj, iat, fat)
        if r is not None:
            cols[j] = r._data
    return _make(cols)


_RULES = {"mm": _mm, "mv": _mm, "dot": _mm, "bmm": _mm, "addmm": _addmm,
          **{name: _reduction for name in ("sum", "sum_dim", "mean", "mean_dim")},
          **{name: _reshape for name in forward_ad._RESHAPES}}
