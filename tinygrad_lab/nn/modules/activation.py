"""Activation modules: thin wrappers over tinygrad_lab.nn.functional with PyTorch's arguments and reprs."""
from __future__ import annotations

from ... import creation
from ...autograd.tensor_base import TensorBase
from ...ops.shapes import counts
from .. import functional as F
from .. import init as nn_init
from ..parameter import Parameter
from .module import Module


class ReLU(Module):
    """max(0, x)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: TensorBase) -> TensorBase:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x for x ≥ 0, negative_slope·x otherwise."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: TensorBase) -> TensorBase:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class RReLU(Module):
    """Randomized leaky ReLU: in training each negative element gets its own slope from U(lower, upper)
    (tinygrad_lab's generator: other numbers than PyTorch's for a seed); in eval the slope (lower + upper) / 2."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: TensorBase) -> TensorBase:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace_str}"


class ELU(Module):
    """x for x > 0, alpha·(exp(x) - 1) otherwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: TensorBase) -> TensorBase:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class GELU(Module):
    """x·Φ(x) (approximate='none') or its tanh approximation (approximate='tanh')."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: TensorBase) -> TensorBase:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x·sigmoid(x) (a.k.a. swish)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: TensorBase) -> TensorBase:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.tanh(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.sigmoid(input)


class Softmax(Module):
    """exp(x) / sum(exp(x)) along dim (dim=None follows PyTorch's legacy choice, in F.softmax)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: TensorBase) -> TensorBase:
        return F.softmax(input, self.dim, _stacklevel=5)  # a dim=None warning points at the caller

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax(x)) along dim, computed stably."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: TensorBase) -> TensorBase:
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Hardtanh(Module):
    """x clipped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if not max_val > min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: TensorBase) -> TensorBase:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace_str}"


class ReLU6(Hardtanh):
    """min(max(0, x), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _Inplace(Module):
    """An activation whose only option is `inplace` (shown in the repr when set, unless show_inplace is off)."""

    _fn = None
    _show_inplace = True

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: TensorBase) -> TensorBase:
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace and self._show_inplace else ""


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6."""

    _fn = staticmethod(F.hardsigmoid)
    _show_inplace = False


class Hardswish(_Inplace):
    """x · relu6(x + 3) / 6."""

    _fn = staticmethod(F.hardswish)
    _show_inplace = False


class Mish(_Inplace):
    """x · tanh(softplus(x))."""

    _fn = staticmethod(F.mish)
    _show_inplace = False


class SELU(_Inplace):
    """scale · elu(x, alpha) with the self-normalising constants."""

    _fn = staticmethod(F.selu)


class CELU(Module):
    """max(0, x) + min(0, alpha·(exp(x/alpha) - 1))."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: TensorBase) -> TensorBase:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class Softplus(Module):
    """log(1 + exp(beta·x)) / beta, x itself above beta·x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: TensorBase) -> TensorBase:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """x for x > 0, a·x otherwise, with a learned slope a (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        super().__init__()
        (num_parameters,) = counts(type(self).__name__, num_parameters=num_parameters)
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn_init.constant_(self.weight, self.init)

    def forward(self, input: TensorBase) -> TensorBase:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class GLU(Module):
    """a·sigmoid(b) for the two halves a, b of the input along dim."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: TensorBase) -> TensorBase:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class _Pointwise(Module):
    """An activation without options."""

    _fn = None

    def forward(self, input: TensorBase) -> TensorBase:
        return type(self)._fn(input)


class Softsign(_Pointwise):
    """x / (1 + |x|)."""

    _fn = staticmethod(F.softsign)


class LogSigmoid(_Pointwise):
    """log(sigmoid(x)), without overflow."""

    _fn = staticmethod(F.logsigmoid)


class Tanhshrink(_Pointwise):
    """x - tanh(x)."""

    _fn = staticmethod(F.tanhshrink)


class Softshrink(Module):
    """x ∓ lambd outside [-lambd, lambd], 0 inside."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: TensorBase) -> TensorBase:
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """x outside [-lambd, lambd], 0 inside."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """x where x > threshold, value elsewhere."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: TensorBase) -> TensorBase:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace_str}"


class Softmin(Softmax):
    """softmax(-x) along dim."""

    def forward(self, input: TensorBase) -> TensorBase:
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """softmax over the channels of each pixel: dim -3 of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input: TensorBase) -> TensorBase:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)
