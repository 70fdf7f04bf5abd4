"""The Laplace (double exponential) distribution."""
from __future__ import annotations

import numpy as np

from .. import creation
from ..autograd.tensor_base import Size
from ..ops import elementwise as ew
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Laplace(Distribution):
    """density exp(-|x - loc| / scale) / (2 scale). rsample is loc - scale·sign(u)·log(1 - |u|),
    u ~ U(-1, 1) (inverse-CDF sampling)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, Size(), validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return ew.mul(self.scale, 2 ** 0.5)

    @property
    def variance(self):
        return ew.mul(ew.pow(self.scale, 2), 2)

    def rsample(self, sample_shape=Size()):
        eps = float(np.finfo(self.loc._data.dtype).eps)
        u = creation.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        u = ew.add(ew.mul(u, 2 - eps), eps - 1)  # in (-1, 1): log1p(-|u|) stays finite
        return ew.sub(self.loc, ew.mul(ew.mul(self.scale, ew.sign(u)), ew.log1p(ew.neg(ew.abs(u)))))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ew.sub(ew.neg(ew.log(ew.mul(self.scale, 2))), ew.div(ew.abs(ew.sub(value, self.loc)), self.scale))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = ew.sub(value, self.loc)
        tail = ew.sub(ew.exp(ew.div(ew.neg(ew.abs(z)), self.scale)), 1)  # expm1(-|z|/scale)
        return ew.sub(0.5, ew.mul(ew.mul(ew.sign(z), tail), 0.5))

    def icdf(self, value):
        term = ew.sub(value, 0.5)
        return ew.sub(self.loc, ew.mul(ew.mul(self.scale, ew.sign(term)), ew.log1p(ew.mul(ew.abs(term), -2))))

    def entropy(self):
        return ew.add(ew.log(ew.mul(self.scale, 2)), 1)
