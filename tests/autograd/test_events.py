"""The one instrumentation point: OpEvents from Function.apply, BackwardSteps from the engine."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import BackwardStep, Function, backward_steps, events
from tinygrad_lab.autograd.events import OpEvent, subscribe

from ._helpers import MyExp, assert_close, leaf, node_signature, ones_like, program

X = [0.5, -1.0, 2.0]


pytestmark = pytest.mark.usefixtures("no_leftover_subscribers")


@pytest.fixture
def recorded():
    """Every event published while the test runs."""
    got = []
    with subscribe(got.append):
        yield got


def _ops(evts) -> list:
    return [e for e in evts if isinstance(e, OpEvent)]


def _steps(evts) -> list:
    return [e for e in evts if isinstance(e, BackwardStep)]


# ---------------------------------------------------------------- OpEvent

def test_one_op_event_per_op(recorded):
    x = leaf(X)
    y = x * 2.0
    z = y.exp()
    s = z.sum()
    ops = _ops(recorded)
    assert [e.fn.__name__ for e in ops] == ["Mul", "Exp", "Sum"]
    mul, exp, sm = ops
    assert mul.args[0] is x and mul.args[1] == 2.0
    assert mul.outputs == (y,) and exp.outputs == (z,) and sm.outputs == (s,)
    assert exp.args == (y,)
    assert mul.node is y.grad_fn and exp.node is z.grad_fn and sm.node is s.grad_fn
    for e in ops:
        assert isinstance(e.seconds, float) and e.seconds >= 0.0
        assert issubclass(e.fn, Function)


def test_op_event_without_grad_has_no_node(recorded):
    x = tl.tensor(np.array(X))
    y = x + 1.0
    with tl.no_grad():
        z = leaf(X) * 3.0
    ops = _ops(recorded)
    assert [e.fn.__name__ for e in ops] == ["Add", "Mul"]
    assert all(e.node is None for e in ops)
    assert ops[0].outputs == (y,) and ops[1].outputs == (z,)


def test_multi_output_op_event(recorded):
    x = leaf([1.0, 2.0, 3.0, 4.0])
    a, b = x.split(2)
    (e,) = _ops(recorded)
    assert e.outputs == (a, b)
    assert e.node is a.grad_fn is b.grad_fn


def test_ops_inside_custom_function_forward_are_not_published(recorded):
    x = leaf(X)
    y = MyExp.apply(x)  # forward runs x.exp() itself
    (e,) = _ops(recorded)
    assert e.fn is MyExp
    assert e.outputs == (y,) and e.node is y.grad_fn
    assert_close(y, np.exp(X))


def test_backward_ops_are_not_published_as_op_events(recorded):
    x = leaf(X)
    loss = (x.exp() * x).sum()
    n_forward = len(_ops(recorded))
    loss.backward()
    assert len(_ops(recorded)) == n_forward
    assert len(_steps(recorded)) == 4  # Sum, Mul, Exp, AccumulateGrad


# ---------------------------------------------------------------- BackwardStep events

def test_backward_steps_published_in_step_order(recorded):
    _, loss = program()
    loss.backward()
    published = _steps(recorded)
    assert [s.index for s in published] == list(range(len(published)))
    _, loss2 = program()
    drained = list(backward_steps([loss2], [ones_like(loss2)]))
    assert node_signature(s.node for s in published) == node_signature(s.node for s in drained)
    assert published[0].node is loss.grad_fn


def test_backward_steps_arrive_during_backward():
    x = leaf(X)
    loss = (x.exp() * 2.0).sum()
    grad_when_seen = []

    def on_event(e):
        if isinstance(e, BackwardStep):
            grad_when_seen.append(None if x.grad is None else x.grad.tolist())

    with subscribe(on_event):
        loss.backward()
    # the leaf's gradient is accumulated by the last step, not before
    assert grad_when_seen[:-1] == [None] * (len(grad_when_seen) - 1)
    assert_close(np.array(grad_when_seen[-1]), 2 * np.exp(X))


def test_stepping_the_generator_publishes_one_event_per_step(recorded):
    x = leaf(X)
    loss = (x * x).sum()
    gen = backward_steps([loss], [ones_like(loss)])
    first = next(gen)
    assert _steps(recorded) == [first]
    rest = list(gen)
    assert _steps(recorded) == [first] + rest


def test_autograd_grad_publishes_steps(recorded):
    x = leaf(X)
    tl.autograd.grad((x * x).sum(), x)
    assert [s.node.name for s in _steps(recorded)] == ["SumBackward", "MulBackward", "AccumulateGrad"]


# ---------------------------------------------------------------- subscription lifetime

def test_handle_remove_stops_delivery():
    got = []
    handle = subscribe(got.append)
    x = leaf(X)
    y = x * 2.0
    handle.remove()
    z = y * 3.0
    z.sum().backward()
    assert [e.fn.__name__ for e in _ops(got)] == ["Mul"]
    assert _steps(got) == []
    handle.remove()  # removing twice is harmless


def test_with_form_stops_delivery():
    got = []
    x = leaf(X)
    with subscribe(got.append) as handle:
        y = x.exp()
        assert handle is not None
    y.sum()
    assert [e.fn.__name__ for e in _ops(got)] == ["Exp"]


def test_two_subscribers_each_get_every_event_once():
    a, b = [], []
    x = leaf(X)
    with subscribe(a.append), subscribe(b.append):
        (x * 2.0).sum().backward()
    assert len(a) == len(b) == 2 + 3  # 2 ops, 3 steps
    assert all(ea is eb for ea, eb in zip(a, b))


def test_subscriber_running_ops_does_not_recurse():
    got, computed = [], []

    def on_event(e):
        got.append(e)
        if isinstance(e, OpEvent):
            out = e.outputs[0]
            computed.append(((out * 2.0).sum() + 1.0).item())  # ops inside a subscriber

    x = leaf(X)
    with subscribe(on_event):
        y = x.exp()
        z = (y * 3.0).sum()
    assert [e.fn.__name__ for e in _ops(got)] == ["Exp", "Mul", "Sum"]
    assert_close(np.array(computed), [2 * np.exp(X).sum() + 1, 6 * np.exp(X).sum() + 1,
                                      2 * 3 * np.exp(X).sum() + 1])
    z.backward()  # the subscriber's ops did not disturb the graph
    assert_close(x.grad, 3 * np.exp(X))


def test_nothing_recorded_without_subscribers(monkeypatch):
    published, constructed = [], []
    monkeypatch.setattr(events, "publish", published.append)
    real = events.OpEvent
    monkeypatch.setattr(events, "OpEvent", lambda *a: constructed.append(a) or real(*a))
    x = leaf(X)
    loss = (x.exp() * x).sum()
    loss.backward()
    list(backward_steps([(x * x).sum()], [tl.tensor(1.0, dtype=tl.float64)]))
    assert published == [] and constructed == []
    assert events.subscribers == []


def test_removed_subscriber_leaves_nothing_recorded(monkeypatch):
    with subscribe(lambda e: None):
        pass
    published = []
    monkeypatch.setattr(events, "publish", published.append)
    (leaf(X) * 2.0).sum().backward()
    assert published == []


def test_create_graph_backward_publishes_its_ops(recorded):
    x = leaf(X)
    y = (x * x).sum()
    n = len(_ops(recorded))
    (g,) = tl.autograd.grad(y, x, create_graph=True)
    new = _ops(recorded)[n:]
    assert new, "the ops that build the gradient's graph should be published"
    assert g.grad_fn in [e.node for e in new]
