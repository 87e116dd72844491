"""nll_loss (and nll_loss2d), cross_entropy and kl_div: nll_loss a fused table op, as
torch's kernel; cross_entropy and kl_div compositions of table ops, as torch composes them,
so that grad_fn names match torch 2.13's for every reduction and option.

An nll_loss node's attributes: ``iat = [reduction, position of each sample's chosen
log-probability in the input (-1 when ignored)..., class of each sample...]``, ``fat =
[scale, class weights...]`` (scale = 1 / total weight for mean); the integer target is an
attribute, not an input."""

import math
import warnings

import numpy as np
from numba import njit

from ... import dtypes
from ...core import trace_guards
from ...engine.record import record, replay_value
from ...engine.registry import Sample, defop, vjp_rule
from ...tensor import _make
from ..elementwise.pointwise import masked_fill, unary, where
from ..elementwise.public import exp, log, neg
from ..index.indexing import gather_flat, index_add_flat
from ..reduce.reductions import LOG_SOFTMAX, log_softmax
from ..reduce.reductions import mean as _mean
from ..reduce.reductions import sum as _sum
from ..reduce.replay_kernels import log_softmax_fw
from ..shape.movement import view
from ..vjp import const
from .loss_common import (
    _F,
    _MEAN,
    _NO_FAT,
    _NONE,
    _SUM,
    _cfmt,
    _fat,
    _get_enum,
    _legacy,
    _not_differentiable,
    _s,
    _tensor_arguments,
    legacy_get_string,
)
from .replay_kernels import nll_loss_fw


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
