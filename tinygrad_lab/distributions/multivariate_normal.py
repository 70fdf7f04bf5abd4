"""The multivariate normal distribution N(loc, Σ) over vectors."""
from __future__ import annotations

import math

from .. import creation, linalg
from ..autograd.tensor_base import Size
from ..ops import elementwise as ew
from ..ops import movement as mv
from ..ops import reduce as rd
from ..ops.shapes import broadcast_shape
from . import constraints
from .distribution import Distribution
from .utils import lazy_property


class MultivariateNormal(Distribution):
    r"""N(loc, Σ) over vectors of size k, given by exactly one of covariance_matrix Σ, precision_matrix Σ⁻¹ or
    scale_tril L (lower triangular, positive diagonal, Σ = L Lᵀ). Everything is computed from L:

    - rsample is loc + L ε with ε ~ N(0, I), differentiable in loc and the matrix;
    - log_prob(x) is -(k log 2π + ‖L⁻¹(x - loc)‖²) / 2 - Σ log diag L (one triangular solve, no inverse);
    - the entropy is k (1 + log 2π) / 2 + Σ log diag L.
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {"covariance_matrix": covariance_matrix, "precision_matrix": precision_matrix, "scale_tril": scale_tril}
        named = [(name, m) for name, m in given.items() if m is not None]
        if len(named) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = named[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        k = loc.shape[-1]
        batch = broadcast_shape([tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])], "MultivariateNormal")
        self.loc = mv.expand(loc, batch + (k,))
        setattr(self, name, mv.expand(matrix, batch + (k, k)))
        super().__init__(batch, (k,), validate_args)
        self._unbroadcasted_scale_tril = (scale_tril if scale_tril is not None else linalg.cholesky(
            covariance_matrix if covariance_matrix is not None else linalg.inv(precision_matrix)))

    @lazy_property
    def scale_tril(self):
        return mv.expand(self._unbroadcasted_scale_tril, tuple(self.batch_shape) + tuple(self.event_shape) * 2)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril  # noqa: N806 (the factor's usual name)
        return mv.expand(linalg.matmul(L, mv.transpose(L, -1, -2)), tuple(self.batch_shape) + tuple(self.event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        return mv.expand(linalg.inv(self.covariance_matrix), tuple(self.batch_shape) + tuple(self.event_shape) * 2)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        L = self._unbroadcasted_scale_tril  # noqa: N806
        return mv.expand(rd.sum(ew.mul(L, L), -1), tuple(self.batch_shape) + tuple(self.event_shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = creation.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return ew.add(self.loc, mv.squeeze(linalg.matmul(self._unbroadcasted_scale_tril, mv.unsqueeze(eps, -1)), -1))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = ew.sub(value, self.loc)
        L = self._unbroadcasted_scale_tril  # noqa: N806
        L = mv.expand(L, tuple(diff.shape[:-1]) + tuple(L.shape[-2:]))  # noqa: N806 (one factor per value)
        z = linalg.solve_triangular(L, mv.unsqueeze(diff, -1), upper=False)  # L⁻¹(x - loc)
        k = self.event_shape[0]
        return ew.sub(ew.mul(ew.add(rd.sum(ew.mul(z, z), (-2, -1)), k * math.log(2 * math.pi)), -0.5),
                      half_log_det(L))

    def entropy(self):
        k = self.event_shape[0]
        out = ew.add(half_log_det(self._unbroadcasted_scale_tril), 0.5 * k * (1.0 + math.log(2 * math.pi)))
        return mv.expand(out, tuple(self.batch_shape))


def half_log_det(L):  # noqa: N803
    """log det(L Lᵀ) / 2 = Σ log diag L, per matrix."""
    return rd.sum(ew.log(linalg.diagonal(L)), -1)
