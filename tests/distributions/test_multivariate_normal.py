"""MultivariateNormal against PyTorch's: log_prob, entropy, the three matrices and the variance from each of the
three parametrisations (batched, broadcast against loc), their gradients; KL between two of them; argument
validation; and rsample's gradient against finite differences (the noise differs from PyTorch's)."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

RNG = np.random.default_rng(3)


def _spd(batch: tuple, k: int = 3) -> np.ndarray:
    a = RNG.standard_normal(batch + (k, k))
    return a @ np.swapaxes(a, -1, -2) + k * np.eye(k)


COV, LOC, X = _spd((2,)), RNG.standard_normal((4, 1, 3)), RNG.standard_normal((5, 4, 2, 3))
MATRICES = {"covariance_matrix": COV, "precision_matrix": np.linalg.inv(COV), "scale_tril": np.linalg.cholesky(COV)}


def _run(lib, kind: str):
    loc, m = lib.tensor(LOC, requires_grad=True), lib.tensor(MATRICES[kind], requires_grad=True)
    d = lib.distributions.MultivariateNormal(loc, **{kind: m})
    lp, ent = d.log_prob(lib.tensor(X)), d.entropy()
    (lp.sum() + 2 * ent.sum()).backward()
    shapes = (tuple(d.batch_shape), tuple(d.event_shape), tuple(d.sample((6,)).shape))
    values = [lp, ent, d.covariance_matrix, d.precision_matrix, d.scale_tril, d.variance, d.mean, loc.grad, m.grad]
    return shapes, [v.detach().numpy() for v in values]


@pytest.mark.parametrize("kind", MATRICES)
def test_matches_pytorch(kind, torch):
    (shapes, ours), (theirs_shapes, theirs) = _run(tl, kind), _run(torch, kind)
    assert shapes == theirs_shapes == ((4, 2), (3,), (6, 4, 2, 3))
    for i, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=f"value {i}")


def test_kl_divergence_matches_pytorch(torch):
    def run(lib):
        cov, loc = lib.tensor(COV, requires_grad=True), lib.tensor(LOC[0, 0], requires_grad=True)
        p = lib.distributions.MultivariateNormal(loc, cov)
        q = lib.distributions.MultivariateNormal(lib.zeros(3, dtype=lib.float64), scale_tril=lib.tensor(_q_tril))
        kl = lib.distributions.kl_divergence(p, q)
        kl.sum().backward()
        return [kl.detach().numpy(), cov.grad.numpy(), loc.grad.numpy()]

    _q_tril = np.linalg.cholesky(_spd(()))
    for a, b in zip(run(tl), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-9)


@pytest.mark.parametrize("kwargs", [
    {"covariance_matrix": [[1.0, 2.0], [2.0, 1.0]]},  # not positive definite
    {"covariance_matrix": [[1.0, 0.0], [0.5, 1.0]]},  # not symmetric
    {"scale_tril": [[1.0, 1.0], [0.0, 1.0]]},  # not lower triangular
    {"scale_tril": [[-1.0, 0.0], [0.0, 1.0]]},  # a negative diagonal
])
def test_bad_matrices_are_refused_as_pytorch(kwargs, torch):
    for lib in (tl, torch):
        with pytest.raises(ValueError, match="Expected parameter"):
            lib.distributions.MultivariateNormal(lib.zeros(2), **{k: lib.tensor(v) for k, v in kwargs.items()})
    for lib in (tl, torch):
        with pytest.raises(ValueError, match="Exactly one"):
            lib.distributions.MultivariateNormal(lib.zeros(2))


def test_rsample_gradient_matches_finite_differences():
    def total(cov):
        tl.manual_seed(5)
        d = tl.distributions.MultivariateNormal(tl.zeros(3, dtype=tl.float64), cov)
        return (d.rsample((4,)) * tl.tensor(np.linspace(-1, 1, 12).reshape(4, 3))).sum()

    cov = tl.tensor(COV[0], requires_grad=True)
    total(cov).backward()
    eps, numeric = 1e-6, np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            step = np.zeros((3, 3))
            step[i, j] = step[j, i] = eps / (2 if i != j else 1)  # stay symmetric: perturb both halves
            numeric[i, j] = (total(tl.tensor(COV[0] + step)).item() - total(tl.tensor(COV[0] - step)).item()) / (2 * eps)
    g = cov.grad.numpy()
    np.testing.assert_allclose((g + g.T) / 2, numeric, rtol=1e-5, atol=1e-8)  # along a step that keeps Σ symmetric


def test_kl_divergence_broadcasts_batch_shapes_as_pytorch(torch):
    """p of batch (2, 1) and q of batch (1, 3) give a (2, 3) KL (taking the longer batch shape broke here)."""
    def run(lib):
        p = lib.distributions.MultivariateNormal(lib.tensor(LOC[:2, :, :]).reshape(2, 1, 3), lib.tensor(_spd((2, 1))))
        q = lib.distributions.MultivariateNormal(lib.zeros(1, 3, 3, dtype=lib.float64), lib.tensor(_spd((1, 3))))
        return lib.distributions.kl_divergence(p, q).numpy()

    state = RNG.bit_generator.state
    ours = run(tl)
    RNG.bit_generator.state = state
    np.testing.assert_allclose(ours, run(torch), rtol=1e-9)
