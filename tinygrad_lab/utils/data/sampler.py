"""Samplers: iterables of dataset indices (or of index lists, for BatchSampler),
as `torch.utils.data`. Random ones draw when iterated, from `generator`
(None: tinygrad_lab's global seed; see `generator.py`), so each epoch differs
and `tl.manual_seed` replays them all."""
from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence

import numpy as np

from ...autograd.tensor_base import TensorBase
from ...random import numpy_generator


class Sampler:
    """Base class: subclasses define `__iter__` (and `__len__` when it is known)."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _positive_int(name: str, value) -> None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class RandomSampler(Sampler):
    """A random permutation each epoch; with `replacement=True`, `num_samples` independent
    uniform draws. Without replacement, `num_samples` > len gives whole permutations then a part of one."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        _positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        rng = numpy_generator(self.generator)  # resolved per epoch: a manual_seed in between takes effect
        if self.replacement:
            yield from rng.integers(0, n, size=self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n)[:self.num_samples % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order each epoch."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in numpy_generator(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probability proportional to `weights`."""

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None) -> None:
        _positive_int("num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = np.asarray(weights.tolist() if isinstance(weights, TensorBase) else weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution: weights must be finite, non-negative "
                               "and not all zero")
        if not replacement and num_samples > np.count_nonzero(w):
            raise RuntimeError(f"cannot sample n_sample ({num_samples}) > the number of non-zero weights "
                               f"({np.count_nonzero(w)}) without replacement")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rng = numpy_generator(self.generator)
        p = self.weights / self.weights.sum()
        yield from rng.choice(len(p), size=self.num_samples, replace=self.replacement, p=p).tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of `sampler` into lists of `batch_size`; the last, shorter
    list is kept unless `drop_last`."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        _positive_int("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
