"""bincount and histc (PyTorch's OpInfo samples cover their ordinary use, in test_opinfo_conformance):
bin edges in float32, the automatic range, dtypes of counts and weighted sums, and the errors.
Against PyTorch (skipped without it) and hand-counted values."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl


def test_histc_counts_by_hand():
    x = tl.tensor([0.0, 0.5, 1.0, 2.5, 3.0, 3.0, -1.0, 7.0, float("nan")])
    assert x.histc(bins=3, min=0, max=3).tolist() == [2.0, 1.0, 3.0]  # 3.0 falls in the last bin; -1, 7, nan in none
    assert tl.histc(tl.tensor([2.0, 2.0]), bins=4).tolist() == [0.0, 0.0, 2.0, 0.0]  # one value: range [1, 3]
    assert tl.histc(tl.tensor([]), bins=2).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_bin_edges_match_torch(torch, dtype):
    """Values on and next to the bin edges, and a range set by the data: the same bins as PyTorch."""
    rng = np.random.default_rng(3)
    edges = np.linspace(-1.7, 2.3, 8, dtype=dtype)
    data = np.concatenate([rng.uniform(-2, 2.5, 500), edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
    data = data.astype(dtype)
    for kwargs in (dict(bins=7, min=-1.7, max=2.3), dict(bins=13), dict(bins=1, min=-1, max=1)):
        ours = tl.histc(tl.tensor(data), **kwargs)
        theirs = torch.histc(torch.tensor(data), **kwargs)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=str(kwargs))


def test_bincount_counts_and_weights(torch):
    x = [0, 1, 1, 3, 3, 3]
    for lib in (tl, torch):
        t = lib.tensor(x)
        assert t.bincount().tolist() == [1, 2, 0, 3]
        assert lib.bincount(t, minlength=6).tolist() == [1, 2, 0, 3, 0, 0]
        assert lib.bincount(t, weights=lib.tensor([0.5, 1, 2, 1, 1, 1.5])).tolist() == [0.5, 3.0, 0.0, 3.5]
    for weights in ([1, 2, 3, 4, 5, 6], np.ones(6, np.float32), np.ones(6, np.float64)):
        ours = tl.bincount(tl.tensor(x), weights=tl.tensor(weights)).dtype
        theirs = torch.bincount(torch.tensor(x), weights=torch.tensor(weights)).dtype
        assert str(ours).split(".")[-1] == str(theirs).split(".")[-1]


MISUSES = {
    "negative value": (lambda m: m.bincount(m.tensor([2, -1])), RuntimeError, "non-negative"),
    "2-d input": (lambda m: m.bincount(m.tensor([[1, 2]])), RuntimeError, "1-d"),
    "float input": (lambda m: m.bincount(m.tensor([1.0, 2.0])), NotImplementedError, None),
    "weights too short": (lambda m: m.bincount(m.tensor([1, 2]), weights=m.ones(3)), RuntimeError, "same length"),
    "negative minlength": (lambda m: m.bincount(m.tensor([1]), minlength=-1), RuntimeError, "minlength"),
    "integer histc": (lambda m: m.histc(m.tensor([1, 2]), bins=2), NotImplementedError, None),
    "no bins": (lambda m: m.histc(m.tensor([1.0]), bins=0), RuntimeError, "bins must be > 0"),
    "min above max": (lambda m: m.histc(m.tensor([1.0]), bins=2, min=3, max=1), RuntimeError, "max must be larger"),
    "infinite range": (lambda m: m.histc(m.tensor([1.0, float("inf")]), bins=2), RuntimeError, "not finite"),
}


@pytest.mark.parametrize("case", MISUSES.values(), ids=MISUSES.keys())
def test_misuses_raise_what_torch_raises(torch, case):
    call, kind, words = case
    for lib in (tl, torch):
        with pytest.raises(kind, match=words):
            call(lib)
