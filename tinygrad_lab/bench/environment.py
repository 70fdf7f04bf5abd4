"""What a timing was taken on: CPU, BLAS, library versions, GPU. Recorded with every result,
because a number without its machine means nothing."""
from __future__ import annotations

import contextlib
import datetime
import importlib
import os
import platform
from pathlib import Path
from typing import Any

import numpy as np

from .runtimes import Unavailable, get_runtime, numpy_blas
from .timer import Timed, Timer


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def _version(module: str) -> str | None:
    """The version of an importable module, None when it is not installed (or fails to import)."""
    try:
        return str(importlib.import_module(module).__version__)
    except Exception:
        return None


def _torch_blas() -> str | None:
    with contextlib.suppress(Exception):
        import torch

        for token in torch.__config__.show().replace(",", " ").split():
            if token.startswith("BLAS_INFO="):
                return token.split("=", 1)[1]
    return None


def gpu() -> dict[str, Any]:
    """Whether tinygrad_lab can use CUDA here, why not, and the GPU's name."""
    try:
        import tinygrad_lab.cuda as cuda

        if not cuda.is_available():
            return {"available": False, "reason": cuda.unavailable_reason(), "name": None}
        return {"available": True, "reason": None, "name": cuda.get_device_name()}
    except (ImportError, AttributeError) as exc:
        return {"available": False, "reason": f"tinygrad_lab has no CUDA support here ({exc})", "name": None}


def harness_overhead() -> float:
    """Per-iteration cost of the timing loop around an empty Python step: included in every time."""
    return Timer(min_sample_s=5e-3, repeats=5).measure([Timed("empty", lambda: None)])["empty"].median_s


def environment(measure_harness: bool = True) -> dict[str, Any]:
    """The machine and libraries a run is taken on, as a JSON-ready dict (see schema.ENVIRONMENT)."""
    try:
        blas = [{k: info.get(k) for k in ("internal_api", "version", "architecture", "threading_layer", "num_threads")}
                for info in numpy_blas()]
    except Unavailable:  # threadpoolctl missing: the run itself will say so
        blas = []
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        torch_threads = get_runtime("torch", "cpu").thread_count()  # type: ignore[attr-defined]
    except Unavailable:
        torch_threads = None
    return {
        "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": f"{platform.python_version()} ({platform.python_implementation()})",
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpus": cpus,
        "numpy": np.__version__,
        "blas": blas,
        "tinygrad_lab": _version("tinygrad_lab"),
        "torch": _version("torch"),
        "torch_blas": _torch_blas(),
        "torch_threads": torch_threads,
        "cupy": _version("cupy"),
        "threadpoolctl": _version("threadpoolctl"),
        "gpu": gpu(),
        "harness_overhead_s": harness_overhead() if measure_harness else None,
    }
