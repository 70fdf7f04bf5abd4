"""`tinygrad_lab.cuda`: is there a GPU, and what is it doing (PyTorch's torch.cuda).

`is_available()` never raises: without CuPy, a driver or a GPU it is False and
`unavailable_reason()` says why. As in PyTorch, without a GPU the memory figures
are 0 and `empty_cache` does nothing, while `synchronize` and the device functions
raise a RuntimeError with that reason; the seeding functions are ignored.

The memory figures are PyTorch's: `memory_allocated` counts the bytes of live
tensors (in the pool's 512-byte blocks), `memory_reserved` what the pool holds from
the driver (live blocks and cached free ones), `empty_cache` gives the cached free
blocks back (reserved falls, allocated does not). GPU work is asynchronous: time it
around `synchronize()`. The current device is per thread, as in PyTorch.
"""
from __future__ import annotations

import threading

from . import random as _random
from .backends import Device
from .backends import backend as _backend

_cuda = _backend("cuda")


class _Current(threading.local):
    index = 0  # each thread starts on GPU 0, as in PyTorch and CuPy


_current = _Current()


def is_available() -> bool:
    """True when CUDA tensors can be made here (CuPy, a driver and a GPU that runs a kernel)."""
    return _cuda.status()[0]


def unavailable_reason() -> str | None:
    """Why CUDA cannot be used here (None when it can)."""
    return _cuda.status()[1]


def device_count() -> int:
    """The number of usable GPUs (0 without CUDA)."""
    return _cuda.device_count if is_available() else 0


def _index(device) -> int:
    """The GPU index meant by None (the current one), an int, 'cuda:N' or a Device; checked."""
    if device is None:
        index = _current.index
    elif isinstance(device, int):
        index = device
    else:
        dev = Device(device)
        if dev.type != "cuda":
            raise ValueError(f"expected a cuda device, got {dev}")
        index = dev.index if dev.index is not None else _current.index
    _cuda.check(index)
    return index


def current_device() -> int:
    _cuda.check(None)
    return _current.index


def set_device(device) -> None:
    """Make `device` the GPU that ops run on (CuPy's current device)."""
    index = _index(device)
    _cuda.xp.cuda.Device(index).use()
    _current.index = index


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. 'NVIDIA H100 80GB HBM3'."""
    index = _index(device)
    name = _cuda.xp.cuda.runtime.getDeviceProperties(index)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


class device:
    """`with tinygrad_lab.cuda.device(i):` runs the block with GPU i current (torch.cuda.device);
    None or -1 changes nothing."""

    def __init__(self, device) -> None:
        self.idx = -1 if device is None or device == -1 else _index(device)
        self.prev = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev = _current.index
            set_device(self.idx)
        return self

    def __exit__(self, *exc) -> None:
        if self.idx >= 0:
            set_device(self.prev)


def synchronize(device=None) -> None:
    """Wait for all queued work on the GPU to finish: time GPU code only around this."""
    _cuda.synchronize(_index(device))


def manual_seed(seed: int) -> None:
    """Reseed the generators of the CUDA devices (ignored without CUDA, as in PyTorch)."""
    _random.manual_seed_device_type("cuda", seed)


manual_seed_all = manual_seed


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory held by tensors now (CuPy's memory pool, used blocks); 0 without CUDA."""
    return _cuda.memory_allocated(_index(device)) if is_available() else 0


def max_memory_allocated(device=None) -> int:
    """The peak of memory_allocated since reset_peak_memory_stats(); 0 without CUDA. Unlike PyTorch, peaks
    are noted only from the first call of either function on (the note costs Python work on every allocation)."""
    return _cuda.max_memory_allocated(_index(device)) if is_available() else 0


def memory_reserved(device=None) -> int:
    """Bytes the memory pool holds from the driver: live blocks and cached free ones; 0 without CUDA."""
    return _cuda.memory_reserved(_index(device)) if is_available() else 0


def reset_peak_memory_stats(device=None) -> None:
    """Start noting the peak of memory_allocated afresh (and from now on, if it was not noted yet)."""
    _cuda.reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    """Give the memory pool's cached, unused blocks back to the driver (no-op without CUDA)."""
    if is_available():
        _cuda.empty_cache()
