"""Dropout1d/2d/3d, AlphaDropout and FeatureAlphaDropout by their defining properties (their random
masks are ours, so they cannot equal PyTorch's; the alpha dropout's two values are PyTorch's)."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn


@pytest.mark.parametrize("name,shape", [("Dropout1d", (20, 30, 8)), ("Dropout2d", (20, 30, 4, 3)),
                                        ("Dropout3d", (20, 30, 2, 2, 3)), ("Dropout1d", (40, 7))])
def test_channel_dropout_zeroes_whole_channels_and_keeps_the_mean(name, shape):
    tl.manual_seed(0)
    x = tl.ones(*shape, dtype=tl.float64, requires_grad=True)
    y = getattr(nn, name)(p=0.3)(x)
    a = y.detach().numpy()
    channels = a.reshape(shape[:2] + (-1,)) if len(shape) > 2 else a[None]  # (N, C, positions)
    assert set(np.unique(channels)) <= {0.0, 1 / 0.7}
    assert (channels.min(axis=-1) == channels.max(axis=-1)).all()  # a channel is all kept or all dropped
    assert abs((channels[..., 0] == 0).mean() - 0.3) < 0.06
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), a)  # the gradient is the mask
    m = getattr(nn, name)(p=0.3).eval()
    assert m(x) is x


def test_channel_dropout_checks_rank_and_p():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        nn.functional.dropout1d(tl.randn(1, 2, 3, 4))
    with pytest.raises(RuntimeError, match="dropout3d: Expected 4D or 5D input"):
        nn.functional.dropout3d(tl.randn(1, 2, 3))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout2d(1.5)
    with pytest.warns(UserWarning, match="a 3-D input is taken as \\(N, C, L\\)"):
        nn.functional.dropout2d(tl.randn(2, 3, 4))


def test_alpha_dropout_keeps_selus_zero_mean_and_unit_variance(torch):
    tl.manual_seed(0)
    x = tl.randn(200_000, dtype=tl.float64)
    for m in (nn.AlphaDropout(0.2), nn.FeatureAlphaDropout(0.2)):
        y = m(x.reshape(2000, 100)).numpy()
        assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    y = nn.AlphaDropout(0.2)(x).numpy()
    alpha_prime = 1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.2) * (1 + 0.2 * alpha_prime ** 2)) ** -0.5
    dropped = np.isclose(y, -a * alpha_prime * (1 - 0.2))  # the value a dropped element gets
    assert abs(dropped.mean() - 0.2) < 0.01
    np.testing.assert_allclose(y[~dropped], a * x.numpy()[~dropped] + a * alpha_prime * 0.2)
    zeros = np.zeros(1000)  # on zeros each library gives its two values: b where kept, a alpha' (p - 1) dropped
    theirs = np.unique(torch.nn.AlphaDropout(0.2)(torch.tensor(zeros)).numpy())
    np.testing.assert_allclose(np.unique(nn.AlphaDropout(0.2)(tl.tensor(zeros)).numpy()), theirs, rtol=1e-12)
    assert nn.AlphaDropout(0.2).eval()(x) is x
    feature = nn.FeatureAlphaDropout(0.5)(tl.ones(50, 40, 6, dtype=tl.float64)).numpy()
    assert (feature.min(axis=-1) == feature.max(axis=-1)).all()
