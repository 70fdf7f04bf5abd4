"""Grad mode: whether ops record the graph (`no_grad`, `enable_grad`, `set_grad_enabled`).

All three work as context managers and as decorators, like PyTorch's.
The flag is thread-local.
"""
from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    enabled = True


state = _State()


def is_grad_enabled() -> bool:
    return state.enabled


class _GradMode:
    """Base for the grad-mode context managers / decorators."""

    _mode: bool

    def __enter__(self):
        self._prev = state.enabled
        state.enabled = self._mode
        return self

    def __exit__(self, *exc) -> None:
        state.enabled = self._prev

    def __call__(self, fn):
        mode = self._mode
        if inspect.isgeneratorfunction(fn):
            return _generator_under(fn, mode)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = state.enabled
            state.enabled = mode
            try:
                return fn(*args, **kwargs)
            finally:
                state.enabled = prev

        return wrapper


class _Mode:
    """Set grad mode for a block, restoring the previous one."""

    def __init__(self, mode: bool):
        self.mode = mode

    def __enter__(self):
        self.prev, state.enabled = state.enabled, self.mode

    def __exit__(self, *exc) -> None:
        state.enabled = self.prev


def _generator_under(fn, mode: bool):
    """A decorated generator function: each step of the generator runs in `mode`,
    while the caller's code between steps keeps its own mode (as PyTorch)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _Mode(mode):
            gen = fn(*args, **kwargs)
        try:
            with _Mode(mode):
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with _Mode(mode):
                        gen.close()
                    raise
                except BaseException as exc:
                    with _Mode(mode):
                        response = gen.throw(exc)
                else:
                    with _Mode(mode):
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return wrapper


class _NoArgGradMode(_GradMode):
    """A grad mode that is also usable as a bare decorator: `@no_grad` as well as `@no_grad()`."""

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        return self(fn) if callable(fn) else self

    def __init__(self, fn=None):
        pass


class no_grad(_NoArgGradMode):
    """Ops inside do not record the graph (inference, optimizer updates)."""

    _mode = False


class enable_grad(_NoArgGradMode):
    """Ops inside record the graph, even within `no_grad`."""

    _mode = True


class set_grad_enabled(_GradMode):
    """Turn recording on or off: `set_grad_enabled(False)` is `no_grad()`.
    Like PyTorch's, it takes effect immediately when called as a function."""

    def __init__(self, mode: bool):
        self._mode = bool(mode)
        self._prev = state.enabled
        state.enabled = self._mode

    def __enter__(self):
        return self

    def __call__(self, fn):
        state.enabled = self._prev  # used as a decorator: only the decorated function changes mode
        return super().__call__(fn)


class inference_mode(_GradMode):
    """For inference, as torch.inference_mode: inside, ops record nothing (no_grad);
    inference_mode(False) changes nothing. A context manager and a decorator, with or without
    parentheses. Deviation: PyTorch also marks the tensors made inside as inference tensors, which
    autograd later refuses; here they are ordinary tensors made without a graph."""

    _mode = False

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):  # @inference_mode, without parentheses
            self.on = True
            return self(mode)
        return self

    def __init__(self, mode: bool = True):
        self.on = bool(mode)

    def __enter__(self):
        return super().__enter__() if self.on else self

    def __exit__(self, *exc) -> None:
        if self.on:
            super().__exit__(*exc)

    def __call__(self, fn):
        return super().__call__(fn) if self.on else fn
