"""The course notebooks as files (nbval runs them; this checks how they are committed):
executed, stripped of widget state, on the python3 kernel, using only the public API,
with enough outputs checked to make the test meaningful."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
ALL = sorted(NOTEBOOKS.glob("*.ipynb")) + sorted((NOTEBOOKS / "exercises").glob("*.ipynb"))
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_course_has_its_lessons_and_exercises():
    numbers = [int(p.name[:2]) for p in LESSONS]
    assert len(numbers) >= 12, "lessons are missing"
    assert numbers == list(range(len(numbers))), f"lessons must be numbered consecutively from 00, got {numbers}"
    assert len(list((NOTEBOOKS / "exercises").glob("*.ipynb"))) >= 6


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.relative_to(NOTEBOOKS).as_posix())
def test_notebook_is_committed_executed_and_stripped(path):
    nb = _load(path)
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert "widgets" not in nb["metadata"], "widget state is committed: run `make notebooks` (nbstripout)"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    answers = [c for c in code if "concept-check" in _tags(c)]
    assert code and all(c["execution_count"] is not None for c in code if c not in answers), \
        "not executed: run `make notebooks`"
    assert all(not c["outputs"] for c in answers), \
        "a concept check's answer is committed (a student would see it before predicting): run `make notebooks`"
    source = "\n".join("".join(c["source"]) for c in code)
    private = re.findall(r"tinygrad_lab(?:\.\w+)*\._\w+", source)
    assert not private, f"uses private names: {private}"


def _tags(cell: dict) -> list:
    return cell.get("metadata", {}).get("tags", [])


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lessons_check_what_they_teach(path):
    """Outputs that teach are compared by nbval (nbval-check-output); each lesson also has a concept check,
    predict then run, whose answer cell nbval runs but which is committed without its output."""
    cells = _load(path)["cells"]
    tagged = [c for c in cells if c["cell_type"] == "code" and "nbval-check-output" in _tags(c)]
    assert len(tagged) >= 2, "tag the cells whose output teaches something with nbval-check-output"
    checks = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "concept-check" in _tags(c)]
    assert checks, "a lesson has a concept check: a prediction cell, then the cell tagged concept-check"
    for i in checks:
        after = "".join(cells[i + 1]["source"]) if i + 1 < len(cells) else ""
        assert "Worked answer" in after, "the worked answer follows the concept check's cell"
