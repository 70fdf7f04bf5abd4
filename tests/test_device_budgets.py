"""Device work as budgets: what one training step costs a GPU beyond its arithmetic.

A device->host sync stalls the host until the GPU has drained its queue; PyTorch's training step
has none in steady state, and neither should ours. Kernel launches and host->device uploads each
cost microseconds of host time. The stand-in device (tests/fake_cupy.py) counts all three, with
the line that caused each sync; the figures are the bench's own ("launches/step" in
`tinygrad-lab bench --devices cuda`, where the device counts them).

Budgets hold the measured figures: a change that adds work fails here and says where.
"""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import graph, nn
from tinygrad_lab.bench.runner import Case, prepare
from tinygrad_lab.bench.workloads import WORKLOADS

from . import fake_cupy

# per training step of the bench's workloads at batch 64 (SGD with momentum, cross-entropy): 0 syncs and 0
# uploads (the MLP's step crashed, then uploaded backward's seed; the CNN's synced twice and uploaded 3 times)
LAUNCHES = {"mlp": 63, "cnn": 195}


def _step_work(workload: str) -> dict:
    """The device work of one more step after the bench's two (the cross-check and its own count)."""
    case = Case(WORKLOADS[workload], 64, "float32", "")
    (p,) = [p for p in prepare(case, ["standin"]) if p.impl.name == "tinygrad_lab"]
    assert p.status == "ok", p.reason
    fake_cupy.counters.reset()
    p.step()
    work = fake_cupy.counters.snapshot()
    assert work == {k: p.per_step[k] for k in work}, "the bench's launches/step differ from this count"
    return work


def _sites() -> str:
    return "; ".join(f"{n}x {what} at {site}" for (what, site), n in fake_cupy.counters.sync_sites.most_common())


@pytest.mark.parametrize("workload", ["mlp", "cnn"])
def test_a_training_step_syncs_nothing(workload):
    work = _step_work(workload)
    assert work["syncs"] == 0, f"{work['syncs']} syncs per step: {_sites()}"


@pytest.mark.parametrize("workload", ["mlp", "cnn"])
def test_a_training_step_uploads_nothing(workload):
    assert _step_work(workload)["uploads"] == 0, dict(fake_cupy.counters.upload_sites)


@pytest.mark.parametrize("workload", ["mlp", "cnn"])
def test_kernel_launches_per_training_step_stay_within_budget(workload):
    launches = _step_work(workload)["launches"]
    assert launches <= LAUNCHES[workload], f"{launches} launches per {workload} step (budget {LAUNCHES[workload]})"


def test_recording_the_graph_syncs_once_per_summary():
    """Each value or gradient summary a recorded node keeps (min, max, mean, norm, preview) is one small
    read, not five; recording adds no other sync."""
    tl.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to("standin")
    x, y = tl.randn(32, 8, device="standin"), tl.tensor(np.arange(32) % 4, device="standin")

    def step():
        fake_cupy.counters.reset()
        nn.functional.cross_entropy(net(x), y).backward()
        return fake_cupy.counters.syncs

    unrecorded = step()
    with graph.record() as rec:
        recorded = step()
    nodes = list(rec.graph)
    summaries = sum(n.value is not None for n in nodes) + sum(n.grad is not None for n in nodes)
    assert summaries >= len(nodes)
    assert recorded - unrecorded <= summaries, f"{recorded - unrecorded} syncs for {summaries} summaries: {_sites()}"


@pytest.mark.parametrize("op", ["embedding", "binary_cross_entropy", "gather", "cross_entropy", "floor_divide",
                                "remainder", "div_trunc"])
def test_checked_ops_sync_nothing(op):
    """Their input checks (index bounds, probabilities in [0, 1], integer divisors not 0) are read at the
    next sync, not at the op."""
    F = nn.functional
    x = tl.rand(6, 4, device="standin", requires_grad=True)
    idx = tl.tensor([[0, 3, 1, 2]] * 6, device="standin")
    run = {"embedding": lambda: F.embedding(idx[0], x), "binary_cross_entropy": lambda: F.binary_cross_entropy(x, x * 0.5),
           "gather": lambda: x.gather(1, idx), "cross_entropy": lambda: F.cross_entropy(x, idx[:, 1]),
           "floor_divide": lambda: x * (idx // (idx + 1)), "remainder": lambda: x * (idx % (idx + 1)),
           "div_trunc": lambda: x * tl.div(idx, idx + 1, rounding_mode="trunc")}[op]
    fake_cupy.counters.reset()
    run().sum().backward()
    assert fake_cupy.counters.syncs == 0, _sites()


def test_a_masked_backward_is_one_kernel():
    """where(mask, g, 0): CPUs gain from a branch-free bit trick (3 passes); a GPU selects in one kernel."""
    g = tl.randn(8192, device="standin")
    mask = g > 0
    fake_cupy.counters.reset()
    out = tl.where(mask, g, 0.0)
    assert fake_cupy.counters.launches == 1
    np.testing.assert_array_equal(out.cpu().numpy(), np.where(mask.cpu().numpy(), g.cpu().numpy(), 0))


def test_dropout_draws_float32(monkeypatch):
    drawn = []
    real = fake_cupy.RandomState.random_sample

    def spy(self, size=None, dtype=float):
        drawn.append(np.dtype(dtype))
        return real(self, size, dtype)

    monkeypatch.setattr(fake_cupy.RandomState, "random_sample", spy)
    out = nn.functional.dropout(tl.ones(1000, device="standin"), 0.3)
    assert drawn == [np.dtype("float32")]
    kept = out.cpu().numpy()
    assert set(np.unique(kept)) <= {0.0, np.float32(1 / 0.7)} and 0.6 < (kept > 0).mean() < 0.8


def _conv_peak(batch: int) -> int:
    """The device memory peak of a conv2d forward and backward above what was held before (x, w)."""
    backend = tl.device("standin").backend
    x = tl.randn(batch, 16, 32, 32, device="standin", requires_grad=True)  # columns: batch * 0.56 MiB
    w = tl.randn(16, 16, 3, 3, device="standin", requires_grad=True)
    backend.reset_peak_memory_stats(0)
    held = backend.memory_allocated(0)
    tl.nn.functional.conv2d(x, w, padding=1).sum().backward()
    peak = backend.max_memory_allocated(0) - held
    backend.track_peak_memory(False)
    return peak


def test_im2col_memory_does_not_grow_with_the_batch():
    """A convolution's columns (C * kh * kw values per output position, here 0.56 MiB an image) are built a
    chunk of images at a time, within the workspace's cap: doubling the batch adds only the outputs and
    gradients that grow with it (y, its gradient's rows, x's gradient: 3 x 8 MiB here), not 72 MiB of
    columns for each of the forward, the input gradient and the weight gradient."""
    small, large = _conv_peak(128), _conv_peak(256)
    output = 128 * 16 * 32 * 32 * 4
    assert large - small <= 4 * output, f"{(large - small) / 2**20:.0f} MiB more for 128 more images"
