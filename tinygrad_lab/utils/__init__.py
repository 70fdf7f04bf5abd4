"""Utilities with PyTorch's layout: `tinygrad_lab.utils.data` holds datasets, samplers and the
DataLoader (as `torch.utils.data`), `tinygrad_lab.utils.checkpoint` gradient checkpointing."""
from . import checkpoint, data

__all__ = ["checkpoint", "data"]
