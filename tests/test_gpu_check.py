"""The GPU check: on this machine (no GPU) it reports "no GPU" cleanly; with a GPU it runs the CUDA
tests, the GPU benchmark and lesson 06 with the commands the README promises (steps faked here)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tinygrad_lab as tl
from tinygrad_lab import gpu_check

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(tl.cuda.is_available(), reason="checks the report of a machine without a GPU")
def test_without_a_gpu_it_says_so_and_exits_0(tmp_path):
    run = subprocess.run([sys.executable, "-m", "tinygrad_lab.gpu_check", str(tmp_path / "out")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "GPU check: no GPU: " in run.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"].startswith("no GPU: ") and summary["steps"] == {}
    env = json.loads((tmp_path / "out" / "environment.json").read_text())
    assert env["cuda_available"] is False and env["numpy"]


def test_with_a_gpu_it_runs_tests_bench_and_lesson_06(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(gpu_check, "environment", lambda: {"cuda_available": True})
    monkeypatch.setattr(gpu_check, "_run", lambda cmd, out, timeout: ran.append(cmd) or {
        "status": "failed" if "mlp,cnn" in cmd else "ok"})
    assert gpu_check.main([str(tmp_path)]) == 1  # one step failed
    assert json.loads((tmp_path / "summary.json").read_text())["status"] == "failed: bench1"
    tests, lsq, steps, lesson = ran
    assert tests[1:4] == ["-m", "pytest", "-o"] and "addopts=" in tests and tests[-3:] == ["-k", "cuda", "tests"]
    assert "--devices" in lsq and "cpu,cuda" in lsq and "1024,2048,4096,8192" in lsq and "lsq" in lsq
    assert "mlp,cnn" in steps
    assert str(gpu_check.LESSON) in lesson and gpu_check.LESSON.exists()
