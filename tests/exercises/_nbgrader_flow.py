"""nbgrader's own flow on every exercise in notebooks/exercises/, as a course would run it.

In a temporary course folder, `tinygrad-lab exercises release` (nbgrader's generate_assignment)
makes the student versions; then these submissions go through `nbgrader autograde`:

    blank          the student version as released                  scores 0
    solution       the exercise notebook with its solutions         scores full marks
    deleted_tests  the student version with its test cells deleted   gets them back, scores 0
    gamed_<k>      each attempt of gamed.GAMED for the exercise      scores 0

The exercises are spread over the test files test_nbgrader_flow_<k>.py (pytest-xdist's
`--dist loadfile` runs each file on one worker): exercise i goes to file i mod (number of files).
A file says which it is with `SHARD = k` and imports everything from here.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tinygrad_lab.exercises import release

from .gamed import GAMED

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[1] / "notebooks" / "exercises"
EXERCISES = sorted(p.stem for p in SOURCE.glob("*.ipynb"))
N_SHARDS = len(list(HERE.glob("test_nbgrader_flow_*.py")))
# one autograde run grades a whole shard (~35 s an exercise on a quiet machine, three to a shard): more
# than the suite's 300 s per test when the machine is busy
pytestmark = pytest.mark.timeout(1200)


def nbgrader_meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def is_test(cell) -> bool:
    return bool(nbgrader_meta(cell).get("grade")) and not nbgrader_meta(cell).get("solution")


def submissions(exercise: str, course: Path) -> dict[str, nbformat.NotebookNode]:
    """student id -> the notebook that student hands in for `exercise`."""
    student = nbformat.read(course / "release" / exercise / f"{exercise}.ipynb", as_version=4)
    deleted = nbformat.from_dict(student)
    deleted.cells = [c for c in deleted.cells if not is_test(c)]
    subs = {"blank": student, "solution": nbformat.read(SOURCE / f"{exercise}.ipynb", as_version=4),
            "deleted_tests": deleted}
    for k, cells in enumerate(GAMED.get(exercise, {}).values()):
        gamed = nbformat.from_dict(student)
        for cell in gamed.cells:
            if nbgrader_meta(cell).get("grade_id") in cells:
                cell.source = cells[nbgrader_meta(cell)["grade_id"]].strip("\n")
        subs[f"gamed_{k}"] = gamed
    return subs


def pytest_generate_tests(metafunc):
    if "exercise" in metafunc.fixturenames:
        mine = EXERCISES[metafunc.module.SHARD::N_SHARDS]
        metafunc.parametrize("exercise", mine, ids=mine)


@pytest.fixture(scope="module")
def graded(request, tmp_path_factory) -> dict:
    """Releases this file's exercises in a fresh course, hands in every submission and runs
    `nbgrader autograde` once; returns {(exercise, student): (score, max_score, autograded path)}."""
    pytest.importorskip("nbgrader", reason="nbgrader is not installed (pip install 'tinygrad-lab[instructor]')")
    from nbgrader.api import Gradebook

    mine = EXERCISES[request.module.SHARD::N_SHARDS]
    course = tmp_path_factory.mktemp("course")
    release.release(course, mine, say=lambda note: None)
    for exercise in mine:
        for student, nb in submissions(exercise, course).items():
            folder = course / "submitted" / student / exercise
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{exercise}.ipynb")
    # kernels talk over IPC files in the course folder (an absolute path: a kernel runs in its notebook's
    # folder), not TCP ports: a port picked free can be taken by another test worker's kernel before this
    # one binds it ("Address already in use": a whole shard lost)
    run = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", "*", "--force", "--KernelManager.transport=ipc",
                          f"--KernelManager.ip={course / 'kernel'}"], cwd=course, capture_output=True, text=True,
                         timeout=1500)
    noise = ("| INFO]", "SAWarning", "for notebook in", "return [x for x", "Kernel is running over TCP")
    log = "\n".join(line for line in (run.stdout + run.stderr).splitlines() if not any(n in line for n in noise))
    assert run.returncode == 0, log[-6000:]
    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for exercise in mine:
            for sub in gb.assignment_submissions(exercise):
                path = course / "autograded" / sub.student.id / exercise / f"{exercise}.ipynb"
                scores[exercise, sub.student.id] = (sub.score, sub.max_score, path)
    return scores


def score(graded: dict, exercise: str, student: str) -> tuple[float, float, Path]:
    assert (exercise, student) in graded, f"{student}'s submission of {exercise} was not graded"
    return graded[exercise, student]


def failures(path: Path) -> str:
    """The errors of an autograded notebook's test cells: what a student would read."""
    nb = nbformat.read(path, as_version=4)
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.output_type == "error" and is_test(cell):
                out.append(f"[{nbgrader_meta(cell)['grade_id']}] {o.ename}: {o.evalue}")
    return "\n".join(out)


def points(exercise: str) -> float:
    nb = nbformat.read(SOURCE / f"{exercise}.ipynb", as_version=4)
    return float(sum(nbgrader_meta(c).get("points", 0) for c in nb.cells if is_test(c)))


def test_the_solution_scores_full_marks(graded, exercise):
    got, top, path = score(graded, exercise, "solution")
    assert top == points(exercise) > 0
    assert got == top, failures(path)


def test_the_blank_student_version_scores_zero(graded, exercise):
    got, top, path = score(graded, exercise, "blank")
    assert (got, top) == (0, points(exercise))
    assert "NotImplementedError" in failures(path)


def test_deleted_tests_come_back_and_score_zero(graded, exercise):
    got, top, path = score(graded, exercise, "deleted_tests")
    assert (got, top) == (0, points(exercise))
    restored = [nbgrader_meta(c)["grade_id"] for c in nbformat.read(path, as_version=4).cells if is_test(c)]
    source = [nbgrader_meta(c)["grade_id"] for c in nbformat.read(SOURCE / f"{exercise}.ipynb", as_version=4).cells
              if is_test(c)]
    assert restored == source


def test_gamed_submissions_score_zero_with_a_hint(graded, exercise):
    assert GAMED.get(exercise), f"{exercise} declares no gaming attempt in tests/exercises/gamed.py"
    for k, attempt in enumerate(GAMED[exercise]):
        got, top, path = score(graded, exercise, f"gamed_{k}")
        assert got == 0, f"{exercise}, {attempt!r} scored {got}/{top}\n{failures(path)}"
        assert re.search(r"HINT|NotImplementedError", failures(path)), failures(path)
