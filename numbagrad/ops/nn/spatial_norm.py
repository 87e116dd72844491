# ruff: noqa: A002 - torch's argument names (input)
"""torch.nn.functional's group norm (a table op: NativeGroupNormBackward0), and instance,
local response and RMS norm as torch composes them."""

import numpy as np

from ...core.grad_mode import no_grad
from ...engine.record import record
from ...engine.registry import vjp_rule
from ...factories import ones, zeros
from ..elementwise.public import rsqrt
from ..reduce.reductions import mean as _mean
from ..reduce.reductions import sum as _sum
from ..shape.movement import reshape
from .conv_functional import avg_pool2d
from .norm import _normalization_grad, _stats, batch_norm
from .pad import pad
from .pool import avg_pool3d
from .spatial_kernels import group_norm_fw
from .spatial_maps import GROUP_NORM


def _sizes(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


_NO = np.empty(0, np.int64)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Group normalization: statistics over groups of channels, per sample.

    Same as ``torch.nn.functional.group_norm``.

    Args:
        input: (N, C, *), at least 2-D.
        num_groups: the number of groups; it divides C.
        weight: the scale per channel, (C), or None for 1 (default None).
        bias: the shift per channel, (C), or None for 0 (default None).
        eps: added to the variance (default 1e-5).

    Returns:
        A tensor of ``input``'s shape.
    """
    x, groups = input, int(num_groups)
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{x.ndim}")
    c = x.shape[1]
    if groups <= 0 or c % groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_sizes(x.shape)} and "
                           f"num_groups={groups}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of "
                               f"channels in input, but got {what} of shape {_sizes(t.shape)} "
                               f"and input of shape {_sizes(x.shape)}")
    if any(t is not None and t.dtype is not x.dtype for t in (weight, bias)):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"GroupNormKernelImpl\" not implemented for "
                                  f"'{x.dtype.scalar_name}'")
    dt = x.dtype
    w = weight if weight is not None else ones(c, dtype=dt)
    b = bias if bias is not None else zeros(c, dtype=dt)
    data = x._array()
    y = np.empty(data.size)
    args = [np.ascontiguousarray(a, np.float64).reshape(-1) for a in (data, w._array(),
                                                                        b._array())]
    shape = np.array(data.shape, np.int64)
    group_norm_fw(y, *args, _NO, shape, _NO, _NO, np.array([groups], np.int64),
                  np.array([float(eps)]))
    out = y.astype(data.dtype).reshape(data.shape)
    return record(GROUP_NORM, out, (x, w, b), (groups,), (float(eps),))


@vjp_rule(GROUP_NORM)
def _group_norm_vjp(ctx, g):
    x, w = ctx.x(0), ctx.x(1)
    shape = tuple(ctx.shapes[0])
    n, c, groups = shape[0], shape[1], int(ctx.iat[0])
    grouped = (n, groups, -1)
    xs = reshape(x, grouped)
    xhat, rstd = _stats(xs, (2,), ctx.fat[0])
    xhat = reshape(xhat, shape)
    chan = (1, c) + (1,) * (len(shape) - 2)
    axes = (0, *range(2, len(shape)))
    out = [None, None, None]
    if ctx.needs[0]:
        g_w = reshape(g * reshape(w, chan), grouped)
        out[0] = reshape(_normalization_grad(g_w, reshape(xhat, grouped), rstd, (2,)), shape)
    if ctx.needs[1]:
        out[1] = _sum(g * xhat, axes)
    if ctx.needs[2]:
        out[2] = _sum(g, axes)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """torch's composition: batch norm of the input seen as one sample of N * C channels,
    the running statistics averaged over the batch, the result viewed back.

    Args:
        input: (N, C, *spatial), with more than one spatial element when
            ``use_input_stats``.
        running_mean: the running means per channel, (C), or None (default None); updated
            in place when ``use_input_stats``.
        running_var: the running variances per channel, (C), or None (default None).
        weight: the scale per channel, (C), or None for 1 (default None).
        bias: the shift per channel, (C), or None for 0 (default None).
        use_input_stats: whether to normalize with each sample's own statistics rather
            than the running ones (default True).
        momentum: the weight of the new statistics in the running ones (default 0.1).
        eps: added to the variance (default 1e-5).

    Returns:
        A tensor of ``input``'s shape.
    """
    x = input
    if use_input_stats:
        spatial = int(np.prod(x.shape[2:])) if x.ndim > 2 else 1
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {x.shape}")
    n, c = x.shape[0], x.shape[1]
    flat = x.reshape(1, n * c, *x.shape[2:])
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    out = batch_norm(flat, rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats:
        with no_grad():
            for run, per in ((running_mean, rm), (running_var, rv)):
                if run is not None:
                    run._array()[...] = per._array().reshape(n, c).mean(0)
                    run._vc[0] += 1
    return out.view(*x.shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Each channel divided by a power of the sum of squares of its ``size`` neighbours.

    Same as ``torch.nn.functional.local_response_norm``.

    Args:
        input: (N, C, *), at least 3-D.
        size: the number of neighbouring channels summed over.
        alpha: the multiplicative factor (default 1e-4).
        beta: the exponent (default 0.75).
        k: the additive constant (default 1.0).

    Returns:
        A tensor of ``input``'s shape.
    """
    x = input
    dim = x.ndim
    if dim < 3:
        # (torch's message keeps its source's line-continuation indent)
        raise ValueError(f"Expected 3D or higher dimensionality{' ' * 26}input (got {dim} "
                         f"dimensions)")
    if x.numel() == 0:
        return x
    div = x.mul(x)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = x.shape
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(*sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return x / div


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the last dimensions ``normalized_shape``.

    Same as ``torch.nn.functional.rms_norm``.

    Args:
        input: a tensor whose trailing dimensions are ``normalized_shape``.
        normalized_shape: the shape of the trailing dimensions normalized over (an int or a
            sequence).
        weight: the scale, of shape ``normalized_shape``, or None for 1 (default None).
        eps: added to the mean square (default None: the dtype's machine epsilon).

    Returns:
        A tensor of ``input``'s shape.
    """
    x = input
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(normalized_shape)
    if tuple(x.shape[x.ndim - len(shape):]) != shape or len(shape) > x.ndim:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in shape)}], but got input of size"
                           f"{list(x.shape)}")
    if eps is None:
        eps = float(np.finfo(x._array().dtype).eps)
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    out = x * rsqrt(_mean(x.pow(2), dims, keepdim=True) + eps)
    return out * weight if weight is not None else out


__all__ = ["group_norm", "instance_norm", "local_response_norm", "rms_norm"]
