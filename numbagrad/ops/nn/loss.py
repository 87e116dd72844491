"""torch.nn.functional's losses: fused table ops where torch has a fused kernel (mse_loss,
smooth_l1_loss, huber_loss, binary_cross_entropy(_with_logits), nll_loss), compositions of
table ops where torch composes (l1_loss, kl_div, cross_entropy), so grad_fn names match
torch 2.13's for every reduction and option.

Attributes of the fused nodes (``iat``/``fat``):

* pointwise losses: ``iat = [reduction, ...]`` (0 none, 1 mean, 2 sum), ``fat = [scale, ...]``
  where ``scale`` multiplies the upstream gradient of a reduced loss (1/n for mean, 1 for sum);
  smooth_l1 / huber keep beta / delta in ``fat[1]``; the BCE weights are stored raw (with their
  shapes in ``iat``) and broadcast over the input inside the kernels.
* nll_loss: ``iat = [reduction, position of each sample's chosen log-probability in the
  input (-1 when ignored)..., class of each sample...]``, ``fat = [scale, class weights...]``
  (scale = 1 / total weight for mean); the integer target is an attribute, not an input.
"""

import functools
import math
import warnings
from array import array

import numpy as np
from numba import njit

from ... import dtypes
from ...core import grad_mode, trace_guards
from ...engine.record import broadcast_shapes, record, replay_value, shape_error_broadcast
from ...engine.registry import Sample, defop, vjp_rule
from ...size import Size
from ...tensor import Tensor, _make
from ..elementwise.pointwise import abs as _abs
from ..elementwise.pointwise import (
    clamp,
    exp,
    log,
    log1p,
    masked_fill,
    minimum,
    neg,
    sigmoid,
    sign,
    to_dtype,
    torch_layout,
    unary,
    where,
)
from ..elementwise.pointwise import pow as _pow
from ..index.indexing import gather_flat, index_add_flat
from ..kernels import bcast_index
from ..reduce.reductions import LOG_SOFTMAX, log_softmax
from ..reduce.reductions import mean as _mean
from ..reduce.reductions import sum as _sum
from ..replay_kernels import log_softmax_fw, nll_loss_fw
from ..shape.movement import expand, view
from ..vjp import const

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy", "kl_div"]

_NONE, _MEAN, _SUM = 0, 1, 2
_NO_FAT = np.empty(0)  # a kernel's float attributes when it has none
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


@njit(cache=True, error_model="numpy")
def nll_loss_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # iat = [reduction, positions (-1: ignored)..., classes...], fat = [scale, class weights...]
    red = iat[0]
    m = (iat.shape[0] - 1) // 2
    weighted = fat.shape[0] > 1
    s = g[0] * fat[0] if red != 0 else 0.0
    for i in range(m):
        p = iat[1 + i]
        if p < 0:
            continue
        gk = g[i] if red == 0 else s
        w = fat[1 + iat[1 + m + i]] if weighted else 1.0
        gx0[p] -= w * gk


# ---- the table -------------------------------------------------------------------------------
_F = "lib.nn.functional."
_RED = ({"reduction": "none"}, {}, {"reduction": "sum"})


def _s(shapes, call, kws=_RED):
    return [Sample(shapes, kw, call) for kw in kws]


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
_T3 = "lib.tensor([1, 0, 4])"
_W5 = "lib.tensor([0.5, 1.0, 2.0, 1.5, 3.0], dtype=x0.dtype)"
NLL_LOSS = defop(
    "nll_loss", "NllLossBackward0", 1, replay="nll_loss_fw", replay_f32=True, kernel=nll_loss_bw,
    saves=("x0",),
    samples=_s(((3, 5),), _F + f"nll_loss(x0, {_T3}, **kw)")
    + _s(((3, 5),), _F + f"nll_loss(x0, lib.tensor([1, 3, 4]), {_W5}, ignore_index=3, **kw)")
    + [Sample(((5,),), {}, _F + "nll_loss(x0, lib.tensor(2))"),
       Sample(((5,),), {"reduction": "none"}, _F + f"nll_loss(x0, lib.tensor(4), {_W5}, **kw)"),
       Sample(((3, 5),), {}, _F + f"cross_entropy(x0, {_T3})"),
       Sample(((3, 5),), {"reduction": "sum"}, _F + f"cross_entropy(x0, {_T3}, {_W5}, **kw)")])
NLL_LOSS2D = defop(
    "nll_loss2d", "NllLoss2DBackward0", 1, replay="nll_loss_fw", replay_f32=True,
    kernel=nll_loss_bw, saves=("x0",),
    samples=_s(((2, 3, 2, 2),), _F + "nll_loss(x0, lib.tensor([[[0, 2], [1, 1]], [[2, 0], "
                                     "[0, 1]]]), ignore_index=1, **kw)")
    + _s(((2, 3, 4),), _F + "nll_loss(x0, lib.tensor([[0, 2, 1, 1], [2, 0, 0, 1]]), **kw)")
    + [Sample(((2, 3, 2),), {}, _F + "cross_entropy(x0, lib.tensor([[0, 2], [1, 1]]))")])
# torch's cross_entropy with class probabilities divides by the sample count as a SymInt:
# div(Tensor, Scalar), DivBackward1. f0 is the count.
DIV_COUNT = defop(
    "loss_div_count", "DivBackward1", 1, forward=lambda a, c: a / a.dtype.type(c),
    grads=("g / f0",), fwd="a / f0",
    samples=[Sample(((3, 5), (3, 5)), {}, _F + "cross_entropy(x0, x1.softmax(1))"),
             Sample(((5,), (5,)), {}, _F + "cross_entropy(x0, x1.softmax(0))"),
             Sample(((2, 3, 2), (2, 3, 2)), {"label_smoothing": 0.2},
                    _F + "cross_entropy(x0, x1.softmax(1), **kw)"),
             Sample(((3, 5), (3, 5)), {}, _F + f"cross_entropy(x0, x1.softmax(1), {_W5})")])


# ---- helpers -----------------------------------------------------------------------------
def _cfmt(v):
    """A double as C++'s ostream prints it (torch's messages)."""
    return f"{v:g}"


def _get_enum(reduction):
    if reduction == "none":
        return _NONE
    if reduction == "mean":
        return _MEAN
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=3)
        return _MEAN
    if reduction == "sum":
        return _SUM
    raise ValueError(f"{reduction} is not a valid value for reduction")



def _tensor_arguments(torch_name):
    """A loss's check that ``input`` and ``target`` are Tensors, with torch's TypeError
    (``torch_name`` is the name torch's message gives the function)."""
    def wrap(fn):
        @functools.wraps(fn)
        def checked(*args, **kwargs):
            for pos, name in enumerate(("input", "target")):
                x = args[pos] if pos < len(args) else kwargs.get(name)
                if not isinstance(x, Tensor):
                    kind = type(x)
                    kind = kind.__name__ if kind.__module__ == "builtins" else \
                        f"{kind.__module__.split('.')[0]}.{kind.__name__}"
                    raise TypeError(f"{torch_name}(): argument '{name}' (position {pos + 1}) "
                                    f"must be Tensor, not {kind}")
            return fn(*args, **kwargs)
        return checked
    return wrap


def legacy_get_string(size_average, reduce, emit_warning=True):
    """torch.nn._reduction.legacy_get_string: the deprecated flags as a reduction name."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _legacy(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return reduction


def _warn_size(input, target):  # noqa: A002 - torch's names
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _broadcast_tensors(a, b):
    """torch.broadcast_tensors for two tensors (ExpandBackward0 where a shape changes)."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    if sa == sb:
        return a, b
    shape = broadcast_shapes(sa, sb)
    return (a if sa == shape else expand(a, *shape)), (b if sb == shape else expand(b, *shape))


def _broadcast_shapes_ref(*shapes):
    """torch.broadcast_shapes (torch._refs): its messages name the offending argument."""
    common = [1] * max(len(s) for s in shapes)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                common[idx] = shape[idx]
            if shape[idx] == 1:
                continue
            if common[idx] != shape[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! "
                    f"Mismatching argument at index {arg_idx} had {Size(shape)}; but expected "
                    f"shape should be broadcastable to {common}")
    return tuple(common)


def _in_place_shape(out_shape, other_shape):
    """The shape check of an in-place ``out op= other`` (torch's messages)."""
    err = shape_error_broadcast(tuple(out_shape), tuple(other_shape))
    if err is not None:
        raise err
    full = tuple(np.broadcast_shapes(tuple(out_shape), tuple(other_shape)))
    if full != tuple(out_shape):
        raise RuntimeError(f"output with shape {list(out_shape)} doesn't match the broadcast "
                           f"shape {list(full)}")


def _not_differentiable(fn, arg, t):
    if t is not None and t.requires_grad and grad_mode.state.enabled:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")


def _as(t, dt):
    """``t`` in dtype ``dt``: float tensors keep their own dtype (the node mixes them, as
    torch's TensorIterator does), integer/bool tensors become constants of ``dt``."""
    if t.dtype.is_floating_point:
        return t
    return _make(np.asarray(t._data).astype(dt.np))


def _scale(red, n):
    """The gradient scale of a loss over ``n`` elements: 1 / n for a mean, else 1."""
    return (1.0 / n if n else np.nan) if red == _MEAN else 1.0


def _reduce_value(value, red, dt):
    """The loss's value for ``red``, and the gradient scale of a reduced loss."""
    value = np.asarray(value, dt.np)
    n = value.size
    if red == _NONE:
        return value, 1.0
    s = value.sum(dtype=dt.np)
    if red == _SUM:
        return dt.np.type(s), 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return dt.np.type(s / dt.np.type(n) if n else np.nan), _scale(red, n)


def _fat(*parts):
    out = array("d")
    for p in parts:
        if isinstance(p, np.ndarray):
            out.frombytes(np.ascontiguousarray(p, np.float64).reshape(-1).tobytes())
        else:
            out.append(float(p))
    return out


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


# ---- nll_loss --------------------------------------------------------------------------------
def _check_target_dtype(target):
    if target.dtype is not dtypes.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{target.dtype.scalar_name}")


def _nll_record(op, input, target, weight, red, ignore_index, out_shape, two_d):  # noqa: A002
    """The nll node on ``input`` (N, C, *d) or (C,): sample i of the flattened target picks
    input[n, target_i, s]; positions and classes go to ``iat``, class weights to ``fat``."""
    nc = input.shape[1] if input.ndim > 1 else input.shape[0]
    if not input.dtype.is_floating_point:
        frame = "nll_loss2d_forward_out_frame" if two_d else "nll_loss_out_frame"
        raise NotImplementedError(f"\"{frame}\" not implemented for '{input.dtype.scalar_name}'")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                           f"{weight.dtype.scalar_name}")
    t = np.ascontiguousarray(target._data, np.int64).reshape(-1)
    if input.ndim > 1:
        ns = t.size // input.shape[0] if input.shape[0] else 0  # samples per row: the *d
    else:
        ns = 1
    dt = input.dtype.np
    w_cls = np.ones(nc, dt) if weight is None else np.asarray(weight._data).reshape(-1)

    def attributes(t):
        iat, _ = _nll_attributes(t.reshape(-1), ignore_index, red, nc, ns)
        scale = 1.0
        if red == _MEAN:
            valid, cls = iat[1:1 + t.size] >= 0, iat[1 + t.size:]
            w = np.where(valid, w_cls[cls] if nc else 0, 0).astype(dt)
            with np.errstate(divide="ignore"):
                scale = float(np.float64(1.0) / np.float64(w.sum(dtype=dt)))
        return iat, _fat(scale) if weight is None else _fat(scale, w_cls)

    iat, fat = attributes(t)
    xv = np.asarray(input._data).reshape(-1)
    # -(w * x[picked]), reduced, by the replay kernel (record.replay_value): eager and
    # replay agree to the bit
    value = replay_value(op, (xv,), t.size if red == _NONE else 1, dt, iat, fat)
    value = value.reshape(out_shape) if red == _NONE else value[0]
    out = record(op, value if value.ndim else value[()], (input,), iat, fat)
    return trace_guards.int_attributes(target, out, attributes)


def _nll_1d_2d(input, target, weight, red, ignore_index):  # noqa: A002
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    _check_target_dtype(target)
    if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                         f"{target.shape[0]}")
    nc = input.shape[-1]
    if weight is not None and not (weight.ndim == 1 and weight.numel() == nc):
        raise RuntimeError(f"weight tensor should be defined either for all {nc} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    out_shape = (input.shape[0],) if input.ndim == 2 else ()
    return _nll_record(NLL_LOSS, input, target, weight, red, ignore_index, out_shape, False)


def _nll_2d_checks(ishape, target, weight, tshape=None):
    tshape = tuple(target.shape) if tshape is None else tshape
    if len(tshape) != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {len(tshape)}")
    _check_target_dtype(target)
    if weight is not None and weight.numel() != ishape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if (ishape[0], ishape[2], ishape[3]) != tshape:
        raise RuntimeError(f"size mismatch (got input: {list(ishape)} , target: {list(tshape)}")


def _nll_nd(input, target, weight, red, ignore_index):  # noqa: A002
    """torch's nll_loss_nd: 1-D/2-D input nll_loss, 4-D nll_loss2d, other ranks folded into
    nll_loss2d (and, for reduction='none', viewed back: ViewBackward0)."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and input.shape[0] != (target.shape[0] if target.ndim else 0):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 0}).")
    if input.ndim <= 2:
        _not_differentiable("nll_loss_forward", "weight", weight)
        return _nll_1d_2d(input, target, weight, red, ignore_index)
    if input.ndim == 4:
        _not_differentiable("nll_loss2d_forward", "weight", weight)
        _nll_2d_checks(tuple(input.shape), target, weight)
        return _nll_record(NLL_LOSS2D, input, target, weight, red, ignore_index,
                           tuple(target.shape), True)
    n, c = input.shape[0], input.shape[1]
    out_size = (n, *input.shape[2:])
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(target.shape)}")
    # folded to (N, C, 1, S) as torch views it: the positions on the original layout are the
    # same, so the node is recorded on the input itself
    _not_differentiable("nll_loss2d_forward", "weight", weight)
    ns = int(np.prod(input.shape[2:]))
    _nll_2d_checks((n, c, 1, ns), target, weight, (n, 1, ns))
    out = _nll_record(NLL_LOSS2D, input, target, weight, red, ignore_index, (n, 1, ns), True)
    if red != _NONE:
        return out
    return view(out, *out_size)


@_tensor_arguments("nll_loss_nd")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
             reduce=None, reduction="mean"):
    """The negative log likelihood of the log-probabilities ``input`` at the classes ``target``.

    Same as ``torch.nn.functional.nll_loss``.
    """
    reduction = _legacy(size_average, reduce, reduction)
    return _nll_nd(input, target, weight, _get_enum(reduction), ignore_index)


# ---- cross_entropy ---------------------------------------------------------------------------
def _log_softmax(input, class_dim):  # noqa: A002
    if not input.dtype.is_floating_point:
        kind = "log_softmax_lastdim_kernel_impl" if class_dim == input.ndim - 1 else \
            "log_softmax_kernel_impl"
        raise NotImplementedError(f"\"{kind}\" not implemented for '{input.dtype.scalar_name}'")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {class_dim} but tensor has no dimensions")
    return log_softmax(input, class_dim)


def _class_view(weight, ndim, class_dim):
    """The class weights shaped to broadcast along ``class_dim`` of an ``ndim``-d tensor."""
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return view(weight, *shape)


@njit(cache=True, error_model="numpy")
def _nll_iat(target, ignore_index, red, nc, ns, iat):
    """nll's attributes into ``iat``: [red, positions..., classes...]. Sample i of the
    flattened target (``ns`` samples per row of the input, 1 for a (C,) input) picks
    input[i // ns, target_i, i % ns] at position (i // ns) * nc * ns + target_i * ns + i % ns;
    an ignored one has position -1 and class 0. Returns (how many samples count, the first
    whose target is out of bounds or -1)."""
    m = target.shape[0]
    iat[0] = red
    count = 0
    for i in range(m):
        t = target[i]
        if t == ignore_index:
            iat[1 + i] = -1
            iat[1 + m + i] = 0
        elif t < 0 or t >= nc:
            return 0, i
        else:
            iat[1 + i] = (i // ns) * (nc * ns) + t * ns + i % ns
            iat[1 + m + i] = t
            count += 1
    return count, -1


def _nll_attributes(target, ignore_index, red, nc, ns):
    """(iat, how many samples count) of nll on the flattened int64 ``target`` (_nll_iat);
    raises torch's IndexError for a target out of bounds."""
    iat = np.empty(1 + 2 * target.shape[0], np.int64)
    count, bad = _nll_iat(target, ignore_index, red, nc, ns, iat)
    if bad >= 0:
        raise IndexError(f"Target {int(target[bad])} is out of bounds.")
    return iat, count


def _cross_entropy_rows(input, target, red, ignore_index):  # noqa: A002
    """cross_entropy of (N, C) logits and N class indices, no weights, no smoothing: the
    same two nodes (LogSoftmaxBackward0, then NllLossBackward0) and attributes as the
    general path records, their values computed by the two ops' replay kernels (as compiled
    replay computes them, and in NumPy's order) instead of ~25 NumPy calls."""
    x = input._data
    n, c = x.shape

    def attributes(t):
        iat, count = _nll_attributes(t.reshape(-1), ignore_index, red, c, 1)
        # the mean's 1 / (weight of the counted targets): inf when all are ignored, as NumPy's
        return iat, _fat((1.0 / count if count else math.inf) if red == _MEAN else 1.0)

    iat, fat = attributes(np.asarray(target._data))
    sh = np.array((n, c), np.int64)
    kept = np.array((n, 1), np.int64)
    # in x's dtype, as replay computes float32 nodes (registry.replay_f32)
    logp = np.empty(n * c, x.dtype)
    log_softmax_fw(logp, np.ascontiguousarray(x).reshape(-1), sh, sh, kept, _NO_FAT)
    logp = logp.reshape(n, c)
    value = np.empty(n if red == _NONE else 1, x.dtype)
    nll_loss_fw(value, logp.reshape(-1), sh, sh, iat, _NO_FAT)
    value = value if red == _NONE else value[0]
    logp_t = record(LOG_SOFTMAX, logp, (input,), kept)
    return trace_guards.int_attributes(target, record(NLL_LOSS, value, (logp_t,), iat, fat),
                                       attributes)


@_tensor_arguments("cross_entropy_loss")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """The cross entropy between the logits ``input`` and class indices or probabilities ``target``.

    Same as ``torch.nn.functional.cross_entropy``.

    Examples:
        >>> import numbagrad as torch
        >>> import numbagrad.nn.functional as F
        >>> logits = torch.tensor([[2., 0., 0.], [0., 0., 0.]], requires_grad=True)
        >>> loss = F.cross_entropy(logits, torch.tensor([0, 2]))
        >>> loss
        tensor(0.6691, grad_fn=<NllLossBackward0>)
    """
    reduction = _legacy(size_average, reduce, reduction)
    red = _get_enum(reduction)
    if weight is None and label_smoothing == 0.0 and input.ndim == 2 and target.ndim == 1 \
            and target.dtype is dtypes.int64 and input.dtype.is_floating_point and \
            0 < input.shape[0] == target.shape[0] and input.shape[1] > 0:
        return _cross_entropy_rows(input, target, red, ignore_index)
    if tuple(input.shape) == tuple(target.shape):
        # class probabilities
        if not target.dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got {target.dtype.scalar_name}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _ce_probabilities(input, target, weight, red, label_smoothing)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{_cfmt(label_smoothing)}")
        return _ce_label_smoothing(input, target, weight, red, ignore_index, label_smoothing)
    class_dim = 0 if input.ndim == 1 else 1
    return _nll_nd(_log_softmax(input, class_dim), target, weight, red, ignore_index)


def _ce_probabilities(input, target, weight, red, label_smoothing):  # noqa: A002
    class_dim = 0 if input.ndim == 1 else 1
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {class_dim} but tensor has no dimensions")
    n_classes = input.shape[class_dim]
    if weight is not None and not (weight.ndim == 1 and weight.numel() == n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    logp = _log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{_cfmt(label_smoothing)}")
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_view(weight, logp.ndim, class_dim)
    if red == _MEAN:
        if logp.numel() == 0:
            return neg(_sum(prod) * float("nan"))
        return unary("loss_div_count", neg(_sum(prod)), float(logp.numel() // n_classes))
    if red == _SUM:
        return neg(_sum(prod))
    return neg(_sum(prod, class_dim))


def _ce_label_smoothing(input, target, weight, red, ignore_index, label_smoothing):  # noqa: A002
    class_dim = 0 if input.ndim == 1 else 1
    logp = _log_softmax(input, class_dim)
    nll = _nll_nd(logp, target, weight, red, ignore_index)
    n_classes = logp.shape[class_dim]
    ignore = np.asarray(target._data) == ignore_index
    if weight is not None:
        smooth = neg(_sum(logp * _class_view(weight, logp.ndim, class_dim), class_dim))
    else:
        smooth = neg(_sum(logp, class_dim))
    smooth = masked_fill(smooth, ignore, 0.0)
    if red == _MEAN:
        if weight is not None:
            t = np.asarray(target._data)[~ignore].reshape(-1)
            denom = float(np.asarray(weight._data)[t].sum(dtype=weight.dtype.np))
        else:
            denom = float((~ignore).sum())
        total = _sum(smooth)
        if denom != 0:
            ret = total / denom
        else:  # x / 0 without a division (the compiled kernels would raise)
            ret = total * (float("nan") if total.item() == 0 else float("inf"))
    elif red == _SUM:
        ret = _sum(smooth)
    else:
        ret = smooth
    return nll * (1 - label_smoothing) + ret * (label_smoothing / n_classes)


# ---- kl_div ----------------------------------------------------------------------------------
@_tensor_arguments("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
           log_target=False):
    """The Kullback-Leibler divergence of ``target`` from the log-probabilities ``input``.

    Same as ``torch.nn.functional.kl_div``.
    """
    if size_average is not None or reduce is not None:
        red = _get_enum(legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        red = _SUM if reduction == "batchmean" else _get_enum(reduction)
    out = kl_div_enum(input, target, red, log_target)
    if reduction == "batchmean" and input.ndim != 0:
        # an empty batch: 0 / 0 without a division (the compiled kernels would raise)
        out = out / input.shape[0] if input.shape[0] else out * float("nan")
    return out


def kl_div_enum(input, target, reduction, log_target=False):  # noqa: A002
    """kl_div with ATen's int ``reduction`` (0 none, 1 mean, 2 sum): torch.kl_div's form."""
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = exp(target) * (target - input)
    else:
        # xlogy(target, target), 0 where target == 0 (log sees 1 there: its derivative stays
        # finite, where torch's is nan)
        out = target * log(where(_make(np.asarray(target._data) == 0), 1.0, target)) - \
            target * input
    if reduction == _MEAN:
        out = _mean(out)
    elif reduction == _SUM:
        out = _sum(out)
    return out


# ---- differentiable derivatives (create_graph) ------------------------------------------------
def _cast(ctx, k, t):
    return to_dtype(t, dtypes.from_numpy_dtype(ctx.dtypes[k]))


def _g(ctx, g):
    """The upstream gradient as it multiplies each element (scaled for a reduced loss)."""
    if ctx.iat[0] == _NONE:
        return g
    s = ctx.fat[0]
    return g if s == 1.0 else g * s


def _out(ctx, gx, gt):
    return [_cast(ctx, 0, gx()) if ctx.needs[0] else None,
            _cast(ctx, 1, gt()) if ctx.needs[1] else None]


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


@vjp_rule(NLL_LOSS, NLL_LOSS2D)
def _nll_vjp(ctx, g):
    iat = np.asarray(ctx.iat, np.int64)
    m = (iat.shape[0] - 1) // 2
    pos, cls = iat[1:1 + m], iat[1 + m:]
    valid = pos >= 0
    dt = ctx.dtypes[0]
    w = np.asarray(ctx.fat[1:], np.float64)[cls[valid]] if len(ctx.fat) > 1 else \
        np.ones(int(valid.sum()))
    scale = ctx.fat[0] if ctx.iat[0] != _NONE else 1.0
    coef = const((-w * scale).astype(dt), dt)
    if ctx.iat[0] == _NONE:
        per = gather_flat(g, np.flatnonzero(valid), (int(valid.sum()),)) * coef
    else:
        per = g * coef
    return [index_add_flat(per, pos[valid], tuple(ctx.shapes[0]), unique=True)]
