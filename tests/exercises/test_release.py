"""`tinygrad-lab exercises release`: student versions have stubs instead of solutions, unchanged
tests and no outputs, their graded cells fail while the solutions' pass, and the source is safe."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tinygrad_lab.cli import main
from tinygrad_lab.exercises.release import BEGIN, END, release, release_notebook, strip_solutions

SOURCE = Path(__file__).resolve().parents[2] / "notebooks" / "exercises"
NOTEBOOKS = sorted(p.name for p in SOURCE.glob("*.ipynb"))


def nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release")
    assert main(["exercises", "release", "--source", str(SOURCE), "--out", str(out)]) == 0
    return out


def test_there_are_six_graded_notebooks():
    assert len(NOTEBOOKS) >= 6
    for name in NOTEBOOKS:
        cells = nbformat.read(SOURCE / name, as_version=4).cells
        assert any(nbgrader(c).get("solution") for c in cells), name
        assert all(nbgrader(c).get("points", 0) > 0 and nbgrader(c).get("locked")
                   for c in cells if nbgrader(c).get("grade")), name
        ids = [nbgrader(c)["grade_id"] for c in cells if nbgrader(c)]
        assert len(ids) == len(set(ids)), f"{name}: grade_ids must be unique"


def test_strip_solutions_keeps_the_code_around_and_the_indentation():
    src = f"def f(x):\n    {BEGIN}\n    return 2 * x\n    {END}\n\nprint(f)"
    assert strip_solutions(src, "# YOUR CODE HERE\nraise NotImplementedError()") == (
        "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n\nprint(f)")


@pytest.mark.parametrize("src", [f"{BEGIN}\nx = 1", f"x = 1\n{END}", f"{BEGIN}\n{BEGIN}\n{END}\n{END}"])
def test_strip_solutions_rejects_unpaired_markers(src):
    with pytest.raises(ValueError):
        strip_solutions(src, "stub")


def test_markers_outside_a_solution_cell_are_refused():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"{BEGIN}\nsecret = 1\n{END}")])
    with pytest.raises(ValueError, match="not a solution cell"):
        release_notebook(nb)


def test_a_solution_cell_without_markers_is_replaced_whole():
    cell = nbformat.v4.new_code_cell("answer = 42", metadata={"nbgrader": {"solution": True, "grade_id": "a"}})
    out = release_notebook(nbformat.v4.new_notebook(cells=[cell]))
    assert out.cells[0].source == "# YOUR CODE HERE\nraise NotImplementedError()"
    assert cell.source == "answer = 42"  # the input notebook is left as it was


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_release_strips_solutions_and_outputs_and_keeps_the_rest(released, name):
    solution = nbformat.read(SOURCE / name, as_version=4)
    student = nbformat.read(released / name, as_version=4)
    assert len(student.cells) == len(solution.cells)
    for s, t in zip(solution.cells, student.cells):
        assert t.metadata == s.metadata and t.cell_type == s.cell_type
        assert BEGIN not in t.source and END not in t.source
        if nbgrader(s).get("solution"):
            assert "raise NotImplementedError()" in t.source
            solved = s.source.split(BEGIN)[1].split(END)[0]
            assert all(line.strip() not in t.source for line in solved.splitlines() if line.strip())
        else:
            assert t.source == s.source
        if t.cell_type == "code":
            assert t.outputs == [] and t.execution_count is None


def test_release_refuses_to_write_into_its_source(tmp_path, capsys):
    src = tmp_path / "exercises"
    src.mkdir()
    (src / "a.ipynb").write_bytes((SOURCE / NOTEBOOKS[0]).read_bytes())
    before = (src / "a.ipynb").read_bytes()
    for out in (src, src / "student", tmp_path / "exercises" / ".." / "exercises"):
        with pytest.raises(ValueError, match="source folder"):
            release(src, out)
        assert main(["exercises", "release", "--source", str(src), "--out", str(out)]) == 1
        assert "refusing" in capsys.readouterr().err
    assert (src / "a.ipynb").read_bytes() == before
    assert sorted(p.name for p in src.iterdir()) == ["a.ipynb"]


def test_release_leaves_no_temporary_files(released):
    assert sorted(p.name for p in released.iterdir()) == NOTEBOOKS


def graded_errors(nb) -> dict[str, bool]:
    """grade_id -> whether that graded cell raised, after running `nb` to the end (errors allowed)."""
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(SOURCE)}}).execute()
    return {nbgrader(c)["grade_id"]: any(o.output_type == "error" for o in c.outputs)
            for c in nb.cells if nbgrader(c).get("grade")}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_student_versions_fail_every_graded_cell(released, name):
    errors = graded_errors(nbformat.read(released / name, as_version=4))
    assert errors and all(errors.values()), errors


def test_the_solution_passes_its_graded_cells():
    errors = graded_errors(nbformat.read(SOURCE / NOTEBOOKS[0], as_version=4))
    assert errors and not any(errors.values()), errors
