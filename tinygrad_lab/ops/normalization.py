"""Batch normalization in training mode as one recorded op, its backward written out: the classic
page of backpropagation by hand, and the layer every GAN and most CNNs run a few times a step.

    BatchNorm    y = γ x̂ + β,  x̂ = (x - μ) / √(σ² + eps),  μ and σ² over every dim but the channels

Composed of ops (`batch_norm_composed`, the reference), a batch norm records ~12 nodes and its
backward runs ~20 small ops; as one op it records 1 node and its backward is one page of array
arithmetic (pytorch/examples' DCGAN: five batch norms a step). When the gradient must itself be
differentiable (create_graph), backward runs the composed form again and lets the engine
differentiate it, so gradients of gradients are right either way (as ops/recurrent.py's cells do).
"""
from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import state as _grad_state
from ..autograd.tensor_base import TensorBase
from . import elementwise as ew
from . import movement as mv
from . import reduce as rd
from .composed import composed_backward
from .op import Op, constant


class BatchNorm(Op):
    """Training-mode batch norm of x (N, C, *): per channel c, over the n elements of the other dims,

        μ = mean(x)    σ² = mean((x - μ)²)    x̂ = (x - μ) / √(σ² + eps)    y = γ x̂ + β

    Outputs y, and the batch's μ and Σ(x - μ)² per channel (for the running statistics; no gradient).
    float16 input is normalised in float32, as PyTorch accumulates its statistics.

    Backward (ḡ the gradient of y; sums and means over the same dims):

        dβ = Σ ḡ        dγ = Σ ḡ x̂        dx̂ = ḡ γ
        dx = (dx̂ - mean(dx̂) - x̂ · mean(dx̂ x̂)) / √(σ² + eps)

    (x̂ depends on x directly and through μ and σ²: the two means are those two paths.)
    """

    @staticmethod
    def forward(ctx, x, weight, bias, axes, eps):
        d = x._data
        wide = d.astype(np.float32) if d.dtype == np.float16 else d
        shape = channel_shape(d.ndim)
        mean = wide.mean(axis=axes, keepdims=True)
        xhat = wide - mean
        sq_sum = (xhat * xhat).sum(axis=axes, keepdims=True)
        inv_std = 1 / ctx.xp.sqrt(sq_sum / (wide.size // d.shape[1]) + eps)
        xhat *= inv_std
        out = xhat if weight is None else xhat * weight._data.reshape(shape)
        if bias is not None:
            out = out + bias._data.reshape(shape)
        ctx.axes, ctx.eps = axes, eps
        ctx.save_for_backward(x, weight, bias, xhat, inv_std)
        ctx.mark_non_differentiable(mean, sq_sum)
        return out.astype(d.dtype, copy=False), mean.reshape(-1), sq_sum.reshape(-1)

    @staticmethod
    def backward(ctx, g, _g_mean, _g_sq_sum):
        x, weight, bias, xhat, inv_std = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: the gradient must be differentiable too
            return composed_backward(ctx, batch_norm_composed, (x, weight, bias), (g,), ctx.axes, ctx.eps)
        axes, n = ctx.axes, ctx.needs_input_grad
        if isinstance(xhat, TensorBase):  # without γ and β, x̂ is the output, saved as one (checked for changes)
            xhat = xhat._data
        gd = g._data.astype(xhat.dtype, copy=False)
        dw = constant(ctx, (gd * xhat).sum(axis=axes).astype(weight._data.dtype, copy=False)) if n[1] else None
        db = constant(ctx, gd.sum(axis=axes).astype(bias._data.dtype, copy=False)) if n[2] else None
        dx = None
        if n[0]:
            dxhat = gd if weight is None else gd * weight._data.reshape(channel_shape(gd.ndim))
            dx = dxhat - dxhat.mean(axis=axes, keepdims=True)
            dx -= xhat * (dxhat * xhat).mean(axis=axes, keepdims=True)
            dx *= inv_std
            dx = constant(ctx, dx.astype(x._data.dtype, copy=False))
        return dx, dw, db, None, None


def batch_norm_composed(x, weight, bias, axes: tuple, eps: float):
    """BatchNorm's normalised output y written with ops (its reference, and its differentiable backward)."""
    wide = ew.cast(x, np.float32) if x._data.dtype == np.float16 else x
    out, _, _ = normalize_over(wide, axes, eps)
    return affine(ew.cast(out, x._data.dtype), weight, bias, x._data.ndim)


# ---------------------------------------------------------------- the pieces every normalization layer shares

def normalize_over(x, axes: tuple, eps: float):
    """(x - mean) / sqrt(var + eps) over axes (biased variance), with the mean and variance; composed of ops."""
    mean = rd.mean(x, axes, keepdim=True)
    centered = ew.sub(x, mean)
    var = rd.mean(ew.mul(centered, centered), axes, keepdim=True)
    return ew.mul(centered, ew.rsqrt(ew.add(var, eps))), mean, var


def channel_shape(ndim: int) -> tuple:
    """The shape (1, C, 1, ...) (C as -1) that makes a per-channel (C,) vector broadcast over (N, C, *)."""
    return (1, -1) + (1,) * (ndim - 2)


def per_channel(t, ndim: int):
    """A (C,) tensor shaped to broadcast over (N, C, *) input of ndim dims."""
    return mv.reshape(t, channel_shape(ndim))


def affine(out, weight, bias, ndim: int):
    """out * weight + bias per channel, each skipped when None."""
    if weight is not None:
        out = ew.mul(out, per_channel(weight, ndim))
    if bias is not None:
        out = ew.add(out, per_channel(bias, ndim))
    return out
