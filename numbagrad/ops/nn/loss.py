"""torch.nn.functional's pointwise losses: fused table ops where torch has a fused kernel
(mse_loss, smooth_l1_loss, huber_loss, binary_cross_entropy(_with_logits)), compositions of
table ops where torch composes (l1_loss), so grad_fn names match torch 2.13's for every
reduction and option (nll_loss, cross_entropy and kl_div: nll_loss.py).

Attributes of the fused nodes (``iat``/``fat``):

* pointwise losses: ``iat = [reduction, ...]`` (0 none, 1 mean, 2 sum), ``fat = [scale, ...]``
  where ``scale`` multiplies the upstream gradient of a reduced loss (1/n for mean, 1 for sum);
  smooth_l1 / huber keep beta / delta in ``fat[1]``; the BCE weights are stored raw (with their
  shapes in ``iat``) and broadcast over the input inside the kernels.
"""

import math

import numpy as np
from numba import njit

from ... import dtypes
from ...engine.record import record, replay_value, shape_error_broadcast
from ...engine.registry import Sample, defop, vjp_rule
from ...tensor import _make
from ..elementwise.forward import torch_layout
from ..elementwise.pointwise import clamp, minimum, where
from ..elementwise.pointwise import pow as _pow
from ..elementwise.public import abs as _abs
from ..elementwise.public import exp, log, log1p, neg, sigmoid, sign
from ..kernel_helpers import bcast_index
from ..reduce.reductions import mean as _mean
from ..reduce.reductions import sum as _sum
from ..vjp import const
from .loss_common import (
    _F,
    _MEAN,
    _NONE,
    _SUM,
    _as,
    _broadcast_shapes_ref,
    _broadcast_tensors,
    _fat,
    _g,
    _get_enum,
    _in_place_shape,
    _legacy,
    _not_differentiable,
    _out,
    _reduce_value,
    _s,
    _scale,
    _tensor_arguments,
    _warn_size,
)

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits"]

_BCE_EPS = 9.999999960041972e-13  # torch's float EPSILON = 1e-12 in its BCE backward


# ---- backward kernels (the sweep's fixed signatures; they ADD into gx) -------------------
@njit(cache=True, error_model="numpy")
def mse_loss_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1, iat, fat):
    # loss = (x0 - x1)^2; iat = [reduction], fat = [scale]
    red = iat[0]
    s = g[0] * fat[0] if red != 0 else 0.0
    for k in range(x0.shape[0]):
        gk = g[k] if red == 0 else s
        v = 2.0 * (x0[k] - x1[k]) * gk
        if need0:
            gx0[k] += v
        if need1:
            gx1[k] -= v


@njit(cache=True, error_model="numpy")
def smooth_l1_loss_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1, iat, fat):
    # iat = [reduction], fat = [scale, beta > 0]
    red = iat[0]
    beta = fat[1]
    s = g[0] * fat[0] if red != 0 else 0.0
    for k in range(x0.shape[0]):
        gk = g[k] if red == 0 else s
        d = x0[k] - x1[k]
        if d <= -beta:
            v = -gk
        elif d >= beta:
            v = gk
        else:
            v = d * gk / beta
        if need0:
            gx0[k] += v
        if need1:
            gx1[k] -= v


@njit(cache=True, error_model="numpy")
def huber_loss_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1, iat, fat):
    # iat = [reduction], fat = [scale, delta > 0]
    red = iat[0]
    delta = fat[1]
    s = g[0] * fat[0] if red != 0 else 0.0
    for k in range(x0.shape[0]):
        gk = g[k] if red == 0 else s
        d = x0[k] - x1[k]
        if d <= -delta:
            v = -delta * gk
        elif d >= delta:
            v = delta * gk
        else:
            v = d * gk
        if need0:
            gx0[k] += v
        if need1:
            gx1[k] -= v


@njit(cache=True, error_model="numpy")
def binary_cross_entropy_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1, iat, fat):
    # iat = [reduction, ndim of weight (-1: none), weight shape...], fat = [scale, weight...]
    red = iat[0]
    wnd = iat[1]
    s = g[0] * fat[0] if red != 0 else 0.0
    if wnd >= 0:
        wi = bcast_index(iat[2:2 + wnd], sh0)
    else:
        wi = np.zeros(0, np.int64)
    for k in range(x0.shape[0]):
        gk = g[k] if red == 0 else s
        if wnd >= 0:
            gk = gk * fat[1 + wi[k]]
        x = x0[k]
        if need0:
            gx0[k] += gk * (x - x1[k]) / max((1.0 - x) * x, _BCE_EPS)
        if need1:
            gx1[k] += gk * (math.log1p(-x) - math.log(x))


@njit(cache=True, error_model="numpy")
def binary_cross_entropy_with_logits_bw(g, y, x0, x1, gx0, gx1, sh_y, sh0, sh1, need0, need1,
                                        iat, fat):
    # iat = [reduction, ndim of weight, ndim of pos_weight (-1: none), their shapes...],
    # fat = [scale, weight..., pos_weight...]
    red = iat[0]
    wnd = iat[1]
    pnd = iat[2]
    nw = max(wnd, 0)
    wsh = iat[3:3 + nw]
    psh = iat[3 + nw:3 + nw + max(pnd, 0)]
    wsize = 0
    if wnd >= 0:
        wsize = 1
        for d in range(nw):
            wsize *= wsh[d]
        wi = bcast_index(wsh, sh0)
    else:
        wi = np.zeros(0, np.int64)
    if pnd >= 0:
        pi = bcast_index(psh, sh0)
    else:
        pi = np.zeros(0, np.int64)
    s = g[0] * fat[0] if red != 0 else 0.0
    for k in range(x0.shape[0]):
        gk = g[k] if red == 0 else s
        if wnd >= 0:
            gk = gk * fat[1 + wi[k]]
        x = x0[k]
        t = x1[k]
        # sigmoid(x) and log(sigmoid(x)), stable for either sign: exp only sees -|x|
        if x >= 0.0:
            e = math.exp(-x)
            sig = 1.0 / (1.0 + e)
            ls = -math.log1p(e)
        else:
            e = math.exp(x)
            sig = e / (1.0 + e)
            ls = x - math.log1p(e)
        if pnd >= 0:
            p = fat[1 + wsize + pi[k]]
            if need0:
                gx0[k] += gk * ((p * t + 1.0 - t) * sig - p * t)
            if need1:
                gx1[k] += gk * ((ls - x) - p * ls)
        else:
            if need0:
                gx0[k] += gk * (sig - t)
            if need1:
                gx1[k] -= gk * x


MSE_LOSS = defop(
    "mse_loss", "MseLossBackward0", 2, replay="mse_loss_fw", replay_f32=True, kernel=mse_loss_bw,
    saves=("x0", "x1"),
    samples=_s(((3, 4), (3, 4)), _F + "mse_loss(x0, x1, **kw)")
    + [Sample(((), ()), {}, _F + "mse_loss(x0, x1)"),
       Sample(((1,), (1,)), {"reduction": "sum"}, _F + "mse_loss(x0, x1, **kw)")])
SMOOTH_L1_LOSS = defop(
    "smooth_l1_loss", "SmoothL1LossBackward0", 2, replay="smooth_l1_loss_fw", replay_f32=True,
    kernel=smooth_l1_loss_bw,
    saves=("x0", "x1"),
    samples=_s(((3, 4), (3, 4)), _F + "smooth_l1_loss(x0, x1, **kw)")
    + _s(((6,), (6,)), _F + "smooth_l1_loss(x0, x1, beta=0.5, **kw)", ({}, {"reduction": "none"})))
HUBER_LOSS = defop(
    "huber_loss", "HuberLossBackward0", 2, replay="huber_loss_fw", replay_f32=True,
    kernel=huber_loss_bw,
    saves=("x0", "x1"),
    samples=_s(((3, 4), (3, 4)), _F + "huber_loss(x0, x1, **kw)")
    + _s(((6,), (6,)), _F + "huber_loss(x0, x1, delta=0.5, **kw)", ({}, {"reduction": "none"})))
_W4 = "lib.tensor([0.5, 1.0, 2.0, 1.5], dtype=x0.dtype)"
_W31 = "lib.tensor([[0.5], [2.0], [1.0]], dtype=x0.dtype)"
BINARY_CROSS_ENTROPY = defop(
    "binary_cross_entropy", "BinaryCrossEntropyBackward0", 2, replay="binary_cross_entropy_fw",
    kernel=binary_cross_entropy_bw,
    saves=("x0", "x1"), domain=(0.05, 0.95),
    samples=_s(((3, 4), (3, 4)), _F + "binary_cross_entropy(x0, x1, **kw)")
    + [Sample(((3, 4), (3, 4)), {}, _F + f"binary_cross_entropy(x0, x1, weight={_W4})"),
       Sample(((3, 4), (3, 4)), {"reduction": "none"},
              _F + f"binary_cross_entropy(x0, x1, {_W31}, **kw)"),
       Sample(((), ()), {}, _F + "binary_cross_entropy(x0, x1)")])
BINARY_CROSS_ENTROPY_WITH_LOGITS = defop(
    "binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0", 2,
    replay="binary_cross_entropy_with_logits_fw", replay_f32=True,
    kernel=binary_cross_entropy_with_logits_bw,
    saves=("x0", "x1"),
    samples=_s(((3, 4), (3, 4)), _F + "binary_cross_entropy_with_logits(x0, x1, **kw)")
    + [Sample(((3, 4), (3, 4)), {"reduction": "none"},
              _F + f"binary_cross_entropy_with_logits(x0, x1, pos_weight={_W4}, **kw)"),
       Sample(((3, 4), (3, 4)), {},
              _F + f"binary_cross_entropy_with_logits(x0, x1, {_W31}, pos_weight={_W4})"),
       Sample(((3, 4), (3, 4)), {"reduction": "sum"},
              _F + f"binary_cross_entropy_with_logits(x0, x1, weight={_W4}, **kw)")])


# ---- the fused pointwise losses ------------------------------------------------------------
def _pointwise(op, kernel_name, input, target, red, param=None, out_input_dtype=False):  # noqa: A002
    """Record ``op`` on same-shape ``input``/``target`` (already broadcast)."""
    ct = dtypes.promote(input.dtype, target.dtype)
    if not ct.is_floating_point:
        raise NotImplementedError(f'"{kernel_name}" not implemented for \'{ct.scalar_name}\'')
    if out_input_dtype and not input.dtype.is_floating_point:
        raise RuntimeError(f"result type {ct.scalar_name} can't be cast to the desired output type "
                           f"{input.dtype.scalar_name}")
    x, t = _as(input, ct), _as(target, ct)
    xv, tv = np.asarray(x._data), np.asarray(t._data)
    n = xv.size
    fat = (_scale(red, n),) if param is None else (_scale(red, n), float(param))
    # the replay kernel's value (record.replay_value): eager and replay agree to the bit
    value = replay_value(op, (xv, tv), n if red == _NONE else 1, ct.np, (red,), fat)
    out_dt = input.dtype if out_input_dtype else ct
    # (unreduced: laid out as torch's elementwise kernel lays it out from strided operands)
    value = torch_layout(value.reshape(xv.shape), (xv, tv)) if red == _NONE else value[0]
    value = np.asarray(value).astype(out_dt.np)
    return record(op, value if value.ndim else value[()], (x, t), (red,), fat)


@_tensor_arguments("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
             weight=None):
    """The mean (or sum) squared error between ``input`` and ``target``.

    Same as ``torch.nn.functional.mse_loss``.
    """
    _warn_size(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    x, t = _broadcast_tensors(input, target)
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        weighted = _pow(x - t, 2) * weight
        return _weighted_reduction(weighted, reduction, lambda v: _sum(v) / _sum(weight))
    return _pointwise(MSE_LOSS, "mse_cpu", x, t, _get_enum(reduction))


def _weighted_reduction(weighted, reduction, mean):
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _sum(weighted)
    if reduction == "mean":
        return mean(weighted)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


@_tensor_arguments("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
            weight=None):
    """The mean (or sum) absolute error between ``input`` and ``target``.

    Same as ``torch.nn.functional.l1_loss``.
    """
    _warn_size(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    x, t = _broadcast_tensors(input, target)
    return _l1(x, t, reduction, weight, input)


def _l1(x, t, reduction, weight=None, input=None):  # noqa: A002
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        _check_bool_sub(x, t)
        weighted = _abs(x - t) * weight
        return _weighted_reduction(weighted, reduction, lambda v: _sum(v) / _sum(weight))
    red = _get_enum(reduction)
    _check_bool_sub(x, t)
    out = _abs(x - t)
    if red == _MEAN:
        return _mean(out)
    if red == _SUM:
        return _sum(out)
    return out


def _check_bool_sub(x, t):
    bools = (x.dtype is dtypes.bool_) + (t.dtype is dtypes.bool_)
    if bools == 2:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if bools == 1:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


@_tensor_arguments("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
                   beta=1.0):
    """Smooth L1 loss: ``0.5 * d ** 2 / beta`` where ``|d| < beta``, else ``|d| - beta / 2``.

    Same as ``torch.nn.functional.smooth_l1_loss``.
    """
    _warn_size(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    x, t = _broadcast_tensors(input, target)
    if beta == 0.0:
        return _l1(x, t, reduction)
    red = _get_enum(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _pointwise(SMOOTH_L1_LOSS, "smooth_l1_cpu", x, t, red, float(beta))


@_tensor_arguments("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):  # noqa: A002
    """The Huber loss: squared error below ``delta``, ``delta``-scaled absolute error above.

    Same as ``torch.nn.functional.huber_loss``.
    """
    _warn_size(input, target)
    x, t = _broadcast_tensors(input, target)

    def fused(red):
        if delta <= 0:
            raise RuntimeError("huber_loss does not support non-positive values for delta.")
        return _pointwise(HUBER_LOSS, "huber_cpu", x, t, red, float(delta), out_input_dtype=True)

    if weight is None:
        return fused(_get_enum(reduction))
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    return _weighted_reduction(fused(_NONE) * weight, reduction, _mean)


# ---- binary cross entropy --------------------------------------------------------------------
@_tensor_arguments("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                         reduction="mean"):
    """The binary cross entropy between probabilities ``input`` and ``target``.

    Same as ``torch.nn.functional.binary_cross_entropy``.
    """
    red = _get_enum(_legacy(size_average, reduce, reduction))
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the same "
                         "size.")
    wshape = None
    if weight is not None:
        wshape = _broadcast_shapes_ref(tuple(target.shape), tuple(weight.shape))
    _not_differentiable("binary_cross_entropy", "weight", weight)
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype.scalar_name} but expected "
                           f"{input.dtype.scalar_name}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    dt = input.dtype.np
    xv, tv = np.asarray(input._data), np.asarray(target._data)
    bad_x = ~((xv >= 0) & (xv <= 1))
    bad_t = ~((tv >= 0) & (tv <= 1))
    bad = np.flatnonzero(bad_x | bad_t)
    if bad.size:
        which = "input" if bad_x.reshape(-1)[bad[0]] else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (tv - 1) * np.maximum(np.log1p(-xv), dt.type(-100)) \
            - tv * np.maximum(np.log(xv), dt.type(-100))
    value = torch_layout(value, (xv, tv))  # (as torch's elementwise kernel, unreduced)
    iat, wv = [red, -1], ()
    if weight is not None:
        w = np.asarray(weight._data)
        _in_place_shape(input.shape, wshape)
        value = value * np.broadcast_to(w, wshape).astype(dt)
        iat = [red, w.ndim, *w.shape]
        wv = (w,)
    value, scale = _reduce_value(value, red, input.dtype)
    return record(BINARY_CROSS_ENTROPY, value if value.ndim else value[()], (input, target),
                  iat, _fat(scale, *wv))


@_tensor_arguments("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,  # noqa: A002
                                     reduce=None, reduction="mean", pos_weight=None):
    """The binary cross entropy of ``sigmoid(input)`` and ``target``, computed stably.

    Same as ``torch.nn.functional.binary_cross_entropy_with_logits``.
    """
    red = _get_enum(_legacy(size_average, reduce, reduction))
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    fn = "binary_cross_entropy_with_logits"
    _not_differentiable(fn, "weight", weight)
    _not_differentiable(fn, "pos_weight", pos_weight)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    shape = tuple(input.shape)
    if pos_weight is not None:  # (pos_weight - 1) * target, then log_sigmoid *= that
        err = shape_error_broadcast(tuple(pos_weight.shape), shape)
        if err is not None:
            raise err
        _in_place_shape(shape, np.broadcast_shapes(tuple(pos_weight.shape), shape))
    if target.dtype is dtypes.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"result type {input.dtype.scalar_name} can't be cast to the desired "
                           f"output type {target.dtype.scalar_name}")
    if weight is not None:
        _in_place_shape(shape, tuple(weight.shape))
    ct = dtypes.promote(input.dtype, target.dtype)
    x, t = np.asarray(input._data), np.asarray(target._data)
    iat, parts = [red, -1, -1], []
    if pos_weight is not None:
        pw = np.asarray(pos_weight._data)
        iat[2] = pw.ndim
    if weight is not None:
        w = np.asarray(weight._data)
        iat[1] = w.ndim
        iat += list(w.shape)
        parts.append(w)
    if pos_weight is not None:
        iat += list(pw.shape)
        parts.append(pw)
    n = x.size
    fat = _fat(_scale(red, n), *parts)
    # (1 - t) * x - log_sigmoid(x) [* ((pos_weight - 1) * t + 1)] [* weight], by the replay
    # kernel (record.replay_value): eager and replay agree to the bit
    value = replay_value(BINARY_CROSS_ENTROPY_WITH_LOGITS, (x, t), n if red == _NONE else 1,
                         ct.np, iat, fat)
    value = value.reshape(x.shape) if red == _NONE else value[0]
    value = np.asarray(value).astype(target.dtype.np)  # torch computes in target's buffer
    return record(BINARY_CROSS_ENTROPY_WITH_LOGITS, value if value.ndim else value[()],
                  (input, target), iat, fat)


@vjp_rule(MSE_LOSS)
def _mse_vjp(ctx, g):
    r = _g(ctx, g) * (ctx.x(0) - ctx.x(1)) * 2.0
    return _out(ctx, lambda: r, lambda: -r)


@vjp_rule(SMOOTH_L1_LOSS, HUBER_LOSS)
def _smooth_vjp(ctx, g):
    d = ctx.x(0) - ctx.x(1)
    p = ctx.fat[1]
    inside = _make(np.abs(np.asarray(d._data)) < p)
    if ctx.op is SMOOTH_L1_LOSS:
        slope = where(inside, d / p, sign(d))
    else:
        slope = where(inside, d, sign(d) * p)
    r = _g(ctx, g) * slope
    return _out(ctx, lambda: r, lambda: -r)


def _weights(ctx, shape, dt):
    """(weight, pos_weight) of a BCE node as constants broadcast to ``shape`` (or None)."""
    iat, fat = [int(v) for v in ctx.iat], np.asarray(ctx.fat[1:], np.float64)
    if ctx.op is BINARY_CROSS_ENTROPY:
        shapes = [tuple(iat[2:2 + iat[1]]) if iat[1] >= 0 else None, None]
    else:
        nw = max(iat[1], 0)
        shapes = [tuple(iat[3:3 + nw]) if iat[1] >= 0 else None,
                  tuple(iat[3 + nw:3 + nw + max(iat[2], 0)]) if iat[2] >= 0 else None]
    out, off = [], 0
    for s in shapes:
        if s is None:
            out.append(None)
            continue
        n = int(np.prod(s)) if s else 1
        out.append(const(np.broadcast_to(fat[off:off + n].reshape(s), shape).astype(dt), dt))
        off += n
    return out


@vjp_rule(BINARY_CROSS_ENTROPY)
def _bce_vjp(ctx, g):
    x, t = ctx.x(0), ctx.x(1)
    gs = _g(ctx, g)
    w, _ = _weights(ctx, tuple(ctx.shapes[0]), np.asarray(x._data).dtype)
    if w is not None:
        gs = gs * w
    return _out(ctx, lambda: gs * (x - t) / clamp((1 - x) * x, min=_BCE_EPS),
                lambda: gs * (log1p(neg(x)) - log(x)))


def _log_sigmoid(x):
    return minimum(x, 0.0) - log1p(exp(neg(_abs(x))))


@vjp_rule(BINARY_CROSS_ENTROPY_WITH_LOGITS)
def _bce_logits_vjp(ctx, g):
    x, t = ctx.x(0), ctx.x(1)
    gs = _g(ctx, g)
    dt = np.result_type(np.asarray(x._data).dtype, np.asarray(t._data).dtype)
    w, pw = _weights(ctx, tuple(ctx.shapes[0]), dt)
    if w is not None:
        gs = gs * w
    if pw is None:
        return _out(ctx, lambda: gs * (sigmoid(x) - t), lambda: -(gs * x))

    def gx():
        pt = pw * t
        return gs * ((pt + 1 - t) * sigmoid(x) - pt)

    def gt():
        ls = _log_sigmoid(x)
        return gs * ((ls - x) - pw * ls)

    return _out(ctx, gx, gt)


