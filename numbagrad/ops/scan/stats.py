"""Two statistics at once: std_mean, var_mean and aminmax; and dist. torch computes each pair in one
node; here each output has a node of its own, named as torch's, with the kernels, replay and
derivative rule of the single statistic (reduce.py's records)."""

import numpy as np

from ... import dtypes
from ...engine.record import broadcast_shapes, record, replay_value
from ...engine.registry import Sample, defop, vjp_rule
from ...tensor import Tensor, _make  # noqa: F401
from ..elementwise import pointwise
from ..reduce import reductions
from ..vjp import VjpContext, unbroadcast
from . import kernels
from .select import aminmax_return


def _samples(call, cases):
    return [Sample((s,), kw, call) for s, kw in cases]


_STAT_CASES = [((5,), {}), ((3, 4), {"dim": 0}), ((2, 3, 4), {"dim": (0, 2), "keepdim": True}),
               ((3, 4), {"dim": 1, "correction": 0})]
STD_MEAN_STD = defop("std_mean_std", "StdMeanBackward0", 1, replay="std_fw", replay_f32=True,
                     kernel="std_bw", saves=("x0", "y"),
                     samples=_samples("lib.std_mean(x0, **kw)[0]", _STAT_CASES))
STD_MEAN_MEAN = defop("std_mean_mean", "StdMeanBackward0", 1, replay="mean_fw",
                      replay_f32=True, kernel="sum_bw",
                      samples=_samples("lib.std_mean(x0, **kw)[1]", _STAT_CASES[:2]))
VAR_MEAN_VAR = defop("var_mean_var", "VarMeanBackward0", 1, replay="var_fw", replay_f32=True,
                     kernel="var_bw", saves=("x0",),
                     samples=_samples("lib.var_mean(x0, **kw)[0]", _STAT_CASES))
VAR_MEAN_MEAN = defop("var_mean_mean", "VarMeanBackward0", 1, replay="mean_fw",
                      replay_f32=True, kernel="sum_bw",
                      samples=_samples("lib.var_mean(x0, **kw)[1]", _STAT_CASES[1:3]))
_MINMAX_CASES = [((5,), {}), ((3, 4), {"dim": 0}), ((2, 3, 4), {"dim": -1, "keepdim": True})]
AMINMAX_MIN = defop("aminmax_min", "AminmaxBackward0", 1, replay="amin_fw", kernel="amax_bw",
                    saves=("x0", "y"),
                    samples=_samples("lib.aminmax(x0, **kw)[0]", _MINMAX_CASES))
AMINMAX_MAX = defop("aminmax_max", "AminmaxBackward0", 1, replay="amax_fw", kernel="amax_bw",
                    saves=("x0", "y"),
                    samples=_samples("lib.aminmax(x0, **kw)[1]", _MINMAX_CASES))

vjp_rule(STD_MEAN_STD)(reductions.STD.vjp)
vjp_rule(VAR_MEAN_VAR)(reductions.VAR.vjp)
vjp_rule(STD_MEAN_MEAN, VAR_MEAN_MEAN)(reductions.MEAN_DIM.vjp)
vjp_rule(AMINMAX_MIN, AMINMAX_MAX)(reductions.AMAX.vjp)


def _spread_and_mean(x, dim, unbiased, keepdim, correction, name, ops):
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if isinstance(dim, bool):  # the (input, unbiased) form
        dim, unbiased = None, dim
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None
    c = reductions._correction(unbiased, correction)
    dims = reductions._dims(dim, x.ndim, name)
    n = int(np.prod([x.shape[d] for d in dims])) if dims else 1
    spread_op, mean_op = ops
    spread_fat = (c,) if spread_op is STD_MEAN_STD else (c, 1.0 if dim is None or x.ndim == 0
                                                          else 0.0)
    mean_fat = (1.0 / n if n else np.nan,)
    if n:
        spread = reductions._group_value(spread_op, x, dims, spread_fat)
        mean = reductions._group_value(mean_op, x, dims, mean_fat)
    else:
        spread = mean = np.full(reductions._kept(x.shape, dims), np.nan, x._data.dtype)
    return (reductions._reduce(spread_op, x, dims, keepdim, spread, spread_fat),
            reductions._reduce(mean_op, x, dims, keepdim, mean, mean_fat))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The standard deviation and the mean over ``dim``, as a tuple.

    Same as ``torch.std_mean``.
    """
    return _spread_and_mean(input, dim, unbiased, keepdim, correction, "std_mean",
                            (STD_MEAN_STD, STD_MEAN_MEAN))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The variance and the mean over ``dim``, as a tuple.

    Same as ``torch.var_mean``.
    """
    return _spread_and_mean(input, dim, unbiased, keepdim, correction, "var_mean",
                            (VAR_MEAN_VAR, VAR_MEAN_MEAN))


def aminmax(input, *, dim=None, keepdim=False):
    """The smallest and the largest values, of all or along ``dim``, as ``(min, max)``.

    Same as ``torch.aminmax``.
    """
    data = np.asarray(input._data)
    if dim is None:
        if data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dims = tuple(range(input.ndim))
    else:
        dims = reductions._dims(dim, input.ndim, "aminmax")
        if input.ndim and input.shape[dims[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero size.")
    lo = np.amin(data, axis=dims, keepdims=keepdim)
    hi = np.amax(data, axis=dims, keepdims=keepdim)
    return aminmax_return(reductions._reduce(AMINMAX_MIN, input, dims, keepdim, lo),
                          reductions._reduce(AMINMAX_MAX, input, dims, keepdim, hi))


DIST = defop("dist", "DistBackward0", 2, replay=kernels.dist_fw, replay_f32=True,
             kernel=kernels.dist_bw, saves=("x0", "x1", "y"),
             samples=[Sample(((4,), (4,)), {}), Sample(((2, 3), (3,)), {"p": 1}),
                      Sample(((3, 1), (1, 2)), {"p": 3.0}),
                      Sample(((2, 3), (2, 3)), {"p": float("inf")}),
                      Sample(((5,), ()), {"p": 0.5})])


def dist(input, other, p=2):
    """The ``p``-norm of ``x - other``.

    Same as ``torch.dist``.
    """
    input, other = _promoted(input, other)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {input.dtype.scalar_name} instead.")
    shape = broadcast_shapes(input.shape, other.shape)
    a, b = np.asarray(input._data), np.asarray(other._data)
    dt = a.dtype
    fat = (float(p), 1.0 if dt == np.float32 else 0.0)
    value = replay_value(DIST, (a, b), 1, dt, shape, fat)
    return record(DIST, np.asarray(value[0], dt)[()], (input, other), shape, fat)


def _promoted(x, other):
    dt = dtypes.promote(x.dtype, other.dtype)
    return pointwise.to_dtype(x, dt), pointwise.to_dtype(other, dt)


@vjp_rule(DIST)
def _dist_vjp(ctx, g):
    # torch's norm_backward of x0 - x1 (the norm's rule, on that difference), split
    a, b = ctx.x(0), ctx.x(1)
    shape = tuple(ctx.iat)
    diff = a - b
    dt = ctx.dtypes[0]
    norm_ctx = VjpContext(reductions.NORM, [lambda: diff], lambda: ctx.y, (1,) * len(shape),
                          ctx.fat[:1], (), [shape], [True], [dt])
    gd = reductions.NORM.vjp(norm_ctx, g)[0]
    if gd is None:
        return [None, None]
    return [unbroadcast(gd, ctx.shapes[0]) if ctx.needs[0] else None,
            -unbroadcast(gd, ctx.shapes[1]) if ctx.needs[1] else None]

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"aminmax": "several", "std_mean": "several", "var_mean": "several"}
