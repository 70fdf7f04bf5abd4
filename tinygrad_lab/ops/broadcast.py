"""Broadcasting and its adjoint: expand (a view of x repeated along size-1 and new leading dims)
and sum_to (a gradient summed back to the shape it was broadcast from, "unbroadcast").

Each is the other's backward. Every binary op's backward calls `sum_to` on the gradient of an
input that was broadcast; it is the "unbroadcast" seam (`tinygrad_lab.seams`), so a learner's
version can run in its place.
"""
from __future__ import annotations

import functools
import sys

from .. import seams
from ..autograd.function import check_result
from .op import Op, tensor_args
from .shapes import shape_arg


class Expand(Op):
    """Broadcast size-1 and new leading dims to a larger shape (a view, no copy).
    Backward: sum the gradient back to the input shape."""

    is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        return ctx.device.backend.broadcast_to(x._data, shape)

    @staticmethod
    def backward(ctx, g):
        return sum_to(g, ctx.input_shapes[0]), None


class SumTo(Op):
    """Sum a broadcast gradient back to `shape` (leading dims and size-1 dims).
    Backward: expand the gradient again."""

    @staticmethod
    def forward(ctx, x, shape):
        d = x._data
        axes = summed_axes(d.shape, shape)
        out = ctx.device.backend.sum(d, axes, True) if axes else d
        return ctx.xp.asarray(out.reshape(shape))

    @staticmethod
    def backward(ctx, g):
        return expand(g, ctx.input_shapes[0]), None


@functools.lru_cache(maxsize=1024)
def summed_axes(have: tuple, want: tuple) -> tuple:
    """The axes of a gradient of shape `have` that SumTo adds up to get shape `want`: the leading dims
    `want` lacks, and those where `want` has 1 and `have` more. The same few pairs recur in a program
    (every broadcasting op's backward): the answers are cached (2.0 -> 0.1 us a sum_to)."""
    lead = len(have) - len(want)
    return tuple(range(lead)) + tuple(lead + i for i, s in enumerate(want) if s == 1 and have[lead + i] != 1)


@tensor_args("x")
def expand(x, *shape):
    """Broadcast x to `shape` without copying, as torch.expand; -1 keeps a dim's size."""
    old = x._data.shape
    new = _expanded_shape(old, shape_arg(shape, "expand"))
    return x if new == old else Expand.apply(x, new)


@functools.lru_cache(maxsize=1024)
def _expanded_shape(old: tuple, shape: tuple) -> tuple:
    """The shape expand(x, *shape) gives a tensor of shape `old`, or PyTorch's error. A program expands
    to the same few shapes again and again: the answers are cached (1.1 -> 0.1 us an expand)."""
    if len(shape) < len(old):
        raise RuntimeError(f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(old)})")
    lead = len(shape) - len(old)
    new = list(shape)
    for i, s in enumerate(old):
        want = shape[lead + i]
        if want == -1:
            new[lead + i] = s
        elif s != 1 and s != want:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the existing size ({s}) at "
                               f"non-singleton dimension {lead + i}.  Target sizes: {list(shape)}.  Tensor sizes: {list(old)}")
    if any(s < 0 for s in new[:lead]):
        raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension (sizes {list(shape)})")
    return tuple(new)


@tensor_args("x")
def broadcast_to(x, shape):
    """expand(x, shape), as torch.broadcast_to."""
    return expand(x, tuple(shape))


def sum_to(x, shape: tuple):
    """x summed down to `shape`, the inverse of broadcasting x from `shape` (the "unbroadcast" seam:
    the backwards call it as `broadcast.sum_to`, so that a learner's version runs in its place)."""
    return x if x._data.shape == tuple(shape) else SumTo.apply(x, tuple(shape))


def _check(out, grad, shape):
    return check_result(out, shape, f"unbroadcast({list(grad._data.shape)} -> {list(shape)})")


seams.register("unbroadcast", sys.modules[__name__], "sum_to", adapt=seams.checked(_check), doc=(
    "Sum a gradient back to the shape of the input it was broadcast from: sum_to(grad, shape) -> a tensor "
    "of `shape` (sum over the leading dims grad has in excess, and over the dims where shape has 1 and grad "
    "has more). Every broadcasting op's backward (add, mul, matmul, where, ...) and expand's backward run it "
    "whenever the shapes differ; with create_graph the result must be differentiable (use tensor ops)."))
