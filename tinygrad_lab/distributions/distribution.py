"""The Distribution base class: shapes, sampling shapes, validation and the shared derived quantities.

Shapes follow PyTorch: a distribution has a `batch_shape` (independent, not necessarily identical
distributions) and an `event_shape` (the shape of one draw). `sample(sample_shape)` returns
`sample_shape + batch_shape + event_shape`; `log_prob(value)` returns one number per event.
`rsample` draws with the *reparameterization trick* (a differentiable function of the parameters
and parameter-free noise), so gradients flow from samples to parameters; `sample` never records.
"""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..autograd.tensor_base import Size, TensorBase
from ..ops import elementwise as ew
from ..ops import movement as mv
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Base class of the probability distributions (PyTorch's torch.distributions.Distribution)."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True  # PyTorch validates by default too (its default follows __debug__)

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument and sample validation on or off for every distribution created afterwards."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args: bool | None = None) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._validate_parameters()

    def _validate_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
        for name, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None), lazy_property):
                continue  # not given, and not computed yet
            value = getattr(self, name)
            if not _holds(constraint, value):
                raise ValueError(f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, but found "
                                 f"invalid values:\n{_values(value)}")

    # ------------------------------------------------------------ shapes
    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape=()) -> Size:
        """sample_shape + batch_shape + event_shape: the shape of sample(sample_shape)."""
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    @property
    def arg_constraints(self) -> dict:
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    def expand(self, batch_shape, _instance=None) -> "Distribution":
        """The same distribution repeated over a larger batch_shape (parameters expanded, not copied)."""
        batch_shape = Size(batch_shape)
        new = object.__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        for name in self.arg_constraints:
            value = self.__dict__.get(name)
            if isinstance(value, TensorBase):
                event = tuple(value.shape)[len(self._batch_shape):]
                new.__dict__[name] = mv.expand(value, tuple(batch_shape) + event)
        new._batch_shape = batch_shape
        return new

    # ------------------------------------------------------------ what each distribution provides
    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return ew.sqrt(self.variance)

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError

    def sample(self, sample_shape=Size()):
        """Draws of shape sample_shape + batch_shape + event_shape, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def sample_n(self, n: int):
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        raise NotImplementedError

    def perplexity(self):
        return ew.exp(self.entropy())

    # ------------------------------------------------------------ validation and printing
    def _validate_sample(self, value) -> None:
        """PyTorch's checks of a log_prob argument: a tensor, broadcastable shape, inside the support."""
        if not isinstance(value, TensorBase):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape, event = tuple(value.shape), tuple(self._event_shape)
        if shape[len(shape) - len(event):] != event:
            raise ValueError(f"The right-most size of value must match event_shape: {value.shape} vs "
                             f"{self._event_shape}.")
        expected = tuple(self._batch_shape) + event
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {Size(shape)} vs "
                                 f"{Size(expected)}.")
        support = self.support
        if not _holds(support, value):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {shape}) to be within the "
                             f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n"
                             f"{_values(value)}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{k}: {_short(self.__dict__[k])}" for k in names)
        return f"{type(self).__name__}({args})"


def _holds(constraint, value) -> bool:
    """Whether value satisfies constraint everywhere. A check is not part of any gradient: it records
    no graph (a Categorical's simplex check on probs that require grad made three nodes)."""
    with no_grad():
        return bool(constraint.check(value)._data.all())


def _short(value) -> str:
    """A parameter as the repr shows it: its value if it has one element, else its shape."""
    if isinstance(value, TensorBase):
        return str(value.item()) if value.numel() == 1 else repr(value.shape)
    return str(value)


def _values(value) -> str:
    return str(value.item()) if value.numel() == 1 else repr(value.detach())


def sum_rightmost(value, dim: int):
    """value summed over its rightmost `dim` dims."""
    return value.sum(tuple(range(-dim, 0))) if dim > 0 else value

