"""`tinygrad_lab.accelerator`: the device-agnostic runtime API (PyTorch's torch.accelerator).

The accelerator is CUDA when tinygrad_lab's CUDA backend can run here (CuPy, a driver and a
GPU), and there is none otherwise; then every query answers as PyTorch does on a machine
without an accelerator: is_available() is False, current_accelerator() is None,
device_count() is 0, and the functions that need a device raise
"Cannot access accelerator device when none is available."

    device = tl.accelerator.current_accelerator() or tl.device("cpu")

Deviation: PyTorch's current_accelerator() names the accelerator its build was compiled for
even when the hardware is missing (unless check_available=True); tinygrad_lab has no build
flavours, so it names CUDA only when CUDA can be used.
"""
from __future__ import annotations

from . import cuda as _cuda
from .backends import Device

__all__ = ["current_accelerator", "current_device_index", "current_device_idx", "device_count", "device_index",
           "empty_cache", "is_available", "max_memory_allocated", "memory_allocated", "reset_peak_memory_stats",
           "set_device_index", "set_device_idx", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """True when there is an accelerator to run on (here: CUDA through CuPy)."""
    return _cuda.is_available()


def current_accelerator(check_available: bool = False) -> Device | None:
    """device(type='cuda') when CUDA can be used, else None."""
    return Device("cuda") if is_available() else None


def device_count() -> int:
    """The number of accelerator devices (0 without one)."""
    return _cuda.device_count()


def _require() -> None:
    if not is_available():
        raise RuntimeError(_NONE)


def current_device_index() -> int:
    """The index of the device ops run on."""
    _require()
    return _cuda.current_device()


def set_device_index(device) -> None:
    """Make `device` (an index, 'cuda:N' or a device) the one ops run on."""
    _require()
    _cuda.set_device(device)


current_device_idx = current_device_index  # PyTorch's older names
set_device_idx = set_device_index


class device_index:
    """with device_index(i): run on device i inside the block (None: leave the device as it is)."""

    def __init__(self, device) -> None:
        self.index = device
        self.previous = None

    def __enter__(self) -> "device_index":
        if self.index is not None:
            self.previous = current_device_index()
            set_device_index(self.index)
        return self

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            set_device_index(self.previous)


def synchronize(device=None) -> None:
    """Wait until the queued work on the device has finished (time accelerator code only around this)."""
    _require()
    _cuda.synchronize(device)


def empty_cache() -> None:
    _require()
    _cuda.empty_cache()


def memory_allocated(device=None) -> int:
    _require()
    return _cuda.memory_allocated(device)


def max_memory_allocated(device=None) -> int:
    _require()
    return _cuda.max_memory_allocated(device)


def reset_peak_memory_stats(device=None) -> None:
    _require()
    _cuda.reset_peak_memory_stats(device)
