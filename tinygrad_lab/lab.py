"""`tinygrad-lab lab [--notebooks DIR] [JupyterLab options]`: open the course in JupyterLab."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def notebooks_dir() -> Path:
    """The course's notebooks/ folder in a checkout of the repository, else the current folder."""
    here = Path(__file__).resolve().parents[1] / "notebooks"
    return here if here.is_dir() else Path.cwd()


def lab_command(folder: Path, extra: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "jupyterlab", str(folder)]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # JupyterLab refuses to run as root without it (containers, Binder-like VMs)
    return cmd + extra


def lab_environment(environ=None) -> dict:
    """The environment JupyterLab runs in: this Python's scripts folder first on PATH, as an activated
    virtualenv has it, so programs a lesson starts (`%tensorboard`, `!pip`) are the ones installed
    beside the package, not whatever else the PATH holds."""
    env = dict(os.environ if environ is None else environ)
    scripts = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([scripts] + [p for p in env.get("PATH", "").split(os.pathsep) if p and p != scripts])
    return env


PASSTHROUGH = True  # other options go to JupyterLab, e.g. --no-browser --port 8899


def add_arguments(parser) -> None:
    parser.add_argument("--notebooks", type=Path, help="notebook folder (default: the course's notebooks/)")
    parser.epilog = "Other options are passed on to JupyterLab, e.g. --no-browser --port 8899."


def run(args) -> int:
    folder = args.notebooks or notebooks_dir()
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        print("JupyterLab is not installed: pip install 'tinygrad-lab[lab]' (or `make lab` in a checkout)",
              file=sys.stderr)
        return 1
    return subprocess.call(lab_command(folder, args.passthrough), env=lab_environment())
