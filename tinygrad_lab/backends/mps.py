"""`tinygrad_lab.backends.mps`: Apple's Metal backend, as PyTorch names it. tinygrad_lab has no Metal
backend, so both answers are False (as PyTorch's on a machine without it): a script's
`"mps" if torch.backends.mps.is_available() else "cpu"` picks the CPU."""
from __future__ import annotations


def is_available() -> bool:
    """Whether tensors can be put on an 'mps' device: no."""
    return False


def is_built() -> bool:
    """Whether this build has Metal support: no."""
    return False
