"""capture(): node metadata of known programs, checked by hand."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import graph, nn
from tinygrad_lab.graph import ModuleCall, SavedTensor

from ._programs import cnn, mlp, tiny_program, unrelated_work

F32 = 4  # bytes


@pytest.fixture
def tiny():
    model, x, loss = tiny_program()
    return model, x, loss, graph.capture(loss, params=dict(model.named_parameters()))


def test_tiny_program_nodes_by_hand(tiny):
    _, _, _, g = tiny
    # creation order: the leaves' AccumulateGrad nodes are made when the Linear op first uses them,
    # the data input x appears just before the op that took it
    # names: parameters by module path, the other tensors after the variables holding them (the fixture's)
    assert [(n.id, n.kind, n.op, n.name) for n in g] == [
        (0, "parameter", None, "fc.weight"),
        (1, "parameter", None, "fc.bias"),
        (2, "input", None, "x"),
        (3, "op", "Linear", None),
        (4, "op", "Relu", None),
        (5, "op", "Mul", None),
        (6, "op", "Sum", "loss"),
    ]
    assert [n.inputs for n in g] == [(), (), (), ((2, 0), (0, 0), (1, 0)), ((3, 0),), ((4, 0), (4, 0)), ((5, 0),)]
    assert [n.input_names for n in g][3:] == [("x", "w", "b"), ("x",), ("a", "b"), ("x",)]
    assert [n.shape for n in g] == [(2, 3), (2,), (1, 3), (1, 2), (1, 2), (1, 2), ()]
    assert {n.dtype for n in g} == {"float32"} and {n.device for n in g} == {"cpu"}
    assert [n.requires_grad for n in g] == [True, True, False, True, True, True, True]
    assert [n.id for n in g.outputs] == [6]


def test_tiny_program_saved_tensors_by_hand(tiny):
    _, _, _, g = tiny
    assert g[3].saved == (SavedTensor("x", (1, 3), "float32", 3 * F32), SavedTensor("w", (2, 3), "float32", 6 * F32))
    assert g[4].saved == (SavedTensor("output", (1, 2), "float32", 2 * F32),)
    # r * r saves r twice, once as each argument
    assert g[5].saved == (SavedTensor("a", (1, 2), "float32", 8), SavedTensor("b", (1, 2), "float32", 8))
    assert g[6].saved == ()


def test_tiny_program_values_by_hand(tiny):
    _, _, _, g = tiny
    w, b, x = g[0].value, g[1].value, g[2].value
    assert w.preview == pytest.approx((0.1, 0.2, 0.3, -0.1, 0.0, 0.1)) and w.numel == 6
    assert (w.min, w.max) == pytest.approx((-0.1, 0.3)) and w.mean == pytest.approx(0.1)
    assert w.norm == pytest.approx(np.sqrt(0.01 + 0.04 + 0.09 + 0.01 + 0.01))
    assert b.preview == pytest.approx((0.5, -0.5)) and x.preview == (1.0, 2.0, 3.0)
    # h = x @ w.T + b = [1.9, -0.3]; relu keeps its output for backward, so its value is known
    assert g[4].value.preview == pytest.approx((1.9, 0.0))
    assert g[3].value is None  # nothing kept the Linear's output
    assert g[6].value.preview == pytest.approx((3.61,)) and g[6].value.shape == ()


def test_tiny_program_modules(tiny):
    _, _, _, g = tiny
    assert g.modules == (ModuleCall(0, "", "Tiny", 0, None), ModuleCall(1, "fc", "Linear", 1, 0))
    tiny_call, fc = g.modules
    assert g[3].scope == (tiny_call, fc) and g[3].module is fc
    assert g[0].scope == (tiny_call, fc)  # a parameter sits in the module that holds it
    assert g[2].scope == () and g[4].module is None  # the input, and ops run outside the model
    assert fc.label == "fc (Linear)" and tiny_call.label == "Tiny"


def test_tiny_program_grads_after_backward(tiny):
    _, _, loss, g = tiny
    assert g[0].grad is None
    loss.backward()
    # d loss / d r = 2r = [3.8, 0]; relu passes it where h > 0; dW = g^T x, db = g
    assert g[0].grad.preview == pytest.approx((3.8, 7.6, 11.4, 0.0, 0.0, 0.0))
    assert g[1].grad.preview == pytest.approx((3.8, 0.0))
    assert g[4].grad is None  # an op's gradient is known only when the graph saw the backward pass


def test_parameters_are_named_by_module_path_without_params():
    model, _, loss = mlp()
    g = graph.capture(loss)
    names = [n.name for n in g if n.kind == "parameter"]
    assert names == [name for name, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_params_argument_names_any_leaf():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    g = graph.capture((x * 3.0).sum(), params={"x": x})
    assert (g[0].kind, g[0].name) == ("parameter", "x")
    assert (graph.capture((x * 3.0).sum())[0].name) == "x"  # the caller's variable
    unnamed = graph.capture((x * 3.0).sum(), namespace={})
    assert (unnamed[0].kind, unnamed[0].name) == ("input", None)


def test_cnn_node_metadata():
    model, _, loss = cnn()
    g = graph.capture(loss, params=dict(model.named_parameters()))
    ops = [(n.op, n.shape, n.module.name if n.module else None) for n in g if n.kind == "op"]
    assert ops == [("Conv", (2, 4, 8, 8), "features.0"), ("Relu", (2, 4, 8, 8), "features.1"),
                   ("MaxPool", (2, 4, 4, 4), "features.2"), ("Conv", (2, 8, 4, 4), "features.3"),
                   ("Relu", (2, 8, 4, 4), "features.4"), ("MaxPool", (2, 8, 2, 2), "features.5"),
                   ("Flatten", (2, 32), "head.0"), ("Linear", (2, 10), "head.1"),
                   ("LogSoftmax", (2, 10), None), ("NllLoss", (), None)]
    assert [c.name for c in g.modules] == ["", "features", "features.0", "features.1", "features.2", "features.3",
                                           "features.4", "features.5", "head", "head.0", "head.1"]
    assert [c.depth for c in g.modules] == [0, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2]
    conv = next(n for n in g if n.op == "Conv")
    assert conv.saved[0] == SavedTensor("x", (2, 1, 8, 8), "float32", 2 * 64 * F32)


def test_ids_do_not_depend_on_what_ran_before():
    first = [(n.kind, n.op, n.inputs) for n in graph.capture(mlp()[2])]
    unrelated_work()
    again = [(n.kind, n.op, n.inputs) for n in graph.capture(mlp()[2])]
    assert first == again


def test_shared_subexpression_and_broadcasting():
    a = tl.tensor([[1.0], [2.0]], requires_grad=True)     # (2, 1)
    b = tl.tensor([1.0, -1.0, 0.5], requires_grad=True)   # (3,)
    s = a + b                                             # (2, 3), broadcast
    loss = (s * s.exp()).sum()                            # s used twice
    g = graph.capture(loss)
    add = next(n for n in g if n.op == "Add")
    assert add.shape == (2, 3) and [g[i].shape for i, _ in add.inputs] == [(2, 1), (3,)]
    consumers = [n.op for n in g if any(src == add.id for src, _ in n.inputs)]
    assert consumers == ["Exp", "Mul"]


def test_float64_dtype_is_kept_and_unknown_dtype_is_none():
    x = tl.tensor(np.array([1.0, 2.0]), requires_grad=True)  # float64
    g = graph.capture((x + 1.0).reshape(2, 1).sum())
    assert [n.dtype for n in g] == ["float64"] * 4
    y = tl.tensor([1.0, 2.0], requires_grad=True)
    cast = graph.capture(y.double().sum())  # nothing saved the cast's output: its dtype is not inferred
    assert [n.op for n in cast] == [None, "Cast", "Sum"] and cast[1].dtype is None and cast[2].dtype == "float64"


def test_multi_output_op():
    x = tl.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = x.split(2)
    g = graph.capture((a * b).sum())
    split = g[1]
    assert split.op == "Split" and split.output_shapes == ((2,), (2,))
    assert g[2].inputs == ((1, 0), (1, 1))


def test_saved_tensors_freed_by_backward_are_none():
    _, _, loss = mlp()
    loss.backward()
    g = graph.capture(loss)
    assert all(n.saved is None for n in g if n.op in ("Linear", "Relu", "LogSoftmax"))


def test_capture_of_a_leaf_and_of_a_constant():
    w = nn.Parameter(tl.tensor([1.0, 2.0]))
    g = graph.capture(w)
    assert len(g) == 1 and g[0].kind == "parameter" and g.outputs == (g[0],)
    c = graph.capture(tl.tensor([3.0]))
    assert len(c) == 1 and c[0].kind == "input" and not c[0].requires_grad and c[0].value.preview == (3.0,)


def test_repr_is_deterministic(tiny):
    _, _, _, g = tiny
    assert repr(g) == "<Graph: 7 nodes (4 ops, 1 inputs, 2 parameters); outputs: Sum ()>"
    assert repr(g[5]) == "<GraphNode 5: Mul (1, 2) float32 <- [4, 4]>"
    assert repr(g[0]) == "<GraphNode 0: parameter 'fc.weight' (2, 3) float32 <- []>"
