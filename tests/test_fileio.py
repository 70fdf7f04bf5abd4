"""One atomic-write mechanism (tinygrad_lab/_fileio.py) behind every file the package writes: each
writer leaves no temporary, keeps the old file on failure and removes a killed writer's temporary."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

import tinygrad_lab as tl
from tinygrad_lab import _fileio
from tinygrad_lab.bench import report

from .bench.test_report import ENV, record


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid  # exited and reaped: no process has it (pids are not reused this soon)


def _writers(tmp_path):
    onnx = pytest.importorskip("onnx")  # noqa: F841 (the ONNX writer needs it)
    from tinygrad_lab import onnx as tl_onnx
    from tinygrad_lab.exercises.release import write_atomic

    return {
        "checkpoint.pt": lambda p: tl.save({"w": tl.ones(2)}, p),
        "model.onnx": lambda p: tl_onnx.export(tl.nn.Linear(3, 2), tl.randn(1, 3), p),
        "results.json": lambda p: report.write_json([record()], ENV, p),
        "course.py": lambda p: write_atomic(p, b"c = 1\n"),
    }


@pytest.mark.parametrize("name", ["checkpoint.pt", "model.onnx", "results.json", "course.py"])
def test_every_writer_removes_a_killed_writers_temporary(tmp_path, name):
    write = _writers(tmp_path)[name]
    stale = tmp_path / f".{name}.{_dead_pid()}.{'ab' * 6}.tmp"
    stale.write_bytes(b"half a file")
    live = tmp_path / f".{name}.{os.getpid()}.{'cd' * 6}.tmp"  # this process: still writing, kept
    live.write_bytes(b"in progress")
    write(tmp_path / name)
    assert sorted(os.listdir(tmp_path)) == sorted([name, live.name])
    assert not stale.exists()


def test_a_failed_write_keeps_the_old_file_and_its_permissions(tmp_path, monkeypatch):
    path = tmp_path / "f.bin"
    _fileio.write_atomic(path, b"old")
    os.chmod(path, 0o600)
    with pytest.raises(RuntimeError, match="interrupted"), _fileio.atomic_open(path) as f:
        f.write(b"new, half")
        raise RuntimeError("interrupted")
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["f.bin"]
    _fileio.write_atomic(path, b"new")
    assert path.read_bytes() == b"new" and stat.S_IMODE(path.stat().st_mode) == 0o600
