"""Helpers the distributions share: broadcasting parameters, probabilities <-> logits, lazy attributes."""
from __future__ import annotations

import functools
import numbers

import numpy as np

from .. import creation, dtypes
from ..autograd.tensor_base import TensorBase
from ..ops import elementwise as ew
from ..ops import movement as mv
from ..ops.shapes import broadcast_shape

__all__ = ["broadcast_all", "lazy_property", "logits_to_probs", "probs_to_logits", "clamp_probs"]


def broadcast_all(*values) -> list:
    """The values as tensors of one broadcast shape: numbers become tensors of the tensors' dtype
    and device (the default dtype when all are numbers); tensors are expanded (differentiably)."""
    for v in values:
        if not isinstance(v, (TensorBase, numbers.Number)):
            raise ValueError(f"Input arguments must all be instances of numbers.Number or tinygrad_lab.Tensor, "
                             f"got {type(v).__name__}")
    like = next((v for v in values if isinstance(v, TensorBase)), None)
    dtype = like.dtype if like is not None and like.is_floating_point() else dtypes.get_default_dtype()
    device = like.device if like is not None else None
    tensors = [v if isinstance(v, TensorBase) else creation.tensor(float(v), dtype=dtype, device=device)
               for v in values]
    shape = broadcast_shape([tuple(t.shape) for t in tensors], "broadcast_all")
    return [t if tuple(t.shape) == shape else mv.expand(t, shape) for t in tensors]


class lazy_property:
    """An attribute computed on first access and then stored on the instance (e.g. a Categorical's
    logits when it was given probs): while absent from the instance it is not validated or expanded."""

    def __init__(self, fn) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value


def clamp_probs(probs):
    """probs kept eps away from 0 and 1 (eps: the dtype's machine epsilon), so their logs are finite."""
    eps = float(np.finfo(probs._data.dtype).eps)
    return ew.clamp(probs, eps, 1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """log(p) for a categorical distribution; log(p) - log(1 - p) for a binary one."""
    clamped = clamp_probs(probs)
    if is_binary:
        return ew.sub(ew.log(clamped), ew.log1p(ew.neg(clamped)))
    return ew.log(clamped)


def logits_to_probs(logits, is_binary: bool = False):
    """softmax over the last dim (categorical), or sigmoid (binary)."""
    from ..ops import activation as act
    return ew.sigmoid(logits) if is_binary else act.softmax(logits, -1)
