"""benchmarks/bytecodes.py: the per-function counts are exact, and the report covers the engine."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bytecodes():
    spec = importlib.util.spec_from_file_location("bytecodes", ROOT / "benchmarks" / "bytecodes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inner(x):
    return x * 2 + 1


def outer():
    return inner(1) + inner(2)


def key(fn) -> str:
    code = fn.__code__
    return f"test_bytecodes.py:{code.co_firstlineno}:{code.co_name}"


def test_counts_calls_and_bytecodes_per_function(bytecodes):
    once, once_calls = bytecodes.count(lambda: inner(1))
    ops, calls = bytecodes.count(outer)
    assert once_calls[key(inner)] == 1
    assert calls[key(inner)] == 2 and calls[key(outer)] == 1
    assert ops[key(inner)] == 2 * once[key(inner)] > 0  # the same body twice: twice the bytecodes


def test_restores_the_previous_tracer(bytecodes):
    seen = []

    def tracer(frame, event, arg):
        seen.append(event)

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        bytecodes.count(outer)
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(previous)


def test_report_counts_the_engine(bytecodes, capsys):
    bytecodes.main(["elementwise:4"])
    out = capsys.readouterr().out
    head = out.splitlines()[0]
    assert head.startswith("elementwise:4: ") and "Python calls per step" in head
    total = int(head.split()[1])
    assert total > 1000  # a recorded forward and a backward of four ops
    assert "backward_steps" in out and "apply" in out
