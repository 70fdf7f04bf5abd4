"""Convolution and pooling over 1, 2 or 3 spatial dims: conv1d/2d/3d, their transposes, unfold/fold
(im2col itself, and its adjoint), max/avg pooling, adaptive pooling.

Shapes and arguments follow torch.nn.functional: inputs are (N, C, *spatial), spatial being (L,),
(H, W) or (D, H, W) (unbatched (C, *spatial) too), weights (O, C/groups, *kernel). One mechanism
serves every rank: the geometries keep one entry per spatial dim in tuples (sizes, kernel, stride,
...), and the loops run over kernel offsets, whatever their number of dims. The 1-d ops run as 2-d
ops with a height of 1.

How a convolution runs (im2col + one matrix product). The padded input is laid out
batch-innermost, (C, H, W, N), and for each kernel offset (i, j) the input values under
that offset for every output position are copied into `cols[:, i, j]`: a loop over the
kh*kw offsets, each a single strided copy, never a loop over pixels or images. Then
out = weight (O, C*kh*kw) @ cols (C*kh*kw, OH*OW*N) is one matrix product (one per
group), transposed back to (N, O, OH, OW). In 3-d the offsets are (a, i, j), the columns
(C, kd, kh, kw, OD, OH, OW, N): the same loop over kd*kh*kw offsets, the same matrix product.

The gradients close on themselves, so every backward is differentiable again:
    y  = Conv(x, w)                 dy/dx: ConvInputGrad(g, w)     dy/dw: ConvWeightGrad(x, g)
    gx = ConvInputGrad(g, w)  is the adjoint of Conv in x (a transposed convolution: w^T @ g, then
         col2im adds the columns back onto the input grid); its gradients are Conv and ConvWeightGrad.
    gw = ConvWeightGrad(x, g) = g @ cols^T; its gradients are ConvInputGrad and Conv.
Pooling pairs the same way: AvgPool with its adjoint AvgPoolInputGrad, and max pooling's
scatter of the gradient to the argmax with the gather from it.

Everything is written against the backend's array module (`ctx.xp`, NumPy or CuPy) with
basic slicing, matmul and elementwise ops, plus two backend helpers: `matrix_transpose`
(the layout changes) and `index_add` (max pooling's gradient where windows overlap).
Temporaries (columns, padded copies) live in a per-thread workspace reused between calls;
nothing from it is ever returned or saved for backward. The columns are K times the input
(K = kernel positions): a batch whose columns would exceed the workspace's cap (_WORKSPACE_MAX)
is convolved a chunk of images at a time (_batches), so a convolution's memory does not grow
with its batch.
"""
from __future__ import annotations

import copy
import functools
import itertools
import math
import sys
import threading
from typing import Any, NamedTuple

import numpy as np

from .. import seams
from ..autograd.tensor_base import make
from . import linalg
from . import movement as mv
from . import reduce as rd
from .op import Op, tensor_args

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "max_pool1d", "max_pool2d",
           "max_pool3d", "unfold", "fold"]


# ---------------------------------------------------------------- convolution

class Conv(Op):
    """Convolution (cross-correlation, as PyTorch) of x with w, plus bias b.
    Backward: dx = ConvInputGrad(g, w) (the transposed convolution), dw = ConvWeightGrad(x, g),
    db = ConvBiasGrad(g), g summed over batch and positions."""

    @staticmethod
    def forward(ctx, x, w, b, geo):
        n = ctx.needs_input_grad
        if n[0] or n[1] or n[2]:
            ctx.geo = geo
            ctx.save_for_backward(x, w)
        return _conv_forward(ctx.device, x._data, w._data, None if b is None else b._data, geo)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        geo = ctx.geo
        n = ctx.needs_input_grad
        gq = _grad_rows(ctx.device, g._data, geo)
        gx = ConvInputGrad.apply(g, w, geo, gq) if n[0] else None
        gw = ConvWeightGrad.apply(x, g, geo, gq) if n[1] else None
        gb = ConvBiasGrad.apply(g, gq) if n[2] else None
        return gx, gw, gb, None


class ConvBiasGrad(Op):
    """The gradient of a convolution's bias: g summed over batch and positions (from the gradient
    rows gq when the caller has them). Backward: gg broadcast back over batch and positions."""

    @staticmethod
    def forward(ctx, g, gq=None):
        if gq is not None:
            return gq.sum(axis=1)
        d = g._data
        return d.sum(axis=(0,) + tuple(range(2, d.ndim)))

    @staticmethod
    def backward(ctx, gg):
        shape = ctx.input_shapes[0]
        return mv.expand(mv.reshape(gg, (1, shape[1]) + (1,) * (len(shape) - 2)), shape), None


class ConvInputGrad(Op):
    """The gradient of a convolution's input: the transposed convolution of g with w (w^T @ g, then
    col2im). It is linear in g and w; backward: dg = Conv(gg, w), dw = ConvWeightGrad(gg, g)."""

    @staticmethod
    def forward(ctx, g, w, geo, gq=None):
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            ctx.geo = geo
            ctx.save_for_backward(g, w)
        return _conv_input_grad(ctx.device, g._data, gq, w._data, geo)

    @staticmethod
    def backward(ctx, gg):
        g, w = ctx.saved_tensors
        n = ctx.needs_input_grad
        dg = Conv.apply(gg, w, None, ctx.geo) if n[0] else None
        dw = ConvWeightGrad.apply(gg, g, ctx.geo) if n[1] else None
        return dg, dw, None, None


class ConvWeightGrad(Op):
    """The gradient of a convolution's weight: g @ cols(x)^T per group. It is linear in x and g;
    backward: dx = ConvInputGrad(g, gg), dg = Conv(x, gg)."""

    @staticmethod
    def forward(ctx, x, g, geo, gq=None):
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            ctx.geo = geo
            ctx.save_for_backward(x, g)
        return _conv_weight_grad(ctx.device, x._data, g._data, gq, geo)

    @staticmethod
    def backward(ctx, gg):
        x, g = ctx.saved_tensors
        n = ctx.needs_input_grad
        dx = ConvInputGrad.apply(g, gg, ctx.geo) if n[0] else None
        dg = Conv.apply(x, gg, None, ctx.geo) if n[1] else None
        return dx, dg, None, None


@tensor_args("input", "weight", "bias")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """1-d convolution (cross-correlation) as torch.nn.functional.conv1d: input (N, C, L) or (C, L),
    weight (O, C/groups, k); padding an int, 'valid' or 'same'."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@tensor_args("input", "weight", "bias")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """2-d convolution (cross-correlation) as torch.nn.functional.conv2d: input (N, C, H, W) or (C, H, W),
    weight (O, C/groups, kh, kw); stride/padding/dilation an int or a pair; padding also 'valid' or 'same'."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@tensor_args("input", "weight", "bias")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """3-d convolution (cross-correlation) as torch.nn.functional.conv3d: input (N, C, D, H, W) or (C, D, H, W),
    weight (O, C/groups, kd, kh, kw); stride/padding/dilation an int or a triple; padding also 'valid' or 'same'.
    The same im2col and matrix product as conv2d's, over kd*kh*kw kernel offsets."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv(op: str, spatial: int, input, weight, bias, stride, padding, dilation, groups):
    x, unbatched = _conv_operands(op, spatial, input, weight, bias)
    geo = _conv_geometry(op, spatial, x, weight, bias, stride, padding, dilation, groups)
    out = Conv.apply(x, weight, bias, geo)
    return mv.squeeze(out, 0) if unbatched else out


# ---------------------------------------------------------------- transposed convolution

class ConvTranspose(Op):
    """The transposed convolution of x with w, plus b: the adjoint of the convolution Conv(·, w) that
    maps an output-sized tensor back to input size. Each input value x[n, ci, h, w] spreads the kernel
    w[ci, co] onto the output grid at (h * stride - padding, w * stride - padding), the spread
    copies adding up where they overlap: computed as col2im(wᵀ @ x), exactly ConvInputGrad.
    Backward: linear in x and w, and the adjoint of an adjoint is the map itself:
        dx = Conv(g, w)              the convolution this is the transpose of
        dw = ConvWeightGrad(g, x)    the weight gradient of that convolution, with x as its output gradient
        db = g summed over batch and positions
    `geo` is the geometry of that convolution (its input is the size of our output)."""

    @staticmethod
    def forward(ctx, x, w, b, geo):
        n = ctx.needs_input_grad
        if n[0] or n[1] or n[2]:
            ctx.geo = geo
            ctx.save_for_backward(x, w)
        out = _conv_input_grad(ctx.device, x._data, None, w._data, geo)  # in chunks of images, as conv's own
        if b is not None:
            out += b._data.reshape((-1,) + (1,) * (out.ndim - 2))
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        n = ctx.needs_input_grad
        dx = Conv.apply(g, w, None, ctx.geo) if n[0] else None
        dw = ConvWeightGrad.apply(g, x, ctx.geo) if n[1] else None
        db = ConvBiasGrad.apply(g) if n[2] else None
        return dx, dw, db, None


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1):
    """1-d transposed convolution as torch.nn.functional.conv_transpose1d: input (N, C_in, L) or (C_in, L),
    weight (C_in, C_out/groups, k); the output has length (L - 1) * stride - 2 * padding
    + dilation * (k - 1) + output_padding + 1."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1):
    """2-d transposed convolution as torch.nn.functional.conv_transpose2d: input (N, C_in, H, W) or
    (C_in, H, W), weight (C_in, C_out/groups, kh, kw); stride, padding, output_padding and dilation an
    int or a pair. It is the gradient of conv2d with respect to its input (as a function of the
    output gradient), which is how it is computed."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1):
    """3-d transposed convolution as torch.nn.functional.conv_transpose3d: input (N, C_in, D, H, W) or
    (C_in, D, H, W), weight (C_in, C_out/groups, kd, kh, kw); stride, padding, output_padding and dilation
    an int or a triple. As in 2-d, it is conv3d's gradient with respect to its input."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def _conv_transpose(op: str, spatial: int, input, weight, bias, stride, padding, output_padding, groups, dilation):
    x, unbatched = _conv_operands(op, spatial, input, weight, bias)
    geo = _conv_transpose_geometry(op, spatial, x, weight, bias, stride, padding, output_padding, groups, dilation)
    out = ConvTranspose.apply(x, weight, bias, geo)
    return mv.squeeze(out, 0) if unbatched else out


# ---------------------------------------------------------------- unfold and fold: the columns themselves

class Unfold(Op):
    """The sliding windows of x (N, C, H, W) as columns (N, C*kh*kw, L), one per window position
    (L = OH*OW, row-major): im2col, in PyTorch's layout. Backward: Fold (each window's gradient added
    back where the window came from)."""

    @staticmethod
    def forward(ctx, x, geo):
        ctx.geo = geo
        cols = im2col(x._data, geo)  # (C, kh, kw, OH, OW, N), in the workspace: copied out (always: copy())
        return cols.transpose(5, 0, 1, 2, 3, 4).copy().reshape(geo.N, geo.C * geo.kh * geo.kw, geo.OH * geo.OW)

    @staticmethod
    def backward(ctx, g):
        return Fold.apply(g, ctx.geo), None


class Fold(Op):
    """Columns (N, C*kh*kw, L) added back onto the (N, C, H, W) grid, overlapping windows summing:
    col2im, the adjoint of Unfold. Backward: Unfold."""

    @staticmethod
    def forward(ctx, cols, geo):
        ctx.geo = geo
        c = cols._data.reshape(geo.N, geo.C, geo.kh, geo.kw, geo.OH, geo.OW).transpose(1, 2, 3, 4, 5, 0)
        return _col2im(geo.device, c, geo)

    @staticmethod
    def backward(ctx, g):
        return Unfold.apply(g, ctx.geo), None


@tensor_args("input")
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C, H, W) -> (N, C*kh*kw, L): every kernel_size window as a column (unbatched (C, H, W) ->
    (C*kh*kw, L)), as torch.nn.functional.unfold. A convolution is weight (O, C*kh*kw) @ these."""
    if input._data.ndim not in (3, 4) or 0 in input._data.shape[1:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input._data.shape)}")
    _check_float("unfold", input=input)
    x, unbatched = _batched(input, 2, "unfold")
    k, d, p, s = _window_args(kernel_size, dilation, padding, stride)
    geo = _ConvGeom(x._data.shape, (1, x._data.shape[1]) + k, s, tuple((v, v) for v in p), d, 1, x._device)
    if geo.OH < 1 or geo.OW < 1:
        raise RuntimeError(f"Given input with spatial size {tuple(x._data.shape[2:])}, kernel_size={k}, "
                           f"dilation={d}, padding={p}, calculated shape of the array of sliding blocks as "
                           f"{(geo.OH, geo.OW)}, but its components must be at least one.")
    out = Unfold.apply(x, geo)
    return mv.squeeze(out, 0) if unbatched else out


@tensor_args("input")
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C*kh*kw, L) -> (N, C, H, W) with (H, W) = output_size: unfold's columns summed back onto the
    image (overlaps add up), as torch.nn.functional.fold; unbatched (C*kh*kw, L) -> (C, H, W)."""
    shape = input._data.shape
    if input._data.ndim not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(shape)}")
    _check_float("fold", input=input)
    x, unbatched = (mv.unsqueeze(input, 0), True) if input._data.ndim == 2 else (input, False)
    N, rows, L = x._data.shape
    k, d, p, s = _window_args(kernel_size, dilation, padding, stride)
    if rows % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={rows} and kernel_size={k}.")
    size = _ntuple(output_size, 2, "output_size", "fold")
    C = rows // (k[0] * k[1])
    geo = _ConvGeom((N, C) + size, (1, C) + k, s, tuple((v, v) for v in p), d, 1, x._device)
    if geo.OH * geo.OW != L or geo.OH < 1 or geo.OW < 1:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{geo.OH} * {geo.OW} = {geo.OH * geo.OW}, but got input.size(2)={L}.")
    out = Fold.apply(x, geo)
    return mv.squeeze(out, 0) if unbatched else out


def _window_args(kernel_size, dilation, padding, stride) -> tuple:
    """unfold's and fold's sizes as pairs, checked as PyTorch checks them."""
    k, d, p, s = (_ntuple(v, 2, name, "unfold") for v, name in
                  ((kernel_size, "kernel_size"), (dilation, "dilation"), (padding, "padding"), (stride, "stride")))
    for pair, what, short, low in ((k, "kernel size", "kernel", 1), (s, "stride", "stride", 1),
                                   (d, "dilation", "dilation", 1), (p, "padding", "pad", 0)):
        if min(pair) < low:
            words = "should be greater than zero" if low else "should be non-negative"
            raise RuntimeError(f"{what} {words}, but got {short}_height: {pair[0]} {short}_width: {pair[1]}")
    return k, d, p, s


# ---------------------------------------------------------------- max pooling

class MaxPool(Op):
    """The max over each window (padding counts as -inf); with want_indices also PyTorch's indices,
    the argmax's position in its input plane (h * W + w; d * H * W + h * W + w in 3-d). Ties go to the
    first element of the window, NaN wins (as PyTorch). Backward: g goes to each window's argmax (MaxPoolInputGrad)."""

    @staticmethod
    def forward(ctx, x, geo, want_indices):
        xp = ctx.xp
        win = geo.windows(ctx.device, geo.padded_input(ctx.device, x._data, -float("inf")))  # (K, P, OH, OW)
        best = win.max(axis=0)
        K = geo.K
        idx = xp.zeros(best.shape, dtype="int8" if K <= 127 else "int32")  # the argmax's k in the window
        if K > 1:  # first k with win[k] == best: the count of leading mismatches
            before = win[0] != best
            idx += before
            for k in range(1, K - 1):
                before &= win[k] != best
                idx += before
            if ctx.device.backend.may_be_true(lambda: xp.isnan(best).any()):  # NaN wins; the last one, as PyTorch
                nan = xp.isnan(win)
                for k in range(K):
                    xp.copyto(idx, k, where=nan[k])
        y = best.reshape(geo.y_shape)
        need_grad = ctx.needs_input_grad[0]
        if not (need_grad or want_indices):
            return y
        gidx = _argmax_index(ctx.device, geo, idx, best)
        if need_grad:
            ctx.geo, ctx.gidx = geo, gidx
        if not want_indices:
            return y
        flat = (gidx - _window_tables(ctx.device, geo).planes).reshape(geo.y_shape)
        ctx.mark_non_differentiable(flat)
        return y, flat

    @staticmethod
    def backward(ctx, g, *_):
        return MaxPoolInputGrad.apply(g, ctx.geo, ctx.gidx), None, None


class MaxPoolInputGrad(Op):
    """The gradient of max pooling: g scattered to each window's argmax (added up where windows
    overlap). Linear in g; backward: gather the gradient at the argmax again (MaxPoolGather)."""

    @staticmethod
    def forward(ctx, g, geo, gidx):
        if ctx.needs_input_grad[0]:
            ctx.geo, ctx.gidx = geo, gidx
        xp = ctx.xp
        out = xp.zeros(geo.P * geo.plane, dtype=g._data.dtype)
        if geo.overlap:
            ctx.device.backend.index_add(out, gidx.reshape(-1), g._data.reshape(-1))
        else:  # each input element is in one window at most: the argmaxes are distinct
            out[gidx.reshape(-1)] = g._data.reshape(-1)
        return out.reshape(geo.x_shape)

    @staticmethod
    def backward(ctx, gg):
        return MaxPoolGather.apply(gg, ctx.geo, ctx.gidx), None, None


class MaxPoolGather(Op):
    """Each window's value at the argmax (the max pool of another tensor with the same winners).
    Linear; backward: scatter to the argmax (MaxPoolInputGrad)."""

    @staticmethod
    def forward(ctx, x, geo, gidx):
        if ctx.needs_input_grad[0]:
            ctx.geo, ctx.gidx = geo, gidx
        return x._data.reshape(-1).take(gidx).reshape(geo.y_shape)

    @staticmethod
    def backward(ctx, g):
        return MaxPoolInputGrad.apply(g, ctx.geo, ctx.gidx), None, None


@tensor_args("input")
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """1-d max pooling as torch.nn.functional.max_pool1d: input (N, C, L) or (C, L); padding is -inf;
    with return_indices, also the argmax positions along L (int64)."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@tensor_args("input")
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """2-d max pooling as torch.nn.functional.max_pool2d: input (N, C, H, W) or (C, H, W); stride defaults to
    kernel_size; padding is -inf; with return_indices, also the argmax positions h * W + w (int64).
    The gradient goes to the argmax (the first one on ties, as PyTorch)."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@tensor_args("input")
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """3-d max pooling as torch.nn.functional.max_pool3d: input (N, C, D, H, W) or (C, D, H, W); with
    return_indices, also the argmax positions d * H * W + h * W + w in each (D, H, W) volume (int64)."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_pool(op, spatial, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    geo = _pool_args(op, input, spatial, kernel_size, stride, padding, dilation, ceil_mode)
    if return_indices:
        return tuple(MaxPool.apply(input, geo, True))
    return MaxPool.apply(input, geo, False)


def _argmax_index(dev, geo, idx, best):
    """Each window's argmax as a position in the flattened input (P * plane), int64, from its
    offset k in the window. A window whose max is -inf and that reaches into padding points at its
    first input element, as PyTorch does."""
    t = _window_tables(dev, geo)
    if geo.padded and dev.backend.may_be_true(lambda: (best == -float("inf")).any()):
        within = _clipped_position(dev.backend.xp, geo, t, idx.astype("int64"))
    else:  # the position of each window's first element, plus the argmax's offset in the window
        within = t.starts + t.offsets.take(idx)
    return within + t.planes


def _clipped_position(xp, geo, t, k):
    """The position in the plane of kernel offset k (flat, row-major) of every window, each coordinate
    clipped into the input (padding's positions moved onto its nearest input element)."""
    nd, within = len(geo.sizes), 0
    for d in reversed(range(nd)):  # the last dim varies fastest in k
        at = k % geo.kernel[d]
        k = k // geo.kernel[d]
        pos = xp.clip(_along(t.firsts[d], d, nd) + at * geo.dilation[d], 0, geo.sizes[d] - 1)
        within = within + pos * t.steps[d]
    return within


def _along(a, d: int, nd: int):
    """The 1-d array a shaped to lie along dim d of nd trailing dims (for broadcasting)."""
    return a.reshape((1,) * d + (-1,) + (1,) * (nd - d - 1))


class _WindowTables(NamedTuple):
    """A pooling geometry's index tables on one device (int64): each window's first index along each
    spatial dim (firsts, one array per dim), the step in the flattened plane of one position along
    each dim (steps, ints), each window's first element's position in the plane (starts, out's shape),
    the position of each kernel offset k relative to it (offsets, (K,)) and each plane's first
    position (planes, (P, 1, ...))."""

    firsts: tuple
    steps: tuple
    starts: Any
    offsets: Any
    planes: Any


_tables: dict = {}  # (device, geometry) -> _WindowTables: made once, not uploaded or recomputed per call


def _window_tables(dev, geo) -> _WindowTables:
    key = (dev._str, geo.P, geo.sizes, geo.out, geo.kernel, geo.stride, geo.padding, geo.dilation)
    t = _tables.get(key)
    if t is None:
        if len(_tables) >= 64:  # a few geometries recur (one per pooling layer and batch size)
            _tables.clear()
        xp, nd = dev.backend.xp, len(geo.sizes)
        steps = tuple(math.prod(geo.sizes[d + 1:]) for d in range(nd))  # (H * W, W, 1) for (D, H, W)
        firsts = tuple(xp.arange(o, dtype="int64") * s - p for o, s, p in zip(geo.out, geo.stride, geo.padding))
        starts = sum(_along(f, d, nd) * steps[d] for d, f in enumerate(firsts))
        offsets = np.array([sum(i * dil * st for i, dil, st in zip(at, geo.dilation, steps))
                            for at in itertools.product(*map(range, geo.kernel))], dtype="int64")
        offsets = dev.backend.asarray(offsets, index=dev.index or 0)
        planes = (xp.arange(geo.P, dtype="int64") * geo.plane).reshape((geo.P,) + (1,) * nd)
        t = _tables[key] = _WindowTables(firsts, steps, starts, offsets, planes)
    return t


# ---------------------------------------------------------------- average pooling

class AvgPool(Op):
    """The mean over each window (sum / divisor). Linear; backward: g / divisor spread over each window
    (AvgPoolInputGrad)."""

    @staticmethod
    def forward(ctx, x, geo):
        if ctx.needs_input_grad[0]:
            ctx.geo = geo
        total = None
        for _, slab in geo.slabs(geo.padded_input(ctx.device, x._data, 0)):
            if total is None:
                total = ctx.xp.array(slab, copy=True)
            else:
                total += slab
        total /= geo.divisor
        return total.reshape(geo.y_shape)

    @staticmethod
    def backward(ctx, g):
        return AvgPoolInputGrad.apply(g, ctx.geo), None


class AvgPoolInputGrad(Op):
    """The gradient of average pooling: g / divisor added onto every element of its window. Linear;
    backward: AvgPool of the incoming gradient."""

    @staticmethod
    def forward(ctx, g, geo):
        if ctx.needs_input_grad[0]:
            ctx.geo = geo
        xp = ctx.xp
        d = g._data
        share = d.reshape((geo.P,) + geo.out) / geo.divisor
        if not geo.padded:
            out = xp.zeros((geo.P,) + geo.sizes, dtype=d.dtype)
            for _, slab in geo.slabs(out):
                slab += share
            return out.reshape(geo.x_shape)
        buf = _scratch(ctx.device, "pool_pad", (geo.P,) + geo.grid, d.dtype, zero=True)
        for _, slab in geo.slabs(buf):
            slab += share
        # copy(), not ascontiguousarray: padded rows only, one plane, is a contiguous slice of the workspace
        return buf[geo.inner].copy().reshape(geo.x_shape)

    @staticmethod
    def backward(ctx, gg):
        return AvgPool.apply(gg, ctx.geo), None


@tensor_args("input")
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True):
    """1-d average pooling as torch.nn.functional.avg_pool1d: input (N, C, L) or (C, L); zero padding,
    counted in the divisor unless count_include_pad=False."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@tensor_args("input")
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    """2-d average pooling as torch.nn.functional.avg_pool2d: input (N, C, H, W) or (C, H, W); stride defaults
    to kernel_size; zero padding, counted in the divisor unless count_include_pad=False."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@tensor_args("input")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    """3-d average pooling as torch.nn.functional.avg_pool3d: input (N, C, D, H, W) or (C, D, H, W); stride
    defaults to kernel_size; zero padding, counted in the divisor unless count_include_pad=False."""
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _avg_pool(op, spatial, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    geo = _pool_args(op, input, spatial, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")
    geo.divisor = _avg_divisor(input._device.backend.xp, geo, count_include_pad, divisor_override,
                               input._data.dtype)
    return AvgPool.apply(input, geo)


def _avg_divisor(xp, geo, count_include_pad: bool, divisor_override, dtype):
    """PyTorch's divisor per output position: the window size clipped to the padded input (or to the
    input itself without count_include_pad); a Python number when it is the same everywhere, else an
    array of the output's spatial shape (the outer product of the window extents along each dim)."""
    if divisor_override is not None:
        return divisor_override

    def sizes(n_out, n, k, s, p):  # window extent per output index along one dim: plain ints, O(n_out)
        start = [o * s - p for o in range(n_out)]
        end = [min(b + k, n + p) for b in start]
        if count_include_pad:
            return [e - b for b, e in zip(start, end)]
        return [min(e, n) - max(b, 0) for b, e in zip(start, end)]

    extents = [sizes(*dim) for dim in zip(geo.out, geo.sizes, geo.kernel, geo.stride, geo.padding)]
    if all(len(set(e)) == 1 for e in extents):
        return math.prod(e[0] for e in extents)
    nd = len(extents)
    return math.prod(_along(xp.asarray(e, dtype=dtype), d, nd) for d, e in enumerate(extents))


# ---------------------------------------------------------------- adaptive average pooling

@tensor_args("input")
def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed output length, as torch.nn.functional.adaptive_avg_pool1d."""
    return _adaptive_avg_pool("adaptive_avg_pool1d", 1, input, output_size)


@tensor_args("input")
def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size (an int, a pair, None keeps that dim), as
    torch.nn.functional.adaptive_avg_pool2d: windows [floor(i*H/OH), ceil((i+1)*H/OH))."""
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, input, output_size)


@tensor_args("input")
def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed output size (an int, a triple, None keeps that dim), as
    torch.nn.functional.adaptive_avg_pool3d, for (C, D, H, W) or (N, C, D, H, W) input."""
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, input, output_size)


def _adaptive_avg_pool(op: str, spatial: int, input, output_size):
    outs = _adaptive_output_size(op, spatial, input, output_size)
    shape = input._data.shape
    ins, lead = shape[-spatial:], shape[:-spatial]
    if all(n % o == 0 for n, o in zip(ins, outs)):  # equal windows: a reshape and a mean
        split = []
        for n, o in zip(ins, outs):
            split += [o, n // o]
        return rd.mean(mv.reshape(input, lead + tuple(split)), tuple(-1 - 2 * i for i in range(spatial)))
    xp, dev = input._device.backend.xp, input._device
    # uneven windows: out = A_h @ x @ A_w^T with the averaging matrices (differentiable via matmul); a
    # window is a box, so the average over it is the average along each dim in turn (depth: A_d along dim -3)
    aw = make(_adaptive_matrix(xp, ins[-1], outs[-1], input._data.dtype).T.copy(), dev)
    x = linalg.matmul(input, aw)
    if spatial >= 2:
        ah = make(_adaptive_matrix(xp, ins[-2], outs[-2], input._data.dtype), dev)
        x = linalg.matmul(ah, x)
    if spatial == 3:
        ad = make(_adaptive_matrix(xp, ins[0], outs[0], input._data.dtype).T.copy(), dev)
        x = mv.movedim(linalg.matmul(mv.movedim(x, -3, -1), ad), -1, -3)
    return x


def _adaptive_matrix(xp, n_in: int, n_out: int, dtype):
    """(n_out, n_in) averaging matrix of PyTorch's adaptive windows [floor(i*n/o), ceil((i+1)*n/o))."""
    i = xp.arange(n_out).reshape(-1, 1)
    start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
    j = xp.arange(n_in)
    return ((j >= start) & (j < end)).astype(dtype) / (end - start).astype(dtype)


# ---------------------------------------------------------------- adaptive max pooling

class AdaptiveMaxPool(Op):
    """The max over each of PyTorch's adaptive windows [floor(i*H/OH), ceil((i+1)*H/OH)) (per dim), which
    may differ in size and overlap; with want_indices also the argmax's position in its input plane
    (h * W + w; d * H * W + h * W + w in 3-d). Backward: g goes to each window's argmax
    (MaxPoolInputGrad, as max pooling's)."""

    @staticmethod
    def forward(ctx, x, geo, want_indices):
        xp = ctx.xp
        tables = [geo.table(xp, d) for d in range(len(geo.sizes))]  # (n_out, k) input positions per dim
        win = _adaptive_windows(x._data.reshape((geo.P,) + geo.sizes), tables)  # (P, *out, K)
        k = win.argmax(axis=-1)  # the first max; NaN wins, as PyTorch
        y = xp.take_along_axis(win, k[..., None], axis=-1)[..., 0]
        flat = _adaptive_position(xp, geo, tables, k)
        if ctx.needs_input_grad[0]:
            planes = (xp.arange(geo.P, dtype="int64") * geo.plane).reshape((geo.P,) + (1,) * len(geo.sizes))
            ctx.geo, ctx.gidx = geo, flat + planes
        if not want_indices:
            return y.reshape(geo.y_shape)
        flat = flat.astype("int64").reshape(geo.y_shape)
        ctx.mark_non_differentiable(flat)
        return y.reshape(geo.y_shape), flat

    @staticmethod
    def backward(ctx, g, *_):
        return MaxPoolInputGrad.apply(g, ctx.geo, ctx.gidx), None, None


def _adaptive_windows(x, tables):
    """Every window of x (P, *sizes) as a row: (P, *out, K), K the product of the tables' widths. Each
    dim's table (n_out, k) indexes its own pair of axes; the window axes are then moved last."""
    nd = len(tables)
    index = tuple(t.reshape((1,) * (2 * d) + t.shape + (1,) * (2 * (nd - d - 1))) for d, t in enumerate(tables))
    win = x[(slice(None),) + index]  # (P, out_0, k_0, out_1, k_1, ...)
    order = (0,) + tuple(range(1, 2 * nd, 2)) + tuple(range(2, 2 * nd + 1, 2))
    return win.transpose(order).reshape(win.shape[:1] + tuple(t.shape[0] for t in tables) + (-1,))


def _adaptive_position(xp, geo, tables, k):
    """The position in the input plane of window offset k (flat over the windows' dims) of every window."""
    nd, flat, steps = len(tables), 0, 1
    for d in reversed(range(nd)):  # the last dim varies fastest in k
        width = tables[d].shape[1]
        at, k = k % width, k // width
        flat = flat + tables[d][_along(xp.arange(geo.out[d]), d, nd), at] * steps
        steps *= geo.sizes[d]
    return flat


class _AdaptiveGeom:
    """An adaptive pooling's shapes, as plain ints and tuples (sizes and out: per spatial dim), in the
    fields max pooling's gradient ops read (P, plane, x_shape, y_shape, overlap)."""

    __slots__ = ("x_shape", "y_shape", "P", "sizes", "out", "plane", "overlap")

    def __init__(self, x_shape: tuple, spatial: int, outs: tuple):
        self.x_shape = tuple(x_shape)
        lead = self.x_shape[:-spatial]
        self.P = math.prod(lead)
        self.sizes, self.out = self.x_shape[-spatial:], tuple(outs)
        self.plane = math.prod(self.sizes)
        self.y_shape = lead + self.out
        self.overlap = True  # windows may share elements: the gradient is added up (index_add)

    def table(self, xp, d: int):
        """(n_out, k) input positions of each window along dim d, a short window repeating its last one."""
        n, n_out = self.sizes[d], self.out[d]
        start = [(i * n) // n_out for i in range(n_out)]
        end = [-((-(i + 1) * n) // n_out) for i in range(n_out)]
        k = max(e - b for b, e in zip(start, end))
        return xp.asarray([[min(b + j, e - 1) for j in range(k)] for b, e in zip(start, end)], dtype="int64")


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """Max pooling to a fixed output length, as torch.nn.functional.adaptive_max_pool1d."""
    return _adaptive_max_pool("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Max pooling to a fixed output size (an int, a pair, None keeps that dim), as
    torch.nn.functional.adaptive_max_pool2d; with return_indices, also the argmax positions h * W + w."""
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to a fixed output size (an int, a triple, None keeps
    that dim), as torch.nn.functional.adaptive_max_pool3d; with return_indices, also the argmax positions
    d * H * W + h * W + w."""
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, return_indices)


def _adaptive_max_pool(op: str, spatial: int, input, output_size, return_indices: bool):
    outs = _adaptive_output_size(op, spatial, input, output_size)
    geo = _AdaptiveGeom(input._data.shape, spatial, outs)
    if return_indices:
        return tuple(AdaptiveMaxPool.apply(input, geo, True))
    return AdaptiveMaxPool.apply(input, geo, False)


# ---------------------------------------------------------------- argument checks

def _ntuple(value, n: int, name: str, op: str) -> tuple:
    """An int or a sequence of n ints (a single-element sequence is repeated) as a tuple of n ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    try:
        out = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(f"{op}(): argument '{name}' must be an int or a tuple of {n} ints, "
                        f"but got {type(value).__name__}") from None
    if len(out) == 1:
        return out * n
    if len(out) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={list(out)}")
    return out


def _check_float(op: str, **tensors) -> None:
    """Conv and pooling compute in floating point only, and one dtype for all operands (as PyTorch)."""
    first = None
    for name, t in tensors.items():
        if t is None:
            continue
        if t._data.dtype.kind != "f":
            raise RuntimeError(f"{op}: expected a floating point {name}, but got {name} of dtype {t.dtype} "
                               f"(convert it with .float())")
        if first is None:
            first = (name, t)
        elif t._data.dtype != first[1]._data.dtype:
            raise RuntimeError(f"{op}: expected {name} to have the same dtype as {first[0]}, but got {first[0]} of "
                               f"dtype {first[1].dtype} and {name} of dtype {t.dtype}")


def _batched(x, spatial: int, op: str):
    """x with a batch dim (unbatched input gets one, as PyTorch), and whether it was added."""
    nd = x._data.ndim
    if nd == spatial + 2:
        return x, False
    if nd == spatial + 1:
        return mv.unsqueeze(x, 0), True
    raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {op}, but got "
                       f"input of size: {list(x._data.shape)}")


def _size_str(sizes) -> str:
    return "(" + " x ".join(str(s) for s in sizes) + ")"


def _conv_pads(padding, spatial: int, kernel: tuple, dilation: tuple, stride: tuple, op: str) -> tuple:
    """((lo, hi), ...) per spatial dim from an int, a tuple, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * spatial
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = []
            for k, d in zip(kernel, dilation):  # PyTorch puts the odd extra on the right
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
            return tuple(pads)
        raise RuntimeError(f"Invalid padding string: '{padding}' (expected 'valid' or 'same')")
    p = _ntuple(padding, spatial, "padding", op)
    if any(v < 0 for v in p):
        raise RuntimeError(f"negative padding is not supported (got padding={list(p)} in {op})")
    return tuple((v, v) for v in p)


def _conv_operands(op: str, spatial: int, input, weight, bias) -> tuple:
    """Checked convolution operands: input (with a batch dim; and whether one was added)."""
    x, unbatched = _batched(input, spatial, op)
    ws = weight._data.shape
    if len(ws) != spatial + 2:
        raise RuntimeError(f"Expected {spatial + 2}-dimensional weight for {op}, but got {len(ws)}-dimensional "
                           f"weight of size {list(ws)}")
    _check_float(op, input=x, weight=weight, bias=bias)
    return x, unbatched


def _conv_geometry(op: str, spatial: int, x, weight, bias, stride, padding, dilation, groups) -> "_ConvGeom":
    """Checked convolution arguments: the geometry."""
    stride = _positive(_ntuple(stride, spatial, "stride", op), "stride", op)
    dilation = _positive(_ntuple(dilation, spatial, "dilation", op), "dilation", op)
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError(f"non-positive groups is not supported (got groups={groups} in {op})")
    xs, ws = x._data.shape, weight._data.shape
    kernel = tuple(ws[2:])
    pads = _conv_pads(padding, spatial, kernel, dilation, stride, op)
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size {list(ws)} instead")
    if xs[1] != ws[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(ws)}, expected input{list(xs)} to have "
                           f"{ws[1] * groups} channels, but got {xs[1]} channels instead")
    if bias is not None and bias._data.shape != (ws[0],):
        raise RuntimeError(f"Given weight of size {list(ws)}, expected bias to be 1-dimensional with {ws[0]} "
                           f"elements, but got bias of size {list(bias._data.shape)} instead")
    padded = [n + lo + hi for n, (lo, hi) in zip(xs[2:], pads)]
    effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(p < k for p, k in zip(padded, effective)):
        raise RuntimeError(f"Calculated padded input size per channel: {_size_str(padded)}. Kernel size: "
                           f"{_size_str(effective)}. Kernel size can't be greater than actual input size "
                           f"(in {op} of input{list(xs)} and weight{list(ws)})")
    return _ConvGeom(xs, ws, stride, pads, dilation, groups, x._device)


def _conv_transpose_geometry(op: str, spatial: int, x, weight, bias, stride, padding, output_padding, groups,
                             dilation) -> "_ConvGeom":
    """Checked transposed-convolution arguments: the geometry of the convolution it is the transpose
    of, whose input has our output's size."""
    stride, pads, extra, dilation = _conv_transpose_numbers(op, spatial, stride, padding, output_padding, groups,
                                                            dilation)
    xs, ws = x._data.shape, weight._data.shape
    if xs[1] != ws[0] or ws[0] % groups:
        raise RuntimeError(f"Given transposed=1, weight of size {list(ws)}, expected input{list(xs)} to have "
                           f"{ws[0]} channels (divisible by groups={groups}), but got {xs[1]} channels instead")
    c_out = ws[1] * groups
    if bias is not None and bias._data.shape != (c_out,):
        raise RuntimeError(f"Given transposed=1, weight of size {list(ws)}, expected bias to be 1-dimensional with "
                           f"{c_out} elements, but got bias of size {list(bias._data.shape)} instead")
    outs = [(n - 1) * s - 2 * p + d * (k - 1) + e + 1
            for n, s, p, d, k, e in zip(xs[2:], stride, pads, dilation, ws[2:], extra)]
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"{op}: the output size {outs} is too small (input {list(xs)}, weight {list(ws)}, "
                           f"stride={list(stride)}, padding={list(pads)}, dilation={list(dilation)})")
    geo = _ConvGeom((xs[0], c_out, *outs), ws, stride, tuple((p, p) for p in pads), dilation, groups, x._device)
    return geo.with_output(xs[2:])  # output_padding >= stride would give that convolution an extra position


def _conv_transpose_numbers(op: str, spatial: int, stride, padding, output_padding, groups, dilation) -> tuple:
    """stride, padding, output_padding and dilation as checked tuples (and groups checked)."""
    stride = _positive(_ntuple(stride, spatial, "stride", op), "stride", op)
    dilation = _positive(_ntuple(dilation, spatial, "dilation", op), "dilation", op)
    pads = _ntuple(padding, spatial, "padding", op)
    extra = _ntuple(output_padding, spatial, "output_padding", op)
    if any(p < 0 for p in pads) or any(e < 0 for e in extra):
        raise RuntimeError(f"negative padding is not supported (got padding={list(pads)}, "
                           f"output_padding={list(extra)} in {op})")
    if any(e >= s and e >= d for e, s, d in zip(extra, stride, dilation)):
        raise RuntimeError(f"{op}: output padding must be smaller than either stride or dilation, but got "
                           f"output_padding={list(extra)}, stride={list(stride)}, dilation={list(dilation)}")
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError(f"non-positive groups is not supported (got groups={groups} in {op})")
    return stride, pads, extra, dilation


def _positive(sizes: tuple, name: str, op: str) -> tuple:
    if any(v <= 0 for v in sizes):
        raise RuntimeError(f"non-positive {name} is not supported (got {name}={list(sizes)} in {op})")
    return sizes


def _pool_args(op: str, x, spatial: int, kernel_size, stride, padding, dilation, ceil_mode):
    """Checked pooling arguments: the geometry."""
    shape = x._data.shape
    if x._data.ndim not in (spatial + 1, spatial + 2) or any(s == 0 for s in shape[1:]):
        raise RuntimeError(f"{op}: expected a non-empty {spatial + 1}D (unbatched) or {spatial + 2}D (batched) "
                           f"input, but got input of size {list(shape)}")
    _check_float(op, input=x)
    kernel = _pool_sizes(kernel_size, "kernel_size", spatial, op)
    no_stride = stride is None or (not isinstance(stride, int) and len(stride) == 0)
    stride = kernel if no_stride else _pool_sizes(stride, "stride", spatial, op)
    padding = _pool_sizes(padding, "padding", spatial, op, positive=False)
    dilation = _pool_sizes(dilation, "dilation", spatial, op)
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0 or p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d} (in {op})")
    geo = _PoolGeom(shape, spatial, kernel, stride, padding, dilation, ceil_mode)
    if min(geo.out) < 1:
        lead = shape[-spatial - 1]
        ins = "x".join(str(s) for s in (lead,) + shape[-spatial:])
        outs = "x".join(str(s) for s in (lead,) + geo.y_shape[-spatial:])
        raise RuntimeError(f"Given input size: ({ins}). Calculated output size: ({outs}). Output size is too small "
                           f"(in {op} with kernel_size={list(kernel)}, stride={list(stride)}, padding={list(padding)})")
    return geo


def _pool_sizes(value, name: str, spatial: int, op: str, positive: bool = True) -> tuple:
    """A pooling size argument (an int, or one or `spatial` ints) as `spatial` ints, > 0 if `positive`."""
    if isinstance(value, int) and not isinstance(value, bool):
        out = (value,) * spatial
    else:
        out = tuple(int(v) for v in value)
        if len(out) == 1:
            out = out * spatial
        elif len(out) != spatial:
            what = "a single int" if spatial == 1 else f"a single int, or a tuple of {spatial} ints"
            raise RuntimeError(f"{op}: {name} must either be {what}, but got {name}={list(out)}")
    if positive and any(v <= 0 for v in out):
        raise RuntimeError(f"{op}: {name} must be greater than zero, but got {name}={list(out)}")
    return out


def _adaptive_output_size(op: str, spatial: int, input, output_size) -> tuple:
    """Checked adaptive pooling arguments: the output size (None keeps that dim's size)."""
    shape = input._data.shape
    if input._data.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{op}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got {list(shape)}")
    for d in range(1, len(shape)):
        if shape[d] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(shape)} with dimension {d} being empty")
    _check_float(op, input=input)
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * spatial
    output_size = tuple(output_size)
    if len(output_size) != spatial:
        raise RuntimeError(f"{op}: output_size must be {spatial}, but got output_size={list(output_size)}")
    outs = tuple(n if o is None else int(o) for n, o in zip(shape[-spatial:], output_size))
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"{op}: elements of output_size must be greater than zero, but got {list(outs)}")
    return outs


def _pool_out(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size; with ceil_mode the last window must start inside the input or
    the left padding."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


# ---------------------------------------------------------------- convolution geometry

@functools.lru_cache(maxsize=256)
def _window_cuts(kernel: tuple, stride: tuple, dilation: tuple, out: tuple) -> tuple:
    """Per kernel offset (row-major over the kernel's dims): (at, cut), two indexes for an array
    whose first dim is kept (channels, or pooled planes) and whose next dims are spatial. at is
    (:, i, j, ...), where that offset's columns go; cut is (:, slice, slice, ...), the elements under
    the offset for every output position: along each dim, start i * dilation, step stride, out values.
    Made once per geometry (a few recur: one per layer), so a call pays for no slicing arithmetic."""
    per_dim = [[slice(i * d, i * d + s * (o - 1) + 1, s) for i in range(k)]
               for k, s, d, o in zip(kernel, stride, dilation, out)]
    return tuple(((slice(None),) + at, (slice(None),) + cut)
                 for at, cut in zip(itertools.product(*map(range, kernel)), itertools.product(*per_dim)))


def _dim(field: str, i: int, side: int | None = None) -> property:
    """A read-only name for entry i of a per-dim tuple field (side: lo 0 or hi 1 of a (lo, hi) pair)."""
    if side is None:
        return property(lambda self: getattr(self, field)[i], doc=f"{field}[{i}]")
    return property(lambda self: getattr(self, field)[i][side], doc=f"{field}[{i}][{side}]")


@functools.lru_cache(maxsize=256)
def _conv_dims(sizes: tuple, kernel: tuple, stride: tuple, pads: tuple, dilation: tuple) -> tuple:
    """A convolution's per-dim sizes: (sizes, kernel, stride, dilation, pads, grid, out, K), the 1-d case
    lifted to 2-d with a height of 1. Cached: a few geometries recur (one per layer and batch size)."""
    if len(sizes) == 1:
        sizes, kernel, stride, dilation, pads = ((1,) + sizes, (1,) + kernel, (1,) + stride, (1,) + dilation,
                                                 ((0, 0),) + pads)
    grid = tuple(n + lo + hi for n, (lo, hi) in zip(sizes, pads))
    out = tuple((g - d * (k - 1) - 1) // s + 1 for g, k, s, d in zip(grid, kernel, stride, dilation))
    return sizes, kernel, stride, dilation, pads, grid, out, math.prod(kernel)


class _ConvGeom:
    """Everything about one convolution's shapes, as plain ints and tuples with one entry per spatial
    dim; the 1-d case is 2-d with H = kh = 1, so the spatial tuples have 2 or 3 entries.

    x_shape/w_shape/y_shape  the shapes as the tensors have them (1-d, 2-d or 3-d)
    sizes, kernel, stride, dilation   input size, kernel size, stride and dilation per spatial dim
    pads                     ((lo, hi), ...) per spatial dim (padding='same' may be uneven)
    grid                     the padded input size
    out                      output positions per spatial dim
    K, L                     kernel offsets (prod(kernel)) and output positions (prod(out)) of one image
    M                        output positions of the batch, L * N: the columns of the matrix product
    The 2-d names of the last two dims (H, W, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, Hp, Wp, OH, OW)
    read those tuples: the im2col seam speaks them.
    """

    __slots__ = ("x_shape", "w_shape", "y_shape", "N", "C", "O", "G", "sizes", "kernel", "stride", "dilation",
                 "pads", "grid", "out", "K", "L", "M", "device")

    H, W, kh, kw, OH, OW = (_dim(f, i) for f in ("sizes", "kernel", "out") for i in (-2, -1))
    sh, sw, dh, dw, Hp, Wp = (_dim(f, i) for f in ("stride", "dilation", "grid") for i in (-2, -1))
    pt, pb, pl, pr = (_dim("pads", i, side) for i in (-2, -1) for side in (0, 1))

    def __init__(self, x_shape, w_shape, stride, pads, dilation, groups, device):
        self.device = device
        self.x_shape, self.w_shape = tuple(x_shape), tuple(w_shape)
        self.N, self.C = self.x_shape[:2]
        self.O, self.G = self.w_shape[0], groups
        (self.sizes, self.kernel, self.stride, self.dilation, self.pads, self.grid, out,
         self.K) = _conv_dims(self.x_shape[2:], self.w_shape[2:], tuple(stride), tuple(pads), tuple(dilation))
        self._set_out(out)

    def _set_out(self, out: tuple) -> None:
        self.out = out
        self.L = math.prod(out)
        self.M = self.L * self.N
        self.y_shape = (self.N, self.O) + out[len(out) + 2 - len(self.x_shape):]

    @property
    def inner(self) -> tuple:
        """The index of the input inside the padded grid: (:, lo_0:lo_0 + n_0, ...)."""
        return (slice(None),) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(self.sizes, self.pads))

    def with_output(self, sizes: tuple) -> "_ConvGeom":
        """This geometry with its output positions set to `sizes` (per spatial dim of the tensors): those of
        a transposed convolution's input, which can be fewer than the padded size allows."""
        geo = copy.copy(self)
        geo._set_out((1,) * (len(self.out) - len(sizes)) + tuple(sizes))
        return geo

    def batch(self, n: int) -> "_ConvGeom":
        """This geometry for a batch of n images (a chunk of the batch)."""
        geo = copy.copy(self)
        geo.N, geo.M = n, self.L * n
        geo.x_shape, geo.y_shape = (n,) + self.x_shape[1:], (n,) + self.y_shape[1:]
        return geo

    def slabs(self, buf):
        """Per kernel offset: (at, the view of buf (C, *grid, N) under that offset for every output
        position, shaped (C, *out, N)); at indexes that offset's place in the columns, cols[at]."""
        for at, cut in _window_cuts(self.kernel, self.stride, self.dilation, self.out):
            yield at, buf[cut]


# ---------------------------------------------------------------- pooling geometry

@functools.lru_cache(maxsize=256)
def _pool_dims(sizes: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, ceil_mode: bool) -> tuple:
    """A pooling's per-dim sizes and flags: (sizes, kernel, stride, padding, dilation, out, grid, padded, overlap,
    plane, K), the 1-d case lifted to 2-d with a height of 1. Cached, as _conv_dims."""
    if len(sizes) == 1:
        sizes, kernel, stride, padding, dilation = ((1,) + sizes, (1,) + kernel, (1,) + stride, (0,) + padding,
                                                    (1,) + dilation)
    dims = tuple(zip(sizes, kernel, stride, padding, dilation))
    out = tuple(_pool_out(n, k, s, p, d, ceil_mode) for n, k, s, p, d in dims)
    grid = tuple(max((o - 1) * s + (k - 1) * d + 1, p + n) for o, (n, k, s, p, d) in zip(out, dims))
    padded = any(padding) or grid != sizes
    overlap = any(s < d * (k - 1) + 1 for _, k, s, _, d in dims)
    return sizes, kernel, stride, padding, dilation, out, grid, padded, overlap, math.prod(sizes), math.prod(kernel)


class _PoolGeom:
    """One pooling's shapes as plain ints and tuples. Inputs are handled as (P, *sizes): every leading
    dim (batch, channels) is pooled alike; the 1-d case has a height of 1 (H = kh = 1).

    sizes, kernel, stride, padding, dilation, out   per spatial dim
    plane, K     positions in one input plane (prod(sizes)) and in one window (prod(kernel))
    grid         the size of the padded buffer the windows read (padding, plus the extra trailing
                 positions ceil_mode's last window may cover); `padded` says whether the input needs
                 such a buffer at all.
    """

    __slots__ = ("x_shape", "y_shape", "P", "sizes", "kernel", "stride", "padding", "dilation", "out", "grid",
                 "plane", "K", "padded", "overlap", "divisor")

    def __init__(self, x_shape, spatial, kernel, stride, padding, dilation, ceil_mode):
        self.x_shape = tuple(x_shape)
        lead = self.x_shape[:-spatial]
        self.P = math.prod(lead)
        (self.sizes, self.kernel, self.stride, self.padding, self.dilation, self.out, self.grid, self.padded,
         self.overlap, self.plane, self.K) = _pool_dims(self.x_shape[-spatial:], tuple(kernel), tuple(stride),
                                                        tuple(padding), tuple(dilation), bool(ceil_mode))
        self.y_shape = lead + self.out[-spatial:]
        self.divisor = None

    @property
    def inner(self) -> tuple:
        """The index of the input inside the padded buffer: (:, p_0:p_0 + n_0, ...)."""
        return (slice(None),) + tuple(slice(p, p + n) for n, p in zip(self.sizes, self.padding))

    def padded_input(self, dev, x, value):
        """x as (P, *grid), padded with `value` where needed (in the workspace)."""
        x3 = x.reshape((self.P,) + self.sizes)
        if not self.padded:
            return x3
        buf = _scratch(dev, "pool_pad", (self.P,) + self.grid, x.dtype)
        buf.fill(value)
        buf[self.inner] = x3
        return buf

    def slabs(self, buf):
        """Per kernel offset k (row-major over the kernel's dims): the view of buf (P, *grid) under that
        offset, (P, *out)."""
        for k, (_, cut) in enumerate(_window_cuts(self.kernel, self.stride, self.dilation, self.out)):
            yield k, buf[cut]

    def windows(self, dev, buf):
        """The windows of buf as a contiguous (K, P, *out) array in the workspace (one strided copy
        per kernel offset)."""
        out = _scratch(dev, "pool_windows", (self.K, self.P) + self.out, buf.dtype)
        for k, slab in self.slabs(buf):
            out[k] = slab
        return out


# ---------------------------------------------------------------- convolution on arrays

# The columns put the batch innermost, (C, kh, kw, OH, OW, N): for each kernel offset the copy moves
# runs of OW * N contiguous numbers (a whole row of windows for the whole batch), where NCHW would move
# runs of only OW. Small images (8x8 digits) make this the difference between copies at memory speed
# and copies dominated by per-run overhead. The layout changes NCHW <-> CHWN are 2-d transposes
# (N, C*H*W) <-> (C*H*W, N), done by the backend (`matrix_transpose`).

def im2col(x, geo):
    """The columns of input array x (N, C, *sizes) under every kernel offset: an array (C, *kernel, *out, N),
    (C, kh, kw, OH, OW, N) for a 2-d convolution, with cols[c, i, j, oh, ow, n] = x_padded[n, c, oh * sh + i * dh,
    ow * sw + j * dw], where x_padded is x with geo.pt/pb rows and geo.pl/pr columns of zeros around it (in 3-d,
    (C, kd, kh, kw, OD, OH, OW, N): one more index of each kind, for depth). The "im2col" seam; this one writes
    into the workspace (valid until the next convolution)."""
    dev = geo.device
    be = dev.backend
    N, C = geo.N, geo.C
    rows = C * math.prod(geo.sizes)  # C * H * W: one image's numbers
    if geo.grid == geo.sizes:
        buf = be.matrix_transpose(x.reshape(N, rows), out=_scratch(dev, "chwn", (rows, N), x.dtype))
        buf = buf.reshape((C,) + geo.sizes + (N,))
    else:
        t = be.matrix_transpose(x.reshape(N, rows), out=_scratch(dev, "chwn_t", (rows, N), x.dtype))
        buf = _scratch(dev, "chwn", (C,) + geo.grid + (N,), x.dtype, zero=True)
        buf[geo.inner] = t.reshape((C,) + geo.sizes + (N,))
    cols = _scratch(dev, "cols", (C,) + geo.kernel + geo.out + (N,), x.dtype)
    for at, slab in geo.slabs(buf):
        cols[at] = slab
    return cols


def _check_im2col(cols, x, geo):
    want = (geo.C,) + geo.kernel + geo.out + (geo.N,)
    if getattr(cols, "shape", None) != want:
        got = list(cols.shape) if hasattr(cols, "shape") else type(cols).__name__
        layout = "(C, kh, kw, OH, OW, N)" if len(geo.kernel) == 2 else "(C, kd, kh, kw, OD, OH, OW, N)"
        raise RuntimeError(f"im2col returned {got} for an input of shape {list(x.shape)}: it must return an "
                           f"array of shape {layout} = {list(want)}")
    return cols


seams.register("im2col", sys.modules[__name__], "im2col", adapt=seams.checked(_check_im2col), doc=(
    "The columns a convolution multiplies by its weight: im2col(x, geo) -> an array (C, kh, kw, OH, OW, N), "
    "x an array (N, C, H, W) (conv1d's with H = 1), geo the sizes (N, C, H, W, kh, kw, stride sh/sw, "
    "dilation dh/dw, padding pt/pb/pl/pr, OH, OW; geo.device.backend.xp the array module): "
    "cols[c, i, j, oh, ow, n] = x_padded[n, c, oh*sh + i*dh, ow*sw + j*dw], zeros outside x. conv3d's x is "
    "(N, C, D, H, W) and its columns (C, kd, kh, kw, OD, OH, OW, N): geo.kernel, geo.out, geo.stride, "
    "geo.dilation and geo.pads hold every dim's sizes."))


def _col2im(dev, cols, geo):
    """The adjoint of im2col: columns (C, *kernel, *out, N) added back onto the input grid, as a
    new array of x's shape."""
    buf = _scratch(dev, "col2im", (geo.C,) + geo.grid + (geo.N,), cols.dtype, zero=True)
    for at, slab in geo.slabs(buf):
        slab += cols[at]
    if geo.grid != geo.sizes:
        crop = _scratch(dev, "crop", (geo.C,) + geo.sizes + (geo.N,), cols.dtype)
        crop[...] = buf[geo.inner]
        buf = crop
    return dev.backend.matrix_transpose(buf.reshape(geo.C * math.prod(geo.sizes), geo.N)).reshape(geo.x_shape)


def _grad_rows(dev, g, geo):
    """An output gradient array (N, O, *out) in the columns' layout: a new (O, L * N) array."""
    return dev.backend.matrix_transpose(g.reshape(geo.N, geo.O * geo.L)).reshape(geo.O, geo.M)


def _grouped_matmul(dev, slot, a, b, G: int):
    """a (G*p, q) @ b (G*q, r) per group, into the workspace: (G*p, r). One matrix product when G == 1."""
    p, r = a.shape[0] // G, b.shape[1]
    out = _scratch(dev, slot, (G, p, r), a.dtype)
    if G == 1:
        dev.backend.xp.matmul(a, b, out=out[0])
    else:
        dev.backend.xp.matmul(a.reshape(G, p, a.shape[1]), b.reshape(G, b.shape[0] // G, r), out=out)
    return out.reshape(G * p, r)


def _conv_forward(dev, x, w, b, geo):
    """Convolution of arrays: a new (N, O, *out) array, a chunk of images at a time (_batches)."""
    chunks = _batches(geo, x.dtype.itemsize)
    if len(chunks) == 1:
        return _conv_images(dev, x, w, b, geo)
    y = dev.backend.xp.empty(geo.y_shape, x.dtype)
    for n0, n1, part in chunks:
        y[n0:n1] = _conv_images(dev, x[n0:n1], w, b, part)
    return y


def _conv_images(dev, x, w, b, geo):
    """The convolution of a batch (or a chunk of one): im2col, then one matrix product per group."""
    cols = im2col(x.reshape((geo.N, geo.C) + geo.sizes), geo)
    K = geo.K
    out = _grouped_matmul(dev, "out", w.reshape(geo.O, geo.C // geo.G * K), cols.reshape(geo.C * K, geo.M), geo.G)
    if b is not None:
        out += b.reshape(geo.O, 1)
    return dev.backend.matrix_transpose(out.reshape(geo.O * geo.L, geo.N)).reshape(geo.y_shape)


def _conv_input_grad(dev, g, gq, w, geo):
    """The gradient of the input from the output gradient g (its rows gq, when the caller has them):
    col2im(w^T @ gq), a chunk of images at a time."""
    chunks = _batches(geo, g.dtype.itemsize)
    if len(chunks) == 1:
        return _input_grad_images(dev, _grad_rows(dev, g, geo) if gq is None else gq, w, geo)
    gx = dev.backend.xp.empty(geo.x_shape, g.dtype)
    for n0, n1, part in chunks:
        gx[n0:n1] = _input_grad_images(dev, _grad_rows(dev, g[n0:n1], part), w, part)
    return gx


def _input_grad_images(dev, gq, w, geo):
    K = geo.K
    Cg, Og = geo.C // geo.G, geo.O // geo.G
    wt = w.reshape(geo.G, Og, Cg * K).transpose(0, 2, 1).reshape(geo.C * K, Og)  # per group w^T, stacked
    cols = _grouped_matmul(dev, "cols", dev.backend.xp.ascontiguousarray(wt), gq, geo.G)  # (C*K, M), im2col's buffer
    return _col2im(dev, cols.reshape((geo.C,) + geo.kernel + geo.out + (geo.N,)), geo)


def _conv_weight_grad(dev, x, g, gq, geo):
    """The gradient of the weight from the output gradient g (its rows gq, when the caller has them):
    gq @ cols(x)^T per group, summed over chunks of images."""
    chunks = _batches(geo, x.dtype.itemsize)
    if len(chunks) == 1:
        return _weight_grad_images(dev, x, _grad_rows(dev, g, geo) if gq is None else gq, geo)
    return sum(_weight_grad_images(dev, x[n0:n1], _grad_rows(dev, g[n0:n1], part), part) for n0, n1, part in chunks)


def _weight_grad_images(dev, x, gq, geo):
    """gq (O, M) @ cols(x)^T (M, C/groups * K), per group; computed as (cols @ gq^T)^T, which BLAS runs
    faster for these shapes. The columns are recomputed, not kept from the forward (as PyTorch: they
    are kh*kw times x)."""
    cols = im2col(x.reshape((geo.N, geo.C) + geo.sizes), geo)
    G = geo.G
    cm = cols.reshape(G, geo.C // G * geo.K, geo.M)
    gwt = cm @ gq.reshape(G, geo.O // G, geo.M).transpose(0, 2, 1)  # (G, Cg*K, Og)
    return gwt.transpose(0, 2, 1).reshape(geo.w_shape)


def _batches(geo, itemsize: int) -> list:
    """(n0, n1, geometry of images n0:n1): the batch in chunks whose columns (C * K values per output
    position) fit the workspace's cap (one image at least), so that a convolution's memory does not grow
    with its batch. Usually one chunk, the whole batch."""
    step = max(1, _WORKSPACE_MAX // max(1, geo.C * geo.K * geo.L * itemsize))
    if step >= geo.N:
        return [(0, geo.N, geo)]
    return [(n0, min(n0 + step, geo.N), geo.batch(min(n0 + step, geo.N) - n0)) for n0 in range(0, geo.N, step)]


# ---------------------------------------------------------------- workspace

class _Workspace(threading.local):
    """Per-thread buffers reused between calls for temporaries that never leave the function that
    fills them (columns, padded copies, accumulation grids). Allocating such arrays afresh each step
    costs page faults on every call (large allocations are mapped and unmapped by the C allocator);
    reusing them costs nothing. Buffers above _WORKSPACE_MAX bytes are not kept."""

    def __init__(self):
        self.arrays = {}


_WORKSPACE_MAX = 16 << 20
_workspace = _Workspace()


def _scratch(dev, slot: str, shape: tuple, dtype, zero: bool = False):
    """An array of `shape` from the buffer of `slot` on device `dev` (uninitialised unless `zero`).
    Valid only until the next request for the same slot: never return it or save it."""
    xp = dev.backend.xp
    dtype = np.dtype(dtype)  # CuPy uses NumPy's dtypes too
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > _WORKSPACE_MAX:
        return xp.zeros(shape, dtype=dtype) if zero else xp.empty(shape, dtype=dtype)
    key = (dev._str, slot)
    buf = _workspace.arrays.get(key)
    if buf is None or buf.nbytes < nbytes:
        buf = _workspace.arrays[key] = xp.empty(max(nbytes, 64), dtype="uint8")
    out = buf[:nbytes].view(dtype).reshape(shape)
    if zero:
        out.fill(0)
    return out
