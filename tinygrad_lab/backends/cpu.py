"""The CPU backend: NumPy arrays in host memory."""
from __future__ import annotations

import numpy as np

from .base import Backend


class CPUBackend(Backend):
    name = "cpu"
    xp = np
    array_type = np.ndarray

    def asarray(self, obj, dtype=None, index: int = 0):
        return np.asarray(obj, dtype=dtype)

    def to_host(self, arr):
        return arr

    def generator(self, seed: int, index: int = 0):
        return np.random.Generator(np.random.PCG64(seed))

    def index_add(self, target, key, values) -> None:
        np.add.at(target, key, values)
