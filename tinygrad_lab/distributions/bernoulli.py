"""The Bernoulli distribution: 1 with probability p, 0 otherwise."""
from __future__ import annotations

from .. import creation
from ..autograd.tensor_base import Size
from ..nn import functional as F
from ..ops import elementwise as ew
from ..ops import movement as mv
from . import constraints
from .categorical import _probs_or_logits
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits


class Bernoulli(Distribution):
    """P(X = 1) = probs = sigmoid(logits). Samples are 0./1. in the parameter's float dtype;
    log_prob is -binary_cross_entropy_with_logits(logits, value), exact for large logits."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        (param,) = broadcast_all(_probs_or_logits(probs, logits))  # a number is fine: Bernoulli(0.3)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(param.shape, Size(), validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    def expand(self, batch_shape, _instance=None) -> "Bernoulli":
        new = super().expand(batch_shape, _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        """1 where p > 1/2, 0 where p < 1/2, nan at exactly 1/2 (as PyTorch)."""
        p = self.probs
        return ew.where(ew.eq(p, 0.5), float("nan"), ew.cast(ew.ge(p, 0.5), p._data.dtype))

    @property
    def variance(self):
        return ew.mul(self.probs, ew.sub(1, self.probs))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        p = self.probs.detach()
        u = creation.rand(shape, dtype=p.dtype, device=p.device)
        return ew.cast(ew.lt(u, mv.expand(p, shape)), p._data.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return ew.neg(F.binary_cross_entropy_with_logits(logits, value, reduction="none"))

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True):
        values = creation.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = mv.reshape(values, (-1,) + (1,) * len(self._batch_shape))
        return mv.expand(values, (-1,) + tuple(self._batch_shape)) if expand else values
