"""nn.init: the weight initialisations PyTorch's layers use, in place and without recording."""
from __future__ import annotations

import math

from .._warn import warn
from ..autograd.grad_mode import no_grad


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


def uniform_(tensor, a: float = 0.0, b: float = 1.0):
    """Fill with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor, mean: float = 0.0, std: float = 1.0):
    """Fill with N(mean, std²)."""
    with no_grad():
        return tensor.normal_(mean, std)


def constant_(tensor, val: float):
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain: float = 1.0):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain: float = 1.0):
    """N(0, std²) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    """U(-b, b) with b = gain * sqrt(3 / fan) (He et al., 2015); nn.Linear's default uses a=sqrt(5)."""
    if _no_elements(tensor):
        return tensor
    gain = calculate_gain(nonlinearity, a)
    bound = gain * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    """N(0, std²) with std = gain / sqrt(fan)."""
    if _no_elements(tensor):
        return tensor
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(_fan(tensor, mode)))
