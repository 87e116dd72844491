"""Records, eager forms and differentiable derivatives of the scans (cumsum, cumprod,
logcumsumexp), trace and nansum. Their kernels are in scan_kernels.py."""

import numpy as np

from ... import dtypes
from ...engine.record import record, replay_value
from ...engine.registry import Sample, defop, vjp_rule
from ...tensor import Tensor, _make  # noqa: F401
from ..elementwise.pointwise import to_dtype, where
from ..elementwise.public import exp
from ..index.indexing import index_select
from ..reduce import reductions
from ..shape.join import cat
from ..shape.movement import _wrap, expand, narrow, reshape, transpose, unsqueeze
from ..vjp import const, expand_kept
from . import kernels

_SH = [(), (5,), (3, 4), (2, 3, 4)]


def _scan_samples(name):
    calls = [((), 0), ((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -2)]
    return [Sample((s,), {"dim": d}, f"lib.{name}(x0, **kw)") for s, d in calls]


# inputs with zeros, where cumprod's derivative is no quotient
_ZEROS_6 = "[1., 1., 0., 1., 1., 1.]"
_ZEROS_2x4 = "[[0., 1., 1., 1.], [1., 1., 1., 0.]]"
CUMSUM = defop("cumsum", "CumsumBackward0", 1, replay=kernels.cumsum_fw, replay_f32=True,
               kernel=kernels.cumsum_bw, samples=_scan_samples("cumsum"))
CUMPROD = defop("cumprod", "CumprodBackward0", 1, replay=kernels.cumprod_fw,
                replay_f32=True, kernel=kernels.cumprod_bw, saves=("x0", "y"),
                samples=_scan_samples("cumprod") + [
                    Sample(((6,),), {}, "lib.cumprod(x0 * lib.tensor(" + _ZEROS_6 + "), 0)"),
                    Sample(((2, 4),), {}, "lib.cumprod(x0 * lib.tensor(" + _ZEROS_2x4 + "), 1)")])
LOGCUMSUMEXP = defop("logcumsumexp", "LogcumsumexpBackward0", 1,
                     replay=kernels.logcumsumexp_fw, replay_f32=True,
                     kernel=kernels.logcumsumexp_bw, saves=("x0", "y"),
                     samples=_scan_samples("logcumsumexp"))
TRACE = defop("trace", "TraceBackward0", 1, replay=kernels.trace_fw, replay_f32=True,
              kernel=kernels.trace_bw,
              samples=[Sample(((3, 3),), {}, "lib.trace(x0)"), Sample(((2, 4),), {}, "x0.trace()"),
                       Sample(((4, 2),), {}, "x0.trace()")])
NANSUM = defop("nansum", "NansumBackward0", 1, replay=kernels.nansum_fw, replay_f32=True,
               kernel=kernels.nansum_bw, saves=("x0",),
               samples=[Sample((s,), kw, "lib.nansum(x0, **kw)") for s, kw in
                        [((), {}), ((5,), {}), ((3, 4), {"dim": 0}),
                         ((2, 3, 4), {"dim": (0, 2), "keepdim": True})]] +
               [Sample(((3, 4),), {}, "lib.nansum(lib.log(x0), 1)")])


def _promoted_for_scan(x, dtype):
    """torch's dtype of a cumulative sum or product: the one asked for, else integers and
    bools in int64."""
    if dtype is not None:
        return to_dtype(x, dtypes.as_dtype(dtype))
    if not x.dtype.is_floating_point and x.dtype is not dtypes.int64:
        return to_dtype(x, dtypes.int64)
    return x


def _scan(op, x, dim, numpy_fn):
    d = _wrap(dim, x.ndim)
    data = np.asarray(x._data)
    if x.dtype.is_floating_point:
        value = replay_value(op, (data,), data.size, data.dtype, (d,)).reshape(data.shape)
    else:
        value = numpy_fn(data.reshape(data.shape or (1,)), axis=d).reshape(data.shape)
    return record(op, value, (x,), (d,))


def cumsum(input, dim, *, dtype=None):
    """The cumulative sum along ``dim``.

    Same as ``torch.cumsum``.
    """
    return _scan(CUMSUM, _promoted_for_scan(input, dtype), dim, np.cumsum)


def cumprod(input, dim, *, dtype=None):
    """The cumulative product along ``dim``.

    Same as ``torch.cumprod``.
    """
    return _scan(CUMPROD, _promoted_for_scan(input, dtype), dim, np.cumprod)


def logcumsumexp(input, dim):
    """``log(cumsum(exp(x)))`` along ``dim``, computed without overflow.

    Same as ``torch.logcumsumexp``.
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{input.dtype.scalar_name}'")
    return _scan(LOGCUMSUMEXP, input, dim, None)


def _reversed(t, d):
    """``t`` reversed along dim ``d`` (a gather: differentiable)."""
    if t.ndim == 0:
        return t
    n = t.shape[d]
    return index_select(t, d, _make(np.arange(n - 1, -1, -1, dtype=np.int64)))


def reverse_cumsum(t, d):
    return _reversed(cumsum(_reversed(t, d), d), d)


@vjp_rule(CUMSUM)
def _cumsum_vjp(ctx, g):
    return [reverse_cumsum(g, int(ctx.iat[0]))]


@vjp_rule(CUMPROD)
def _cumprod_vjp(ctx, g):
    # gx_i = prod_{q < i} x_q * sum_{j >= i} g_j prod_{i < q <= j} x_q: no division, so
    # zeros need no case of their own; the (n, n) products per line, with ops that have rules
    x, d = ctx.x(0), int(ctx.iat[0])
    if x.ndim == 0:
        return [g]
    n = x.shape[d]
    x, g = transpose(x, d, -1), transpose(g, d, -1)
    i, j = np.indices((n, n))
    rows = expand(unsqueeze(x, -2), *x.shape[:-1], n, n)  # rows[.., i, j] = x_j
    after = cumprod(where(const(j > i, bool), rows, 1.0), -1)  # prod_{i < q <= j} x_q
    s = (where(const(j >= i, bool), after, 0.0) * unsqueeze(g, -2)).sum(-1)
    ones = const(np.ones(x.shape[:-1] + (1,)), ctx.dtypes[0])
    before = cumprod(cat([ones, narrow(x, -1, 0, n - 1)], -1), -1)  # prod_{q < i} x_q
    return [transpose(before * s, d, -1)]


@vjp_rule(LOGCUMSUMEXP)
def _logcumsumexp_vjp(ctx, g):
    x, y = ctx.x(0), ctx.y
    return [exp(x) * reverse_cumsum(g * exp(-y), int(ctx.iat[0]))]


def trace(input):
    """The sum of the main diagonal of a matrix.

    Same as ``torch.trace``.

    Args:
        input: a 2-D tensor.

    Returns:
        A 0-d tensor; integer input sums as int64.
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if not input.dtype.is_floating_point and input.dtype is not dtypes.int64:
        input = to_dtype(input, dtypes.int64)
    data = np.asarray(input._data)
    if input.dtype.is_floating_point:
        value = replay_value(TRACE, (data,), 1, data.dtype)[0]
    else:
        value = np.trace(data)
    return record(TRACE, np.asarray(value, data.dtype)[()], (input,))


@vjp_rule(TRACE)
def _trace_vjp(ctx, g):
    n, m = ctx.shapes[0]
    return [expand(reshape(g, (1, 1)), n, m) * const(np.eye(n, m), ctx.dtypes[0])]


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum with NaN counted as zero, of all elements or over ``dim``.

    Same as ``torch.nansum``.
    """
    if dtype is not None:
        input = to_dtype(input, dtypes.as_dtype(dtype))
    elif not input.dtype.is_floating_point and input.dtype is not dtypes.int64:
        input = to_dtype(input, dtypes.int64)
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None
    dims = reductions._dims(dim, input.ndim, "nansum")
    kept = reductions._kept(input.shape, dims)
    data = np.asarray(input._data)
    if input.dtype.is_floating_point:
        value = replay_value(NANSUM, (data,), int(np.prod(kept)), data.dtype, kept)
    else:
        value = np.sum(data, axis=dims)
    return reductions._reduce(NANSUM, input, dims, keepdim, value)


@vjp_rule(NANSUM)
def _nansum_vjp(ctx, g):
    x = np.asarray(ctx.x(0)._data)
    grad = expand_kept(g, ctx.iat, ctx.shapes[0])
    return [where(const(~np.isnan(x), bool), grad, 0.0)]

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"cumprod": "one", "cumsum": "one", "logcumsumexp": "one", "nansum": "one"}
