"""Helpers of the device tests: issue 22's findings as strict xfails, and a device sync.

A device (the stand-in in CI, CUDA on a GPU) may report a bad index at its next sync rather than
at the op, as PyTorch's CUDA kernels do: `sync(device)` gives it that chance inside a `raises` block.
"""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl


def xfail_off_cpu(request, device: str, finding: str) -> None:
    """This test fails on devices other than the CPU until issue 22's `finding` is fixed."""
    if device != "cpu":
        xfail(request, finding)


def xfail(request, finding: str) -> None:
    """This test fails (on every device) until issue 22's `finding` is fixed."""
    request.applymarker(pytest.mark.xfail(strict=True, reason=f"issue 22: {finding}"))


def sync(device: str) -> None:
    """Wait for the device's queued work (where deferred checks raise)."""
    dev = tl.device(device)
    dev.backend.synchronize(dev.index or 0)


def host(t) -> np.ndarray:
    return t.detach().cpu().numpy()
