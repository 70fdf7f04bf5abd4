"""Gamma, Beta, Dirichlet and Poisson against PyTorch's (log_prob, entropy, mean, variance, mode and their
gradients in the parameters, sample shapes), and the gamma draws' implicit reparameterisation gradient against
independent truths: the derivative of the quantile function (SciPy's gammaincinv, by central differences) and,
on average over many draws, the derivative of the mean."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.ops.pointwise import gamma_sample_slope

RNG = np.random.default_rng(4)
C, R = RNG.uniform(0.5, 3.0, (2, 3)), RNG.uniform(0.5, 2.0, (2, 3))
CASES = {  # name -> (parameters, a function of (lib, *parameter tensors) -> distribution, values for log_prob)
    "Gamma": ((C, R), lambda lib, c, r: lib.distributions.Gamma(c, r), RNG.uniform(0.1, 4.0, (5, 2, 3))),
    "Beta": ((C, R), lambda lib, a, b: lib.distributions.Beta(a, b), RNG.uniform(0.05, 0.95, (5, 2, 3))),
    "Dirichlet": ((C,), lambda lib, c: lib.distributions.Dirichlet(c), RNG.dirichlet([1.0, 2.0, 3.0], (5, 2))),
    "Poisson": ((R,), lambda lib, r: lib.distributions.Poisson(r), RNG.integers(0, 6, (5, 2, 3)).astype(float)),
}


def _run(lib, name: str):
    arrays, build, values = CASES[name]
    params = [lib.tensor(a, requires_grad=True) for a in arrays]
    d = build(lib, *params)
    total = d.log_prob(lib.tensor(values)).sum()
    out = [d.log_prob(lib.tensor(values)), d.mean, d.variance, d.mode]
    if name != "Poisson":  # (PyTorch's Poisson has no entropy)
        out.append(d.entropy())
        total = total + d.entropy().sum()
    total.backward()
    return tuple(d.sample((4,)).shape), [t.detach().numpy() for t in out] + [p.grad.numpy() for p in params]


@pytest.mark.parametrize("name", CASES)
def test_matches_pytorch(name, torch):
    (shape, ours), (their_shape, theirs) = _run(tl, name), _run(torch, name)
    assert shape == their_shape
    for i, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=f"{name}: value {i}")  # (SciPy vs PyTorch digamma)


@pytest.mark.parametrize("alpha", [0.3, 1.0, 2.5, 10.0, 100.0])
@pytest.mark.parametrize("u", [0.01, 0.5, 0.99])
def test_gamma_draws_move_as_their_quantile(alpha, u):
    """A draw x at quantile u moves with alpha as the quantile function does: dx/dalpha by central differences of
    SciPy's inverse incomplete gamma function."""
    special = pytest.importorskip("scipy.special")
    x, h = special.gammaincinv(alpha, u), 1e-6 * alpha
    expected = (special.gammaincinv(alpha + h, u) - special.gammaincinv(alpha - h, u)) / (2 * h)
    slope = gamma_sample_slope(tl.device("cpu").backend, np.array([alpha]), np.array([x]))[0]
    assert slope == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("name, expected", [
    ("Gamma", lambda c, r: (1 / r, -c / r ** 2)),  # d/dc, d/dr of the mean c / r
    ("Beta", lambda a, b: (b / (a + b) ** 2, -a / (a + b) ** 2)),  # of the mean a / (a + b)
])
def test_rsample_gradients_average_to_the_mean_s_derivatives(name, expected):
    tl.manual_seed(0)
    c, r = tl.tensor(2.0, dtype=tl.float64, requires_grad=True), tl.tensor(1.5, dtype=tl.float64, requires_grad=True)
    d = tl.distributions.Gamma(c, r) if name == "Gamma" else tl.distributions.Beta(c, r)
    d.rsample((200_000,)).mean().backward()
    np.testing.assert_allclose([c.grad.item(), r.grad.item()], expected(2.0, 1.5), rtol=0.02)


def test_bad_parameters_and_values_are_refused_as_pytorch(torch):
    for lib in (tl, torch):
        with pytest.raises(ValueError, match="concentration"):
            lib.distributions.Gamma(lib.tensor(-1.0), lib.tensor(1.0))
        with pytest.raises(ValueError, match="support"):
            lib.distributions.Poisson(lib.tensor(2.0)).log_prob(lib.tensor(1.5))
        with pytest.raises(ValueError, match="one-dimensional"):
            lib.distributions.Dirichlet(lib.tensor(1.0))


@pytest.mark.parametrize("name", CASES)
def test_kl_divergence_matches_pytorch(name, torch):
    arrays, build, _ = CASES[name]
    others = [RNG.uniform(0.5, 2.0, a.shape) for a in arrays]

    def run(lib):
        params = [lib.tensor(a, requires_grad=True) for a in arrays]
        kl = lib.distributions.kl_divergence(build(lib, *params), build(lib, *(lib.tensor(o) for o in others)))
        kl.sum().backward()
        return [kl.detach().numpy()] + [p.grad.numpy() for p in params]

    for a, b in zip(run(tl), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)
