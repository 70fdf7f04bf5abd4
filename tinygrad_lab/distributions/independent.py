"""Independent: treat some batch dims of a distribution as one event."""
from __future__ import annotations

from ..autograd.tensor_base import Size
from . import constraints
from .distribution import Distribution, sum_rightmost


class Independent(Distribution):
    """base_distribution with its rightmost `reinterpreted_batch_ndims` batch dims moved into the
    event: log_prob and entropy sum over them. E.g. Independent(Normal(loc (B, D), scale), 1) is a
    diagonal Gaussian over D-vectors with batch_shape (B,)."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:], validate_args)

    def expand(self, batch_shape, _instance=None) -> "Independent":
        new = object.__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        moved = tuple(self.event_shape)[:self.reinterpreted_batch_ndims]
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + moved)
        new._batch_shape = Size(batch_shape)
        return new

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @property
    def support(self):
        if self.reinterpreted_batch_ndims == 0:
            return self.base_dist.support
        return constraints.independent(self.base_dist.support, self.reinterpreted_batch_ndims)

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
