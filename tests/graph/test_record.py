"""record(): the live graph, built from the engine's event stream."""
from __future__ import annotations

import gc
import weakref

import pytest

import tinygrad_lab as tl
from tinygrad_lab import graph, nn
from tinygrad_lab.autograd import events

from ._programs import mlp, tiny_program


pytestmark = pytest.mark.usefixtures("no_leftover_subscribers")


def _structure(g) -> list:
    return [(n.kind, n.op, n.name, n.inputs, n.shape, n.dtype, n.scope) for n in g]


def test_record_subscribes_only_inside_the_block():
    with graph.record() as rec:
        assert events.subscribers == [rec._on_event]
    assert events.subscribers == []
    tl.tensor([1.0]) + 1.0
    assert len(rec.graph) == 0


def test_graph_grows_as_ops_run_and_subscribers_hear_each_node():
    heard = []
    with graph.record() as rec:
        rec.graph.subscribe(lambda event, node: heard.append((event, node.id, node.op)))
        x = tl.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2.0
        assert len(rec.graph) == 2 and heard == [("node", 0, None), ("node", 1, "Mul")]
        y.exp()
        assert len(rec.graph) == 3 and heard[-1] == ("node", 2, "Exp")


def test_subscription_can_be_removed():
    heard = []
    with graph.record() as rec:
        handle = rec.graph.subscribe(lambda event, node: heard.append(node.id))
        tl.tensor([1.0]) * 2.0
        handle.remove()
        tl.tensor([1.0]) * 3.0
    assert heard == [0, 1]


def test_record_matches_capture_for_a_forward_pass():
    model, x, _ = tiny_program()
    params = dict(model.named_parameters())
    with graph.record(params) as rec:
        loss = (model(x).relu() ** 2).sum()
    captured = graph.capture(loss, params=params)
    live = _structure(rec.graph)
    # the same nodes; record sees the data input first (it is an argument), capture sees it at the op
    order = [2, 0, 1, 3, 4, 5, 6]
    relabel = {old: new for new, old in enumerate(order)}
    expected = [(k, op, name, tuple((relabel[i], nr) for i, nr in inputs), shape, dtype, scope)
                for k, op, name, inputs, shape, dtype, scope in (_structure(captured)[i] for i in order)]
    assert live == expected


def test_record_keeps_values_of_every_op():
    model, x, _ = tiny_program()
    with graph.record() as rec:
        h = model(x)
        (h.relu() * h.relu()).sum()
    linear = next(n for n in rec.graph if n.op == "Linear")
    assert linear.value.preview == pytest.approx((1.9, -0.3))
    assert rec.graph.outputs[-1].value.preview == pytest.approx((3.61,))


def test_record_values_false_keeps_no_values():
    with graph.record(values=False) as rec:
        tl.tensor([1.0, 2.0]) * 2.0
    assert rec.graph[1].value is None and rec.graph[0].value is not None  # a leaf's value is still read


def test_forward_only_ops_are_recorded():
    with graph.record() as rec:
        x = tl.tensor([1.0, -2.0, 3.0])
        y = (x * 2.0).relu()
        with tl.no_grad():
            w = tl.tensor([1.0], requires_grad=True)
            z = y + w
    assert [(n.kind, n.op, n.requires_grad) for n in rec.graph] == [
        ("input", None, False), ("op", "Mul", False), ("op", "Relu", False),
        ("input", None, True), ("op", "Add", False)]
    assert rec.graph[4].inputs == ((2, 0), (3, 0))
    assert rec.graph[2].value.preview == (2.0, 0.0, 6.0) and z.tolist() == [3.0, 1.0, 7.0]


def test_backward_attaches_gradients():
    model, x, loss = mlp()
    params = dict(model.named_parameters())
    with graph.record(params) as rec:
        heard = []
        rec.graph.subscribe(lambda event, node: heard.append((event, node.op or node.name)))
        loss = nn.functional.cross_entropy(model(x), tl.tensor([0, 1, 2, 0, 1]))
        loss.backward()
    g = rec.graph
    out = g.outputs[0]
    assert out.op == "NllLoss" and out.grad.preview == (1.0,)
    relu = next(n for n in g if n.op == "Relu")
    assert relu.grad is not None and relu.grad.shape == (5, 8)
    w = next(n for n in g if n.name == "0.weight")
    assert w.grad.preview == tuple(model[0].weight.grad.numpy().ravel()[:8].tolist())
    grads = [who for event, who in heard if event == "grad"]
    # the engine's order (decreasing node id); mlp() ran a forward before, which made the leaves' nodes
    assert grads == ["NllLoss", "LogSoftmax", "Linear", "Relu", "Linear", "2.bias", "2.weight", "0.bias", "0.weight"]


def test_module_scope_is_recorded():
    model, x, _ = mlp()
    with graph.record() as rec:
        model(x)
    assert [(n.op, n.module.label if n.module else None) for n in rec.graph if n.kind == "op"] == [
        ("Linear", "0 (Linear)"), ("Relu", "1 (ReLU)"), ("Linear", "2 (Linear)")]
    assert [n.name for n in rec.graph if n.kind == "parameter"] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_tensors_made_before_recording_are_inputs():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0  # made before the block: recorded as an input that requires grad
    with graph.record() as rec:
        y.sum()
    assert [(n.kind, n.op, n.requires_grad) for n in rec.graph] == [("input", None, True), ("op", "Sum", True)]


def test_inplace_op_continues_from_the_new_node():
    with graph.record() as rec:
        x = tl.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1.0
        y.add_(1.0)
        y.sum()
    ops = [(n.op, n.inputs) for n in rec.graph if n.kind == "op"]
    assert ops[0] == ("Mul", ((0, 0),))
    assert ops[-1][0] == "Sum" and rec.graph[ops[-1][1][0][0]].op == "Add"


def test_recording_keeps_no_activations_alive():
    arrays = []
    with graph.record() as rec:
        x = tl.randn(64, 64)
        for _ in range(5):
            x = x * 1.5
            arrays.append(weakref.ref(x._data))
        del x
    gc.collect()
    assert len(rec.graph) == 6 and rec.graph[5].value.shape == (64, 64)
    assert all(ref() is None for ref in arrays)


def test_repr():
    with graph.record() as rec:
        tl.tensor([1.0]) * 2.0
        assert repr(rec) == "<Recorder (recording): 2 nodes>"
    assert repr(rec) == "<Recorder (stopped): 2 nodes>"
