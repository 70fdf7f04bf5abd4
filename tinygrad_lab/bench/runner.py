"""Running workloads: plan the cases, cross-check every implementation, time them, make records.

A *case* is one (workload, size, dtype, variant): its host data is made once (seeded), every
implementation on every requested device runs it once and is compared with NumPy's answer
(a benchmark that times a wrong answer fails with `CrossCheckError`), then the implementations
are timed together, interleaved, at each thread count. Each timed implementation gives one tidy
record (a dict; see `schema.RECORD`); implementations that cannot run here give a record with
status "skipped" and the reason, and ones that raise give status "error".
"""
from __future__ import annotations

import contextlib
import gc
import os
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .runtimes import FLOORS, NUMPY, TORCH, Runtime, Unavailable, blas_threads, get_runtime, pinned_threads, to_host
from .timer import ForeignLoad, Step, Timed, Timer
from .workloads import WORKLOADS, Impl, Workload

DEVICES = tuple(FLOORS)  # the devices with an explicit floor: cpu (NumPy) and cuda (CuPy)


class CrossCheckError(AssertionError):
    """Implementations of a workload disagree with NumPy's answer: nothing is timed."""


@dataclass(frozen=True)
class Case:
    """One data set of one workload: cross-checked once, timed at each thread count."""

    workload: Workload
    size: int
    dtype: str
    variant: str

    def describe(self) -> str:
        variant = f" {self.variant}" if self.variant else ""
        return f"{self.workload.name}{variant} [{self.workload.shape(self.size)} {self.dtype}]"

    def host_data(self) -> dict[str, np.ndarray]:
        """The case's inputs, the same on every run (seeded by workload and size)."""
        seed = zlib.crc32(f"{self.workload.name}:{self.size}".encode())
        return self.workload.data(self.size, np.dtype(self.dtype), np.random.default_rng(seed))


@dataclass
class Prepared:
    """One implementation of a case on one device, ready to time (`step`) or not (`reason`)."""

    impl: Impl
    device: str
    runtime: Runtime | None = None
    step: Step | None = None
    status: str = "ok"
    reason: str | None = None
    per_step: dict[str, int] = field(default_factory=dict)  # device work of one step (`device_work`)

    @property
    def key(self) -> str:
        return f"{self.impl.name}/{self.device}"

    def around(self) -> contextlib.AbstractContextManager[Any]:
        return self.impl.around() if self.impl.around else contextlib.nullcontext()


def resolve_workloads(workloads: Iterable[str | Workload] | None) -> list[Workload]:
    """Workloads by name (all of them for None); Workload objects pass through."""
    if workloads is None:
        return list(WORKLOADS.values())
    out = []
    for w in workloads:
        if isinstance(w, Workload):
            out.append(w)
        elif w in WORKLOADS:
            out.append(WORKLOADS[w])
        else:
            raise ValueError(f"unknown workload {w!r}; known: {', '.join(WORKLOADS)}")
    return out


def plan(workloads: Sequence[Workload], sizes: Sequence[int] | None = None, dtypes: Sequence[str] | None = None,
         quick: bool = False) -> list[Case]:
    """Every case to run, in order; `sizes`/`dtypes` override each workload's own."""
    return [Case(w, size, dtype, variant)
            for w in workloads
            for size in (sizes or (w.quick_sizes if quick else w.sizes))
            for dtype in (dtypes or w.dtypes)
            for variant in w.variants]


def compare(out: np.ndarray, ref: np.ndarray, rtol: float) -> str | None:
    """Why `out` is not NumPy's answer `ref` (None when it is, within `rtol` in relative norm)."""
    if out.shape != ref.shape:
        return f"result has {out.size} values, NumPy's has {ref.size}"
    if out.dtype != ref.dtype:
        return f"result dtype is {out.dtype}, NumPy's is {ref.dtype}"
    if not np.all(np.isfinite(out)):
        return "result has NaN or infinite values"
    ref64 = ref.astype(np.float64)
    err = float(np.linalg.norm(out.astype(np.float64) - ref64) / max(float(np.linalg.norm(ref64)), 1e-300))
    return None if err <= rtol else f"relative error {err:.2e} > tolerance {rtol:.0e}"


def prepare(case: Case, devices: Sequence[str]) -> list[Prepared]:
    """Build every implementation of `case` on `devices`, run each once and cross-check it against
    NumPy's explicit answer; raise CrossCheckError if any disagrees."""
    w, host = case.workload, case.host_data()
    reference = to_host(w.build(get_runtime(NUMPY, "cpu"), host, case.variant)())
    rtol = w.rtol.get(case.dtype, 1e-2)  # float16, or a dtype the workload did not plan for
    prepared, mismatches = [], []
    for device in devices:
        for impl in w.impls(device):
            p = Prepared(impl, device)
            prepared.append(p)
            try:
                p.runtime = get_runtime(impl.runtime, device)
            except Unavailable as exc:
                p.status, p.reason = "skipped", str(exc)
                continue
            try:
                p.step = w.build(p.runtime, host, case.variant)
                with p.around():
                    out = p.step()
                if p.runtime.sync is not None:
                    p.runtime.sync()
                problem = compare(to_host(out), reference, rtol)
                if problem is None and w.verify is not None:
                    problem = w.verify(p.runtime, out, host, case.variant)
                if problem is None and p.runtime.backend is not None:
                    p.per_step = device_work(p)
            except Exception as exc:  # a missing or broken op: reported, the others still run
                p.status, p.reason, p.step = "error", f"{type(exc).__name__}: {exc}", None
                continue
            if problem is not None:
                mismatches.append(f"  {p.key}: {problem}")
    if mismatches:
        raise CrossCheckError(f"{case.describe()}: implementations disagree with explicit NumPy, "
                              "so nothing was timed:\n" + "\n".join(mismatches))
    return prepared


def device_work(p: Prepared) -> dict[str, int]:
    """What one more run of a prepared step does on its device: kernel launches, device->host syncs and
    host->device uploads (where the backend counts them: the stand-in device does, CuPy cannot), and the
    peak of device memory above what was held before (where the backend notes peaks)."""
    backend, index = p.runtime.backend, p.runtime.index
    before = backend.counters()
    peaks = hasattr(backend, "reset_peak_memory_stats")
    if peaks:
        backend.reset_peak_memory_stats(index)
        held = backend.memory_allocated(index)
    with p.around():
        p.step()
    work = {} if before is None else {k: v - before[k] for k, v in backend.counters().items()}
    p.runtime.sync()
    if peaks:
        work["peak_bytes"] = backend.max_memory_allocated(index) - held
        backend.track_peak_memory(False)  # the note costs Python work on every allocation: not while timing
    return work


def time_case(case: Case, prepared: Sequence[Prepared], threads: int, timer: Timer) -> list[dict[str, Any]]:
    """Time the runnable implementations of a case together at `threads` threads; one record each."""
    live = [p for p in prepared if p.status == "ok"]
    runtimes = list({id(p.runtime): p.runtime for p in live}.values())
    loops: dict[str, int] = {}
    with pinned_threads(threads, runtimes):
        observed_blas = blas_threads()
        torch_threads = next((rt.thread_count() for rt in runtimes if rt.name == TORCH), None)
        gc.collect()
        load = ForeignLoad()
        timed = {p.key: Timed(p.key, p.step, p.runtime.sync, p.around) for p in live}
        for p in live:
            try:
                timer.warm_up(timed[p.key])
                loops[p.key] = timer.calibrate(timed[p.key])
            except Exception as exc:  # broke after its first run: reported, the others still timed
                p.status, p.reason = "error", f"{type(exc).__name__}: {exc}"
        timings = timer.interleave([timed[k] for k in loops], loops)
        foreign = load.share()
    medians = {(p.impl.name, p.device): timings[p.key].median_s for p in prepared if p.key in timings}
    numpy_median = medians.get((NUMPY, "cpu"))
    w = case.workload
    records = []
    for p in prepared:
        t = timings.get(p.key)
        floor = w.floor(p.device)
        floor_median = medians.get((floor, p.device))
        records.append({
            "workload": w.name, "variant": case.variant, "size": case.size, "shape": w.shape(case.size),
            "dtype": case.dtype, "impl": p.impl.name, "device": p.device, "threads": threads,
            "status": p.status, "reason": p.reason,
            "median_s": t and t.median_s, "min_s": t and t.min_s, "max_s": t and t.max_s,
            "repeats": len(t.samples) if t else 0, "inner_loops": t and t.inner_loops,
            "floor": floor, "ratio_to_floor": _ratio(t and t.median_s, floor_median),
            "speedup_vs_numpy": _ratio(numpy_median, t and t.median_s),
            "targets": [{"goal": g.goal(), "met": g.met(t.median_s, medians)}
                        for g in w.targets if t and g.applies(p.impl.name, p.device, case.size)],
            "blas_threads": observed_blas,
            "torch_threads": torch_threads if p.runtime is not None and p.runtime.name == TORCH else None,
            "foreign_cpu": foreign if t else None,
            **{f"{k}_per_step": p.per_step.get(k) for k in ("launches", "syncs", "uploads", "peak_bytes")},
        })
    return records


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def default_threads() -> tuple[int, ...]:
    """1 thread, and every CPU this process may use (when that is more)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return (1, cpus) if cpus > 1 else (1,)


def make_timer(quick: bool, repeats: int | None = None, min_sample_s: float | None = None) -> Timer:
    """The default timer: 15 samples of >= 20 ms each, or 5 of >= 5 ms with `quick`."""
    return Timer(min_sample_s=min_sample_s if min_sample_s is not None else (5e-3 if quick else 20e-3),
                 repeats=repeats if repeats is not None else (5 if quick else 15))


def run(workloads: Iterable[str | Workload] | None = None, sizes: Sequence[int] | None = None,
        devices: Sequence[str] = DEVICES, threads: Sequence[int] | None = None, repeats: int | None = None,
        quick: bool = False, progress: bool = False, dtypes: Sequence[str] | None = None,
        min_sample_s: float | None = None, timer: Timer | None = None,
        on_records: Callable[[list[dict[str, Any]]], Any] | None = None) -> list[dict[str, Any]]:
    """Cross-check and time workloads; returns tidy records (one per implementation, device and
    thread count of each case). `on_records` gets each group of records as soon as it is measured.
    Raises CrossCheckError when implementations disagree, ValueError for unknown names."""
    cases = plan(resolve_workloads(workloads), sizes, dtypes, quick)
    threads = tuple(threads or default_threads())
    timer = timer or make_timer(quick, repeats, min_sample_s)
    bar = None
    if progress:
        with contextlib.suppress(ImportError):
            from tqdm.auto import tqdm

            bar = tqdm(total=len(cases) * len(threads), unit="case", desc="bench", leave=False)
    records: list[dict[str, Any]] = []
    try:
        for case in cases:
            if bar is not None:
                bar.set_description(case.describe())
            prepared = prepare(case, devices)
            for n in threads:
                group = time_case(case, prepared, n, timer)
                records += group
                if on_records is not None:
                    on_records(group)
                if bar is not None:
                    bar.update()
            del prepared  # free the case's arrays before the next one is made
            gc.collect()
    finally:
        if bar is not None:
            bar.close()
    return records
