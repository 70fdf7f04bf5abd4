"""nn.utils.parametrize and nn.utils.parametrizations: PyTorch's Parametrizations tutorial run with each
library (the printed results must be the same), and by hand: training keeps the constraint, gradients
are right (gradcheck through a parametrization), weight_norm and spectral_norm do what they say."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tinygrad_lab as tl

from .._helpers import assert_prints_as_torch

parametrize = tl.nn.utils.parametrize
TUTORIAL = Path(__file__).with_name("parametrizations_tutorial.py")


class Symmetric(tl.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


def test_the_tutorial_prints_what_pytorch_prints(torch):
    assert_prints_as_torch(TUTORIAL)


def test_training_keeps_the_weight_in_the_set():
    layer = tl.nn.Linear(4, 4)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    opt = tl.optim.SGD(layer.parameters(), lr=0.1)
    x = tl.randn(8, 4)
    for _ in range(3):
        opt.zero_grad()
        (layer(x) ** 2).mean().backward()
        opt.step()
    w = layer.weight.detach().numpy()
    np.testing.assert_array_equal(w, w.T)
    assert not np.array_equal(np.triu(layer.parametrizations.weight.original.detach().numpy(), 1),
                              np.tril(layer.parametrizations.weight.original.detach().numpy(), -1).T)


def test_gradients_reach_the_original_by_the_chain_rule():
    layer = tl.nn.Linear(3, 3, bias=False).double()
    parametrize.register_parametrization(layer, "weight", Symmetric())
    x = tl.randn(2, 3, dtype=tl.float64)
    out = layer(x)
    (out ** 2).sum().backward()
    # out = x Wᵀ, W = triu(O) + triu(O, 1)ᵀ: dL/dW = G = 2 outᵀ x, so dL/dO = triu(G) + triu(Gᵀ, 1)
    G = 2 * out.detach().numpy().T @ x.numpy()
    np.testing.assert_allclose(layer.parametrizations.weight.original.grad.numpy(), np.triu(G) + np.triu(G.T, 1),
                               rtol=1e-12)


def test_weight_norm_splits_length_and_direction():
    layer = tl.nn.Linear(3, 2)
    w0 = layer.weight.detach().numpy().copy()
    tl.nn.utils.parametrizations.weight_norm(layer)
    g, v = layer.parametrizations.weight.original0, layer.parametrizations.weight.original1
    np.testing.assert_allclose(g.detach().numpy(), np.linalg.norm(w0, axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(layer.weight.detach().numpy(), w0, rtol=1e-6)
    with tl.no_grad():
        g.mul_(2.0)
    np.testing.assert_allclose(layer.weight.detach().numpy(), 2 * w0, rtol=1e-6)


def test_spectral_norm_makes_the_largest_singular_value_one():
    conv = tl.nn.Conv2d(3, 4, 3)
    tl.nn.utils.parametrizations.spectral_norm(conv)
    for _ in range(30):
        w = conv.weight
    assert np.linalg.svd(w.detach().numpy().reshape(4, -1), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-4)
    conv.eval()
    assert tl.equal(conv.weight, conv.weight)  # eval: no more power iterations, the same weight


def test_errors_say_what_is_wrong():
    class Rows(tl.nn.Module):
        def forward(self, X):
            return X[:1]
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(tl.nn.Linear(2, 2), "weight", Rows())
    with pytest.raises(ValueError, match="no parameter or buffer with name 'scale'"):
        parametrize.register_parametrization(tl.nn.Linear(2, 2), "scale", Symmetric())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(tl.nn.Linear(2, 2), "weight")
