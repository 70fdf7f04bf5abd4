"""LayerNorm and RMSNorm: normalise over the last len(normalized_shape) dimensions of each sample;
GroupNorm: over groups of channels of each sample; LocalResponseNorm: each channel by its neighbours."""
from __future__ import annotations

import numbers

from ... import creation
from ...autograd.tensor_base import TensorBase
from ...ops.shapes import sizes
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class LayerNorm(Module):
    """y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias over the trailing normalized_shape dims
    (biased variance, as PyTorch); weight = 1 and bias = 0 initially."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = sizes((normalized_shape,), type(self).__name__, "normalized_shape")
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: TensorBase) -> TensorBase:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalises each of num_groups groups of channels of every sample of (N, C, *) input, then
    scales and shifts each channel (weight = 1, bias = 0 initially)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, (num_channels,), affine, bias, device, dtype)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: TensorBase) -> TensorBase:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """y = x / sqrt(mean(x²) + eps) * weight over the trailing normalized_shape dims (no centring, no
    bias); eps=None uses the machine epsilon of the input's dtype, as PyTorch; weight = 1 initially."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(creation.empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: TensorBase) -> TensorBase:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


def _affine_parameters(module: Module, shape: tuple, affine: bool, bias: bool, device, dtype) -> None:
    """The scale `weight` and shift `bias` of a normalisation layer (None where absent), initialised."""
    weight = Parameter(creation.empty(shape, dtype=dtype, device=device)) if affine else None
    module.register_parameter("weight", weight)
    shift = Parameter(creation.empty(shape, dtype=dtype, device=device)) if affine and bias else None
    module.register_parameter("bias", shift)
    module.reset_parameters()


def _reset_affine(module: Module) -> None:
    """weight = 1 and bias = 0, those that exist."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LocalResponseNorm(Module):
    """Divides each channel of (N, C, *) input by (k + alpha * mean of x² over `size` neighbouring channels)
    ** beta (AlexNet's normalisation); no parameters."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: TensorBase) -> TensorBase:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
