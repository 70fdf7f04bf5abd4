"""Index ops along a dim, and their inverses: index_select/index_add/index_copy/index_fill,
scatter/scatter_add/scatter_reduce (the inverses of gather) and index_reduce, select_scatter/slice_scatter,
masked_select/masked_scatter/masked_fill, take/take_along_dim, and nonzero/argwhere/count_nonzero.

Reading at indices (index_select, gather, masked_select) and writing at them (index_add,
scatter_add, masked_scatter) are each other's backward: the gradient of a read adds into the
positions read, and the gradient of a written value is read back from where it went.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.tensor_base import TensorBase, make
from . import broadcast
from . import elementwise as ew
from . import indexing as ix
from . import movement as mv
from .indexing import Gather, IndexPut, check_index_dtype, getitem, gather
from .op import Op, constant, tensor_args
from .promotion import cast
from .shapes import broadcast_shape, normalize_dim


# ---------------------------------------------------------------- along a dim: index_select, index_add, ...

def index_select(x, dim: int, index):
    """The slices of x at `index` (a 1-D integer tensor) along dim, as torch.index_select.
    Backward (indexing's): each slice's gradient adds into the slice it was read from."""
    d = normalize_dim(dim, x._data.ndim, "index_select")
    idx = _index_vector(index, "index_select")
    _check_bounds(idx, _size(x, d), "index_select", d)
    if not x._data.ndim:
        return ew.Clone.apply(x)  # a 0-d x has one slice (index 0, checked above): a copy, still 0-d
    return getitem(x, _along(d, idx))


def repeat_interleave(x, repeats=None, dim: int | None = None, *, output_size: int | None = None):
    """Each element (or each slice along dim) repeated `repeats` times, a number or one count per slice, as
    torch.repeat_interleave (dim=None: of the flattened x); repeat_interleave(counts) alone repeats each
    index i counts[i] times. An index_select, so the gradient of the copies adds up."""
    xp = x._device.backend.xp
    if repeats is None:  # repeat_interleave(counts)
        return make(xp.repeat(xp.arange(x._data.shape[0]), x._data).astype("int64"), x._device)
    if dim is None:
        x, dim = mv.reshape(x, (-1,)), 0
    d = normalize_dim(dim, x._data.ndim, "repeat_interleave")
    n = _size(x, d)
    counts = repeats._data if isinstance(repeats, TensorBase) else int(repeats)
    if isinstance(repeats, TensorBase) and counts.size not in (1, n):
        raise RuntimeError(f"repeat_interleave: repeats must have the same size as input along dim {d}, but got "
                           f"repeats.size(0) = {counts.size} and input.size({d}) = {n}")
    if bool((xp.asarray(counts) < 0).any()):
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    idx = make(xp.repeat(xp.arange(n), counts.reshape(-1) if hasattr(counts, "shape") else counts), x._device)
    return index_select(x, d, idx)


class IndexAdd(Op):
    """x with alpha * source added into the slices at `index` along dim (repeated indices add up).
    Backward: d/dx = g; d/dsource = alpha * g's slices at index."""

    @staticmethod
    def forward(ctx, x, dim, index, source, alpha):
        ctx.dim, ctx.alpha = dim, alpha
        ctx.save_for_backward(index)
        out = x._data.copy()
        ctx.device.backend.index_add(out, _along(dim, index._data), source._data * alpha)
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        n = ctx.needs_input_grad
        gs = ew.mul(index_select(g, ctx.dim, index), ctx.alpha) if n[3] else None
        return (g if n[0] else None), None, None, gs, None


def index_add(x, dim: int, index, source, *, alpha=1):
    """x + alpha * source added at `index` along dim, as torch.index_add (out of place)."""
    d, idx, source = _index_args(x, dim, index, source, "index_add")
    return _scalar_result(x, IndexAdd.apply(_nd(x), d, idx, source, alpha))


@tensor_args("x", "values")
def index_put(x, indices, values, accumulate: bool = False):
    """x with x[indices] = values (out of place), as torch.index_put: indices a tuple of index tensors
    (integer or bool), values broadcast to the indexed shape. With accumulate, values are added there
    instead, repeated positions adding up (x + zeros with values added at indices)."""
    if not isinstance(indices, (tuple, list)) or not all(isinstance(i, TensorBase) for i in indices):
        what = "a tuple with other values" if isinstance(indices, (tuple, list)) else type(indices).__name__
        raise TypeError(f"index_put(): argument 'indices' must be a tuple of Tensors, not {what}")
    if values._data.dtype != x._data.dtype:  # (x[key] = values casts them instead, for every key: README)
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{dtypes.scalar_name(x._data.dtype)} for the destination and "
                           f"{dtypes.scalar_name(values._data.dtype)} for the source (cast the values with "
                           f".to(x.dtype))")
    if not accumulate:
        return ix.index_put(x, tuple(indices), values)
    key, _ = ix.to_key(x, tuple(indices))
    values = broadcast.broadcast_to(values, x._data[key].shape)
    return ew.add(x, ix.IndexAddInto.apply(values, x._data.shape, key, False))


class IndexCopy(Op):
    """x with the slices at `index` along dim replaced by source's.
    Backward: d/dx = g with zeros at the replaced slices; d/dsource = g's slices at index."""

    @staticmethod
    def forward(ctx, x, dim, index, source):
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = x._data.copy()
        out[_along(dim, index._data)] = source._data
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        n = ctx.needs_input_grad
        gx = IndexPut.apply(g, 0.0, _along(ctx.dim, index._data)) if n[0] else None
        return gx, None, None, index_select(g, ctx.dim, index) if n[3] else None


def index_copy(x, dim: int, index, source):
    """x with the slices at `index` along dim taken from source, as torch.index_copy (out of place)."""
    d, idx, source = _index_args(x, dim, index, source, "index_copy")
    return _scalar_result(x, IndexCopy.apply(_nd(x), d, idx, source))


def index_fill(x, dim: int, index, value):
    """x with the slices at `index` along dim set to `value` (a number or a 0-d tensor), as torch.index_fill."""
    d = normalize_dim(dim, x._data.ndim, "index_fill")
    idx = _index_vector(index, "index_fill")
    _check_bounds(idx, _size(x, d), "index_fill", d)
    xp = x._device.backend.xp
    mask = xp.zeros(_size(x, d), dtype=bool)
    mask[idx._data] = True
    shape = [1] * x._data.ndim
    if shape:
        shape[d] = -1
    return masked_fill(x, make(mask.reshape(shape), x._device), value)


# ---------------------------------------------------------------- scatter: the inverses of gather

class Scatter(Op):
    """x with src's values written at `index` along dim: out[i][index[i][j]] = src[i][j] for dim 1
    (where several go to one place, one of them wins). Backward: d/dx = g with zeros where something
    was written; d/dsrc = gather(g, dim, index) (zeros where src is larger than index)."""

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.dim = dim
        ctx.save_for_backward(index)
        key = _scatter_key(ctx.xp, dim, index._data)
        out = x._data.copy()
        out[key] = _corner(src, index) if isinstance(src, TensorBase) else src
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        n = ctx.needs_input_grad
        gx = IndexPut.apply(g, 0.0, _scatter_key(ctx.xp, ctx.dim, index._data)) if n[0] else None
        gs = _pad_to(Gather.apply(g, ctx.dim, index), ctx.input_shapes[3]) if n[3] else None
        return gx, None, None, gs


class ScatterAdd(Op):
    """x with src's values added at `index` along dim (repeated positions add up).
    Backward: d/dx = g; d/dsrc = gather(g, dim, index) (zeros where src is larger than index)."""

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = x._data.copy()
        ctx.device.backend.index_add(out, _scatter_key(ctx.xp, dim, index._data), _corner(src, index))
        return out

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        n = ctx.needs_input_grad
        gs = _pad_to(Gather.apply(g, ctx.dim, index), ctx.input_shapes[3]) if n[3] else None
        return (g if n[0] else None), None, None, gs


def scatter(x, dim: int, index, src=None, value=None, *, reduce=None):
    """x with src (or the number `value`) written at `index` along dim, as torch.scatter (out of place).
    reduce='add' or 'multiply' combines instead of overwriting (no gradient, as in PyTorch)."""
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing 1 required argument: 'src' (or 'value')")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce!r}")
        return scatter_reduce(x, dim, index, _full_like_index(x, index, src), "sum" if reduce == "add" else "prod")
    d, src = _scatter_args(x, dim, index, src, "scatter")
    return _scalar_result(x, Scatter.apply(_nd(x), d, _nd(index), _nd(src) if isinstance(src, TensorBase) else src))


def scatter_add(x, dim: int, index, src):
    """x with src added at `index` along dim, as torch.scatter_add (out of place)."""
    d, src = _scatter_args(x, dim, index, src, "scatter_add")
    return _scalar_result(x, ScatterAdd.apply(_nd(x), d, _nd(index), _nd(src)))


class ScatterReduce(Op):
    """Each position of x combined with the src values scattered to it by `reduce` ("sum", "prod",
    "mean", "amax", "amin"), with x's own value included unless include_self=False.
    Backward, per reduction: sum: g to x (where included) and gather(g) to src; mean: the same divided
    by each position's count; amax/amin: g shared evenly between the values equal to the result;
    prod: g times the product of the other values at the position (see _prod_shares)."""

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce, include_self):
        xp = ctx.xp
        key = _scatter_key(xp, dim, index._data)
        out, hit = _scatter_reduce_arrays(xp, x._data, key, _corner(src, index), reduce, include_self)
        ctx.dim, ctx.reduce = dim, reduce
        ctx.save_for_backward(x, index, src, out, hit if not include_self else None)
        return out

    @staticmethod
    def backward(ctx, g):
        x, index, src, out, hit = ctx.saved_tensors
        share_x, share_src = _reduce_shares(ctx, x, index, src, out, hit)
        n = ctx.needs_input_grad
        gx = ew.mul(g, share_x) if n[0] else None
        gs = _pad_to(ew.mul(Gather.apply(g, ctx.dim, index), share_src), ctx.input_shapes[3]) if n[3] else None
        return gx, None, None, gs, None, None


def _scatter_reduce_arrays(xp, x, key, src, reduce: str, include_self: bool):
    """(out, hit): the reduction's result, and which positions received values (for include_self)."""
    ufunc = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply, "amax": xp.maximum, "amin": xp.minimum}[reduce]
    out = x.copy()
    hit = xp.zeros(x.shape, dtype=bool)
    hit[key] = True
    if not include_self:  # start from the reduction's identity where values arrive
        start = {"sum": 0, "mean": 0, "prod": 1, "amax": -xp.inf, "amin": xp.inf}[reduce]
        out[hit] = start if x.dtype.kind == "f" or reduce in ("sum", "mean", "prod") else _int_limit(xp, x, reduce)
    ufunc.at(out, key, src)
    if reduce == "mean":
        count = xp.zeros(x.shape, dtype=x.dtype if x.dtype.kind == "f" else "int64")
        xp.add.at(count, key, 1)
        count = count + (1 if include_self else 0) * hit + ~hit
        out = (out / count).astype(x.dtype, copy=False) if x.dtype.kind == "f" else out // count  # count: int64
    return out, hit


def _int_limit(xp, x, reduce: str):
    info = xp.iinfo(x.dtype)
    return info.min if reduce == "amax" else info.max


def _reduce_shares(ctx, x, index, src, out, hit):
    """The factors g is multiplied by for x and (gathered) for src, by reduction."""
    dim, reduce, dtype = ctx.dim, ctx.reduce, out._data.dtype
    xp = ctx.xp
    included = constant(ctx, xp.ones(out._data.shape, dtype=bool) if hit is None else ~hit)
    inc = ew.cast(included, dtype)
    if reduce in ("sum", "mean"):
        ones = _ones(src)
        if reduce == "sum":
            return inc, Gather.apply(_ones(out), dim, index)
        per = ew.div(1.0, ScatterAdd.apply(inc, dim, index, ones))  # 1 / the count of each position
        return ew.mul(inc, per), Gather.apply(per, dim, index)
    if reduce == "prod":
        return _prod_shares(ctx, x, index, src, out, inc, hit is None)
    x_wins = ew.cast(ew.logical_and(ew.eq(x, out), included), dtype)  # amax / amin: the values equal to the
    src_wins = ew.cast(ew.eq(_corner_t(src, index), Gather.apply(out, dim, index)), dtype)  # result share g
    ties = ScatterAdd.apply(x_wins, dim, index, src_wins)
    return ew.div(x_wins, ties), ew.div(src_wins, Gather.apply(ties, dim, index))


def _prod_shares(ctx, x, index, src, out, inc, include_self: bool):
    """prod's factors: each value's share of g is the product of the other values at its position, found
    without dividing by a zero. For x: the reduction again with x's zeros read as 1, over x (read the same
    way). For src: out / value where the value is not 0; where it is the only zero of src at its position,
    the reduction again with it read as 1. Where src has two zeros at one position, first derivatives are
    exact but second ones are not (PyTorch refuses those)."""
    dim, dtype = ctx.dim, x._data.dtype
    s = _corner_t(src, index)
    x_one = ew.where(ew.eq(x, 0), 1.0, x)
    x_share = ew.div(ScatterReduce.apply(x_one, dim, index, s, "prod", include_self), x_one)
    s_zero = ew.eq(s, 0)
    zeros = Gather.apply(ScatterAdd.apply(ew.zeros_like(x), dim, index, ew.cast(s_zero, dtype)), dim, index)
    single = ew.logical_and(s_zero, ew.eq(zeros, 1))
    rest = ScatterReduce.apply(x, dim, index, ew.where(single, 1.0, s), "prod", include_self)
    s_share = ew.where(single, Gather.apply(rest, dim, index),
                       ew.div(Gather.apply(out, dim, index), ew.where(s_zero, 1.0, s)))
    return ew.mul(inc, x_share), s_share


def scatter_reduce(x, dim: int, index, src, reduce: str, *, include_self: bool = True):
    """x combined with src at `index` along dim by `reduce` ('sum', 'prod', 'mean', 'amax', 'amin'),
    as torch.scatter_reduce (out of place)."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d, src = _scatter_args(x, dim, index, src, "scatter_reduce")
    return _scalar_result(x, ScatterReduce.apply(_nd(x), d, _nd(index), _nd(src), reduce, bool(include_self)))


@tensor_args("x", "index", "source", op="index_reduce")
def index_reduce(x, dim: int, index, source, reduce: str, *, include_self: bool = True):
    """x with each slice of source along dim combined by `reduce` ('prod', 'mean', 'amax', 'amin') into x's
    slice at `index` (a 1-D integer tensor), as torch.index_reduce (out of place); include_self=False leaves
    x's own values out where slices arrive. A scatter_reduce whose index is `index` spread over source's
    shape, so the gradient is ScatterReduce's."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if isinstance(source, TensorBase) and source._data.dtype != x._data.dtype:
        raise RuntimeError(f"index_reduce(): self ({x.dtype}) and source ({source.dtype}) must have the same "
                           f"scalar type")
    d, idx, source = _index_args(x, dim, index, source, "index_reduce")
    x1 = _nd(x)
    along = mv.reshape(idx, [-1 if k == d else 1 for k in range(x1._data.ndim)])
    spread = broadcast.broadcast_to(along, source._data.shape)
    return _scalar_result(x, ScatterReduce.apply(x1, d, spread, source, reduce, bool(include_self)))


# ---------------------------------------------------------------- writing one slice: select_scatter, slice_scatter

@tensor_args("x", "src", op="select_scatter")
def select_scatter(x, src, dim: int, index: int):
    """x with its slice at `index` along dim (x.select(dim, index)) replaced by src, which has that slice's
    shape, as torch.select_scatter. Backward (IndexPut's): g with zeros there to x, g's slice to src."""
    d = normalize_dim(dim, x._data.ndim, "select_scatter")
    n = x._data.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter(): index {index} out of range for tensor of size {list(x._data.shape)} at "
                         f"dimension {d}")
    return _put_slice(x, src, (slice(None),) * d + (int(index) % n,), "select_scatter")


@tensor_args("x", "src", op="slice_scatter")
def slice_scatter(x, src, dim: int = 0, start=None, end=None, step: int = 1):
    """x with its slice start:end:step along dim replaced by src, which has that slice's shape, as
    torch.slice_scatter (start and end are clipped to the dim, as Python's slices are)."""
    d = normalize_dim(dim, x._data.ndim, "slice_scatter")
    if step <= 0:
        raise RuntimeError(f"slice step must be positive (slice_scatter got step={step})")
    return _put_slice(x, src, (slice(None),) * d + (slice(start, end, step),), "slice_scatter")


def _put_slice(x, src, key: tuple, op: str):
    """x with x[key] = src (a basic key), src checked to have exactly the slice's shape."""
    want = x._data[key].shape
    if tuple(src._data.shape) != want:
        raise RuntimeError(f"{op}(): expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._data.shape)}, slice size = {list(want)}")
    return IndexPut.apply(x, cast(src, x._data.dtype), key)


# ---------------------------------------------------------------- masks

def masked_fill(x, mask, value):
    """x with `value` (a number or a 0-d tensor, differentiable) where mask is True, as torch.masked_fill."""
    _check_mask(mask, "masked_fill")
    if isinstance(value, TensorBase):
        if value._data.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        value = cast(value, x._data.dtype)
    elif x._data.dtype.kind in "biu" and isinstance(value, float) and not value.is_integer():
        value = int(value)  # PyTorch casts the number to x's dtype
    out = ew.where(mask, value, x)
    return out if out._data.dtype == x._data.dtype else cast(out, x._data.dtype)


def masked_select(x, mask):
    """The elements of x where mask (broadcast with x) is True, as a 1-D tensor, as torch.masked_select."""
    _check_mask(mask, "masked_select")
    shape = broadcast_shape((x._data.shape, mask._data.shape), "masked_select")
    return getitem(broadcast.broadcast_to(x, shape), (broadcast.broadcast_to(mask, shape)._data,))


class MaskedScatter(Op):
    """x with source's first elements, in order, copied where mask is True.
    Backward: d/dx = g where mask is False; d/dsource = g's masked elements, in order (0 for the rest)."""

    @staticmethod
    def forward(ctx, x, mask, source):
        m = ctx.device.backend.broadcast_to(mask._data, x._data.shape)
        count = int(m.sum())
        if count > source._data.size:
            raise RuntimeError(f"masked_scatter: expected source to have at least {count} elements (the number of "
                               f"True values in the mask), got {source._data.size}")
        out = x._data.copy()
        out[m] = source._data.reshape(-1)[:count]
        ctx.mask = m
        return out

    @staticmethod
    def backward(ctx, g):
        n = ctx.needs_input_grad
        mask = constant(ctx, ctx.mask)
        gx = ew.where(mask, 0.0, g) if n[0] else None
        gs = None
        if n[2]:
            picked = getitem(g, (ctx.mask,))
            size = 1
            for s in ctx.input_shapes[2]:
                size *= s
            gs = mv.reshape(mv.pad(picked, (0, size - picked._data.shape[0])), ctx.input_shapes[2])
        return gx, None, gs


def masked_scatter(x, mask, source):
    """x with consecutive elements of source copied where mask is True, as torch.masked_scatter."""
    _check_mask(mask, "masked_scatter")
    shape = broadcast_shape((x._data.shape, mask._data.shape), "masked_scatter")  # x broadcasts too, as in PyTorch
    x = x if x._data.shape == shape else broadcast.broadcast_to(x, shape)
    source = cast(source, x._data.dtype)
    return MaskedScatter.apply(x, mask, source)


# ---------------------------------------------------------------- take, nonzero

@tensor_args("x", "index")
def take(x, index):
    """The elements of x flattened, at `index` (an int64 tensor of any shape), as torch.take."""
    if index._data.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {dtypes.scalar_name(index._data.dtype)}")
    flat = mv.reshape(x, (-1,))
    _check_bounds(index, flat._data.shape[0], "take", 0, negative_ok=True)
    return getitem(flat, (index._data,), _converted=False)  # an advanced key even for a 0-d index: a new tensor


def take_along_dim(x, indices, dim: int | None = None):
    """gather with broadcasting: x and indices broadcast except along dim, as torch.take_along_dim;
    dim=None takes from the flattened x."""
    if dim is None:
        return gather(mv.reshape(x, (-1,)), 0, mv.reshape(indices, (-1,)))
    d = normalize_dim(dim, x._data.ndim, "take_along_dim")
    if x._data.shape[d]:  # along a dim PyTorch wraps every index, out-of-range ones too: -1 is the last, n the first
        indices = ew.remainder(indices, x._data.shape[d])
    xs, js = list(x._data.shape), list(indices._data.shape)
    xs[d] = js[d] = 1
    common = broadcast_shape((tuple(xs), tuple(js)), "take_along_dim")
    x_shape = common[:d] + (x._data.shape[d],) + common[d + 1:]
    i_shape = common[:d] + (indices._data.shape[d],) + common[d + 1:]
    return gather(broadcast.broadcast_to(x, x_shape), d, broadcast.broadcast_to(indices, i_shape))


class Nonzero(Op):
    """The indices of the nonzero elements, one row per element (int64, row-major order); no gradient."""

    differentiable = False

    @staticmethod
    def forward(ctx, x):
        xp, d = ctx.xp, x._data
        return xp.stack(xp.nonzero(d), axis=-1).astype("int64") if d.ndim else xp.zeros((int(d != 0), 0), "int64")


def nonzero(x, *, as_tuple: bool = False):
    """Indices of the nonzero elements: an (n, ndim) int64 tensor, or with as_tuple one 1-D tensor per dim,
    as torch.nonzero."""
    if not as_tuple:
        return Nonzero.apply(x)
    rows = Nonzero.apply(_nd(x))  # a 0-d x counts as one element at position 0, as in PyTorch
    return tuple(mv.select(rows, 1, i) for i in range(rows._data.shape[1]))


def argwhere(x):
    """The indices of the nonzero elements as (n, ndim) rows, as torch.argwhere."""
    return nonzero(x)


def count_nonzero(x, dim=None):
    """The number of nonzero elements (over dim, or all), as torch.count_nonzero."""
    from . import reduce as rd
    return rd.sum(ew.ne(x, 0), dim)


def where(condition, input=None, other=None):  # noqa: A002 (PyTorch's names)
    """input where condition else other, as torch.where; where(condition) alone is nonzero(as_tuple=True)."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return ew.where(condition, input, other)


# ---------------------------------------------------------------- what these share

def _along(dim: int, idx) -> tuple:
    """The key that picks positions `idx` along dim and everything of the other dims."""
    return (slice(None),) * dim + (idx,)


def _size(x, d: int) -> int:
    return x._data.shape[d] if x._data.ndim else 1


def _nd(t):
    """A 0-d tensor as a 1-element 1-D one (the index ops work on dims)."""
    return t if not isinstance(t, TensorBase) or t._data.ndim else mv.reshape(t, (1,))


def _scalar_result(x, out):
    """The result back in x's shape (0-d for a 0-d x)."""
    return out if x._data.ndim else mv.reshape(out, ())


def _index_vector(index, op: str):
    if not isinstance(index, TensorBase):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    check_index_dtype(index, op)
    if index._data.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, got a tensor of shape {list(index._data.shape)}")
    return mv.reshape(index, (-1,)) if index._data.ndim == 0 else index


def _check_bounds(index, n: int, op: str, dim: int, negative_ok: bool = False) -> None:
    d = index._data
    if d.size:
        lo, hi = int(d.min()), int(d.max())
        if hi >= n or lo < (-n if negative_ok else 0):
            bad = hi if hi >= n else lo
            raise IndexError(f"{op}(): index {bad} is out of bounds for dimension {dim} with size {n}")


def _index_args(x, dim, index, source, op: str):
    """(dim, index, source) of index_add / index_copy, checked: source has x's shape with `len(index)`
    along dim, and x's dtype."""
    d = normalize_dim(dim, x._data.ndim, op)
    idx = _index_vector(index, op)
    _check_bounds(idx, _size(x, d), op, d)
    source = _nd(source)
    want = list(_nd(x)._data.shape)
    want[d] = idx._data.shape[0]
    if list(source._data.shape) != want and source._data.size != len(idx._data) or source._data.ndim > len(want):
        raise RuntimeError(f"{op}(): source of shape {list(source._data.shape)} does not match self of shape "
                           f"{list(x._data.shape)} with {idx._data.shape[0]} indices along dim {d}")
    return d, idx, mv.reshape(cast(source, x._data.dtype), want)


def _scatter_args(x, dim, index, src, op: str):
    """(dim, src) of scatter / scatter_add / scatter_reduce, checked as PyTorch does."""
    d = normalize_dim(dim, x._data.ndim, op)
    if not isinstance(index, TensorBase):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    check_index_dtype(index, op)
    nd = max(x._data.ndim, 1)
    if max(index._data.ndim, 1) != nd or (isinstance(src, TensorBase) and max(src._data.ndim, 1) != nd):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as self tensor ({op})")
    xs, js = _nd(x)._data.shape, _nd(index)._data.shape
    ss = _nd(src)._data.shape if isinstance(src, TensorBase) else js
    for k, (a, b, c) in enumerate(zip(xs, js, ss)):
        if b > c or (k != d and b > a):
            raise RuntimeError(f"Expected index {list(js)} to be smaller than self {list(xs)} apart from dimension "
                               f"{d} and to be smaller size than src {list(ss)} ({op})")
    _check_bounds(index, xs[d], op, d)
    if isinstance(src, TensorBase):
        src = cast(src, x._data.dtype)
    return d, src


def _scatter_key(xp, dim: int, idx) -> tuple:
    """The positions out[i][idx[i][j]] (for dim 1) that a scatter writes, as an advanced index."""
    full = ix.open_grid(xp, idx.shape)  # (NumPy's indices(sparse=True), which CuPy lacks)
    full[dim] = idx
    return tuple(full)


def _corner(src, index):
    """The part of src's array that index covers (src may be larger)."""
    return src._data[tuple(slice(0, n) for n in index._data.shape)]


def _corner_t(src, index):
    """The part of src that index covers, as a tensor (differentiable)."""
    shape = index._data.shape
    return src if src._data.shape == shape else getitem(src, tuple(slice(0, n) for n in shape))


def _pad_to(t, shape: tuple):
    """t padded with zeros at the end of each dim to `shape` (src's gradient where src > index)."""
    if t._data.shape == tuple(shape):
        return t
    pad = []
    for have, want in zip(reversed(t._data.shape), reversed(shape)):
        pad += [0, want - have]
    return mv.pad(t, tuple(pad))


def _full_like_index(x, index, src):
    """src as a tensor of index's shape (a number is broadcast)."""
    if isinstance(src, TensorBase):
        return src
    xp = x._device.backend.xp
    return make(xp.full(index._data.shape, src, dtype=x._data.dtype), x._device)


def _check_mask(mask, op: str) -> None:
    if not isinstance(mask, TensorBase) or mask._data.dtype != bool:
        got = mask.dtype if isinstance(mask, TensorBase) else type(mask).__name__
        raise RuntimeError(f"{op} only supports boolean masks, but got mask with dtype {got}")


def _ones(t):
    """A constant tensor of ones like t."""
    return make(t._device.backend.xp.ones_like(t._data), t._device)
