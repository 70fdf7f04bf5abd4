"""The normal (Gaussian) distribution N(loc, scale²)."""
from __future__ import annotations

import math

from .. import creation
from ..autograd.tensor_base import Size
from ..ops import activation as act
from ..ops import elementwise as ew
from ..ops import special
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Normal(Distribution):
    r"""N(loc, scale²): density exp(-(x - loc)² / (2 scale²)) / (scale √(2π)).

    rsample is loc + scale·ε with ε ~ N(0, 1), differentiable in loc and scale.
    """

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
        return self.scale

    @property
    def variance(self):
        return ew.pow(self.scale, 2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = creation.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return ew.add(self.loc, ew.mul(eps, self.scale))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = ew.div(ew.sub(value, self.loc), self.scale)
        return ew.sub(ew.sub(ew.mul(ew.mul(z, z), -0.5), ew.log(self.scale)), math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ew.mul(ew.add(act.erf(ew.div(ew.sub(value, self.loc), ew.mul(self.scale, math.sqrt(2)))), 1), 0.5)

    def icdf(self, value):
        return ew.add(self.loc, ew.mul(self.scale, ew.mul(special.erfinv(ew.sub(ew.mul(value, 2), 1)), math.sqrt(2))))

    def entropy(self):
        return ew.add(ew.log(self.scale), 0.5 + 0.5 * math.log(2 * math.pi))
