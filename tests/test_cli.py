"""The `tinygrad-lab` command: `doctor` reports and exits as documented, `lab`
builds the right JupyterLab command, unknown options are refused."""
from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

import pytest

from tinygrad_lab import cli, doctor, lab


def _fake_checks(monkeypatch, **overrides):
    """Every doctor check replaced by a fixed result; `overrides` maps check name -> Check or exception."""
    checks = []
    for fn in doctor.CHECKS:
        name = fn.__name__.removeprefix("check_")
        result = overrides.get(name, doctor.Check(name, doctor.OK, f"{name} fine"))

        def check(result=result):
            if isinstance(result, Exception):
                raise result
            return result
        check.__name__ = fn.__name__
        checks.append(check)
    monkeypatch.setattr(doctor, "CHECKS", tuple(checks))


def test_doctor_exits_0_when_the_course_can_run(monkeypatch, capsys):
    _fake_checks(monkeypatch, cuda=doctor.Check("CUDA", doctor.INFO, "unavailable: no GPU"))
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "info    CUDA" in out and "unavailable: no GPU" in out  # a missing GPU is not a failure
    assert out.rstrip().endswith("Everything the CPU course needs is here.")


def test_doctor_missing_dot_fails_with_install_hints(monkeypatch, capsys):
    real_which = doctor.shutil.which
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None if name == "dot" else real_which(name))
    monkeypatch.setattr(doctor, "_version", lambda dist: "1.0")
    check = doctor.check_graphviz()
    assert check.status == doctor.MISSING and "`dot` program is not on PATH" in check.detail
    for hint in ("apt-get install graphviz", "brew install graphviz", "conda install -c conda-forge graphviz",
                 "binder/apt.txt"):
        assert hint in check.fix
    _fake_checks(monkeypatch, graphviz=check)
    assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "missing Graphviz" in out and "fix: install Graphviz" in out
    assert "Missing for the course: Graphviz." in out


def test_doctor_reports_missing_packages_and_crashed_checks(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "_version", lambda dist: None if dist == "anywidget" else "9.9")
    jupyter = doctor.check_jupyter()
    assert jupyter.status == doctor.MISSING and "anywidget missing" in jupyter.detail and "[lab]" in jupyter.fix
    _fake_checks(monkeypatch, jupyter=jupyter, blas=ZeroDivisionError("boom"))
    assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "the check failed: ZeroDivisionError: boom" in out
    assert "Missing for the course: blas, Jupyter." in out


def test_doctor_widget_frontend_check(monkeypatch, tmp_path):
    (tmp_path / "@jupyter-widgets" / "jupyterlab-manager").mkdir(parents=True)
    monkeypatch.setattr(doctor, "labextension_dirs", lambda: [str(tmp_path)])
    check = doctor.check_widget_frontend()
    assert check.status == doctor.MISSING and "anywidget" in check.detail and "ipywidgets" not in check.detail
    (tmp_path / "anywidget").mkdir()
    assert doctor.check_widget_frontend().status == doctor.OK


def test_doctor_for_real_agrees_with_its_exit_status():
    """The real report, in a fresh process: the exit status is 1 exactly when a line says 'missing'."""
    run = subprocess.run([sys.executable, "-m", "tinygrad_lab.cli", "doctor"], capture_output=True, text=True,
                         timeout=120)
    lines = run.stdout.splitlines()
    assert lines[0] == "tinygrad-lab doctor", run.stderr
    for name in ("tinygrad_lab", "BLAS", "CUDA", "Graphviz", "Jupyter", "widget front-end"):
        assert any(line.split()[1:2] == [name.split()[0]] for line in lines[1:]), name
    missing = any(line.split()[:1] == ["missing"] for line in lines)
    assert run.returncode == (1 if missing else 0), run.stdout


def test_console_script_is_declared():
    try:
        importlib.metadata.version("tinygrad-lab")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("tinygrad-lab is not installed in this environment (make test installs it)")
    scripts = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="console_scripts")}
    assert scripts.get("tinygrad-lab") == "tinygrad_lab.cli:main"


def test_unknown_options_are_refused(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["doctor", "--frobnicate"])
    assert info.value.code == 2 and "unrecognized arguments: --frobnicate" in capsys.readouterr().err


def test_lab_command(monkeypatch, tmp_path):
    monkeypatch.setattr(lab.os, "geteuid", lambda: 0)
    assert lab.lab_command(tmp_path, ["--no-browser"]) == [sys.executable, "-m", "jupyterlab", str(tmp_path),
                                                           "--allow-root", "--no-browser"]
    monkeypatch.setattr(lab.os, "geteuid", lambda: 1000)
    assert "--allow-root" not in lab.lab_command(tmp_path, [])
    assert lab.notebooks_dir().name == "notebooks" and (lab.notebooks_dir() / "00_welcome.ipynb").exists()


def test_lab_passes_jupyter_options_through(monkeypatch, tmp_path):
    pytest.importorskip("jupyterlab")
    calls = []
    monkeypatch.setattr(lab.subprocess, "call", lambda cmd, env: calls.append((cmd, env)) or 0)
    assert cli.main(["lab", "--notebooks", str(tmp_path), "--no-browser", "--port", "8899"]) == 0
    cmd, env = calls[0]
    assert cmd[2:4] == ["jupyterlab", str(tmp_path)] and cmd[-3:] == ["--no-browser", "--port", "8899"]
    assert env["PATH"].split(os.pathsep)[0] == os.path.dirname(sys.executable)


def test_lab_puts_the_environments_programs_first_on_path():
    scripts = os.path.dirname(sys.executable)
    env = lab.lab_environment({"PATH": os.pathsep.join(["/usr/bin", scripts, "/bin"]), "HOME": "/h"})
    assert env == {"PATH": os.pathsep.join([scripts, "/usr/bin", "/bin"]), "HOME": "/h"}  # once, first
    assert lab.lab_environment({})["PATH"] == scripts  # no PATH at all


def test_doctor_blas_line(monkeypatch):
    from tinygrad_lab.bench import runtimes
    ok = doctor.check_blas()
    assert ok.status == doctor.OK and f"{runtimes.numpy_blas()[0]['num_threads']} threads" in ok.detail

    def missing():
        raise runtimes.Unavailable("threadpoolctl is not installed (ImportError); pip install threadpoolctl")
    monkeypatch.setattr(runtimes, "_threadpoolctl", missing)
    info = doctor.check_blas()
    assert info.status == doctor.INFO and "cannot tell: threadpoolctl is not installed" in info.detail
