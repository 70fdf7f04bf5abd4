"""tinygrad_lab.signal: PyTorch's torch.signal. Only its windows module exists there (and here)."""
from . import windows  # noqa: F401

__all__ = ["windows"]
