"""The code that ran: each step's backward source, read from the engine's files at run time, with the
line that produced each input's gradient marked."""
from __future__ import annotations

import importlib
import linecache
import sys
from pathlib import Path

import pytest

import tinygrad_lab as tl
from tinygrad_lab import graph
from tinygrad_lab.graph.source import backward_source

from .test_explain import PROGRAMS, Cube, _step_of

REPO = Path(tl.__file__).resolve().parents[1]


@pytest.mark.parametrize("op", sorted(PROGRAMS))
def test_every_gradient_sent_has_its_line_and_the_lines_are_the_files(op):
    _, step = _step_of(PROGRAMS[op](), op)
    source = step.source()
    assert source is not None and source.name.endswith("backward"), op
    path = REPO / source.file
    for k, line in enumerate(source.lines):  # the text shown is the file's, at the line numbers shown
        assert linecache.getline(str(path), source.start + k).rstrip("\n").endswith(line.strip()), (op, k)
    marked = {a for args in source.marks.values() for a in args}
    for helper in source.helpers:
        marked |= {a for args in helper.marks.values() for a in args}
    for _, arg, g in step.sends:
        if g is not None:
            assert arg.split("[")[0] in marked, f"{op}: no line marked for grad {arg}\n{source}"


def test_mul_marks_one_line_per_argument():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    w = tl.tensor([3.0, 4.0], requires_grad=True)
    _, step = _step_of((x * w).sum(), "Mul")
    source = step.source()
    lines = {args: source.lines[k].strip() for k, args in source.marks.items()}
    assert lines[("a",)].startswith("return") and "Mul.apply(g, b)" in lines[("a",)]
    assert "Mul.apply(g, a)" in lines[("b",)]
    assert str(source).splitlines()[0] == f"Mul.backward  (tinygrad_lab/ops/elementwise.py:{source.start})"


def test_a_generated_op_shows_the_function_it_calls():
    _, step = _step_of(tl.tensor([0.5], requires_grad=True).exp().sum(), "Exp")
    source = step.source()
    assert [h.name.split(" = ")[0] for h in source.helpers] == ["grad"]
    helper = source.helpers[0]
    assert any("Exp" in line for line in helper.lines) and set(helper.marks.values()) == {("x",)}


def test_a_learners_function_shows_its_own_code():
    _, step = _step_of(Cube.apply(tl.tensor([2.0], requires_grad=True)).sum(), "Cube")
    source = step.source()
    assert source.file == "test_explain.py" and source.name == "Cube.backward"
    # the returned name, and the line that assigned it
    assert [source.lines[k].strip() for k in source.marks] == ["grad = g * 3 * x * x", "return grad"]


def test_the_source_is_read_when_asked(tmp_path, monkeypatch):
    """Never cached line numbers: edit the file, reload, and the lines shown follow."""
    body = ('from tinygrad_lab.autograd import Function\n\n'
            'class Twice(Function):\n'
            '    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n\n'
            '    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n')
    module = tmp_path / "twice_op.py"
    module.write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    import twice_op
    first = backward_source(twice_op.Twice)
    module.write_text("# a comment\n# and another\n" + body)
    linecache.checkcache(str(module))
    importlib.reload(twice_op)
    second = backward_source(twice_op.Twice)
    assert second.start == first.start + 2 and second.lines == first.lines
    assert [second.lines[k].strip() for k in second.marks] == ["return g * 2"]
    sys.modules.pop("twice_op", None)


def test_varargs_and_none_runs():
    source = _step_of(PROGRAMS["Cat"](), "Cat")[1].source()
    assert set(source.marks.values()) == {("tensors",)}
    sign = _step_of(PROGRAMS["Sign"](), "Sign")[1].source()
    assert set(sign.marks.values()) == {("x",)}  # (zeros_like(g),) + (None,) * k marks only x


def test_a_leaf_has_no_backward():
    stepper = graph.BackwardStepper(tl.tensor([1.0], requires_grad=True) * 2.0)
    stepper.run()
    assert stepper.history[-1].op == "AccumulateGrad" and stepper.history[-1].source() is None
