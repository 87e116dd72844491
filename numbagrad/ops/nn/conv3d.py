# ruff: noqa: A002 - torch's argument names (input)
"""torch.nn.functional.conv3d and conv_transpose3d: one table op (ConvolutionBackward0, a flag
in its iat telling a transposed one) over direct-loop kernels (spatial_kernels), torch's
argument checks (conv_functional's), and a differentiable rule written as im2col products of
numbagrad ops and the op itself."""

import numpy as np

from ...engine.record import record
from ...engine.registry import Sample, defop, vjp_rule
from ...tensor import _make
from ..index.indexing import gather_flat, index_add_flat
from ..linalg.matmul import matmul
from ..reduce.reductions import sum as _sum
from ..shape.movement import reshape, squeeze, transpose
from .conv_functional import (
    _batchify,
    _bias_as,
    _check_shape,
    _check_types,
    _conv_transpose_nd,
    _expand,
    _ints,
    _sizes,
)
from .pad import pad
from .spatial_kernels import conv3d_bw, conv3d_fw

_F = "lib.nn.functional."
CONV3D = defop(
    "conv3d", "ConvolutionBackward0", 3, replay="conv3d_fw", kernel=conv3d_bw,
    saves=("x0", "x1"),
    samples=[Sample(((1, 2, 3, 4, 3), (3, 2, 2, 2, 1), (3,)), {}, _F + "conv3d(x0, x1, x2)"),
             Sample(((2, 4, 3, 3, 4), (2, 2, 2, 1, 3)), {"stride": (1, 2, 1), "padding": 1,
                                                         "dilation": (1, 1, 2), "groups": 2},
                    _F + "conv3d(x0, x1, **kw)"),
             Sample(((1, 2, 3, 2, 3), (2, 3, 2, 2, 1), (3,)), {"stride": (2, 1, 2)},
                    _F + "conv_transpose3d(x0, x1, x2, **kw)"),
             Sample(((2, 4, 2, 3, 2), (4, 1, 1, 2, 3)), {"padding": (0, 1, 1), "groups": 2,
                                                         "dilation": (1, 2, 1),
                                                         "output_padding": (0, 1, 0),
                                                         "stride": 2},
                    _F + "conv_transpose3d(x0, x1, **kw)")])

_NO = np.empty(0, np.int64)


def _record(x, w, b, stride, dilation, lead_pads, out_spatial, groups, transposed=0):
    """Record a (transposed) 3-d convolution of batched ``x`` to the spatial size
    ``out_spatial``; ``lead_pads`` are the narrow side's leading paddings."""
    iat = np.array([groups, *stride, *dilation, *lead_pads, transposed], np.int64)
    dt = x._array().dtype
    work = np.dtype(np.float64)  # as compiled replay computes it, then rounded to dt
    args = [np.ascontiguousarray(t._array(), work).reshape(-1) for t in (x, w)]
    bias = np.zeros(0, work) if b is None else np.ascontiguousarray(b._array(), work).reshape(-1)
    channels = w.shape[1] * groups if transposed else w.shape[0]
    out_shape = (x.shape[0], channels, *out_spatial)
    y = np.empty(int(np.prod(out_shape)), work)
    conv3d_fw(y, *args, bias, np.array(out_shape, np.int64), np.array(x.shape, np.int64),
              np.array(w.shape, np.int64), _NO, iat, np.zeros(0))
    y = (np.rint(y) if dt.kind != "f" else y).astype(dt).reshape(out_shape)
    b = b if b is not None else _make(np.zeros(0, dt))
    return record(CONV3D, y, (x, w, b), iat)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """A 3-D convolution (cross-correlation) of ``input`` with the filters ``weight``.

    Same as ``torch.nn.functional.conv3d``.
    """
    x, batched = _batchify(input, 3, "conv3d")
    w = weight
    groups = int(groups)
    if w.ndim != 5:
        raise RuntimeError(f"Expected 5-dimensional input for 5-dimensional weight "
                           f"{_sizes(w.shape)}, but got {x.ndim}-dimensional input of size "
                           f"{_sizes(x.shape)} instead")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride = _expand(_ints(stride, 3), "stride", 3)
    dilation = _expand(_ints(dilation, 3), "dilation", 3)
    k = [dilation[i] * (w.shape[2 + i] - 1) for i in range(3)]
    if isinstance(padding, str):
        if padding == "valid":
            lead, sym = [0] * 3, [0] * 3
            out = None
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            lead = [t // 2 for t in k]
            sym = [min(t // 2, t - t // 2) for t in k]
            out = list(x.shape[2:])
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        lead = sym = _expand(_ints(padding, 3), "padding", 3)
        out = None
    _check_shape(x, w, bias, stride, sym, dilation, groups, False, [0] * 3)
    _check_types(x, w, bias)
    if out is None:
        out = [(x.shape[2 + i] + 2 * lead[i] - k[i] - 1) // stride[i] + 1 for i in range(3)]
    y = _record(x, w, bias, stride, dilation, lead, out, groups)
    return y if batched else squeeze(y, 0)


def _record_transposed(x, w, b, stride, dilation, pads, out_spatial, groups):
    """conv_functional's conv_transpose_raw for 3-d: the same op, transposed."""
    return _record(x, w, _bias_as(b, x), stride, dilation, pads, out_spatial, groups, 1)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """A 3-D transposed convolution (the gradient of ``conv3d`` with respect to its input).

    Same as ``torch.nn.functional.conv_transpose3d``.
    """
    return _conv_transpose_nd(3, "conv_transpose3d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation, _record_transposed)


def _cols(x_shape, w_shape, out, iat):
    """im2col positions (N, G, Cg * K, L) into the input padded by the leading pads on both
    sides and enough trailing padding for every window."""
    n, c = x_shape[:2]
    co, cg = w_shape[:2]
    groups = int(iat[0])
    stride, dil, lead = iat[1:4], iat[4:7], iat[7:10]
    need = [(out[i] - 1) * stride[i] + dil[i] * (w_shape[2 + i] - 1) + 1 for i in range(3)]
    padded = [max(need[i], x_shape[2 + i] + 2 * lead[i]) for i in range(3)]
    pos = np.arange(n * c * int(np.prod(padded)), dtype=np.int64).reshape(n, c, *padded)
    kk = [np.arange(w_shape[2 + i]) * dil[i] for i in range(3)]
    oo = [np.arange(out[i]) * stride[i] for i in range(3)]
    idx = [(kk[i][:, None] + oo[i][None, :]) for i in range(3)]  # (K_i, O_i)
    sel = pos[:, :, idx[0][:, None, None, :, None, None], idx[1][None, :, None, None, :, None],
              idx[2][None, None, :, None, None, :]]  # (N, C, KD, KH, KW, OD, OH, OW)
    kv, length = int(np.prod(w_shape[2:])), int(np.prod(out))
    cols = sel.reshape(n, groups, cg * kv, length)
    trail = [padded[i] - x_shape[2 + i] - lead[i] for i in range(3)]
    return cols, padded, trail


def _weight_gradient(wide, narrow, w_shape, out, iat):
    """The weight's gradient: each weight tap's products of the narrow side with the wide
    side's im2col columns, summed over the batch."""
    groups, lead = int(iat[0]), iat[7:10]
    n, co = narrow.shape[0], w_shape[0]
    cols_pos, _, trail = _cols(tuple(wide.shape), w_shape, out, iat)
    xp = pad(wide, (lead[2], trail[2], lead[1], trail[1], lead[0], trail[0]))
    cols = gather_flat(xp, cols_pos, cols_pos.shape)
    gg = reshape(narrow, (n, groups, co // groups, -1))  # (N, G, cog, L)
    return reshape(_sum(matmul(gg, transpose(cols, -1, -2)), 0), w_shape)  # (G, cog, Cg K)


@vjp_rule(CONV3D)
def _conv3d_vjp(ctx, g):
    iat = np.asarray(ctx.iat, np.int64)
    groups, stride, dil, lead = int(iat[0]), iat[1:4], iat[4:7], iat[7:10]
    x, w = ctx.x(0), ctx.x(1)
    x_shape, w_shape, out_shape = tuple(ctx.shapes[0]), tuple(ctx.shapes[1]), tuple(ctx.shape)
    result = [None, None, None]
    if iat[10]:  # transposed: x narrow and g wide, so x's gradient is g convolved
        if ctx.needs[0]:
            result[0] = _record(g, w, None, stride, dil, lead, x_shape[2:], groups)
        if ctx.needs[1]:
            result[1] = _weight_gradient(g, x, w_shape, x_shape[2:], iat)
    else:
        if ctx.needs[1]:
            result[1] = _weight_gradient(x, g, w_shape, out_shape[2:], iat)
        if ctx.needs[0]:
            n, co = x_shape[0], w_shape[0]
            cols_pos, padded, _ = _cols(x_shape, w_shape, out_shape[2:], iat)
            gg = reshape(g, (n, groups, co // groups, -1))  # (N, G, cog, L)
            wg = reshape(w, (groups, co // groups, -1))  # (G, cog, Cg K)
            gcols = matmul(transpose(wg, -1, -2), gg)  # (N, G, Cg K, L)
            gxp = index_add_flat(gcols, cols_pos, (n, x_shape[1], *padded))
            result[0] = gxp[:, :, lead[0]:lead[0] + x_shape[2], lead[1]:lead[1] + x_shape[3],
                            lead[2]:lead[2] + x_shape[4]]
    if ctx.needs[2]:
        result[2] = _sum(g, (0, 2, 3, 4))
    return result


__all__ = ["conv3d", "conv_transpose3d"]
