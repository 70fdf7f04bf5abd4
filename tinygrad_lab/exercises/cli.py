"""`tinygrad-lab exercises release`: an nbgrader course folder with the student versions of the exercises."""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from . import release as _release


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="{release}")
    p = actions.add_parser(
        "release", help="lay out an nbgrader course folder and generate the student versions",
        description="Lay out COURSE as nbgrader expects (nbgrader_config.py, source/<id>/<id>.ipynb, one "
                    "assignment per exercise) and run nbgrader's generate_assignment on each exercise: the "
                    "student versions are in COURSE/release/<id>/, with the solutions replaced by `raise "
                    "NotImplementedError()`, outputs cleared, tests locked and checksummed.")
    p.add_argument("exercises", nargs="*", metavar="ID",
                   help="exercises to release, by file stem, e.g. 02_linear (default: all)")
    p.add_argument("--course", type=Path, required=True, help="the nbgrader course folder (made if missing)")
    p.add_argument("--source", type=Path, default=None,
                   help="folder of exercise notebooks (default: the course's exercises, from the checkout "
                        "or from the installed package)")
    p.add_argument("--force", action="store_true",
                   help="replace source/ copies that differ from the exercises (an instructor's edits)")


def run(args: argparse.Namespace) -> int:
    def fail(message: str) -> int:
        print(f"tinygrad-lab exercises release: error: {message}", file=sys.stderr)
        return 1

    if importlib.util.find_spec("nbgrader") is None:
        return fail("nbgrader is not installed: pip install 'tinygrad-lab[instructor]'")
    try:
        written = _release.release(args.course, args.exercises, args.source, args.force,
                                   say=lambda note: print(note, file=sys.stderr))
    except (ValueError, OSError, RuntimeError) as e:
        return fail(str(e))
    for path in written:
        print(path)
    print(f"released {len(written)} exercises in {args.course.resolve()} (student versions under release/)")
    return 0
