"""Dropout: zero elements (or whole channels) with probability p while training, scaling the rest by
1/(1-p); alpha dropout keeps a SELU network's mean and variance instead."""
from __future__ import annotations

from ...autograd.tensor_base import TensorBase
from .. import functional as F
from .module import Module


class _DropoutNd(Module):
    """What the dropout layers share: p and inplace, checked, and PyTorch's repr."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """In train() mode each element is zeroed with probability p and the survivors are scaled by
    1/(1-p); in eval() mode the input passes through unchanged. The random mask comes from
    tinygrad_lab's generator, so the same seed does not give PyTorch's mask."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) or (C, L) input in train() mode (F.dropout1d)."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) input in train() mode (F.dropout2d)."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input in train() mode (F.dropout3d)."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout for SELU networks (F.alpha_dropout): keeps zero mean and unit variance."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels (F.feature_alpha_dropout)."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.feature_alpha_dropout(input, self.p, self.training)
