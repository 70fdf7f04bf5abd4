"""Where the time goes, with torch.profiler's API, built on the engine's one instrumentation point
(`autograd.events`):

    with profile(record_shapes=True) as prof:
        with record_function("model_inference"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")     # open in chrome://tracing or ui.perfetto.dev

Inside the block every op `Function.apply` runs is an event timed by its device's stopwatch (on a GPU,
the kernel's time), every node the backward pass runs is one too (`MulBackward`: its backward, ops
included), and `record_function` adds a named region: its total is the wall time inside it, its self
time what no op or inner region accounts for (Python between the ops). An op's self time is its total.
"""
from __future__ import annotations

import enum
import json
import threading
from dataclasses import dataclass
from time import perf_counter

from ._fileio import write_atomic
from .autograd import events
from .autograd.engine import BackwardStep
from .autograd.tensor_base import TensorBase

__all__ = ["ProfilerActivity", "profile", "record_function"]


class ProfilerActivity(enum.Enum):
    """What to profile: accepted for PyTorch's sake; every op is timed on its own device's stopwatch."""

    CPU = "cpu"
    CUDA = "cuda"


@dataclass
class FunctionEvent:
    """One timed op, backward node or region: name, start and duration (seconds), its own part of that
    duration, and its inputs' shapes (with record_shapes)."""

    name: str
    start: float
    seconds: float
    self_seconds: float
    input_shapes: tuple = ()


@dataclass
class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them) added up."""

    key: str
    count: int = 0
    cpu_time_total: float = 0.0       # microseconds, as PyTorch reports them
    self_cpu_time_total: float = 0.0
    input_shapes: tuple = ()

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    cuda_time_total = property(lambda self: self.cpu_time_total)  # the same stopwatch (see ProfilerActivity)
    self_cuda_time_total = property(lambda self: self.self_cpu_time_total)


class EventList(list):
    """A list of events (or of their averages) that prints as PyTorch's profiler table."""

    def table(self, sort_by: str | None = None, row_limit: int = 100, **_) -> str:
        rows = sorted(self, key=lambda e: -getattr(e, sort_by)) if sort_by else list(self)
        rows = rows[:row_limit] if row_limit and row_limit > 0 else rows
        total = sum(e.self_cpu_time_total for e in self) or 1.0
        shapes = any(e.input_shapes for e in rows)
        width = max([len("Name")] + [len(e.key) for e in rows])
        heads = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        line = "-" * width + "  " + "  ".join("-" * 12 for _ in heads) + ("  " + "-" * 30 if shapes else "")
        out = [line, "Name".rjust(width) + "  " + "  ".join(h.rjust(12) for h in heads)
               + ("  " + "Input Shapes".ljust(30) if shapes else ""), line]
        for e in rows:
            cells = [f"{100 * e.self_cpu_time_total / total:.2f}%", _us(e.self_cpu_time_total),
                     f"{100 * e.cpu_time_total / total:.2f}%", _us(e.cpu_time_total), _us(e.cpu_time), str(e.count)]
            out.append(e.key.rjust(width) + "  " + "  ".join(c.rjust(12) for c in cells)
                       + ("  " + str(list(map(list, e.input_shapes))) if shapes else ""))
        return "\n".join(out + [line, f"Self CPU time total: {_us(total)}", ""])


def _us(microseconds: float) -> str:
    """PyTorch's way of printing a duration: 412.000us, 9.078ms, 1.234s."""
    if microseconds >= 1e6:
        return f"{microseconds / 1e6:.3f}s"
    return f"{microseconds / 1e3:.3f}ms" if microseconds >= 1e3 else f"{microseconds:.3f}us"


class profile:  # noqa: N801 (PyTorch's name)
    """Record every op, backward node and record_function region run inside the block (any thread)."""

    def __init__(self, activities=None, *, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, schedule=None, on_trace_ready=None, **_):
        self.record_shapes, self.on_trace_ready = record_shapes, on_trace_ready
        self._events: list[FunctionEvent] = []
        self._lock = threading.Lock()
        self._subscription = None

    def __enter__(self):
        _active.append(self)
        self._subscription = events.subscribe(self._on_event)
        return self

    def __exit__(self, *exc):
        self._subscription.remove()
        _active.remove(self)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self) -> None:
        """Marks a training step (PyTorch's schedules use it); everything is recorded here."""

    def _on_event(self, event) -> None:
        if isinstance(event, BackwardStep):
            self._add(event.node.name, event.seconds, ())
        else:
            self._add(event.fn.__name__, event.seconds,
                      tuple(tuple(a.shape) for a in event.args if isinstance(a, TensorBase)))

    def _add(self, name: str, seconds: float, shapes: tuple, self_seconds: float | None = None) -> None:
        with self._lock:
            self._events.append(FunctionEvent(name, perf_counter() - seconds, seconds,
                                              seconds if self_seconds is None else self_seconds,
                                              shapes if self.record_shapes else ()))
        _regions.charge(seconds)

    def events(self) -> EventList:
        return EventList(self._events)

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """The events added up by name (and input shapes), in order of first appearance; times in us."""
        groups: dict = {}
        for e in self._events:
            key = (e.name, e.input_shapes if group_by_input_shape else ())
            avg = groups.setdefault(key, FunctionEventAvg(e.name, input_shapes=key[1]))
            avg.count += 1
            avg.cpu_time_total += e.seconds * 1e6
            avg.self_cpu_time_total += e.self_seconds * 1e6
        return EventList(groups.values())

    def export_chrome_trace(self, path) -> None:
        """The events as a Chrome trace (JSON, times in us), written atomically."""
        origin = min((e.start for e in self._events), default=0.0)
        trace = {"traceEvents": [{"name": e.name, "ph": "X", "ts": (e.start - origin) * 1e6, "dur": e.seconds * 1e6,
                                  "pid": 0, "tid": 0, "args": {"Input Shapes": [list(s) for s in e.input_shapes]}}
                                 for e in self._events]}
        write_atomic(path, json.dumps(trace).encode())


_active: list[profile] = []  # the profilers recording now


class _Regions(threading.local):
    """This thread's open record_function regions, innermost last, each with the time its children took."""

    def __init__(self):
        self.open: list[list] = []  # [name, start, children's seconds]

    def charge(self, seconds: float) -> None:
        if self.open:
            self.open[-1][2] += seconds


_regions = _Regions()


class record_function:  # noqa: N801 (PyTorch's name)
    """A named region of the profile (a with-block, or a decorator)."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name

    def __enter__(self):
        _regions.open.append([self.name, perf_counter(), 0.0])
        return self

    def __exit__(self, *exc):
        name, start, children = _regions.open.pop()
        seconds = perf_counter() - start
        for prof in list(_active):
            prof._add(name, seconds, (), self_seconds=max(seconds - children, 0.0))
        if not _active:
            _regions.charge(seconds)

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return wrapper
