"""Rearranging whole tensors: sliding windows (unfold), splitting at indices (tensor_split, hsplit,
vsplit, dsplit), rotating and mirroring (rot90, fliplr, flipud), products and blocks built from
several tensors (kron, block_diag, cartesian_prod, combinations, vander), broadcasting several shapes
at once (broadcast_shapes, broadcast_tensors, sum_to_size) and flat indices as coordinates
(unravel_index).

Tensor.unfold is an op of its own, SlidingWindows (named apart from conv's Unfold, im2col): its
backward adds each window's gradient back into the elements the window read, so overlapping windows
add up. Everything else is composed of movement, indexing and elementwise ops, and gets its
gradient from them.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .. import dtypes
from ..autograd.tensor_base import Size, TensorBase, make
from ..backends import CPU
from . import broadcast
from . import movement as mv
from .elementwise import Clone, mul
from .indexing import IndexAddInto, getitem
from .op import Op, tensor_args, tensor_list
from .promotion import cast
from .reduce import sum as total
from .scan import cumprod
from .shapes import broadcast_shape, ints, normalize_dim, whole


# ---------------------------------------------------------------- sliding windows

class SlidingWindows(Op):
    """The windows read by `key` along dim (an index array of shape (windows, size) there): dim becomes
    the window count and a new last dim holds each window (a copy; PyTorch's is a view).
    Backward: each window's gradient is added back into the elements it read."""

    @staticmethod
    def forward(ctx, x, dim, key):
        ctx.dim, ctx.key = dim, key
        return ctx.xp.moveaxis(x._data[key], dim + 1, -1)

    @staticmethod
    def backward(ctx, g):
        windows = mv.movedim(g, -1, ctx.dim + 1)  # back to (..., windows, size, ...), as the key reads them
        return IndexAddInto.apply(windows, ctx.input_shapes[0], ctx.key, False), None, None


@tensor_args("x", op="unfold")
def unfold(x, dimension: int, size: int, step: int):
    """Tensor.unfold: every window of `size` elements, `step` apart, along `dimension`; that dim becomes
    the number of windows, (n - size) // step + 1, and a new last dim of `size` holds each window.
    A 0-d x counts as one element. Deviation: the result is a copy (PyTorch's is a view of x)."""
    d = normalize_dim(dimension, x._data.ndim, "unfold")
    size, step = whole(size, "size", "unfold"), whole(step, "step", "unfold")
    n = x._data.shape[d] if x._data.ndim else 1
    if size < 0:
        raise RuntimeError(f"unfold: size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    if size > n:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size} "
                           f"(tensor of shape {list(x._data.shape)})")
    xp = x._device.backend.xp
    starts = xp.arange((n - size) // step + 1) * step
    key = (slice(None),) * d + (starts[:, None] + xp.arange(size),)
    if not x._data.ndim:
        return mv.reshape(SlidingWindows.apply(mv.reshape(x, (1,)), 0, key), (size,))
    return SlidingWindows.apply(x, d, key)


# ---------------------------------------------------------------- splitting at indices

@tensor_args("x", op="tensor_split")
def tensor_split(x, indices_or_sections, dim: int = 0) -> tuple:
    """Views of x along dim, as torch.tensor_split: a number k of sections gives k pieces whose sizes
    differ by at most one (the larger ones first); a list (or 1-D int64 tensor) of indices cuts before
    each index, as Python slices do (negative ones count from the end, out-of-range ones clamp)."""
    if not x._data.ndim:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = normalize_dim(dim, x._data.ndim, "tensor_split")
    cuts = _cuts(indices_or_sections, x._data.shape[d])
    return tuple(getitem(x, (slice(None),) * d + (slice(a, b),)) for a, b in zip([0] + cuts, cuts + [None]))


def _cuts(indices_or_sections, n: int) -> list:
    """The indices tensor_split cuts before: the given ones, or those of k equal-as-can-be sections."""
    arg = indices_or_sections
    if isinstance(arg, TensorBase):
        if arg._data.dtype != np.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{arg.dtype}")
        if arg._data.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {arg._data.ndim} dims")
        arg = int(arg._data) if arg._data.ndim == 0 else [int(i) for i in arg._data.tolist()]
    if isinstance(arg, (list, tuple)):
        return [whole(i, "indices", "tensor_split") for i in arg]
    k = whole(arg, "sections", "tensor_split")
    if k <= 0:
        raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {k}")
    small, extra = divmod(n, k)
    return [i * small + min(i, extra) for i in range(1, k)]


def _split_along(x, indices_or_sections, dim: int, op: str, min_dims: int) -> tuple:
    """hsplit/vsplit/dsplit: tensor_split along `dim`, where k sections must divide the dim evenly."""
    nd = x._data.ndim
    if nd < min_dims:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {min_dims} dimension, but got a tensor "
                           f"with {nd} dimensions!")
    if not isinstance(indices_or_sections, (list, tuple, TensorBase)):
        k, n = whole(indices_or_sections, "sections", op), x._data.shape[dim]
        if k == 0 or n % k:
            raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{n} is not divisible by the split_size {k}!")
    return tensor_split(x, indices_or_sections, dim)


@tensor_args("x", op="hsplit")
def hsplit(x, indices_or_sections) -> tuple:
    """tensor_split along dim 1 (dim 0 of a vector), as torch.hsplit; k sections must divide it evenly."""
    return _split_along(x, indices_or_sections, 1 if x._data.ndim > 1 else 0, "hsplit", 1)


@tensor_args("x", op="vsplit")
def vsplit(x, indices_or_sections) -> tuple:
    """tensor_split along dim 0 of a tensor with at least 2 dims, as torch.vsplit."""
    return _split_along(x, indices_or_sections, 0, "vsplit", 2)


@tensor_args("x", op="dsplit")
def dsplit(x, indices_or_sections) -> tuple:
    """tensor_split along dim 2 of a tensor with at least 3 dims, as torch.dsplit."""
    return _split_along(x, indices_or_sections, 2, "dsplit", 3)


# ---------------------------------------------------------------- rotating and mirroring

@tensor_args("x", op="rot90")
def rot90(x, k: int = 1, dims=(0, 1)):
    """x turned k quarter turns in the plane of `dims`, from the first dim towards the second, as
    torch.rot90 (negative k turns the other way): a flip (a new tensor) and a transpose; k % 4 == 0 copies."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    nd = x._data.ndim
    if nd < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {nd} (shape {list(x._data.shape)})")
    d0, d1 = (normalize_dim(d, nd, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = {dims[0]} and "
                           f"dim1 = {dims[1]}")
    k = whole(k, "k", "rot90") % 4
    if k == 1:
        return mv.transpose(mv.flip(x, (d1,)), d0, d1)
    if k == 2:
        return mv.flip(x, (d0, d1))
    if k == 3:
        return mv.transpose(mv.flip(x, (d0,)), d0, d1)
    return Clone.apply(x)


@tensor_args("x", op="fliplr")
def fliplr(x):
    """x mirrored left to right (dim 1 reversed), as torch.fliplr; x needs at least 2 dims."""
    if x._data.ndim < 2:
        raise RuntimeError(f"fliplr: Input must be >= 2-d (got shape {list(x._data.shape)}).")
    return mv.flip(x, (1,))


@tensor_args("x", op="flipud")
def flipud(x):
    """x mirrored upside down (dim 0 reversed), as torch.flipud; x needs at least 1 dim."""
    if x._data.ndim < 1:
        raise RuntimeError("flipud: Input must be >= 1-d (got a 0-d tensor).")
    return mv.flip(x, (0,))


# ---------------------------------------------------------------- products and blocks

@tensor_args("a", "b", op="kron")
def kron(a, b):
    """The Kronecker product, as torch.kron: block (i, j, ...) of the result is a[i, j, ...] * b. The
    shorter shape gets leading 1s; a's dims are interleaved with size-1 dims and b's the other way round,
    so one broadcast multiply makes every product, and a reshape lays the blocks out (dtypes promoted)."""
    nd = max(a._data.ndim, b._data.ndim)
    sa = (1,) * (nd - a._data.ndim) + a._data.shape
    sb = (1,) * (nd - b._data.ndim) + b._data.shape
    spread_a = mv.reshape(a, tuple(s for n in sa for s in (n, 1)))
    spread_b = mv.reshape(b, tuple(s for n in sb for s in (1, n)))
    return mv.reshape(mul(spread_a, spread_b), tuple(p * q for p, q in zip(sa, sb)))


def block_diag(*tensors):
    """The tensors (0-d: 1 x 1, 1-d: one row, 2-d as they are) placed corner to corner along the
    diagonal of a zero matrix, as torch.block_diag (dtypes promoted). Deviation: with no tensors, the
    (1, 0) result is on the CPU, not on the default device."""
    mats = []
    for i, t in enumerate(tensor_list(tensors, "block_diag")):
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t._data.ndim} dimensions (shape {list(t._data.shape)})")
        mats.append(t if t._data.ndim == 2 else mv.reshape(t, (1, -1)))
    if not mats:
        return make(np.zeros((1, 0), dtypes.get_default_dtype().np), CPU)
    width, left, rows = sum(m._data.shape[1] for m in mats), 0, []
    for m in mats:
        cols = m._data.shape[1]
        rows.append(mv.pad(m, (left, width - left - cols)))
        left += cols
    return mv.cat(rows, 0)


def cartesian_prod(*tensors):
    """Every tuple taking one element from each 1-D tensor, in order (the last tensor varying fastest),
    as the rows of a (n0 * n1 * ..., k) tensor, as torch.cartesian_prod; one tensor is returned as is."""
    tensors = tensor_list(tensors, "cartesian_prod")
    if not tensors:
        raise RuntimeError("cartesian_prod: meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"cartesian_prod: Expect a 1D vector, but got shape {list(t._data.shape)}")
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError(f"cartesian_prod: meshgrid expects all tensors to have the same dtype (got "
                               f"{tensors[0].dtype} and {t.dtype})")
    if len(tensors) == 1:
        return tensors[0]
    grids = mv.meshgrid(*tensors, indexing="ij")
    return mv.stack([mv.reshape(g, (-1,)) for g in grids], 1)


@tensor_args("x", op="combinations")
def combinations(x, r: int = 2, with_replacement: bool = False):
    """Every choice of r elements of 1-D x in increasing position order (with_replacement: positions may
    repeat), as the rows of an (m, r) tensor, as torch.combinations (itertools' order); r = 0 gives an
    empty 1-D tensor. An index into x, so the gradients of repeated elements add up."""
    if x._data.ndim != 1:
        raise RuntimeError(f"combinations: Expect a 1D vector, but got shape {list(x._data.shape)}")
    r = whole(r, "r", "combinations")
    if r < 0:
        raise RuntimeError(f"combinations: Expect a non-negative number, but got {r}")
    if r == 0:
        return getitem(x, np.zeros(0, np.int64))
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    return getitem(x, np.array(list(choose(range(x._data.shape[0]), r)), np.int64).reshape(-1, r))


@tensor_args("x", op="vander")
def vander(x, N: int | None = None, increasing: bool = False):  # noqa: N803 (PyTorch's name)
    """The Vandermonde matrix of 1-D x, as torch.vander: column j holds x ** (N - 1 - j) (x ** j when
    increasing), N defaulting to len(x); integers and bool as int64. Running products of x, so the
    gradient is cumprod's."""
    if x._data.ndim != 1:
        raise RuntimeError(f"vander: x must be a one-dimensional tensor (got shape {list(x._data.shape)}).")
    n = x._data.shape[0] if N is None else whole(N, "N", "vander")
    if n < 0:
        raise RuntimeError(f"vander: N must be non-negative (got {n}).")
    if x._data.dtype.kind in "biu":
        x = cast(x, np.int64)
    column = mv.reshape(x, (-1, 1))
    ones = make(x._device.backend.xp.ones((x._data.shape[0], min(n, 1)), x._data.dtype), x._device)
    out = mv.cat([ones, cumprod(mv.expand(column, (-1, n - 1)), 1)], 1) if n > 1 else ones
    return out if increasing else mv.flip(out, (1,))


row_stack = mv.vstack  # torch.row_stack: vstack's other name


# ---------------------------------------------------------------- broadcasting several shapes

def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of `shapes` (tuples, or ints for 1-D shapes) broadcast to, as
    torch.broadcast_shapes, without making any tensor."""
    parsed = []
    for s in shapes:
        shape = (s,) if not isinstance(s, (tuple, list)) else ints(tuple(s), "broadcast_shapes", "shape")
        shape = tuple(whole(v, "shape", "broadcast_shapes") for v in shape)
        if any(v < 0 for v in shape):
            raise ValueError(f"broadcast_shapes: Attempting to broadcast a dimension with negative length! "
                             f"(shape {list(shape)})")
        parsed.append(shape)
    return Size(broadcast_shape(parsed, "broadcast_shapes"))


def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common broadcast shape (views), as torch.broadcast_tensors."""
    tensors = tensor_list(tensors, "broadcast_tensors")
    shape = broadcast_shape([t._data.shape for t in tensors], "broadcast_tensors")
    return tuple(mv.expand(t, shape) for t in tensors)


@tensor_args("x", op="sum_to_size")
def sum_to_size(x, *size):
    """Tensor.sum_to_size: x summed down to `size`, a shape x could have been broadcast from (the
    reverse of expand); x itself when it already has that shape, except that size () is always x.sum()
    (as in PyTorch: a 0-d int32 x gives int64)."""
    size = ints(size, "sum_to_size")
    shape = x._data.shape
    lead = len(shape) - len(size)
    if lead < 0 or any(s not in (1, n) for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"sum_to_size: size {list(size)} is not expandable to size {list(shape)} (the shape of "
                           f"the tensor)")
    return broadcast.sum_to(x, size) if size else total(x)


# ---------------------------------------------------------------- flat indices as coordinates

def unravel_index(indices, shape) -> tuple:
    """The coordinates in a tensor of `shape` of each flat (row-major) index, one int64 tensor per dim,
    each of indices' shape, as torch.unravel_index. As PyTorch, indices outside the shape are not
    refused: they wrap around (-1 is the last element)."""
    if not isinstance(indices, TensorBase):
        raise TypeError(f"unravel_index(): expected 'indices' to be a tensor, but got {type(indices).__name__}")
    if indices._data.dtype.kind not in "iu":
        raise TypeError(f"unravel_index(): expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = ints(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,), "unravel_index", "shape")
    if any(s < 0 for s in shape):
        raise ValueError(f"unravel_index(): 'shape' cannot have negative values, but got {shape}")
    if 0 in shape:
        raise RuntimeError(f"unravel_index(): no index lies in shape {shape}, which has a dimension of size 0")
    if math.prod(shape) > np.iinfo(np.int64).max:
        raise RuntimeError(f"unravel_index(): 'shape' cannot have a product greater than the max value of int64 "
                           f"(got {shape})")
    flat = indices._data.astype(np.int64)
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    return tuple(make(flat // stride % n, indices._device) for stride, n in zip(strides, shape))

