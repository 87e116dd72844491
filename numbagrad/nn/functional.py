"""torch.nn.functional: activations, linear, dropout (losses live in numbagrad/ops/loss.py
and are re-exported here once declared)."""

import numpy as np

from ..factories import _dropout_noise, _keep_mask
from ..ops.activations_api import *  # noqa: F401,F403
from ..ops.attention_ops import *  # noqa: F401,F403
from ..ops.conv_functional import (  # noqa: F401
    adaptive_avg_pool2d,
    avg_pool2d,
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    max_pool2d,
)
from ..ops.linalg import addmm as _addmm
from ..ops.linalg import linear as _linear_2d
from ..ops.linalg import matmul as _matmul
from ..ops.linalg import weight_t as _weight_t
from ..ops.loss import (  # noqa: F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from ..ops.margin_losses import *  # noqa: F401,F403
from ..ops.norm import batch_norm, embedding, layer_norm  # noqa: F401
from ..ops.pointwise import gelu, leaky_relu, relu, sigmoid, softplus, tanh  # noqa: F401
from ..ops.pointwise import torch_layout as _torch_layout
from ..ops.pointwise import unary as _unary
from ..ops.record import record as _record
from ..ops.reduce import log_softmax, softmax  # noqa: F401
from ..ops.registry import BY_NAME as _BY_NAME
from ..ops.shape import permute as _permute
from ..ops.shape import reshape as _reshape
from ..ops.shape import unsqueeze as _unsqueeze
from ..ops.spatial import *  # noqa: F401,F403
from .ctc import ctc_loss  # noqa: F401


def silu(x):
    """Element-wise SiLU (swish), ``x * sigmoid(x)``.

    Same as ``torch.nn.functional.silu``, without ``inplace``.
    """
    return _unary("silu", x)


def elu(x, alpha=1.0, inplace=False):
    """Element-wise ELU: ``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    Same as ``torch.nn.functional.elu``; ``inplace`` is accepted and ignored (the result is a new
    tensor).
    """
    if not x.dtype.is_floating_point:  # torch has no integer kernel
        raise NotImplementedError(f'"elu" not implemented for \'{x.dtype.scalar_name}\'')
    return _unary("elu", x, float(alpha))


def hardtanh(x, min_val=-1.0, max_val=1.0, inplace=False):
    """Element-wise ``x`` clamped to [min_val, max_val].

    Same as ``torch.nn.functional.hardtanh``; ``inplace`` is accepted and ignored (the result is a
    new tensor).
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _unary("hardtanh", x, float(min_val), float(max_val))


def mish(x, inplace=False):
    """Element-wise Mish, ``x * tanh(softplus(x))``.

    Same as ``torch.nn.functional.mish``; ``inplace`` is accepted and ignored (the result is a new
    tensor).
    """
    return _unary("mish", x)


def linear(input, weight, bias=None):  # noqa: A002 - torch's names
    """torch's F.linear: addmm for 2-d input with a bias (AddmmBackward0); for other inputs,
    the same on the rows folded, then a view, or matmul then the bias added in place (as
    torch chooses); matmul without a bias."""
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if bias is None:
        return _matmul(input, _weight_t(weight))
    out = _linear_2d(input, weight, bias)  # the common case, checked once
    if out is not None:
        return out
    if input.ndim == 2:
        return _addmm(bias, input, _weight_t(weight))
    # torch folds the rows into one addmm for a contiguous input and a contiguous bias that
    # is 1-d, or 1-d once its dims of size 1 are dropped
    fusable = bias.ndim == 1 or sum(s != 1 for s in bias.shape) == 1
    if fusable and bias.is_contiguous() and input.is_contiguous():
        # (the row count spelled out: -1 cannot be inferred beside a size-0 last dim)
        rows = _reshape(input, (int(np.prod(input.shape[:-1])), input.shape[-1]))
        out = _addmm(bias, rows, _weight_t(weight))
        return _reshape(out, (*input.shape[:-1], out.shape[1]))
    # torch's other case: the product, then the bias added in place (so it may broadcast, be
    # of another dtype, or not fit the product: add_'s errors)
    return _matmul(input, _weight_t(weight)).add_(bias)


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero each element with probability p and scale the rest by 1 / (1 - p)."""
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
    """y[n, o] = sum_ij x1[n, i] W[o, i, j] x2[n, j] (+ b[o]), as matrix products."""
    out_f, in1, in2 = weight.shape
    for k, x, n in ((1, input1, in1), (2, input2, in2)):  # else a reshape error naming neither
        if x.ndim == 0 or x.shape[-1] != n:
            got = x.shape[-1] if x.ndim else 0
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got "
                               f"{got} but expected {n}")
    lead = input1.shape[:-1]
    x1 = _reshape(input1, (-1, in1))
    x2 = _reshape(input2, (-1, in2))
    t = _matmul(x1, _reshape(_permute(weight, 1, 0, 2), (in1, out_f * in2)))  # (n, out * in2)
    y = (_reshape(t, (-1, out_f, in2)) * _unsqueeze(x2, 1)).sum(-1)
    y = _reshape(y, (*lead, out_f))
    return y + bias if bias is not None else y


def torch_dropout(input, p, train):  # noqa: A002 - torch's names
    """torch.dropout(input, p, train): F.dropout with positional arguments."""
    return dropout(input, p, train)
