"""The README's instructor commands, run as written in a temporary home: release the exercises,
release one to the class through nbgrader's exchange, two students fetch and submit it (one solved,
one blank), then collect, autograde, feedback and export give the solved one full marks and the
blank one 0 with the hints in its feedback."""
from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SOURCE = ROOT / "notebooks" / "exercises"

pytest.importorskip("nbgrader", reason="nbgrader is not installed (pip install 'tinygrad-lab[instructor]')")


def instructor_blocks() -> list[str]:
    """The shell blocks of the README's "For instructors" section, dedented."""
    text = README.read_text(encoding="utf-8")
    section = text.split("### For instructors", 1)[1].split("\n## ", 1)[0]
    return [textwrap.dedent(b) for b in re.findall(r"```bash\n(.*?)^\s*```", section, flags=re.S | re.M)]


@pytest.fixture
def hub(tmp_path) -> dict:
    """The environment of a hub user: a home, nbgrader's exchange as the hub's global config sets it,
    and `tinygrad-lab` and `nbgrader` on the PATH (this checkout's code, this Python's nbgrader)."""
    home, config, exchange, bin_ = (tmp_path / d for d in ("home", "jupyter", "exchange", "bin"))
    for d in (home, config, exchange, bin_):
        d.mkdir()
    exchange.chmod(0o777)
    (config / "nbgrader_config.py").write_text(f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n")
    shim = bin_ / "tinygrad-lab"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m tinygrad_lab.cli \"$@\"\n")
    shim.chmod(0o755)
    path = os.pathsep.join([str(bin_), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {**os.environ, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(config), "PATH": path,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def as_user(env: dict, name: str) -> dict:
    return {**env, "USER": name, "LOGNAME": name}


def sh(script: str, cwd: Path, env: dict) -> str:
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, f"{script}\n{run.stdout[-3000:]}\n{run.stderr[-5000:]}"
    return run.stdout


def hand_in(env: dict, student: str, assignment: str, solved: bool, workdir: Path) -> None:
    """A student fetches the assignment, fills in the solutions (or nothing) and submits it."""
    workdir.mkdir()
    user = as_user(env, student)
    sh(f"nbgrader fetch_assignment --course tinygrad_lab {assignment}", workdir, user)
    path = workdir / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(path, as_version=4)
    if solved:
        answers = {c.metadata["nbgrader"]["grade_id"]: c.source
                   for c in nbformat.read(SOURCE / f"{assignment}.ipynb", as_version=4).cells
                   if c.metadata.get("nbgrader", {}).get("solution")}
        for cell in nb.cells:
            cell.source = answers.get(cell.metadata.get("nbgrader", {}).get("grade_id"), cell.source)
    nbformat.write(nb, path)
    # on a hub each student is their own OS user; here --student says who hands it in
    sh(f"nbgrader submit --course tinygrad_lab --student {student} {assignment}", workdir, user)


def test_the_readme_shows_the_instructor_commands():
    blocks = instructor_blocks()
    assert len(blocks) == 2
    assert "tinygrad-lab exercises release" in blocks[0] and "release_assignment" in blocks[0]
    for command in ("collect", "autograde", "generate_feedback", "export"):
        assert f"nbgrader {command}" in blocks[1]


@pytest.mark.timeout(900)  # a dozen nbgrader commands: about a minute on an idle 2-core machine
def test_the_instructor_commands_run_as_written(hub, tmp_path):
    release, grade = instructor_blocks()
    assignment = re.search(r"release_assignment (\S+)", release).group(1)
    elsewhere = tmp_path / "somewhere"
    elsewhere.mkdir()
    sh(release, elsewhere, as_user(hub, "teacher"))
    hand_in(hub, "alice", assignment, solved=True, workdir=tmp_path / "alice")
    hand_in(hub, "bob", assignment, solved=False, workdir=tmp_path / "bob")
    sh(grade, elsewhere, as_user(hub, "teacher"))

    course = Path(hub["HOME"]) / "course"
    rows = {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").open())
            if r["assignment"] == assignment}
    top = sum(c.metadata["nbgrader"].get("points", 0)
              for c in nbformat.read(SOURCE / f"{assignment}.ipynb", as_version=4).cells
              if c.metadata.get("nbgrader", {}).get("grade"))
    assert float(rows["alice"]["score"]) == float(rows["alice"]["max_score"]) == top
    assert float(rows["bob"]["score"]) == 0
    feedback = (course / "feedback" / "bob" / assignment / f"{assignment}.html").read_text(encoding="utf-8")
    assert "NotImplementedError" in feedback
    assert shutil.which("nbgrader", path=hub["PATH"])
