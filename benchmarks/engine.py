#!/usr/bin/env python3
"""Engine benchmark: what tinygrad_lab's autograd costs, beside explicit NumPy and PyTorch (CPU).

Usage::

    python benchmarks/engine.py [--quick] [--threads 1,2] [--repeats N] [--json out.json]

What is measured, and why:

1. Least-squares gradient, loss = ||y - A x||^2 with A of shape (10d, d), float32 and float64,
   at each BLAS thread count. Explicit NumPy ``-2 * (A.T @ (y - A @ x))`` against a forward +
   backward through tinygrad_lab and through PyTorch (A and y wrapped once with the zero-copy
   ``from_numpy``; x is a leaf whose ``.grad`` is read and reset to None every iteration).
   For d in {1024, 2048} the work is two BLAS matrix-vector products, so the engine should add
   next to nothing (target <= 1.05x NumPy). d = 64 is overhead-bound: it shows what the
   Python graph machinery costs (target <= 40 us per gradient).
2. Forward dispatch of single ops on shape-(4,) float32 tensors: the fixed cost of one op
   (target <= 2 us/op), with the raw NumPy call on the same arrays as the floor.
3. ``z = (a*b + c).relu().sum(); z.backward()`` on shape (4,): the fixed cost of the backward
   engine (target <= 20 us/iteration); NumPy does the hand-derived gradient.
4. ``from_numpy(arr)`` and ``t.numpy()`` on a 1000x1000 float32 array: these must be views,
   not copies (checked with ``np.shares_memory``; target <= 1 us/call).
5. The one instrumentation point (events published from ``Function.apply``): the rows of
   item 2 (and item 3) with no subscriber against one no-op subscriber.
6. Training steps through ``nn``/``optim`` (batch 64, SGD with momentum, cross-entropy), the same
   code on both libraries from the same weights: an MLP 64-128-10 (target <= 0.20 ms) and a small
   CNN on 8x8 inputs, two 3x3 convolutions + pooling + linear (target <= 1.5x PyTorch CPU).

How the numbers are kept honest: every case is warmed up, then each implementation gets its own
inner loop count, calibrated so that one sample lasts at least 20 ms (5 ms with --quick). The
samples of all implementations of a row are taken interleaved (round-robin, with the starting
implementation rotated every round) so that machine noise hits them alike. We report the median
per-iteration time and the minimum. ``gc.collect()`` runs before each case and gc stays enabled,
as in real use. Every implementation's result is cross-checked against the baseline once before
timing, so a fast wrong answer cannot pass. Thread counts are pinned with threadpoolctl (NumPy
and tinygrad_lab's BLAS) and ``torch.set_num_threads`` (PyTorch); both are recorded. (Caveat at
2 threads: OpenBLAS's idle workers spin for up to ~0.1 s after a call, so a PyTorch sample that
follows a NumPy one may share its cores with them; NumPy vs tinygrad_lab share one pool and are
unaffected.) Finally, each row records the share of the CPUs that other processes used while it
was timed, and rows above 5% are flagged as noisy: on 2 cores one busy neighbour skews a row.

The exit status is 1 if a correctness check (result cross-check, zero-copy) failed; missed
performance targets are reported but do not change it.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import itertools
import json
import math
import operator
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, ContextManager, Iterable, Iterator

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if (REPO_ROOT / "tinygrad_lab").is_dir() and str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # benchmark the checkout this script lives in

Step = Callable[[], Any]
NUMPY, TINYGRAD, TORCH = "numpy", "tinygrad_lab", "torch"


# --------------------------------------------------------------------------- data model


@dataclass(frozen=True)
class Impl:
    """One implementation of a row: a zero-argument step, and a context entered around every sample."""

    name: str
    step: Step
    around: Callable[[], ContextManager[Any]] = contextlib.nullcontext


@dataclass(frozen=True)
class Target:
    """A performance target for one implementation: absolute seconds or a ratio to the baseline."""

    impl: str
    max_s: float | None = None
    max_ratio: float | None = None

    def describe(self, baseline: str | None) -> str:
        if self.max_ratio is not None:
            return f"<= {self.max_ratio:g}x {baseline}"
        return f"<= {fmt_time(self.max_s or 0.0)}"

    def met(self, median_s: float, ratio: float | None) -> bool | None:
        if self.max_ratio is not None:
            return None if ratio is None else ratio <= self.max_ratio
        return median_s <= (self.max_s or 0.0)


@dataclass(frozen=True)
class Check:
    """A correctness check attached to a case (result cross-check, zero-copy)."""

    label: str
    ok: bool


@dataclass
class Case:
    """One measured case (a group of table rows): implementations timed interleaved, and what to compare."""

    section: str
    workload: str
    impls: list[Impl]
    size: str = ""
    dtype: str = ""
    threads: int | None = None
    baseline: str | None = NUMPY
    target: Target | None = None
    rtol: float | None = None  # cross-check every impl's result against the baseline's
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    report_delta: bool = False  # add a note with each impl's extra time over the baseline
    events_per_iter: int | None = None  # to express that extra time per published event


@dataclass(frozen=True)
class Timing:
    median_s: float
    min_s: float
    n_samples: int
    inner_loops: int


@dataclass
class Record:
    """One tidy output record (one implementation of one row)."""

    section: str
    workload: str
    impl: str
    size: str
    dtype: str
    threads: int | None
    median_s: float
    min_s: float
    n_samples: int
    inner_loops: int
    baseline: str | None
    ratio: float | None
    target: str | None
    target_met: bool | None
    blas_threads: int | None
    torch_threads: int | None
    foreign_cpu: float | None  # share of all CPUs used by other processes while the row was timed


@dataclass(frozen=True)
class Settings:
    quick: bool
    threads: tuple[int, ...]
    repeats: int
    min_sample_s: float
    json_path: str | None


@dataclass
class Libs:
    """The libraries under test; a missing one is None and its columns are skipped with a note."""

    torch: ModuleType | None
    tl: ModuleType | None
    subscribe: Callable[[Callable[..., Any]], Any] | None
    notes: list[str]

    def tensor_libs(self) -> list[tuple[str, ModuleType]]:
        return [(name, lib) for name, lib in ((TINYGRAD, self.tl), (TORCH, self.torch)) if lib is not None]


# --------------------------------------------------------------------------- timing (used by every row)


def run_sample(impl: Impl, loops: int) -> float:
    """Seconds for `loops` calls of the step, inside the impl's context."""
    step = impl.step
    with impl.around():
        t0 = time.perf_counter()
        for _ in itertools.repeat(None, loops):
            step()
        return time.perf_counter() - t0


def calibrate(impl: Impl, min_sample_s: float) -> int:
    """Smallest-ish inner loop count for which one sample lasts at least `min_sample_s`."""
    loops = 1
    while True:
        elapsed = run_sample(impl, loops)
        if elapsed >= min_sample_s:
            return loops
        wanted = math.ceil(loops * 1.2 * min_sample_s / max(elapsed, 1e-9))
        loops = max(loops * 2, min(wanted, loops * 100))


def measure(impls: list[Impl], settings: Settings) -> tuple[dict[str, Timing], dict[str, str]]:
    """Warm up and calibrate each impl, then take interleaved samples; returns timings and errors."""
    loops: dict[str, int] = {}
    errors: dict[str, str] = {}
    for impl in impls:
        try:
            run_sample(impl, 2)  # warm-up (caches, lazy imports, allocator)
            loops[impl.name] = calibrate(impl, settings.min_sample_s)
        except Exception as exc:  # an engine op that is missing or broken: skip it, say why
            errors[impl.name] = describe_error(exc)
    live = [impl for impl in impls if impl.name in loops]
    per_iter: dict[str, list[float]] = {impl.name: [] for impl in live}
    for round_no in range(settings.repeats):
        k = round_no % max(len(live), 1)
        for impl in live[k:] + live[:k]:  # rotate who goes first so order effects even out
            n = loops[impl.name]
            per_iter[impl.name].append(run_sample(impl, n) / n)
    timings = {
        name: Timing(statistics.median(v), min(v), len(v), loops[name]) for name, v in per_iter.items()
    }
    return timings, errors


def describe_error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()


class ForeignLoad:
    """Share of all CPUs that *other* processes used over an interval (from /proc/stat).

    On a 2-core machine one busy neighbour process is enough to skew a row, so every row says
    how quiet the machine was while it was timed; None where /proc/stat is unavailable.
    """

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
        end = self._snapshot()
        if self.start is None or end is None:
            return None
        busy, own, wall = (e - s for e, s in zip(end, self.start))
        return max(0.0, busy - own) / max(wall * (os.cpu_count() or 1), 1e-9)


# --------------------------------------------------------------------------- result cross-check


def to_numpy(result: Any) -> np.ndarray:
    """A result of any library as a flat NumPy array (tuples are concatenated)."""
    if isinstance(result, (tuple, list)):
        return np.concatenate([to_numpy(r) for r in result])
    if result is None:
        raise ValueError("result is None (no gradient was produced)")
    if hasattr(result, "detach"):
        result = result.detach()
    if hasattr(result, "numpy"):
        result = result.numpy()
    return np.asarray(result).reshape(-1)


def cross_check(case: Case) -> dict[str, str]:
    """Run each impl once, compare with the baseline; adds checks to the case, returns impl errors."""
    errors: dict[str, str] = {}
    outputs: dict[str, np.ndarray] = {}
    for impl in case.impls:
        try:
            with impl.around():
                outputs[impl.name] = to_numpy(impl.step())
        except Exception as exc:
            errors[impl.name] = describe_error(exc)
    ref = outputs.get(case.baseline or "")
    if case.rtol is None or ref is None:
        return errors
    for name, out in outputs.items():
        if name != case.baseline:
            case.checks.append(compare(name, out, ref, case.rtol, case.baseline or ""))
    return errors


def compare(name: str, out: np.ndarray, ref: np.ndarray, rtol: float, baseline: str) -> Check:
    if out.shape != ref.shape:
        return Check(f"{name} result shape {out.shape} != {baseline} {ref.shape}", False)
    err = float(np.linalg.norm(out.astype(np.float64) - ref) / max(np.linalg.norm(ref.astype(np.float64)), 1e-300))
    same_dtype = out.dtype == ref.dtype
    label = f"{name} result vs {baseline}: rel. error {err:.1e} (tol {rtol:.0e})"
    if not same_dtype:
        label += f", dtype {out.dtype} != {ref.dtype}"
    return Check(label, err <= rtol and same_dtype)


# --------------------------------------------------------------------------- threads


def threadpoolctl() -> ModuleType:
    """threadpoolctl, imported lazily; without it the thread counts could not be pinned honestly."""
    try:
        return importlib.import_module("threadpoolctl")
    except ImportError:
        sys.exit(
            "benchmarks/engine.py: threadpoolctl is required to pin the BLAS thread count "
            "(pip install threadpoolctl)"
        )


@contextlib.contextmanager
def pinned_threads(n: int | None, torch: ModuleType | None) -> Iterator[None]:
    """Pin BLAS/OpenMP pools (threadpoolctl) and PyTorch's intra-op threads to n; None = leave as is."""
    if n is None:
        yield
        return
    with threadpoolctl().threadpool_limits(limits=n):
        old = torch.get_num_threads() if torch is not None else None
        if torch is not None:
            torch.set_num_threads(n)
        try:
            yield
        finally:
            if torch is not None:
                torch.set_num_threads(old)


def numpy_blas_info() -> list[dict[str, Any]]:
    """threadpoolctl's records of the BLAS that NumPy loaded (falls back to every BLAS loaded)."""
    blas = [i for i in threadpoolctl().threadpool_info() if i.get("user_api") == "blas"]
    return [i for i in blas if "numpy" in i.get("filepath", "")] or blas


def observed_threads(torch: ModuleType | None) -> tuple[int | None, int | None]:
    """The thread counts actually in force: NumPy's BLAS, and PyTorch's intra-op pool."""
    blas = [i["num_threads"] for i in numpy_blas_info()]
    return (max(blas) if blas else None), (torch.get_num_threads() if torch is not None else None)


# --------------------------------------------------------------------------- workloads


def lstsq_data(d: int, dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(d)
    A = (rng.standard_normal((10 * d, d)) / math.sqrt(d)).astype(dtype, copy=False)
    y = rng.standard_normal(10 * d).astype(dtype)
    x0 = rng.standard_normal(d).astype(dtype)
    return A, y, x0


def numpy_lstsq_step(A: np.ndarray, y: np.ndarray, x: np.ndarray) -> Step:
    """Explicit gradient (parenthesised so that -2 scales the vector, not the matrix)."""
    return lambda: -2.0 * (A.T @ (y - A @ x))


def autograd_lstsq_step(lib: ModuleType, A: np.ndarray, y: np.ndarray, x0: np.ndarray) -> Step:
    """Forward + backward through `lib` (tinygrad_lab or torch: the same PyTorch-shaped code)."""
    A_t, y_t = lib.from_numpy(A), lib.from_numpy(y)
    x = lib.from_numpy(x0.copy()).requires_grad_()

    def step() -> Any:
        loss = ((y_t - A_t @ x) ** 2).sum()
        loss.backward()
        g = x.grad
        x.grad = None
        return g

    return step


def try_impl(name: str, make: Callable[[], Step], notes: list[str]) -> list[Impl]:
    """Build an impl, or skip it with a note when even its setup fails (e.g. a missing API)."""
    try:
        return [Impl(name, make())]
    except Exception as exc:
        notes.append(f"{name} skipped at setup: {describe_error(exc)}")
        return []


def lstsq_cases(settings: Settings, libs: Libs) -> Iterator[Case]:
    dims = (64, 1024) if settings.quick else (64, 1024, 2048)
    for d in dims:
        for dtype in (np.float32, np.float64):
            A, y, x0 = lstsq_data(d, dtype)
            notes: list[str] = []
            impls = [Impl(NUMPY, numpy_lstsq_step(A, y, x0))]
            for name, lib in libs.tensor_libs():
                impls += try_impl(name, partial(autograd_lstsq_step, lib, A, y, x0), notes)
            target = Target(TINYGRAD, max_s=40e-6) if d <= 64 else Target(TINYGRAD, max_ratio=1.05)
            for n in settings.threads:
                yield Case(
                    section="1. least-squares gradient  loss = ||y - A x||^2  (per gradient)",
                    workload=f"lstsq grad d={d}",
                    impls=impls,
                    size=f"{10 * d}x{d}",
                    dtype=np.dtype(dtype).name,
                    threads=n,
                    target=target,
                    rtol=1e-4 if dtype == np.float32 else 1e-10,
                    notes=list(notes),
                )
            del A, y, x0, impls  # free the big matrices before the next size


@dataclass(frozen=True)
class Op:
    """One dispatch op: how to make its step from two tensors, and from two NumPy arrays."""

    name: str
    tensor: Callable[[Any, Any], Step]
    numpy: Callable[[np.ndarray, np.ndarray], Step] | None = None  # None: same as `tensor`

    def numpy_step(self, a: np.ndarray, b: np.ndarray) -> Step:
        return (self.numpy or self.tensor)(a, b)


# Steps are C-level callables (functools.partial / bound methods) so the harness adds the same
# tiny call cost to every library.
DISPATCH_OPS: tuple[Op, ...] = (
    Op("a + b", lambda a, b: partial(operator.add, a, b)),
    Op("a * b", lambda a, b: partial(operator.mul, a, b)),
    Op("a.exp()", lambda a, b: a.exp, lambda a, b: partial(np.exp, a)),
    Op("a.relu()", lambda a, b: a.relu, lambda a, b: partial(np.maximum, a, 0)),
    Op("a.sum()", lambda a, b: a.sum),
    Op("a @ a", lambda a, b: partial(operator.matmul, a, a)),
)


def small_arrays(k: int, shape: tuple[int, ...] = (4,)) -> list[np.ndarray]:
    rng = np.random.default_rng(4)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(k)]


def dispatch_cases(settings: Settings, libs: Libs) -> Iterator[Case]:
    a, b = small_arrays(2)
    tensors = {name: (lib.from_numpy(a.copy()), lib.from_numpy(b.copy())) for name, lib in libs.tensor_libs()}
    for op in DISPATCH_OPS:
        notes: list[str] = []
        impls = [Impl(NUMPY, op.numpy_step(a, b))]
        for name, (ta, tb) in tensors.items():
            impls += try_impl(name, partial(op.tensor, ta, tb), notes)
        yield Case(
            section="2. forward dispatch, shape (4,) float32, no grad  (per op)",
            workload=f"dispatch {op.name}",
            impls=impls,
            size="4",
            dtype="float32",
            target=Target(TINYGRAD, max_s=2e-6),
            rtol=1e-5,
            notes=notes,
        )


def tiny_graph_numpy_step(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> Step:
    """Forward and the hand-derived gradient of z = relu(a*b + c).sum()."""

    def step() -> tuple[np.ndarray, ...]:
        h = a * b + c
        np.maximum(h, 0).sum()
        mask = (h > 0).astype(a.dtype)
        return mask * b, mask * a, mask

    return step


def tiny_graph_autograd_step(lib: ModuleType, arrays: list[np.ndarray]) -> Step:
    a, b, c = (lib.from_numpy(arr.copy()).requires_grad_() for arr in arrays)

    def step() -> tuple[Any, ...]:
        z = (a * b + c).relu().sum()
        z.backward()
        grads = (a.grad, b.grad, c.grad)
        a.grad = b.grad = c.grad = None
        return grads

    return step


TINY_GRAPH = "(a*b+c).relu().sum().backward()"


def tiny_graph_impls(libs: Libs, notes: list[str]) -> list[Impl]:
    arrays = small_arrays(3)
    impls = [Impl(NUMPY, tiny_graph_numpy_step(*arrays))]
    for name, lib in libs.tensor_libs():
        impls += try_impl(name, partial(tiny_graph_autograd_step, lib, arrays), notes)
    return impls


def backward_cases(settings: Settings, libs: Libs) -> Iterator[Case]:
    notes: list[str] = []
    yield Case(
        section="3. tiny graph forward + backward, shape (4,) float32  (per iteration)",
        workload="fwd+bwd " + TINY_GRAPH,
        impls=tiny_graph_impls(libs, notes),
        size="4",
        dtype="float32",
        target=Target(TINYGRAD, max_s=20e-6),
        rtol=1e-5,
        notes=notes + ["numpy row: forward + hand-derived gradient"],
    )


def zero_copy_checks(name: str, lib: ModuleType, arr: np.ndarray) -> list[Check]:
    try:
        t = lib.from_numpy(arr)
        return [
            Check(f"{name}: from_numpy(arr).numpy() shares memory with arr", np.shares_memory(t.numpy(), arr)),
            Check(f"{name}: t.numpy() twice shares memory (no copy per call)", np.shares_memory(t.numpy(), t.numpy())),
        ]
    except Exception as exc:
        return [Check(f"{name}: zero-copy check raised {describe_error(exc)}", False)]


def interop_cases(settings: Settings, libs: Libs) -> Iterator[Case]:
    arr = np.random.default_rng(1).standard_normal((1000, 1000), dtype=np.float32)
    common = dict(size="1000x1000", dtype="float32", target=Target(TINYGRAD, max_s=1e-6))
    section = "4. NumPy interop, zero-copy  (per call)"
    floor = "numpy row: np.asarray(arr), the no-op floor"
    notes: list[str] = []
    from_impls = [Impl(NUMPY, partial(np.asarray, arr))]
    to_impls = [Impl(NUMPY, partial(np.asarray, arr))]
    checks: list[Check] = []
    for name, lib in libs.tensor_libs():
        from_impls += try_impl(name, lambda lib=lib: partial(lib.from_numpy, arr), notes)
        to_impls += try_impl(name, lambda lib=lib: lib.from_numpy(arr).numpy, notes)
        checks += zero_copy_checks(name, lib, arr)
    yield Case(section, "from_numpy(arr)", from_impls, checks=checks, notes=notes + [floor], **common)
    yield Case(section, "t.numpy()", to_impls, notes=[floor], **common)


def _noop_subscriber(*args: Any, **kwargs: Any) -> None:
    """The subscriber of item 5: does nothing, so what we time is the publishing itself."""


@contextlib.contextmanager
def subscribed(subscribe: Callable[[Callable[..., Any]], Any], callback: Callable[..., Any]) -> Iterator[None]:
    handle = subscribe(callback)
    try:
        yield
    finally:
        handle.remove()


def count_events(subscribe: Callable[[Callable[..., Any]], Any], step: Step) -> int:
    """How many events one call of `step` publishes (so the subscriber row is known to do work)."""
    count = 0

    def counter(*args: Any, **kwargs: Any) -> None:
        nonlocal count
        count += 1

    with subscribed(subscribe, counter):
        step()
    return count


def events_cases(settings: Settings, libs: Libs) -> Iterator[Case]:
    section = "5. instrumentation point: no subscriber vs one no-op subscriber"
    if libs.tl is None or libs.subscribe is None:
        return
    bare, with_sub = f"{TINYGRAD} (no subscriber)", f"{TINYGRAD} (+1 no-op subscriber)"
    a, b = (libs.tl.from_numpy(arr) for arr in small_arrays(2))
    steps: list[tuple[str, Callable[[], Step]]] = [(f"dispatch {op.name}", partial(op.tensor, a, b)) for op in DISPATCH_OPS]
    steps.append(("fwd+bwd " + TINY_GRAPH, partial(tiny_graph_autograd_step, libs.tl, small_arrays(3))))
    for workload, make in steps:
        notes: list[str] = []
        impls = try_impl(bare, make, notes)
        events = None
        if impls:
            step = impls[0].step
            impls.append(Impl(with_sub, step, partial(subscribed, libs.subscribe, _noop_subscriber)))
            with contextlib.suppress(Exception):  # a broken op is reported by the timing itself
                events = count_events(libs.subscribe, step)
        yield Case(section, workload, impls, size="4", dtype="float32", baseline=bare, notes=notes,
                   report_delta=True, events_per_iter=events)


def _mlp(nn: ModuleType) -> Any:
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def _cnn(nn: ModuleType) -> Any:
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 2 * 2, 10))


def training_step(lib: ModuleType, build: Callable[[ModuleType], Any], weights: dict, x: np.ndarray,
                  y: np.ndarray) -> Step:
    """One SGD step (momentum 0.9) with cross-entropy, the same code for both libraries."""
    model = build(lib.nn)
    model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xt, yt = lib.tensor(x), lib.tensor(y)

    def step() -> Any:
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def training_cases(settings: Settings, libs: Libs) -> Iterator[Case]:
    rng = np.random.default_rng(0)
    for name, build, shape, target in [
            ("MLP 64-128-10 SGD step", _mlp, (64, 64), Target(TINYGRAD, max_s=0.20e-3)),
            ("CNN 2x conv3x3+pool+linear SGD step", _cnn, (64, 1, 8, 8), Target(TINYGRAD, max_ratio=1.5))]:
        notes: list[str] = []
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.integers(0, 10, size=shape[0])
        impls = []
        try:
            import tinygrad_lab
            weights = {k: v.detach().numpy().copy() for k, v in build(tinygrad_lab.nn).state_dict().items()}
        except Exception as exc:  # the nn layer is missing: nothing to compare
            notes.append(f"skipped: {describe_error(exc)}")
            weights = None
        if weights is not None:
            for lib_name, lib in libs.tensor_libs():
                impls += try_impl(lib_name, partial(training_step, lib, build, weights, x, y), notes)
        yield Case(section="6. training steps, batch 64, float32 (per step; baseline: PyTorch CPU)",
                   workload=name, impls=impls, size="x".join(map(str, shape)), dtype="float32",
                   baseline=TORCH, target=target, rtol=1e-4, notes=notes)


WORKLOADS: tuple[Callable[[Settings, Libs], Iterable[Case]], ...] = (
    lstsq_cases,
    dispatch_cases,
    backward_cases,
    interop_cases,
    events_cases,
    training_cases,
)


# --------------------------------------------------------------------------- running a case


BUSY_WARNING = 0.05  # above this share of foreign CPU use a row is flagged as noisy


def run_case(case: Case, settings: Settings, libs: Libs) -> list[Record]:
    """Cross-check, then time one row with its thread count pinned; returns its records."""
    with pinned_threads(case.threads, libs.torch):
        blas_threads, torch_threads = observed_threads(libs.torch)
        gc.collect()
        errors = cross_check(case)
        load = ForeignLoad()
        timings, timing_errors = measure([i for i in case.impls if i.name not in errors], settings)
        foreign_cpu = load.share()
    if foreign_cpu is not None and foreign_cpu > BUSY_WARNING:
        case.notes.append(f"other processes used {foreign_cpu:.0%} of the CPUs while this row was timed: noisy")
    errors.update(timing_errors)
    case.notes += [f"{name} skipped: {msg}" for name, msg in errors.items()]
    base = timings.get(case.baseline or "")
    if case.report_delta and base is not None:
        case.notes += delta_notes(case, timings, base)
    records = []
    for impl in case.impls:
        timing = timings.get(impl.name)
        if timing is None:
            continue
        ratio = timing.median_s / base.median_s if base is not None else None
        target = case.target if case.target is not None and case.target.impl == impl.name else None
        records.append(
            Record(
                section=case.section,
                workload=case.workload,
                impl=impl.name,
                size=case.size,
                dtype=case.dtype,
                threads=case.threads,
                median_s=timing.median_s,
                min_s=timing.min_s,
                n_samples=timing.n_samples,
                inner_loops=timing.inner_loops,
                baseline=case.baseline if base is not None else None,
                ratio=ratio,
                target=target.describe(case.baseline) if target else None,
                target_met=target.met(timing.median_s, ratio) if target else None,
                blas_threads=blas_threads,
                torch_threads=torch_threads if impl.name.startswith(TORCH) else None,
                foreign_cpu=foreign_cpu,
            )
        )
    return records


def delta_notes(case: Case, timings: dict[str, Timing], base: Timing) -> list[str]:
    """Each impl's extra median time over the baseline, per iteration and per published event."""
    notes = []
    for name, timing in timings.items():
        if name == case.baseline:
            continue
        delta = timing.median_s - base.median_s
        note = f"{name}: {'+' if delta >= 0 else '-'}{fmt_time(abs(delta))} per iteration"
        if case.events_per_iter:
            note += f", {case.events_per_iter} events/iteration = {fmt_time(abs(delta) / case.events_per_iter)} per event"
        elif case.events_per_iter == 0:
            note += " (no events were published: the subscriber was never called)"
        notes.append(note)
    return notes


# --------------------------------------------------------------------------- output


def fmt_time(seconds: float) -> str:
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


COLUMNS = (("workload", 40), ("size", 11), ("dtype", 7), ("thr", 3), ("impl", 34), ("median", 10),
           ("min", 10), ("ratio", 7), ("target", 15), ("met", 4))


def table_line(values: Iterable[str]) -> str:
    return " | ".join(f"{v:<{w}}" if i < 5 else f"{v:>{w}}" for i, (v, (_, w)) in enumerate(zip(values, COLUMNS)))


def print_header_row() -> None:
    line = table_line(name for name, _ in COLUMNS)
    print(line)
    print("-" * len(line))


def print_case(case: Case, records: list[Record]) -> None:
    for r in records:
        met = "" if r.target_met is None else ("yes" if r.target_met else "NO")
        print(table_line((
            r.workload, r.size, r.dtype, "" if r.threads is None else str(r.threads), r.impl,
            fmt_time(r.median_s), fmt_time(r.min_s), "" if r.ratio is None else f"{r.ratio:.2f}x",
            r.target or "", met,
        )))
    for check in case.checks:
        print(f"    [{'ok' if check.ok else 'FAIL'}] {check.label}")
    for note in case.notes:
        print(f"    note: {note}")
    sys.stdout.flush()


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def torch_blas(torch: ModuleType) -> str:
    for token in torch.__config__.show().replace(",", " ").split():
        if token.startswith("BLAS_INFO="):
            return token.split("=", 1)[1]
    return "unknown"


def version_of(module: ModuleType, dist: str) -> str:
    version = getattr(module, "__version__", None)
    if version:
        return str(version)
    try:
        from importlib.metadata import version as dist_version

        return dist_version(dist)
    except Exception:
        return "unknown"


def harness_floor(settings: Settings) -> float:
    """Per-iteration cost of the timing loop calling an empty Python function (included in every row)."""
    timings, _ = measure([Impl("empty", lambda: None)], settings)
    return timings["empty"].median_s


def environment(libs: Libs, settings: Settings) -> list[str]:
    blas = ", ".join(
        f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture')}, {i.get('threading_layer')},"
        f" {i.get('num_threads')} threads by default)"
        for i in numpy_blas_info()
    )
    lines = [
        f"CPU:          {cpu_model()}  ({_cpu_count()} logical CPUs)",
        f"python:       {platform.python_version()} ({platform.python_implementation()}) on {platform.platform()}",
        f"numpy:        {np.__version__}  BLAS: {blas or 'not detected by threadpoolctl'}",
    ]
    if libs.torch is not None:
        t = libs.torch
        lines.append(f"torch:        {t.__version__}  BLAS: {torch_blas(t)}, {t.get_num_threads()} intra-op threads by default")
    if libs.tl is not None:
        lines.append(f"tinygrad_lab: {version_of(libs.tl, 'tinygrad_lab')}  ({Path(libs.tl.__file__ or next(iter(libs.tl.__path__))).parent})")
    lines.append(
        f"method:       {settings.repeats} interleaved samples of >= {fmt_time(settings.min_sample_s)} each, "
        f"median and min per iteration; threads {','.join(map(str, settings.threads))} for item 1"
    )
    lines.append(f"harness:      {fmt_time(harness_floor(settings))} per iteration for an empty Python step (included in every row)")
    return lines + [f"note:         {n}" for n in libs.notes]


def _cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 0)


# --------------------------------------------------------------------------- entry point


def load_libs() -> Libs:
    notes: list[str] = []
    torch = tl = subscribe = None
    try:
        import torch  # type: ignore[no-redef]
    except Exception as exc:
        notes.append(f"PyTorch columns skipped: import torch failed ({describe_error(exc)})")
    try:
        import tinygrad_lab as tl  # type: ignore[no-redef]
    except Exception as exc:
        notes.append(f"tinygrad_lab columns skipped: import tinygrad_lab failed ({describe_error(exc)})")
    if tl is not None and not hasattr(tl, "from_numpy"):
        notes.append(f"tinygrad_lab columns skipped: {tl.__name__} has no from_numpy (package incomplete?)")
        tl = None
    if tl is not None:
        try:
            from tinygrad_lab.autograd.events import subscribe  # type: ignore[no-redef]
        except Exception as exc:
            notes.append(f"item 5 skipped: tinygrad_lab.autograd.events.subscribe unavailable ({describe_error(exc)})")
    return Libs(torch=torch, tl=tl, subscribe=subscribe, notes=notes)


def parse_args(argv: list[str] | None = None) -> Settings:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="d=1024 only, 5 samples of >= 5 ms")
    parser.add_argument("--threads", default="1,2", help="BLAS/torch thread counts for item 1 (default 1,2)")
    parser.add_argument("--repeats", type=int, default=None, help="samples per implementation (default 15, --quick 5)")
    parser.add_argument("--json", dest="json_path", default=None, help="write the tidy records to this file")
    args = parser.parse_args(argv)
    try:
        threads = tuple(int(t) for t in args.threads.split(",") if t.strip())
    except ValueError:
        parser.error(f"--threads must be comma-separated integers, got {args.threads!r}")
    if not threads or min(threads) < 1:
        parser.error("--threads needs at least one positive integer")
    repeats = args.repeats if args.repeats is not None else (5 if args.quick else 15)
    if repeats < 1:
        parser.error("--repeats must be >= 1")
    return Settings(
        quick=args.quick,
        threads=threads,
        repeats=repeats,
        min_sample_s=5e-3 if args.quick else 20e-3,
        json_path=args.json_path,
    )


def main(argv: list[str] | None = None) -> int:
    settings = parse_args(argv)
    threadpoolctl()  # fail early and clearly if it is missing
    started = time.perf_counter()
    load = ForeignLoad()
    libs = load_libs()
    print("tinygrad_lab engine benchmark" + (" (--quick)" if settings.quick else ""))
    print("\n".join(environment(libs, settings)))
    print("ratio = median / median of the row's baseline (numpy unless the row says otherwise)\n")
    print_header_row()
    records: list[Record] = []
    failed_checks: list[str] = []
    section = None
    for workload in WORKLOADS:
        for case in workload(settings, libs):
            if case.section != section:
                section = case.section
                print(f"\n== {section}")
            case_records = run_case(case, settings, libs)
            print_case(case, case_records)
            records += case_records
            failed_checks += [c.label for c in case.checks if not c.ok]
    if libs.subscribe is None:
        print("\n== 5. instrumentation point: skipped (see notes above)")
    summarize(records, failed_checks, time.perf_counter() - started, load.share())
    if settings.json_path:
        Path(settings.json_path).write_text(json.dumps([asdict(r) for r in records], indent=1) + "\n")
        print(f"wrote {len(records)} records to {settings.json_path}")
    return 1 if failed_checks else 0


def summarize(records: list[Record], failed_checks: list[str], elapsed_s: float, foreign_cpu: float | None) -> None:
    judged = [r for r in records if r.target_met is not None]
    missed = [r for r in judged if not r.target_met]
    print(f"\ntargets: {len(judged) - len(missed)}/{len(judged)} met")
    for r in missed:
        threads = f", {r.threads} thr" if r.threads is not None else ""
        ratio = f" = {r.ratio:.2f}x" if r.ratio is not None else ""
        print(f"  missed: {r.workload} [{r.size} {r.dtype}{threads}] {r.impl} {fmt_time(r.median_s)}{ratio}, target {r.target}")
    print(f"correctness checks failed: {len(failed_checks)}")
    for label in failed_checks:
        print(f"  FAIL: {label}")
    if foreign_cpu is not None:
        noisy = sum(1 for r in records if r.foreign_cpu is not None and r.foreign_cpu > BUSY_WARNING)
        print(f"other processes used {foreign_cpu:.0%} of the CPUs during the run; {noisy} records flagged noisy")
    print(f"total time: {elapsed_s:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
