"""Reductions: sum, mean, prod, max/min (values and indices), argmax/argmin,
var/std, logsumexp, norm, all/any (sum_to, the unbroadcast of gradients, is in broadcast.py).

`dim` is an int, a tuple of ints or None (all dims); `keepdim` keeps reduced
dims as size 1. Backwards broadcast the incoming gradient back over the reduced
dims with `expand`, so they too are differentiable.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._warn import warn
from ..autograd.tensor_base import _NP_SCALARS, TensorBase, make
from . import elementwise as ew
from . import movement as mv
from . import pointwise as pw
from .broadcast import SumTo, sum_to  # noqa: F401 (rd.SumTo, rd.sum_to: the unbroadcast of gradients)
from .op import Op, tensor_args
from .promotion import as_float, cast_to
from .shapes import normalize_dim, normalize_dims


class Sum(Op):
    """Sum over dims (bool and integers sum as int64, as PyTorch). Backward: the gradient is
    broadcast back (expand) over the summed dims."""

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        ctx.axes, ctx.keepdim = axes, keepdim
        d = x._data
        # add.reduce is what d.sum calls, without NumPy's Python wrapper around it (CuPy has it too, since v12);
        # a full sum gives a NumPy scalar, which apply makes a 0-d array. Over some axes the backend may
        # know a faster way (the CPU: a matrix-vector product for a matrix's rows or columns).
        out = (ctx.xp.add.reduce(d, None, None, None, keepdim) if axes is None
               else ctx.device.backend.sum(d, axes, keepdim))
        if d.dtype.kind in "biu":  # PyTorch sums bool and integers as int64
            out = out.astype("int64", copy=False)
        return out

    @staticmethod
    def backward(ctx, g):
        return _expand_back(ctx, g), None, None


@tensor_args("x")
def sum(x, dim=None, keepdim: bool = False, dtype=None):
    """Sum over dim (all by default), as torch.sum; bool and integers give int64; `dtype` casts x first."""
    if dtype is not None:  # (tested here: every loss sums, and the call would cost 9 bytecodes)
        x = cast_to(x, dtype)
    return Sum.apply(x, None if dim is None else normalize_dims(dim, x._data.ndim, "sum"), keepdim)


class Mean(Op):
    """Mean over dims. Backward: g / (number of reduced elements), broadcast back over the reduced dims."""

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        ctx.axes, ctx.keepdim = axes, keepdim
        d = x._data
        ctx.count = count = _axes_size(d.shape, axes)
        # NumPy's mean, without its ~2.5 us of Python around the same two steps: a sum (float16 summed
        # in float32), then a division by the count, in place when the sum is an array
        half = d.dtype.itemsize == 2
        total = ctx.xp.add.reduce(d, axes, "float32" if half else None, None, keepdim)
        out = total / count if total.__class__ in _NP_SCALARS else ctx.xp.true_divide(total, count, out=total)
        return out.astype(d.dtype) if half else out

    @staticmethod
    def backward(ctx, g):
        return _expand_back(ctx, ew.div(g, ctx.count)), None, None


@tensor_args("x")
def mean(x, dim=None, keepdim: bool = False):
    """Mean over dim (all by default), as torch.mean; like PyTorch, integer and bool inputs raise."""
    _float_only(x, "mean")
    return Mean.apply(x, normalize_dims(dim, x._data.ndim, "mean"), keepdim)


class Prod(Op):
    """Product over dims. Backward: g times the product of the other elements (out / x, or
    multiplied out explicitly where out / x is wrong: x has zeros, or out under- or overflowed),
    broadcast back over the reduced dims."""

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        ctx.axes, ctx.keepdim = axes, keepdim
        wide = np.int64 if x._data.dtype.kind in "biu" else None  # PyTorch's int64 (NumPy's uint8 product is uint64)
        out = ctx.xp.asarray(x._data.prod(axis=axes, keepdims=keepdim, dtype=wide))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        xp = ctx.xp
        o = out._data
        if bool(xp.all(xp.isfinite(o) & (o != 0))):
            others = ew.div(_expand_back(ctx, out), x)  # product of the other elements
        else:  # a zero in x makes out / x 0/0, and so does out underflowing to 0: multiply the others out
            others = _prod_of_others(x, ctx.axes)
        return ew.mul(_expand_back(ctx, g), others), None, None


def _prod_of_others(x, axes):
    """For each element, the product of the other elements along `axes` (differentiable)."""
    shape = x._data.shape
    axes = tuple(range(len(shape))) if axes is None else axes
    n = _axes_size(shape, axes)
    rest = [a for a in range(len(shape)) if a not in axes]
    # move the reduced dims last and flatten them: (M, n)
    flat = mv.reshape(mv.permute(x, rest + list(axes)), (-1, n))
    xp = x._device.backend.xp
    eye = make(xp.eye(n, dtype=bool), x._device)
    rows = ew.where(eye, 1.0, mv.unsqueeze(flat, 1))  # (M, n, n): row i has element i replaced by 1
    others = Prod.apply(rows, (2,), False)  # (M, n)
    back = mv.reshape(others, [shape[a] for a in rest] + [shape[a] for a in axes])
    inv = [0] * len(shape)
    for i, a in enumerate(rest + list(axes)):
        inv[a] = i
    return mv.permute(back, inv)


@tensor_args("x")
def prod(x, dim=None, keepdim: bool = False, dtype=None):
    """Product over dim (all by default), as torch.prod; bool and integers give int64; `dtype` casts x first."""
    x = cast_to(x, dtype)
    return Prod.apply(x, normalize_dims(dim, x._data.ndim, "prod"), keepdim)


class ValuesIndices(NamedTuple):
    """PyTorch's (values, indices) named tuple: what max/min with a dim, cummax/cummin, sort, topk,
    kthvalue, median and mode return."""

    values: TensorBase
    indices: TensorBase


def _nonempty(op: str, shape: tuple, axes, whole=IndexError) -> None:
    """PyTorch's error for a max/min/argmax over no elements (NumPy's 'empty sequence' otherwise):
    a reduction over all of an empty tensor (`whole`), or over a dim of size 0 (IndexError)."""
    if axes is None:
        raise whole(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                    f"reduction dim with the 'dim' argument (input of shape {list(shape)}).")
    for a in axes:
        if shape[a] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {a} to have non-zero size "
                             f"(input of shape {list(shape)}).")


class _ExtremumDim(Op):
    """max/min along one dim: values and the index of the first extreme element."""

    arg = "argmax"

    @classmethod
    def forward(cls, ctx, x, dim, keepdim):
        d = x._data
        if d.size == 0:
            _nonempty(cls.arg[3:], d.shape, (dim,))
        # the array's own methods: np.argmax(d) is 7x slower on a short row (1.2 us against 0.16), and the
        # extreme itself is cheaper from d.max than from take_along_axis(d, idx) (bilstm_crf's CRF: 11.5 -> 6 us)
        idx = getattr(d, cls.arg)(axis=dim, keepdims=True).astype("int64", copy=False)
        values = getattr(d, cls.arg[3:])(axis=dim, keepdims=True)
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        ctx.dim, ctx.keepdim, ctx.axes = dim, keepdim, (dim,)
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g, _g_indices):
        idx = ctx.saved_tensors[0]._data
        xp = ctx.xp
        in_shape = ctx.input_shapes[0]
        if not ctx.keepdim:
            idx = xp.expand_dims(idx, ctx.dim)
        positions = xp.arange(in_shape[ctx.dim]).reshape([-1 if i == ctx.dim else 1 for i in range(len(in_shape))])
        onehot = make((positions == idx).astype(g._data.dtype), g._device)
        return ew.mul(_expand_back(ctx, g), onehot), None, None


class MaxDim(_ExtremumDim):
    """max along one dim: (values, indices), the first index on ties. Backward: g goes only to
    the element at the returned index; the indices get no gradient."""

    arg = "argmax"


class MinDim(_ExtremumDim):
    """min along one dim: (values, indices), the first index on ties. Backward: g goes only to
    the element at the returned index; the indices get no gradient."""

    arg = "argmin"


class _Extremum(Op):
    """amax/amin over dims; the gradient is shared evenly between tied elements (as PyTorch)."""

    reduce = "max"

    @classmethod
    def forward(cls, ctx, x, axes, keepdim):
        ctx.axes, ctx.keepdim = axes, keepdim
        d = x._data
        if d.size == 0:
            _nonempty("a" + cls.reduce if axes else cls.reduce, d.shape, axes, RuntimeError)
        out = getattr(d, cls.reduce)(axis=axes, keepdims=True)
        ctx.save_for_backward(d == out)
        return ctx.xp.asarray(out if keepdim else out.reshape([s for i, s in enumerate(d.shape)
                                                                if axes is not None and i not in axes]))

    @staticmethod
    def backward(ctx, g):
        (ties,) = ctx.saved_tensors
        share = ties / ties.sum(axis=ctx.axes, keepdims=True)
        return ew.mul(_expand_back(ctx, g), make(share.astype(g._data.dtype), g._device)), None, None


class AMax(_Extremum):
    """Max over dims. Backward: g is shared evenly between the elements equal to the max
    (as PyTorch), broadcast back over the reduced dims."""

    reduce = "max"


class AMin(_Extremum):
    """Min over dims. Backward: g is shared evenly between the elements equal to the min
    (as PyTorch), broadcast back over the reduced dims."""

    reduce = "min"


@tensor_args("x")
def amax(x, dim=None, keepdim: bool = False):
    """Max over dim (all by default), as torch.amax; tied maxima share the gradient evenly."""
    return AMax.apply(x, normalize_dims(dim, x._data.ndim, "amax"), keepdim)


@tensor_args("x")
def amin(x, dim=None, keepdim: bool = False):
    """Min over dim (all by default), as torch.amin; tied minima share the gradient evenly."""
    return AMin.apply(x, normalize_dims(dim, x._data.ndim, "amin"), keepdim)


@tensor_args("x")
def max(x, dim=None, keepdim: bool = False):
    """The largest element, or (values, indices) along `dim`; max(x, other) is maximum."""
    if isinstance(dim, TensorBase):
        return ew.maximum(x, dim)
    if dim is None:
        return amax(x)
    if not x._data.ndim:
        return ValuesIndices(ew.Clone.apply(x), _zero_index(x))  # a new tensor, as PyTorch (never x itself)
    return ValuesIndices(*MaxDim.apply(x, normalize_dim(dim, x._data.ndim, "max"), keepdim))


@tensor_args("x")
def min(x, dim=None, keepdim: bool = False):
    """The smallest element, or (values, indices) along `dim`; min(x, other) is minimum."""
    if isinstance(dim, TensorBase):
        return ew.minimum(x, dim)
    if dim is None:
        return amin(x)
    if not x._data.ndim:
        return ValuesIndices(ew.Clone.apply(x), _zero_index(x))
    return ValuesIndices(*MinDim.apply(x, normalize_dim(dim, x._data.ndim, "min"), keepdim))


def _zero_index(x):
    return make(x._device.backend.xp.zeros((), dtype="int64"), x._device)


class _ArgExtremum(Op):
    differentiable = False
    arg = "argmax"

    @classmethod
    def forward(cls, ctx, x, dim, keepdim):
        d = x._data
        if d.size == 0:
            _nonempty(cls.arg, d.shape, None if dim is None else (dim,))
        if dim is None:
            out = getattr(ctx.xp, cls.arg)(d)
            return ctx.xp.asarray(out).reshape((1,) * d.ndim if keepdim else ()).astype("int64")
        return getattr(ctx.xp, cls.arg)(d, axis=dim, keepdims=keepdim).astype("int64", copy=False)


class ArgMax(_ArgExtremum):
    """int64 index of the first max, along dim or into the flattened tensor (no gradient)."""

    arg = "argmax"


class ArgMin(_ArgExtremum):
    """int64 index of the first min, along dim or into the flattened tensor (no gradient)."""

    arg = "argmin"


@tensor_args("x")
def argmax(x, dim=None, keepdim: bool = False):
    """Index of the max along dim, as torch.argmax; with dim=None, an index into the flattened tensor."""
    return ArgMax.apply(x, None if dim is None else normalize_dim(dim, x._data.ndim, "argmax"), keepdim)


@tensor_args("x")
def argmin(x, dim=None, keepdim: bool = False):
    """Index of the min along dim, as torch.argmin; with dim=None, an index into the flattened tensor."""
    return ArgMin.apply(x, None if dim is None else normalize_dim(dim, x._data.ndim, "argmin"), keepdim)


@tensor_args("x")
def var(x, dim=None, unbiased=None, keepdim: bool = False, *, correction=None, _op: str = "var"):
    """Variance with Bessel's correction by default (correction=1, as PyTorch); nan, with PyTorch's
    warning, where n - correction is not positive (one element). As PyTorch's overloads, var(x, True)
    and var(x, dim, unbiased, keepdim) take `unbiased` by position."""
    _float_only(x, _op)
    if isinstance(dim, bool):  # var(x, unbiased): a bool is not a dim (though Python's bool is an int)
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if x._data.dtype.name == "float16":  # accumulated in float32, as PyTorch: float16's sums overflow at 65504
        return ew.cast(var(ew.cast(x, "float32"), dim, correction=correction, keepdim=keepdim, _op=_op), "float16")
    axes = normalize_dims(dim, x._data.ndim, _op)
    n = _axes_size(x._data.shape, axes)
    if n - correction <= 0:
        warn(f"{_op}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
             f"(input numel divided by output numel): {n} values, correction={correction} "
             f"(input of shape {list(x._data.shape)})")
    centered = ew.sub(x, mean(x, axes, keepdim=True))
    return ew.div(sum(ew.mul(centered, centered), axes, keepdim), n - correction if n > correction else float("nan"))


@tensor_args("x")
def std(x, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """Standard deviation, sqrt(var): Bessel's correction by default (correction=1, as PyTorch); `unbiased`
    by position as var's. Where var is 0 (constant values) the gradient is 0, as PyTorch's, not sqrt's
    inf times 0 (nan)."""
    v = var(x, dim, unbiased, keepdim, correction=correction, _op="std")
    zero = ew.eq(v, 0.0)
    return ew.where(zero, 0.0, ew.sqrt(ew.where(zero, 1.0, v)))


@tensor_args("x")
def logsumexp(x, dim, keepdim: bool = False):
    """log(sum(exp(x))) along dim, computed without overflow; integer and bool tensors in the default
    float dtype (as PyTorch 2.13)."""
    x = as_float(x)
    axes = normalize_dims(dim, x._data.ndim, "logsumexp")
    m = make(x._data.max(axis=axes, keepdims=True), x._device)  # a constant shift: no gradient needed
    m = ew.where(ew.eq(ew.abs(m), float("inf")), 0.0, m)
    out = ew.add(ew.log(sum(ew.exp(ew.sub(x, m)), axes, keepdim=True)), m)
    return out if keepdim else mv.reshape(out, [s for i, s in enumerate(x._data.shape)
                                                if axes is not None and i not in axes])


class Norm2(Op):
    """The Euclidean norm; its gradient x / norm is taken as 0 where the norm is 0 (as PyTorch)."""

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        ctx.axes, ctx.keepdim = axes, keepdim
        d = x._data
        out = ctx.xp.asarray(ctx.xp.sqrt((d * d).sum(axis=axes, keepdims=keepdim)))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        safe = ew.where(ew.eq(out, 0), float("inf"), out)
        return ew.mul(_expand_back(ctx, ew.div(g, safe)), x), None, None


class CountNonzero(Op):
    """norm with p=0: how many elements over dims are nonzero (nan too), in x's dtype. Backward: no
    gradient (None, so x.grad stays None, as PyTorch's: the count is flat wherever it is defined)."""

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        d = x._data
        return ctx.xp.asarray((d != 0).sum(axis=axes, keepdims=keepdim), dtype=d.dtype)

    @staticmethod
    def backward(ctx, g):
        return None, None, None


@tensor_args("x")
def norm(x, p="fro", dim=None, keepdim: bool = False):
    """The p-norm over dim (all elements by default): p = 2/'fro', 1, inf, -inf, 0 (the count of nonzeros)
    or any number."""
    _float_only(x, "norm")
    axes = normalize_dims(dim, x._data.ndim, "norm")
    if p in ("fro", 2, 2.0):
        return Norm2.apply(x, axes, keepdim)
    if p == float("inf"):
        return amax(ew.abs(x), axes, keepdim)
    if p == float("-inf"):
        return amin(ew.abs(x), axes, keepdim)
    if p == 1:
        return sum(ew.abs(x), axes, keepdim)
    if p == 0:
        return CountNonzero.apply(x, axes, keepdim)
    if isinstance(p, (int, float)):
        return _p_norm(x, p, axes, keepdim)
    raise RuntimeError(f"norm: unsupported p={p!r}; use 'fro', a number, inf or -inf")


def _p_norm(x, p: float, axes, keepdim: bool):
    """(sum |x|**p) ** (1/p), with PyTorch's gradient where the formula's is 0 * inf = nan: 0 at a zero
    element and at a zero norm. For p < 0, a zero element makes the sum inf and the norm 0."""
    a = ew.abs(x)
    if p > 0:
        return pw.pow_flat_at_zero(sum(pw.pow_flat_at_zero(a, p), axes, keepdim), 1.0 / p)
    zero = ew.eq(a, 0.0)
    powers = ew.where(zero, math.inf, ew.pow(ew.where(zero, 1.0, a), p))
    return ew.pow(sum(powers, axes, keepdim), 1.0 / p)


class _Logical(Op):
    differentiable = False
    reduce = "all"

    @classmethod
    def forward(cls, ctx, x, axes, keepdim):
        d = x._data
        out = ctx.xp.asarray(getattr(d.astype(bool, copy=False), cls.reduce)(axis=axes, keepdims=keepdim))
        return out.astype(d.dtype) if d.dtype == "uint8" else out  # PyTorch keeps uint8 for uint8 input


class All(_Logical):
    """True where every element over dims is nonzero (uint8 input gives uint8, as PyTorch; no gradient)."""

    reduce = "all"


class Any(_Logical):
    """True where some element over dims is nonzero (uint8 input gives uint8, as PyTorch; no gradient)."""

    reduce = "any"


@tensor_args("x")
def all(x, dim=None, keepdim: bool = False):
    """Whether all elements over dim (all by default) are nonzero, as torch.all."""
    return All.apply(x, normalize_dims(dim, x._data.ndim, "all"), keepdim)


@tensor_args("x")
def any(x, dim=None, keepdim: bool = False):
    """Whether any element over dim (all by default) is nonzero, as torch.any."""
    return Any.apply(x, normalize_dims(dim, x._data.ndim, "any"), keepdim)


# ---------------------------------------------------------------- what the reductions share

def _kept_shape(shape: tuple, axes) -> tuple:
    """The shape of a keepdim reduction over axes (None: all)."""
    return tuple(1 if axes is None or i in axes else s for i, s in enumerate(shape))


def _axes_size(shape: tuple, axes) -> int:
    return math.prod(shape) if axes is None else math.prod(shape[a] for a in axes)


def _expand_back(ctx, g):
    """Broadcast a reduction's output gradient back to its input shape
    (shapes are known valid here, so the ops' Functions are applied directly)."""
    in_shape = ctx.input_shapes[0]
    if not ctx.keepdim and g._data.ndim:
        g = mv.Reshape.apply(g, _kept_shape(in_shape, ctx.axes))
    return g if g._data.shape == in_shape else mv.Expand.apply(g, in_shape)


def _float_only(x, op: str) -> None:
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"{op}(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {x.dtype}")
