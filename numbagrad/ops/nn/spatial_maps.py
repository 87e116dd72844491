"""The spatial ops' table records and their recording: each op is one of three fixed maps
(spatial_kernels: gather, rows of taps, window max) under torch's grad_fn name, built from
per-dimension index tables (``separable``), with the differentiable rules of the three maps
(flat index maps, numbagrad/ops/index/indexing.py)."""

from array import array

import numpy as np

from ...engine.record import record
from ...engine.registry import Sample, defop, vjp_rule
from ..index.indexing import gather_flat, index_add_flat
from ..vjp import const
from .spatial_kernels import (
    gather_fill_bw,
    group_norm_bw,
    sparse_rows_bw,
    sparse_rows_fw,
    window_max_bw,
)

_F = "lib.nn.functional."


def _gather_op(name, grad_fn, samples, **kw):
    return defop(name, grad_fn, 1, replay="gather_fill_fw", kernel=gather_fill_bw,
                 samples=samples, **kw)


def _rows_op(name, grad_fn, samples, **kw):
    return defop(name, grad_fn, 1, replay="sparse_rows_fw", kernel=sparse_rows_bw,
                 samples=samples, **kw)


def _s(call, *shapes, **kw):
    return Sample(tuple(shapes), kw, _F + call)


# ---- gathers ---------------------------------------------------------------------------------
CONSTANT_PAD = _gather_op("constant_pad_nd", "ConstantPadNdBackward0", [
    _s("pad(x0, (1, 2))", (2, 3)),
    _s("pad(x0, (1, -1, 2, 0), value=0.5)", (2, 3, 4)),
    _s("pad(x0, (0, 1, 1, 1, 2, 0))", (1, 2, 3, 2))])
REFLECTION_PAD = {n: _gather_op(f"reflection_pad{n}d", f"ReflectionPad{n}DBackward0", [s])
                  for n, s in ((1, _s("pad(x0, (2, 1), mode='reflect')", (2, 4))),
                               (2, _s("pad(x0, (1, 2, 2, 1), mode='reflect')", (1, 2, 3, 4))),
                               (3, _s("pad(x0, (1, 0, 1, 1, 0, 1), mode='reflect')",
                                      (1, 2, 3, 2, 2))))}
REPLICATION_PAD = {n: _gather_op(f"replication_pad{n}d", f"ReplicationPad{n}DBackward0", [s])
                   for n, s in ((1, _s("pad(x0, (2, 3), mode='replicate')", (2, 3))),
                                (2, _s("pad(x0, (1, 2, 3, 0), mode='replicate')", (2, 2, 3))),
                                (3, _s("pad(x0, (1, 1, 0, 1, 2, 0), mode='replicate')",
                                       (1, 1, 2, 2, 3))))}
# torch pads circularly with slice copies: its output's node is CopySlices
CIRCULAR_PAD = _gather_op("circular_pad", "CopySlices", [
    _s("pad(x0, (2, 1), mode='circular')", (2, 3)),
    _s("pad(x0, (1, 2, 2, 1), mode='circular')", (1, 2, 3, 4))])
UPSAMPLE_NEAREST = {n: _gather_op(f"upsample_nearest{n}d", f"UpsampleNearest{n}DBackward0", [s])
                    for n, s in ((1, _s("interpolate(x0, scale_factor=2.5)", (2, 2, 3))),
                                 (2, _s("interpolate(x0, size=(5, 3))", (1, 2, 3, 4))),
                                 (3, _s("interpolate(x0, scale_factor=(2, 1, 1.5))",
                                        (1, 1, 2, 2, 3))))}
UPSAMPLE_NEAREST_EXACT = {
    n: _gather_op(f"upsample_nearest_exact{n}d", f"UpsampleNearestExact{n}DBackward0", [s])
    for n, s in ((1, _s("interpolate(x0, size=7, mode='nearest-exact')", (2, 2, 3))),
                 (2, _s("interpolate(x0, scale_factor=1.7, mode='nearest-exact')",
                        (1, 2, 3, 4))),
                 (3, _s("interpolate(x0, size=(3, 2, 4), mode='nearest-exact')",
                        (1, 1, 2, 2, 3))))}
PIXEL_SHUFFLE = _gather_op("pixel_shuffle", "PixelShuffleBackward0", [
    _s("pixel_shuffle(x0, 2)", (1, 8, 2, 3)), _s("pixel_shuffle(x0, 3)", (9, 2, 1))])
PIXEL_UNSHUFFLE = _gather_op("pixel_unshuffle", "PixelUnshuffleBackward0", [
    _s("pixel_unshuffle(x0, 2)", (1, 2, 4, 6))])
CHANNEL_SHUFFLE = _gather_op("channel_shuffle", "ChannelShuffleBackward0", [
    _s("channel_shuffle(x0, 3)", (2, 6, 2)), _s("channel_shuffle(x0, 2)", (1, 4, 2, 3))])
IM2COL = _gather_op("im2col", "Im2ColBackward0", [
    _s("unfold(x0, (2, 3), padding=1, stride=(2, 1))", (2, 2, 4, 5)),
    _s("unfold(x0, 2, dilation=2)", (3, 5, 5))])

# ---- rows of taps ----------------------------------------------------------------------------
UPSAMPLE_LINEAR1D = _rows_op("upsample_linear1d", "UpsampleLinear1DBackward0", [
    _s("interpolate(x0, scale_factor=2.5, mode='linear')", (2, 2, 3)),
    _s("interpolate(x0, size=2, mode='linear', align_corners=True)", (1, 2, 5))])
UPSAMPLE_BILINEAR2D = _rows_op("upsample_bilinear2d", "UpsampleBilinear2DBackward0", [
    _s("interpolate(x0, size=(5, 3), mode='bilinear')", (1, 2, 3, 4)),
    _s("interpolate(x0, scale_factor=2, mode='bilinear', align_corners=True)", (1, 1, 3, 2))])
UPSAMPLE_BICUBIC2D = _rows_op("upsample_bicubic2d", "UpsampleBicubic2DBackward0", [
    _s("interpolate(x0, size=(5, 3), mode='bicubic')", (1, 2, 3, 4)),
    _s("interpolate(x0, scale_factor=1.5, mode='bicubic', align_corners=True)", (1, 1, 3, 2))])
UPSAMPLE_TRILINEAR3D = _rows_op("upsample_trilinear3d", "UpsampleTrilinear3DBackward0", [
    _s("interpolate(x0, scale_factor=(2, 1.5, 1), mode='trilinear')", (1, 1, 2, 2, 3))])
COL2IM = _rows_op("col2im", "Col2ImBackward0", [
    _s("fold(x0, (3, 4), 2)", (2, 12, 6)),
    _s("fold(x0, (4, 3), (2, 2), padding=1, stride=2)", (8, 6))])
AVG_POOL3D = _rows_op("avg_pool3d", "AvgPool3DBackward0", [
    _s("avg_pool3d(x0, 2)", (1, 2, 4, 2, 3)),
    _s("avg_pool3d(x0, (1, 2, 3), stride=1, padding=(0, 1, 1), count_include_pad=False)",
       (2, 3, 3, 4))])
ADAPTIVE_AVG_POOL3D = _rows_op("adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0", [
    _s("adaptive_avg_pool3d(x0, (2, 3, 2))", (1, 2, 3, 5, 4))])

# ---- window maxima ---------------------------------------------------------------------------
_MAX_DOMAIN = (0.1, 3.0)  # positive: no near-ties after the tests' move of values near 0
ADAPTIVE_MAX_POOL2D = defop(
    "adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0", 1, replay="window_max_fw",
    kernel=window_max_bw, saves=("x0",), domain=_MAX_DOMAIN,
    samples=[_s("adaptive_max_pool2d(x0, (2, 3))", (2, 3, 5, 4)),
             _s("adaptive_max_pool2d(x0, 2, return_indices=True)[0]", (2, 3, 3))])
ADAPTIVE_MAX_POOL3D = defop(
    "adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0", 1, replay="window_max_fw",
    kernel=window_max_bw, saves=("x0",), domain=_MAX_DOMAIN,
    samples=[_s("adaptive_max_pool3d(x0, (2, 1, 3))", (1, 2, 3, 2, 4))])
MAX_POOL3D = defop(
    "max_pool3d", "MaxPool3DWithIndicesBackward0", 1, replay="window_max_fw",
    kernel=window_max_bw, saves=("x0",), domain=_MAX_DOMAIN,
    samples=[_s("max_pool3d(x0, 2)", (1, 2, 4, 2, 3)),
             _s("max_pool3d(x0, (1, 2, 2), stride=1, padding=(0, 1, 0), dilation=(1, 1, 2))",
                (2, 3, 3, 4))])
_FRACTIONAL = "{}(x0, 2, output_size={}, _random_samples=lib.tensor({}, dtype=x0.dtype))"
FRACTIONAL_MAX_POOL2D = defop(
    "fractional_max_pool2d", "FractionalMaxPool2DBackward0", 1, replay="window_max_fw",
    kernel=window_max_bw, saves=("x0",), domain=_MAX_DOMAIN,
    samples=[_s(_FRACTIONAL.format("fractional_max_pool2d", 3, [[[0.3, 0.8], [0.6, 0.1]]]),
                (1, 2, 5, 6))])
FRACTIONAL_MAX_POOL3D = defop(
    "fractional_max_pool3d", "FractionalMaxPool3DBackward0", 1, replay="window_max_fw",
    kernel=window_max_bw, saves=("x0",), domain=_MAX_DOMAIN,
    samples=[_s(_FRACTIONAL.format("fractional_max_pool3d", (2, 3, 2), [[[0.3, 0.8, 0.5]]]),
                (1, 4, 5, 4))])

AFFINE_GRID = _rows_op("affine_grid", "AffineGridGeneratorBackward0", [
    _s("affine_grid(x0, (2, 1, 3, 4), align_corners=False)", (2, 2, 3)),
    _s("affine_grid(x0, (1, 1, 2, 3, 2), align_corners=True)", (1, 3, 4))])
# torch's node lists (weight, per_sample_weights): the latter None here (no gradient)
EMBEDDING_BAG = _rows_op("embedding_bag", "EmbeddingBagBackward0", none_operand="last", samples=[
    Sample(((6, 3),), {}, _F + "embedding_bag(lib.tensor([1, 2, 4, 5, 4, 3]), x0, "
           "lib.tensor([0, 3, 3]))"),
    Sample(((5, 2),), {"mode": "sum"}, _F + "embedding_bag(lib.tensor([[1, 2], [4, 1]]), x0, "
           "**kw)")])
EMBEDDING_BAG_MAX = defop(
    "embedding_bag_max", "EmbeddingBagBackward0", 1, replay="window_max_fw", none_operand="last",
    kernel=window_max_bw, saves=("x0",), domain=_MAX_DOMAIN,
    samples=[Sample(((6, 3),), {"mode": "max"}, _F + "embedding_bag(lib.tensor([1, 2, 4, 5, 4, "
                    "3]), x0, lib.tensor([0, 2]), **kw)")])

# ---- group norm ------------------------------------------------------------------------------
GROUP_NORM = defop(
    "group_norm", "NativeGroupNormBackward0", 3, replay="group_norm_fw", kernel=group_norm_bw,
    saves=("x0", "x1"),
    samples=[Sample(((2, 4, 3), (4,), (4,)), {}, _F + "group_norm(x0, 2, x1, x2)"),
             Sample(((1, 6, 2, 2), (6,), (6,)), {"eps": 1e-3},
                    _F + "group_norm(x0, 3, x1, x2, **kw)")])


GATHER_OPS = (CONSTANT_PAD, CIRCULAR_PAD, PIXEL_SHUFFLE, PIXEL_UNSHUFFLE, CHANNEL_SHUFFLE,
              IM2COL, *REFLECTION_PAD.values(), *REPLICATION_PAD.values(),
              *UPSAMPLE_NEAREST.values(), *UPSAMPLE_NEAREST_EXACT.values())
ROWS_OPS = (UPSAMPLE_LINEAR1D, UPSAMPLE_BILINEAR2D, UPSAMPLE_BICUBIC2D, UPSAMPLE_TRILINEAR3D,
            COL2IM, AVG_POOL3D, ADAPTIVE_AVG_POOL3D, EMBEDDING_BAG,
            AFFINE_GRID)
MAX_OPS = (ADAPTIVE_MAX_POOL2D, ADAPTIVE_MAX_POOL3D, MAX_POOL3D, EMBEDDING_BAG_MAX,
           FRACTIONAL_MAX_POOL2D, FRACTIONAL_MAX_POOL3D)


# ---- building the maps -----------------------------------------------------------------------
def separable(in_spatial, per_dim):
    """The taps, within one plane, of a map acting on the trailing dims separately:
    ``per_dim[d]`` is (positions (O_d, R_d), -1 for none; weights (O_d, R_d) or None) along
    spatial dim d of a plane of shape ``in_spatial``. Returns (plane positions (P, R), -1 for
    none; weights (P, R) or None), P = prod(O), R = prod(R_d), outputs in C order."""
    k = len(per_dim)
    strides = np.ones(k, np.int64)
    for d in range(k - 2, -1, -1):
        strides[d] = strides[d + 1] * in_spatial[d + 1]
    off = np.zeros((1,) * (2 * k), np.int64)
    valid = np.ones((1,) * (2 * k), bool)
    weight = None
    outs, taps = [], []
    for d, (idx, w) in enumerate(per_dim):
        idx = np.asarray(idx, np.int64)
        outs.append(idx.shape[0])
        taps.append(idx.shape[1])
        shape = [1] * (2 * k)
        shape[d], shape[k + d] = idx.shape
        off = off + np.where(idx >= 0, idx * strides[d], 0).reshape(shape)
        valid = valid & (idx >= 0).reshape(shape)
        if w is not None:
            wd = np.asarray(w, np.float64).reshape(shape)
            weight = wd if weight is None else weight * wd
    full = (*outs, *taps)
    n_out, n_taps = int(np.prod(outs)), int(np.prod(taps))
    pos = np.where(np.broadcast_to(valid, full), np.broadcast_to(off, full), -1)
    if weight is not None:
        weight = np.broadcast_to(weight, full).reshape(n_out, n_taps)
    return pos.reshape(n_out, n_taps), weight


def _iat(cols, in_plane):
    cols = np.asarray(cols, np.int64)
    cols = cols.reshape(cols.shape[0], -1) if cols.ndim else cols.reshape(1, 1)
    return np.concatenate([[cols.shape[1], in_plane, cols.shape[0]], cols.reshape(-1)])


def _planes(x, out_shape, n_out):
    """The plane count of a map with ``n_out`` outputs per plane, and x's flat values."""
    total = int(np.prod(out_shape))
    return (total // n_out if n_out else 0), x._array().reshape(-1)


def record_gather(op, x, positions, out_shape, fill=0.0, in_plane=None):
    """``op``'s output: in each plane, x at ``positions`` within the plane (``in_plane``
    elements: all of x when None), ``fill`` where a position is -1."""
    positions = np.ascontiguousarray(positions, np.int64).reshape(-1)
    in_plane = x.numel() if in_plane is None else int(in_plane)
    planes, data = _planes(x, out_shape, len(positions))
    full = _expand(positions[:, None], in_plane, planes).reshape(-1)
    out = data[np.maximum(full, 0)] if data.size else np.zeros(full.shape, data.dtype)
    if (positions < 0).any():
        out = np.where(full < 0, np.asarray(fill).astype(data.dtype), out)
    return record(op, out.reshape(out_shape), (x,), _iat(positions[:, None], in_plane),
                  (float(fill),))


def record_rows(op, x, cols, weights, out_shape, in_plane=None):
    """``op``'s output: per output, the sum of its taps' weights times x at their positions
    within its plane (the replay's kernel in float64, rounded to x's dtype, as replay
    computes it)."""
    in_plane = x.numel() if in_plane is None else int(in_plane)
    iat = _iat(cols, in_plane)
    fat = np.ascontiguousarray(weights, np.float64).reshape(-1)
    data = x._array()
    y = np.empty(int(np.prod(out_shape)), np.float64)
    sparse_rows_fw(y, np.ascontiguousarray(data, np.float64).reshape(-1), _NO, _NO, iat, fat)
    # the weights as a C array of doubles: the tape copies it in one step (a list would
    # cost a Python float per tap)
    weights_out = array("d")
    weights_out.frombytes(fat.tobytes())
    return record(op, y.astype(data.dtype).reshape(out_shape), (x,), iat, weights_out)


def _expand(cols, in_plane, planes):
    """Per-plane positions (P, R) as flat positions in the whole input (planes * P, R)."""
    base = (np.arange(planes, dtype=np.int64) * in_plane)[:, None, None]
    return np.where(cols[None] >= 0, cols[None] + base, -1).reshape(-1, cols.shape[1])


def window_argmax(values, cols):
    """Positions of each row's maximum (the first, or the first NaN; -1 for an empty row),
    and the maxima (0 for an empty row); ``cols`` (rows, taps) index ``values``."""
    if cols.shape[1] == 0 or values.size == 0:
        return np.full(cols.shape[0], -1, np.int64), np.zeros(cols.shape[0], values.dtype)
    picked = np.where(cols >= 0, values[np.maximum(cols, 0)], -np.inf)
    r = np.argmax(picked, axis=1)  # NaN counts as the maximum, the first one wins
    rows = np.arange(cols.shape[0])
    at = np.where(cols.max(1) >= 0, cols[rows, r], -1)
    return at, np.where(at >= 0, picked[rows, r], 0)


def record_window_max(op, x, cols, out_shape, in_plane=None):
    """``op``'s output (each output's maximum over its window within its plane) and the
    positions of the maxima within their planes (torch's return_indices)."""
    in_plane = x.numel() if in_plane is None else int(in_plane)
    cols = np.asarray(cols, np.int64)
    planes, data = _planes(x, out_shape, cols.shape[0])
    values = data.reshape(planes, in_plane) if planes else data.reshape(0, in_plane)
    at, best = [], []
    for plane in values:  # one plane at a time: the full tap table would be planes times larger
        a, b = window_argmax(plane, cols)
        at.append(a)
        best.append(b)
    at = np.concatenate(at) if at else np.zeros(0, np.int64)
    best = np.concatenate(best) if best else np.zeros(0, data.dtype)
    out = best.astype(data.dtype).reshape(out_shape)
    return record(op, out, (x,), _iat(cols, in_plane)), at.reshape(out_shape)


_NO = np.empty(0, np.int64)


# ---- differentiable rules --------------------------------------------------------------------
def _full_map(ctx):
    """A node's taps as flat positions in its whole input (outputs, R)."""
    iat = np.asarray(ctx.iat, np.int64)
    taps, in_plane, out_plane = int(iat[0]), int(iat[1]), int(iat[2])
    cols = iat[3:].reshape(out_plane, taps)
    n_out = int(np.prod(ctx.shape))
    return _expand(cols, in_plane, n_out // out_plane if out_plane else 0)


@vjp_rule(*GATHER_OPS)
def _gather_vjp(ctx, g):
    positions = _full_map(ctx).reshape(-1)
    valid = positions >= 0
    if valid.all():
        return [index_add_flat(g, positions, ctx.shapes[0])]
    keep = np.flatnonzero(valid)
    return [index_add_flat(gather_flat(g, keep, (len(keep),)), positions[keep], ctx.shapes[0])]


@vjp_rule(*ROWS_OPS)
def _rows_vjp(ctx, g):
    cols = _full_map(ctx)
    taps = cols.shape[1]
    weights = np.asarray(ctx.fat, np.float64).reshape(-1, taps)
    weights = np.broadcast_to(weights[None], (cols.shape[0] // max(weights.shape[0], 1),
                                              *weights.shape)).reshape(-1)
    cols = cols.reshape(-1)
    rows = np.repeat(np.arange(len(cols) // max(taps, 1), dtype=np.int64), taps)
    keep = np.flatnonzero(cols >= 0)
    picked = gather_flat(g, rows[keep], (len(keep),)) * const(weights[keep], g._array().dtype)
    return [index_add_flat(picked, cols[keep], ctx.shapes[0])]


@vjp_rule(*MAX_OPS)
def _window_max_vjp(ctx, g):
    at, _ = window_argmax(ctx.x(0)._array().reshape(-1), _full_map(ctx))
    keep = np.flatnonzero(at >= 0)
    return [index_add_flat(gather_flat(g, keep, (len(keep),)), at[keep], ctx.shapes[0])]
