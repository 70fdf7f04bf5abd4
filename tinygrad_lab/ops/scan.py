"""Scans along one dim: cumsum, cumprod, logcumsumexp, cummax and cummin.

Output element k combines input elements 0..k, so an input element i affects every output
k >= i: each backward is a scan running the other way (a reversed cumsum of some product of
the gradient), written with ops so that second derivatives work.
"""
from __future__ import annotations

from ..autograd.grad_mode import state as _grad_state
from ..autograd.tensor_base import make
from . import elementwise as ew
from . import movement as mv
from . import reduce as rd
from .indexing import Gather
from .op import Op
from .promotion import cast, cast_to
from .reduce import ValuesIndices
from .shapes import normalize_dim


class Cumsum(Op):
    """Running sums along dim. Backward: the running sums of g taken from the end
    (out_k = sum of x_i for i <= k, so x_i gets the sum of g_k for k >= i)."""

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return ctx.xp.cumsum(x._data, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return reverse_cumsum(g, ctx.dim), None


def reverse_cumsum(g, dim: int):
    """Running sums along dim taken from the end: out_i = sum of g_k for k >= i."""
    return mv.flip(Cumsum.apply(mv.flip(g, (dim,)), dim), (dim,))


def cumsum(x, dim: int, dtype=None):
    """Running sums along dim, as torch.cumsum (bool and integers sum as int64; `dtype` casts x first)."""
    x = _with_dtype(x, dtype, integers_as_int64=True)
    d = normalize_dim(dim, x._data.ndim, "cumsum")
    return _on_0d(Cumsum, x, d)


class Cumprod(Op):
    """Running products along dim. Backward: x_i gets the sum over k >= i of g_k times the product
    of x_0..x_k without x_i. Without zeros that product is out_k / x_i, so the gradient is a
    reversed cumsum of g * out, divided by x. With zeros, or when the backward will itself be
    differentiated (create_graph: out / x's derivative has out / x**2, which overflows for tiny x),
    the products are multiplied out explicitly: no division, n**2 products along dim."""

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        out = ctx.xp.cumprod(x._data, axis=dim)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        if _grad_state.enabled or bool((x._data == 0).any()):
            return _cumprod_grad_explicit(x, g, ctx.dim), None
        return ew.div(reverse_cumsum(ew.mul(g, out), ctx.dim), x), None


def _cumprod_grad_explicit(x, g, dim: int):
    """For each i: the sum over k >= i of g_k * prod(x_0..x_k without x_i), as ops (no division).
    Row i of an (n, n) stack is x with x_i replaced by 1; its cumprod holds those products."""
    xm = mv.movedim(x, dim, -1)  # (..., n)
    gm = mv.movedim(g, dim, -1)
    n = xm._data.shape[-1]
    xp = x._device.backend.xp
    eye = make(xp.eye(n, dtype=bool), x._device)
    rows = ew.where(eye, 1.0, mv.unsqueeze(xm, -2))  # (..., n_i, n_k)
    products = Cumprod.apply(rows, rows._data.ndim - 1)
    later = make(xp.triu(xp.ones((n, n), dtype=bool)), x._device)  # k >= i
    terms = ew.where(later, ew.mul(products, mv.unsqueeze(gm, -2)), 0.0)
    return mv.movedim(rd.sum(terms, -1), -1, dim)


def cumprod(x, dim: int, dtype=None):
    """Running products along dim, as torch.cumprod (bool and integers multiply as int64)."""
    x = _with_dtype(x, dtype, integers_as_int64=True)
    d = normalize_dim(dim, x._data.ndim, "cumprod")
    return _on_0d(Cumprod, x, d)


class LogCumSumExp(Op):
    """log(cumsum(exp(x))) along dim, computed without overflow (a running logaddexp).
    Backward: x_i gets exp(x_i) * sum over k >= i of g_k * exp(-out_k); the sum is taken in log space
    (separately for the positive and negative parts of g) so that it never overflows."""

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        out = ctx.xp.logaddexp.accumulate(x._data, axis=dim)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        dim = ctx.dim
        parts = []
        for part in (ew.relu(g), ew.relu(ew.neg(g))):  # g = positive part - negative part
            log_terms = ew.sub(ew.log(part), out)
            reverse = mv.flip(LogCumSumExp.apply(mv.flip(log_terms, (dim,)), dim), (dim,))
            parts.append(ew.exp(ew.add(x, reverse)))
        return ew.sub(parts[0], parts[1]), None


def logcumsumexp(x, dim: int):
    """log(cumsum(exp(x))) along dim, as torch.logcumsumexp (float tensors only)."""
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"logcumsumexp(): expected a floating point input, got {x.dtype}")
    return _on_0d(LogCumSumExp, x, normalize_dim(dim, x._data.ndim, "logcumsumexp"))


class _RunningIndex(Op):
    """The index of the running max (or min) along dim, the last one on ties (as PyTorch); no gradient."""

    differentiable = False

    @staticmethod
    def forward(ctx, x, dim, largest):
        xp = ctx.xp
        d = xp.moveaxis(x._data, dim, -1)
        best = (xp.maximum if largest else xp.minimum).accumulate(d, axis=-1)
        n = d.shape[-1]
        positions = xp.broadcast_to(xp.arange(n), d.shape)
        hits = xp.where((d == best) | xp.isnan(d), positions, -1)  # where the running extreme is (re)reached
        return xp.moveaxis(xp.maximum.accumulate(hits, axis=-1), -1, dim).astype("int64")


def _running_extreme(x, dim: int, largest: bool, op: str) -> ValuesIndices:
    d = normalize_dim(dim, x._data.ndim, op)
    if not x._data.ndim:
        return ValuesIndices(ew.Clone.apply(x), make(x._device.backend.xp.zeros((), dtype="int64"), x._device))
    idx = _RunningIndex.apply(x, d, largest)
    return ValuesIndices(Gather.apply(x, d, idx), idx)


def cummax(x, dim: int) -> ValuesIndices:
    """Running maxima along dim and their indices, as torch.cummax. The gradient goes to the element
    each maximum was taken from (a gather)."""
    return _running_extreme(x, dim, True, "cummax")


def cummin(x, dim: int) -> ValuesIndices:
    """Running minima along dim and their indices, as torch.cummin (see cummax)."""
    return _running_extreme(x, dim, False, "cummin")


# ---------------------------------------------------------------- what the scans share

def _with_dtype(x, dtype, integers_as_int64: bool):
    if dtype is not None:
        return cast_to(x, dtype)
    if integers_as_int64 and x._data.dtype.kind in "biu":
        return cast(x, "int64")
    return x


def _on_0d(fn, x, dim: int):
    """A scan of a 0-d tensor is the tensor itself (as PyTorch), still recorded."""
    if x._data.ndim:
        return fn.apply(x, dim)
    return mv.reshape(fn.apply(mv.reshape(x, (1,)), 0), ())

