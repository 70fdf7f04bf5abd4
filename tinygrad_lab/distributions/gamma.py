"""The gamma, beta and Dirichlet distributions (all drawn from gamma variates) and the Poisson distribution."""
from __future__ import annotations

from .. import creation
from ..autograd.tensor_base import Size
from ..ops import elementwise as ew
from ..ops import movement as mv
from ..ops import reduce as rd
from ..ops import special as sp
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Gamma(Distribution):
    """density rate**c x**(c - 1) e**(-rate x) / Gamma(c) for x > 0 (c the concentration). rsample draws
    Gamma(c, 1) variates, differentiable in c by implicit reparameterisation (`_standard_gamma`), and divides
    them by the rate."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.rate.shape, Size(), validate_args)

    @property
    def mean(self):
        return ew.div(self.concentration, self.rate)

    @property
    def mode(self):
        return ew.clamp(ew.div(ew.sub(self.concentration, 1), self.rate), min=0)

    @property
    def variance(self):
        return ew.div(self.concentration, ew.mul(self.rate, self.rate))

    def rsample(self, sample_shape=Size()):
        c = mv.expand(self.concentration, tuple(self._extended_shape(sample_shape)))
        return ew.div(creation.standard_gamma(c), self.rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return ew.sub(ew.sub(ew.add(sp.xlogy(c, r), sp.xlogy(ew.sub(c, 1), value)), ew.mul(r, value)), sp.lgamma(c))

    def entropy(self):
        c = self.concentration
        return ew.add(ew.sub(ew.add(c, sp.lgamma(c)), ew.log(self.rate)), ew.mul(ew.sub(1.0, c), sp.digamma(c)))


class Dirichlet(Distribution):
    """density Gamma(c0) / prod Gamma(c_i) * prod x_i**(c_i - 1) on the simplex (c0 = sum c_i). rsample draws
    Gamma(c_i, 1) variates and normalises them to sum to 1."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args)

    @property
    def mean(self):
        return ew.div(self.concentration, rd.sum(self.concentration, -1, keepdim=True))

    @property
    def mode(self):
        c = ew.clamp(ew.sub(self.concentration, 1), min=0)
        return ew.div(c, rd.sum(c, -1, keepdim=True))

    @property
    def variance(self):
        c = self.concentration
        total = rd.sum(c, -1, keepdim=True)
        return ew.div(ew.mul(c, ew.sub(total, c)), ew.mul(ew.mul(total, total), ew.add(total, 1)))

    def rsample(self, sample_shape=Size()):
        g = creation.standard_gamma(mv.expand(self.concentration, tuple(self._extended_shape(sample_shape))))
        return ew.div(g, rd.sum(g, -1, keepdim=True))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return ew.sub(rd.sum(sp.xlogy(ew.sub(c, 1), value), -1), _log_beta(c))

    def entropy(self):
        c = self.concentration
        k, total = c.shape[-1], rd.sum(c, -1)
        return ew.sub(ew.add(_log_beta(c), ew.mul(ew.sub(total, k), sp.digamma(total))),
                      rd.sum(ew.mul(ew.sub(c, 1), sp.digamma(c)), -1))


def _log_beta(c):
    """log B(c) = sum log Gamma(c_i) - log Gamma(sum c_i), over the last dim."""
    return ew.sub(rd.sum(sp.lgamma(c), -1), sp.lgamma(rd.sum(c, -1)))


class Beta(Distribution):
    """density x**(a - 1) (1 - x)**(b - 1) / B(a, b) on [0, 1] (a = concentration1, b = concentration0): the first
    coordinate of a Dirichlet((a, b)), which also draws its samples."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(mv.stack([self.concentration1, self.concentration0], -1), validate_args=False)
        super().__init__(self.concentration1.shape, Size(), validate_args)

    @property
    def mean(self):
        return ew.div(self.concentration1, ew.add(self.concentration1, self.concentration0))

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        return self._dirichlet.variance[..., 0]

    def rsample(self, sample_shape=Size()):
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(mv.stack([value, ew.sub(1.0, value)], -1))

    def entropy(self):
        return self._dirichlet.entropy()


class Poisson(Distribution):
    """P(k) = rate**k e**-rate / k! for whole k >= 0. Draws have no gradient (a count does not move smoothly
    with its rate)."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, Size(), validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return ew.floor(self.rate)

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        return creation.poisson(mv.expand(self.rate, tuple(self._extended_shape(sample_shape))).detach())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ew.sub(ew.sub(sp.xlogy(value, self.rate), self.rate), sp.lgamma(ew.add(value, 1)))
