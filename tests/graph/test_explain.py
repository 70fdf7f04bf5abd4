"""The stepper's explanations: for every op in the explanation table, a real backward step of that op
lists every number its formulas use (the test fails if one is missing), and the numbers are the
engine's own (checked against finite differences, or by hand)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import graph, nn
from tinygrad_lab.autograd import Function
from tinygrad_lab.graph.explain import RULES, VOCABULARY, explain, formula_symbols
from tinygrad_lab.nn import functional as F


class Cube(Function):
    """A learner's Function: x**3, whose backward the stepper can only show generically."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        grad = g * 3 * x * x
        return grad


def _v(*values, grad=True):
    return tl.tensor(list(values), requires_grad=grad)


def _m(rows, grad=True):
    return tl.tensor(rows, requires_grad=grad)


# one small program per op of the table: each builds a loss whose backward runs that op
PROGRAMS = {
    "Add": lambda: (_v(1.0, 2.0) + _v(3.0, 4.0)).sum(),
    "Sub": lambda: (_v(1.0, 2.0) - _v(3.0, 5.0)).sum(),
    "Mul": lambda: (_v(1.0, 2.0) * 3.0).sum(),
    "Div": lambda: (_v(1.0, 2.0) / _v(4.0, 8.0)).sum(),
    "Pow": lambda: (_v(1.5, 2.0) ** _v(2.0, 3.0)).sum(),
    "Maximum": lambda: tl.maximum(_v(1.0, 5.0), _v(3.0, 5.0)).sum(),
    "Minimum": lambda: tl.minimum(_v(1.0, 5.0), _v(3.0, 5.0)).sum(),
    "Neg": lambda: (-_v(1.0, 2.0)).sum(),
    "Exp": lambda: _v(0.0, 1.0).exp().sum(),
    "Log": lambda: _v(1.0, 2.0).log().sum(),
    "Log1p": lambda: _v(0.0, 1.0).log1p().sum(),
    "Sqrt": lambda: _v(1.0, 4.0).sqrt().sum(),
    "Rsqrt": lambda: _v(1.0, 4.0).rsqrt().sum(),
    "Sin": lambda: _v(0.0, 1.0).sin().sum(),
    "Cos": lambda: _v(0.0, 1.0).cos().sum(),
    "Tanh": lambda: _v(0.0, 1.0).tanh().sum(),
    "Sigmoid": lambda: _v(0.0, 1.0).sigmoid().sum(),
    "Abs": lambda: _v(-1.0, 2.0).abs().sum(),
    "Relu": lambda: _v(-1.0, 2.0).relu().sum(),
    "Erf": lambda: _v(0.0, 1.0).erf().sum(),
    "Elu": lambda: F.elu(_v(-1.0, 2.0), alpha=0.5).sum(),
    "LogSigmoid": lambda: F.logsigmoid(_v(-1.0, 2.0)).sum(),
    "BinaryCrossEntropy": lambda: F.binary_cross_entropy(_v(0.2, 0.7), _v(0.0, 1.0)),
    "Clamp": lambda: _v(-2.0, 0.5, 3.0).clamp(-1.0, 1.0).sum(),
    "Where": lambda: tl.where(tl.tensor([True, False]), _v(1.0, 2.0), _v(3.0, 4.0)).sum(),
    "Sign": lambda: _v(-1.0, 2.0).sign().sum(),
    "Floor": lambda: _v(-1.5, 2.5).floor().sum(),
    "Ceil": lambda: _v(-1.5, 2.5).ceil().sum(),
    "Trunc": lambda: _v(-1.5, 2.5).trunc().sum(),
    "Round": lambda: _v(-1.5, 2.4).round().sum(),
    "Clone": lambda: _v(1.0, 2.0).clone().sum(),
    "Contiguous": lambda: _m([[1.0, 2.0], [3.0, 4.0]]).t().contiguous().sum(),
    "Cast": lambda: _v(1.0, 2.0).double().sum(),
    "ToDevice": lambda: _v(1.0, 2.0).to("standin").sum(),
    "Sum": lambda: _m([[1.0, 2.0], [3.0, 4.0]]).sum(0).sum(),
    "Mean": lambda: _m([[1.0, 2.0], [3.0, 4.0]]).mean(1).sum(),
    "SumTo": lambda: tl.graph_sum_to_program(),
    "Prod": lambda: _v(2.0, 3.0, 4.0).prod(),
    "AMax": lambda: _v(1.0, 3.0, 3.0).amax(),
    "AMin": lambda: _v(1.0, 1.0, 3.0).amin(),
    "MaxDim": lambda: _m([[1.0, 3.0], [4.0, 2.0]]).max(dim=1).values.sum(),
    "MinDim": lambda: _m([[1.0, 3.0], [4.0, 2.0]]).min(dim=1).values.sum(),
    "Norm2": lambda: _v(3.0, 4.0).norm(),
    "Matmul": lambda: (_m([[1.0, 2.0], [3.0, 4.0]]) @ _m([[1.0], [-1.0]])).sum(),
    "Linear": lambda: F.linear(_m([[1.0, 2.0]]), _m([[0.5, -1.0], [2.0, 1.0]]), _v(0.1, 0.2)).sum(),
    "Reshape": lambda: _v(1.0, 2.0, 3.0, 4.0).reshape(2, 2).sum(0).sum(),
    "View": lambda: _v(1.0, 2.0, 3.0, 4.0).view(2, 2).sum(0).sum(),
    "Squeeze": lambda: _m([[1.0, 2.0]]).squeeze(0).sum(),
    "Unsqueeze": lambda: _v(1.0, 2.0).unsqueeze(0).sum(),
    "Flatten": lambda: _m([[1.0, 2.0], [3.0, 4.0]]).flatten().sum(),
    "Permute": lambda: _m([[1.0, 2.0], [3.0, 4.0]]).permute(1, 0).sum(0).sum(),
    "Transpose": lambda: _m([[1.0, 2.0], [3.0, 4.0]]).transpose(0, 1).sum(0).sum(),
    "Expand": lambda: _m([[1.0], [2.0]]).expand(2, 3).sum(),
    "Cat": lambda: tl.cat([_v(1.0, 2.0), _v(3.0)]).sum(),
    "Split": lambda: _v(1.0, 2.0, 3.0).split(2)[0].sum(),
    "Index": lambda: _v(1.0, 2.0, 3.0)[tl.tensor([0, 2, 2])].sum(),
    "BasicIndex": lambda: _v(1.0, 2.0, 3.0)[1:].sum(),
    "Gather": lambda: _m([[1.0, 2.0], [3.0, 4.0]]).gather(1, tl.tensor([[1], [0]])).sum(),
    "IndexPut": lambda: tl.graph_index_put_program(),
    "Pad": lambda: F.pad(_v(1.0, 2.0), (1, 2)).sum(),
    "Flip": lambda: _v(1.0, 2.0, 3.0).flip(0).sum(0),
    "Softmax": lambda: (F.softmax(_v(1.0, 2.0, 3.0), dim=0) * tl.tensor([1.0, 0.0, 0.0])).sum(),
    "LogSoftmax": lambda: (F.log_softmax(_v(1.0, 2.0, 3.0), dim=0) * tl.tensor([1.0, 0.0, 0.0])).sum(),
    "NllLoss": lambda: F.nll_loss(_m([[-1.0, -2.0], [-0.5, -3.0]]), tl.tensor([1, 0])),
    "Conv": lambda: F.conv2d(_m([[[[1.0, 2.0], [3.0, 4.0]]]]), _m([[[[1.0]]]]), _v(0.5)).sum(),
    "MaxPool": lambda: F.max_pool2d(_m([[[[1.0, 2.0], [3.0, 4.0]]]]), 2).sum(),
    "AvgPool": lambda: F.avg_pool2d(_m([[[[1.0, 2.0], [3.0, 4.0]]]]), 2).sum(),
}


def _sum_to():
    from tinygrad_lab.ops.reduce import sum_to
    return sum_to(_m([[1.0, 2.0], [3.0, 4.0]]), (1, 2)).sum()


def _index_put():
    x = _v(1.0, 2.0, 3.0)
    y = x * 1.0
    y[1] = _v(5.0)[0]
    return y.sum()


PROGRAMS["SumTo"] = _sum_to
PROGRAMS["IndexPut"] = _index_put


def _step_of(loss, op: str):
    stepper = graph.BackwardStepper(loss)
    while not stepper.done:
        step = stepper.step()
        if step.op == op:
            return stepper, step
    raise AssertionError(f"the backward pass of the program for {op} never ran {op}")


def test_every_op_of_the_table_has_a_program():
    assert set(PROGRAMS) == set(RULES)


@pytest.mark.parametrize("op", sorted(RULES))
def test_every_number_a_formula_names_is_listed(op):
    """Each symbol of each formula (operands, Python numbers, exponents, saved outputs, shapes, what the
    forward kept) has a number; none is 'not available'; every input gradient is listed."""
    stepper, step = _step_of(PROGRAMS[op](), op)
    text = step.explain()
    names = {n.name for n in text.numbers}
    assert text.formulas, op
    for formula in text.formulas:
        missing = formula_symbols(formula) - names
        assert not missing, f"{op}: {formula!r} names {sorted(missing)}, which the numbers do not list"
    assert [n.name for n in text.numbers if n.role == "missing"] == [], (op, [str(n) for n in text.numbers])
    assert "g" in names or "g[0]" in names
    sent = [f"grad {arg}" for _, arg, g in step.sends]
    assert [n.name for n in text.numbers if n.name.startswith("grad ")] == sent


def test_formula_symbols_skips_words_and_the_forward():
    assert formula_symbols("mul: ∂(a * b)/∂a = b, so grad a = g * b") == {"b", "g"}
    assert formula_symbols("sum: grad x = g expanded from g.shape back to x.shape") == {"g", "g.shape", "x.shape"}
    assert formula_symbols("cube: grad x = Cube.backward(g)[0]") == {"g"}
    assert formula_symbols("softmax: grad x = out * (g - (g * out).sum(dim))") == {"out", "g", "dim"}
    assert "where" in VOCABULARY and "x" not in VOCABULARY


def test_mul_by_a_python_number_shows_both_operands_and_checks_by_hand():
    """The issue's example: grad a = g * b with b a Python number; -0.846 * 0.5 must add up."""
    w = tl.tensor(0.5, requires_grad=True)
    u = (w * 2.0).tanh()
    stepper = graph.BackwardStepper(u)
    stepper.step()
    mul = stepper.step().explain()
    numbers = {n.name: n for n in mul.numbers}
    assert numbers["b"].text == "2.0" and numbers["b"].role == "number"
    assert numbers["a"].text == "0.5000" and numbers["a"].label == "w" and numbers["a"].role == "saved"
    g = 1 - np.tanh(1.0) ** 2  # d tanh(u)/du at u = 1, by hand
    assert float(numbers["g"].text) == pytest.approx(g, abs=1e-4)
    assert float(numbers["grad a"].text) == pytest.approx(2.0 * g, abs=1e-4)
    assert mul.checks == (f"grad a = g * b = {numbers['g'].text} * 2.0 = {numbers['grad a'].text}",)
    assert "b = 2.0  (a Python number)" in str(mul)


def test_pow_shows_its_exponent_and_tanh_its_saved_output():
    x = tl.tensor(0.3, requires_grad=True)
    y = x.tanh() ** 3
    stepper = graph.BackwardStepper(y)
    pow_ = stepper.step().explain()
    numbers = {n.name: n.text for n in pow_.numbers}
    assert numbers["b"] == "3" and float(numbers["a"]) == pytest.approx(np.tanh(0.3), abs=1e-4)
    assert float(numbers["grad a"]) == pytest.approx(3 * np.tanh(0.3) ** 2, abs=1e-4)
    tanh = stepper.step().explain()
    numbers = {n.name: n for n in tanh.numbers}
    assert numbers["out"].role == "saved" and float(numbers["out"].text) == pytest.approx(np.tanh(0.3), abs=1e-4)


def test_shapes_of_reductions_and_broadcasts():
    a = tl.tensor([[1.0], [2.0]], requires_grad=True)   # (2, 1), broadcast against (3,)
    loss = (a + tl.tensor([1.0, 2.0, 3.0])).mean()
    stepper = graph.BackwardStepper(loss)
    mean = stepper.step().explain()
    numbers = {n.name: n.text for n in mean.numbers}
    assert numbers["x.shape"] == "[2, 3]" and numbers["g.shape"] == "[]" and numbers["n"] == "6"
    add = stepper.step().explain()
    assert add.formulas == ("add: ∂(a + b)/∂a = 1, so grad a = g, summed from g.shape down to a.shape",)
    numbers = {n.name: n.text for n in add.numbers}
    assert numbers["a.shape"] == "[2, 1]" and numbers["g.shape"] == "[2, 3]"
    assert numbers["grad a"] == "[[0.5000], [0.5000]]"  # 3 columns of 1/6 summed


def test_learners_names_label_operands_and_leaves():
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    x = tl.tensor([3.0, 4.0])
    loss = (w * x).sum()
    stepper = graph.BackwardStepper(loss)
    stepper.step()
    mul = stepper.step().explain()
    labels = {n.name: n.label for n in mul.numbers}
    assert labels["a"] == "w" and labels["b"] == "x" and labels["grad a"] == "w"
    leaf = stepper.step().explain()
    assert leaf.formulas == ("accumulate: w.grad += g",)
    assert [n.name for n in leaf.numbers] == ["g", "w.grad"]


def test_numbers_are_the_engines_gradients():
    """The gradients an explanation lists are the ones the engine sent (compared with backward())."""
    x = tl.tensor([0.2, -0.4, 0.9], requires_grad=True)
    loss = (x.sigmoid() * x).sum()
    stepper = graph.BackwardStepper(loss)
    stepper.run()
    listed = [n.text for n in explain(stepper.history[-1].raw, stepper.graph).numbers if n.name == "x.grad"]
    x2 = tl.tensor([0.2, -0.4, 0.9], requires_grad=True)
    (x2.sigmoid() * x2).sum().backward()
    assert listed == [" ".join(repr(x2.grad)[len("tensor("):-1].split())]


def test_big_tensors_are_shown_by_shape_first_values_and_range():
    x = tl.ones(5, 5, requires_grad=True)
    stepper = graph.BackwardStepper((x * 2.0).sum())
    stepper.step()
    numbers = {n.name: n.text for n in stepper.step().explain().numbers}
    assert numbers["g"] == "shape [5, 5]: [1, 1, 1, 1, ...], min 1, max 1"
    assert numbers["grad a"] == "shape [5, 5]: [2, 2, 2, 2, ...], min 2, max 2"


def test_user_function_gets_a_generic_explanation():
    x = tl.tensor([2.0], requires_grad=True)
    stepper = graph.BackwardStepper(Cube.apply(x).sum())
    stepper.step()
    text = stepper.step().explain()
    assert text.op == "Cube" and text.formulas == ("cube: grad x = Cube.backward(g)[0]",)
    numbers = {n.name: n.text for n in text.numbers}
    assert numbers == {"g": "[1.]", "x": "[2.]", "grad x": "[12.]"}


def test_no_glyph_that_default_fonts_lack():
    """⇒, superscript letters and the like render blank in common monospace fonts."""
    for name, rule in RULES.items():
        text = " ".join([rule.words, rule.expr, *rule.local.values(), *rule.vjp.values()])
        assert not re.search(r"[⇒ᵀˣ‖⊙∇σ]", text), name


def test_an_nn_module_step_names_parameters():
    model = nn.Linear(2, 1)
    loss = model(tl.tensor([[1.0, 2.0]])).sum()
    stepper = graph.BackwardStepper(loss, params=dict(model.named_parameters()))
    stepper.step()
    linear = stepper.step().explain()
    labels = {n.name: n.label for n in linear.numbers}
    assert labels["w"] == "weight" and labels["grad b"] == "bias"
