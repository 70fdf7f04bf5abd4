"""Datasets, as `torch.utils.data`: anything with `__getitem__` and `__len__`
(map-style) or `__iter__` (iterable-style), plus the usual wrappers."""
from __future__ import annotations

import bisect
import math
import numbers
import warnings
from collections.abc import Iterable, Sequence
from itertools import accumulate

import numpy as np

from ...autograd.tensor_base import TensorBase
from ...random import numpy_generator


class Dataset:
    """A map-style dataset: subclasses define `__getitem__(index)` and usually `__len__`."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """An iterable-style dataset: subclasses define `__iter__` (a stream of samples).
    A DataLoader batches consecutive samples; shuffle and samplers do not apply."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        raise TypeError("ConcatDataset does not support IterableDataset")


def _first_dim(t, i: int) -> int:
    shape = getattr(t, "shape", None)
    if shape is None or len(shape) == 0:
        raise ValueError(f"TensorDataset: tensor {i} has shape {list(shape) if shape is not None else '?'}; "
                         f"every tensor needs a first (sample) dimension")
    return shape[0]


class TensorDataset(Dataset):
    """Samples are rows: `ds[i] == tuple(t[i] for t in tensors)`, all tensors sharing their first dimension.

    Deviation: a size mismatch raises ValueError naming the shapes (PyTorch asserts)."""

    def __init__(self, *tensors) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        sizes = [_first_dim(t, i) for i, t in enumerate(tensors)]
        if any(s != sizes[0] for s in sizes):
            shapes = ", ".join(str(list(t.shape)) for t in tensors)
            raise ValueError(f"Size mismatch between tensors: first dimensions must agree, got shapes {shapes}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def __repr__(self) -> str:
        shapes = ", ".join(str(list(t.shape)) for t in self.tensors)
        return f"TensorDataset({shapes})"


class ConcatDataset(Dataset):
    """Several map-style datasets one after another (`ds1 + ds2` builds one)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        if which >= len(self.datasets):
            raise IndexError(f"index {idx} is out of range for a ConcatDataset of length {len(self)}")
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order: `Subset(ds, idx)[i] == ds[idx[i]]`."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        if isinstance(indices, TensorBase):
            indices = indices.tolist()
        elif isinstance(indices, np.ndarray):
            indices = indices.tolist()
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        """A batch of samples (the DataLoader asks for whole batches when a dataset offers this)."""
        inner = getattr(self.dataset, "__getitems__", None)
        if callable(inner):
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence, generator=None) -> list:
    """Split `dataset` into non-overlapping random Subsets of the given lengths.

    `lengths` are ints summing to len(dataset), or fractions summing to 1: each
    split gets floor(n * fraction) and the remainder goes round-robin from the
    first split (PyTorch's rule). `generator`: see `tinygrad_lab.random`
    (None draws from tinygrad_lab's global seed)."""
    n = len(dataset)
    lengths = list(lengths)
    total = sum(lengths)
    if lengths and math.isclose(total, 1) and total <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
        lengths = sizes
    for i, length in enumerate(lengths):
        if not isinstance(length, numbers.Integral) or length < 0:
            raise ValueError(f"random_split: lengths must be non-negative ints or fractions summing to 1, "
                             f"got {lengths[i]!r} at index {i}")
    if sum(lengths) != n:
        raise ValueError(f"Sum of input lengths does not equal the length of the input dataset! "
                         f"(lengths {list(lengths)} sum to {sum(lengths)}, the dataset has {n} samples)")
    indices = numpy_generator(generator).permutation(n).tolist()
    return [Subset(dataset, indices[end - length:end]) for end, length in zip(accumulate(lengths), lengths)]
