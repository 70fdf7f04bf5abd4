"""Pow's fast path (elementwise._power): whole exponents 3..8, -2 and -0.5 of float arrays are
computed by multiplications, a square root and a reciprocal. The values stay within a few units in
the last place of NumPy's pow and PyTorch's, at the edges too (0, negative bases, inf, nan), and
the gradients are unchanged."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.ops.elementwise import _power

FAST = [3, 4, 5, 6, 7, 8, 3.0, 8.0, -2, -2.0, -0.5]
EDGES = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 1e-3, -1e-3, 1e10, -1e10, np.inf, -np.inf, np.nan, 1e-30]


def _values(dtype, b) -> np.ndarray:
    rng = np.random.default_rng(0)
    edges = EDGES
    if b == -0.5:  # 1 / sqrt: -0.0 -> -inf and -inf -> nan, as PyTorch's rsqrt (C's pow: inf and 0)
        edges = [e for e in EDGES if not (e == -np.inf or (e == 0 and np.signbit(e)))]
    return np.concatenate([rng.uniform(-4, 4, 500), edges]).astype(dtype)


def _assert_close_in_ulps(got, want, dtype, ulps: int = 4) -> None:
    """Same nans and infinities; finite values within `ulps` units in the last place."""
    finite = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])  # the infinities
    ulp = np.spacing(np.abs(want[finite]).astype(dtype))
    tiny = np.finfo(dtype).tiny
    assert np.all(np.abs(got[finite] - want[finite]) <= ulps * np.maximum(ulp, tiny))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("b", FAST)
def test_fast_powers_agree_with_numpys_pow(dtype, b):
    x = _values(dtype, b)
    with np.errstate(all="ignore"):
        want = np.power(x, dtype(b))
        got = _power(x, b)
    assert got.dtype == x.dtype and got is not x
    _assert_close_in_ulps(got, want, dtype)


@pytest.mark.parametrize("b", FAST)
def test_fast_powers_agree_with_torch_at_the_edges(torch, b):
    x = np.asarray(EDGES + [-4.0, 3.0, 0.25], dtype=np.float32)
    with np.errstate(all="ignore"):
        got = (tl.tensor(x) ** b).numpy()
    _assert_close_in_ulps(got, (torch.tensor(x) ** b).numpy(), np.float32, ulps=2)


@pytest.mark.parametrize("b", FAST)
def test_fast_powers_match_torch_values_and_gradients(torch, b):
    x = np.random.default_rng(1).uniform(0.2, 3, 64).astype(np.float32) * np.where(np.arange(64) % 2, 1, -1)
    if b == -0.5:
        x = np.abs(x)
    ours, theirs = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (ours ** b).sum().backward()
    (theirs ** b).sum().backward()
    np.testing.assert_allclose((ours ** b).detach().numpy(), (theirs ** b).detach().numpy(), rtol=2e-6)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=2e-6)


def test_cube_rounds_as_torch_does(torch):
    """x ** 3 is x * (x * x), as PyTorch's kernel computes it: equal to the last bit."""
    x = np.random.default_rng(2).standard_normal(2000).astype(np.float32)
    np.testing.assert_array_equal((tl.tensor(x) ** 3).numpy(), (torch.tensor(x) ** 3).numpy())


@pytest.mark.parametrize("b", [2, 0.5, -1, 9, 2.5, -3, 1, 0])
def test_other_exponents_take_numpys_path(b):
    x = np.linspace(0.5, 2, 7)
    np.testing.assert_array_equal(_power(x, b), x ** b)


def test_integer_arrays_are_left_to_numpy():
    x = np.arange(-3, 4)
    got = _power(x, 3)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, x ** 3)
