"""The last of PyTorch's common nn names: multilabel_margin_loss, triplet_margin_with_distance_loss,
the deprecated upsample_nearest/upsample_bilinear and NLLLoss2d, the adaptive max poolings'
*_with_indices and the RNN base classes; values and gradients against PyTorch (skipped without it)."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn
from tinygrad_lab.nn import functional as F

torch = pytest.importorskip("torch")

TARGETS = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 1, 2, 0], [2, 2, -1, 3]])  # repeats, an empty list, a full one


def _pair(data, dtype="float64"):
    a = np.asarray(data, dtype=dtype)
    return tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _check(ours, theirs, inputs, atol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=atol, rtol=1e-6)
    weight = np.random.default_rng(1).random(ours.shape)
    (ours * tl.tensor(weight, dtype=ours.dtype)).sum().backward()
    (theirs * torch.tensor(weight, dtype=theirs.dtype)).sum().backward()
    for t, p in inputs:
        np.testing.assert_allclose(t.grad.numpy(), p.grad.numpy(), atol=atol, rtol=1e-6)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multilabel_margin_loss_matches_pytorch(reduction, dtype):
    x = _pair(np.random.default_rng(0).standard_normal((4, 4)), dtype)
    y = TARGETS
    ours = F.multilabel_margin_loss(x[0], tl.tensor(y), reduction=reduction)
    theirs = torch.nn.functional.multilabel_margin_loss(x[1], torch.tensor(y), reduction=reduction)
    _check(ours, theirs, [x], atol=1e-6 if dtype == "float32" else 1e-12)


def test_multilabel_margin_loss_unbatched_and_module():
    x = _pair(np.random.default_rng(2).standard_normal(5))
    y = np.array([4, 1, -1, 0, 0])
    _check(nn.MultiLabelMarginLoss()(x[0], tl.tensor(y)), torch.nn.MultiLabelMarginLoss()(x[1], torch.tensor(y)), [x])
    assert repr(nn.MultiLabelMarginLoss()) == repr(torch.nn.MultiLabelMarginLoss())


def test_multilabel_margin_loss_bad_input():
    with pytest.raises(RuntimeError, match=r"multilabel_margin_loss: .*input \[2, 3\] and target \[2, 4\]"):
        F.multilabel_margin_loss(tl.zeros(2, 3), tl.zeros(2, 4, dtype=tl.int64))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long"):
        F.multilabel_margin_loss(tl.zeros(2, 3), tl.zeros(2, 3))
    with pytest.raises(IndexError, match=r"out of range \[0, 3\)"):
        F.multilabel_margin_loss(tl.zeros(2, 3), tl.tensor([[0, 3, -1], [1, -1, 5]]))


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_triplet_margin_with_distance_loss_matches_pytorch(swap, reduction):
    rng = np.random.default_rng(3)
    a, p, n = (_pair(rng.standard_normal((5, 3))) for _ in range(3))
    ours = F.triplet_margin_with_distance_loss(a[0], p[0], n[0], swap=swap, reduction=reduction, margin=2.0)
    theirs = torch.nn.functional.triplet_margin_with_distance_loss(a[1], p[1], n[1], swap=swap, reduction=reduction,
                                                                   margin=2.0)
    _check(ours, theirs, [a, p, n])


def test_triplet_margin_with_a_distance_function_module():
    rng = np.random.default_rng(4)
    a, p, n = (_pair(rng.standard_normal((6, 4))) for _ in range(3))
    ours = nn.TripletMarginWithDistanceLoss(distance_function=lambda x, y: 1 - F.cosine_similarity(x, y), margin=0.5)
    theirs = torch.nn.TripletMarginWithDistanceLoss(
        distance_function=lambda x, y: 1 - torch.nn.functional.cosine_similarity(x, y), margin=0.5)
    _check(ours(a[0], p[0], n[0]), theirs(a[1], p[1], n[1]), [a, p, n])
    with pytest.raises(ValueError, match="expected margin to be greater than 0, got 0"):
        nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(tl.zeros(2, 3), tl.zeros(2, 3), tl.zeros(3))


@pytest.mark.parametrize("name, kwargs", [("upsample_nearest", {"scale_factor": 2}),
                                          ("upsample_bilinear", {"size": (5, 7)})])
def test_deprecated_upsample_names_warn_and_match_pytorch(name, kwargs):
    x = _pair(np.random.default_rng(5).standard_normal((1, 2, 3, 4)))
    with pytest.warns(UserWarning, match=f"{name} is deprecated"):
        ours = getattr(F, name)(x[0], **kwargs)
    with pytest.warns(UserWarning):
        theirs = getattr(torch.nn.functional, name)(x[1], **kwargs)
    _check(ours, theirs, [x])


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_adaptive_max_pool_with_indices_always_returns_indices(dims):
    x = np.random.default_rng(6).standard_normal((2, 3) + (5,) * dims)
    name = f"adaptive_max_pool{dims}d_with_indices"
    out, idx = getattr(F, name)(tl.tensor(x), 2)
    t_out, t_idx = getattr(torch.nn.functional, name)(torch.tensor(x), 2)
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    assert getattr(F, name).__name__ == name


def test_nll_loss_2d_is_nll_loss_with_a_warning():
    x = tl.tensor(np.random.default_rng(7).standard_normal((2, 3, 4, 4)))
    y = tl.tensor(np.random.default_rng(8).integers(0, 3, (2, 4, 4)))
    with pytest.warns(UserWarning, match="NLLLoss2d has been deprecated"):
        loss = nn.NLLLoss2d()
    assert isinstance(loss, nn.NLLLoss)
    np.testing.assert_allclose(loss(x, y).item(), F.nll_loss(x, y).item())


def test_rnn_base_classes_are_exported():
    assert issubclass(nn.LSTM, nn.RNNBase) and issubclass(nn.GRUCell, nn.RNNCellBase)
