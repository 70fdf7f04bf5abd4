"""MultiheadAttention: attention from several learned projections ("heads") at once, as PyTorch's.

    q = query W_qᵀ + b_q,  k = key W_kᵀ + b_k,  v = value W_vᵀ + b_v     each split into num_heads heads
    head_i = softmax(q_i k_iᵀ / sqrt(head_dim) + mask) v_i                  F.scaled_dot_product_attention's core
    out = concat(head_1, ..., head_h) W_oᵀ + b_o

Parameters, names, initialisation, masks (bool True = may not attend, or float, added) and shapes
follow PyTorch, so a PyTorch model's state_dict gives PyTorch's numbers.
"""
from __future__ import annotations

import warnings

from ... import creation
from ...autograd.tensor_base import TensorBase
from ...ops import movement as mv
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear: PyTorch's name for MultiheadAttention's output projection (out_proj)."""


class MultiheadAttention(Module):
    """forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (attn_output, attn_weights or None).

    Inputs are (L, N, E) ((N, L, E) with batch_first; (L, E) unbatched); key and value (S, N, kdim/vdim).
    in_proj_weight (3E, E) holds W_q, W_k, W_v stacked when kdim == vdim == E, else q_proj_weight,
    k_proj_weight and v_proj_weight; all xavier-uniform, biases zero (out_proj.weight keeps Linear's
    init), as PyTorch. attn_mask (L, S) or (N·num_heads, L, S) and key_padding_mask (N, S) are bool
    (True: not attended) or float (added to the scores). The weights returned are averaged over
    heads, (N, L, S), unless average_attn_weights=False: (N, num_heads, L, S)."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def param(*shape):
            return Parameter(creation.empty(shape, dtype=dtype, device=device))

        if self._qkv_same_embed_dim:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k, self.bias_v = param(1, 1, embed_dim), param(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query: TensorBase, key: TensorBase, value: TensorBase, key_padding_mask=None,
                need_weights: bool = True, attn_mask=None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple:
        batched = query.dim() == 3
        if query.dim() not in (2, 3):
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                                 f"query tensor")
        if self.batch_first and batched:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        if not batched:
            query, key, value = (t.unsqueeze(1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                               "method `generate_square_subsequent_mask` to create this mask.")
        out, weights = self._attend(query, key, value, key_padding_mask, attn_mask)
        if need_weights:
            weights = weights.reshape(query.shape[1], self.num_heads, query.shape[0], weights.shape[-1])
            weights = weights.mean(1) if average_attn_weights else weights
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0) if need_weights else weights
        return out, (weights if need_weights else None)

    def _projections(self, query, key, value) -> tuple:
        """q, k, v: the inputs through their projections (time-major)."""
        E = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E:2 * E], b[2 * E:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:E], w[E:2 * E], w[2 * E:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def _attend(self, query, key, value, key_padding_mask, attn_mask) -> tuple:
        """Attention on time-major (L, N, E) input: (out (L, N, E), weights (N·heads, L, S))."""
        L, N, E = query.shape
        if E != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got {E}")
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key shape {list(key.shape)} does not match value shape {list(value.shape)}")
        q, k, v = self._projections(query, key, value)
        if self.bias_k is not None:
            k = mv.cat([k, self.bias_k.expand(1, N, E)], 0)
            v = mv.cat([v, self.bias_v.expand(1, N, E)], 0)
            attn_mask, key_padding_mask = _pad_key_dim(attn_mask), _pad_key_dim(key_padding_mask)
        H, hd = self.num_heads, self.head_dim
        q, k, v = (t.reshape(t.shape[0], N * H, hd).transpose(0, 1) for t in (q, k, v))  # (N·H, len, hd)
        if self.add_zero_attn:
            k = mv.cat([k, k.new_zeros(N * H, 1, hd)], 1)
            v = mv.cat([v, v.new_zeros(N * H, 1, hd)], 1)
            attn_mask, key_padding_mask = _pad_key_dim(attn_mask), _pad_key_dim(key_padding_mask)
        mask = self._merged_mask(attn_mask, key_padding_mask, N, L, k.shape[1], q._data.dtype)
        out, weights = F._attention(q, k, v, mask, self.dropout if self.training else 0.0, self.training, None)
        out = out.transpose(0, 1).reshape(L * N, E)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias).reshape(L, N, E)
        return out, weights

    def _merged_mask(self, attn_mask, key_padding_mask, N: int, L: int, S: int, dtype):
        """attn_mask and key_padding_mask as one float mask, broadcastable to (N·heads, L, S), or None."""
        kinds = {m._data.dtype.kind for m in (attn_mask, key_padding_mask) if m is not None}
        if len(kinds) > 1:
            warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for "
                          "both instead.", stacklevel=4)
        mask = None
        if attn_mask is not None:
            attn_mask = _float_mask(attn_mask, "attn_mask", dtype)
            want = (L, S) if attn_mask.dim() == 2 else (N * self.num_heads, L, S)
            if tuple(attn_mask.shape) != want:
                raise RuntimeError(f"The shape of the {attn_mask.dim()}D attn_mask is {tuple(attn_mask.shape)}, but "
                                   f"should be {want}.")
            mask = attn_mask.unsqueeze(0) if attn_mask.dim() == 2 else attn_mask
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (N, S):
                raise AssertionError(f"expecting key_padding_mask shape of {(N, S)}, but got "
                                     f"{tuple(key_padding_mask.shape)}")
            kpm = _float_mask(key_padding_mask, "key_padding_mask", dtype)
            kpm = kpm.reshape(N, 1, 1, S).expand(N, self.num_heads, 1, S).reshape(N * self.num_heads, 1, S)
            mask = kpm if mask is None else mask + kpm
        return mask


def _float_mask(mask, name: str, dtype):
    """A bool mask (True: not attended) as an additive float mask; a float mask as it is."""
    kind = mask._data.dtype.kind
    if kind == "b":
        return F._additive_mask(mask, dtype)
    if kind != "f":
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _pad_key_dim(mask):
    """A mask with one more key position, which may be attended (bias_k, add_zero_attn)."""
    return None if mask is None else F.pad(mask, (0, 1))
