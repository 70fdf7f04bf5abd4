"""Constraints: where a distribution's parameters and samples may lie (PyTorch's torch.distributions.constraints).

A constraint's `check(value)` gives a bool tensor, True where value satisfies it; `event_dim`
says how many rightmost dims make one event (checked together). Distributions use them to
validate their arguments and the values given to `log_prob`.

A check is part of no gradient, so it is written on the backend's arrays (`_checked`): one tensor
made per check instead of one op per comparison (a Categorical's simplex check was seven ops,
about 20 us of a reinforcement-learning step's 130).
"""
from __future__ import annotations

from ..autograd.tensor_base import TensorBase, make

__all__ = ["Constraint", "boolean", "dependent", "greater_than", "greater_than_eq", "independent",
           "integer_interval", "interval", "less_than", "lower_cholesky", "nonnegative", "nonnegative_integer",
           "one_hot", "positive", "positive_definite", "real", "real_vector", "simplex", "unit_interval"]


def _bound(value) -> str:
    """A bound as reprs show it: a number, a one-element tensor's value, or the tensor."""
    if hasattr(value, "numel"):
        return str(value.item()) if value.numel() == 1 else repr(value.detach())
    return str(value)


def _checked(test, value, *bounds):
    """test(array, *bounds) on value's array (and each tensor bound's), as a bool tensor on value's device."""
    arrays = [b._data if isinstance(b, TensorBase) else b for b in bounds]
    return make(value._device.backend.xp.asarray(test(value._data, *arrays)), value._device)


class Constraint:
    """A region of values: check(value) is True inside it."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (not checked by itself)."""

    def __init__(self, is_discrete: bool = False, event_dim: int = 0) -> None:
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    return isinstance(constraint, _Dependent)


class _Real(Constraint):
    def check(self, value):
        return _checked(lambda v: v == v, value)  # false only for nan


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return _checked(lambda v: (v == 0) | (v == 1), value)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return _checked(lambda v, lo: lo < v, value, self.lower_bound)

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(lower_bound={_bound(self.lower_bound)})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return _checked(lambda v, lo: lo <= v, value, self.lower_bound)


class _LessThan(Constraint):
    def __init__(self, upper_bound) -> None:
        self.upper_bound = upper_bound

    def check(self, value):
        return _checked(lambda v, hi: v < hi, value, self.upper_bound)

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={_bound(self.upper_bound)})"


class _IntegerGreaterThan(_GreaterThan):
    """Whole numbers >= lower_bound (counts)."""

    is_discrete = True

    def check(self, value):
        return _checked(lambda v, lo: (v % 1 == 0) & (lo <= v), value, self.lower_bound)


class _Interval(Constraint):
    """lower_bound <= value <= upper_bound."""

    def __init__(self, lower_bound, upper_bound) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return _checked(lambda v, lo, hi: (lo <= v) & (v <= hi), value, self.lower_bound, self.upper_bound)

    def __repr__(self) -> str:
        return (f"{type(self).__name__[1:]}(lower_bound={_bound(self.lower_bound)}, "
                f"upper_bound={_bound(self.upper_bound)})")


class _HalfOpenInterval(_Interval):
    """lower_bound <= value < upper_bound."""

    def check(self, value):
        return _checked(lambda v, lo, hi: (lo <= v) & (v < hi), value, self.lower_bound, self.upper_bound)


class _IntegerInterval(_Interval):
    """Whole numbers in [lower_bound, upper_bound]."""

    is_discrete = True

    def check(self, value):
        return _checked(lambda v, lo, hi: (v % 1 == 0) & (lo <= v) & (v <= hi), value, self.lower_bound,
                        self.upper_bound)


class _Simplex(Constraint):
    """Non-negative vectors (along the last dim) that sum to 1 (within 1e-6)."""

    event_dim = 1

    def check(self, value):
        return _checked(lambda v: (v >= 0).all(-1) & (abs(v.sum(-1) - 1) < 1e-6), value)


class _LowerCholesky(Constraint):
    """Lower triangular matrices (the last two dims) with a positive diagonal: Cholesky factors."""

    event_dim = 2

    def check(self, value):
        xp, v = value._device.backend.xp, value._data
        return make(xp.asarray((xp.tril(v) == v).all((-2, -1)) & (xp.diagonal(v, 0, -2, -1) > 0).all(-1)),
                    value._device)


class _PositiveDefinite(Constraint):
    """Symmetric matrices (within 1e-6) whose eigenvalues are all positive: covariance matrices."""

    event_dim = 2

    def check(self, value):
        xp, v = value._device.backend.xp, value._data
        symmetric = (abs(v - xp.swapaxes(v, -1, -2)) <= 1e-6).all((-2, -1))
        return make(xp.asarray(symmetric & (xp.linalg.eigvalsh(v) > 0).all(-1)), value._device)


class _OneHot(Constraint):
    """Vectors of zeros and ones with exactly one 1."""

    is_discrete = True
    event_dim = 1

    def check(self, value):
        return _checked(lambda v: ((v == 0) | (v == 1)).all(-1) & (v.sum(-1) == 1), value)


class _IndependentConstraint(Constraint):
    """base_constraint holding for every element of the rightmost reinterpreted_batch_ndims dims together."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        axes = tuple(range(-self.reinterpreted_batch_ndims, 0))
        return _checked(lambda r: r.all(axes), result)

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


dependent = _Dependent()
real = _Real()
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
one_hot = _OneHot()
real_vector = _IndependentConstraint(real, 1)
lower_cholesky = _LowerCholesky()
nonnegative_integer = _IntegerGreaterThan(0)
positive_definite = _PositiveDefinite()
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval
independent = _IndependentConstraint
