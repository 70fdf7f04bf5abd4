"""Every workload's implementations agree with explicit NumPy at a small size (nothing is timed here).

`prepare` runs each implementation once and raises CrossCheckError on any disagreement; the
stand-in accelerator (tests/standin.py) drives tinygrad_lab's off-CPU path (uploads, `.to`,
`Module.to`, downloads) the way CUDA would.
"""
from __future__ import annotations

import numpy as np
import pytest

from tinygrad_lab.bench.explicit import CNN, MLP, ExplicitNet, init_weights
from tinygrad_lab.bench.runner import Case, prepare
from tinygrad_lab.bench.workloads import WORKLOADS

SMALL = {"lsq": 12, "matmul": 8, "elementwise": 16, "dispatch": 4, "mlp": 8, "cnn": 4, "interop": 8, "events": 4}
CASES = [Case(w, SMALL[w.name], dtype, variant)
         for w in WORKLOADS.values() for dtype in w.dtypes for variant in w.variants]


def test_every_workload_has_a_small_size_here():
    assert set(SMALL) == set(WORKLOADS)


@pytest.mark.parametrize("case", CASES, ids=[c.describe() for c in CASES])
def test_implementations_agree_with_numpy(case):
    prepared = prepare(case, ["cpu", "standin"])
    status = {p.key: p.status for p in prepared}
    assert status[f"{case.workload.floor('cpu')}/cpu"] == "ok"
    assert status["tinygrad_lab/cpu"] == "ok" and status["tinygrad_lab/standin"] == "ok", prepared
    assert not [p for p in prepared if p.status == "error"], prepared


@pytest.mark.parametrize("case", [c for c in CASES if c.workload.name != "events"],
                         ids=[c.describe() for c in CASES if c.workload.name != "events"])
def test_pytorch_agrees_too(case, torch):
    prepared = {p.key: p for p in prepare(case, ["cpu"])}
    assert prepared["torch/cpu"].status == "ok", prepared["torch/cpu"].reason


def test_explicit_training_step_matches_finite_differences():
    """The hand-written backward passes (the floor of mlp and cnn) are right on their own."""
    rng = np.random.default_rng(0)
    for spec, x_shape in ((MLP, (3, 64)), (CNN, (2, 1, 8, 8))):
        weights = init_weights(spec, rng, np.float64)
        x, y = rng.standard_normal(x_shape), rng.integers(0, 10, x_shape[0])

        def loss_at(ws):
            return float(ExplicitNet(np, spec, [w.copy() for w in ws]).sgd_step(x, y, 0.0, 0.0)[0])

        _, grads = ExplicitNet(np, spec, [w.copy() for w in weights]).sgd_step(x, y, 0.0, 0.0)
        for i in (0, len(weights) - 2, len(weights) - 1):  # first weight, last weight and bias
            idx = (0,) * weights[i].ndim
            bumped = [w.copy() for w in weights]
            bumped[i][idx] += 1e-6
            assert (loss_at(bumped) - loss_at(weights)) / 1e-6 == pytest.approx(grads[i][idx], rel=1e-3, abs=1e-7)
