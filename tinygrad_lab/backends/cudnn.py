"""`tinygrad_lab.backends.cudnn`: PyTorch's cuDNN switches, so programs that set them run unchanged.

tinygrad_lab never calls cuDNN (convolutions are im2col + matmul on every backend), so
is_available() is False and version() is None, as PyTorch answers on a machine without cuDNN;
`enabled`, `benchmark`, `deterministic`, `allow_tf32` and `benchmark_limit` can be read and set
and change nothing (our kernels are deterministic already).
"""
from __future__ import annotations

import contextlib

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = None


def is_available() -> bool:
    """Whether cuDNN can be used: never, here."""
    return False


def version() -> int | None:
    """cuDNN's version: None, as without cuDNN."""
    return None


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take this tensor: no."""
    return False


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int | None = 10,
          deterministic: bool = False, allow_tf32: bool = True):
    """Set the switches inside a with block, and restore them after."""
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    module = globals()
    saved = {name: module[name] for name in names}
    module.update(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit, deterministic=deterministic,
                  allow_tf32=allow_tf32)
    try:
        yield
    finally:
        module.update(saved)
