"""Random draws with a Generator of one's own (`generator=` on the factories and fills), multinomial and
bernoulli: reproducibility, independence from the global seed, the laws they draw from (frequencies
against the exact probabilities, with bounds of several standard errors), and PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

DRAWS = {
    "rand": lambda g: tl.rand(3, 2, generator=g),
    "randn": lambda g: tl.randn(4, generator=g),
    "randint": lambda g: tl.randint(0, 10, (5,), generator=g),
    "randperm": lambda g: tl.randperm(6, generator=g),
    "normal": lambda g: tl.normal(1.0, 2.0, (3,), generator=g),
    "normal_": lambda g: tl.empty(3).normal_(generator=g),
    "uniform_": lambda g: tl.empty(3).uniform_(-1, 1, generator=g),
    "multinomial": lambda g: tl.multinomial(tl.tensor([0.2, 0.3, 0.5]), 4, True, generator=g),
    "bernoulli": lambda g: tl.bernoulli(tl.full((6,), 0.5), generator=g),
}


@pytest.mark.parametrize("draw", DRAWS.values(), ids=DRAWS.keys())
def test_a_generator_repeats_its_stream_and_leaves_the_global_one_alone(draw):
    g = tl.Generator().manual_seed(7)
    first = draw(g)
    assert tl.equal(draw(g.manual_seed(7)), first)
    tl.manual_seed(0)
    expected = tl.randn(3)
    tl.manual_seed(0)
    draw(tl.Generator().manual_seed(1))
    assert tl.equal(tl.randn(3), expected)  # the global stream did not move


def test_generator_is_torchs_name_and_state_round_trips():
    assert tl.Generator is tl.utils.data.Generator
    g = tl.Generator().manual_seed(3)
    state = g.get_state()
    a = tl.randn(4, generator=g)
    g.set_state(state)
    assert tl.equal(tl.randn(4, generator=g), a)
    assert g.initial_seed() == 3 and repr(g) == "<tinygrad_lab.Generator seed=3>"


def _close(freq, p, n):
    """Within 5 standard errors of a frequency over n draws."""
    p = np.asarray(p, float)
    return np.all(np.abs(np.asarray(freq) - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12)


def test_multinomial_with_replacement_draws_the_weights():
    n, w = 40000, [1.0, 0.0, 6.0, 3.0]  # weights need not sum to 1
    draws = tl.multinomial(tl.tensor(w), n, replacement=True, generator=tl.Generator().manual_seed(1))
    assert draws.dtype is tl.int64 and draws.shape == (n,)
    assert _close(np.bincount(draws.numpy(), minlength=4) / n, np.array(w) / 10, n)


def test_multinomial_without_replacement_is_drawing_and_removing():
    """The second draw of two: P(j) = sum over i != j of p_i p_j / (1 - p_i), by hand."""
    n, p = 40000, np.array([0.1, 0.0, 0.6, 0.3])
    rows = tl.tensor(np.tile(p, (n, 1)))
    draws = tl.multinomial(rows, 2, generator=tl.Generator().manual_seed(2)).numpy()
    assert (draws[:, 0] != draws[:, 1]).all()
    second = [sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j) for j in range(4)]
    assert _close(np.bincount(draws[:, 0], minlength=4) / n, p, n)
    assert _close(np.bincount(draws[:, 1], minlength=4) / n, second, n)
    assert tl.multinomial(tl.tensor([0.0, 1.0, 0.0]), 3).tolist()[0] == 1  # then the weightless ones


def test_bernoulli_and_bernoulli_():
    n = 40000
    draws = tl.bernoulli(tl.full((n,), 0.3), generator=tl.Generator().manual_seed(3))
    assert draws.dtype is tl.float32 and set(np.unique(draws.numpy())) <= {0.0, 1.0}
    assert _close(draws.mean().item(), 0.3, n)
    ints = tl.zeros(n, dtype=tl.int64).bernoulli_(0.25)
    assert ints.dtype is tl.int64 and _close(ints.float().mean().item(), 0.25, n)
    assert tl.zeros(4).bernoulli_(tl.tensor([0.0, 1.0, 0.0, 1.0])).tolist() == [0.0, 1.0, 0.0, 1.0]


MISUSES = {
    "negative weight": (lambda m: m.multinomial(m.tensor([-1.0, 2.0]), 1), "element < 0"),
    "all zero": (lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1, True), "sum of probabilities <= 0"),
    "too many": (lambda m: m.multinomial(m.tensor([1.0, 2.0]), 3), "without replacement"),
    "integer weights": (lambda m: m.multinomial(m.tensor([1, 2]), 1), "floating-point"),
    "3-d": (lambda m: m.multinomial(m.ones(2, 2, 2), 1), "1 or 2 dim"),
    "no samples": (lambda m: m.multinomial(m.tensor([1.0]), 0), "n_sample <= 0"),
    "probability 1.5": (lambda m: m.bernoulli(m.tensor([0.5, 1.5])), "p_in <= 1"),
}


@pytest.mark.parametrize("case", MISUSES.values(), ids=MISUSES.keys())
def test_misuses_raise_what_torch_raises(torch, case):
    call, words = case
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match=words):
            call(lib)
