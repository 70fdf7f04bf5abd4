"""Engine state is per thread where PyTorch keeps it per thread: grad mode, the events' muted flag
(set while a backward pass runs) and the stack of nn.Modules being called. Each test makes two
threads overlap deterministically (one waits inside a backward or a module's forward while the
other works), so a process-wide flag fails it every time, not by chance."""
from __future__ import annotations

import threading

import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import Function, events
from tinygrad_lab.autograd.events import OpEvent

pytestmark = pytest.mark.usefixtures("no_leftover_subscribers")

TIMEOUT = 30


def _run(target) -> threading.Thread:
    errors = []

    def wrapped():
        try:
            target()
        except BaseException as e:  # surfaced in the main thread by _join
            errors.append(e)

    t = threading.Thread(target=wrapped, daemon=True)
    t.errors = errors
    t.start()
    return t


def _join(t: threading.Thread) -> None:
    t.join(TIMEOUT)
    assert not t.is_alive(), "a thread did not finish"
    if t.errors:
        raise t.errors[0]


def _waiting_backward(inside: threading.Event, release: threading.Event) -> None:
    """A backward pass that stops inside a node's backward until `release` is set."""

    class Wait(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            inside.set()
            assert release.wait(TIMEOUT)
            return g

    x = tl.ones(3, requires_grad=True)
    Wait.apply(x).sum().backward()


def test_a_backward_in_another_thread_does_not_mute_this_threads_events():
    inside, release = threading.Event(), threading.Event()
    seen = []
    with events.subscribe(lambda e: seen.append((threading.get_ident(), e))):
        t = _run(lambda: _waiting_backward(inside, release))
        assert inside.wait(TIMEOUT)
        try:
            a = tl.ones(2, requires_grad=True)
            (a * 2.0).exp().sum()  # this thread's ops, while the other thread is inside backward
        finally:
            release.set()
            _join(t)
    mine = [e.fn.__name__ for ident, e in seen if ident == threading.get_ident() and isinstance(e, OpEvent)]
    assert mine == ["Mul", "Exp", "Sum"]
    assert not events.state.muted


def test_a_backward_here_leaves_another_threads_recording_alone():
    """The other way round: ops in a second thread are published while this one runs backward."""
    inside, release = threading.Event(), threading.Event()
    seen = []

    def other_thread_ops():
        assert inside.wait(TIMEOUT)
        try:
            (tl.ones(2, requires_grad=True) + 1.0).sum()
        finally:
            release.set()

    with events.subscribe(lambda e: seen.append((threading.get_ident(), e))):
        t = _run(other_thread_ops)
        _waiting_backward(inside, release)
        _join(t)
    theirs = [e.fn.__name__ for ident, e in seen if ident == t.ident and isinstance(e, OpEvent)]
    assert theirs == ["Add", "Sum"]


class _Blocking(tl.nn.Module):
    """A module whose forward waits (inside its own scope) until released."""

    def __init__(self, inside: threading.Event, release: threading.Event):
        super().__init__()
        self.inside, self.release = inside, release

    def forward(self, x):
        self.inside.set()
        assert self.release.wait(TIMEOUT)
        return x * 2.0


def test_modules_called_in_another_thread_are_not_in_this_threads_scope():
    inside, release = threading.Event(), threading.Event()
    blocking = _Blocking(inside, release)
    t = _run(lambda: blocking(tl.ones(2, requires_grad=True)))
    assert inside.wait(TIMEOUT)
    try:
        lin = tl.nn.Linear(2, 2)
        y = lin(tl.ones(1, 2)) * 3.0  # Linear inside lin's scope, Mul outside any module
    finally:
        release.set()
        _join(t)
    assert y.grad_fn.scope == ()
    assert y.grad_fn.next_functions[0][0].scope == (lin,)
    from tinygrad_lab.autograd.function import scope_stack
    assert scope_stack == [] and len(scope_stack) == 0


def test_each_thread_has_its_own_scope_stack_as_a_list():
    from tinygrad_lab.autograd.function import scope_stack
    seen = {}
    scope_stack.append("outer")
    try:
        t = _run(lambda: seen.setdefault("other", list(scope_stack)))
        _join(t)
        assert seen["other"] == [] and list(scope_stack) == ["outer"] and scope_stack[-1] == "outer"
    finally:
        scope_stack.pop()
    assert not scope_stack
