"""Moving tensors between devices, and the sources of copy_ and fill_ (which may cross devices)."""
from __future__ import annotations

from ..autograd.tensor_base import TensorBase, make
from .broadcast import expand
from .op import Op, tensor_args
from .promotion import cast


class ToDevice(Op):
    """A copy of x on another device, through host memory; the gradient goes back."""

    @staticmethod
    def forward(ctx, x, device):
        ctx.src = x._device
        host = x._device.backend.to_host(x._data)
        return make(device.backend.asarray(host, index=device.index or 0), device)

    @staticmethod
    def backward(ctx, g):
        return to_device(g, ctx.src), None


@tensor_args("x")
def to_device(x, device):
    """x on `device` (a differentiable copy); x itself when it is already there."""
    return x if x._device is device else ToDevice.apply(x, device)


@tensor_args("x", "src", op="copy_")
def copy_from(x, src):
    """src broadcast to x's shape, cast to x's dtype and moved to x's device (differentiable in src)."""
    src = cast(to_device(src, x._device), x._data.dtype)
    return expand(src, x._data.shape)


def fill(x, value) -> TensorBase:
    """A tensor shaped like x filled with `value` (a number or a one-element tensor)."""
    if isinstance(value, TensorBase):
        return copy_from(x, value)
    return make(x._device.backend.xp.full_like(x._data, value), x._device)
