"""Empty batches (and other empty tensors) through layers, losses and ops, as PyTorch: a data loader's last
batch or a filtered selection can hold nothing, and PyTorch gives the empty result (or NaN for a mean over
nothing) rather than an error. Shapes, dtypes and values against PyTorch; backward must run where PyTorch's
does. Found by this survey: GroupNorm and MultiheadAttention reshaped with a -1 that a batch of 0 makes
ambiguous, and einsum took a contracted size of 0 for 1."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_lab as tl


def _zeros(lib, *shape):
    return lib.zeros(*shape)


CASES = {
    "Linear": lambda lib: lib.nn.Linear(3, 2)(_zeros(lib, 0, 3)),
    "Conv2d": lambda lib: lib.nn.Conv2d(1, 2, 3)(_zeros(lib, 0, 1, 5, 5)),
    "ConvTranspose2d": lambda lib: lib.nn.ConvTranspose2d(1, 2, 3)(_zeros(lib, 0, 1, 5, 5)),
    "MaxPool2d": lambda lib: lib.nn.MaxPool2d(2)(_zeros(lib, 0, 1, 4, 4)),
    "AdaptiveAvgPool2d": lambda lib: lib.nn.AdaptiveAvgPool2d(2)(_zeros(lib, 0, 1, 4, 4)),
    "BatchNorm1d eval": lambda lib: lib.nn.BatchNorm1d(3).eval()(_zeros(lib, 0, 3)),
    "LayerNorm": lambda lib: lib.nn.LayerNorm(3)(_zeros(lib, 0, 3)),
    "GroupNorm": lambda lib: lib.nn.GroupNorm(1, 2)(_zeros(lib, 0, 2, 3)),
    "Embedding": lambda lib: lib.nn.Embedding(4, 2)(lib.zeros(0, dtype=lib.long)),
    "LSTM": lambda lib: lib.nn.LSTM(3, 2, batch_first=True)(_zeros(lib, 0, 4, 3))[0],
    "MultiheadAttention": lambda lib: lib.nn.MultiheadAttention(4, 2, batch_first=True)(
        _zeros(lib, 0, 3, 4), _zeros(lib, 0, 3, 4), _zeros(lib, 0, 3, 4)),
    "TransformerEncoderLayer": lambda lib: lib.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)(
        _zeros(lib, 0, 3, 4)),
    "CrossEntropyLoss mean": lambda lib: lib.nn.CrossEntropyLoss()(_zeros(lib, 0, 3).requires_grad_(),
                                                                    lib.zeros(0, dtype=lib.long)),
    "CrossEntropyLoss sum": lambda lib: lib.nn.CrossEntropyLoss(reduction="sum")(_zeros(lib, 0, 3).requires_grad_(),
                                                                                  lib.zeros(0, dtype=lib.long)),
    "MSELoss": lambda lib: lib.nn.MSELoss()(_zeros(lib, 0).requires_grad_(), _zeros(lib, 0)),
    "softmax over 0": lambda lib: _zeros(lib, 3, 0).softmax(1),
    "mean, std, prod": lambda lib: (_zeros(lib, 0).mean(), _zeros(lib, 0).std(), _zeros(lib, 0).prod()),
    "matmul over 0": lambda lib: _zeros(lib, 2, 0) @ _zeros(lib, 0, 3),
    "einsum over 0": lambda lib: lib.einsum("ij,jk->ik", _zeros(lib, 2, 0), _zeros(lib, 0, 3)),
    "cat with an empty": lambda lib: lib.cat([_zeros(lib, 0, 3), lib.ones(2, 3)]),
    "topk 0": lambda lib: lib.topk(lib.ones(3), 0),
    "index by nothing": lambda lib: lib.ones(3, 2)[lib.zeros(0, dtype=lib.long)],
    "one_hot of nothing": lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.long), 3),
    "det of 0x0": lambda lib: lib.linalg.det(_zeros(lib, 0, 0)),
}


def _run(lib, case):
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = case(lib)
        outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o is not None]
        wanted = [o.sum() for o in outs if o.requires_grad]
        if wanted:
            sum(wanted).backward()
    return [(tuple(o.shape), str(o.dtype).rsplit(".", 1)[-1], np.asarray(o.detach().numpy(), float)) for o in outs]


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_empty_as_pytorch(case, torch):
    ours, theirs = _run(tl, case), _run(torch, case)
    assert [(s, d) for s, d, _ in ours] == [(s, d) for s, d, _ in theirs]
    for (_, _, a), (_, _, b) in zip(ours, theirs):
        np.testing.assert_allclose(a, b, equal_nan=True)


def test_reshape_of_nothing_with_minus_one_is_ambiguous(torch):
    """-1 beside a 0 could be any size: PyTorch's error, which says so."""
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match="ambiguous"):
            _zeros(lib, 0, 6).reshape(0, 2, -1)
