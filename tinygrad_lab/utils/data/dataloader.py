"""The DataLoader: a sampler picks indices, the dataset gives samples, `collate_fn`
makes a batch. Everything runs in the main process, one batch at a time
(`num_workers` must be 0): simple to step through in a debugger or a notebook.
"""
from __future__ import annotations

import math
import sys
from collections.abc import Callable
from itertools import islice

import numpy as np

from ... import seams
from ...autograd.tensor_base import TensorBase
from .collate import default_collate, default_convert
from .dataset import IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def _gather_batch(dataset, indices):
    """One indexing op per tensor for a batch of a plain TensorDataset (or Subsets of one)
    under default_collate: the same values, dtypes and shapes as indexing each sample and
    stacking, ~50x faster. None when it does not apply (subclasses, tensors that require grad)."""
    while type(dataset) is Subset:  # exact types: a subclass may override __getitem__
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset:
        return None
    if not all(isinstance(t, TensorBase) and not t.requires_grad for t in dataset.tensors):
        return None
    key = np.asarray(indices, dtype=np.int64)
    return [t[key] for t in dataset.tensors]


def fetch_batch(dataset, indices, collate_fn):
    """The batch of the samples at `indices`: fetched (`__getitems__` when the dataset has it) and
    collated. The "batch" seam (tinygrad_lab.seams): a learner's batching may run in its place."""
    if collate_fn is default_collate:
        batch = _gather_batch(dataset, indices)
        if batch is not None:
            return batch
    getitems = getattr(dataset, "__getitems__", None)
    samples = getitems(indices) if callable(getitems) else [dataset[i] for i in indices]
    return collate_fn(samples)


seams.register("batch", sys.modules[__name__], "fetch_batch", doc=(
    "How the DataLoader makes a batch (in the process that iterates it): fetch_batch(dataset, indices, "
    "collate_fn) -> the batch of the samples dataset[i] for i in indices (e.g. [inputs, targets], each "
    "stacked along a new first dim); collate_fn is the loader's own, to use or not."))


class DataLoader:
    """Batches of samples from `dataset`, as `torch.utils.data.DataLoader`.

    - `shuffle=True`: a new random order each epoch from `generator`; without one it
      draws from tinygrad_lab's global seed, so `tl.manual_seed(s)` replays every epoch.
      `generator` may be a `tinygrad_lab.utils.data.Generator`, a `numpy.random.Generator`
      or any object with `manual_seed`/`initial_seed` (see `generator.py`).
    - `sampler` / `batch_sampler` replace the index order / the batching.
    - `batch_size=None` turns batching off (each sample goes through `default_convert`).
    - `len(loader)` is the number of batches (for an IterableDataset, from its `__len__`).

    Deviations: no worker processes (`num_workers` must be 0); `pin_memory` is accepted and
    ignored (nothing to pin: host arrays are NumPy's).
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn: Callable | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "") -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if num_workers != 0:
            raise ValueError(f"num_workers={num_workers}: tinygrad_lab's DataLoader has no worker processes; use "
                             f"num_workers=0 (the default): batches are loaded in the main process, one at a time")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing; tinygrad_lab loads "
                             "in the main process (num_workers=0), so leave prefetch_factor=None")
        if persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0 (tinygrad_lab has no worker processes)")
        if multiprocessing_context is not None:
            raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                             "but got num_workers=0")

        if isinstance(dataset, IterableDataset):
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if isinstance(dataset, IterableDataset):
            if batch_size is not None:  # validates batch_size/drop_last as for map-style datasets
                BatchSampler([], batch_size, drop_last)
        else:
            if sampler is None:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
            if batch_size is not None and batch_sampler is None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.num_workers = 0
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        if isinstance(self.dataset, IterableDataset):
            return self.batch_size is not None
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> "_DataLoaderIter":
        if isinstance(self.dataset, IterableDataset):
            return _DataLoaderIter(self, self._iter_stream())
        return _DataLoaderIter(self, self._iter_map())

    def _iter_map(self):
        dataset, collate = self.dataset, self.collate_fn
        if not self._auto_collation:
            for index in self.sampler:
                yield collate(dataset[index])
            return
        for indices in self.batch_sampler:
            yield fetch_batch(dataset, indices, collate)

    def _iter_stream(self):
        it = iter(self.dataset)
        if not self._auto_collation:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while True:
            samples = list(islice(it, self.batch_size))
            if not samples or (self.drop_last and len(samples) < self.batch_size):
                return
            yield self.collate_fn(samples)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # TypeError if the stream has no length, as in PyTorch
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        return len(self._index_sampler)

    def __repr__(self) -> str:
        return (f"DataLoader(dataset={type(self.dataset).__name__}, batch_size={self.batch_size}, "
                f"sampler={type(self.sampler).__name__}, drop_last={self.drop_last})")


class _DataLoaderIter:
    """One pass over a DataLoader (an epoch): `next()` gives the next batch."""

    def __init__(self, loader: DataLoader, batches) -> None:
        self._loader = loader
        self._batches = batches

    def __iter__(self) -> "_DataLoaderIter":
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self) -> int:
        return len(self._loader)
