"""`tinygrad-lab doctor`: what this machine has for the course, in a few lines.

Each check gives a status: "ok", "info" (optional, e.g. no GPU) or "missing"
(the CPU course cannot run without it), a detail line and, when something is
missing, the command that fixes it. The exit status is 0 when nothing the CPU
course needs is missing.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
from typing import NamedTuple

OK, INFO, MISSING = "ok", "info", "missing"
_PIP_LAB = "pip install 'tinygrad-lab[lab]'  (or run `make lab` in a checkout)"
_DOT_FIX = ("install Graphviz: sudo apt-get install graphviz | brew install graphviz | "
            "conda install -c conda-forge graphviz (on Binder: add graphviz to binder/apt.txt)")


class Check(NamedTuple):
    name: str
    status: str
    detail: str
    fix: str = ""


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_python() -> Check:
    import numpy as np

    import tinygrad_lab
    return Check("tinygrad_lab", OK, f"tinygrad_lab {tinygrad_lab.__version__}, Python {platform.python_version()} "
                                     f"({sys.executable}), NumPy {np.__version__}")


def check_blas() -> Check:
    from .bench.runtimes import Unavailable, numpy_blas  # the harness's own view of NumPy's BLAS
    try:
        pools = numpy_blas()
    except Unavailable as e:  # threadpoolctl missing
        return Check("BLAS", INFO, f"cannot tell: {e}; {os.cpu_count()} CPUs")
    if not pools:
        return Check("BLAS", INFO, f"no BLAS library loaded by NumPy was found; {os.cpu_count()} CPUs")
    desc = ", ".join(f"{p['internal_api']} {p.get('version') or ''} ({p['num_threads']} threads)".replace("  ", " ")
                     for p in pools)
    return Check("BLAS", OK, f"{desc}; {os.cpu_count()} CPUs")


def check_cuda() -> Check:
    from . import cuda
    if not cuda.is_available():
        return Check("CUDA", INFO, f"unavailable, the course runs on the CPU: {cuda.unavailable_reason()}")
    import cupy
    rt = cupy.cuda.runtime
    gpus = ", ".join(f"cuda:{i} {cuda.get_device_name(i)}" for i in range(cuda.device_count()))
    return Check("CUDA", OK, f"CuPy {cupy.__version__}, driver {rt.driverGetVersion()}, "
                             f"runtime {rt.runtimeGetVersion()}: {gpus}")


def check_graphviz() -> Check:
    if _version("graphviz") is None:
        return Check("Graphviz", MISSING, "the graphviz Python package is not installed", _PIP_LAB)
    dot = shutil.which("dot")
    if dot is None:
        return Check("Graphviz", MISSING, "the Graphviz `dot` program is not on PATH (graphs cannot be drawn)",
                     _DOT_FIX)
    try:
        out = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=20)
        version = (out.stderr or out.stdout).strip()
    except (OSError, subprocess.SubprocessError) as e:
        return Check("Graphviz", MISSING, f"`{dot} -V` failed: {e}", _DOT_FIX)
    return Check("Graphviz", OK, f"{version} ({dot})")


def check_jupyter() -> Check:
    names = {"JupyterLab": "jupyterlab", "ipywidgets": "ipywidgets", "anywidget": "anywidget",
             "matplotlib": "matplotlib"}
    versions = {label: _version(dist) for label, dist in names.items()}
    missing = [label for label, v in versions.items() if v is None]
    detail = ", ".join(f"{label} {v or 'missing'}" for label, v in versions.items())
    return Check("Jupyter", MISSING if missing else OK, detail, _PIP_LAB if missing else "")


def labextension_dirs() -> list[str]:
    try:
        from jupyter_core.paths import jupyter_path
    except ImportError:
        return []
    return [d for d in jupyter_path("labextensions") if os.path.isdir(d)]


def check_widget_frontend() -> Check:
    wanted = {"ipywidgets": os.path.join("@jupyter-widgets", "jupyterlab-manager"), "anywidget": "anywidget"}
    dirs = labextension_dirs()
    found = {name: any(os.path.isdir(os.path.join(d, sub)) for d in dirs) for name, sub in wanted.items()}
    missing = [name for name, ok in found.items() if not ok]
    if missing:
        return Check("widget front-end", MISSING, f"JupyterLab extension(s) not registered: {', '.join(missing)}",
                     f"pip install --force-reinstall {' '.join(missing)}, then restart JupyterLab")
    return Check("widget front-end", OK, "registered with JupyterLab (" +
                 ", ".join(wanted.values()) + ")")


CHECKS = (check_python, check_blas, check_cuda, check_graphviz, check_jupyter, check_widget_frontend)


def collect() -> list[Check]:
    """Run every check; a check that crashes is reported as missing, with its error."""
    results = []
    for check in CHECKS:
        try:
            results.append(check())
        except Exception as e:  # the doctor must always finish its report
            name = check.__name__.removeprefix("check_")
            results.append(Check(name, MISSING, f"the check failed: {type(e).__name__}: {e}"))
    return results


def report(results: list[Check]) -> str:
    width = max(len(c.name) for c in results)
    lines = ["tinygrad-lab doctor"]
    for c in results:
        lines.append(f"  {c.status:<7} {c.name:<{width}}  {c.detail}")
        if c.fix and c.status != OK:
            lines.append(f"  {'':<7} {'':<{width}}  fix: {c.fix}")
    missing = [c.name for c in results if c.status == MISSING]
    lines.append(f"Missing for the course: {', '.join(missing)}." if missing
                 else "Everything the CPU course needs is here.")
    return "\n".join(lines)


def add_arguments(parser) -> None:
    parser.epilog = "Exit status 0 when the CPU course can run, 1 when something it needs is missing."


def run(args) -> int:
    results = collect()
    print(report(results))
    return 1 if any(c.status == MISSING for c in results) else 0
