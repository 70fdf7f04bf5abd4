"""Conv1d, Conv2d and Conv3d: learnable cross-correlations over 1, 2 or 3 spatial dimensions;
ConvTranspose1d/2d/3d: their transposes (the gradient of a convolution with respect to its input);
LazyConv1d/2d/3d and LazyConvTranspose1d/2d/3d: the same with in_channels read from the first input.

padding_mode 'zeros' pads inside the convolution; 'reflect', 'replicate' and 'circular' (not for
the transposed layers, as in PyTorch) pad the input with F.pad in that mode first and convolve with
padding 0.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from ... import creation
from ...autograd.tensor_base import TensorBase
from ...ops.shapes import counts, sizes
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import LazyModuleMixin
from .module import Module


def _ntuple(n: int):
    def parse(x) -> tuple:
        if isinstance(x, Iterable) and not isinstance(x, str):
            return tuple(x)
        return (x,) * n
    return parse


_single = _ntuple(1)
_pair = _ntuple(2)
_triple = _ntuple(3)


def _as_pad_widths(padding, kernel_size: tuple, dilation: tuple) -> tuple:
    """The layer's padding as F.pad's widths (last dim first, each dim's (left, right)): an int p pads
    p on both sides; 'same' pads dilation * (kernel - 1) in all, the odd one on the right; 'valid' none."""
    if padding == "valid":
        padding = (0,) * len(kernel_size)
    if padding == "same":
        totals = [d * (k - 1) for d, k in zip(dilation, kernel_size)]
        return tuple(w for t in reversed(totals) for w in (t // 2, t - t // 2))
    return tuple(w for p in reversed(padding) for w in (p, p))


def _check_padding(padding, stride: tuple, padding_mode: str) -> None:
    """PyTorch's ValueErrors for a padding string other than 'same'/'valid', 'same' with a stride, or an
    unknown padding_mode."""
    valid_padding_strings = {"same", "valid"}
    if isinstance(padding, str):
        if padding not in valid_padding_strings:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
    valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
    if padding_mode not in valid_padding_modes:
        raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                         f"padding_mode='{padding_mode}'")


class _ConvNd(Module):
    """What the convolutions share: argument checks, weight/bias, init, forward and repr (as torch's
    _ConvNd). Each layer names its function in `_conv` (F.conv2d, F.conv_transpose2d, ...)."""

    _n: int = 0
    _conv = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple, padding,
                 dilation: tuple, groups: int, bias: bool, padding_mode: str, device=None, dtype=None,
                 transposed: bool = False, output_padding: tuple | None = None) -> None:
        super().__init__()
        name = type(self).__name__
        in_channels, out_channels, groups = counts(name, in_channels=in_channels, out_channels=out_channels,
                                                   groups=groups)
        kernel_size, stride = sizes(kernel_size, name, "kernel_size"), sizes(stride, name, "stride")
        dilation = sizes(dilation, name, "dilation")
        padding = padding if isinstance(padding, str) else sizes(padding, name, "padding")
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        _check_padding(padding, stride, padding_mode)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding if output_padding is not None else (0,) * len(kernel_size)
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _as_pad_widths(padding, kernel_size, dilation)
        shapes = self._tensor_shapes()
        self.weight = Parameter(creation.empty(shapes["weight"], dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(creation.empty(shapes["bias"], dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _tensor_shapes(self) -> dict:
        """The shapes of weight and bias, from the sizes (a lazy convolution reads them again at its first
        call). A transposed convolution's weight is (in, out/groups, k...): that of the one it transposes."""
        if self.transposed:
            channels = (self.in_channels, self.out_channels // self.groups)
        else:
            channels = (self.out_channels, self.in_channels // self.groups)
        return {"weight": (*channels, *self.kernel_size), "bias": (self.out_channels,)}

    def reset_parameters(self) -> None:
        """PyTorch's default: weight ~ kaiming_uniform_(a=√5), i.e. U(-1/√fan_in, 1/√fan_in);
        bias ~ U(-1/√fan_in, 1/√fan_in) with fan_in = in_channels/groups × prod(kernel_size)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def _conv_forward(self, input: TensorBase, weight: TensorBase, bias: TensorBase | None) -> TensorBase:
        input, padding = self._padded(input)
        return self._conv(input, weight, bias, self.stride, padding, self.dilation, self.groups)

    def forward(self, input: TensorBase) -> TensorBase:
        return self._conv_forward(input, self.weight, self.bias)

    def _padded(self, input: TensorBase) -> tuple:
        """(input, padding) for the convolution: for padding_mode 'zeros' the input as it is and the
        layer's padding; otherwise, as PyTorch, the input padded by F.pad in that mode and padding 0."""
        if self.padding_mode == "zeros":
            return input, self.padding
        return (F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                (0,) * len(self.kernel_size))

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L); weight (out_channels, in_channels/groups, kernel_size)."""

    _conv = staticmethod(F.conv1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _single(kernel_size), _single(stride),
                         padding if isinstance(padding, str) else _single(padding), _single(dilation),
                         groups, bias, padding_mode, device, dtype)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W); weight (out_channels, in_channels/groups, kH, kW)."""

    _conv = staticmethod(F.conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride),
                         padding if isinstance(padding, str) else _pair(padding), _pair(dilation),
                         groups, bias, padding_mode, device, dtype)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W); weight (out_channels, in_channels/groups, kD, kH,
    kW)."""

    _conv = staticmethod(F.conv3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _triple(kernel_size), _triple(stride),
                         padding if isinstance(padding, str) else _triple(padding), _triple(dilation),
                         groups, bias, padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    """What the transposed convolutions share: the output_size argument of forward, which
    picks the output_padding that gives that size (as PyTorch)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                 dilation, padding_mode, device, dtype, parse) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__} does not support string padding ('{padding}')")
        super().__init__(in_channels, out_channels, parse(kernel_size), parse(stride), parse(padding),
                         parse(dilation), groups, bias, padding_mode, device, dtype, transposed=True,
                         output_padding=parse(output_padding))

    def forward(self, input: TensorBase, output_size=None) -> TensorBase:
        return self._conv(input, self.weight, self.bias, self.stride, self.padding,
                          self._output_padding(input, output_size), self.groups, self.dilation)

    def _output_padding(self, input: TensorBase, output_size) -> tuple:
        """output_padding, or the one that makes the output `output_size` (its last len(kernel) sizes)."""
        if output_size is None:
            return self.output_padding
        k = len(self.kernel_size)
        given = tuple(int(s) for s in output_size)
        if len(given) not in (k, k + 1, k + 2):
            raise ValueError(f"ConvTranspose{k}D: for {input.dim()}D input, output_size must have {k} or "
                             f"{k + 2} elements (got {len(given)})")
        output_size = given[-k:]
        extra = []
        for d in range(k):
            smallest = ((input.shape[d - k] - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            largest = smallest + self.stride[d] - 1
            if not smallest <= output_size[d] <= largest:
                raise ValueError(f"requested an output size of {list(output_size)}, but valid sizes range from "
                                 f"{smallest} to {largest} (for an input of {list(input.shape[-k:])})")
            extra.append(output_size[d] - smallest)
        return tuple(extra)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L); weight (in_channels, out_channels/groups,
    kernel_size). Initialised as PyTorch: kaiming_uniform_(a=√5), whose fan_in is weight.size(1) * k."""

    _conv = staticmethod(F.conv_transpose1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype, _single)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W); weight (in_channels,
    out_channels/groups, kH, kW). forward(input, output_size=None): output_size picks the output_padding
    that gives that size, as PyTorch's."""

    _conv = staticmethod(F.conv_transpose2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype, _pair)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W); weight (in_channels,
    out_channels/groups, kD, kH, kW). forward(input, output_size=None), as ConvTranspose2d's."""

    _conv = staticmethod(F.conv_transpose3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype, _triple)


class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share: in_channels is the channel dim of the first input (dim 1 of a
    batched input, dim 0 of an unbatched one). The out_channels/groups check runs at construction (PyTorch
    defers it to the first call)."""

    _lazy_size = "in_channels"

    def _infer_size(self, input: TensorBase) -> int:
        k = len(self.kernel_size)
        if input.dim() not in (k + 1, k + 2):
            raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {list(input.shape)}")
        in_channels = input.shape[1] if input.dim() == k + 2 else input.shape[0]
        if in_channels % self.groups != 0:
            raise ValueError(f"in_channels must be divisible by groups (the input has {in_channels} channels, "
                             f"groups={self.groups})")
        return in_channels


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A Conv1d whose in_channels is read from its first input (see nn.modules.lazy); it becomes a Conv1d."""

    cls_to_become = Conv1d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A Conv2d whose in_channels is read from its first input (see nn.modules.lazy); it becomes a Conv2d."""

    cls_to_become = Conv2d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype)


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """A Conv3d whose in_channels is read from its first input (see nn.modules.lazy); it becomes a Conv3d."""

    cls_to_become = Conv3d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype)


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels is read from its first input (see nn.modules.lazy); it becomes
    a ConvTranspose1d."""

    cls_to_become = ConvTranspose1d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, out_channels, kernel_size, stride, padding, output_padding, groups, bias, dilation,
                         padding_mode, device, dtype)


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels is read from its first input (see nn.modules.lazy); it becomes
    a ConvTranspose2d."""

    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, out_channels, kernel_size, stride, padding, output_padding, groups, bias, dilation,
                         padding_mode, device, dtype)


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels is read from its first input (see nn.modules.lazy); it becomes
    a ConvTranspose3d."""

    cls_to_become = ConvTranspose3d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, out_channels, kernel_size, stride, padding, output_padding, groups, bias, dilation,
                         padding_mode, device, dtype)
