"""Statistics: nansum, nanmean, aminmax, var_mean/std_mean, quantile/nanquantile, cov, corrcoef,
diff, gradient, trapezoid (and its old name trapz)/cumulative_trapezoid, cdist and histogram.

Almost all of them are compositions of differentiable ops (where, sum, sort + gather, lerp, mm,
narrow, cumsum), so their gradients come from those ops' backwards: only cdist's p=inf distance
has a backward of its own, and histogram (like PyTorch's) has none.
"""
from __future__ import annotations

import math
import numbers
from typing import NamedTuple

from .._warn import warn
from ..autograd.tensor_base import TensorBase, make
from . import elementwise as ew
from . import movement as mv
from . import pointwise as pw
from . import reduce as rd
from .diagonal import diagonal
from .indexing import Gather
from .linalg import matmul
from .op import Op, constant, tensor_args
from .promotion import as_float, cast_to
from .scan import cumsum
from .shapes import normalize_dim, whole
from .sorting import sort


class MinMax(NamedTuple):
    """What aminmax returns: PyTorch's (min, max) named tuple."""

    min: TensorBase
    max: TensorBase


class Histogram(NamedTuple):
    """What histogram returns: PyTorch's (hist, bin_edges) named tuple."""

    hist: TensorBase
    bin_edges: TensorBase


@tensor_args("x", op="nansum")
def nansum(x, dim=None, keepdim: bool = False, *, dtype=None):
    """Sum over dim treating NaN as 0, as torch.nansum (dim=() means all dims, as PyTorch). The
    gradient at a NaN is 0 (the `where` that drops it passes nothing back)."""
    return rd.sum(_nan_to_zero(cast_to(x, dtype)), _all_if_empty(dim), keepdim)


@tensor_args("x", op="nanmean")
def nanmean(x, dim=None, keepdim: bool = False, *, dtype=None):
    """Mean of the elements that are not NaN over dim, as torch.nanmean (NaN where all are NaN)."""
    x = cast_to(x, dtype)
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got {x.dtype} "
                           f"(convert with .float())")
    dim = _all_if_empty(dim)
    count = rd.sum(ew.logical_not(pw.isnan(x)), dim, keepdim)
    return ew.div(nansum(x, dim, keepdim), count)  # 0/0 where all are NaN: NaN


@tensor_args("x", op="aminmax")
def aminmax(x, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
    """(min, max) over all elements or along one dim, as torch.aminmax; each is amin/amax, so tied
    extremes share the gradient evenly."""
    shape = x._data.shape
    if dim is None:
        if not x._data.size:
            raise RuntimeError(f"aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                               f"no identity (input of shape {list(shape)})")
        axes = None
    else:
        d = normalize_dim(whole(dim, "dim", "aminmax"), x._data.ndim, "aminmax")
        if shape and not shape[d]:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size (input of shape "
                             f"{list(shape)})")
        axes = (d,)
    return MinMax(rd.amin(x, axes, keepdim), rd.amax(x, axes, keepdim))


@tensor_args("x", op="var_mean")
def var_mean(x, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """(var, mean) over dim, as torch.var_mean, with var's keywords (correction or unbiased);
    var_mean(x, True) reads True as `unbiased`, as PyTorch's overload does."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    v = rd.var(x, dim, correction=correction, keepdim=keepdim, unbiased=unbiased, _op="var_mean")
    return v, rd.mean(x, dim, keepdim)


@tensor_args("x", op="std_mean")
def std_mean(x, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """(std, mean) over dim, as torch.std_mean, with std's keywords (correction or unbiased)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return rd.std(x, dim, correction=correction, keepdim=keepdim, unbiased=unbiased), rd.mean(x, dim, keepdim)


@tensor_args("x", op="quantile")
def quantile(x, q, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear"):
    """The q-th quantiles of x along dim (of all elements when dim is None), as torch.quantile: q is
    a number or a 1-D tensor (whose quantiles make a new first dim) in [0, 1]; a row with a NaN gives
    NaN. Differentiable: sort, then gather the two neighbouring order statistics and lerp them."""
    return _quantile(x, q, dim, keepdim, interpolation, "quantile")


@tensor_args("x", op="nanquantile")
def nanquantile(x, q, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear"):
    """quantile of the values that are not NaN (NaN only where a row is all NaN), as torch.nanquantile."""
    return _quantile(x, q, dim, keepdim, interpolation, "nanquantile")


@tensor_args("x", "fweights", "aweights", op="cov")
def cov(x, *, correction: int = 1, fweights=None, aweights=None):
    """The covariance matrix of the variables in x's rows (observations in columns; a 1-D x is one
    variable), as torch.cov: integer frequency weights `fweights`, float `aweights`; 0-d for one
    variable. Integer input gives the default float dtype."""
    if x._data.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{x._data.ndim} dimensions (shape {list(x._data.shape)})")
    if x._data.dtype.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    correction = whole(correction, "correction", "cov")
    x = mv.reshape(x, (1, -1)) if x._data.ndim < 2 else x
    n = x._data.shape[1]
    w = _cov_weights(fweights, aweights, n)
    w_sum = n if w is None else rd.sum(w)
    avg = ew.div(rd.sum(x if w is None else ew.mul(x, w), 1, keepdim=True), w_sum)
    norm = _cov_norm(w, w_sum, aweights, n, correction, fweights is None)
    if float(norm._data if isinstance(norm, TensorBase) else norm) <= 0:
        warn(f"cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
             f"observations ({n} observations, correction={correction})")
        norm = ew.mul(norm, 0) if isinstance(norm, TensorBase) else 0
    if n == 1 and (fweights is None) != (aweights is None):  # one weighted observation: it is its mean (as PyTorch)
        centered = ew.mul(as_float(x), 0.0)
    else:
        centered = ew.sub(x, avg)
    weighted = centered if w is None else ew.mul(centered, w)
    return mv.squeeze(ew.div(matmul(centered, mv.t(weighted)), norm))  # a divisor of 0: inf or nan, as PyTorch


@tensor_args("x", op="corrcoef")
def corrcoef(x):
    """Pearson's correlation coefficients of the variables in x's rows, as torch.corrcoef: cov scaled
    by the standard deviations, clipped to [-1, 1]; NaN for a variable that does not vary."""
    c = cov(x)
    if not c._data.ndim:
        return ew.div(c, c)
    spread = ew.sqrt(diagonal(c))
    c = ew.div(ew.div(c, mv.unsqueeze(spread, 1)), mv.unsqueeze(spread, 0))  # a constant variable: 0/0, NaN
    return ew.clamp(c, -1.0, 1.0)


@tensor_args("x", "prepend", "append", op="diff")
def diff(x, n: int = 1, dim: int = -1, prepend=None, append=None):
    """The n-th forward difference along dim, out[i] = x[i + 1] - x[i] applied n times (bool: x[i + 1]
    != x[i]), after joining `prepend` and `append` to x along dim, as torch.diff (n=0: a copy of x)."""
    if not x._data.ndim:
        raise RuntimeError("diff expects input to be at least one-dimensional (got a 0-d tensor)")
    n = whole(n, "n", "diff")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if n == 0:  # PyTorch returns a copy of x here, without prepend and append
        return ew.Clone.apply(x)
    d = normalize_dim(whole(dim, "dim", "diff"), x._data.ndim, "diff")
    parts = [_diff_part(t, x, d) for t in (prepend, x, append) if t is not None]
    out = mv.cat(parts, d) if len(parts) > 1 else x
    step = ew.ne if out._data.dtype.kind == "b" else ew.sub
    for _ in range(n):
        length = out._data.shape[d]
        if not length:
            break
        out = step(mv.narrow(out, d, 1, length - 1), mv.narrow(out, d, 0, length - 1))
    return out


@tensor_args("y", "x", op="trapezoid")
def trapezoid(y, x=None, *, dx=None, dim: int = -1):
    """The integral of y along dim by the trapezoidal rule, as torch.trapezoid: sample points `x`
    (1-D, one per sample, or broadcasting with y), or an even spacing `dx` (default 1). Integer y
    gives the default float dtype."""
    return _trapezoid(y, x, dx, dim, "trapezoid")


@tensor_args("y", "x", op="trapz")
def trapz(y, x=None, *, dx=None, dim: int = -1):
    """trapezoid under its older name, as torch.trapz: trapz(y, x) with sample points (a tensor, second),
    or trapz(y, dx=h) with an even spacing (keyword only, default 1)."""
    return _trapezoid(y, x, dx, dim, "trapz")


def _trapezoid(y, x, dx, dim, op: str):
    d, spacing = _trapezoid_args(y, x, dx, dim, op)
    y, n = as_float(y), y._data.shape[d]
    if n == 0:
        return rd.sum(y, d)
    pairs = ew.add(mv.narrow(y, d, 0, n - 1), mv.narrow(y, d, 1, n - 1))
    return ew.div(rd.sum(ew.mul(pairs, spacing), d), 2.0)


@tensor_args("y", "x", op="cumulative_trapezoid")
def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1):
    """The running trapezoidal integral of y along dim (one element fewer than y there), as
    torch.cumulative_trapezoid: sample points `x` or an even spacing `dx` (default 1)."""
    d, spacing = _trapezoid_args(y, x, dx, dim, "cumulative_trapezoid")
    y, n = as_float(y), y._data.shape[d]
    if n == 0:
        return y
    pairs = ew.add(mv.narrow(y, d, 0, n - 1), mv.narrow(y, d, 1, n - 1))
    return cumsum(ew.div(ew.mul(pairs, spacing), 2.0), d)


@tensor_args("input", op="gradient")
def gradient(input, *, spacing=None, dim=None, edge_order: int = 1) -> tuple:  # noqa: A002 (PyTorch's names)
    """The derivative of the samples in input along each dim (all, or those of `dim`), one tensor per dim, as
    torch.gradient: inside, from each sample's two neighbours; at the ends, from the end sample and its one
    (edge_order=1) or two (edge_order=2) neighbours. `spacing`: the distance between neighbours, one number
    for every dim (default 1) or one per dim, or per dim a 1-D tensor of the samples' coordinates. Each
    estimate is the slope of the parabola (or line) through those samples, composed of ops, so gradients
    flow to input (and to the coordinates). Deviations: coordinates whose length is not the dim's size are
    refused (PyTorch reads them anyway); with even spacing an infinite sample makes its neighbours' estimates
    NaN (its weight there is 0, and 0 * inf is NaN), where PyTorch's even-spacing formula leaves it out."""
    f = as_float(input)
    dims, steps = _gradient_args(f, spacing, dim, edge_order)
    return tuple(_derivative_along(f, d, h, edge_order) for d, h in zip(dims, steps))


def _gradient_args(x, spacing, dim, edge_order: int) -> tuple:
    """(dims, steps): gradient's dims, and per dim the distances between neighbours (n - 1 of them, a
    tensor shaped to broadcast along that dim)."""
    if edge_order not in (1, 2):
        raise RuntimeError(f"gradient only supports edge_order=1 and edge_order=2 (got {edge_order})")
    nd, shape = x._data.ndim, x._data.shape
    dims = list(range(nd)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_dim(whole(d, "dim", "gradient"), nd, "gradient") for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims} has a dim that appears multiple times in the list of dims (gradient)")
    if not isinstance(spacing, (list, tuple)):
        spacing = [1.0 if spacing is None else spacing] * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(f"gradient expected spacing to be unspecified, a scalar or a list with one entry per dim "
                           f"({len(dims)}: {dims} of the input of shape {list(shape)}), but got a list of length "
                           f"{len(spacing)}")
    for d in dims:
        if shape[d] < edge_order + 1:
            raise RuntimeError(f"gradient expected each dimension size to be at least edge_order+1 = {edge_order + 1}"
                               f" (dim {d} of the input of shape {list(shape)} has {shape[d]})")
    return dims, [_steps(x, h, d) for h, d in zip(spacing, dims)]


def _steps(x, h, d: int):
    """The n - 1 distances between neighbours along dim d of float tensor x (n = x.size(d)), from a number or
    from the samples' coordinates, shaped to broadcast along d."""
    n, along = x._data.shape[d], [-1 if k == d else 1 for k in range(x._data.ndim)]
    if not isinstance(h, TensorBase):
        xp = x._device.backend.xp
        return make(xp.full(along[:d] + [n - 1] + along[d + 1:], float(h), dtype=x._data.dtype), x._device)
    if h._data.ndim != 1 or h._data.shape[0] != n:
        raise RuntimeError(f"gradient expected each element of spacing to be a 1-D tensor of the coordinates along "
                           f"its dim, one per sample ({n} along dim {d}), but got one of shape {list(h._data.shape)}")
    return mv.reshape(diff(as_float(h)), along)


def _derivative_along(f, d: int, steps, edge_order: int):
    """gradient's estimate along dim d of f: centred parabolas inside, and at each end a line through the end
    sample and its neighbour (edge_order=1) or the parabola through the three end samples (edge_order=2)."""
    n = f._data.shape[d]

    def part(t, start: int, length: int):
        return mv.narrow(t, d, start, length)

    inside = _slopes(f, d, 0, n - 2, steps, "middle")
    if edge_order == 1:
        first = ew.div(ew.sub(part(f, 1, 1), part(f, 0, 1)), part(steps, 0, 1))
        last = ew.div(ew.sub(part(f, n - 1, 1), part(f, n - 2, 1)), part(steps, n - 2, 1))
    else:
        first, last = _slopes(f, d, 0, 1, steps, "first"), _slopes(f, d, n - 3, 1, steps, "last")
    return mv.cat([first, inside, last], d)


def _slopes(f, d: int, start: int, length: int, steps, at: str):
    """For `length` triples of neighbouring samples along dim d (the first at `start`), the slope at the
    triple's first, middle or last point (`at`) of the parabola through its three samples. With the points
    at 0, h1 and h1 + h2, the slope at p is w0 f0 + w1 f1 + w2 f2, the derivatives of the Lagrange basis:
    w0 = (2p - h1 - (h1 + h2)) / (h1 (h1 + h2)), w1 = (2p - (h1 + h2)) / (-h1 h2),
    w2 = (2p - h1) / ((h1 + h2) h2)."""
    h1, h2 = mv.narrow(steps, d, start, length), mv.narrow(steps, d, start + 1, length)
    span = ew.add(h1, h2)
    two_p = 0.0 if at == "first" else ew.mul(h1 if at == "middle" else span, 2.0)  # twice the point's position
    weights = (ew.div(ew.sub(ew.sub(two_p, h1), span), ew.mul(h1, span)),
               ew.div(ew.sub(two_p, span), ew.neg(ew.mul(h1, h2))),
               ew.div(ew.sub(two_p, h1), ew.mul(span, h2)))
    out = None
    for k, w in enumerate(weights):
        term = ew.mul(mv.narrow(f, d, start + k, length), w)
        out = term if out is None else ew.add(out, term)
    return out


_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


@tensor_args("x1", "x2", op="cdist")
def cdist(x1, x2, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distances between the rows of x1 (..., P, M) and of x2 (..., R, M): (..., P, R), the
    batch dims broadcast, as torch.cdist. At zero distance the gradient is 0, as PyTorch's. Deviation:
    `compute_mode` is checked but the distances are always taken from the differences directly
    (PyTorch may use a matrix product for p=2), so values can differ from PyTorch's by rounding."""
    _check_cdist(x1, x2, p, compute_mode)
    differences = ew.sub(mv.unsqueeze(x1, -2), mv.unsqueeze(x2, -3))  # (..., P, R, M)
    p = float(p)
    if not differences._data.shape[-1]:
        return rd.sum(differences, -1)
    if p == math.inf:
        return MaxNorm.apply(differences)
    return distance(differences, p)


def distance(differences, p: float, keepdim: bool = False):
    """The p-norm of `differences` over the last dim (cdist, pdist, pairwise_distance): gradient 0 at a zero
    distance (rd.norm's), and for p = 0 the count of coordinates that differ, with gradient 0 (sign's),
    as PyTorch's distances have (its norm(p=0) has none)."""
    if p == 0:
        return rd.sum(ew.sign(ew.abs(differences)), -1, keepdim)
    return rd.norm(differences, p, -1, keepdim)


class MaxNorm(Op):
    """max |d| over the last dim (cdist's p=inf distance). Backward: g * sign(d) at every element whose
    |d| equals the max, ties each getting all of it (as PyTorch's cdist; amax would share it)."""

    @staticmethod
    def forward(ctx, d):
        out = ctx.xp.abs(d._data).max(axis=-1)
        ctx.save_for_backward(d, out)
        return out

    @staticmethod
    def backward(ctx, g):
        d, out = ctx.saved_tensors
        at_max = constant(ctx, ctx.xp.abs(d._data) == out._data[..., None])
        return ew.mul(ew.where(at_max, ew.sign(d), 0.0), mv.unsqueeze(g, -1))


@tensor_args("x", "weight", op="histogram")
def histogram(x, bins=100, *, range=None, weight=None, density: bool = False) -> Histogram:  # noqa: A002
    """Counts (or summed `weight`s) of x's elements in bins, as torch.histogram: `bins` equal bins over
    `range` (default: x's min to max), or a 1-D tensor of bin edges; each bin holds [left, right), the
    last one also its right edge. density=True divides by the total and the bin widths. No gradient."""
    _check_histogram(x, bins, range, weight)
    xp = x._device.backend.xp
    if isinstance(bins, TensorBase):
        edges = bins._data
    else:
        lo, hi = _histogram_range(x, range)
        edges = xp.linspace(lo, hi, whole(bins, "bins", "histogram") + 1).astype(x._data.dtype)
    return Histogram(*HistogramCounts.apply(x, make(edges, x._device), weight, bool(density)))


class HistogramCounts(Op):
    """(counts, edges): how many of x's elements (or how much of their weights) fall in each bin
    between consecutive `edges`, the last bin closed; no gradient (as PyTorch)."""

    differentiable = False

    @staticmethod
    def forward(ctx, x, edges, weight, density):
        xp, e, v = ctx.xp, edges._data, x._data.reshape(-1)
        bins = e.size - 1
        inside = (v >= e[0]) & (v <= e[-1])
        which = xp.clip(xp.searchsorted(e, v[inside], side="right") - 1, 0, bins - 1)
        w = None if weight is None else weight._data.reshape(-1)[inside]
        hist = xp.bincount(which, weights=w, minlength=bins).astype(v.dtype)
        if density:
            hist = hist / (hist.sum() * xp.diff(e))
        return hist, e.copy()


# ---------------------------------------------------------------- what these share

def _nan_to_zero(x):
    """x with NaNs replaced by 0 (through `where`, so the gradient there is 0); other dtypes as they are."""
    return ew.where(pw.isnan(x), 0.0, x) if x._data.dtype.kind == "f" else x


def _all_if_empty(dim):
    """dim=() or [] means every dim for the nan-reductions, as PyTorch (sum's own dim=() differs)."""
    return None if isinstance(dim, (tuple, list)) and not dim else dim


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(x, q, dim, keepdim: bool, interpolation: str, op: str):
    """quantile and nanquantile: sort along dim (NaN last), then pick the order statistics at the ranks."""
    qs = _quantile_args(x, q, interpolation, op)
    shape = x._data.shape
    if dim is None:
        rows, d = mv.reshape(x, (-1,)), 0
        rest = (1,) * len(shape) if keepdim else ()
    else:
        d = normalize_dim(whole(dim, "dim", op), len(shape), op)
        rows = x if shape else mv.reshape(x, (1,))
        rest = tuple(1 if i == d else s for i, s in enumerate(shape)) if keepdim else shape[:d] + shape[d + 1:]
    ordered = sort(mv.movedim(rows, d, -1), -1).values  # (..., n)
    out = _interpolate(ordered, _ranks(ordered, mv.reshape(qs, (-1,)), op == "nanquantile"), interpolation)
    out = mv.movedim(out, -1, 0)  # the quantiles first: (len(q), ...)
    return mv.reshape(out, rest if qs._data.ndim == 0 else (qs._data.size,) + rest)


def _quantile_args(x, q, interpolation: str, op: str):
    """q as a tensor of x's dtype (0-d or 1-D), after PyTorch's checks of x, q and interpolation."""
    dt = x._data.dtype
    if dt.name not in ("float32", "float64"):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype (got {x.dtype})")
    if not x._data.size:
        raise RuntimeError(f"{op}() input tensor must be non-empty (got shape {list(x._data.shape)})")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if isinstance(q, TensorBase):
        if q._data.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor (got shape {list(q._data.shape)})")
        if q._data.dtype != dt:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor (q {q.dtype}, input "
                               f"{x.dtype})")
        if q._data.size and not bool(((q._data >= 0) & (q._data <= 1)).all()):
            raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
        return q
    if isinstance(q, numbers.Real):
        if not 0 <= float(q) <= 1:
            raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {float(q)}")
        return make(x._device.backend.xp.asarray(float(q), dtype=dt), x._device)
    raise TypeError(f"{op}(): argument 'q' must be a float or a Tensor, not {type(q).__name__}")


def _ranks(ordered, q, ignore_nan: bool):
    """Each quantile's rank (..., len(q)) in the sorted rows (..., n): q * (n - 1), computed in their
    dtype as PyTorch does and differentiable in q; for nanquantile, n counts only the numbers. A row
    with a NaN (quantile), or of NaNs only (nanquantile), gets the last position, a NaN."""
    xp, s = ordered._device.backend.xp, ordered._data
    last = s.shape[-1] - 1
    nan = xp.isnan(s)
    if ignore_nan:
        ranks = ew.mul(q, _constant_like(ordered, ((~nan).sum(axis=-1, keepdims=True) - 1).astype(s.dtype)))
        fill = ranks._data < 0
    else:
        ranks = ew.mul(q, _constant_like(ordered, xp.asarray(last, dtype=s.dtype)))
        fill = nan[..., -1:]
    return ew.where(_constant_like(ordered, fill), float(last), ranks)


def _interpolate(ordered, ranks, interpolation: str):
    """The values at `ranks` in the sorted rows: the order statistic at the rounded rank (lower, higher,
    nearest; round half to even, as PyTorch), or a lerp between the two around it (linear, midpoint).
    The lerp's weight is rank - floor(rank), so the gradient reaches q through it."""
    xp, r = ordered._device.backend.xp, ranks._data
    dim = ordered._data.ndim - 1
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": xp.floor, "higher": xp.ceil, "nearest": xp.round}[interpolation]
        return Gather.apply(ordered, dim, _constant_like(ordered, pick(r).astype("int64")))
    below = xp.floor(r)
    low = Gather.apply(ordered, dim, _constant_like(ordered, below.astype("int64")))
    high = Gather.apply(ordered, dim, _constant_like(ordered, xp.ceil(r).astype("int64")))
    weight = 0.5 if interpolation == "midpoint" else ew.sub(ranks, _constant_like(ordered, below))
    return pw.lerp(low, high, weight)


def _constant_like(t, arr):
    """A constant (no-grad) tensor holding backend array `arr`, on t's device."""
    return make(arr, t._device)


def _cov_weights(fweights, aweights, n: int):
    """The observations' weights for cov (fweights * aweights, either alone, or None), after PyTorch's
    checks of the two. They keep their dtypes, as in PyTorch, whose float32 aweights give a float32
    normalisation even for float64 data."""
    w = None
    for name, t, kind, dtype_word in (("fweights", fweights, "biu", "integral"),
                                      ("aweights", aweights, "f", "floating point")):
        if t is None:
            continue
        d = t._data
        if d.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                               f"{d.ndim} dimensions")
        if d.dtype.kind not in kind:
            raise RuntimeError(f"cov(): expected {name} to have {dtype_word} dtype but got {name} with {t.dtype} "
                               f"dtype")
        if d.size != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                               f"input but got {d.size} != {n}")
        if d.size and bool((d < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = t if w is None else ew.mul(w, t)
    if w is not None and not bool((w._data.sum() != 0)):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    return w


def _cov_norm(w, w_sum, aweights, n: int, correction: int, no_fweights: bool):
    """cov's divisor: n - correction without weights; with them, the weights' sum less the correction
    (scaled by sum(w * aweights) / sum(w) when there are aweights)."""
    if w is None:
        return n - correction
    if correction == 0:
        return w_sum
    if aweights is None:
        return ew.sub(w_sum, correction)
    if no_fweights and n == 1 and correction == 1:
        return 0  # PyTorch's exact 0 here, where the formula would leave a rounding error
    return ew.sub(w_sum, ew.div(ew.mul(rd.sum(ew.mul(w, aweights)), correction), w_sum))


def _diff_part(t, x, d: int):
    """A tensor to prepend or append in diff, checked against x (same dims, same sizes but along d)."""
    if t._data.ndim != x._data.ndim:
        raise RuntimeError(f"diff expects prepend or append to be the same dimension as input (input has "
                           f"{x._data.ndim} dims, got a tensor of shape {list(t._data.shape)})")
    for k, (a, b) in enumerate(zip(x._data.shape, t._data.shape)):
        if k != d and a != b:
            raise RuntimeError(f"diff expects the shape of tensor to prepend or append to match that of input "
                               f"except along the differencing dimension; input.size({k}) = {a}, but got "
                               f"tensor.size({k}) = {b}")
    return t


def _trapezoid_args(y, x, dx, dim, op: str):
    """(dim, spacing): the integration dim of y and the spacing between its samples (a number, or
    the differences of x shaped to broadcast against y's pairs of neighbours)."""
    if not y._data.ndim:
        raise IndexError(f"{op}: Dimension specified as {dim} but tensor has no dimensions")
    d = normalize_dim(whole(dim, "dim", op), y._data.ndim, op)
    if x is None:
        return d, 1 if dx is None else dx
    if dx is not None:
        raise TypeError(f"{op}(): pass either the sample points x or the spacing dx, not both")
    n = y._data.shape[d]
    if x._data.ndim == 1:
        if x._data.shape[0] != n:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point (x has "
                               f"{x._data.shape[0]}, y has {n} along dim {d})")
        return d, mv.reshape(diff(x), [-1 if i == d else 1 for i in range(y._data.ndim)])
    return d, diff(x, dim=dim)


def _check_cdist(x1, x2, p, compute_mode: str) -> None:
    for name, t in (("X1", x1), ("X2", x2)):
        if t._data.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t._data.ndim}D")
        if t._data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {t.dtype}")
    if x1._data.shape[-1] != x2._data.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._data.shape[-1]} "
                           f"X2: {x2._data.shape[-1]}")
    if x1._data.dtype != x2._data.dtype:
        raise RuntimeError(f"cdist: X1 and X2 must have the same dtype, but got {x1.dtype} and {x2.dtype}")
    if not isinstance(p, (int, float)) or isinstance(p, bool) or not p >= 0:
        raise RuntimeError(f"cdist only supports non-negative p values (got p={p!r})")
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode (one of {', '.join(_COMPUTE_MODES)})")


def _check_histogram(x, bins, range_, weight) -> None:
    if x._data.dtype.name not in ("float32", "float64"):
        raise NotImplementedError(f"histogram: not implemented for {x.dtype} (convert with .float())")
    if isinstance(bins, TensorBase):
        if bins._data.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{bins._data.ndim} dimensions in the bins tensor for dimension 0")
        if bins._data.dtype != x._data.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                               f"but got input with dtype {x.dtype} and bins with dtype {bins.dtype}")
        if range_ is not None:
            raise TypeError("histogram(): range is taken only with a number of bins, not with a tensor of edges")
    count = bins._data.size - 1 if isinstance(bins, TensorBase) else whole(bins, "bins", "histogram")
    if count <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension 0")
    if weight is not None and weight._data.shape != x._data.shape:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor, but got input with shape {list(x._data.shape)} and weight with shape "
                           f"{list(weight._data.shape)}")
    if weight is not None and weight._data.dtype != x._data.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                           f"should have the same dtype, but got input({x.dtype}), and weight({weight.dtype})")


def _histogram_range(x, range_) -> tuple:
    """(lo, hi) of equal bins: `range`, or x's own min and max (0, 1 when x is empty), widened by 0.5
    on each side when they are equal, as PyTorch."""
    if range_ is not None:
        lo, hi = (float(v) for v in range_)
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} "
                               f"for dimension 0")
    elif x._data.size:
        lo, hi = float(x._data.min()), float(x._data.max())
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite")
    return (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)

