"""nn.MultiheadAttention, with torch's parameter names (in_proj_weight, or q/k/v_proj_weight
when the key or value size differs; in_proj_bias; bias_k/bias_v; out_proj) and init."""

import numpy as np

from .. import dtypes
from ..ops.nn.attention import multi_head_attention_forward
from . import init
from .layers import Linear
from .module import Module, Parameter


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under torch's name for MultiheadAttention.out_proj."""


class MultiheadAttention(Module):
    """Multi-head attention over queries, keys and values, with learned projections.

    Same as ``torch.nn.MultiheadAttention``.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim="
                             f"{embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        dt = (dtypes.as_dtype(dtype) or dtypes.get_default_dtype()).np
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(np.empty((embed_dim, embed_dim), dt))
            self.k_proj_weight = Parameter(np.empty((embed_dim, self.kdim), dt))
            self.v_proj_weight = Parameter(np.empty((embed_dim, self.vdim), dt))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(np.empty((3 * embed_dim, embed_dim), dt))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(np.empty((3 * embed_dim,), dt))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(np.empty((1, 1, embed_dim), dt))
            self.bias_v = Parameter(np.empty((1, 1, embed_dim), dt))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.ndim == 3
        if self.batch_first and batched:
            # the same tensor stays the same after the swap (the self-attention path)
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            return out.transpose(1, 0), weights
        return out, weights


__all__ = ["MultiheadAttention"]
