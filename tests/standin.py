"""A stand-in accelerator for CI machines without a GPU.

`standin` is the CUDA backend itself (`CUDABackend`: the code a GPU runs) given a CuPy-faithful
stand-in for CuPy (tests/fake_cupy.py): NumPy underneath, CuPy's API and its differences from
NumPy on top (no implicit host conversion, no writeable flag, out-of-bounds indices that wrap,
CuPy 13's scalar promotion, ...), and counters of device->host syncs, kernel launches and uploads.
It is registered for the whole test session with two devices, standin:0 and standin:1, so device
semantics and every op are exercised off the CPU in CI, through the CUDA backend's own code.

Like the CUDA backend, it takes the base `Backend`'s helpers (broadcast_to, sum, amax,
matrix_transpose, zero, masked, ...), not the CPU backend's fast paths: those defaults are the code
CuPy runs.
"""
from __future__ import annotations

from tinygrad_lab.backends import register_backend
from tinygrad_lab.backends.cuda import CUDABackend

from . import fake_cupy

counters = fake_cupy.counters


class StandInBackend(CUDABackend):
    name = "standin"

    def __init__(self):
        super().__init__(fake_cupy.importer)

    def counters(self) -> dict:
        """Launches, syncs and uploads so far (the stand-in's CuPy counts them; real CuPy cannot)."""
        return counters.snapshot()


register_backend(StandInBackend())
