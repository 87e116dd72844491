# ruff: noqa: N803, N806 - the front ends keep the usual names of conv geometry (H, W, ...)
"""torch.nn.functional's convolutions and 2-d pooling over ops/nn/conv.py's kernels and records:
argument checks with torch's messages, recording, and the differentiable rules."""

import warnings

import numpy as np

from ... import dtypes
from ...engine.half import in_float32
from ...engine.record import record
from ...engine.registry import vjp_rule
from ...tensor import _make
from ..elementwise.pointwise import to_dtype
from ..index.indexing import gather_flat, index_add_flat
from ..reduce.reductions import mean as _mean
from ..reduce.reductions import sum as _sum
from ..shape.movement import permute, reshape, squeeze, transpose, unsqueeze
from ..vjp import const
from .conv import CONV, CONV_TRANSPOSE, _iat, conv_forward
from .pool2d import (
    ADAPTIVE_AVG_POOL2D,
    AVG_POOL2D,
    MAX_POOL2D,
    _avgpool_map,
    avgpool_forward,
    maxpool_forward,
)

# (float16 operands computed in float32, rounded once: half.py)
_conv_forward = in_float32(conv_forward)
_maxpool_forward = in_float32(maxpool_forward)
_avgpool_forward = in_float32(avgpool_forward)


def _sizes(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"




def _ints(v, n):
    """An int (repeated n times) or a sequence of ints, as a list."""
    if isinstance(v, (int, np.integer)):
        return [int(v)] * n
    return [int(a) for a in v]


def _expand(values, name, dim):
    if len(values) == 1:
        return values * dim
    if len(values) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={_sizes(values)}")
    return values


def _batchify(x, nsp, name):
    if x.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to "
                           f"{name}, but got input of size: {_sizes(x.shape)}")
    if x.ndim == nsp + 2:
        return x, True
    return unsqueeze(x, 0), False


def _check_types(x, w, b):
    """torch's CPU backend checks: the input's dtype decides the wording (a float32 input
    goes to oneDNN, which refuses any other dtype; the others take a bias of any dtype)."""
    for other, what in ((w, "weight"), (b, "bias")):
        if other is None or other.dtype is x.dtype:
            continue
        if what == "bias" and x.dtype is not dtypes.float32:
            continue
        if x.dtype is dtypes.float32:
            raise RuntimeError(f"Input type (torch.{x.dtype.scalar_name}Tensor) and {what} "
                               f"type (torch.{other.dtype.scalar_name}Tensor) should be the "
                               f"same or input should be a MKLDNN tensor and {what} is a dense "
                               f"tensor")
        raise RuntimeError(f"expected scalar type {x.dtype.scalar_name} but found "
                           f"{other.dtype.scalar_name}")


def _check_shape(x, w, b, stride, padding, dilation, groups, transposed, output_padding):
    """torch's check_shape_forward, in its order."""
    xs = x._data.shape
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    ws = tuple(w._data.shape)
    if w.ndim != x.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight "
                           f"{_sizes(ws)}, but got {x.ndim}-dimensional input of size "
                           f"{_sizes(xs)} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {_sizes(ws)} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{_sizes(ws)}] instead")
    if not transposed:
        if xs[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {_sizes(ws)}, expected "
                               f"input{_sizes(xs)} to have {ws[1] * groups} channels, but "
                               f"got {xs[1]} channels instead")
        if b is not None and (b.ndim != 1 or b.shape[0] != ws[0]):
            raise RuntimeError(f"Given weight of size {_sizes(ws)}, expected bias to be "
                               f"1-dimensional with {ws[0]} elements, but got bias of size "
                               f"{_sizes(b.shape)} instead")
        padded = [xs[2 + i] + 2 * padding[i] for i in range(len(padding))]
        kernel = [dilation[i] * (ws[2 + i] - 1) + 1 for i in range(len(padding))]
        if any(p < k for p, k in zip(padded, kernel)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                               f"than actual input size")
    else:
        if xs[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_sizes(ws)}, expected "
                               f"input{_sizes(xs)} to have {ws[0]} channels, but got "
                               f"{xs[1]} channels instead")
        if b is not None and (b.ndim != 1 or b.shape[0] != ws[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {_sizes(ws)}, expected bias "
                               f"to be 1-dimensional with {ws[1] * groups} elements, but got "
                               f"bias of size {_sizes(b.shape)} instead")


def _convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups,
                 transpose_raw=None):
    """at::convolution on a batched input: checks, then the op with symmetric padding
    (``transpose_raw`` records a transposed one: conv_transpose_raw's signature, by default
    conv_transpose_raw itself)."""
    xs, wsh = x._data.shape, w._data.shape
    dim = w.ndim - 2
    if dim <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride = _expand(stride, "stride", dim)
    padding = _expand(padding, "padding", dim)
    dilation = _expand(dilation, "dilation", dim)
    output_padding = _expand(output_padding, "output_padding", dim)
    _check_shape(x, w, b, stride, padding, dilation, groups, transposed, output_padding)
    _check_types(x, w, b)
    if transposed:
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            # torch checks a 1-d one as 2-d with a height of 1
            nd = max(dim, 2)
            op2, st2, di2 = ([0] * (nd - dim) + output_padding, [1] * (nd - dim) + stride,
                             [1] * (nd - dim) + dilation)
            names = ("depth", "height", "width")[3 - nd:]
            parts = [f"output_padding_{n}: {v}" for n, v in zip(names, op2)]
            parts += [f"stride_{n}: {v}" for n, v in zip(names, st2)]
            parts += [f"dilation_{n}: {v}" for n, v in zip(names, di2)]
            raise RuntimeError("output padding must be smaller than either stride or "
                               "dilation, but got " + " ".join(parts))
        out = [(xs[2 + i] - 1) * stride[i] - 2 * padding[i]
               + dilation[i] * (wsh[2 + i] - 1) + output_padding[i] + 1 for i in range(dim)]
        if any(o < 0 for o in out):
            raise RuntimeError(f"Given input size per channel: "
                               f"({' x '.join(str(s) for s in xs[2:])}). Calculated output "
                               f"size per channel: ({' x '.join(map(str, out))}). Output size is "
                               f"too small")
        return (transpose_raw or conv_transpose_raw)(x, w, b, stride, dilation, padding, out,
                                                     groups)
    out = [(xs[2 + i] + 2 * padding[i] - dilation[i] * (wsh[2 + i] - 1) - 1)
           // stride[i] + 1 for i in range(dim)]
    return conv_raw(x, w, b, stride, dilation, padding, out, groups)


_SAME_WARNED = [False]


def _conv_same(x, w, b, stride, dilation, groups):
    """torch's _convolution_same: symmetric padding where it can, else an extra row/column
    at the end (torch pads the input; here the kernel reads past the end as zeros)."""
    k = w.ndim
    if k <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    dim = k - 2
    if k != x.ndim:
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight"
                           f"{_sizes(w.shape)}, but got {x.ndim}-dimensional input of size "
                           f"{_sizes(x.shape)} instead")
    if len(stride) not in (1, dim):
        raise RuntimeError(f"stride cannot broadcast to {dim} dimensions")
    if len(dilation) not in (1, dim):
        raise RuntimeError(f"dilation cannot broadcast to {dim} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = _expand(dilation, "dilation", dim)
    total = [dilation[i] * (w.shape[2 + i] - 1) for i in range(dim)]
    left = [t // 2 for t in total]
    sym = [min(t // 2, t - t // 2) for t in total]
    if left != [t - t // 2 for t in total] and not _SAME_WARNED[0]:
        _SAME_WARNED[0] = True
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created", UserWarning,
                      stacklevel=4)
    # torch checks the symmetric part against the input padded by the difference
    _check_shape(x, w, b, [1] * dim, sym, dilation, groups, False, [0] * dim)
    _check_types(x, w, b)
    return conv_raw(x, w, b, [1] * dim, dilation, left, list(x.shape[2:]), groups)


def _conv_nd(nsp, name, input, weight, bias, stride, padding, dilation, groups):  # noqa: A002
    if isinstance(padding, str):
        x, batched = _batchify(input, nsp, name)
        if padding == "same":
            out = _conv_same(x, weight, bias, _ints(stride, nsp), _ints(dilation, nsp),
                             int(groups))
        elif padding == "valid":
            out = _convolution(x, weight, bias, _ints(stride, nsp), [0] * nsp,
                               _ints(dilation, nsp), False, [0] * nsp, int(groups))
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        if bias is not None and bias.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({input.dtype.c_name}) and bias type "
                               f"({bias.dtype.c_name}) should be the same")
        x, batched = _batchify(input, nsp, name)
        out = _convolution(x, weight, bias, _ints(stride, nsp), _ints(padding, nsp),
                           _ints(dilation, nsp), False, [0] * nsp, int(groups))
    return out if batched else _squeeze0(out)


def _squeeze0(t):
    return squeeze(t, 0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """A 1-D convolution (cross-correlation) of ``input`` with the filters ``weight``.

    Same as ``torch.nn.functional.conv1d``.
    """
    return _conv_nd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """A 2-D convolution (cross-correlation) of ``input`` with the filters ``weight``.

    Same as ``torch.nn.functional.conv2d``.
    """
    return _conv_nd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose_nd(nsp, name, input, weight, bias, stride, padding, output_padding,  # noqa: A002
                       groups, dilation, transpose_raw=None):
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    x, batched = _batchify(input, nsp, name)
    out = _convolution(x, weight, bias, _ints(stride, nsp), _ints(padding, nsp),
                       _ints(dilation, nsp), True, _ints(output_padding, nsp), int(groups),
                       transpose_raw)
    return out if batched else _squeeze0(out)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups=1, dilation=1):
    """A 1-D transposed convolution (the gradient of ``conv1d`` with respect to its input).

    Same as ``torch.nn.functional.conv_transpose1d``.
    """
    return _conv_transpose_nd(1, "conv_transpose1d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups=1, dilation=1):
    """A 2-D transposed convolution (the gradient of ``conv2d`` with respect to its input).

    Same as ``torch.nn.functional.conv_transpose2d``.
    """
    return _conv_transpose_nd(2, "conv_transpose2d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


# ---- the recording primitives (no checks: the front ends and the rules call them) ----------
def _flat(t, dtype):
    a = t._array()
    return np.ascontiguousarray(a, dtype=dtype).reshape(-1)


def _run(x, w, b, out_shape, iat):
    """Forward through the compiled kernel in the operands' dtype (integers in float64, then
    rounded back, as torch computes them exactly)."""
    dt = x._array().dtype
    work = dt if dt.kind == "f" else np.dtype(np.float64)
    bias = _flat(b, work) if b is not None else np.zeros(0, work)
    y = _conv_forward(_flat(x, work), _flat(w, work), bias, np.array(x._data.shape, np.int64),
                     np.array(out_shape, np.int64), np.array(w._data.shape, np.int64), iat)
    if work != dt:
        y = np.rint(y).astype(dt)
    return y.reshape(out_shape)


def _no_bias(x):
    return _make(np.zeros(0, x._array().dtype))


def _bias_as(b, x):
    """The bias in the input's dtype (torch converts it; its gradient converts back)."""
    if b is None or b.dtype is x.dtype:
        return b
    return to_dtype(b, x.dtype)


def conv_raw(x, w, b, stride, dilation, pads, out_spatial, groups):
    """Record a convolution of batched ``x`` with explicit geometry: ``pads`` are the leading
    paddings, ``out_spatial`` the output's spatial size (any trailing padding is implied)."""
    b = _bias_as(b, x)
    iat = _iat(0, groups, stride, dilation, pads)
    out_shape = (x._data.shape[0], w._data.shape[0], *out_spatial)
    value = _run(x, w, b, out_shape, iat)
    return record(CONV, value, (x, w, b if b is not None else _no_bias(x)), iat)


def conv_transpose_raw(x, w, b, stride, dilation, pads, out_spatial, groups):
    """Record a transposed convolution of batched ``x`` to the spatial size ``out_spatial``."""
    b = _bias_as(b, x)
    iat = _iat(1, groups, stride, dilation, pads)
    out_shape = (x._data.shape[0], w._data.shape[1] * groups, *out_spatial)
    value = _run(x, w, b, out_shape, iat)
    return record(CONV_TRANSPOSE, value, (x, w, b if b is not None else _no_bias(x)), iat)


# ---- pooling front ends --------------------------------------------------------------------
def _pool_pair(v, message, allow_empty=False):
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    v = tuple(v)
    if allow_empty and not v:
        return None
    if len(v) == 1:
        return int(v[0]), int(v[0])
    if len(v) != 2:
        raise RuntimeError(message)
    return int(v[0]), int(v[1])


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _pool_out(size, k, pad, stride, dilation, ceil_mode):
    """torch's pooling_output_shape, with its checks."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _trunc_div((k - 1) * dilation + 1, 2):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={k} and dilation={dilation}")
    out = (size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)) \
        // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_check(x, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    """torch's pool2d_shape_check."""
    if kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if sw <= 0 or sh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dh} "
                           f"dilationW: {dw}")
    s = x.shape
    valid = x.ndim >= 3 and s[1] != 0 and s[2] != 0
    if not ((x.ndim == 3 and s[0] != 0 and valid) or (x.ndim == 4 and valid and s[3] != 0)):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{_sizes(s)}")
    if kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}")
    if wo < 1 or ho < 1:
        raise RuntimeError(f"Given input size: ({s[-3]}x{s[-2]}x{s[-1]}). Calculated output "
                           f"size: ({s[-3]}x{ho}x{wo}). Output size is too small")


def _size_at(x, d):
    if not -x.ndim <= d < x.ndim:
        lo, hi = (-x.ndim, x.ndim - 1) if x.ndim else (-1, 0)
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], "
                         f"but got {d})")
    return x.shape[d]


def _pool_window_args(name, kernel_size, stride, padding):
    """(kh, kw, sh, sw, ph, pw) with torch's messages; the stride defaults to the kernel."""
    kh, kw = _pool_pair(kernel_size, f"{name}: kernel_size must either be a single int, or a "
                        "tuple of two ints")
    st = None if stride is None else _pool_pair(
        stride, f"{name}: stride must either be omitted, a single int, or a tuple of two ints",
        allow_empty=True)
    sh, sw = st if st is not None else (kh, kw)
    ph, pw = _pool_pair(padding, f"{name}: padding must either be a single int, or a tuple of "
                        "two ints")
    return kh, kw, sh, sw, ph, pw


def _pool_value(x):
    return np.ascontiguousarray(x._array()).reshape(-1)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """Max pooling over a 2-D signal, ``kernel_size`` windows every ``stride`` (and indices).

    Same as ``torch.nn.functional.max_pool2d``.
    """
    kh, kw, sh, sw, ph, pw = _pool_window_args("max_pool2d", kernel_size, stride, padding)
    dh, dw = _pool_pair(dilation, "max_pool2d: dilation must be either a single int, or a "
                        "tuple of two ints")
    x = input
    if x.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    H, W = x.shape[-2:]
    ho = _pool_out(H, kh, ph, sh, dh, ceil_mode)
    wo = _pool_out(W, kw, pw, sw, dw, ceil_mode)
    _pool_check(x, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo)
    if x.dtype is dtypes.bool_:
        raise NotImplementedError('"max_pool2d" not implemented for \'Bool\'')
    prm = np.array([kh, kw, sh, sw, ph, pw, dh, dw, int(bool(ceil_mode))], np.int64)
    planes = int(np.prod(x.shape[:-2]))
    data = _pool_value(x)
    y, pos = _maxpool_forward(data, planes, H, W, ho, wo, prm, data[:0])
    shape = (*x.shape[:-2], ho, wo)
    out = record(MAX_POOL2D, y.reshape(shape), (x,), np.concatenate([prm, pos]))
    if return_indices:
        local = pos.reshape(planes, ho * wo) - (np.arange(planes, dtype=np.int64) * H * W)[:, None]
        return out, _make(local.reshape(shape))
    return out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True, divisor_override=None):
    """Average pooling over a 2-D signal, ``kernel_size`` windows every ``stride``.

    Same as ``torch.nn.functional.avg_pool2d``.
    """
    kh, kw, sh, sw, ph, pw = _pool_window_args("avg_pool2d", kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = input
    _size_at(x, -3)
    H, W = x.shape[-2:]
    ho = _pool_out(H, kh, ph, sh, 1, ceil_mode)
    wo = _pool_out(W, kw, pw, sw, 1, ceil_mode)
    _pool_check(x, kh, kw, sh, sw, ph, pw, 1, 1, ho, wo)
    if x.dtype is dtypes.bool_:
        raise NotImplementedError('"avg_pool2d" not implemented for \'Bool\'')
    div = 0 if divisor_override is None else int(divisor_override)
    prm = np.array([0, kh, kw, sh, sw, ph, pw, int(bool(count_include_pad)),
                    int(divisor_override is not None), div, int(bool(ceil_mode))], np.int64)
    return _avg_record(AVG_POOL2D, x, ho, wo, prm)


def _avg_record(op, x, ho, wo, prm):
    H, W = x.shape[-2:]
    planes = int(np.prod(x.shape[:-2]))
    data = _pool_value(x)
    integer = data.dtype.kind != "f"
    src = data.astype(np.float64) if integer else data
    y = _avgpool_forward(src, planes, H, W, ho, wo, prm, data[:0], integer)
    return record(op, y.reshape((*x.shape[:-2], ho, wo)), (x,), prm)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Average pooling over a 2-D signal into an ``output_size`` grid of windows.

    Same as ``torch.nn.functional.adaptive_avg_pool2d``.
    """
    x = input
    if not isinstance(output_size, (int, np.integer)):
        out = list(output_size)
        if x.ndim <= len(out):
            raise ValueError(f"Input dimension should be at least {len(out) + 1}")
        out = [d if v is None else v for v, d in zip(out, x.shape[-len(out):])]
    else:
        out = [int(output_size)] * 2
    if len(out) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    oh, ow = int(out[0]), int(out[1])
    if oh < 0 or ow < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{oh}, {ow}}}")
    if oh == 1 and ow == 1:  # torch: a mean over the last two dims (MeanBackward1)
        return _mean(x, (-1, -2), keepdim=True)
    if x.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{_sizes(x.shape)}")
    for d in (-2, -1):
        if x.shape[d] <= 0:
            raise RuntimeError(f"adaptive_avg_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {_sizes(x.shape)} "
                               f"with dimension {d + x.ndim} being empty")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for "
                                  f"'{x.dtype.scalar_name}'")
    prm = np.zeros(11, np.int64)
    prm[0] = 1
    return _avg_record(ADAPTIVE_AVG_POOL2D, x, oh, ow, prm)


# ---- differentiable derivatives (create_graph) ----------------------------------------------
def _geometry(ctx):
    """(groups, stride, dilation, leading pads) of a conv node, per spatial dim."""
    ia = [int(v) for v in ctx.iat]
    nsp = len(ctx.shapes[0]) - 2
    groups = ia[1]
    if nsp == 1:
        return groups, [ia[3]], [ia[5]], [ia[7]]
    return groups, ia[2:4], ia[4:6], ia[6:8]


def _weight_gradient(wide, narrow, w_shape, stride, dilation, pads, groups):
    """The weight gradient of a convolution relating ``wide`` and ``narrow``, as a recorded
    convolution: batch and channels swap roles, and stride and dilation swap too."""
    n, c = wide.shape[:2]
    co = narrow.shape[1]
    sp_w, sp_n = tuple(wide.shape[2:]), tuple(narrow.shape[2:])
    nsp = len(sp_w)
    tail = tuple(range(3, 3 + nsp))
    xs = reshape(wide, (n, groups, c // groups, *sp_w))
    xs = reshape(permute(xs, 2, 1, 0, *tail), (c // groups, groups * n, *sp_w))
    gs = reshape(narrow, (n, groups, co // groups, *sp_n))
    gs = reshape(permute(gs, 1, 2, 0, *tail), (co, n, *sp_n))
    r = conv_raw(xs, gs, None, dilation, stride, pads, list(w_shape[2:]), groups)
    return transpose(r, 0, 1)


def _bias_gradient(g):
    return _sum(g, (0, *range(2, g.ndim)))


@vjp_rule(CONV)
def _conv_vjp(ctx, g):
    groups, stride, dilation, pads = _geometry(ctx)
    x_shape = ctx.shapes[0]
    gx = conv_transpose_raw(g, ctx.x(1), None, stride, dilation, pads, list(x_shape[2:]),
                            groups) if ctx.needs[0] else None
    gw = _weight_gradient(ctx.x(0), g, ctx.shapes[1], stride, dilation, pads, groups) \
        if ctx.needs[1] else None
    gb = _bias_gradient(g) if ctx.needs[2] else None
    return [gx, gw, gb]


@vjp_rule(CONV_TRANSPOSE)
def _conv_transpose_vjp(ctx, g):
    groups, stride, dilation, pads = _geometry(ctx)
    x_shape = ctx.shapes[0]
    gx = conv_raw(g, ctx.x(1), None, stride, dilation, pads, list(x_shape[2:]), groups) \
        if ctx.needs[0] else None
    gw = _weight_gradient(g, ctx.x(0), ctx.shapes[1], stride, dilation, pads, groups) \
        if ctx.needs[1] else None
    gb = _bias_gradient(g) if ctx.needs[2] else None
    return [gx, gw, gb]


@vjp_rule(MAX_POOL2D)
def _max_pool_vjp(ctx, g):
    return [index_add_flat(g, np.asarray(ctx.iat[9:], np.int64), ctx.shapes[0])]


@vjp_rule(AVG_POOL2D, ADAPTIVE_AVG_POOL2D)
def _avg_pool_vjp(ctx, g):
    shape, out_shape = tuple(ctx.shapes[0]), tuple(ctx.shape)
    H, W = shape[-2:]
    planes = int(np.prod(shape[:-2]))
    out, inp, coef = _avgpool_map(planes, H, W, out_shape[-2], out_shape[-1],
                                  np.asarray(ctx.iat, np.int64))
    picked = gather_flat(g, out, (len(out),))
    return [index_add_flat(picked * const(coef, g._array().dtype), inp, shape)]


__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool2d",
           "avg_pool2d", "adaptive_avg_pool2d"]
