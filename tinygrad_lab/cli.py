"""The `tinygrad-lab` console command: `lab`, `bench`, `doctor` and `exercises`.

Each subcommand lives with the layer it belongs to and only the one asked for
is imported, so `tinygrad-lab doctor` works even where the bench or lab extras
are missing.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# name -> (module, one-line help); each module has `add_arguments(parser)` and `run(args) -> int`;
# a module with PASSTHROUGH = True gets the options it does not know in `args.passthrough`
_COMMANDS = {
    "lab": ("tinygrad_lab.lab", "open the course notebooks in JupyterLab"),
    "bench": ("tinygrad_lab.bench.cli", "time the engine beside NumPy, CuPy and PyTorch"),
    "doctor": ("tinygrad_lab.doctor", "check what this machine has for the course"),
    "exercises": ("tinygrad_lab.exercises.cli", "make the student versions of the exercise notebooks"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only `command`'s own options are added (its module is imported for that)."""
    parser = argparse.ArgumentParser(prog="tinygrad-lab", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(_COMMANDS) + "}")
    for name, (module, help_) in _COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(_module=module)
        if name == command:
            importlib.import_module(module).add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(command)
    args, unknown = parser.parse_known_args(argv)
    module = importlib.import_module(args._module)
    if unknown and not getattr(module, "PASSTHROUGH", False):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.passthrough = unknown
    return module.run(args)


if __name__ == "__main__":
    sys.exit(main())
