"""Connectionist temporal classification (CTC) loss as one recorded op, `CtcLoss`.

CTC scores a label sequence (a transcript of S labels, no timing) against T frames of class
log-probabilities lp[t, c] by summing the probability of every *alignment*: every way of
spreading the labels over the frames, with the blank class filling the frames in between. Two
frames of the same label in a row read as one label, so a repeated label ("ll") needs a blank
between its copies. The sum is a dynamic programme over the extended label sequence
l' = (blank, l1, blank, l2, ..., blank, lS, blank) of length 2S + 1 (Graves et al., 2006):

    alpha[t, s]   log-probability of all path prefixes that cover frames 0..t and stand at l'_s at t
    alpha[0, 0] = lp[0, blank]        alpha[0, 1] = lp[0, l1]          (all other s: -inf)
    alpha[t, s] = lp[t, l'_s] + logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2])
    loss        = -logsumexp(alpha[T-1, 2S], alpha[T-1, 2S-1])         (end on the last label or after it)

A path may stay (s), move on by one (s-1), or jump over a blank between two different labels
(s-2, only where l'_s != l'_{s-2}: never from blank to blank, never between equal labels).
Everything runs in log space (products of many probabilities underflow), on backend arrays,
vectorised over the batch and over s: Python loops over time only. Backward runs the mirror
recursion (beta) from the last frame back; `CtcLoss`'s docstring derives the gradient.

    ctc_loss        nn.functional.ctc_loss: reduction 'none' | 'mean' | 'sum'
    ctc_loss_enum   torch.ctc_loss (tinygrad_lab.ctc_loss): reduction as ATen's int (0, 1, 2)
"""
from __future__ import annotations

import operator

from .. import dtypes
from ..autograd.grad_mode import state as _grad_state
from ..autograd.tensor_base import TensorBase
from . import elementwise as ew
from . import movement as mv
from .op import Op, constant, tensor_args
from .transfer import to_device

__all__ = ["CtcLoss", "ctc_loss", "ctc_loss_enum"]


class CtcLoss(Op):
    """The CTC loss of each sample, -log p(target | log_probs), then reduced: 'none', 'sum', or 'mean'
    (each loss divided by its target length, at least 1, then the mean over the batch, as PyTorch).
    zero_infinity turns the loss of an impossible alignment (inf) and its gradient into 0.

    Backward. beta mirrors alpha from the end of each sample's frames (T = its input length):
        beta[T-1, 2S] = lp[T-1, blank],  beta[T-1, 2S-1] = lp[T-1, lS]
        beta[t, s] = lp[t, l'_s] + logsumexp(beta[t+1, s], beta[t+1, s+1], beta[t+1, s+2] if l'_{s+2} != l'_s)
    alpha[t, s] + beta[t, s] is the log-probability of all complete paths that stand at l'_s at frame
    t, with lp[t, l'_s] counted twice (once in each). A path's log-probability is a sum of lp entries,
    so d(-log p)/d lp[t, c] = -(the share of p whose paths emit c at t), the posterior
        gamma[t, c] = exp(logsumexp over {s: l'_s = c} of (alpha[t, s] + beta[t, s]) - lp[t, c] + loss),
    which sums to 1 over c. The gradient rule, PyTorch's: for t < T,
        d loss / d lp[t, c] = exp(lp[t, c]) - gamma[t, c],   and 0 for t >= T,
    times g and the reduction's factor (1 / (max(target length, 1) * N) for 'mean'), 0 for a sample
    whose loss was zeroed by zero_infinity, nan for an impossible one without it (loss inf).
    Why exp(lp) - gamma and not -gamma: log_probs nearly always come from log_softmax(x), and
    exp(lp) - gamma is the gradient with respect to x; log_softmax's backward, g - exp(lp) * sum_c g,
    passes it on unchanged, because its sum over c is 1 - 1 = 0. (-gamma would reach x as the same
    exp(lp) - gamma.) So after a log_softmax both rules give the true gradient; for log_probs made any
    other way this one is not the partial derivative (PyTorch's choice, pytorch/pytorch#52241), and a
    finite-difference check must go through log_softmax, as PyTorch's own does.
    The gradient is g times a constant array. It is not differentiable again (PyTorch's is not
    either): with create_graph the array comes from `CtcGradient`, whose backward says so."""

    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
        xp = ctx.xp
        lp = log_probs._data if log_probs._data.ndim == 3 else log_probs._data[:, None, :]
        lat = _Lattice(ctx, targets._data, input_lengths, target_lengths, blank, lp.shape[2])
        alpha = _alphas(xp, _emissions(xp, lp, lat.ext), lat)
        nll = -_log_likelihood(xp, alpha, lat).astype(lp.dtype, copy=False)
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(log_probs)
            ctx.ctc = _Saved(lat, alpha, nll, reduction, zero_infinity)
        loss = xp.where(nll == xp.inf, 0, nll).astype(lp.dtype, copy=False) if zero_infinity else nll
        if reduction == "none":
            return loss if log_probs._data.ndim == 3 else loss[0]
        if reduction == "mean":
            loss = loss / xp.maximum(lat.tgt_len, 1).astype(lp.dtype)
            return xp.asarray(loss.sum() / loss.shape[0], dtype=lp.dtype)
        return xp.asarray(loss.sum(), dtype=lp.dtype)

    @staticmethod
    def backward(ctx, g):
        (log_probs,) = ctx.saved_tensors
        coef = _gradient(ctx.xp, log_probs._data, ctx.ctc).reshape(log_probs._data.shape)
        if ctx.ctc.reduction == "none" and coef.ndim == 3:
            g = mv.reshape(g, (1, g._data.shape[0], 1))  # one gradient per sample, along dim 1
        factor = CtcGradient.apply(log_probs, coef) if _grad_state.enabled else constant(ctx, coef)
        return ew.mul(g, factor), None, None, None, None, None, None


class CtcGradient(Op):
    """The array ctc_loss's gradient is g times (`coef`, computed from log_probs), as a node of the
    graph when the gradient is recorded (create_graph). Its backward raises: the derivative of ctc_loss's
    gradient is not implemented (as in PyTorch, whose gradient's grad_fn is NotImplemented)."""

    @staticmethod
    def forward(ctx, log_probs, coef):
        return coef

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("the derivative of ctc_loss's gradient is not implemented (double backward through "
                           "ctc_loss; PyTorch has none either): differentiate ctc_loss once")


# ---------------------------------------------------------------- the lattice and its recursions

class _Lattice:
    """A batch's extended label sequences and what the recursions read of them, as backend arrays:
    ext (N, 2S+1) the classes l'_s (blank at even s; blank past a sample's own 2 * length + 1), skip
    (N, 2S+1) where a path may come from s-2, final (N, 2S+1) the two positions a path may end at,
    in_len and tgt_len (N,) the lengths. S is the longest target."""

    def __init__(self, ctx, targets, input_lengths: tuple, target_lengths: tuple, blank: int, n_classes: int):
        xp = ctx.xp
        labels = _labels(ctx, targets, target_lengths, blank, n_classes)
        n, width = labels.shape[0], 2 * labels.shape[1] + 1
        self.ext = xp.full((n, width), blank, dtype=labels.dtype)
        self.ext[:, 1::2] = labels
        self.skip = xp.zeros((n, width), dtype=bool)
        self.skip[:, 2:] = self.ext[:, 2:] != self.ext[:, :-2]
        self.in_len = xp.asarray(input_lengths, dtype=xp.int64).reshape(n)
        self.tgt_len = xp.asarray(target_lengths, dtype=xp.int64).reshape(n)
        end = 2 * self.tgt_len[:, None]
        pos = xp.arange(width)[None, :]
        self.final = (pos == end) | (pos == end - 1)


def _labels(ctx, targets, target_lengths: tuple, blank: int, n_classes: int):
    """(N, S) each sample's labels, blank past its length, from padded (N, >= S) or concatenated targets.
    A label outside [0, n_classes) is an IndexError (on a GPU at its next sync)."""
    xp, backend = ctx.xp, ctx.device.backend
    n, longest = len(target_lengths), max(target_lengths, default=0)
    lengths = xp.asarray(target_lengths, dtype=xp.int64).reshape(n, 1)
    used = xp.arange(longest)[None, :] < lengths
    if targets.ndim == 2:
        labels = targets[:, :longest].astype(xp.int64, copy=False)
    else:  # concatenated: sample k's labels start after the first k samples' labels
        starts = xp.cumsum(lengths, axis=0) - lengths
        labels = targets.astype(xp.int64, copy=False)[xp.where(used, starts + xp.arange(longest)[None, :], 0)]
    bad = used & ((labels < 0) | (labels >= n_classes))
    backend.raise_if(bad.any(), lambda: IndexError(
        f"ctc_loss(): target {int(labels[bad].ravel()[0])} is out of bounds for {n_classes} classes "
        f"(targets must be class indices in [0, {n_classes}))"), ctx.device.index or 0)
    return xp.where(used, labels, blank)


def _emissions(xp, lp, ext):
    """em[t, n, s] = lp[t, n, l'_s]: each frame's log-probability of each extended label, (T, N, 2S+1)."""
    return lp[:, xp.arange(lp.shape[1])[:, None], ext]


def _shift(xp, a, k: int):
    """a (N, W) moved k places along W (to higher s for k > 0), -inf where nothing arrives."""
    out = xp.full_like(a, -xp.inf)
    if k > 0:
        out[:, k:] = a[:, :a.shape[1] - k]
    else:
        out[:, :a.shape[1] + k] = a[:, -k:]
    return out


def _step(xp, em_t, prev, skip, k: int):
    """One frame of either recursion: em_t + logsumexp(prev[s], prev[s -/+ 1], prev[s -/+ 2] where skip)."""
    jump = xp.where(skip, _shift(xp, prev, 2 * k), -xp.inf)
    return em_t + xp.logaddexp(xp.logaddexp(prev, _shift(xp, prev, k)), jump)


def _alphas(xp, em, lat):
    """alpha (T, N, 2S+1), forward in time from frame 0 (frames past a sample's length are unused)."""
    alpha = xp.full(em.shape, -xp.inf, dtype=em.dtype)
    alpha[0, :, :2] = em[0, :, :2]
    for t in range(1, em.shape[0]):
        alpha[t] = _step(xp, em[t], alpha[t - 1], lat.skip, 1)
    return alpha


def _log_likelihood(xp, alpha, lat):
    """log p per sample: alpha at its last frame, summed over its two end positions. No frames: a
    probability of 1 for an empty target, 0 otherwise."""
    n = xp.arange(alpha.shape[1])
    last = xp.maximum(lat.in_len - 1, 0)
    end = 2 * lat.tgt_len
    on_label = xp.where(lat.tgt_len > 0, alpha[last, n, xp.maximum(end - 1, 0)], -xp.inf)
    ll = xp.logaddexp(alpha[last, n, end], on_label)
    return xp.where(lat.in_len == 0, xp.where(lat.tgt_len == 0, 0.0, -xp.inf), ll)


def _betas(xp, em, lat):
    """beta (T, N, 2S+1), backward in time: each sample starts at its own last frame; -inf after it."""
    beta = xp.full(em.shape, -xp.inf, dtype=em.dtype)
    skip_up = xp.zeros_like(lat.skip)
    skip_up[:, :-2] = lat.skip[:, 2:]  # may a path go on from s to s+2
    nxt = beta[0].copy()
    for t in range(em.shape[0] - 1, -1, -1):
        rec = _step(xp, em[t], nxt, skip_up, -1)
        start = (lat.in_len - 1 == t)[:, None] & lat.final
        nxt = beta[t] = xp.where(start, em[t], xp.where((lat.in_len - 1 > t)[:, None], rec, -xp.inf))
    return beta


class _Saved:
    """What CtcLoss's backward needs from its forward."""

    def __init__(self, lat: _Lattice, alpha, nll, reduction: str, zero_infinity: bool):
        self.lat, self.alpha, self.nll = lat, alpha, nll
        self.reduction, self.zero_infinity = reduction, zero_infinity


def _gradient(xp, lp, saved: _Saved):
    """The array g is multiplied by: exp(lp) - gamma (see CtcLoss), scaled by the reduction, (T, N, C)."""
    lat, nll = saved.lat, saved.nll
    lp = lp if lp.ndim == 3 else lp[:, None, :]
    n_frames, n = lp.shape[:2]
    ab = saved.alpha + _betas(xp, _emissions(xp, lp, lat.ext), lat)
    coef = xp.exp(lp) - _posterior(xp, lp, ab, lat.ext, nll)
    scale = xp.ones(n, dtype=lp.dtype)
    if saved.reduction == "mean":
        scale = 1.0 / (xp.maximum(lat.tgt_len, 1) * n)
    keep = xp.arange(n_frames)[:, None] < lat.in_len[None, :]  # the sample's own frames
    if saved.zero_infinity:
        keep = keep & (nll != xp.inf)[None, :]  # a zeroed loss: 0, not nan
    return xp.where(keep[:, :, None], coef * scale[None, :, None], 0).astype(lp.dtype, copy=False)


def _posterior(xp, lp, ab, ext, nll):
    """gamma (T, N, C) from ab = alpha + beta (T, N, 2S+1): per class, the logsumexp of ab over the positions
    holding it, minus lp, plus the loss, exponentiated. The largest ab of each frame is factored out before
    the exp (nothing underflows); the sums per class are one bincount. 0 for a class no path emits at t;
    nan throughout an impossible sample (loss inf), as PyTorch's inf - inf."""
    top = ab.max(axis=2, keepdims=True)
    top = xp.where(xp.isfinite(top), top, 0)  # a frame no path crosses: every term is exp(-inf) = 0
    cells = (xp.arange(lp.shape[0] * lp.shape[1]).reshape(lp.shape[0], lp.shape[1], 1) * lp.shape[2] + ext[None])
    per_class = xp.bincount(cells.ravel(), weights=xp.exp(ab - top).ravel(), minlength=lp.size).reshape(lp.shape)
    found = per_class > 0
    gamma = xp.exp(xp.log(xp.where(found, per_class, 1)) + top - lp + nll[None, :, None])
    return xp.where(xp.isfinite(nll)[None, :, None], xp.where(found, gamma, 0), xp.nan)


# ---------------------------------------------------------------- the public functions and their checks

_REDUCTIONS = ("none", "mean", "sum")


@tensor_args("log_probs", "targets")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> TensorBase:
    """The CTC loss of label sequences `targets` given per-frame class log-probabilities `log_probs`
    (T, N, C), or (T, C) unbatched: one op (CtcLossBackward). targets are padded (N, S), each row's
    first target_lengths[n] entries used, or concatenated (sum(target_lengths),); input_lengths and
    target_lengths are tensors or sequences of ints. reduction 'mean' divides each loss by its target
    length (at least 1), then averages over the batch. A target longer than its frames allow has
    loss inf (zero_infinity: 0, with a zero gradient). Deviations from PyTorch: float targets are
    refused (PyTorch truncates them silently, 1.7 -> 1), a target outside [0, C) is an IndexError
    (PyTorch reads past the array), and input_lengths may be a tensor while target_lengths is a list.
    A target equal to blank (meaningless) is accepted, as by PyTorch, with the same loss; PyTorch's
    gradient then misses a term at the sample's last frame, ours is the exact one."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    shape = _check_log_probs(log_probs)
    batched = len(shape) == 3
    n = shape[1] if batched else 1
    input_lengths = _lengths(input_lengths, "input_lengths", n, shape)
    target_lengths = _lengths(target_lengths, "target_lengths", n, shape)
    blank = operator.index(blank)
    if not 0 <= blank < shape[-1]:
        raise RuntimeError(f"ctc_loss(): blank must be in label range [0, {shape[-1]}), got {blank} "
                           f"(log_probs of shape {list(shape)})")
    _check_values(input_lengths, target_lengths, shape)
    _check_targets(targets, target_lengths, shape, batched)
    targets = to_device(targets, log_probs._device)
    return CtcLoss.apply(log_probs, targets, input_lengths, target_lengths, blank, reduction, bool(zero_infinity))


def ctc_loss_enum(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: int = 0,
                  zero_infinity: bool = False) -> TensorBase:
    """torch.ctc_loss: nn.functional.ctc_loss with the reduction as ATen's number, 1 'mean', 2 'sum', any
    other 'none'. Its default is 0, 'none': PyTorch's signature names Mean, but torch.ctc_loss called
    without a reduction returns the per-sample losses, and so does this one."""
    if not isinstance(reduction, int):
        raise TypeError(f"ctc_loss(): argument 'reduction' must be int (1 'mean', 2 'sum', 0 'none'), not "
                        f"{type(reduction).__name__}; nn.functional.ctc_loss takes the name")
    name = {1: "mean", 2: "sum"}.get(reduction, "none")
    return ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, name, zero_infinity)


def _check_log_probs(log_probs) -> tuple:
    """log_probs' shape, once it is a float32/float64 (T, N, C) or (T, C) with no empty dim."""
    shape = log_probs._data.shape
    if log_probs._data.dtype.kind != "f" or log_probs._data.dtype.itemsize < 4:
        name = dtypes.scalar_name(log_probs._data.dtype)
        raise NotImplementedError(f'"ctc_loss" not implemented for \'{name}\' (log_probs of shape {list(shape)}); '
                                  f"it takes float32 or float64 log-probabilities")
    if len(shape) not in (2, 3):
        raise RuntimeError(f"ctc_loss(): expected log_probs of shape (T, N, C), or (T, C) unbatched, but got a "
                           f"{len(shape)}-d tensor of shape {list(shape)}")
    if 0 in shape:
        raise RuntimeError(f"ctc_loss(): log_probs tensor must not be empty, got shape {list(shape)} "
                           f"(it needs at least one frame, one sample and one class)")
    return shape


def _lengths(value, name: str, n: int, shape: tuple) -> tuple:
    """input_lengths or target_lengths as a tuple of n ints: a tensor of integers (any shape, read in
    order) or a sequence of ints."""
    if isinstance(value, TensorBase):
        if value._data.dtype.kind not in "iu":
            raise RuntimeError(f"ctc_loss(): {name} must be integral, got a {dtypes.scalar_name(value._data.dtype)} "
                               f"tensor of shape {list(value._data.shape)}")
        out = tuple(int(v) for v in value._device.backend.to_host(value._data).ravel())
    elif isinstance(value, (list, tuple)):
        try:
            out = tuple(operator.index(v) for v in value)
        except TypeError:
            raise TypeError(f"ctc_loss(): argument '{name}' must be a tuple of ints or a Tensor, but it holds "
                            f"{sorted({type(v).__name__ for v in value})}") from None
    else:
        raise TypeError(f"ctc_loss(): argument '{name}' must be a tuple of ints or a Tensor, not "
                        f"{type(value).__name__}")
    if len(out) != n:
        raise RuntimeError(f"ctc_loss(): {name} must be of size batch_size ({n}), got {len(out)} values "
                           f"(log_probs of shape {list(shape)})")
    return out


def _check_values(input_lengths: tuple, target_lengths: tuple, shape: tuple) -> None:
    """Each input length within [0, T]; each target length at least 0 (longer than the frames allow: inf loss)."""
    for k, length in enumerate(input_lengths):
        if not 0 <= length <= shape[0]:
            raise RuntimeError(f"ctc_loss(): input_lengths[{k}] is {length}, outside [0, {shape[0]}] "
                               f"(log_probs of shape {list(shape)} has {shape[0]} frames)")
    for k, length in enumerate(target_lengths):
        if length < 0:
            raise RuntimeError(f"ctc_loss(): target_lengths[{k}] is {length}; lengths must be at least 0")


def _check_targets(targets, target_lengths: tuple, shape: tuple, batched: bool) -> None:
    """Integer targets, padded (N, >= the longest target length) or concatenated (sum of the lengths,)."""
    dt, tshape = targets._data.dtype, list(targets._data.shape)
    if dt.kind not in "iub":
        raise RuntimeError(f"ctc_loss(): targets must hold integer class indices, got a {dtypes.scalar_name(dt)} "
                           f"tensor of shape {tshape} (PyTorch truncates floats silently; cast with .long())")
    n = shape[1] if batched else 1
    if len(tshape) == 2:
        if tshape[0] != n or tshape[1] < max(target_lengths, default=0):
            raise RuntimeError(f"ctc_loss(): padded targets must be (batch_size, at least the longest target "
                               f"length) = ({n}, >= {max(target_lengths)}), got shape {tshape} (log_probs of shape "
                               f"{list(shape)}, target_lengths {list(target_lengths)})")
    elif len(tshape) == 1:
        if tshape[0] != sum(target_lengths):
            raise RuntimeError(f"ctc_loss(): concatenated targets must hold sum(target_lengths) = "
                               f"{sum(target_lengths)} labels, got shape {tshape} (target_lengths "
                               f"{list(target_lengths)})")
    else:
        raise RuntimeError(f"ctc_loss(): targets must be padded (N, S) or concatenated 1-d, but got a "
                           f"{len(tshape)}-d tensor of shape {tshape}")
