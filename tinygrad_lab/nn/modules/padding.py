"""The padding layers: F.pad as a module, for use inside Sequential (ReflectionPad2d in style transfer
and CycleGAN generators, ZeroPad2d before a strided conv, ...).

Each layer pads the last 1, 2 or 3 dims (its name's 1d/2d/3d) by `padding`: an int for the same
width on every side, or a tuple (left, right[, top, bottom[, front, back]]) as F.pad takes it; a
negative width crops. Constant and zero padding take input of any rank with at least that many
dims; reflect, replicate and circular want one or two more dims (channels, or batch and channels).
"""
from __future__ import annotations

from collections.abc import Iterable

from ...autograd.tensor_base import TensorBase
from .. import functional as F
from .module import Module


class _PadNd(Module):
    """What every padding layer is: F.pad(input, padding, mode, value). A subclass names its mode and
    how many dims it pads (_dims); `padding` is kept as the tuple F.pad takes, as PyTorch keeps it."""

    mode = "constant"
    value = None
    _dims = 1

    def __init__(self, padding) -> None:
        super().__init__()
        is_tuple = isinstance(padding, Iterable) and not isinstance(padding, str)
        self.padding = tuple(padding) if is_tuple else (padding,) * (2 * self._dims)

    def forward(self, input: TensorBase) -> TensorBase:
        return F.pad(input, self.padding, self.mode, self.value)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    """Pads with a constant `value`."""

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPad:
    """Constant padding with 0 (a ConstantPadNd, as in PyTorch, whose repr shows only the padding)."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    """Wraps around: the padding on one side is taken from the other end. The layer, as PyTorch's,
    checks the input's rank itself (ValueError) before F.pad does."""

    mode = "circular"

    def forward(self, input: TensorBase) -> TensorBase:
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"{type(self).__name__}: expected {self._dims + 1}D or {self._dims + 2}D input "
                             f"(got {input.dim()}D input of shape {list(input.shape)})")
        return super().forward(input)


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with `value`: (N, C, W) or (C, W), or any tensor with a last dim."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with `value`: (N, C, H, W) or (C, H, W)."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with `value`: (N, C, D, H, W) or (C, D, H, W)."""

    _dims = 3


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pads the last dim with zeros."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pads the last 2 dims with zeros."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pads the last 3 dims with zeros."""


class ReflectionPad1d(_PadNd):
    """Mirrors the last dim about its edge elements (not repeating them): (N, C, W) or (C, W); each width
    less than W."""

    mode, _dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    """Mirrors the last 2 dims about their edge elements: (N, C, H, W) or (C, H, W); each width less than
    the size it pads."""

    mode, _dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    """Mirrors the last 3 dims about their edge elements: (N, C, D, H, W) or (C, D, H, W)."""

    mode, _dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Repeats the edge elements of the last dim: (N, C, W) or (C, W)."""

    mode, _dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    """Repeats the edge elements of the last 2 dims: (N, C, H, W) or (C, H, W)."""

    mode, _dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    """Repeats the edge elements of the last 3 dims: (N, C, D, H, W) or (C, D, H, W)."""

    mode, _dims = "replicate", 3


class CircularPad1d(_CircularPadNd):
    """Wraps the last dim around: (N, C, W) or (C, W); each width at most W."""

    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Wraps the last 2 dims around: (N, C, H, W) or (C, H, W)."""

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Wraps the last 3 dims around: (N, C, D, H, W) or (C, D, H, W)."""

    _dims = 3
