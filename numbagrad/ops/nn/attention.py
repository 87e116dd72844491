"""Attention: scaled_dot_product_attention and multi_head_attention_forward, composed from
matmul, softmax and the shape ops as torch's math reference composes them."""

import math

import numpy as np

from ... import dtypes
from ...engine.record import record
from ...engine.registry import BY_NAME
from ...factories import _dropout_noise, _keep_mask
from ...tensor import _make
from ..elementwise.forward import torch_layout
from ..elementwise.pointwise import where
from ..linalg.matmul import addmm, bmm, matmul, weight_t
from ..linalg.matmul import linear as _linear_2d
from ..reduce.reductions import softmax
from ..shape.join import cat, chunk, split
from ..shape.movement import expand, reshape, transpose, unsqueeze

_NEG_INF = float("-inf")


def _linear(x, weight, bias):
    """F.linear: one addmm over the rows folded (torch's choice for a contiguous input)."""
    if bias is None:
        return matmul(x, weight_t(weight, x))
    out = _linear_2d(x, weight, bias) if x.ndim == 2 else None
    if out is not None:
        return out
    rows = reshape(x, (-1, x.shape[-1]))
    out = addmm(bias, rows, weight_t(weight, rows, bias))
    return reshape(out, (*x.shape[:-1], out.shape[-1]))


def _dropout(x, p):
    """F.dropout in training mode (the ops-level twin of nn.functional.dropout)."""
    if p <= 0.0 or x.numel() == 0:
        return x
    data = x._array()
    keep = _keep_mask(data.shape, 1.0 - p, data) if p < 1.0 else np.zeros(data.shape, bool)
    noise = _dropout_noise(keep, p, data.dtype) if p < 1.0 else np.zeros(data.shape, data.dtype)
    scale = float(data.dtype.type(1.0) / data.dtype.type(1.0 - p)) if p < 1.0 else 0.0
    out = (data * noise).astype(data.dtype)
    out = torch_layout(out, (data, keep))
    return record(BY_NAME["native_dropout"], out, (x,), keep.reshape(-1).astype(np.int64),
                  (scale,))


def _float_mask(mask, dtype):
    """A boolean mask (True = attend) as an additive one: 0 where kept, -inf where masked."""
    keep = np.asarray(mask._array(), bool)
    return _make(np.where(keep, 0.0, _NEG_INF).astype(dtype.np))


def _c_name(t):
    return t.dtype.c_name  # torch's C++ spelling: float, double, long int


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T * scale + mask) v over the last two dims; a boolean mask marks the
    positions that take part, a float mask is added; rows masked everywhere give 0 (torch's
    safe softmax); dropout_p applies whenever it is > 0, as torch's."""
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_c_name(query)} key.dtype: {_c_name(key)} and "
                           f"value.dtype: {_c_name(value)}"
                           " instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.ndim} key.dim: {key.ndim} and value.dim:"
                           f" {value.ndim} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found {query.dtype.scalar_name}")
    if attn_mask is not None and \
            attn_mask.dtype not in (dtypes.bool_, dtypes.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_c_name(attn_mask)} and  "
                           f"query.dtype: {_c_name(query)} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    target, source = query.shape[-2], key.shape[-2]
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        groups = query.shape[-3] // key.shape[-3]
        key, value = (_repeat_heads(t, groups) for t in (key, value))
    bias = None
    if is_causal:
        keep = np.tril(np.ones((target, source), bool))
        bias = _make(np.where(keep, 0.0, _NEG_INF).astype(query.dtype.np))
    elif attn_mask is not None:
        bias = _float_mask(attn_mask, query.dtype) if attn_mask.dtype is dtypes.bool_ \
            else attn_mask
    scores = matmul(query, transpose(key, -2, -1)) * factor
    if bias is not None:
        scores = scores + bias
    dead = None
    if bias is not None:
        dead = np.all(np.isneginf(np.asarray(scores._array())), axis=-1, keepdims=True)
    if dead is not None and dead.any():
        # a row masked everywhere attends to nothing: 0 (torch's safe softmax), and its
        # scores are zeroed first so that no NaN reaches the gradients
        alive = _make(np.broadcast_to(~dead, scores.shape).copy())
        zero = _make(np.zeros((), scores.dtype.np))
        weights = where(alive, softmax(where(alive, scores, zero), -1), zero)
    else:
        weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p)
    return matmul(weights, value)


def _repeat_heads(t, groups):
    """repeat_interleave(groups, dim=-3): each key/value head serves `groups` query heads."""
    shape = tuple(t.shape)
    wide = expand(unsqueeze(t, -3), (*shape[:-2], groups, *shape[-2:]))
    return reshape(wide, (*shape[:-3], shape[-3] * groups, *shape[-2:]))


# ---- multi_head_attention_forward -----------------------------------------------------------

def _canonical_mask(mask, name, dtype):
    if mask is None:
        return None
    if mask.dtype is dtypes.bool_:
        # True marks a position that is NOT attended (the opposite of sdpa's boolean mask)
        return _make(np.where(np.asarray(mask._array(), bool), _NEG_INF, 0.0).astype(dtype.np))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _pad_last(mask, n=1):
    if mask is None:
        return None
    zeros = _make(np.zeros((*mask.shape[:-1], n), mask.dtype.np))
    return cat([mask, zeros], -1)


def _in_projection(query, key, value, embed_dim, in_proj_weight, in_proj_bias,
                   use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight):
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if key is value and query is key:  # self-attention: one product
            proj = _linear(query, in_proj_weight, in_proj_bias)
            return tuple(chunk(proj, 3, -1))
        weights = split(in_proj_weight, embed_dim, 0)
        biases = split(in_proj_bias, embed_dim, 0) if in_proj_bias is not None else (None,) * 3
        if key is value:
            kv = _linear(key, cat(weights[1:], 0),
                         cat(biases[1:], 0) if in_proj_bias is not None else None)
            return (_linear(query, weights[0], biases[0]), *chunk(kv, 2, -1))
        return tuple(_linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))
    for w, name in ((q_proj_weight, "q"), (k_proj_weight, "k"), (v_proj_weight, "v")):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is "
                                 "None")
    biases = split(in_proj_bias, embed_dim, 0) if in_proj_bias is not None else (None,) * 3
    return tuple(_linear(x, w, b) for x, w, b in
                 zip((query, key, value), (q_proj_weight, k_proj_weight, v_proj_weight), biases))


def _check_mha_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
    """torch's _mha_shape_check: whether the input is batched (3-d) or not (2-d)."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be "
                                 f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                 "instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to "
                                 f"be 2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                     "instead")
            if attn_mask.ndim == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,  # noqa: C901
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """torch.nn.functional.multi_head_attention_forward on (L, N, E) inputs (or unbatched
    (L, E)); returns (attn_output, attn_weights or None)."""
    batched = _check_mha_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = unsqueeze(query, 1), unsqueeze(key, 1), unsqueeze(value, 1)
        if key_padding_mask is not None:
            key_padding_mask = unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    dt = query.dtype
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", dt)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # sdpa's own causal mask stands in for it
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", dt)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not "
                                 f"match value's {value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape "
                             f"{value.shape}")
    q, k, v = _in_projection(query, key, value, embed_dim, in_proj_weight, in_proj_bias,
                             use_separate_proj_weight, q_proj_weight, k_proj_weight,
                             v_proj_weight)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, "
                                   f"but should be {(tgt_len, src_len)}.")
            attn_mask = unsqueeze(attn_mask, 0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                               f"should be {(bsz * num_heads, tgt_len, src_len)}.")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = cat([k, expand(bias_k, (1, bsz, embed_dim))], 0)
        v = cat([v, expand(bias_v, (1, bsz, embed_dim))], 0)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    q = transpose(reshape(q, (tgt_len, bsz * num_heads, head_dim)), 0, 1)
    k = transpose(reshape(k, (k.shape[0], bsz * num_heads, head_dim)), 0, 1) \
        if static_k is None else static_k
    v = transpose(reshape(v, (v.shape[0], bsz * num_heads, head_dim)), 0, 1) \
        if static_v is None else static_v
    if add_zero_attn:
        k = cat([k, _make(np.zeros((bsz * num_heads, 1, head_dim), dt.np))], 1)
        v = cat([v, _make(np.zeros((bsz * num_heads, 1, head_dim), dt.np))], 1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        for d, want in enumerate((bsz, src_len)):
            if key_padding_mask.shape[d] != want:
                raise AssertionError(f"Expected key_padded_mask.shape[{d}] to be {want}, but "
                                     f"got {key_padding_mask.shape[d]}")
        kpm = reshape(expand(reshape(key_padding_mask, (bsz, 1, 1, src_len)),
                             (bsz, num_heads, 1, src_len)), (bsz * num_heads, 1, src_len))
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = matmul(q * math.sqrt(1.0 / head_dim), transpose(k, -2, -1))
        if attn_mask is not None:
            scores = attn_mask + scores  # torch's baddbmm(attn_mask, q, k^T)
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p)
        out = bmm(weights, v)
        out = reshape(transpose(out, 0, 1).contiguous(), (tgt_len * bsz, embed_dim))
        out = reshape(_linear(out, out_proj_weight, out_proj_bias),
                      (tgt_len, bsz, embed_dim))
        weights = reshape(weights, (bsz, num_heads, tgt_len, src_len))
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1:
            attn_mask = unsqueeze(attn_mask, 0)
        else:
            attn_mask = reshape(attn_mask, (bsz, num_heads, -1, src_len))
    q = reshape(q, (bsz, num_heads, tgt_len, head_dim))
    k = reshape(k, (bsz, num_heads, src_len, head_dim))
    v = reshape(v, (bsz, num_heads, src_len, head_dim))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = reshape(out.permute(2, 0, 1, 3).contiguous(), (bsz * tgt_len, embed_dim))
    out = reshape(_linear(out, out_proj_weight, out_proj_bias), (tgt_len, bsz, embed_dim))
    if not batched:
        out = out.squeeze(1)
    return out, None


__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]
