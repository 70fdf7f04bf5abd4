"""EmbeddingBag and F.embedding_bag against PyTorch (outputs and gradients of the weight, float32 and
float64) and finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn

from ._pairs import build_pair, compare, randn

DTYPES = ["float64", "float32"]

BAGS = [  # (kwargs, indices, offsets)
    (dict(mode="mean"), np.array([[1, 2, 4], [4, 3, 9]]), None),
    (dict(mode="sum"), np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 3, 3, 6])),  # an empty bag
    (dict(mode="max"), np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 4, 4])),
    (dict(mode="mean", padding_idx=2), np.array([1, 2, 4, 2, 2, 2, 0]), np.array([0, 3, 4])),
    (dict(mode="sum", include_last_offset=True), np.array([1, 2, 4, 5, 4]), np.array([0, 2, 5])),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs,indices,offsets", BAGS)
def test_embedding_bag_matches_torch(torch, dtype, kwargs, indices, offsets):
    ours, theirs = build_pair(torch, lambda m: m.EmbeddingBag(10, 3, **kwargs), dtype)
    arrays = [indices] + ([] if offsets is None else [offsets])
    compare(torch, lambda lib, *a: (ours if lib is tl else theirs)(*a), arrays, dtype, (ours, theirs))


def test_embedding_bag_per_sample_weights_match_torch(torch):
    ours, theirs = build_pair(torch, lambda m: m.EmbeddingBag(10, 4, mode="sum"))
    idx, offsets, psw = np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2]), randn(6, seed=3)
    compare(torch, lambda lib, i, o, w: (ours if lib is tl else theirs)(i, o, per_sample_weights=w),
            [idx, offsets, psw], modules=(ours, theirs))
    assert repr(ours) == repr(theirs)


def test_embedding_bag_passes_gradcheck():
    idx = tl.tensor(np.array([1, 2, 4, 0, 3]))
    offsets = tl.tensor(np.array([0, 2]))
    w = tl.tensor(randn(5, 3), requires_grad=True)
    for mode in ("sum", "mean", "max"):
        assert tl.autograd.gradcheck(lambda w: nn.functional.embedding_bag(idx, w, offsets, mode=mode), [w])


def test_embedding_bag_errors_name_the_problem():
    F, w = nn.functional, tl.randn(5, 3)
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(tl.tensor([1, 2]), w, tl.tensor([1]))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(tl.tensor([[1, 2]]), w, mode="median")
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(tl.tensor([[1, 2]]), w, per_sample_weights=tl.ones(1, 2))
