"""Grad mode: no_grad, enable_grad, set_grad_enabled, is_grad_enabled (PyTorch semantics)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import autograd

from ._helpers import MyExp, assert_close, leaf

X = [0.5, -1.0, 2.0]


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    """Every test starts with grad mode on and must leave it on."""
    assert tl.is_grad_enabled()
    yield
    enabled = tl.is_grad_enabled()
    tl.set_grad_enabled(True)
    assert enabled, "the test left grad mode off"


def _assert_not_recorded(t):
    assert not t.requires_grad
    assert t.grad_fn is None
    assert t.is_leaf


def test_aliases():
    assert tl.no_grad is autograd.no_grad
    assert tl.enable_grad is autograd.enable_grad
    assert tl.set_grad_enabled is autograd.set_grad_enabled
    assert tl.is_grad_enabled is autograd.is_grad_enabled


def test_no_grad_context():
    x = leaf(X)
    with tl.no_grad():
        assert not tl.is_grad_enabled()
        ys = [x * 2.0, x.exp(), x.sum(), x[1:], x.reshape(3, 1), x @ x, MyExp.apply(x), x.split(1)[0]]
    assert tl.is_grad_enabled()
    for y in ys:
        _assert_not_recorded(y)
    assert_close(ys[0], np.array(X) * 2)


def test_no_grad_matches_torch(torch):
    tx = torch.tensor(X, requires_grad=True)
    x = leaf(X)
    with torch.no_grad(), tl.no_grad():
        ty, y = tx * 2.0, x * 2.0
    assert (y.requires_grad, y.grad_fn is None, y.is_leaf) == (ty.requires_grad, ty.grad_fn is None, ty.is_leaf)


def test_no_grad_output_cannot_backward():
    x = leaf(X)
    with tl.no_grad():
        y = (x * x).sum()
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_no_grad_as_decorator():
    @tl.no_grad()
    def f(x):
        """doc"""
        return x * 2.0, tl.is_grad_enabled()

    y, enabled = f(leaf(X))
    assert enabled is False
    _assert_not_recorded(y)
    assert tl.is_grad_enabled()
    assert f.__name__ == "f" and f.__doc__ == "doc"


def test_no_grad_as_decorator_without_parentheses(torch):
    @torch.no_grad
    def tf():
        return torch.is_grad_enabled()

    assert tf() is False  # PyTorch accepts the bare form

    @tl.no_grad
    def f():
        return tl.is_grad_enabled()

    assert f() is False
    assert tl.is_grad_enabled()


def test_no_grad_decorator_on_generator_function(torch):
    def states(lib):
        @lib.no_grad()
        def gen():
            yield lib.is_grad_enabled()
            yield lib.is_grad_enabled()

        return list(gen())

    assert states(tl) == states(torch) == [False, False]


def test_enable_grad_inside_no_grad():
    x = leaf(X)
    with tl.no_grad():
        with tl.enable_grad():
            assert tl.is_grad_enabled()
            y = x * 2.0
        assert not tl.is_grad_enabled()
        z = x * 2.0
    assert y.requires_grad and y.grad_fn is not None
    _assert_not_recorded(z)
    y.sum().backward()
    assert_close(x.grad, [2.0, 2.0, 2.0])


def test_enable_grad_as_decorator():
    @tl.enable_grad()
    def f(x):
        return x * 3.0

    with tl.no_grad():
        y = f(leaf(X))
        assert not tl.is_grad_enabled()
    assert y.grad_fn is not None


def test_set_grad_enabled_as_context_manager():
    x = leaf(X)
    with tl.set_grad_enabled(False):
        assert not tl.is_grad_enabled()
        y = x * 2.0
    assert tl.is_grad_enabled()
    _assert_not_recorded(y)
    with tl.no_grad():
        with tl.set_grad_enabled(True):
            assert tl.is_grad_enabled()
            z = x * 2.0
        assert not tl.is_grad_enabled()
    assert z.grad_fn is not None


def test_set_grad_enabled_as_function_call():
    x = leaf(X)
    tl.set_grad_enabled(False)
    try:
        assert not tl.is_grad_enabled()
        y = x * 2.0
    finally:
        tl.set_grad_enabled(True)
    assert tl.is_grad_enabled()
    _assert_not_recorded(y)


def test_set_grad_enabled_as_decorator(torch):
    # PyTorch restores the mode right after decorating: only calls run with the mode
    @torch.set_grad_enabled(False)
    def tf():
        return torch.is_grad_enabled()

    torch_after_decorating = torch.is_grad_enabled()

    @tl.set_grad_enabled(False)
    def f():
        return tl.is_grad_enabled()

    after_decorating = tl.is_grad_enabled()
    tl.set_grad_enabled(True)  # let the following asserts (and tests) run with grad mode on either way
    assert torch_after_decorating is True and tf() is False
    assert after_decorating is True, "decorating with set_grad_enabled(False) left grad mode off"
    assert f() is False
    assert tl.is_grad_enabled()


def test_nested_modes_restore_on_exit_and_on_exception():
    with tl.no_grad():
        with tl.enable_grad():
            with tl.no_grad():
                assert not tl.is_grad_enabled()
            assert tl.is_grad_enabled()
            with pytest.raises(ValueError):
                with tl.no_grad():
                    raise ValueError("boom")
            assert tl.is_grad_enabled()
        assert not tl.is_grad_enabled()
    assert tl.is_grad_enabled()

    @tl.no_grad()
    def fails():
        raise KeyError("x")

    with pytest.raises(KeyError):
        fails()
    assert tl.is_grad_enabled()


def test_grad_mode_is_thread_local():
    x = leaf(X)
    results = {}

    def worker():
        results["enabled"] = tl.is_grad_enabled()
        y = x * 2.0
        results["recorded"] = y.grad_fn is not None
        y.sum().backward()

    with tl.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert not tl.is_grad_enabled()
    assert results == {"enabled": True, "recorded": True}
    assert_close(x.grad, [2.0, 2.0, 2.0])


def test_no_grad_in_a_thread_does_not_leak_to_main():
    entered, release = threading.Event(), threading.Event()

    def worker():
        with tl.no_grad():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=worker)
    t.start()
    try:
        assert entered.wait(10)
        assert tl.is_grad_enabled()
        assert (leaf(X) * 2.0).grad_fn is not None
    finally:
        release.set()
        t.join()


def test_backward_inside_no_grad_still_computes_grads(torch):
    x = leaf(X)
    tx = torch.tensor(X, requires_grad=True)
    y, ty = (x * x).sum(), (tx * tx).sum()
    with tl.no_grad(), torch.no_grad():
        y.backward()
        ty.backward()
        assert not tl.is_grad_enabled()
    assert_close(x.grad, tx.grad)


def test_in_place_update_under_no_grad_keeps_leaf():
    w = leaf(X)
    with tl.no_grad():
        w -= 0.5
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    assert_close(w, np.array(X) - 0.5)


def test_inference_mode_is_no_grad_and_false_changes_nothing(torch):
    x = leaf(X)
    with tl.inference_mode():
        assert tl.is_grad_enabled() is False
        _assert_not_recorded(x * 2.0)
    with tl.no_grad(), tl.inference_mode(False):  # PyTorch's inference_mode(False) leaves grad mode alone
        assert tl.is_grad_enabled() is False
    with tl.inference_mode(False):
        assert (x * 2.0).requires_grad

    @tl.inference_mode
    def bare():
        return tl.is_grad_enabled()

    @tl.inference_mode()
    def called():
        return tl.is_grad_enabled()

    assert bare() is False and called() is False and tl.is_grad_enabled()
    assert bare.__name__ == "bare"
    with torch.inference_mode():
        assert torch.is_grad_enabled() is False  # the oracle agrees on the grad mode inside
