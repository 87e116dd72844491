"""Embedding, layer norm and batch norm: fused table ops (torch's EmbeddingBackward0,
NativeLayerNormBackward0, NativeBatchNormBackward0), each with its @njit derivative kernel
and a differentiable rule composed from numbagrad ops (create_graph)."""

import numpy as np
from numba import njit

from ...core import trace_guards
from ...core.grad_mode import no_grad
from ...core.tape import traced_tape
from ...engine.record import record, replay_value
from ...engine.registry import Sample, defop, vjp_rule
from ...factories import ones, zeros
from ...tensor import Tensor
from ..elementwise.public import rsqrt
from ..index.indexing import index_add_flat
from ..reduce.reductions import mean as _mean
from ..reduce.reductions import sum as _sum
from ..shape.movement import reshape
from ..vjp import const


# ---- embedding --------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def embedding_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # iat[k]: flat position in the weight of output element k, negative for a padding row
    for k in range(g.shape[0]):
        p = iat[k]
        if p >= 0:
            gx0[p] += g[k]


EMBEDDING = defop(
    "embedding", "EmbeddingBackward0", 1, replay="embedding_fw", kernel=embedding_bw,
    # (padding_idx withholds the true derivative by design, so finite differences cannot
    # check it: tests/test_nn_layers.py covers it against torch)
    samples=[Sample(((5, 3),), {}, "lib.nn.functional.embedding(lib.tensor([[1, 4], [1, 0]]), x0)"),
             Sample(((4, 2),), {"padding_idx": 2},
                    "lib.nn.functional.embedding(lib.tensor([1, 3, 1]), x0, **kw)")])


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,  # noqa: A002
              scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` at the indices ``input``.

    Same as ``torch.nn.functional.embedding``; ``max_norm``,
    ``scale_grad_by_freq`` and ``sparse`` raise NotImplementedError.
    """
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("numbagrad: embedding's max_norm, scale_grad_by_freq and "
                                  "sparse are not implemented")
    idx = np.asarray(input._data if isinstance(input, Tensor) else input)
    if idx.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got torch.FloatTensor instead "
                           "(while checking arguments for embedding)")
    n, dim = weight.shape
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n

    def attributes(idx):
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise IndexError("index out of range in self")
        positions = (idx[..., None] * dim + np.arange(dim)).reshape(-1).astype(np.int64)
        if padding_idx is not None:
            # a padding row's elements hold -1 - position: negative, so no gradient flows,
            # and the position stays recoverable for compiled replay's forward (embedding_fw)
            pad = np.repeat(idx.reshape(-1) == padding_idx, dim)
            positions[pad] = -1 - positions[pad]
        return positions, ()

    positions, _ = attributes(idx)
    out = weight._array()[idx]
    # indices passed to a compiled function: a replay recomputes the positions
    return trace_guards.int_attributes(input, record(EMBEDDING, out, (weight,), positions),
                                       attributes)


@vjp_rule(EMBEDDING)
def _embedding_vjp(ctx, g):
    positions = np.asarray(ctx.iat, np.int64)
    pad = positions < 0
    if pad.any():
        g = g * const((~pad).reshape(ctx.shape).astype(g._data.dtype), g._data.dtype)
        positions = np.where(pad, 0, positions)
    return [index_add_flat(g, positions, ctx.shapes[0])]


# ---- layer norm -------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def layer_norm_bw(g, y, x0, x1, x2, gx0, gx1, gx2, sh_y, sh0, sh1, sh2, need0, need1, need2,
                  iat, fat):
    # iat[0] = D, the size of the normalized trailing block; fat[0] = eps
    d = iat[0]
    eps = fat[0]
    rows = x0.shape[0] // d if d else 0
    for r in range(rows):
        s = r * d
        mean = 0.0
        for j in range(d):
            mean += x0[s + j]
        mean /= d
        var = 0.0
        for j in range(d):
            var += (x0[s + j] - mean) ** 2
        rstd = 1.0 / np.sqrt(var / d + eps)
        a = 0.0  # mean of g * w
        b = 0.0  # mean of g * w * xhat
        for j in range(d):
            xhat = (x0[s + j] - mean) * rstd
            gw = g[s + j] * x1[j]
            a += gw
            b += gw * xhat
            if need1:
                gx1[j] += g[s + j] * xhat
            if need2:
                gx2[j] += g[s + j]
        a /= d
        b /= d
        if need0:
            for j in range(d):
                xhat = (x0[s + j] - mean) * rstd
                gx0[s + j] += rstd * (g[s + j] * x1[j] - a - xhat * b)


LAYER_NORM = defop(
    "layer_norm", "NativeLayerNormBackward0", 3, replay="layer_norm_fw", replay_f32=True,
    kernel=layer_norm_bw, saves=("x0", "x1"),
    samples=[Sample(((3, 4), (4,), (4,)), {}, "lib.nn.functional.layer_norm(x0, (4,), x1, x2)"),
             Sample(((2, 2, 3), (2, 3), (2, 3)), {"eps": 1e-3},
                    "lib.nn.functional.layer_norm(x0, (2, 3), x1, x2, **kw)")])


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):  # noqa: A002
    """Layer normalization over the last dimensions ``normalized_shape``.

    Same as ``torch.nn.functional.layer_norm``.

    Args:
        input: a tensor whose trailing dimensions are ``normalized_shape``.
        normalized_shape: the shape of the trailing dimensions normalized over (an int or a
            sequence).
        weight: the scale, of shape ``normalized_shape``, or None for 1 (default None).
        bias: the shift, of shape ``normalized_shape``, or None for 0 (default None).
        eps: added to the variance (default 1e-5).

    Returns:
        A tensor of ``input``'s shape.
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in shape)}], but got input of size"
                           f"{list(input.shape)}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but got "
                               f"{what} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(shape)}")
    dt = input.dtype
    w = weight if weight is not None else ones(shape, dtype=dt)
    b = bias if bias is not None else zeros(shape, dtype=dt)
    data = input._array()
    d = int(np.prod(shape))
    # the replay's kernel (NumPy's mean and var order), in the input's dtype
    out = replay_value(LAYER_NORM, (data, w._array(), b._array()), data.size, data.dtype, (d,),
                       (float(eps),)).reshape(data.shape)
    return record(LAYER_NORM, out, (input, w, b), (d,), (float(eps),))


def _stats(x, dims, eps):
    """(xhat, rstd) of ``x`` over ``dims`` (keepdim), as numbagrad ops (differentiable)."""
    centered = x - _mean(x, dims, keepdim=True)
    rstd = rsqrt(_mean(centered * centered, dims, keepdim=True) + eps)
    return centered * rstd, rstd


def _normalization_grad(g_w, xhat, rstd, dims):
    """d/dx of the normalization, applied to g * w: rstd (gw - mean(gw) - xhat mean(gw xhat))."""
    return rstd * (g_w - _mean(g_w, dims, keepdim=True) - xhat * _mean(g_w * xhat, dims,
                                                                         keepdim=True))


@vjp_rule(LAYER_NORM)
def _layer_norm_vjp(ctx, g):
    x, w = ctx.x(0), ctx.x(1)
    nd = len(ctx.shapes[1])
    dims = tuple(range(x.ndim - nd, x.ndim))
    lead = tuple(range(x.ndim - nd))
    xhat, rstd = _stats(x, dims, ctx.fat[0])
    out = [None, None, None]
    if ctx.needs[0]:
        out[0] = _normalization_grad(g * w, xhat, rstd, dims)
    if ctx.needs[1]:
        out[1] = _sum(g * xhat, lead) if lead else g * xhat
    if ctx.needs[2]:
        out[2] = _sum(g, lead) if lead else g
    return out


# ---- batch norm -------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def batch_norm_bw(g, y, x0, x1, x2, gx0, gx1, gx2, sh_y, sh0, sh1, sh2, need0, need1, need2,
                  iat, fat):
    # x0 (N, C, *spatial); fat = [eps, training, mean_0..mean_C-1, var_0..var_C-1]; in training
    # the statistics are the batch's (recomputed here), in eval the running ones from fat
    c_n = sh0[1]
    s = 1
    for k in range(2, sh0.shape[0]):
        s *= sh0[k]
    n = sh0[0]
    m = n * s
    eps = fat[0]
    training = fat[1] != 0.0
    for c in range(c_n):
        if training:
            mean = 0.0
            for i in range(n):
                for j in range(s):
                    mean += x0[(i * c_n + c) * s + j]
            mean /= m
            var = 0.0
            for i in range(n):
                for j in range(s):
                    var += (x0[(i * c_n + c) * s + j] - mean) ** 2
            var /= m
        else:
            mean = fat[2 + c]
            var = fat[2 + c_n + c]
        rstd = 1.0 / np.sqrt(var + eps)
        sg = 0.0
        sgx = 0.0
        for i in range(n):
            for j in range(s):
                k = (i * c_n + c) * s + j
                xhat = (x0[k] - mean) * rstd
                sg += g[k]
                sgx += g[k] * xhat
        if need1:
            gx1[c] += sgx
        if need2:
            gx2[c] += sg
        if need0:
            w = x1[c]
            for i in range(n):
                for j in range(s):
                    k = (i * c_n + c) * s + j
                    if training:
                        xhat = (x0[k] - mean) * rstd
                        gx0[k] += w * rstd * (g[k] - sg / m - xhat * sgx / m)
                    else:
                        gx0[k] += w * rstd * g[k]


BATCH_NORM = defop(
    "batch_norm", "NativeBatchNormBackward0", 3, replay="batch_norm_fw", replay_f32=True,
    kernel=batch_norm_bw, saves=("x0", "x1"),
    samples=[Sample(((4, 3), (3,), (3,)), {},
                    "lib.nn.functional.batch_norm(x0, None, None, x1, x2, training=True)"),
             Sample(((2, 3, 2, 2), (3,), (3,)), {"eps": 1e-3},
                    "lib.nn.functional.batch_norm(x0, None, None, x1, x2, True, 0.1, **kw)"),
             Sample(((4, 2), (2,), (2,)), {},
                    "lib.nn.functional.batch_norm(x0, lib.tensor([0.5, -0.5], dtype=x0.dtype),"
                    " lib.tensor([2.0, 0.5], dtype=x0.dtype), x1, x2, training=False)")])


def _refuse_in_trace():
    """Before any state changes: a compiled replay would not update running statistics."""
    if trace_guards.state.tracing and traced_tape() is not None:
        raise NotImplementedError(
            "numbagrad.compile: batch norm in training mode updates its running statistics "
            "at every call, which a compiled replay would not do; call model.eval() (the "
            "statistics are then constants), or keep training eager")


def batch_norm(input, running_mean, running_var, weight=None, bias=None,  # noqa: A002
               training=False, momentum=0.1, eps=1e-05):
    """Batch normalization over the channels (dimension 1), with batch or running statistics.

    Same as ``torch.nn.functional.batch_norm``.

    Args:
        input: (N, C, *), at least 2-D.
        running_mean: the running means per channel, (C), or None; updated in place in
            training.
        running_var: the running variances per channel, (C), or None; updated likewise.
        weight: the scale per channel, (C), or None for 1 (default None).
        bias: the shift per channel, (C), or None for 0 (default None).
        training: whether to normalize with the batch's statistics (and update the running
            ones) rather than the running ones (default False).
        momentum: the weight of the new batch in the running statistics (default 0.1).
        eps: added to the variance (default 1e-5).

    Returns:
        A tensor of ``input``'s shape.
    """
    if training and input.ndim >= 2 and input.numel() // input.shape[1] <= 1:
        # F's own check: torch.batch_norm normalizes a single value per channel
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {input.shape}")
    return aten_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                           eps)


def aten_batch_norm(input, weight, bias, running_mean, running_var, training,  # noqa: A002
                    momentum, eps):
    """batch_norm in torch.batch_norm's argument order, without F's batch size check."""
    if input.ndim < 2:
        raise ValueError(f"expected 2D or more input (got {input.ndim}D input)")
    c = input.shape[1]
    for what, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:  # else NumPy's broadcast error, naming no argument
            raise RuntimeError(f"{what} should contain {c} elements not {t.numel()}")
    dt = input.dtype
    w = weight if weight is not None else ones(c, dtype=dt)
    b = bias if bias is not None else zeros(c, dtype=dt)
    data = input._array()
    axes = (0, *range(2, data.ndim))
    if training:
        count = data.size // c
        mean = data.mean(axis=axes)
        var = data.var(axis=axes)
        if running_mean is not None:
            _refuse_in_trace()
            with no_grad():  # torch's running statistics: momentum, unbiased variance
                rm, rv = running_mean._array(), running_var._array()
                rm *= 1 - momentum
                rm += momentum * mean.astype(rm.dtype)
                rv *= 1 - momentum
                rv += momentum * (var * count / (count - 1)).astype(rv.dtype)
                for t in (running_mean, running_var):
                    t._vc[0] += 1
    else:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        mean, var = running_mean._array(), running_var._array()
    stats = () if training else (*np.asarray(mean, float).tolist(),
                                 *np.asarray(var, float).tolist())
    fat = (float(eps), float(training), *stats)
    # the replay's kernel (the batch statistics in NumPy's order), in the input's dtype
    out = replay_value(BATCH_NORM, (data, w._array(), b._array()), data.size, data.dtype, (),
                       fat).reshape(data.shape)
    return record(BATCH_NORM, out, (input, w, b), (), fat)


@vjp_rule(BATCH_NORM)
def _batch_norm_vjp(ctx, g):
    x, w = ctx.x(0), ctx.x(1)
    c = ctx.shapes[0][1]
    nd = len(ctx.shapes[0])
    axes = (0, *range(2, nd))
    shape = (1, c) + (1,) * (nd - 2)
    eps, training = ctx.fat[0], ctx.fat[1] != 0.0
    if training:
        xhat, rstd = _stats(x, axes, eps)
    else:
        dt = x._data.dtype
        mean = const(np.asarray(ctx.fat[2:2 + c]).reshape(shape), dt)
        rstd = rsqrt(const(np.asarray(ctx.fat[2 + c:2 + 2 * c]).reshape(shape), dt) + eps)
        xhat = (x - mean) * rstd
    out = [None, None, None]
    if ctx.needs[0]:
        g_w = g * reshape(w, shape)
        out[0] = _normalization_grad(g_w, xhat, rstd, axes) if training else g_w * rstd
    if ctx.needs[1]:
        out[1] = _sum(g * xhat, axes)
    if ctx.needs[2]:
        out[2] = _sum(g, axes)
    return out


__all__ = ["embedding", "layer_norm", "batch_norm"]
