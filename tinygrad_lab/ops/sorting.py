"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode;
unique / unique_consecutive, counting: bincount, histc, and searching: searchsorted, bucketize, isin.

Each differentiable one is two steps: a non-differentiable op finds the indices (where the values
come from), then `gather` picks the values. The gradient is gather's: each output's gradient goes
back to the element it was taken from. NaN sorts as the largest value, as in PyTorch.
"""
from __future__ import annotations

import math

from ..autograd.tensor_base import TensorBase, make
from . import movement as mv
from .elementwise import Clone
from .indexing import Gather
from .op import Op
from .reduce import ValuesIndices
from .shapes import normalize_dim


class SortIndices(Op):
    """The indices that sort x along dim, stably (equal elements keep their order), NaN last
    (first when descending); no gradient."""

    differentiable = False

    @staticmethod
    def forward(ctx, x, dim, descending):
        return sort_indices(ctx.xp, x._data, dim, descending)


def sort_indices(xp, d, axis: int, descending: bool):
    """Stable argsort along axis. Descending: the ascending order of the reversed array, reversed
    again, so that equal elements still keep their original order."""
    if not descending:
        return xp.argsort(d, axis=axis, kind="stable")
    n = d.shape[axis]
    reversed_order = xp.argsort(xp.flip(d, axis), axis=axis, kind="stable")
    return (n - 1 - xp.flip(reversed_order, axis)).astype("int64")


def _pick(x, dim: int, idx) -> ValuesIndices:
    """(x's values at idx along dim, idx): the differentiable gather of the values."""
    return ValuesIndices(Gather.apply(x, dim, idx), idx)


def sort(x, dim: int = -1, descending: bool = False, stable: bool = False) -> ValuesIndices:
    """(values, indices) of x sorted along dim, as torch.sort (always stable here)."""
    if not x._data.ndim:
        return ValuesIndices(mv.reshape(x, ()), _zeros_index(x, ()))
    d = normalize_dim(dim, x._data.ndim, "sort")
    return _pick(x, d, SortIndices.apply(x, d, bool(descending)))


def argsort(x, dim: int = -1, descending: bool = False, stable: bool = False):
    """The indices that sort x along dim, as torch.argsort (always stable here)."""
    if not x._data.ndim:
        return _zeros_index(x, ())
    return SortIndices.apply(x, normalize_dim(dim, x._data.ndim, "argsort"), bool(descending))


def msort(x):
    """x sorted along dim 0, as torch.msort."""
    return sort(x, 0).values


class TopkIndices(Op):
    """The indices of the k largest (or smallest) elements along dim, in sorted order; no gradient."""

    differentiable = False

    @staticmethod
    def forward(ctx, x, k, dim, largest):
        order = sort_indices(ctx.xp, x._data, dim, largest)
        return ctx.xp.take(order, ctx.xp.arange(k), axis=dim)


def topk(x, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> ValuesIndices:  # noqa: A002
    """(values, indices) of the k largest elements along dim (smallest with largest=False), as torch.topk;
    always in sorted order here."""
    if not x._data.ndim:
        _check_k(k, 1, "topk", low=0)
        return ValuesIndices(Clone.apply(x), _zeros_index(x, ())) if k else _pick(x, 0, _zeros_index(x, (0,)))
    d = normalize_dim(dim, x._data.ndim, "topk")
    _check_k(k, x._data.shape[d], "topk", low=0)
    return _pick(x, d, TopkIndices.apply(x, int(k), d, bool(largest)))


class KthIndex(Op):
    """The index along dim of the element that would be at position `k` after a stable sort
    (k counted from 0); for the median, the index of a NaN where a row has one. No gradient."""

    differentiable = False

    @staticmethod
    def forward(ctx, x, k, dim, nan_wins):
        xp, d = ctx.xp, x._data
        order = xp.argsort(d, axis=dim, kind="stable")
        idx = xp.take(order, [k], axis=dim) if isinstance(k, int) else xp.take_along_axis(order, k, axis=dim)
        if nan_wins and d.dtype.kind == "f":
            nan = xp.isnan(d)
            first_nan = xp.expand_dims(xp.argmax(nan, axis=dim), dim)
            idx = xp.where(xp.expand_dims(nan.any(axis=dim), dim), first_nan, idx)
        return idx.astype("int64")


def _kth(x, k, dim, keepdim: bool, nan_wins: bool) -> ValuesIndices:
    """The element at sorted position k (from 0) along dim, and its index."""
    out = _pick(x, dim, KthIndex.apply(x, k, dim, nan_wins))
    return out if keepdim else ValuesIndices(mv.squeeze(out.values, dim), mv.squeeze(out.indices, dim))


def kthvalue(x, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """(values, indices) of the k-th smallest element along dim (k from 1), as torch.kthvalue: NaN counts as
    larger than every number (unlike median's, a NaN does not win)."""
    x1 = x if x._data.ndim else mv.reshape(x, (1,))
    d = normalize_dim(dim, x._data.ndim, "kthvalue")
    _check_k(k, x1._data.shape[d], "kthvalue", low=1)
    return _squeeze_0d(_kth(x1, k - 1, d, keepdim, nan_wins=False), x)


def median(x, dim: int | None = None, keepdim: bool = False):
    """The lower of the two middle values (no average), as torch.median: over all elements (a tensor),
    or along dim ((values, indices)); NaN if the values include NaN."""
    return _median(x, dim, keepdim, "median", nan_wins=True)


def nanmedian(x, dim: int | None = None, keepdim: bool = False):
    """The median of the values that are not NaN, as torch.nanmedian."""
    return _median(x, dim, keepdim, "nanmedian", nan_wins=False)


def _median(x, dim, keepdim: bool, op: str, nan_wins: bool):
    if dim is None:
        flat = mv.reshape(x, (-1,))
        if not flat._data.size:
            return make(x._device.backend.xp.full((), float("nan"), dtype=x._data.dtype), x._device)
        return mv.reshape(_kth(flat, _middle(flat, 0, nan_wins), 0, False, nan_wins).values, ())
    x1 = x if x._data.ndim else mv.reshape(x, (1,))
    d = normalize_dim(dim, x._data.ndim, op)
    if x1._data.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    return _squeeze_0d(_kth(x1, _middle(x1, d, nan_wins), d, keepdim, nan_wins), x)


def _middle(x, dim: int, nan_wins: bool):
    """The sorted position of the lower median along dim: (n - 1) // 2, or, ignoring NaNs (nanmedian),
    a position per row (NaN sorts last, so the row's numbers come first)."""
    n = x._data.shape[dim]
    if nan_wins or x._data.dtype.kind != "f":
        return (n - 1) // 2
    xp = x._device.backend.xp
    count = (~xp.isnan(x._data)).sum(axis=dim, keepdims=True)
    return xp.maximum(count - 1, 0) // 2


class ModeIndex(Op):
    """The index along dim of the most frequent value (the smallest such value on ties, its last
    occurrence, as PyTorch); no gradient."""

    differentiable = False

    @staticmethod
    def forward(ctx, x, dim):
        xp = ctx.xp
        d = xp.moveaxis(x._data, dim, -1)
        order = xp.argsort(d, axis=-1, kind="stable")
        s = xp.take_along_axis(d, order, axis=-1)
        n = s.shape[-1]
        new_run = xp.concatenate([xp.ones(s.shape[:-1] + (1,), bool), s[..., 1:] != s[..., :-1]], axis=-1)
        run_start = xp.maximum.accumulate(xp.where(new_run, xp.arange(n), 0), axis=-1)
        run_length = xp.arange(n) - run_start + 1  # at the last element of each run: that run's count
        best = xp.argmax(run_length, axis=-1)[..., None]  # the first longest run ends here
        return xp.moveaxis(xp.take_along_axis(order, best, axis=-1), -1, dim).astype("int64")


def mode(x, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """(values, indices) of the most frequent value along dim, as torch.mode."""
    x1 = x if x._data.ndim else mv.reshape(x, (1,))
    d = normalize_dim(dim, x._data.ndim, "mode")
    out = _pick(x1, d, ModeIndex.apply(x1, d))
    out = out if keepdim else ValuesIndices(mv.squeeze(out.values, d), mv.squeeze(out.indices, d))
    return _squeeze_0d(out, x)


# ---------------------------------------------------------------- unique

class Unique(Op):
    """The distinct values of x (sorted), with the inverse indices and the counts (no gradient)."""

    differentiable = False

    @staticmethod
    def forward(ctx, x, dim):
        xp = ctx.xp
        values, inverse, counts = xp.unique(x._data, return_inverse=True, return_counts=True, axis=dim)
        shape = x._data.shape if dim is None else (x._data.shape[dim],)
        return values, inverse.reshape(shape).astype("int64"), counts.astype("int64")


def unique(x, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: int | None = None):
    """The distinct elements of x (or distinct slices along dim), sorted, as torch.unique;
    optionally with the index of each element's value (return_inverse) and the counts."""
    d = None if dim is None else normalize_dim(dim, x._data.ndim, "unique")
    values, inverse, counts = Unique.apply(x, d)
    extra = (inverse,) * return_inverse + (counts,) * return_counts
    return (values,) + extra if extra else values


class UniqueConsecutive(Op):
    """The first element of each run of equal consecutive elements (of the flattened x), with the
    inverse indices and the run lengths (no gradient)."""

    differentiable = False

    @staticmethod
    def forward(ctx, x):
        xp = ctx.xp
        flat = x._data.reshape(-1)
        starts = xp.concatenate([xp.ones(min(flat.size, 1), bool), flat[1:] != flat[:-1]])
        inverse = (xp.cumsum(starts) - 1).reshape(x._data.shape).astype("int64")
        first = xp.flatnonzero(starts)
        counts = xp.diff(xp.append(first, flat.size)).astype("int64")
        return flat[first], inverse, counts


def unique_consecutive(x, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None):
    """Each run of equal consecutive elements collapsed to one, as torch.unique_consecutive (dim=None only)."""
    if dim is not None:
        raise NotImplementedError("unique_consecutive: only dim=None is supported")
    values, inverse, counts = UniqueConsecutive.apply(x)
    extra = (inverse,) * return_inverse + (counts,) * return_counts
    return (values,) + extra if extra else values


# ---------------------------------------------------------------- counting

class Bincount(Op):
    """How often each value 0, 1, ..., max(x) occurs in x (1-d, non-negative integers), or the sum of
    the weights at each value's positions; no gradient (as PyTorch)."""

    differentiable = False

    @staticmethod
    def forward(ctx, x, weights, minlength):
        w = None if weights is None else weights._data
        out = ctx.xp.bincount(x._data, weights=w, minlength=minlength)
        if w is None:
            return out.astype("int64")
        return out.astype(w.dtype if w.dtype.kind == "f" else "float64")  # float weights keep their dtype


def bincount(x, weights=None, minlength: int = 0):
    """Counts of each non-negative integer in 1-d x (weighted sums with `weights`), as torch.bincount:
    int64 counts; float64 sums, or the weights' float dtype."""
    d = x._data
    if d.dtype.kind not in "biu":
        raise NotImplementedError(f"bincount counts integers, not {x.dtype} (convert with .long())")
    if d.ndim != 1 or (d.size and bool((d < 0).any())):
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got shape {list(d.shape)}).")
    if weights is not None and (weights._data.ndim != 1 or weights._data.shape != d.shape):
        raise RuntimeError(f"weights should be 1-d and have the same length as input (input {list(d.shape)}, "
                           f"weights {list(weights._data.shape)})")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    return Bincount.apply(x, weights, minlength)


class Histc(Op):
    """A histogram of x's elements: `bins` equal-width bins over [lo, hi], the last one including hi;
    elements outside (and NaN) are not counted. Counts in x's dtype; no gradient (as PyTorch)."""

    differentiable = False

    @staticmethod
    def forward(ctx, x, bins, lo, hi):
        d = x._data.reshape(-1)
        lo, hi = d.dtype.type(lo), d.dtype.type(hi)  # in x's precision, as PyTorch: the same bin for every value
        inside = d[(d >= lo) & (d <= hi)]
        which = ctx.xp.minimum(((inside - lo) / (hi - lo) * d.dtype.type(bins)).astype("int64"), bins - 1)
        return ctx.xp.bincount(which, minlength=bins).astype(d.dtype)


def histc(x, bins: int = 100, min: float = 0, max: float = 0):  # noqa: A002 (PyTorch's names)
    """torch.histc: with min == max (the default), the range is x's own minimum to maximum (widened
    by 1 on each side when those are equal)."""
    d = x._data
    if d.dtype.kind != "f":
        raise NotImplementedError(f"histc bins floating point values, not {x.dtype} (convert with .float())")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and d.size:
        counted = d[~x._device.backend.xp.isnan(d)]  # (an infinite one is refused below, as PyTorch)
        lo, hi = (float(counted.min()), float(counted.max())) if counted.size else (lo, hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    return Histc.apply(x, bins, lo, hi)


# ---------------------------------------------------------------- what these share

def _check_k(k, n: int, op: str, low: int) -> None:
    if not low <= k <= n:
        raise IndexError(f"{op}(): selected number k ({k}) out of range for dimension of size {n} "
                         f"(k must be in [{low}, {n}])")


def _zeros_index(x, shape):
    return make(x._device.backend.xp.zeros(shape, dtype="int64"), x._device)


def _squeeze_0d(out: ValuesIndices, x) -> ValuesIndices:
    """For a 0-d x (handled as one element), 0-d results."""
    if x._data.ndim:
        return out
    return ValuesIndices(mv.reshape(out.values, ()), mv.reshape(out.indices, ()))


# ---------------------------------------------------------------- searching sorted sequences, membership

class SearchSorted(Op):
    """Where each value would go in its row of the sorted boundaries (the last dim; one row for all
    values when boundaries are 1-D): before the equal elements (side 'left') or after them ('right').
    `sorter` (or None) holds the order that sorts each row. No gradient."""

    differentiable = False

    @staticmethod
    def forward(ctx, boundaries, values, side, sorter, dtype):
        xp, b, v = ctx.xp, boundaries._data, values._data
        if sorter is not None:
            b = xp.take_along_axis(b, sorter._data, axis=-1)
        if b.ndim == 1:
            return xp.asarray(xp.searchsorted(b, v, side=side)).astype(dtype)
        rows = math.prod(b.shape[:-1])
        rows_b, rows_v = b.reshape(rows, b.shape[-1]), v.reshape(rows, v.shape[-1])
        found = [xp.searchsorted(rb, rv, side=side) for rb, rv in zip(rows_b, rows_v)]
        out = xp.stack(found) if found else xp.zeros(rows_v.shape, dtype)
        return out.reshape(v.shape).astype(dtype)


def searchsorted(sorted_sequence, input, *, out_int32: bool = False, right: bool = False,  # noqa: A002
                 side: str | None = None, sorter=None):
    """For each value of `input` (a tensor or a number), the index in `sorted_sequence` where it would
    be inserted to keep it sorted, as torch.searchsorted: before equal elements, or after them with
    right=True / side='right'. An N-D sorted_sequence holds one sorted row per leading index, searched by
    the values with the same leading index. `sorter` is the order that sorts an unsorted sequence
    (argsort's). int64 indices (int32 with out_int32). Deviation: where the sequence itself holds NaN,
    NaN counts as the largest value (NumPy's order); PyTorch's binary search then puts every value after it."""
    side = _search_side(right, side)
    seq = sorted_sequence
    values = _as_search_tensor(input, seq, "searchsorted", "input")
    if seq._data.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    _check_search_shapes(seq, values, scalar=not isinstance(input, TensorBase))
    for t, what in ((seq, "boundaries"), (values, "input value")):
        if t._data.dtype == bool:
            raise NotImplementedError(f"torch.searchsorted(): not implemented for a bool {what} tensor")
    if sorter is not None:
        _check_sorter(seq, sorter)
    return SearchSorted.apply(seq, values, side, sorter, "int32" if out_int32 else "int64")


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False):  # noqa: A002
    """The bucket of each value of `input` (a tensor or a number) among the sorted 1-D `boundaries`, as
    torch.bucketize: i with boundaries[i-1] < v <= boundaries[i] (boundaries[i-1] <= v < boundaries[i]
    with right=True); searchsorted with the arguments the other way round."""
    if not isinstance(boundaries, TensorBase) or boundaries._data.ndim != 1:
        got = boundaries._data.ndim if isinstance(boundaries, TensorBase) else type(boundaries).__name__
        raise RuntimeError(f"torch.bucketize(): boundaries tensor must be 1 dimension, but got dim({got})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def _search_side(right: bool, side: str | None) -> str:
    """'left' or 'right' from searchsorted's two ways of saying it, which must agree."""
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True")
    return side


def _as_search_tensor(value, like, op: str, name: str):
    """A tensor argument that may also be a Python number (a 0-d tensor on `like`'s device then)."""
    if isinstance(value, TensorBase):
        return value
    if isinstance(value, (int, float)) or (hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0):
        return make(like._device.backend.xp.asarray(value), like._device)
    raise TypeError(f"{op}(): argument '{name}' must be a Tensor or a number, not {type(value).__name__}")


def _check_search_shapes(seq, values, scalar: bool) -> None:
    """N-D boundaries need values with the same leading dims (one row of values per row of boundaries)."""
    bs, vs = seq._data.shape, values._data.shape
    if len(bs) == 1:
        return
    if scalar:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                           f"dimension is 1, but we got boundaries tensor dim({len(bs)}) and input value's dim(0) "
                           f"numel(1)")
    if len(vs) != len(bs) or vs[:-1] != bs[:-1]:
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(bs)} and input value tensor {list(vs)}")


def _check_sorter(seq, sorter) -> None:
    """sorter: an int64 tensor of the boundaries' shape, each entry a position in its row."""
    if not isinstance(sorter, TensorBase) or sorter._data.dtype != "int64":
        got = sorter.dtype if isinstance(sorter, TensorBase) else type(sorter).__name__
        raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype {got}")
    if sorter._data.shape != seq._data.shape:
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(seq._data.shape)} and got sorter tensor {list(sorter._data.shape)}")
    s, n = sorter._data, seq._data.shape[-1]
    if s.size and bool((s.min() < 0) | (s.max() >= n)):
        raise RuntimeError(f"torch.searchsorted(): sorter index out of range (sorter holds {int(s.min())} to "
                           f"{int(s.max())}, the boundaries' rows have {n} elements)")


class IsIn(Op):
    """Whether each element of `elements` equals some element of `test_elements` (or does not, with
    invert); NaN equals nothing. No gradient."""

    differentiable = False

    @staticmethod
    def forward(ctx, elements, test_elements, invert):
        found = ctx.xp.isin(elements._data, test_elements._data.reshape(-1), invert=invert)
        return ctx.xp.asarray(found).reshape(elements._data.shape)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """A bool tensor of elements' shape: True where the element is among test_elements, as torch.isin
    (either one may be a number, not both; values of different dtypes compare as numbers).
    assume_unique is accepted and changes nothing (it only lets PyTorch go faster)."""
    if isinstance(elements, TensorBase):
        test_elements = _as_search_tensor(test_elements, elements, "isin", "test_elements")
    elif isinstance(test_elements, TensorBase):
        elements = _as_search_tensor(elements, test_elements, "isin", "elements")
    else:
        raise TypeError(f"isin(): elements or test_elements must be a Tensor (the other may be a number), got "
                        f"{type(elements).__name__} and {type(test_elements).__name__}")
    for t in (elements, test_elements):
        if t._data.dtype == bool:
            raise RuntimeError(f"Unsupported input type encountered for isin(): Bool (elements {elements.dtype}, "
                               f"test_elements {test_elements.dtype})")
    return IsIn.apply(elements, test_elements, bool(invert))
