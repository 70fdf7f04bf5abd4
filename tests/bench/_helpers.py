"""Helpers shared by the bench tests: a fake clock, a fake asynchronous device, records."""
from __future__ import annotations

from typing import Any

from tinygrad_lab.bench import Timer


class FakeClock:
    """A clock that moves only when told to; it logs every read (and what the fakes below do)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.log: list[str] = []

    def __call__(self) -> float:
        self.log.append("clock")
        return self.now

    def step(self, cost: float, name: str = "step"):
        """A step that takes `cost` seconds of host time."""
        def step() -> None:
            self.log.append(name)
            self.now += cost
        return step


class FakeGPU:
    """An asynchronous device: launching a kernel is instant, the work lands on the clock only
    when the host synchronises (as with CUDA)."""

    def __init__(self, clock: FakeClock, kernel_s: float) -> None:
        self.clock, self.kernel_s, self.pending = clock, kernel_s, 0.0

    def launch(self) -> None:
        self.clock.log.append("launch")
        self.pending += self.kernel_s

    def synchronize(self) -> None:
        self.clock.log.append("sync")
        self.clock.now += self.pending
        self.pending = 0.0


def fast_timer(repeats: int = 2) -> Timer:
    """A real-clock timer that takes as little time as possible (for tests of everything but timing)."""
    return Timer(min_sample_s=0.0, repeats=repeats, warmup=1)


def record(**fields: Any) -> dict[str, Any]:
    """A valid 'ok' record of workload lsq; `fields` override."""
    base = {
        "workload": "lsq", "variant": "", "size": 64, "shape": "640x64", "dtype": "float32", "impl": "numpy",
        "device": "cpu", "threads": 1, "status": "ok", "reason": None, "median_s": 1e-5, "min_s": 0.9e-5,
        "max_s": 1.2e-5, "repeats": 5, "inner_loops": 100, "floor": "numpy", "ratio_to_floor": 1.0,
        "speedup_vs_numpy": 1.0, "targets": [], "blas_threads": 1, "torch_threads": None, "foreign_cpu": 0.0,
    }
    base.update(fields)
    return base
