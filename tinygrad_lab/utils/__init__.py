"""Utilities with PyTorch's layout: `tinygrad_lab.utils.data` holds datasets,
samplers and the DataLoader (as `torch.utils.data`)."""
from . import data

__all__ = ["data"]
