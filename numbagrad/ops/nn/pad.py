"""torch.nn.functional's pad, pixel_shuffle/pixel_unshuffle, unfold and fold: fixed index
maps (spatial_maps) built by moving an arange of the input's flat positions the way the op
moves values, so the map is right by construction."""

import numpy as np

from ... import dtypes
from ..linalg.node import not_differentiable, record_node
from .spatial_maps import (
    CHANNEL_SHUFFLE,
    CIRCULAR_PAD,
    COL2IM,
    CONSTANT_PAD,
    IM2COL,
    PIXEL_SHUFFLE,
    PIXEL_UNSHUFFLE,
    REFLECTION_PAD,
    REPLICATION_PAD,
    record_gather,
    record_rows,
)


def _sizes(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _pad_index(n, left, right, mode):
    """Input index of each output index along one dim (-1: the fill value)."""
    j = np.arange(n + left + right, dtype=np.int64) - left
    if mode == "constant":
        return np.where((j >= 0) & (j < n), j, -1)
    if mode == "reflect":
        j = np.abs(j)
        return np.where(j > n - 1, 2 * (n - 1) - j, j)
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    return np.mod(j, n)  # circular


def _positions(plane, per_dim):
    """Flat positions in a plane of shape ``plane`` picked by per-dim index arrays (-1
    anywhere: -1)."""
    pos = np.zeros((), np.int64)
    valid = np.ones((), bool)
    for n, idx in zip(plane, per_dim):
        pos = pos[..., None] * n + np.maximum(idx, 0)
        valid = valid[..., None] & (idx >= 0)
    return np.where(valid, pos, -1)


_NON_CONSTANT_HELP = ("Supported combinations for non-constant padding:\n"
                      "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                      "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                      "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input, pad, mode="constant", value=None):  # noqa: A002 - torch's names
    """torch's F.pad: ``pad`` lists (left, right) pairs from the last dim backwards."""
    x = input
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > x.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {x.ndim}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    shape = tuple(x.shape)
    pairs = [(pad[2 * (k - 1 - d)], pad[2 * (k - 1 - d) + 1]) for d in range(k)]
    if mode != "constant":
        if k not in (1, 2, 3) or x.ndim not in (k + 1, k + 2):
            raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                      f"{x.ndim}D input tensor.\n{_NON_CONSTANT_HELP}")
        if mode == "reflect":
            _check_reflect(x, k, pairs)
        if mode == "circular":
            for (lo, hi), n in zip(pairs, shape[-k:]):
                if lo > n or hi > n:
                    raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate":
            _check_nonempty(x, k)
        op = {"reflect": REFLECTION_PAD.get(k), "replicate": REPLICATION_PAD.get(k),
              "circular": CIRCULAR_PAD}[mode]
    else:
        op = CONSTANT_PAD
    sp = shape[len(shape) - k:]
    out_sp = [n + lo + hi for n, (lo, hi) in zip(sp, pairs)]
    if any(o < 0 for o in out_sp):
        raise RuntimeError("narrow(): length must be non-negative.")
    idx = [_pad_index(n, lo, hi, mode) for n, (lo, hi) in zip(sp, pairs)]
    out_shape = (*shape[:len(shape) - k], *out_sp)
    fill = 0.0 if value is None else value
    if x.dtype is dtypes.bool_:
        fill = bool(fill)
    return record_gather(op, x, _positions(sp, idx), out_shape, fill, int(np.prod(sp)))


def _check_nonempty(x, k):
    if any(s == 0 for s in x.shape[1:]):
        dims = {1: "2D or 3D", 2: "3D or 4D", 3: "4D or 5D"}[k]
        raise RuntimeError(f"Expected {dims} (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{_sizes(x.shape)}")


def _check_reflect(x, k, pairs):
    _check_nonempty(x, k)
    for d in range(k - 1, -1, -1):  # width first, as torch checks
        lo, hi = pairs[d]
        n = x.shape[x.ndim - k + d]
        if lo >= n or hi >= n or lo < 0 or hi < 0:
            arg = 4 + 2 * (k - 1 - d)
            raise RuntimeError(f"Argument #{arg}: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                               f"at dimension {x.ndim - k + d} of input {_sizes(x.shape)}")


# ---- pixel shuffle ---------------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor):  # noqa: A002
    """Channels rearranged into space: (C * r * r, H, W) to (C, H * r, W * r).

    Same as ``torch.nn.functional.pixel_shuffle``.
    """
    x, r = input, int(upscale_factor)
    if x.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {x.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    pos = np.arange(c * h * w, dtype=np.int64).reshape(c // (r * r), r, r, h, w)
    pos = pos.transpose(0, 3, 1, 4, 2)
    out_shape = (*lead, c // (r * r), h * r, w * r)
    return record_gather(PIXEL_SHUFFLE, x, pos.reshape(-1), out_shape, in_plane=c * h * w)


def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    """Space rearranged into channels: (C, H * r, W * r) to (C * r * r, H, W).

    Same as ``torch.nn.functional.pixel_unshuffle``.
    """
    x, r = input, int(downscale_factor)
    if x.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {x.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = x.shape
    for what, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({d})={size} is not divisible "
                               f"by {r}")
    pos = np.arange(c * h * w, dtype=np.int64).reshape(c, h // r, r, w // r, r)
    pos = pos.transpose(0, 2, 4, 1, 3)
    out_shape = (*lead, c * r * r, h // r, w // r)
    return record_gather(PIXEL_UNSHUFFLE, x, pos.reshape(-1), out_shape, in_plane=c * h * w)


def _channel_positions(x, groups, name):
    """torch's channel_shuffle checks, and each output's flat position in its sample's
    (C, *spatial) block: the channels as (groups, C / groups), transposed."""
    if x.ndim <= 2:
        raise RuntimeError(f"{name} expects input with > 2 dims, but got input with sizes "
                           f"{_sizes(x.shape)}")
    g = int(groups)
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    c, rest = x.shape[1], int(np.prod(x.shape[2:], dtype=np.int64))
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {g} groups.")
    pos = np.arange(c * rest, dtype=np.int64).reshape(g, c // g, rest).transpose(1, 0, 2)
    return pos.reshape(-1), c * rest


def channel_shuffle(input, groups):  # noqa: A002
    """The channels of (N, C, *) input split in ``groups`` and interleaved: (g, C / g)
    read as (C / g, g).

    Same as ``torch.nn.functional.channel_shuffle``.
    """
    pos, plane = _channel_positions(input, groups, "channel_shuffle")
    return record_gather(CHANNEL_SHUFFLE, input, pos, tuple(input.shape), in_plane=plane)


def native_channel_shuffle(input, groups):  # noqa: A002
    """``channel_shuffle``'s native kernel: the same values, but torch records no derivative
    for it (a backward through it raises).

    Same as ``torch.nn.functional.native_channel_shuffle``.
    """
    pos, plane = _channel_positions(input, groups, "channel_shuffle")
    value = input._array().reshape(-1, plane)[:, pos].reshape(input.shape)
    return record_node("torch::autograd::NotImplemented", [value], [input],
                       not_differentiable("native_channel_shuffle"))[0]


# ---- unfold / fold ---------------------------------------------------------------------------
def _pair(v):
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    v = tuple(int(a) for a in v)
    return v if len(v) == 2 else (v[0], v[0])


def _im2col_positions(shape, kernel, dilation, padding, stride):
    """Flat positions (N, C * kh * kw, blocks) in an input of ``shape`` (N, C, H, W), -1 in the
    padding, and the output grid (oh, ow)."""
    n, c, h, w = shape
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel, dilation, padding, stride
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    pos = np.pad(np.arange(n * c * h * w, dtype=np.int64).reshape(shape),
                 ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=-1)
    cols = np.empty((n, c, kh, kw, max(oh, 0), max(ow, 0)), np.int64)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = pos[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                                   j * dw:j * dw + sw * (ow - 1) + 1:sw]
    return cols.reshape(n, c * kh * kw, -1), oh, ow


def _fold_args(kernel_size, dilation, padding, stride):
    kernel, dilation, padding, stride = (_pair(v) for v in (kernel_size, dilation, padding,
                                                             stride))
    for name, v, lo in (("kernel", kernel, 1), ("dilation", dilation, 1),
                        ("stride", stride, 1), ("padding", padding, 0)):
        if min(v) < lo:
            word = "greater than zero" if lo else "non-negative"
            raise RuntimeError(f"{name} should be {word}, but got {name}_height: {v[0]} "
                               f"{name}_width: {v[1]}")
    return kernel, dilation, padding, stride


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """The sliding local blocks of a batch of images, as columns.

    Same as ``torch.nn.functional.unfold``.

    Args:
        input: (N, C, H, W) or unbatched (C, H, W).
        kernel_size: the block size, an int or a pair.
        dilation: the spacing of a block's elements (default 1).
        padding: the implicit zero padding on both sides (default 0).
        stride: the step between blocks (default 1).

    Returns:
        (N, C * prod(kernel_size), L), or without N for unbatched input.
    """
    x = input
    if x.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions, but got: {_sizes(x.shape)}")
    kernel, dilation, padding, stride = _fold_args(kernel_size, dilation, padding, stride)
    shape = tuple(x.shape) if x.ndim == 4 else (1, *x.shape)
    cols, oh, ow = _im2col_positions((1, *shape[1:]), kernel, dilation, padding, stride)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({shape[2]}, {shape[3]}), "
                           f"kernel_size=({kernel[0]}, {kernel[1]}), dilation=({dilation[0]}, "
                           f"{dilation[1]}), padding=({padding[0]}, {padding[1]}), calculated "
                           f"shape of the array of sliding blocks as ({oh}, {ow}), but its "
                           f"components must be at least one.")
    out_shape = (shape[0], *cols.shape[1:]) if x.ndim == 4 else cols.shape[1:]
    return record_gather(IM2COL, x, cols.reshape(-1), out_shape,
                         in_plane=int(np.prod(shape[1:])))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """Sliding local blocks (columns) summed back into a batch of images: the inverse of ``unfold``.

    Same as ``torch.nn.functional.fold``.

    Args:
        input: (N, C * prod(kernel_size), L) or unbatched (C * prod(kernel_size), L), L the
            number of blocks.
        output_size: the spatial size (H, W) of the result, an int or a pair.
        kernel_size: the block size, an int or a pair.
        dilation: the spacing of a block's elements (default 1).
        padding: the implicit zero padding on both sides (default 0).
        stride: the step between blocks (default 1).

    Returns:
        (N, C, H, W), or (C, H, W) for unbatched input; overlapping values summed.
    """
    x = input
    if x.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions, but got: {_sizes(x.shape)}")
    kernel, dilation, padding, stride = _fold_args(kernel_size, dilation, padding, stride)
    h, w = _pair(output_size)
    n, ck, blocks = tuple(x.shape) if x.ndim == 3 else (1, *x.shape)
    kk = kernel[0] * kernel[1]
    if ck % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={ck} and kernel_size="
                           f"({kernel[0]}, {kernel[1]}).")
    c = ck // kk
    cols, oh, ow = _im2col_positions((1, c, h, w), kernel, dilation, padding, stride)
    if oh * ow != blocks:
        raise RuntimeError(f"Given output_size=({h}, {w}), kernel_size=({kernel[0]}, "
                           f"{kernel[1]}), dilation=({dilation[0]}, {dilation[1]}), padding="
                           f"({padding[0]}, {padding[1]}), stride=({stride[0]}, {stride[1]}), "
                           f"expected size of input's dimension 2 to match the calculated number "
                           f"of sliding blocks {oh} * {ow} = {oh * ow}, but got input.size(2)="
                           f"{blocks}.")
    # invert the unfold map: each output element gathers the input entries unfold sent it
    target = cols.reshape(-1)
    src = np.flatnonzero(target >= 0)
    target = target[src]
    order = np.argsort(target, kind="stable")
    counts = np.bincount(target, minlength=c * h * w)
    taps = int(counts.max()) if counts.size else 0
    rows = np.full((c * h * w, taps), -1, np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(len(order)) - np.repeat(starts, counts)
    rows[target[order], rank] = src[order]
    out_shape = (n, c, h, w) if x.ndim == 3 else (c, h, w)
    return record_rows(COL2IM, x, rows, np.ones(rows.shape), out_shape, ck * blocks)


__all__ = ["pad", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
           "unfold", "fold"]
