"""Activation and loss kernels that are better as one op than as a composition.

`nn.functional` builds most of its functions from the ordinary ops, so their
gradients come for free. The Functions here are the exceptions, each for a reason:

- Linear        x @ w.T + b as one node instead of three (transpose, matmul, add):
                a training step of a small MLP is ~20% faster (about PyTorch's CPU speed).
- Erf           NumPy has no erf: the backend supplies it (exact GELU needs it).
- Softmax,      one node instead of six, and the max subtracted before exp, so
  LogSoftmax    large logits do not overflow (PyTorch's SoftmaxBackward0 and
                LogSoftmaxBackward0 show up in the graph under the same names).
- NllLoss       picks -input[n, target[n]] (with class weights, ignore_index and
                the reduction) in one op; cross_entropy is LogSoftmax then NllLoss.
- Elu           expm1 for accuracy near 0 (exp(x) - 1 loses digits there).
- LogSigmoid    min(x, 0) - log1p(exp(-|x|)), which never overflows.
- BinaryCrossEntropy  PyTorch's clamped logs (>= -100) and its clamped gradient.
- SmoothL1      smooth_l1_loss and huber_loss: one node instead of nine, the slope d/beta or sign(d).

As everywhere in `ops/`, forward computes on backend arrays (`ctx.xp`) and
backward is written with differentiable ops, so gradients of gradients work.
"""
from __future__ import annotations

import math

from .. import dtypes
from . import broadcast
from . import elementwise as ew
from . import linalg as la
from . import movement as mv
from . import reduce as rd
from .indexing import open_grid
from .op import Op, constant, tensor_args
from .promotion import as_float, cast_to, promote
from .shapes import normalize_dim

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_BCE_EPSILON = 9.999999960041972e-13  # PyTorch's `constexpr float EPSILON = 1e-12`: 1e-12 rounded to float32


# ---------------------------------------------------------------- linear

class Linear(Op):
    """x @ w.T + b for x (N, in), w (out, in), b (out,) or None. Backward: d/dx = g @ w,
    d/dw = gᵀ @ x, d/db = g summed over the batch."""

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        out = ctx.device.backend.matmul_t(x._data, w._data)
        if b is not None:
            out += b._data
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        n = ctx.needs_input_grad
        gx = la.Matmul.apply(g, w) if n[0] else None
        gw = la.Matmul.apply(mv.mT(g), x) if n[1] else None
        gb = rd.Sum.apply(g, (0,), False) if n[2] else None
        return gx, gw, gb


def linear(x, w, b=None):
    """x @ w.T + b as one op when x and w are matrices of one dtype and b is None or (out,);
    otherwise composed from matmul, transpose and add (which also give the shape errors)."""
    xd, wd = x._data, w._data
    if (xd.ndim == 2 and wd.ndim == 2 and xd.shape[1] == wd.shape[1] and xd.dtype == wd.dtype
            and xd.dtype.kind == "f" and (b is None or (b._data.shape == (wd.shape[0],) and b._data.dtype == xd.dtype))):
        return Linear.apply(x, w, b)
    out = la.matmul(x, mv.t(w))
    return out if b is None else ew.add(out, b)


# ---------------------------------------------------------------- erf

class Erf(Op):
    """The error function erf(x) = 2/sqrt(pi) * integral_0^x exp(-t**2) dt.
    Backward: g * 2/sqrt(pi) * exp(-x**2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.device.backend.erf(x._data).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return ew.mul(g, ew.mul(ew.exp(ew.neg(ew.mul(x, x))), _TWO_OVER_SQRT_PI))


@tensor_args("x")
def erf(x):
    """erf(x), elementwise, as torch.erf (integer inputs are computed in the default float dtype)."""
    return Erf.apply(as_float(x))


# ---------------------------------------------------------------- softmax family

class Softmax(Op):
    """exp(x) / sum(exp(x)) along dim, with the max subtracted first (no overflow).
    Backward: out * (g - sum(g * out, dim))."""

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        xp, d = ctx.xp, x._data
        try:
            e = xp.exp(d - ctx.device.backend.amax(d, dim, True))
            out = e / ctx.device.backend.sum(e, dim, True)
        except ValueError:  # a dim of size 0 has no max: the softmax over it is as empty as x (as PyTorch)
            out = d.copy()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        gy = ew.mul(g, out)
        return ew.sub(gy, ew.mul(out, rd.Sum.apply(gy, (ctx.dim,), True))), None


class LogSoftmax(Op):
    """x - max - log(sum(exp(x - max))) along dim: log(softmax(x)) without overflow or log(0).
    Backward: g - exp(out) * sum(g, dim)."""

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        xp = ctx.xp
        d = x._data
        try:
            shifted = d - ctx.device.backend.amax(d, dim, True)
            out = shifted - xp.log(ctx.device.backend.sum(xp.exp(shifted), dim, True))
        except ValueError:  # a dim of size 0 has no max: the result is as empty as x (as PyTorch)
            out = d.copy()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        # one dtype, shapes that broadcast: the Functions are applied directly (the public ops' checks cannot fail)
        return ew.Sub.apply(g, ew.Mul.apply(ew.Exp.apply(out), rd.Sum.apply(g, (ctx.dim,), True))), None


def type_name(x) -> str:
    """PyTorch's name of x's dtype, for its messages ("expected scalar type Long but found Float")."""
    return dtypes.scalar_name(x._data.dtype)


def _float_input(x, op: str) -> None:
    if x._data.dtype.kind != "f":
        raise NotImplementedError(f'"{op}" not implemented for \'{type_name(x)}\' '
                                  f"(input of shape {list(x._data.shape)}); convert it with .float() first")


def _along(fn, x, dim: int, op: str):
    """fn applied along `dim` (a 0-d x is treated as one element)."""
    if x._data.dtype.kind != "f":  # the test inline, the call only to raise: -8 bytecodes and a call a softmax
        _float_input(x, op)
    if x._data.ndim == 0:
        normalize_dim(dim, 0, op)
        return mv.reshape(fn.apply(mv.reshape(x, (1,)), 0), ())
    return fn.apply(x, normalize_dim(dim, x._data.ndim, op))


@tensor_args("x")
def softmax(x, dim: int, dtype=None):
    """softmax along dim (one op); `dtype` casts x first, as PyTorch's."""
    return _along(Softmax, x if dtype is None else cast_to(x, dtype), dim, "softmax")


@tensor_args("x")
def log_softmax(x, dim: int, dtype=None):
    """log(softmax(x)) along dim, computed stably (one op); `dtype` casts x first, as PyTorch's."""
    return _along(LogSoftmax, x if dtype is None else cast_to(x, dtype), dim, "log_softmax")


# ---------------------------------------------------------------- negative log likelihood

class NllLoss(Op):
    """-x[n, target[n], ...] times the class weight, zero where target == ignore_index,
    then reduced: 'none', 'sum' or 'mean' (divided by the summed weights of the counted
    targets, as PyTorch). x has the classes in dim 1: (N, C) or (N, C, d1, ...); target is
    (N,) or (N, d1, ...), already checked. Backward: g times a constant array that holds
    -weight (/ total weight for 'mean') at each target position and 0 elsewhere
    (the loss is linear in x). The class weights get no gradient (as PyTorch)."""

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction):
        xp = ctx.xp
        d = x._data
        t, valid = _class_targets(ctx, target._data, ignore_index, d.shape[1])
        if d.ndim == 2:
            picked = d[xp.arange(d.shape[0]), t]
        else:
            picked = xp.take_along_axis(d, xp.expand_dims(t, 1), axis=1).squeeze(1)
        w = None if weight is None else weight._data[t]
        if valid is not None:
            w = valid.astype(d.dtype) if w is None else xp.where(valid, w, 0)
        loss = -picked if w is None else -(picked * w)
        if valid is not None:
            loss = xp.where(valid, loss, 0)  # not -inf * 0 = nan where an ignored row holds -inf
        ctx.reduction, ctx.t, ctx.w = reduction, t, w
        if reduction == "none":
            return loss
        total = xp.add.reduce(loss, None)
        if reduction == "sum":
            return xp.asarray(total)
        ctx.total = w.sum() if w is not None else t.size
        return xp.asarray(total / ctx.total)

    @staticmethod
    def backward(ctx, g):
        xp, t, w = ctx.xp, ctx.t, ctx.w
        mean = ctx.reduction == "mean"
        if w is not None:  # each target's weight, 0 where ignored (all of them: a total of 0, divided by 1)
            vals = -w / xp.where(ctx.total == 0, 1, ctx.total) if mean else -w
        else:  # one value for every target: a scalar, spread by the assignment
            vals = (-1.0 / ctx.total if ctx.total else 0.0) if mean else -1.0
        coef = xp.zeros(ctx.input_shapes[0], dtype=g._data.dtype)
        key = open_grid(xp, t.shape)
        key.insert(1, t)  # at each position (n, d1, ...), the target's class
        coef[tuple(key)] = vals
        if ctx.reduction == "none":
            g = mv.unsqueeze(g, 1)
        return ew.mul(g, constant(ctx, coef)), None, None, None, None


def _class_targets(ctx, t, ignore_index: int, n_classes: int):
    """(targets, valid): the targets with the ignored ones (== ignore_index) set to 0, and the mask of the
    others (None when none is ignored); a target out of range is PyTorch's IndexError (raise_if: on a GPU
    at its next sync). The common case costs the CPU one pass, the largest target (none can be ignored,
    none is out of range); a GPU does not ask (reading the answer would stall it) and masks."""
    backend, xp = ctx.device.backend, ctx.xp
    unsigned = f"u{t.dtype.itemsize}"  # as unsigned, a negative target (and ignore_index -100) is huge
    if not t.size or not (0 <= ignore_index < n_classes
                          or backend.may_be_true(lambda: t.view(unsigned).max() >= n_classes)):
        return t, None
    valid = t != ignore_index
    if backend.may_be_true(lambda: ~valid.all()):
        t = xp.where(valid, t, 0)
    else:
        valid = None
    backend.raise_if((t.view(unsigned) >= n_classes).any(),
                     lambda: IndexError(f"Target {int(t[(t < 0) | (t >= n_classes)].ravel()[0])} is out of bounds."),
                     ctx.device.index or 0)
    return t, valid


# ---------------------------------------------------------------- pointwise activations

class Elu(Op):
    """x where x > 0, else alpha * (exp(x) - 1) (computed with expm1).
    Backward: g where x > 0, else g * alpha * exp(x) (as PyTorch, alpha at x == 0)."""

    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        d = x._data
        ctx.save_for_backward(x)
        xp = ctx.xp
        return xp.where(d > 0, d, alpha * xp.expm1(xp.minimum(d, 0))).astype(d.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        neg_branch = ew.mul(g, ew.mul(ew.exp(ew.clamp(x, max=0.0)), ctx.alpha))  # clamp: exp never overflows
        return ew.Where.apply(constant(ctx, x._data > 0), g, neg_branch), None


@tensor_args("x")
def elu(x, alpha: float = 1.0):
    """ELU: x for x > 0, alpha * (exp(x) - 1) otherwise (one op)."""
    _float_input(x, "elu")
    return Elu.apply(x, float(alpha))


class LogSigmoid(Op):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): no overflow for any x.
    Backward: g * sigmoid(-x)."""

    @staticmethod
    def forward(ctx, x):
        xp = ctx.xp
        d = x._data
        ctx.save_for_backward(x)
        return (xp.minimum(d, 0) - xp.log1p(xp.exp(-xp.abs(d)))).astype(d.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return ew.mul(g, ew.sigmoid(ew.neg(x)))


@tensor_args("x")
def logsigmoid(x):
    """log(sigmoid(x)), computed without overflow (one op)."""
    _float_input(x, "log_sigmoid")
    return LogSigmoid.apply(x)


class BinaryCrossEntropy(Op):
    """Elementwise -(t * log(x) + (1 - t) * log(1 - x)) with each log clamped to >= -100
    (as PyTorch, so x = 0 or 1 gives a finite loss). Backward (as PyTorch):
    d/dx = g * (x - t) / max(x * (1 - x), 1e-12 as a float32), d/dt = g * (log(1 - x) - log(x))."""

    @staticmethod
    def forward(ctx, x, t):
        xp = ctx.xp
        d, td = x._data, t._data
        ctx.save_for_backward(x, t)
        return ((td - 1) * xp.maximum(xp.log1p(-d), -100) - td * xp.maximum(xp.log(d), -100)).astype(
            d.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        n = ctx.needs_input_grad
        gx = gt = None
        if n[0]:
            gx = ew.div(ew.mul(g, ew.sub(x, t)), ew.clamp(ew.mul(ew.sub(1.0, x), x), min=_BCE_EPSILON))
        if n[1]:
            gt = ew.mul(g, ew.sub(ew.log1p(ew.neg(x)), ew.log(x)))
        return gx, gt


class SmoothL1(Op):
    """Elementwise smooth L1 of d = x - t with threshold beta > 0: 0.5 d²/beta where |d| < beta, else
    |d| - 0.5 beta; with huber=True Huber's loss, beta times that: 0.5 d² and beta (|d| - 0.5 beta).
    Backward: d/dx = g * (d / beta where |d| < beta, else sign(d)) (Huber: d, else beta sign(d)), d/dt
    the same negated, each summed back to its input's shape. (A clamp would give the same slope, but
    the slope's own derivative at |d| = beta would be 1 / beta, where PyTorch's is 0.)"""

    @staticmethod
    def forward(ctx, x, t, beta, huber):
        ctx.save_for_backward(x, t)
        ctx.beta, ctx.huber = beta, huber
        z = ctx.xp.abs(x._data - t._data)
        if huber:
            return ctx.xp.where(z < beta, 0.5 * z * z, beta * (z - 0.5 * beta))
        return ctx.xp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        d, beta = ew.sub(x, t), ctx.beta
        inner = ew.lt(ew.abs(d), beta)
        if ctx.huber:
            gd = ew.mul(g, ew.where(inner, d, ew.mul(ew.sign(d), beta)))
        else:
            gd = ew.mul(g, ew.where(inner, ew.div(d, beta), ew.sign(d)))
        n = ctx.needs_input_grad
        gx = broadcast.sum_to(gd, ctx.input_shapes[0]) if n[0] else None
        gt = broadcast.sum_to(ew.neg(gd), ctx.input_shapes[1]) if n[1] else None
        return gx, gt, None, None


def smooth_l1(x, t, beta: float, huber: bool, op: str):
    """The elementwise loss of smooth_l1_loss (huber=False) or huber_loss (huber=True), x and t promoted
    to one floating dtype (integers: PyTorch's NotImplementedError)."""
    x, t = promote(x, t, op=op)
    _float_input(x, op)
    return SmoothL1.apply(x, t, float(beta), huber)
