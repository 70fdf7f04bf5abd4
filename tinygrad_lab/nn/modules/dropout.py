"""Dropout: zero elements with probability p while training, scaling the rest by 1/(1-p)."""
from __future__ import annotations

from ...autograd.tensor_base import TensorBase
from .. import functional as F
from .module import Module


class Dropout(Module):
    """In train() mode each element is zeroed with probability p and the survivors are scaled by
    1/(1-p); in eval() mode the input passes through unchanged. The random mask comes from
    tinygrad_lab's generator, so the same seed does not give PyTorch's mask."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: TensorBase) -> TensorBase:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
