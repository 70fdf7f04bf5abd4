"""A timer done right: warm-up, calibrated inner loops, interleaved samples, median/min/max.

Why each piece is there:

- warm-up: the first calls pay for caches, lazy imports and allocators;
- calibrated inner loops: one sample lasts at least `min_sample_s`, so the clock's resolution
  and the cost of reading it vanish next to the work (each implementation gets its own count);
- interleaving: the samples of all implementations being compared are taken round-robin, and
  the one that goes first rotates every round, so machine noise and order effects hit them alike;
- median (with min and max): robust to the odd interrupted sample;
- device synchronisation: GPU work is asynchronous, so the device is synchronised before the
  clock starts and again after the last call of a sample, *before* the clock is read; without
  it a GPU sample times the kernel launches, not the work.

The clock and each implementation's sync are injectable, so all of this is unit-tested with a
fake clock and a fake device.
"""
from __future__ import annotations

import contextlib
import itertools
import math
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Sequence

Step = Callable[[], Any]


@dataclass(frozen=True)
class Timed:
    """One implementation to time: a zero-argument step, the device sync its work needs (None on
    the CPU) and a context entered around each of its samples (e.g. an event subscription)."""

    key: str
    step: Step
    sync: Callable[[], Any] | None = None
    around: Callable[[], ContextManager[Any]] = contextlib.nullcontext


@dataclass(frozen=True)
class Timing:
    """Per-iteration seconds of one implementation, one value per sample."""

    samples: tuple[float, ...]
    inner_loops: int

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples)

    @property
    def min_s(self) -> float:
        return min(self.samples)

    @property
    def max_s(self) -> float:
        return max(self.samples)


class Timer:
    """Times zero-argument steps (see the module docstring for the method)."""

    def __init__(self, min_sample_s: float = 0.02, repeats: int = 15, warmup: int = 2,
                 clock: Callable[[], float] = time.perf_counter, max_loops: int = 10**7) -> None:
        if repeats < 1 or warmup < 0 or min_sample_s < 0:
            raise ValueError(f"bad timer settings: repeats={repeats}, warmup={warmup}, min_sample_s={min_sample_s}")
        self.min_sample_s = min_sample_s
        self.repeats = repeats
        self.warmup = warmup
        self.clock = clock
        self.max_loops = max_loops

    def sample(self, impl: Timed, loops: int) -> float:
        """Seconds for `loops` calls of the step, the device synchronised on both sides."""
        step, sync, clock = impl.step, impl.sync, self.clock
        with impl.around():
            if sync is not None:
                sync()  # work queued earlier must not land in this sample
            start = clock()
            for _ in itertools.repeat(None, loops):
                step()
            if sync is not None:
                sync()  # wait for the work itself, not just its launch
            return clock() - start

    def warm_up(self, impl: Timed) -> None:
        """Run the step `warmup` times (one synchronised sample), untimed."""
        if self.warmup:
            self.sample(impl, self.warmup)

    def calibrate(self, impl: Timed) -> int:
        """A loop count for which one sample lasts at least `min_sample_s` (capped at `max_loops`)."""
        loops = 1
        while True:
            elapsed = self.sample(impl, loops)
            if elapsed >= self.min_sample_s or loops >= self.max_loops:
                return loops
            wanted = math.ceil(loops * 1.2 * self.min_sample_s / max(elapsed, 1e-9))
            loops = min(self.max_loops, max(loops * 2, min(wanted, loops * 100)))

    def interleave(self, impls: Sequence[Timed], loops: dict[str, int]) -> dict[str, Timing]:
        """`repeats` rounds of one sample per implementation, the first of each round rotating."""
        per_iter: dict[str, list[float]] = {impl.key: [] for impl in impls}
        for round_no in range(self.repeats):
            k = round_no % max(len(impls), 1)
            for impl in [*impls[k:], *impls[:k]]:
                n = loops[impl.key]
                per_iter[impl.key].append(self.sample(impl, n) / n)
        return {key: Timing(tuple(v), loops[key]) for key, v in per_iter.items()}

    def measure(self, impls: Sequence[Timed]) -> dict[str, Timing]:
        """Warm up and calibrate each implementation, then sample them interleaved."""
        loops = {}
        for impl in impls:
            self.warm_up(impl)
            loops[impl.key] = self.calibrate(impl)
        return self.interleave(impls, loops)


def fmt_time(seconds: float) -> str:
    """Seconds in an adaptive unit with three significant digits: 812 ns, 1.25 µs, 40.1 ms, 2.00 s."""
    unit, value = "s", seconds
    for name, scale in (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3)):
        if float(f"{seconds / scale:.3g}") < 1000:  # the rounded value must stay under 1000
            unit, value = name, seconds / scale
            break
    return f"{value:#.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"


class ForeignLoad:
    """Share of all CPUs that *other* processes used over an interval (from /proc/stat).

    On a 2-core machine one busy neighbour is enough to skew a measurement, so every record says
    how quiet the machine was while it was timed; None where /proc/stat is unavailable.
    """

    NOISY = 0.05  # above this share a record is flagged as noisy

    def __init__(self) -> None:
        self.start = self._snapshot()

    @staticmethod
    def _snapshot() -> tuple[float, float, float] | None:
        try:
            fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        except (OSError, ValueError):
            return None
        busy = sum(fields[:8]) - fields[3] - fields[4]  # user..steal, minus idle and iowait
        own = os.times()
        return busy / os.sysconf("SC_CLK_TCK"), own.user + own.system, time.perf_counter()

    def share(self) -> float | None:
        """Foreign CPU share since construction (0..1), or None if unknown."""
        end = self._snapshot()
        if self.start is None or end is None:
            return None
        busy, own, wall = (e - s for e, s in zip(end, self.start))
        return max(0.0, busy - own) / max(wall * (os.cpu_count() or 1), 1e-9)  # /proc/stat counts every CPU
