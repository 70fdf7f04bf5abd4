"""`tinygrad-lab exercises release`: from any folder, an nbgrader course folder with the course's
config and one assignment per exercise, whose student versions are nbgrader's own generate_assignment
output (solutions stubbed, outputs cleared, locked and checksummed cells), in readable files."""
from __future__ import annotations

import os
import runpy
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest

from tinygrad_lab.cli import main
from tinygrad_lab.exercises import release as rel

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "notebooks" / "exercises"
EXERCISES = sorted(p.stem for p in SOURCE.glob("*.ipynb"))
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"

pytest.importorskip("nbgrader", reason="nbgrader is not installed (pip install 'tinygrad-lab[instructor]')")


def nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course released by the command, run from an unrelated folder with umask 027."""
    here = tmp_path_factory.mktemp("elsewhere")
    course = tmp_path_factory.mktemp("course") / "my course"
    old_cwd, old_umask = os.getcwd(), os.umask(0o027)
    try:
        os.chdir(here)
        assert main(["exercises", "release", "--course", str(course)]) == 0
    finally:
        os.chdir(old_cwd)
        os.umask(old_umask)
    assert list(here.iterdir()) == []  # nothing written where it ran
    return course


def test_the_course_folder_is_laid_out_as_nbgrader_expects(course):
    assert (course / "nbgrader_config.py").read_bytes() == rel.CONFIG.read_bytes()
    assert (course / "gradebook.db").is_file()
    for name in EXERCISES:
        assert (course / "source" / name / f"{name}.ipynb").read_bytes() == (SOURCE / f"{name}.ipynb").read_bytes()
        assert (course / "release" / name / f"{name}.ipynb").is_file()
    assert sorted(p.name for p in (course / "release").iterdir()) == EXERCISES


def test_files_are_readable_with_modes_from_the_umask_and_no_litter(course):
    for path in course.rglob("*"):
        assert not path.name.endswith(".tmp"), path
        mode = stat.S_IMODE(path.stat().st_mode)
        if path.is_file():
            assert mode & stat.S_IRUSR and mode & stat.S_IRGRP, (path, oct(mode))
    # what we write takes its mode from the umask (027 here); nbgrader sets the release's to 0644 itself
    assert stat.S_IMODE((course / "nbgrader_config.py").stat().st_mode) == 0o640
    assert stat.S_IMODE((course / "source" / EXERCISES[0] / f"{EXERCISES[0]}.ipynb").stat().st_mode) == 0o640
    assert stat.S_IMODE((course / "release" / EXERCISES[0] / f"{EXERCISES[0]}.ipynb").stat().st_mode) == 0o644


@pytest.mark.parametrize("name", EXERCISES)
def test_student_versions_have_stubs_locked_checksummed_cells_and_no_outputs(course, name):
    solution = nbformat.read(SOURCE / f"{name}.ipynb", as_version=4)
    student = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
    assert len(student.cells) == len(solution.cells)
    for s, t in zip(solution.cells, student.cells):
        assert t.cell_type == s.cell_type
        assert BEGIN not in t.source and END not in t.source
        if nbgrader(s).get("solution"):
            assert "raise NotImplementedError()" in t.source
            solved = s.source.split(BEGIN)[1].split(END)[0]
            assert all(line.strip() not in t.source for line in solved.splitlines() if line.strip())
        else:
            assert t.source == s.source
        if nbgrader(s).get("locked"):  # instructions, setup and tests: nbgrader's lock and checksum
            assert t.metadata.get("editable") is False and t.metadata.get("deletable") is False
            assert nbgrader(t).get("checksum")
        if t.cell_type == "code":
            assert t.outputs == [] and t.execution_count is None


def test_release_is_nbgrader_generate_assignment(course, tmp_path):
    """`nbgrader generate_assignment` itself, run in a copy of the course, writes the same bytes."""
    copy = tmp_path / "course"
    shutil.copytree(course / "source", copy / "source")
    shutil.copy(course / "nbgrader_config.py", copy)
    name = EXERCISES[0]
    run = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", name], cwd=copy,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    path = Path("release") / name / f"{name}.ipynb"
    assert (copy / path).read_bytes() == (course / path).read_bytes()


def test_a_changed_test_cell_fails_nbgrader_validate(course, tmp_path):
    """The checksums make a test replaced by `pass` visible (before, `nbgrader validate` said it passed)."""
    name = EXERCISES[0]
    nb = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
    for cell in nb.cells:
        if nbgrader(cell).get("grade"):
            cell.source = "pass"
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    run = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(path)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert "THE CONTENTS OF" in run.stdout and "HAVE CHANGED" in run.stdout, run.stdout[-3000:]


def test_the_config_sets_timeouts_that_fit_the_exercises():
    config = runpy.run_path(str(rel.CONFIG), init_globals={"get_config": _Config})["c"]
    assert config["Execute"]["timeout"] >= 90  # exercise 06 can train for ~35 s on a busy machine
    assert config["Execute"]["startup_timeout"] >= 60
    assert config["CourseDirectory"]["course_id"]


class _Config(dict):
    """Enough of traitlets' Config for `c.Section.name = value`."""

    def __getattr__(self, name):
        return self.setdefault(name, _Config())

    def __setattr__(self, name, value):
        self[name] = value


def test_an_edited_source_is_kept_unless_forced(course, capsys):
    name = EXERCISES[0]
    copy = course / "source" / name / f"{name}.ipynb"
    nb = nbformat.read(copy, as_version=4)
    nb.cells[0].source += "\n\nA note from the instructor."
    nbformat.write(nb, copy)
    edited = copy.read_bytes()
    assert main(["exercises", "release", "--course", str(course), name]) == 0
    assert copy.read_bytes() == edited and "kept" in capsys.readouterr().err
    released = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
    assert "A note from the instructor." in released.cells[0].source
    assert main(["exercises", "release", "--course", str(course), "--force", name]) == 0
    assert copy.read_bytes() == (SOURCE / f"{name}.ipynb").read_bytes()


def test_errors_are_clear(tmp_path, capsys, monkeypatch):
    assert main(["exercises", "release", "--course", str(tmp_path / "c"), "nope"]) == 1
    assert "no exercise nope" in capsys.readouterr().err
    for inside in (SOURCE, SOURCE / "course"):
        assert main(["exercises", "release", "--course", str(inside)]) == 1
        assert "refusing" in capsys.readouterr().err
    assert not (SOURCE / "course").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["exercises", "release", "--course", str(tmp_path / "c"), "--source", str(empty)]) == 1
    assert "no notebooks" in capsys.readouterr().err
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    assert main(["exercises", "release", "--course", str(tmp_path / "c")]) == 1
    assert "pip install 'tinygrad-lab[instructor]'" in capsys.readouterr().err


def test_nbgraders_own_errors_come_through(tmp_path):
    """A notebook nbgrader rejects (two cells with one grade_id) fails the release with nbgrader's words."""
    nb = nbformat.read(SOURCE / f"{EXERCISES[0]}.ipynb", as_version=4)
    graded = [c for c in nb.cells if nbgrader(c).get("grade")]
    nbgrader(graded[1])["grade_id"] = nbgrader(graded[0])["grade_id"]
    src = tmp_path / "src"
    src.mkdir()
    nbformat.write(nb, src / "dup.ipynb")
    with pytest.raises(RuntimeError, match="grade_id"):
        rel.release(tmp_path / "course", source=src)
    assert not (tmp_path / "course" / "release" / "dup").exists()


def test_the_exercises_are_found_in_a_checkout_or_in_the_wheel(tmp_path, monkeypatch):
    assert rel.exercises_dir() == SOURCE
    monkeypatch.setattr(rel, "CHECKOUT_EXERCISES", tmp_path / "no checkout")
    monkeypatch.setattr(rel, "PACKAGED_EXERCISES", tmp_path / "packaged")
    with pytest.raises(FileNotFoundError, match="--source"):
        rel.exercises_dir()
    (tmp_path / "packaged").mkdir()
    assert rel.exercises_dir() == tmp_path / "packaged"


def test_the_wheel_ships_the_exercises_where_release_looks_for_them():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    included = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert ROOT / included["notebooks/exercises"] == rel.PACKAGED_EXERCISES
    assert "nbgrader" in " ".join(config["project"]["optional-dependencies"]["instructor"])
    assert "tinygrad-lab[instructor]" in config["project"]["optional-dependencies"]["test"]
