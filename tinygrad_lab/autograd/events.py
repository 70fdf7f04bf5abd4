"""The one instrumentation point of the engine.

`Function.apply` publishes an `OpEvent` for every op it runs and the backward
engine publishes each `BackwardStep` it takes. The live graph, the backward
stepper and per-op timing all subscribe here; with no subscriber the engine pays
one truth test per op.

Subscribers are process-wide; whether events are muted is per thread (as grad mode is):
a backward pass in one thread mutes only that thread's own ops.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, NamedTuple


class OpEvent(NamedTuple):
    """An op ran: `fn` (the Function class), its `args` (tensors and plain values),
    its `outputs` (a tuple of tensors), the graph `node` it recorded (None when no
    gradient is needed) and the `seconds` its forward took, timed by its device's
    `stopwatch` (on a GPU the work, with CUDA events; reading it waits for that work)."""

    fn: type
    args: tuple
    outputs: tuple
    node: Any
    stopwatch: Any

    @property
    def seconds(self) -> float:
        return self.stopwatch.seconds


class _State(threading.local):
    muted = False  # True while this thread produces or delivers an event (or runs a backward pass)


subscribers: list[Callable[[Any], None]] = []
state = _State()


def observed() -> bool:
    """Whether an event produced now, in this thread, would be delivered."""
    return bool(subscribers) and not state.muted


class Subscription:
    """Returned by `subscribe`; `remove()` (or leaving the `with` block) unsubscribes."""

    def __init__(self, callback: Callable[[Any], None]):
        self.callback = callback
        subscribers.append(callback)

    def remove(self) -> None:
        if self.callback in subscribers:
            subscribers.remove(self.callback)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def subscribe(callback: Callable[[Any], None]) -> Subscription:
    """Call `callback(event)` for every OpEvent and BackwardStep from now on."""
    return Subscription(callback)


def publish(event: Any) -> None:
    """Deliver `event` to every subscriber (a snapshot of the list, so a callback may unsubscribe)."""
    for cb in tuple(subscribers):
        cb(event)
