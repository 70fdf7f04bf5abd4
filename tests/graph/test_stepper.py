"""BackwardStepper: the real backward pass one node at a time, equal to backward() bit for bit."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_lab as tl
from tinygrad_lab import graph
from tinygrad_lab.autograd import BackwardStep, Function, events

from ._programs import tiny_program

SHAPES = [(3,), (2, 3), (2, 1), (1, 3)]  # all broadcast to (2, 3)
BINARY = ["add", "sub", "mul", "maximum"]
UNARY = ["tanh", "sigmoid", "relu", "neg", "sin", "sum_last", "mean_first"]


@st.composite
def programs(draw):
    """A random program: leaves of broadcastable shapes, ops reading any earlier value (so values
    are shared), and a loss that sums two of them."""
    n_leaves = draw(st.integers(1, 3))
    leaves = [(draw(st.sampled_from(SHAPES)), draw(st.integers(0, 2**31 - 1))) for _ in range(n_leaves)]
    ops = []
    for k in range(draw(st.integers(1, 8))):
        pool = n_leaves + k
        if draw(st.booleans()):
            ops.append((draw(st.sampled_from(BINARY)), draw(st.integers(0, pool - 1)), draw(st.integers(0, pool - 1))))
        else:
            ops.append((draw(st.sampled_from(UNARY)), draw(st.integers(0, pool - 1)), None))
    extra = draw(st.integers(0, n_leaves + len(ops) - 1))
    grads_before = draw(st.booleans())
    return leaves, ops, extra, grads_before


def build(program):
    """(leaves, loss) of a program from `programs()`; the same program builds the same values."""
    leaves_spec, ops, extra, grads_before = program
    leaves = []
    for shape, seed in leaves_spec:
        leaf = tl.tensor(np.random.default_rng(seed).uniform(-2, 2, shape), requires_grad=True)  # float64
        if grads_before:
            leaf.grad = tl.tensor(np.full(shape, 0.25))
        leaves.append(leaf)
    values = list(leaves)
    for op, i, j in ops:
        a = values[i]
        if op == "sum_last":
            values.append(a.sum(-1, keepdim=True))
        elif op == "mean_first":
            values.append(a.mean(0))
        elif j is None:
            values.append(getattr(a, op)())
        else:
            values.append(getattr(a, op)(values[j]))
    return leaves, values[-1].sum() + values[extra].sum() * 0.5


def _grads(leaves) -> list:
    return [None if t.grad is None else t.grad.numpy().copy() for t in leaves]


def _same_bits(a: list, b: list) -> bool:
    return all((x is None and y is None) or (x is not None and y is not None and x.dtype == y.dtype
                                             and np.array_equal(x.view(np.uint64), y.view(np.uint64)))
               for x, y in zip(a, b))


@given(programs())
def test_run_equals_backward_bit_for_bit(program):
    leaves, loss = build(program)
    stepper = graph.BackwardStepper(loss)
    stepper.run()
    expected_leaves, expected_loss = build(program)
    expected_loss.backward()
    assert stepper.done and _same_bits(_grads(leaves), _grads(expected_leaves))


@given(programs(), st.integers(0, 40))
def test_back_and_reset_restore_the_state_after_that_many_steps(program, k):
    leaves, loss = build(program)
    stepper = graph.BackwardStepper(loss)
    before = _grads(leaves)
    for _ in range(k):
        stepper.step()
    taken, at_k = len(stepper.history), _grads(leaves)
    if stepper.step() is not None:
        stepper.back()
        assert len(stepper.history) == taken and _same_bits(_grads(leaves), at_k)
    stepper.reset()
    assert stepper.history == [] and stepper.current is None and _same_bits(_grads(leaves), before)
    stepper.run()
    expected_leaves, expected_loss = build(program)
    expected_loss.backward()
    assert _same_bits(_grads(leaves), _grads(expected_leaves))


@given(programs())
def test_each_step_is_one_engine_step_and_next_predicts_it(program):
    _, loss = build(program)
    stepper = graph.BackwardStepper(loss)
    published = []
    with events.subscribe(lambda e: published.append(e) if isinstance(e, BackwardStep) else None):
        while not stepper.done:
            predicted = stepper.next
            step = stepper.step()
            assert step.node is predicted
            assert published[-1] is step.raw and len(published) == len(stepper.history) == step.index + 1
    assert stepper.step() is None and stepper.next is None


def test_steps_of_a_known_program():
    model, _, loss = tiny_program()
    stepper = graph.BackwardStepper(loss, params=dict(model.named_parameters()))
    assert repr(stepper) == "<BackwardStepper: 0 steps taken, next: Sum (node 6)>"
    ops = []
    while not stepper.done:
        ops.append(stepper.step().op)
    assert ops == ["Sum", "Mul", "Relu", "Linear", "AccumulateGrad", "AccumulateGrad"]
    assert [s.node.name for s in stepper.history[-2:]] == ["fc.bias", "fc.weight"]
    assert repr(stepper) == "<BackwardStepper: 6 steps taken, done>"
    assert repr(stepper.history[1]) == "<Step 1: Mul (node 5)>"


def test_step_exposes_gradients_and_the_graph_shows_them():
    model, _, loss = tiny_program()
    stepper = graph.BackwardStepper(loss, params=dict(model.named_parameters()))
    stepper.step()
    mul = stepper.step()
    assert mul.grad_output.tolist() == [[1.0, 1.0]]
    # r * r: both arguments are r, and each gets g * (the other) = r = [1.9, 0]
    sends = [(node.op, name, g.numpy().ravel().tolist()) for node, name, g in mul.sends]
    assert sends == [("Relu", "a", pytest.approx([1.9, 0.0])), ("Relu", "b", pytest.approx([1.9, 0.0]))]
    assert stepper.graph[5].grad.preview == (1.0, 1.0)  # the graph knows the gradient of Mul's output
    assert stepper.graph[4].grad is None                # not yet: Relu has not run
    stepper.step()
    assert stepper.graph[4].grad.preview == pytest.approx((3.8, 0.0))
    assert "grad = [3.8, 0]" in stepper.graph.to_dot(show_grads=True, highlight=stepper.current.node.id)


def test_existing_grads_accumulate_and_reset_restores_them():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    x.grad = tl.tensor([10.0, 10.0])
    stepper = graph.BackwardStepper((x * x).sum())
    stepper.run()
    assert x.grad.tolist() == [12.0, 14.0]
    stepper.reset()
    assert x.grad.tolist() == [10.0, 10.0]
    assert stepper.back() is None


def test_stepper_needs_a_tensor_that_requires_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        graph.BackwardStepper(tl.tensor([1.0]).sum())


def test_non_scalar_loss_takes_a_gradient():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    stepper = graph.BackwardStepper(x * 3.0, gradient=tl.tensor([1.0, -1.0]))
    stepper.run()
    assert x.grad.tolist() == [3.0, -3.0]


def test_every_rule_names_real_forward_arguments():
    """A typo in the explanation table would silently fall back to the generic text."""
    from tinygrad_lab.graph.explain import RULES
    from tinygrad_lab.graph.nodes import _forward_arg_names

    def functions(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from functions(sub)

    by_name = {f.__name__: f for f in functions(Function) if f.__module__.startswith("tinygrad_lab.ops.")}
    for name, rule in RULES.items():
        args = {a.lstrip("*") for a in _forward_arg_names(by_name[name])}
        assert set(rule.local) | set(rule.vjp) <= args, (name, args)
        assert rule.local or rule.vjp, name


class _Branchy(Function):
    """A backward with two ways to its gradient: the stepper must mark only the one that ran."""

    @staticmethod
    def forward(ctx, x, triple):
        ctx.triple = triple
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        if ctx.triple:
            gx = g * 3.0
        else:
            gx = g * 2.0
        return gx, None


@pytest.mark.parametrize("triple", [True, False])
def test_a_steps_source_marks_only_the_lines_that_ran(triple):
    x = tl.ones(2, requires_grad=True)
    stepper = graph.BackwardStepper(_Branchy.apply(x, triple).sum())
    step = next(s for s in iter(stepper.step, None) if s.op == "_Branchy")
    marked = {step.source().lines[k].strip() for k in step.source().marks}
    taken, other = ("gx = g * 3.0", "gx = g * 2.0") if triple else ("gx = g * 2.0", "gx = g * 3.0")
    assert taken in marked and other not in marked and "return gx, None" in marked
    assert other in {graph.backward_source(_Branchy).lines[k].strip() for k in graph.backward_source(_Branchy).marks}
