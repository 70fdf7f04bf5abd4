"""nn.init: the weight initialisations PyTorch's layers use, in place and without recording."""
from __future__ import annotations

import math

from .. import creation
from .._warn import warn
from ..autograd.grad_mode import no_grad
from ..ops import elementwise as ew
from ..ops import movement as mv
from ..ops.decompositions import qr
from ..ops.diagonal import diagonal
from ..ops.special import erfinv


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for an activation (PyTorch's table)."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor) -> tuple[int, int]:
    """fan_in = inputs per output unit, fan_out = outputs per input unit (dims 1 and 0 times the kernel size)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _no_elements(tensor) -> bool:
    """A tensor without elements (nn.Linear(0, 4)'s weight) has a fan of 0: nothing to draw, as PyTorch says."""
    if 0 in tensor.shape:
        warn("Initializing zero-element tensors is a no-op")
        return True
    return False


def _fan(tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fill with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fill with N(mean, std²)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None):
    """Fill with N(mean, std²) restricted to [a, b] (values, not numbers of std), drawn exactly: a uniform
    draw between Φ(α) and Φ(β), for the standard normal CDF Φ and α, β = (a, b - mean) / std, mapped back
    through Φ⁻¹(u) = √2 erfinv(2u - 1)."""
    def cdf(x: float) -> float:
        return 0.5 * (1 + math.erf(x / math.sqrt(2)))

    low, high = cdf((a - mean) / std), cdf((b - mean) / std)
    with no_grad():
        tensor.uniform_(2 * low - 1, 2 * high - 1, generator=generator)
        tensor.copy_(ew.add(ew.mul(erfinv(tensor), std * math.sqrt(2)), mean))
        return tensor.clamp_(min=a, max=b)  # erfinv(±1) is ±inf, and rounding may step just outside


def constant_(tensor, val: float):
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """N(0, std²) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """U(-b, b) with b = gain * sqrt(3 / fan) (He et al., 2015); nn.Linear's default uses a=sqrt(5)."""
    if _no_elements(tensor):
        return tensor
    gain = calculate_gain(nonlinearity, a)
    bound = gain * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """N(0, std²) with std = gain / sqrt(fan)."""
    if _no_elements(tensor):
        return tensor
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(_fan(tensor, mode)), generator)


def orthogonal_(tensor, gain: float = 1.0, generator=None):
    """A (semi-)orthogonal matrix times gain (Saxe et al., 2013): the Q of the QR factorisation of a
    normal draw, its columns' signs fixed by R's diagonal so that Q is uniformly distributed. A tensor of
    more than 2 dims is seen as (shape[0], the rest flattened)."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        draw = creation.empty(rows, cols, dtype=tensor.dtype, device=tensor.device).normal_(generator=generator)
        tall = draw if rows >= cols else mv.t(draw)
        q, r = qr(tall)
        q = ew.mul(q, ew.sign(diagonal(r)))
        return tensor.copy_(ew.mul(mv.reshape(q if rows >= cols else mv.t(q), tuple(tensor.shape)), gain))


def eye_(tensor):
    """The identity matrix (ones on the diagonal, zeros elsewhere) in a 2-D tensor."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(creation.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor, groups: int = 1):
    """A convolution weight (3 to 5 dims) that passes its input through: 1 at the kernel's centre from
    input channel d to output channel d (per group), 0 elsewhere."""
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    centre = tuple(k // 2 for k in tensor.shape[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(per_group, tensor.shape[1])):
                tensor[(g * per_group + d, d) + centre] = 1
    return tensor
