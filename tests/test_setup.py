"""The README's two commands, dry-run (`make -n`) in an empty folder: `make lab` installs what a
learner needs and nothing else; `make test` adds the test tools, the PyTorch oracle and Chromium."""
from __future__ import annotations

import importlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _dry_run(tmp_path: Path, target: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    # Run from inside `make test` the child would inherit the parent's flags and print
    # "Entering directory" lines; a clean environment makes it the dry run a learner's shell sees.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    run = subprocess.run(["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    return run.stdout


def _installs(out: str) -> list[str]:
    """The pip installs and the system packages a dry run would install."""
    return [line.strip() for line in out.splitlines() if "pip install" in line or "system-deps DEPS=" in line]


def test_make_lab_installs_the_course_and_nothing_else(tmp_path):
    out = _dry_run(tmp_path, "lab")
    assert "-m venv .venv" in out
    assert _installs(out) == [".venv/bin/python -m pip install -q --upgrade pip",
                              ".venv/bin/python -m pip install -q -e '.[lab]'",
                              'make --no-print-directory system-deps DEPS="dot:graphviz mpirun:openmpi-bin"']
    assert out.rstrip().endswith(".venv/bin/tinygrad-lab lab")


def test_make_test_adds_the_test_tools_the_oracle_and_the_browser(tmp_path):
    out = _dry_run(tmp_path, "test")
    assert out.index("'.[lab]'") < out.index("'.[test,lab,bench]'") < out.index("'.[oracle]'")
    assert "chromium:chromium" in out and "dot:graphviz" in out
    assert out.rstrip().endswith("/.venv/bin:$PATH\" .venv/bin/python -m pytest -p xdist -n auto --dist loadfile")


def test_where_pytorch_is_installed_its_opinfo_database_imports_too():
    """The conformance test skips without the oracle; a PyTorch without expecttest (the oracle extra
    installs both) must not pass for "no oracle" and silently skip 789 comparisons."""
    pytest.importorskip("torch", exc_type=ImportError)
    importlib.import_module("torch.testing._internal.common_methods_invocations")
