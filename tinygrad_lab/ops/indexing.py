"""Indexing: `x[key]` and `x[key] = value`, plus gather.

Keys follow NumPy/PyTorch: ints, slices, None, Ellipsis, integer tensors or
lists (advanced indexing), boolean masks. Basic keys give views; advanced keys
copy. The gradient of an advanced index *adds* into repeated positions
(backend.index_add, i.e. np.add.at), so `x[[0, 0]].sum()` gives x.grad[0] == 2.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .._warn import warn
from ..autograd.tensor_base import TensorBase, make
from . import broadcast
from .op import Op, tensor_args
from .promotion import cast
from .shapes import PLAIN_INTS, normalize_dim


class Index(Op):
    """x[key] with an advanced key (a copy)."""

    @staticmethod
    def forward(ctx, x, key, basic):
        ctx.key, ctx.basic = key, basic
        try:
            return ctx.xp.asarray(x._data[key])
        except IndexError as e:
            raise _index_error(x, key, e) from None

    @staticmethod
    def backward(ctx, g):
        return IndexAddInto.apply(g, ctx.input_shapes[0], ctx.key, ctx.basic), None, None


class BasicIndex(Index):
    """x[key] with ints, slices, None and Ellipsis only (a view)."""

    is_view = True

    @staticmethod
    def forward(ctx, x, key, basic):
        ctx.key, ctx.basic = key, basic
        try:
            return x._data[as_view_key(key)]
        except IndexError as e:
            raise _index_error(x, key, e) from None


def as_view_key(key: tuple) -> tuple:
    """A basic key that gives a view even where it picks one element: NumPy returns a scalar (a copy) for
    x[2] of a vector, and a 0-d view for x[2, ...], as PyTorch's x[2] is (x[2].add_(1) changes x)."""
    return key if Ellipsis in key else key + (Ellipsis,)


class IndexAddInto(Op):
    """zeros(shape) with g added at key: the gradient of indexing."""

    @staticmethod
    def forward(ctx, g, shape, key, basic):
        ctx.key, ctx.basic = key, basic
        out = ctx.xp.zeros(shape, dtype=g._data.dtype)
        if basic:
            out[key] = g._data
        else:
            ctx.device.backend.index_add(out, key, g._data)
        return out

    @staticmethod
    def backward(ctx, gg):
        return getitem(gg, ctx.key, _converted=ctx.basic), None, None, None


def getitem(x, key, _converted=None):
    """x[key] as PyTorch: basic keys give views, advanced keys copy; ints apply before advanced indices."""
    if _converted is None:
        key, basic = to_key(x, key)
        if not basic:
            key = in_pytorch_order(key)
    else:
        basic = _converted
    if key.__class__ is SplitKey:  # two steps: a view by the ints, slices and new dims, then the advanced indices
        return Index.apply(BasicIndex.apply(x, key.first, True), key.rest, False)
    return (BasicIndex if basic else Index).apply(x, key, basic)


class IndexPut(Op):
    """A copy of x with x[key] = value (the out-of-place form of __setitem__)."""

    @staticmethod
    def forward(ctx, x, value, key):
        ctx.key = key
        out = x._data.copy()
        target, key = (out[as_view_key(key.first)], key.rest) if key.__class__ is SplitKey else (out, key)
        try:  # repeated positions keep the last value on every backend (CuPy's own choice is undefined)
            ctx.device.backend.index_put(target, key, value._data if isinstance(value, TensorBase) else value)
        except IndexError as e:
            raise _index_error(x, key, e) from None
        except ValueError:
            vs = list(value._data.shape) if isinstance(value, TensorBase) else []
            raise RuntimeError(f"shape mismatch: value tensor of shape {vs} cannot be broadcast to indexing result "
                               f"of shape {list(target[key].shape)}") from None
        return out

    @staticmethod
    def backward(ctx, g):
        n = ctx.needs_input_grad
        gx = IndexPut.apply(g, 0.0, ctx.key) if n[0] else None
        gv = broadcast.sum_to(getitem(g, ctx.key, _converted=False), ctx.input_shapes[1]) if n[1] else None
        return gx, gv, None


def index_put(x, key, value):
    """x with x[key] = value, out of place and differentiable in x and value."""
    key, basic = to_key(x, key)
    if not basic:
        key = in_pytorch_order(key)
    if isinstance(value, TensorBase) and value._data.dtype != x._data.dtype:
        value = cast(value, x._data.dtype)
    return IndexPut.apply(x, value, key)


class Gather(Op):
    """out[i][j] = x[i][index[i][j]] along dim (PyTorch's gather)."""

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.dim = dim
        ctx.save_for_backward(index)
        idx = index._data
        # the index may be smaller than x in the other dims: gather from that corner of x
        corner = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(idx.shape))
        return ctx.xp.take_along_axis(x._data[corner], idx, axis=dim)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        full = open_grid(ctx.xp, index._data.shape)
        full[ctx.dim] = index._data
        return IndexAddInto.apply(g, ctx.input_shapes[0], tuple(full), False), None, None


@tensor_args("x", "index")
def gather(x, dim: int, index):
    """torch.gather: out[i][j] = x[i][index[i][j]] for dim=1; index is an int tensor of x's ndim, bounds-checked."""
    d = normalize_dim(dim, x._data.ndim, "gather")
    if not index._data.size:  # as PyTorch: an empty index's dtype and shape are not checked
        return _gather_empty(x, index)
    check_index_dtype(index, "gather")  # (an index that is no tensor: tensor_args's TypeError, as PyTorch's)
    if index._data.ndim != x._data.ndim or not x._data.ndim:
        if index._data.ndim <= 1 and x._data.ndim <= 1:  # PyTorch takes a 0-d x or index as a 1-element vector
            return _gather_vectors(x, index)
        raise RuntimeError(f"gather(): Index tensor must have the same number of dimensions as input tensor "
                           f"({index._data.ndim} vs {x._data.ndim})")
    for k, (i, n) in enumerate(zip(index._data.shape, x._data.shape)):
        if k != d and i > n:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index._data.shape)} to be "
                               f"smaller than self {list(x._data.shape)} apart from dimension {d}")
    n, idx, dev = x._data.shape[d], index._data, index._device
    # read at once on the CPU, at the next sync on a GPU
    dev.backend.raise_if((idx.min() < 0) | (idx.max() >= n), lambda: _gather_error(idx, d, n), dev.index or 0)
    return Gather.apply(x, d, index)


def _gather_empty(x, index):
    """gather with an empty index: an empty result of index's shape, still in x's graph (its gradient is zeros):
    x picked at one empty integer array per dim (they broadcast to index's shape)."""
    x1 = getitem(x, None) if not x._data.ndim else x  # a 0-d x as a 1-element vector
    nothing = make(x._device.backend.xp.zeros(index._data.shape, dtype=np.int64), x._device)
    return getitem(x1, (nothing,) * x1._data.ndim)


def _gather_vectors(x, index):
    """gather of x and index, each 0-d or 1-D, as 1-D (a 0-d one as a 1-element vector), shaped as index."""
    x1 = getitem(x, None) if not x._data.ndim else x
    if index._data.ndim:
        return gather(x1, 0, index)
    return getitem(gather(x1, 0, getitem(index, None)), 0)


def _gather_error(idx, d: int, n: int) -> RuntimeError:
    lo, hi = int(idx.min()), int(idx.max())
    return RuntimeError(f"gather(): index {lo if lo < 0 else hi} is out of bounds for dimension {d} with size {n}")


def open_grid(xp, shape: tuple) -> list:
    """Per dim of `shape`, the indices 0..n-1 shaped to broadcast along that dim (NumPy's indices(shape,
    sparse=True), which CuPy lacks). With one entry replaced by an index array, the key that picks
    along that dim (gather's gradient, nll_loss's)."""
    nd = len(shape)
    return [xp.arange(n).reshape((1,) * k + (n,) + (1,) * (nd - k - 1)) for k, n in enumerate(shape)]


# ---------------------------------------------------------------- index keys

_BASIC = (int, slice, type(None), type(Ellipsis))


def to_key(x, key):
    """(backend key, is_basic) for `x[key]`, with clear errors for bad index types."""
    if key.__class__ is int:  # fast paths, x[3] and x[0, 2]: a CRF's or a tagger's loops do them per tag and step
        return (key,), True
    if key.__class__ is tuple and set(map(type, key)) <= PLAIN_INTS:  # (0.9 -> 0.25 us)
        return key, True
    if isinstance(key, list) and len(key) < 32 and any(
            isinstance(k, (list, tuple, slice, TensorBase, type(None), type(Ellipsis))) for k in key):
        key = tuple(key)  # PyTorch (like old NumPy) reads x[[[0, 1], [2, 3]]] as x[[0, 1], [2, 3]]
    parts = tuple(_key_part(x, k) for k in (key if isinstance(key, tuple) else (key,)))
    basic = all(isinstance(k, _BASIC) for k in parts)
    if not basic:
        _check_bounds(x, parts)
    return parts, basic


def _check_bounds(x, parts: tuple) -> None:
    """Each integer index array within the dim it indexes (backend.check_indices: NumPy raises by itself,
    CuPy would wrap an index around and read the wrong element)."""
    shape, dev = x._data.shape, x._device
    widths = [0 if k is None or k is Ellipsis else k.ndim if getattr(k, "dtype", None) == np.bool_ else 1
              for k in parts]
    dim = 0
    for k, width in zip(parts, widths):
        if k is Ellipsis:
            dim += len(shape) - sum(widths)
        elif width == 1 and not isinstance(k, _BASIC) and dim < len(shape):
            dev.backend.check_indices(k, shape[dim], dim, dev.index or 0)
        dim += width


def _key_part(x, k):
    """One part of an index for x's backend: an int, slice, None or Ellipsis as it is, anything else
    as an integer or bool array on x's device (an advanced index)."""
    if isinstance(k, bool):  # x[True] adds a dim, as in NumPy and PyTorch (in_pytorch_order says where)
        return x._device.backend.xp.asarray(k)
    if isinstance(k, _BASIC):
        return k
    if isinstance(k, TensorBase):
        arr = k._data
        if k._device is not x._device:
            if k._device.type != "cpu":
                raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed "
                                   f"tensor ({x._device}), but got indices on {k._device}")
            arr = x._device.backend.asarray(arr, index=x._device.index or 0)  # CPU indices move over, as in PyTorch
    elif isinstance(k, (list, tuple, range, np.ndarray)):  # a range is a list of ints, as in PyTorch
        arr = x._device.backend.asarray(np.asarray(k), index=x._device.index or 0)
        if arr.size == 0:
            arr = arr.astype(np.int64)
    elif hasattr(k, "__index__"):  # NumPy integers
        return k.__index__()
    else:
        raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                         f"valid indices (got {type(k).__name__})")
    return _index_array(arr)


def _index_array(arr):
    """An index array as PyTorch reads it: a bool mask (uint8 too, with a warning), an int32 or int64 array, or,
    for a 0-d integer array, the int; anything else is PyTorch's IndexError."""
    if arr.dtype == np.uint8:
        warn("indexing with dtype uint8 is deprecated, as in PyTorch, which reads a uint8 index as a mask: "
             "use a dtype bool instead")
        return arr.astype(np.bool_)
    if arr.dtype not in INDEX_DTYPES and arr.dtype != np.bool_:
        raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors, got "
                         f"{dtypes.scalar_name(arr.dtype)}")
    return int(arr) if arr.ndim == 0 and arr.dtype != np.bool_ else arr  # a 0-d index is an int, as in PyTorch


INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))  # of index tensors, as PyTorch takes them


def check_index_dtype(index, op: str) -> None:
    """PyTorch's error for an index tensor of gather, scatter, index_select, ... that is not int32 or int64."""
    if index._data.dtype not in INDEX_DTYPES:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index, but got "
                           f"{dtypes.scalar_name(index._data.dtype)}")


def _index_error(x, key, err):
    """NumPy's indexing error in PyTorch's words (a dimension, not an axis), with the tensor's shape
    (and a boolean mask's, as PyTorch names it)."""
    keys = key if isinstance(key, tuple) else (key,)
    arrays = [getattr(k, "_data", k) for k in keys]
    masks = [list(a.shape) for a in arrays if getattr(a, "dtype", None) == bool]
    mask = f"The shape of the mask {masks[0]} does not match the shape of the indexed tensor: " if masks else ""
    said = str(err).replace(" axis ", " dimension ")
    return IndexError(f"{mask}{said} (indexing a tensor of shape {list(x._data.shape)})")


class SplitKey:
    """An advanced key as PyTorch applies it, in two steps: `first`, the basic part (ints, slices, None, and a new
    dim for each bool), which gives a view, then `rest`, the advanced indices on that view's dims."""

    __slots__ = ("first", "rest")

    def __init__(self, first: tuple, rest: tuple):
        self.first, self.rest = first, rest


def in_pytorch_order(key: tuple):
    """The advanced key as PyTorch reads it. PyTorch applies ints (selecting) and a bool (a new dim, indexed by
    [0] for True, [] for False) in place, then the advanced indices; NumPy counts ints and bools as advanced
    indices too, which moves dims where they are apart (x[3, :, [0, 1]] is (5, 2) in PyTorch, (2, 5) in NumPy,
    for x of shape (4, 5, 6)). Such a key becomes a SplitKey; one of arrays, slices, None and ... only (NumPy's
    order is then PyTorch's) is kept as it is."""
    if not any(isinstance(k, int) or _is_bool(k) for k in key):
        return key
    first, rest = [], []
    for k in key:
        if isinstance(k, int):  # selects in the first step, and is gone for the second
            first.append(k)
        elif _is_bool(k):  # a new dim of size 1, then indexed by [0] (True) or [] (False)
            first.append(None)
            rest.append(k.reshape(1).nonzero()[0])
        elif isinstance(k, _BASIC):  # slice, None, ...: the first step makes the dims, the second keeps them
            first.append(k)
            rest.append(Ellipsis if k is Ellipsis else slice(None))
        else:  # an index array: the first step keeps the dims it indexes (a mask indexes as many as it has)
            first.extend([slice(None)] * (k.ndim if k.dtype == np.bool_ else 1))
            rest.append(k)
    return SplitKey(tuple(first), tuple(rest))


def _is_bool(k) -> bool:
    """Whether key part k is a bool (a 0-d bool array: ints have become ints, _index_array)."""
    return not isinstance(k, _BASIC) and k.ndim == 0
