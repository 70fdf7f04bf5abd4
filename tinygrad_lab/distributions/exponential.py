"""The exponential distribution with rate λ (mean 1/λ)."""
from __future__ import annotations

from .. import creation
from ..autograd.tensor_base import Size
from ..ops import elementwise as ew
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Exponential(Distribution):
    """density λ·exp(-λx) for x ≥ 0. rsample is -log(1 - u)/λ, u ~ U[0, 1) (inverse-CDF sampling)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, Size(), validate_args)

    @property
    def mean(self):
        return ew.div(1.0, self.rate)

    @property
    def mode(self):
        return creation.zeros_like(self.rate)

    @property
    def stddev(self):
        return ew.div(1.0, self.rate)

    @property
    def variance(self):
        return ew.pow(self.rate, -2)

    def rsample(self, sample_shape=Size()):
        u = creation.rand(self._extended_shape(sample_shape), dtype=self.rate.dtype, device=self.rate.device)
        return ew.div(ew.neg(ew.log1p(ew.neg(u))), self.rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ew.sub(ew.log(self.rate), ew.mul(self.rate, value))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ew.sub(1, ew.exp(ew.mul(ew.neg(self.rate), value)))

    def icdf(self, value):
        return ew.div(ew.neg(ew.log1p(ew.neg(value))), self.rate)

    def entropy(self):
        return ew.sub(1.0, ew.log(self.rate))
