"""The continuous uniform distribution on [low, high)."""
from __future__ import annotations

from .. import creation
from ..autograd.tensor_base import Size
from ..ops import elementwise as ew
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Uniform(Distribution):
    """Uniform on [low, high): density 1 / (high - low). rsample is low + (high - low)·u, u ~ U[0, 1)."""

    has_rsample = True

    def __init__(self, low, high, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, Size(), validate_args)

    @property
    def arg_constraints(self) -> dict:
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return ew.div(ew.add(self.high, self.low), 2)

    @property
    def mode(self):
        return ew.mul(self.high, float("nan"))

    @property
    def stddev(self):
        return ew.div(ew.sub(self.high, self.low), 12 ** 0.5)

    @property
    def variance(self):
        return ew.div(ew.pow(ew.sub(self.high, self.low), 2), 12)

    def rsample(self, sample_shape=Size()):
        u = creation.rand(self._extended_shape(sample_shape), dtype=self.low.dtype, device=self.low.device)
        return ew.add(self.low, ew.mul(u, ew.sub(self.high, self.low)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = ew.cast(ew.logical_and(ew.le(self.low, value), ew.lt(value, self.high)), self.low._data.dtype)
        return ew.sub(ew.log(inside), ew.log(ew.sub(self.high, self.low)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ew.clamp(ew.div(ew.sub(value, self.low), ew.sub(self.high, self.low)), 0, 1)

    def icdf(self, value):
        return ew.add(ew.mul(value, ew.sub(self.high, self.low)), self.low)

    def entropy(self):
        return ew.log(ew.sub(self.high, self.low))
