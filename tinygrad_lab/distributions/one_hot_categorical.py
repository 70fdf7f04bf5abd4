"""The categorical distribution with one-hot vectors as its values."""
from __future__ import annotations

from .. import creation
from ..autograd.tensor_base import Size
from ..nn import functional as F
from ..ops import elementwise as ew
from ..ops import reduce as rd
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class OneHotCategorical(Distribution):
    """A Categorical whose samples are one-hot vectors of length K (event_shape (K,)) in the
    parameters' float dtype, e.g. [0., 0., 1., 0.] for class 2."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        param = self._categorical._param
        super().__init__(param.shape[:-1], param.shape[-1:], validate_args)

    def expand(self, batch_shape, _instance=None) -> "OneHotCategorical":
        new = object.__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        new._categorical = self._categorical.expand(batch_shape)
        new._batch_shape = Size(batch_shape)
        return new

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return self._one_hot(rd.argmax(self.probs, -1))

    @property
    def variance(self):
        return ew.mul(self.probs, ew.sub(1, self.probs))

    def _one_hot(self, index):
        return ew.cast(F.one_hot(index, self._event_shape[0]), self.probs._data.dtype)

    def sample(self, sample_shape=Size()):
        return self._one_hot(self._categorical.sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(rd.argmax(value, -1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True):
        n = self._event_shape[0]
        values = creation.eye(n, dtype=self.probs.dtype, device=self.probs.device).reshape((n,) + (1,) * len(
            self._batch_shape) + (n,))
        return values.expand((n,) + tuple(self._batch_shape) + (n,)) if expand else values
