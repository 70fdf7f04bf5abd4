"""Identity, Linear, LazyLinear and Bilinear: affine maps of the last dimension."""
from __future__ import annotations

import math

from ... import creation
from ...autograd.tensor_base import TensorBase
from ...ops.shapes import counts
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import LazyModuleMixin
from .module import Module


class Identity(Module):
    """Returns its input unchanged; any constructor arguments are accepted and ignored (as PyTorch)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: TensorBase) -> TensorBase:
        return input


class Linear(Module):
    """y = x Wᵀ + b with weight of shape (out_features, in_features), bias (out_features,).

    Default init as PyTorch: W ~ U(-1/√in, 1/√in) (kaiming_uniform_ with a=√5), b ~ U(-1/√in, 1/√in)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        in_features, out_features = counts(type(self).__name__, in_features=in_features, out_features=out_features)
        self.in_features = in_features
        self.out_features = out_features
        shapes = self._tensor_shapes()
        self.weight = Parameter(creation.empty(shapes["weight"], dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(creation.empty(shapes["bias"], dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _tensor_shapes(self) -> dict:
        """The shapes of weight and bias, from the sizes (a LazyLinear reads them again at its first call)."""
        return {"weight": (self.out_features, self.in_features), "bias": (self.out_features,)}

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: TensorBase) -> TensorBase:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is the last dim of its first input. Until that call, weight and bias are
    UninitializedParameters and in_features is 0; the call gives them their shapes (the same Parameter
    objects, so an optimizer made earlier still holds them) and Linear's initialisation, and the module
    becomes a Linear, as PyTorch's does (the mechanism: nn.modules.lazy.LazyModuleMixin).
    Deviation: a 0-d first input raises RuntimeError (PyTorch's IndexError comes from reading its shape)."""

    cls_to_become = Linear
    _lazy_size = "in_features"

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, out_features, bias, device, dtype)

    def _infer_size(self, input: TensorBase) -> int:
        if not input.dim():
            raise RuntimeError("LazyLinear: the first input must have at least one dim (its last is in_features)")
        return input.shape[-1]


class Bilinear(Module):
    """y_k = x1ᵀ W_k x2 + b_k with weight (out_features, in1_features, in2_features).

    Default init as PyTorch: weight and bias ~ U(-1/√in1, 1/√in1)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        in1_features, in2_features, out_features = counts(type(self).__name__, in1_features=in1_features,
                                                          in2_features=in2_features, out_features=out_features)
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(creation.empty((out_features, in1_features, in2_features), dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(creation.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: TensorBase, input2: TensorBase) -> TensorBase:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
