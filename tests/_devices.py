"""Helpers of the device tests: a device sync and a tensor's values on the host.

A device (the stand-in in CI, CUDA on a GPU) may report a bad index at its next sync rather than
at the op, as PyTorch's CUDA kernels do: `sync(device)` gives it that chance inside a `raises` block.
"""
from __future__ import annotations

import numpy as np

import tinygrad_lab as tl


def sync(device: str) -> None:
    """Wait for the device's queued work (where deferred checks raise)."""
    dev = tl.device(device)
    dev.backend.synchronize(dev.index or 0)


def host(t) -> np.ndarray:
    return t.detach().cpu().numpy()
