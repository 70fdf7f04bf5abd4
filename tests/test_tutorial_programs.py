"""Every program in benchmarks/programs/ (our own versions of PyTorch's official tutorials and
examples) runs on tinygrad_lab with only the import changed, and, with PyTorch installed, gives
PyTorch's loss where both start from the same weights and data (`SAME_START = True` in the
program), or otherwise a finite loss that went down over the steps, like PyTorch's."""
from __future__ import annotations

import functools
import math
import runpy
from pathlib import Path

import pytest

import tinygrad_lab as tl

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
runner = runpy.run_path(str(BENCHMARKS / "programs.py"))
NAMES = runner["discover"]()

# program -> why its returned loss need not fall within STEPS steps (it is then checked finite only)
NOT_MONOTONE = {
    "word_language_model": "the mean loss over 2 batches of a 1,000-word vocabulary stays at ln(1000)",
    "word_language_model_transformer": "the mean loss over 2 batches of a 1,000-word vocabulary stays at ln(1000)",
    "examples_dynamic_net": "each step's loss depends on the random depth drawn for it (x^5 terms are large)",
    "dcgan": "a GAN's losses do not fall: the generator and the discriminator play against each other",
}
# program -> the missing piece in tinygrad_lab that stops it (a strict xfail)
MISSING: dict[str, str] = {}


def _marks(name: str):
    return [pytest.mark.xfail(strict=True, reason=MISSING[name])] if name in MISSING else []


PARAMS = [pytest.param(name, marks=_marks(name), id=name) for name in NAMES]


def program(name: str):
    return runner["load"](name)


@functools.lru_cache(maxsize=None)
def ours(name: str) -> float:
    prog = program(name)
    return prog.run(tl, prog.STEPS)


@pytest.mark.parametrize("name", PARAMS)
def test_program_runs_on_tinygrad_lab_and_learns(name):
    prog = program(name)
    last = ours(name)
    assert math.isfinite(last), f"{name}: loss {last}"
    if name not in NOT_MONOTONE:
        first = prog.run(tl, 1)
        assert last < first, f"{name}: loss {first} after 1 step, {last} after {prog.STEPS}"


@pytest.mark.parametrize("name", PARAMS)
def test_program_gives_pytorchs_loss(name, torch):
    prog = program(name)
    theirs = prog.run(torch, prog.STEPS)
    if getattr(prog, "SAME_START", False):
        assert ours(name) == pytest.approx(theirs, rel=getattr(prog, "RTOL", 1e-4), abs=1e-6)
    else:  # different random draws: the same scale, no closer
        assert math.isfinite(theirs) and ours(name) == pytest.approx(theirs, rel=0.5)


def test_every_program_says_which_tutorial_it_follows():
    for name in NAMES:
        prog = program(name)
        assert prog.__doc__ and prog.STEPS <= prog.FULL_STEPS and callable(prog.run), name
