"""Pooling layers (no parameters): max, average and power-average (LPPool) pooling over (N, C, L),
(N, C, H, W) and (N, C, D, H, W) inputs, the adaptive ones, which pick their windows to give a fixed
output size, and max unpooling, which puts max pooling's values back at their indices."""
from __future__ import annotations

from ...autograd.tensor_base import TensorBase
from .. import functional as F
from .module import Module


class _MaxPoolNd(Module):
    """What the max pools share: their arguments (stride defaults to kernel_size, as PyTorch)
    and repr."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """The maximum over each kernel_size window of (N, C, H, W) or (C, H, W); stride defaults to
    kernel_size (as PyTorch)."""

    def forward(self, input: TensorBase):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """The maximum over each kernel_size window of (N, C, D, H, W) or (C, D, H, W); stride defaults to
    kernel_size."""

    def forward(self, input: TensorBase):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _MaxUnpoolNd(Module):
    """What the max unpools share: sizes kept as tuples (stride defaults to kernel_size), the repr."""

    _spatial = 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        n = self._spatial
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Puts each value of (N, C, L) or (C, L) back where MaxPool1d(return_indices=True) found it, zeros
    elsewhere; forward(input, indices, output_size=None) picks among the lengths that pool to L."""

    _spatial = 1

    def forward(self, input: TensorBase, indices: TensorBase, output_size=None) -> TensorBase:
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """Puts each value of (N, C, H, W) or (C, H, W) back where MaxPool2d(return_indices=True) found it,
    zeros elsewhere; forward(input, indices, output_size=None)."""

    _spatial = 2

    def forward(self, input: TensorBase, indices: TensorBase, output_size=None) -> TensorBase:
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """Puts each value of (N, C, D, H, W) or (C, D, H, W) back where MaxPool3d(return_indices=True) found it,
    zeros elsewhere; forward(input, indices, output_size=None)."""

    _spatial = 3

    def forward(self, input: TensorBase, indices: TensorBase, output_size=None) -> TensorBase:
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class _AvgPoolNd(Module):
    """What AvgPool2d and AvgPool3d share: their arguments (stride defaults to kernel_size, as PyTorch)
    and repr."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """The mean over each kernel_size window of (N, C, H, W) or (C, H, W); stride defaults to kernel_size."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPoolNd):
    """The mean over each kernel_size window of (N, C, D, H, W) or (C, D, H, W); stride defaults to
    kernel_size."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output_size (an int, or (H, W) where None keeps the input's size)."""

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: TensorBase) -> TensorBase:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool1d(_MaxPoolNd):
    """The maximum over each kernel_size window of (N, C, L) or (C, L); stride defaults to kernel_size."""

    def forward(self, input: TensorBase):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """The mean over each kernel_size window of (N, C, L) or (C, L); stride defaults to kernel_size.
    Sizes are kept as 1-tuples, as PyTorch's."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: TensorBase) -> TensorBase:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    extra_repr = _AvgPoolNd.extra_repr


class _AdaptivePool(Module):
    """What the adaptive pools share: output_size (an int, or a tuple where None keeps the input's size)."""

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling of (N, C, L) or (C, L) to output_size positions."""

    def __init__(self, output_size) -> None:
        super().__init__(output_size)
        del self.return_indices

    def forward(self, input: TensorBase) -> TensorBase:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to output_size (an int, or (D, H, W) where None
    keeps the input's size)."""

    def __init__(self, output_size) -> None:
        super().__init__(output_size)
        del self.return_indices

    def forward(self, input: TensorBase) -> TensorBase:
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool1d(_AdaptivePool):
    """Max pooling of (N, C, L) or (C, L) to output_size positions (with return_indices, also the argmax)."""

    def forward(self, input: TensorBase):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptivePool):
    """Max pooling of (N, C, H, W) or (C, H, W) to output_size (an int or (H, W), None keeping that size)."""

    def forward(self, input: TensorBase):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptivePool):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to output_size (an int or (D, H, W), None keeping that
    size); with return_indices, also the argmax."""

    def forward(self, input: TensorBase):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


def _single(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _ntuple(x, n: int) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class _LPPoolNd(Module):
    """What the LPPools share: (sum of x**p)**(1/p) over each window, p = norm_type (stride
    defaults to kernel_size)."""

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling of (N, C, L) or (C, L): p = 1 sums each window, p = inf would be max pooling."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.lp_pool1d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling of (N, C, H, W) or (C, H, W)."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.lp_pool2d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """Power-average pooling of (N, C, D, H, W) or (C, D, H, W)."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.lp_pool3d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)
