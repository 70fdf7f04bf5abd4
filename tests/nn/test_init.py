"""nn.init beyond the layers' defaults: trunc_normal_, orthogonal_, eye_, dirac_ (and the generator
argument every random one takes). The deterministic ones equal PyTorch's; the random ones are checked
for what defines them (the range and moments of a truncated normal, orthogonality)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_lab as tl

init = tl.nn.init


def _truncated_moments(mean, std, a, b):
    """Mean and standard deviation of N(mean, std²) truncated to [a, b] (the textbook formulas)."""
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = mean + std * (pdf(alpha) - pdf(beta)) / z
    var = std ** 2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    return m, math.sqrt(var)


@pytest.mark.parametrize("mean, std, a, b", [(0.0, 1.0, -2.0, 2.0), (1.0, 2.0, -1.0, 2.5), (0.0, 0.02, -0.04, 0.04)])
def test_trunc_normal_has_the_truncated_distribution(mean, std, a, b):
    t = init.trunc_normal_(tl.empty(200_000, dtype=tl.float64), mean, std, a, b, generator=tl.Generator().manual_seed(0))
    values = t.numpy()
    assert values.min() >= a and values.max() <= b
    m, s = _truncated_moments(mean, std, a, b)
    assert abs(values.mean() - m) < 0.01 * std and abs(values.std() - s) < 0.01 * std


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 2, 3)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape):
    w = init.orthogonal_(tl.empty(*shape, dtype=tl.float64), gain=2.0).reshape(shape[0], -1).numpy()
    small = min(w.shape)
    gram = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-12)


def test_random_initialisers_follow_their_generator():
    for fill in (lambda t, g: init.trunc_normal_(t, generator=g), lambda t, g: init.orthogonal_(t, generator=g),
                 lambda t, g: init.kaiming_normal_(t, generator=g), lambda t, g: init.xavier_uniform_(t, generator=g)):
        a = fill(tl.empty(4, 3), tl.Generator().manual_seed(7))
        b = fill(tl.empty(4, 3), tl.Generator().manual_seed(7))
        assert tl.equal(a, b)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(tl.empty(3))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.eye_(tl.empty(2, 2, 2))
    with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
        init.dirac_(tl.empty(2, 2))


@pytest.mark.parametrize("shape, groups", [((3, 4), None), ((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((6, 3, 1, 3, 3), 3)])
def test_eye_and_dirac_equal_pytorchs(shape, groups, torch):
    def fill(lib):
        t = lib.full(shape, 5.0)
        return lib.nn.init.eye_(t) if groups is None else lib.nn.init.dirac_(t, groups)
    np.testing.assert_array_equal(fill(tl).numpy(), fill(torch).numpy())


def test_dirac_weights_pass_the_input_through():
    x = tl.randn(2, 3, 5, 5)
    w = init.dirac_(tl.empty(3, 3, 3, 3))
    np.testing.assert_allclose(tl.nn.functional.conv2d(x, w, padding=1).numpy(), x.numpy(), atol=1e-6)
