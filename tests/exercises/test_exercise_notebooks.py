"""What every exercise in notebooks/exercises/ must provide so that the course's checks apply to it:
nbgrader cells (solutions between markers, locked tests with points, unique ids), tests that
nbgrader can put back when a student deletes them, and its gaming attempts in gamed.py."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from .gamed import GAMED

SOURCE = Path(__file__).resolve().parents[2] / "notebooks" / "exercises"
EXERCISES = sorted(p.stem for p in SOURCE.glob("*.ipynb"))


def cells(exercise: str) -> list[tuple[str, dict, str]]:
    """(grade_id, nbgrader metadata, source) of each nbgrader cell, in order."""
    nb = nbformat.read(SOURCE / f"{exercise}.ipynb", as_version=4)
    return [(c.metadata["nbgrader"]["grade_id"], c.metadata["nbgrader"], c.source)
            for c in nb.cells if "nbgrader" in c.metadata]


def test_there_are_exercises():
    assert len(EXERCISES) >= 6


@pytest.mark.parametrize("exercise", EXERCISES)
def test_solutions_and_locked_tests_with_points(exercise):
    ids = [i for i, _, _ in cells(exercise)]
    assert len(ids) == len(set(ids)), "grade_ids must be unique"
    solutions = [src for _, m, src in cells(exercise) if m.get("solution")]
    assert solutions and all("### BEGIN SOLUTION" in s and "### END SOLUTION" in s for s in solutions)
    tests = [(m, src) for _, m, src in cells(exercise) if m.get("grade") and not m.get("solution")]
    assert tests, "no graded test cell"
    for m, src in tests:
        assert m.get("locked") and m.get("points", 0) > 0, m
        # a test imports its check itself: a student's cell that rebinds the name cannot change what runs
        assert re.search(r"^from tinygrad_lab\.exercises import \w+", src, flags=re.M), src


@pytest.mark.parametrize("exercise", EXERCISES)
def test_a_deleted_test_can_be_put_back(exercise):
    """nbgrader's autograde puts a deleted test back after the nbgrader cell before it, which must be a
    solution or another test (with a locked instruction cell there, autograde fails): instructions
    between a solution and its tests are plain markdown cells."""
    seq = cells(exercise)
    for (prev, m_prev, _), (grade_id, m, _) in zip(seq, seq[1:]):
        if m.get("grade") and not m.get("solution"):
            assert m_prev.get("grade") or m_prev.get("solution"), f"{grade_id} follows the locked cell {prev}"


def test_every_exercise_declares_a_gaming_attempt():
    missing = [e for e in EXERCISES if not GAMED.get(e)]
    assert not missing, (f"add a gaming attempt for {', '.join(missing)} to tests/exercises/gamed.py: the "
                         f"library's own implementation where the exercise is to write it")
    assert sorted(GAMED) == EXERCISES, "gamed.py names exercises that do not exist"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_gaming_attempts_fill_in_the_exercises_solution_cells(exercise):
    solutions = {i: src for i, m, src in cells(exercise) if m.get("solution")}
    for attempt, replaced in GAMED.get(exercise, {}).items():
        assert replaced and set(replaced) <= set(solutions), f"{attempt!r}: solution cells are {sorted(solutions)}"
        for grade_id, source in replaced.items():
            assert source.strip() != solutions[grade_id].strip(), f"{attempt!r} hands in the solution itself"
