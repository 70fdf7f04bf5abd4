"""`tinygrad-lab exercises release`: an nbgrader course folder with the exercises' student versions.

The course folder is laid out as nbgrader expects, one assignment per exercise notebook:

    COURSE/nbgrader_config.py       the course's nbgrader config (timeouts that fit the exercises),
                                    written when the folder has none
    COURSE/source/<id>/<id>.ipynb   the exercise with its solutions (`<id>` is the file's stem)
    COURSE/release/<id>/<id>.ipynb  the student version, written by nbgrader's own generate_assignment:
                                    solutions replaced by `raise NotImplementedError()`, outputs cleared,
                                    tests and instructions locked and checksummed
    COURSE/gradebook.db             nbgrader's database, which autograde reads the tests back from

The exercises come from the checkout's notebooks/exercises/ or, in an installed wheel, from the copy
shipped inside the package (`exercises_dir`).
"""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from .. import _fileio

_HERE = Path(__file__).resolve().parent
CONFIG = _HERE / "nbgrader_config.py"
CHECKOUT_EXERCISES = _HERE.parents[1] / "notebooks" / "exercises"
PACKAGED_EXERCISES = _HERE / "notebooks"  # pyproject.toml's force-include puts them there in the wheel


def exercises_dir() -> Path:
    """The course's exercise notebooks: the checkout's notebooks/exercises/, else the wheel's copy."""
    for folder in (CHECKOUT_EXERCISES, PACKAGED_EXERCISES):
        if folder.is_dir():
            return folder
    raise FileNotFoundError(f"the exercise notebooks are neither in a checkout ({CHECKOUT_EXERCISES}) nor in "
                            f"the installed package ({PACKAGED_EXERCISES}): pass --source FOLDER")


def exercises(source: Path | None = None, names: list[str] | None = None) -> list[Path]:
    """The exercise notebooks in `source` (default `exercises_dir()`), only `names` (file stems) if given."""
    source = Path(source) if source is not None else exercises_dir()
    found = {p.stem: p for p in sorted(source.glob("*.ipynb"))}
    if not found:
        raise ValueError(f"no notebooks (*.ipynb) in {source}")
    unknown = [n for n in names or [] if n not in found]
    if unknown:
        raise ValueError(f"no exercise {', '.join(unknown)} in {source}; there are: {', '.join(found)}")
    return [found[n] for n in names] if names else list(found.values())


def release(course: Path, names: list[str] | None = None, source: Path | None = None, force: bool = False,
            say: Callable[[str], None] = print) -> list[Path]:
    """Lay out `course` for nbgrader (config, source/) and run nbgrader's generate_assignment on each
    exercise; returns the student notebooks written. A source/ copy that differs from the exercise
    (an instructor's edit) is kept unless `force`."""
    notebooks = exercises(source, names)
    course = Path(course).resolve()
    if any(course == nb.parent.resolve() or nb.parent.resolve() in course.parents for nb in notebooks):
        raise ValueError(f"refusing to make the course folder {course} inside the exercises' own folder: "
                         f"choose a --course outside it")
    course.mkdir(parents=True, exist_ok=True)
    if not (course / CONFIG.name).exists():
        write_atomic(course / CONFIG.name, CONFIG.read_bytes())
    written = []
    for nb in notebooks:
        copy = course / "source" / nb.stem / nb.name
        if force or not copy.exists():
            write_atomic(copy, nb.read_bytes())
        elif copy.read_bytes() != nb.read_bytes():
            say(f"kept {copy}: it differs from {nb} (your edits?); --force replaces it")
        written.append(course / "release" / nb.stem / nb.name)
    generate_assignments(course, [nb.stem for nb in notebooks])
    return written


# nbgrader's own `nbgrader generate_assignment ID --force` for each ID, in one process: the `nbgrader`
# command imports every nbgrader app (~3 s) for each assignment, this the one app once.
_GENERATE = """
import sys
from nbgrader.apps.generateassignmentapp import GenerateAssignmentApp
for assignment in sys.argv[1:]:
    app = GenerateAssignmentApp()
    app.initialize([assignment, "--force"])
    app.start()
    GenerateAssignmentApp.clear_instance()
"""


def generate_assignments(course: Path, assignments: list[str]) -> None:
    """nbgrader's generate_assignment on each assignment, run in `course` with its nbgrader_config.py as
    an instructor's `nbgrader generate_assignment ID --force` would; RuntimeError with nbgrader's messages."""
    run = subprocess.run([sys.executable, "-c", _GENERATE, *assignments], cwd=course, capture_output=True,
                         text=True)
    if run.returncode != 0:
        log = "\n".join(line for line in (run.stdout + run.stderr).splitlines() if "| INFO]" not in line)
        raise RuntimeError(f"nbgrader generate_assignment failed in {course}:\n{log.strip()}")


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path`, creating its folders, through the package's one atomic write (_fileio):
    never a half-written file; a new file's mode comes from the umask (0644 under 022)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _fileio.write_atomic(path, data)
