"""The categorical distribution over {0, ..., K-1}, given by probabilities or logits."""
from __future__ import annotations

import numpy as np

from .. import creation
from ..autograd.tensor_base import Size, TensorBase, make
from ..ops import elementwise as ew
from ..ops import indexing as ix
from ..ops import movement as mv
from ..ops import reduce as rd
from ..ops.shapes import broadcast_shape
from .. import random as _random
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits


def _probs_or_logits(probs, logits):
    """The one parameter given (PyTorch's ValueError when it is both or neither)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return probs if probs is not None else logits


class Categorical(Distribution):
    """P(X = k) = probs[..., k]: the last dim of probs (or logits) holds the K classes, the dims
    before it are the batch. probs are normalised to sum to 1; logits are normalised so that
    logsumexp(logits) = 0 (unnormalised log-probabilities are fine). Samples are int64 class
    indices; there is no rsample (a class index has no gradient)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        given = _probs_or_logits(probs, logits)
        if not isinstance(given, TensorBase):
            raise TypeError(f"Categorical's probs / logits must be a Tensor, got {type(given).__name__}")
        if given.dim() < 1:
            raise ValueError(f"`{'probs' if probs is not None else 'logits'}` parameter must be at least "
                             f"one-dimensional.")
        if probs is not None:
            self.probs = ew.div(probs, rd.sum(probs, -1, keepdim=True))
        else:
            self.logits = ew.sub(logits, rd.logsumexp(logits, -1, keepdim=True))
        self._param = self.probs if probs is not None else self.logits
        self._num_events = given.shape[-1]
        super().__init__(given.shape[:-1], Size(), validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    def expand(self, batch_shape, _instance=None) -> "Categorical":
        new = super().expand(batch_shape, _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        return new

    @property
    def mean(self):
        return creation.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return rd.argmax(self.probs, -1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=Size()):
        """Class indices by inverse-CDF sampling: the first class whose cumulative probability exceeds u."""
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach()
        xp = probs._device.backend.xp
        cumulative = xp.cumsum(probs._data, axis=-1)
        u = _random.generator(probs._device).random(shape + (1,)) * cumulative[..., -1:]
        index = (u >= cumulative).sum(axis=-1)
        return make(xp.minimum(index, self._num_events - 1).astype(np.int64), probs._device)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = mv.unsqueeze(ew.cast(value, np.int64), -1)
        shape = broadcast_shape((tuple(value.shape)[:-1], tuple(self.logits.shape)[:-1]), "Categorical.log_prob")
        logits = mv.expand(self.logits, shape + (self._num_events,))
        return mv.squeeze(ix.gather(logits, -1, mv.expand(value, shape + (1,))), -1)

    def entropy(self):
        smallest = float(np.finfo(self.logits._data.dtype).min)
        logits = ew.clamp(self.logits, min=smallest)  # -inf logits (probability 0) add 0, not nan
        return ew.neg(rd.sum(ew.mul(logits, self.probs), -1))

    def enumerate_support(self, expand: bool = True):
        values = creation.arange(self._num_events, device=self._param.device)
        values = mv.reshape(values, (-1,) + (1,) * len(self._batch_shape))
        return mv.expand(values, (-1,) + tuple(self._batch_shape)) if expand else values
