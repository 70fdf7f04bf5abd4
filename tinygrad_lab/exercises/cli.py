"""`tinygrad-lab exercises release`: write the student versions of the exercise notebooks."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="{release}")
    p = actions.add_parser("release", help="copy the notebooks with their solutions replaced by stubs",
                           description="Copy each exercise notebook with the code between ### BEGIN SOLUTION and "
                                       "### END SOLUTION replaced by `raise NotImplementedError()` and outputs "
                                       "cleared (nbgrader's conventions).")
    p.add_argument("--source", type=Path, default=Path("notebooks/exercises"),
                   help="folder of solution notebooks (default: %(default)s)")
    p.add_argument("--out", type=Path, default=Path("release/exercises"),
                   help="folder for the student versions, outside --source (default: %(default)s)")


def run(args: argparse.Namespace) -> int:
    try:
        from .release import release  # nbformat is imported only when releasing
    except ImportError as e:
        print(f"tinygrad-lab exercises release: error: {e} (install it with: pip install nbformat)", file=sys.stderr)
        return 1
    try:
        written = release(args.source, args.out)
    except (ValueError, OSError) as e:
        print(f"tinygrad-lab exercises release: error: {e}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    print(f"wrote {len(written)} student notebooks to {args.out}")
    return 0
