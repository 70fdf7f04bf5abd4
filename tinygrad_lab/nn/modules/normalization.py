"""LayerNorm: normalise over the last len(normalized_shape) dimensions of each sample."""
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
        if self.elementwise_affine:
            self.weight = Parameter(creation.empty(self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(creation.empty(self.normalized_shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: TensorBase) -> TensorBase:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")
