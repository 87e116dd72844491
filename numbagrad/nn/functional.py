"""torch.nn.functional: activations, linear, dropout (losses live in numbagrad/ops/nn/loss.py
and are re-exported here once declared)."""

import math

import numpy as np

from .. import _methods
from ..core import grad_mode as _grad_mode
from ..core import torch_rng as _torch_rng
from ..engine.record import record as _record
from ..engine.registry import BY_NAME as _BY_NAME
from ..factories import _dropout_noise, _engine, _keep_mask
from ..ops.elementwise import pointwise as _pw
from ..ops.elementwise import public as _public
from ..ops.elementwise.forward import torch_layout as _torch_layout
from ..ops.elementwise.pointwise import gelu, softplus  # noqa: F401 - torch.nn.functional's
from ..ops.elementwise.pointwise import unary as _unary
from ..ops.elementwise.public import sigmoid, tanh  # noqa: F401 - torch.nn.functional's
from ..ops.linalg import matmul as _mm
from ..ops.nn import activations as _act
from ..ops.nn import spatial_misc as _spm
from ..ops.nn.activations import *  # noqa: F401,F403
from ..ops.nn.activations import functional_log_softmax as log_softmax  # noqa: F401
from ..ops.nn.activations import functional_softmax as softmax  # noqa: F401
from ..ops.nn.attention import *  # noqa: F401,F403
from ..ops.nn.conv_functional import (  # noqa: F401
    adaptive_avg_pool2d,
    avg_pool2d,
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    max_pool2d,
)
from ..ops.nn.loss import (  # noqa: F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    huber_loss,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)
from ..ops.nn.margin_losses import *  # noqa: F401,F403
from ..ops.nn.nll_loss import cross_entropy, kl_div, nll_loss  # noqa: F401
from ..ops.nn.norm import batch_norm, embedding, layer_norm  # noqa: F401
from ..ops.nn.spatial import *  # noqa: F401,F403
from ..ops.shape.movement import permute as _permute
from ..ops.shape.movement import reshape as _reshape
from ..ops.shape.movement import unsqueeze as _unsqueeze
from ..tensor import _make as _make_const
from .ctc import ctc_loss  # noqa: F401
from .functional_more import *  # noqa: F401,F403


def _inplace(input, fn, *args, clone=True):  # noqa: A002 - torch's names
    """``fn(input, *args)`` written back into ``input`` through the in-place machinery (its
    leaf and view checks, the version bump that later fails a node that saved it). ``clone``:
    fn's derivative reads its input, so it is computed on a copy that the write cannot reach."""
    def compute(s):
        if clone and s._requires_grad and _grad_mode.state.enabled:
            s = _unary("clone", s)
        return fn(s, *args)
    return _methods._inplace(input, compute)  # looked up per call: forward AD wraps it


def relu(input, inplace=False):  # noqa: A002
    """Element-wise ReLU, ``max(x, 0)``.

    Same as ``torch.nn.functional.relu`` (``inplace=True``: ``input.relu_()``).

    Args:
        input: the input tensor.
        inplace: if True, write the result into ``input`` and return it (default False).

    Returns:
        A tensor of ``input``'s shape.
    """
    return input.relu_() if inplace else _public.relu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):  # noqa: A002
    """Element-wise ``x`` where positive, else ``negative_slope * x``.

    Same as ``torch.nn.functional.leaky_relu``.

    Args:
        input: the input tensor.
        negative_slope: the slope for negative inputs (default 0.01).
        inplace: if True, write the result into ``input`` and return it (default False).

    Returns:
        A tensor of ``input``'s shape.
    """
    if inplace:
        return _inplace(input, _pw.leaky_relu, negative_slope)
    return _pw.leaky_relu(input, negative_slope)


def silu(input, inplace=False):  # noqa: A002
    """Element-wise SiLU (swish), ``x * sigmoid(x)``.

    Same as ``torch.nn.functional.silu``.

    Args:
        input: the input tensor.
        inplace: if True, write the result into ``input`` and return it (default False).

    Returns:
        A tensor of ``input``'s shape.
    """
    if inplace:
        return _inplace(input, lambda s: _unary("silu", s))
    return _unary("silu", input)


def _elu(x, alpha):
    if not x.dtype.is_floating_point:  # torch has no integer kernel
        raise NotImplementedError(f'"elu" not implemented for \'{x.dtype.scalar_name}\'')
    return _unary("elu", x, float(alpha))


def elu(input, alpha=1.0, inplace=False):  # noqa: A002
    """Element-wise ELU: ``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    Same as ``torch.nn.functional.elu``.

    Args:
        input: the input tensor.
        alpha: the ``alpha`` of the formula (default 1.0).
        inplace: if True, write the result into ``input`` and return it (default False).
    """
    return _inplace(input, _elu, alpha) if inplace else _elu(input, alpha)


def _hardtanh(x, min_val, max_val):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _unary("hardtanh", x, float(min_val), float(max_val))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
    """Element-wise ``x`` clamped to [min_val, max_val].

    Same as ``torch.nn.functional.hardtanh``.

    Args:
        input: the input tensor.
        min_val: the lower end of the range (default -1.0).
        max_val: the upper end of the range (default 1.0); not below ``min_val``.
        inplace: if True, write the result into ``input`` and return it (default False).
    """
    if inplace:
        return _inplace(input, _hardtanh, min_val, max_val)
    return _hardtanh(input, min_val, max_val)


def mish(input, inplace=False):  # noqa: A002
    """Element-wise Mish, ``x * tanh(softplus(x))``.

    Same as ``torch.nn.functional.mish``.

    Args:
        input: the input tensor.
        inplace: if True, write the result into ``input`` and return it (default False).
    """
    return _inplace(input, lambda s: _unary("mish", s)) if inplace else _unary("mish", input)


def relu6(input, inplace=False):  # noqa: A002
    """min(max(x, 0), 6), as torch's hardtanh(x, 0, 6).

    Same as ``torch.nn.functional.relu6``.

    Args:
        input: the input tensor.
        inplace: if True, write the result into ``input`` and return it (default False).
    """
    return _inplace(input, _act.relu6) if inplace else _act.relu6(input)


def selu(input, inplace=False):  # noqa: A002
    """scale * elu(x, alpha) with the self-normalizing constants.

    Same as ``torch.nn.functional.selu``.

    Args:
        input: the input tensor.
        inplace: if True, write the result into ``input`` and return it (default False).
    """
    return _inplace(input, _act.selu) if inplace else _act.selu(input)


def celu(input, alpha=1.0, inplace=False):  # noqa: A002
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    Same as ``torch.nn.functional.celu``.

    Args:
        input: the input tensor.
        alpha: the ``alpha`` of the formula (default 1.0).
        inplace: if True, write the result into ``input`` and return it (default False).
    """
    return _inplace(input, _act.celu, alpha) if inplace else _act.celu(input, alpha)


def hardsigmoid(input, inplace=False):  # noqa: A002
    """relu6(x + 3) / 6.

    Same as ``torch.nn.functional.hardsigmoid``.
    """
    return _inplace(input, _act.hardsigmoid) if inplace else _act.hardsigmoid(input)


def hardswish(input, inplace=False):  # noqa: A002
    """x * relu6(x + 3) / 6.

    Same as ``torch.nn.functional.hardswish``.

    Args:
        input: the input tensor.
        inplace: if True, write the result into ``input`` and return it (default False).
    """
    return _inplace(input, _act.hardswish) if inplace else _act.hardswish(input)


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    """x where x > threshold, else value.

    Same as ``torch.nn.functional.threshold``.

    Args:
        input: the input tensor.
        threshold: the elements above it are kept.
        value: what replaces the others.
        inplace: if True, write the result into ``input`` and return it (default False).
    """
    if inplace:
        return _inplace(input, _act.threshold, threshold, value)
    return _act.threshold(input, threshold, value)


def _rrelu(x, lower, upper, training, generator=None):
    if not x.dtype.is_floating_point:
        raise NotImplementedError('"rrelu_with_noise_out_cpu" not implemented for '
                                  f"'{x.dtype.scalar_name}'")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:  # torch: leaky_relu with the middle slope, summed in double
        return _pw.leaky_relu(x, (float(lower) + float(upper)) / 2)
    data = x._array()
    neg = np.ascontiguousarray(data).reshape(-1) <= 0
    dt = data.dtype
    # torch's CPU loop: one uniform_real_distribution<double>(lower, upper) per element <= 0,
    # in order, with the bounds first rounded to the dtype's opmath type (float for float32)
    lo, hi = float(dt.type(lower)), float(dt.type(upper))
    eng = _engine(generator)
    with eng.lock:
        unit = _torch_rng._unit64(eng, int(neg.sum()))
    noise = np.ones(neg.shape, dt)
    noise[neg] = (unit * (hi - lo) + lo).astype(dt)
    # output = x * noise, and its gradient grad * noise, as torch's RReLU in training
    return x * _make_const(noise.reshape(data.shape))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):  # noqa: A002
    """Randomized leaky ReLU: in training each element <= 0 is scaled by a slope drawn from
    U(lower, upper) (torch's random stream); otherwise by the middle slope.

    Same as ``torch.nn.functional.rrelu``.

    Args:
        input: the input tensor.
        lower: the lowest random slope (default 1/8).
        upper: the highest random slope (default 1/3).
        training: random slopes if True, else the middle slope (default False).
        inplace: if True, write the result into ``input`` and return it (default False).

    Returns:
        A tensor of ``input``'s shape.
    """
    if inplace:
        return _inplace(input, _rrelu, lower, upper, training)
    return _rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):  # noqa: A002
    """In-place :func:`rrelu`. Same as ``torch.nn.functional.rrelu_``.

    Args:
        input: the input tensor.
        lower: the lowest random slope (default 1/8).
        upper: the highest random slope (default 1/3).
        training: random slopes if True, else the middle slope (default False).
        generator: the Generator the slopes are drawn from (default None: the global one).

    Returns:
        ``input`` itself, changed in place.
    """
    return _inplace(input, _rrelu, lower, upper, training, generator)


# torch's F.<name>_: the in-place forms
def relu_(input):  # noqa: A002
    """In-place :func:`relu`. Same as ``torch.nn.functional.relu_``.

    Args:
        input: the input tensor.

    Returns:
        ``input`` itself, changed in place.
    """
    return input.relu_()


def elu_(input, alpha=1.0):  # noqa: A002
    """In-place :func:`elu`. Same as ``torch.nn.functional.elu_``.

    Args:
        input: the input tensor.
        alpha: the ``alpha`` of elu (default 1.0).

    Returns:
        ``input`` itself, changed in place.
    """
    return _inplace(input, _elu, alpha)


def leaky_relu_(input, negative_slope=0.01):  # noqa: A002
    """In-place :func:`leaky_relu`. Same as ``torch.nn.functional.leaky_relu_``.

    Args:
        input: the input tensor.
        negative_slope: the slope for negative inputs (default 0.01).

    Returns:
        ``input`` itself, changed in place.
    """
    return _inplace(input, _pw.leaky_relu, negative_slope)


def hardtanh_(input, min_val=-1.0, max_val=1.0):  # noqa: A002
    """In-place :func:`hardtanh`. Same as ``torch.nn.functional.hardtanh_``.

    Args:
        input: the input tensor.
        min_val: the lower end of the range (default -1.0).
        max_val: the upper end of the range (default 1.0).

    Returns:
        ``input`` itself, changed in place.
    """
    return _inplace(input, _hardtanh, min_val, max_val)


def threshold_(input, threshold, value):  # noqa: A002
    """In-place :func:`threshold`. Same as ``torch.nn.functional.threshold_``.

    Args:
        input: the input tensor.
        threshold: the elements above it are kept.
        value: what replaces the other elements.

    Returns:
        ``input`` itself, changed in place.
    """
    return _inplace(input, _act.threshold, threshold, value)


def celu_(input, alpha=1.0):  # noqa: A002
    """In-place :func:`celu`. Same as ``torch.nn.functional.celu_``.

    Args:
        input: the input tensor.
        alpha: the ``alpha`` of celu (default 1.0).

    Returns:
        ``input`` itself, changed in place.
    """
    return _inplace(input, _act.celu, alpha)


def selu_(input):  # noqa: A002
    """In-place :func:`selu`. Same as ``torch.nn.functional.selu_``.

    Args:
        input: the input tensor.

    Returns:
        ``input`` itself, changed in place.
    """
    return _inplace(input, _act.selu)


def _dropout_inplace(fn, input, p, training):  # noqa: A002
    """torch's in-place dropouts: the input itself, untouched, when nothing is dropped (no
    leaf check, no version bump); else the noise multiplied in (which reads no input)."""
    if not training or p == 0.0 or input.numel() == 0:
        return fn(input, p, training)  # (p's check)
    return _inplace(input, fn, p, training, clone=False)


def dropout1d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero whole channels of a 1-D signal with probability ``p`` (in training), scaling the rest.

    Same as ``torch.nn.functional.dropout1d``.
    """
    if inplace:
        return _dropout_inplace(_spm.dropout1d, input, p, training)
    return _spm.dropout1d(input, p, training)


def dropout2d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero whole channels of a 2-D signal with probability ``p`` (in training), scaling the rest.

    Same as ``torch.nn.functional.dropout2d``.
    """
    if inplace:
        return _dropout_inplace(_spm.dropout2d, input, p, training)
    return _spm.dropout2d(input, p, training)


def dropout3d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero whole channels of a 3-D signal with probability ``p`` (in training), scaling the rest.

    Same as ``torch.nn.functional.dropout3d``.
    """
    if inplace:
        return _dropout_inplace(_spm.dropout3d, input, p, training)
    return _spm.dropout3d(input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    """Dropout that keeps the mean and variance of SELU activations (in training).

    Same as ``torch.nn.functional.alpha_dropout``.

    Args:
        input: the input tensor.
        p: the probability of dropping an element (default 0.5).
        training: whether to apply it; False (the default) returns ``input`` as it is.
        inplace: if True, write the result into ``input`` and return it (default False).

    Returns:
        A tensor of ``input``'s shape.
    """
    if inplace:
        return _dropout_inplace(_spm.alpha_dropout, input, p, training)
    return _spm.alpha_dropout(input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    """``alpha_dropout`` of whole channels (in training).

    Same as ``torch.nn.functional.feature_alpha_dropout``.
    """
    if inplace:
        return _dropout_inplace(_spm.feature_alpha_dropout, input, p, training)
    return _spm.feature_alpha_dropout(input, p, training)


def linear(input, weight, bias=None):  # noqa: A002 - torch's names
    """torch's F.linear: addmm for 2-d input with a bias (AddmmBackward0); for other inputs,
    the same on the rows folded, then a view, or matmul then the bias added in place (as
    torch chooses); matmul without a bias.

    Args:
        input: (*, in_features).
        weight: (out_features, in_features).
        bias: (out_features), or None for none (default None).

    Returns:
        ``input @ weight.T + bias``, of shape (*, out_features).
    """
    if bias is not None:
        out = _mm.linear(input, weight, bias)  # the common case first, checked once
        if out is not None:
            return out
    _mm.check_linear_arguments(input, weight, bias)
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if bias is None:
        return _mm.matmul(input, _mm.weight_t(weight, input))
    if input.ndim == 2:
        return _mm.addmm(bias, input, _mm.weight_t(weight, input, bias))
    # torch folds the rows into one addmm for a contiguous input and a contiguous bias that
    # is 1-d, or 1-d once its dims of size 1 are dropped
    fusable = bias.ndim == 1 or sum(s != 1 for s in bias.shape) == 1
    if fusable and bias.is_contiguous() and input.is_contiguous():
        # (the row count spelled out: -1 cannot be inferred beside a size-0 last dim)
        rows = _reshape(input, (int(np.prod(input.shape[:-1])), input.shape[-1]))
        out = _mm.addmm(bias, rows, _mm.weight_t(weight, rows, bias))
        return _reshape(out, (*input.shape[:-1], out.shape[1]))
    # torch's other case: the product, then the bias added in place (so it may broadcast, be
    # of another dtype, or not fit the product: add_'s errors)
    return _mm.matmul(input, _mm.weight_t(weight, input)).add_(bias)


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero each element with probability p and scale the rest by 1 / (1 - p)."""
    if inplace:
        return _dropout_inplace(_dropout, input, p, training)
    return _dropout(input, p, training)


def _dropout(input, p, training):  # noqa: A002
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input  # torch returns the input itself here
    data = input._array()
    # p = 1 drops everything: no draw, so that it also traces (numbagrad.compile refuses draws)
    keep = _keep_mask(data.shape, 1.0 - p, data) if p < 1.0 else np.zeros(data.shape, bool)
    # torch: input * noise, noise = mask / (1 - p) in the dtype (so dropped -x gives -0.)
    noise = _dropout_noise(keep, p, data.dtype) if p < 1.0 else np.zeros(data.shape, data.dtype)
    scale = float(data.dtype.type(1.0) / data.dtype.type(1.0 - p)) if p < 1.0 else 0.0
    out = (data * noise).astype(data.dtype)
    out = _torch_layout(out, (data, keep))  # torch's is input * mask, laid out as the input
    return _record(_BY_NAME["native_dropout"], out, (input,), keep.reshape(-1).astype(np.int64),
                  (scale,))


def bilinear(input1, input2, weight, bias=None):
    """y[n, o] = sum_ij x1[n, i] W[o, i, j] x2[n, j] (+ b[o]), as matrix products.

    Args:
        input1: (*, in1).
        input2: (*, in2), with ``input1``'s leading dimensions.
        weight: (out, in1, in2).
        bias: (out), or None for none (default None).

    Returns:
        A tensor of shape (*, out).
    """
    out_f, in1, in2 = weight.shape
    for k, x, n in ((1, input1, in1), (2, input2, in2)):  # else a reshape error naming neither
        if x.ndim == 0 or x.shape[-1] != n:
            got = x.shape[-1] if x.ndim else 0
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got "
                               f"{got} but expected {n}")
    lead = input1.shape[:-1]
    x1 = _reshape(input1, (-1, in1))
    x2 = _reshape(input2, (-1, in2))
    t = _mm.matmul(x1, _reshape(_permute(weight, 1, 0, 2), (in1, out_f * in2)))  # (n, out * in2)
    y = (_reshape(t, (-1, out_f, in2)) * _unsqueeze(x2, 1)).sum(-1)
    y = _reshape(y, (*lead, out_f))
    return y + bias if bias is not None else y



def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,  # noqa: A002
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; a weight of
    shape (C, *out_features, in_features) gives K-dimensional logits (N, C, *out_features).

    Same as ``torch.nn.functional.linear_cross_entropy`` with ``options=None`` (its chunked
    path raises NotImplementedError).
    """
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.ndim}")
    num_batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    # as torch: a target of the logits' shape holds probabilities
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    # torch's chunked path (a LinearCrossEntropyOptions) gives the same values with its own
    # kernels and node; numbagrad has only the reference path
    if options is not None:
        raise NotImplementedError("linear_cross_entropy: numbagrad has no chunked path; pass "
                                  "options=None (the reference path, the same values)")
    if out_features:
        size = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((size, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(size)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index if ignore_index is not None else -100,
                         label_smoothing=label_smoothing)
