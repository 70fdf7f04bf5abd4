"""A stand-in accelerator for CI machines without a GPU.

`standin` is a second device type whose backend keeps its data in a NumPy
subclass (`StandInArray`) and copies on every transfer, as a GPU backend would.
It is registered for the whole test session, so device semantics (transfers,
mixing errors, Module.to, optimizer state placement, save/load with
map_location) and every op are exercised off the CPU device in CI.

Like the CUDA backend, it takes the base `Backend`'s helpers (broadcast_to, sum,
amax, matrix_transpose, zero, masked), not the CPU backend's fast paths: those defaults are the
code CuPy runs, and CI has no GPU to run them otherwise.
"""
from __future__ import annotations

import numpy as np

from tinygrad_lab.backends import register_backend
from tinygrad_lab.backends.base import Backend
from tinygrad_lab.backends.cpu import CPUBackend


class StandInArray(np.ndarray):
    """The stand-in device's own array type (NumPy underneath)."""


class StandInBackend(CPUBackend):
    name = "standin"
    # the base class's helpers, as CUDABackend has them (CuPy's path), not CPUBackend's
    broadcast_to = Backend.broadcast_to
    sum = Backend.sum
    amax = Backend.amax
    matrix_transpose = Backend.matrix_transpose
    zero = Backend.zero
    masked = Backend.masked

    def check(self, index):
        if index not in (None, 0, 1):
            raise RuntimeError(f"standin has devices 0 and 1, not {index}")

    def asarray(self, obj, dtype=None, index: int = 0):
        return np.array(obj, dtype=dtype, copy=True).view(StandInArray)  # host -> device copies, as on a GPU

    def to_host(self, arr):
        return np.array(arr, copy=True).view(np.ndarray)


register_backend(StandInBackend())
