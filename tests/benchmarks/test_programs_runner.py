"""benchmarks/programs.py, the runner that times real programs under both libraries, and the
programs themselves (benchmarks/programs/): each runs under tinygrad_lab at its CI size."""
from __future__ import annotations

import math
import runpy
from pathlib import Path
from types import SimpleNamespace

import pytest

import tinygrad_lab as tl
from tinygrad_lab.bench.timer import Timer

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
runner = runpy.run_path(str(BENCHMARKS / "programs.py"))


class FakeClock:
    """A clock that only moves when a fake library does work."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _fake_libs(clock: FakeClock, ours: float, theirs: float) -> dict:
    def lib(cost):
        return SimpleNamespace(work=lambda steps: setattr(clock, "now", clock.now + cost * steps))
    return {"tinygrad_lab": lib(ours), "torch": lib(theirs)}


PROGRAM = '''
STEPS = 2
FULL_STEPS = 10

def run(torch, steps=STEPS):
    torch.work(steps)
    return float(steps)
'''

BROKEN = '''
STEPS = FULL_STEPS = 1

def run(torch, steps=STEPS):
    return torch.missing_name(steps)
'''


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "fast.py").write_text(PROGRAM)
    (tmp_path / "broken.py").write_text(BROKEN)
    (tmp_path / "_helper.py").write_text("X = 1\n")
    return tmp_path


def test_discover_lists_programs_not_helpers(folder):
    assert runner["discover"](folder) == ["broken", "fast"]


def test_time_program_gives_medians_and_the_ratio(folder):
    clock = FakeClock()
    libs = _fake_libs(clock, ours=0.3, theirs=0.2)
    result = runner["time_program"](runner["load"]("fast", folder), libs, repeats=3,
                                    timer=Timer(min_sample_s=0.0, repeats=3, warmup=0, clock=clock))
    assert result.error is None and result.steps == 10
    assert result.seconds == pytest.approx({"tinygrad_lab": 3.0, "torch": 2.0})
    assert result.ratio == pytest.approx(1.5)
    assert result.values == {"tinygrad_lab": 10.0, "torch": 10.0}


def test_a_failing_program_is_reported_and_left_out_of_the_mean(folder):
    clock = FakeClock()
    libs = _fake_libs(clock, ours=0.1, theirs=0.2)
    timer = Timer(min_sample_s=0.0, repeats=3, warmup=0, clock=clock)
    results = [runner["time_program"](runner["load"](name, folder), libs, 3, timer=timer) for name in ("broken", "fast")]
    assert results[0].error.startswith("tinygrad_lab: AttributeError:") and "broken.py:5" in results[0].error
    lines = runner["table"](results)
    assert "broken" in lines[1] and "FAILS" in lines[1]
    assert "0.50x" in lines[2] and "10 / 10" in lines[2]
    assert lines[3].startswith("geometric mean 0.50x PyTorch") and ": met; 1 of 2 programs timed" in lines[3]


def test_the_summary_says_when_a_target_is_missed():
    R = runner["Result"]
    results = [R("a", 1, {"tinygrad_lab": 1.0, "torch": 1.0}, {"tinygrad_lab": 0.0, "torch": 0.0}),
               R("b", 1, {"tinygrad_lab": 1.6, "torch": 1.0}, {"tinygrad_lab": 0.0, "torch": 0.0})]
    summary = runner["table"](results)[-1]
    assert f"geometric mean {math.sqrt(1.6):.2f}x" in summary and "worst 1.60x" in summary and "MISSED" in summary


PROGRAMS = runner["discover"]()


@pytest.mark.parametrize("name", PROGRAMS)
def test_each_program_runs_under_tinygrad_lab(name):
    program = runner["load"](name)
    assert isinstance(program.STEPS, int) and isinstance(program.FULL_STEPS, int) and program.STEPS <= program.FULL_STEPS
    value = program.run(tl, program.STEPS)
    assert isinstance(value, float) and math.isfinite(value)


def test_the_polynomial_fit_gives_pytorchs_numbers(torch):
    program = runner["load"]("polynomial_autograd")
    assert program.run(tl, 50) == pytest.approx(program.run(torch, 50), rel=1e-5)
