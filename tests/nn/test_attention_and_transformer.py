"""F.scaled_dot_product_attention, nn.MultiheadAttention and the Transformer layers against PyTorch
(outputs and gradients of every parameter, float64 and float32; dropout 0 so both are deterministic)
and finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn

from ._pairs import build_pair, compare, randn

DTYPES = ["float64", "float32"]
BOOL_MASK = np.triu(np.ones((4, 6), dtype=bool), k=3)  # True: may not attend (MultiheadAttention's sense)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs,extra", [
    ({}, []),
    (dict(is_causal=True), []),
    (dict(scale=0.3), []),
    ({}, [~BOOL_MASK]),  # bool: True may attend (scaled_dot_product_attention's sense)
    ({}, [randn(4, 6, seed=5)]),  # float: added to the scores
])
def test_scaled_dot_product_attention_matches_torch(torch, dtype, kwargs, extra):
    q, k, v = randn(2, 3, 4, 5), randn(2, 3, 6, 5, seed=1), randn(2, 3, 6, 7, seed=2)
    if kwargs.get("is_causal"):
        k, v = k[:, :, :4], v[:, :, :4]

    def run(lib, q, k, v, *mask):
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, *mask, **kwargs)
    compare(torch, run, [q, k, v, *extra], dtype)


def test_scaled_dot_product_attention_grouped_heads_match_torch(torch):
    q, k, v = randn(2, 4, 3, 5), randn(2, 2, 6, 5, seed=1), randn(2, 2, 6, 5, seed=2)
    compare(torch, lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True),
            [q, k, v])


MHA = [  # (constructor kwargs, forward kwargs, query/key/value shapes)
    (dict(embed_dim=8, num_heads=2), {}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)]),
    (dict(embed_dim=8, num_heads=2, batch_first=True), dict(need_weights=False), [(3, 4, 8)] * 3),
    (dict(embed_dim=8, num_heads=4, kdim=5, vdim=3), dict(average_attn_weights=False),
     [(4, 3, 8), (6, 3, 5), (6, 3, 3)]),
    (dict(embed_dim=6, num_heads=3, bias=False, add_bias_kv=True, add_zero_attn=True), {}, [(4, 2, 6), (5, 2, 6),
                                                                                            (5, 2, 6)]),
    (dict(embed_dim=8, num_heads=2), {}, [(4, 8), (6, 8), (6, 8)]),  # unbatched
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs,fkwargs,shapes", MHA)
def test_multihead_attention_matches_torch(torch, dtype, kwargs, fkwargs, shapes):
    ours, theirs = build_pair(torch, lambda m: m.MultiheadAttention(**kwargs), dtype)
    arrays = [randn(*s, seed=i) for i, s in enumerate(shapes)]
    compare(torch, lambda lib, q, k, v: (ours if lib is tl else theirs)(q, k, v, **fkwargs), arrays, dtype,
            (ours, theirs))


@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask and attn_mask is deprecated")
def test_multihead_attention_masks_match_torch(torch):
    ours, theirs = build_pair(torch, lambda m: m.MultiheadAttention(8, 2))
    padding = np.zeros((3, 6), dtype=bool)
    padding[1, 4:] = True
    for attn_mask in (BOOL_MASK, randn(4, 6, seed=7), randn(6, 4, 6, seed=8)):
        compare(torch, lambda lib, q, k, v, m, p: (ours if lib is tl else theirs)(q, k, v, key_padding_mask=p,
                                                                                   attn_mask=m),
                [randn(4, 3, 8), randn(6, 3, 8, seed=1), randn(6, 3, 8, seed=2), attn_mask, padding],
                modules=(ours, theirs))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first,activation,batch_first", [(False, "relu", False), (True, "gelu", True)])
def test_transformer_layers_match_torch(torch, dtype, norm_first, activation, batch_first):
    kw = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, norm_first=norm_first, activation=activation,
              batch_first=batch_first)
    enc, tenc = build_pair(torch, lambda m: m.TransformerEncoderLayer(**kw), dtype)
    src = randn(3, 5, 8)
    L, tgt = (5, (3, 4, 8)) if batch_first else (3, (4, 5, 8))  # src's sequence length; tgt's shape
    mask = np.triu(np.full((L, L), -np.inf), k=1)
    compare(torch, lambda lib, x, m: (enc if lib is tl else tenc)(x, src_mask=m), [src, mask], dtype, (enc, tenc))
    dec, tdec = build_pair(torch, lambda m: m.TransformerDecoderLayer(**kw), dtype)
    compare(torch, lambda lib, t, mem: (dec if lib is tl else tdec)(t, mem), [randn(*tgt, seed=1), src], dtype,
            (dec, tdec))


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_whole_transformer_matches_torch(torch):
    make = lambda m: m.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,  # noqa: E731
                                   dim_feedforward=12, dropout=0.0)
    ours, theirs = build_pair(torch, make)
    mask = tl.nn.Transformer.generate_square_subsequent_mask(4).numpy()
    np.testing.assert_array_equal(mask, torch.nn.Transformer.generate_square_subsequent_mask(4).numpy())
    compare(torch, lambda lib, s, t, m: (ours if lib is tl else theirs)(s, t, tgt_mask=m),
            [randn(5, 2, 8), randn(4, 2, 8, seed=1), mask == -np.inf], modules=(ours, theirs))
    enc = make(nn).encoder
    assert len(enc.layers) == 2 and enc.layers[0] is not enc.layers[1]


def test_attention_passes_gradcheck():
    q, k, v = (tl.tensor(randn(1, 2, 3, 4, seed=i), requires_grad=True) for i in range(3))
    assert tl.autograd.gradcheck(lambda q, k, v: nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
                                 [q, k, v])
    tl.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2).double()
    x = tl.tensor(randn(3, 2, 4), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x: mha(x, x, x)[0], [x])


def test_attention_errors_name_the_problem():
    F = nn.functional
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(tl.randn(2, 3), tl.randn(2, 3), tl.randn(2, 3), tl.ones(2, 2), is_causal=True)
    with pytest.raises(RuntimeError, match="query and key must have the same embedding size"):
        F.scaled_dot_product_attention(tl.randn(2, 3), tl.randn(2, 4), tl.randn(2, 3))
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)


def test_a_query_with_nothing_to_attend_to_gets_zeros_as_torch(torch):
    mask = np.ones((4, 6), dtype=bool)
    mask[1] = False  # query 1 may attend to no key
    q, k, v = randn(2, 4, 5), randn(2, 6, 5, seed=1), randn(2, 6, 3, seed=2)
    outs, _ = compare(torch, lambda lib, q, k, v, m: lib.nn.functional.scaled_dot_product_attention(q, k, v, m),
                      [q, k, v, mask])
    assert (outs[0].detach().numpy()[:, 1] == 0).all()
