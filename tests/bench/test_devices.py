"""The bench's workloads on a device at the sizes a GPU run uses (as small as CI time allows):
every implementation agrees with explicit NumPy, and the device's work per step is reported."""
from __future__ import annotations

import pytest

from tinygrad_lab.bench.runner import Case, prepare
from tinygrad_lab.bench.workloads import WORKLOADS


GPU_SIZES = {"lsq": 1024, "matmul": 1024, "elementwise": 1 << 20, "dispatch": 4, "mlp": 64, "cnn": 64,
             "interop": 1000, "events": 4}
CASES = [Case(w, GPU_SIZES[w.name], "float32", variant) for w in WORKLOADS.values() for variant in w.variants]


def test_every_workload_has_a_gpu_size_here():
    assert set(GPU_SIZES) == set(WORKLOADS)
    assert all(GPU_SIZES[w.name] in w.sizes for w in WORKLOADS.values()), "not a size the bench runs"


@pytest.mark.parametrize("case", CASES, ids=[c.describe() for c in CASES])
def test_workloads_at_gpu_sizes_agree_with_numpy_on_the_device(case):
    (p,) = [p for p in prepare(case, ["standin"]) if p.impl.name == "tinygrad_lab"]
    assert p.status == "ok", p.reason
    work = p.per_step  # what the bench reports per step (a transfer is an upload or a sync, no launch)
    assert work["launches"] + work["uploads"] + work["syncs"] >= 1 and work["peak_bytes"] >= 0
