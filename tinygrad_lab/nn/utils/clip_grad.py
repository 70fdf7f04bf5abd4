"""Gradient clipping: rescale (or clamp) the gradients in place between backward() and step().

    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()

The `foreach` argument is accepted and ignored: there is one (per-tensor) implementation.
"""
from __future__ import annotations

import math
import warnings

from ... import creation
from ...autograd.grad_mode import no_grad
from ...autograd.tensor_base import TensorBase
from ...ops import elementwise as ew
from ...ops import movement as mv
from ...ops import reduce as rd

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _tensors(parameters) -> list:
    """A single tensor or an iterable of them, as a list (generators are consumed once)."""
    return [parameters] if isinstance(parameters, TensorBase) else list(parameters)


def _grads(parameters) -> list:
    return [p.grad for p in _tensors(parameters) if p.grad is not None]


def _vector_norm(t, norm_type: float):
    """The norm_type-norm of all of t's elements (inf: the largest |x|; 0: the number of non-zeros)."""
    if norm_type == 0:
        return rd.sum(ew.cast(ew.ne(t, 0), t._data.dtype))
    return rd.norm(mv.reshape(t, (-1,)), norm_type)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None):
    """The norm of the norms of `tensors` (= the norm of all their elements together), a 0-d tensor."""
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return creation.tensor(0.0)
    with no_grad():
        norms = [_vector_norm(t, norm_type) for t in tensors]
        device = tensors[0].device
        total = _vector_norm(mv.stack([n.to(device) for n in norms]), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           f"it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           f"norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scale every gradient by min(1, max_norm / (total_norm + 1e-6)), in place."""
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = ew.clamp(ew.div(float(max_norm), ew.add(total_norm, 1e-6)), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device, g.dtype))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None):
    """Rescale the gradients so that their total norm_type-norm is at most max_norm (the norm of all
    gradients together, as if they were one vector). Returns the total norm before clipping."""
    parameters = _tensors(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None):
    """Deprecated name of clip_grad_norm_ (as in PyTorch)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)

