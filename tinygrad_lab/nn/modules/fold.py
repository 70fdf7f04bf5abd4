"""Unfold and Fold: a convolution's columns as a layer (im2col) and back (col2im), no parameters."""
from __future__ import annotations

from ...autograd.tensor_base import TensorBase
from .. import functional as F
from .module import Module


class Unfold(Module):
    """Every kernel_size window of (N, C, H, W) as a column: (N, C*kh*kw, L), as F.unfold."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: TensorBase) -> TensorBase:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"


class Fold(Module):
    """Columns (N, C*kh*kw, L) summed back onto an output_size image: (N, C, H, W), as F.fold."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: TensorBase) -> TensorBase:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
