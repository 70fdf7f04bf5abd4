"""The DataLoader: a sampler picks indices, the dataset gives samples, `collate_fn`
makes a batch.

With `num_workers=0` (the default) everything runs in the main process, one batch at
a time: simple to step through in a debugger or a notebook. With `num_workers=N`, N
worker processes make the batches (`worker.py`) while the main process trains; the
main process hands out the batches' indices round-robin and gives the batches back in
sampler order, so the batches are the same, in the same order, as with `num_workers=0`.
One function assembles a batch in both cases: `fetch_batch`.
"""
from __future__ import annotations

import copy
import math
import multiprocessing
import queue
import sys
import time
import weakref
from collections.abc import Callable
from itertools import islice

import numpy as np

from ... import multiprocessing as _mp  # noqa: F401  (tensors cross processes as shared memory)
from ... import seams
from ...autograd.tensor_base import TensorBase
from ...random import numpy_generator
from .collate import default_collate, default_convert
from .dataset import IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .worker import POLL_SECONDS, ExceptionWrapper, IterationEnd, Resume, worker_loop


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


def fetch_batch(dataset, indices, collate_fn: Callable):
    """The batch of a map-style dataset at `indices`: its samples, collated. The one place a
    batch is assembled, in the main process and in the workers alike; the "batch" seam
    (tinygrad_lab.seams): a learner's batching may run in its place."""
    if collate_fn is default_collate:
        batch = _gather_batch(dataset, indices)
        if batch is not None:
            return batch
    getitems = getattr(dataset, "__getitems__", None)
    samples = getitems(indices) if callable(getitems) else [dataset[i] for i in indices]
    return collate_fn(samples)


seams.register("batch", sys.modules[__name__], "fetch_batch", doc=(
    "How the DataLoader makes a batch: fetch_batch(dataset, indices, collate_fn) -> the batch of the samples "
    "dataset[i] for i in indices (e.g. [inputs, targets], each stacked along a new first dim); collate_fn is "
    "the loader's own, to use or not. A replacement runs where the loader runs in this thread (num_workers=0); "
    "worker processes run the engine's own."))


class Fetcher:
    """Makes one batch (or one sample, without batching) of a DataLoader's dataset: from
    `indices` for a map-style dataset, from the next samples of `stream` for an IterableDataset
    (StopIteration at its end). Picklable, so worker processes get their own."""

    def __init__(self, dataset, auto_collation: bool, collate_fn: Callable, batch_size, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn
        self.batch_size, self.drop_last = batch_size, drop_last

    def new_stream(self):
        """A fresh pass over an IterableDataset (None for a map-style dataset)."""
        return iter(self.dataset) if isinstance(self.dataset, IterableDataset) else None

    def __call__(self, stream, indices):
        if stream is None:
            if self.auto_collation:
                return fetch_batch(self.dataset, indices, self.collate_fn)
            return self.collate_fn(self.dataset[indices])
        if not self.auto_collation:
            return self.collate_fn(next(stream))
        samples = list(islice(stream, self.batch_size))
        if not samples or (self.drop_last and len(samples) < self.batch_size):
            raise StopIteration
        return self.collate_fn(samples)


class DataLoader:
    """Batches of samples from `dataset`, as `torch.utils.data.DataLoader`.

    - `shuffle=True`: a new random order each epoch from `generator`; without one it
      draws from tinygrad_lab's global seed, so `tl.manual_seed(s)` replays every epoch.
      `generator` may be a `tinygrad_lab.Generator`, a `numpy.random.Generator`
      or any object with `manual_seed`/`initial_seed` (see `tinygrad_lab.random`).
    - `sampler` / `batch_sampler` replace the index order / the batching.
    - `batch_size=None` turns batching off (each sample goes through `default_convert`).
    - `len(loader)` is the number of batches (for an IterableDataset, from its `__len__`).

    - `num_workers=N` > 0: N worker processes make batches ahead (`prefetch_factor` each),
      started with `multiprocessing_context` (a context or a start-method name; default: the
      platform's); `worker_init_fn(worker_id)` runs first in each; `get_worker_info()` tells a
      worker who it is; its seed is `base_seed + worker_id`, as in PyTorch. With
      `persistent_workers=True` the workers stay up between epochs. A worker's exception is
      raised here with its traceback; a worker that dies is an error within a second or so,
      and `timeout` > 0 bounds the wait for one batch. Breaking out of the loop, an exception
      or an interrupt stops the workers (the iterator shuts them down when it is dropped).

    Deviations: `pin_memory` is accepted and ignored (nothing to pin: host arrays are NumPy's).
    The workers' base seed is derived from the state of `generator` (else the global stream)
    and the epoch, without drawing from it (PyTorch draws one number each epoch, even with
    `num_workers=0`): adding workers changes no other random number of the run.
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn: Callable | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "") -> None:
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers, multiprocessing_context)

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
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers > 0 else prefetch_factor
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = (multiprocessing.get_context(multiprocessing_context)
                                        if isinstance(multiprocessing_context, str) else multiprocessing_context)
        self._iterator = None  # the persistent workers' iterator
        self._epochs = 0       # worker starts so far: mixed into the workers' base seed
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

    def _fetcher(self) -> Fetcher:
        return Fetcher(self.dataset, self._auto_collation, self.collate_fn, self.batch_size, self.drop_last)

    def __iter__(self):
        if self.num_workers == 0:
            return _DataLoaderIter(self, self._batches())
        if not self.persistent_workers:
            return _MultiProcessIter(self)
        if self._iterator is None or self._iterator._closed:
            self._iterator = _MultiProcessIter(self)
        else:
            self._iterator._reset(resume=True)
        return self._iterator

    def _batches(self):
        fetch = self._fetcher()
        stream = fetch.new_stream()
        if stream is not None:
            try:
                while True:
                    yield fetch(stream, None)
            except StopIteration:
                return
        for indices in self._index_sampler:
            yield fetch(None, indices)

    def _base_seed(self) -> int:
        """The workers' base seed: a copy of the generator's stream draws it, mixed with the epoch,
        so that the loader's own draws (the shuffle) are the same as with num_workers=0."""
        draw = int(copy.deepcopy(numpy_generator(self.generator)).integers(2 ** 63))
        self._epochs += 1
        words = np.random.SeedSequence([draw, self._epochs]).generate_state(2, np.uint32)
        return (int(words[0]) << 31) ^ int(words[1])

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


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers, context) -> None:
    if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing. let num_workers > 0 to "
                         "enable multiprocessing, otherwise set prefetch_factor to None.")
    if prefetch_factor is not None and (not isinstance(prefetch_factor, int) or prefetch_factor < 1):
        raise ValueError(f"prefetch_factor should be a positive integer, got {prefetch_factor!r}")
    if num_workers == 0 and persistent_workers:
        raise ValueError("persistent_workers option needs num_workers > 0")
    _check_context(num_workers, context)


def _check_context(num_workers, context) -> None:
    if num_workers == 0 and context is not None:
        raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                         "but got num_workers=0")
    if isinstance(context, str) and context not in multiprocessing.get_all_start_methods():
        raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                         f"{multiprocessing.get_all_start_methods()!r}, but got multiprocessing_context={context!r}")


class _DataLoaderIter:
    """One pass over a DataLoader (an epoch) in the main process: `next()` gives the next batch."""

    def __init__(self, loader: DataLoader, batches) -> None:
        self._loader = loader
        self._batches = batches

    def __iter__(self) -> "_DataLoaderIter":
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self) -> int:
        return len(self._loader)


class _MultiProcessIter:
    """One pass over a DataLoader with worker processes (all passes, with persistent workers).

    Up to `prefetch_factor` tasks per worker are out at any time, sent round-robin; results
    come back in any order and are given out in task order. An IterableDataset's worker
    that reports the end of its stream gets no more tasks."""

    def __init__(self, loader: DataLoader) -> None:
        self._closed = True  # until the workers exist
        # what it needs of the loader, not the loader: a persistent loader holds its iterator, and
        # dropping the loader must drop the iterator, which stops the workers
        self._len = weakref.WeakMethod(loader.__len__)
        self._index_sampler = None if isinstance(loader.dataset, IterableDataset) else loader._index_sampler
        self._persistent, self._timeout, self._prefetch = (loader.persistent_workers, loader.timeout,
                                                           loader.prefetch_factor)
        self._n = n = loader.num_workers
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._result_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        fetcher, base_seed = loader._fetcher(), loader._base_seed()
        for i in range(n):
            index_queue = ctx.Queue()
            w = ctx.Process(target=worker_loop, daemon=True, args=(
                fetcher, index_queue, self._result_queue, base_seed, loader.worker_init_fn, i, n))
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
            self._closed = False
        self._reset(resume=False)

    def _reset(self, resume: bool) -> None:
        """Start a pass: a fresh sampler order, every worker active, the first tasks sent."""
        self._tasks = None if self._index_sampler is None else iter(self._index_sampler)
        self._sent = self._given = 0
        self._owner: dict = {}    # task id -> worker, for the tasks sent and not yet given out
        self._arrived: dict = {}  # task id -> result that came early
        self._active = list(range(self._n))
        self._turn = 0
        if resume:
            for q in self._index_queues:
                q.put(Resume())
            for _ in range(self._n):  # every worker has restarted its stream before the first task
                while not isinstance(self._receive()[0], Resume):
                    pass
        for _ in range(self._prefetch * self._n):
            self._send()

    def _send(self) -> None:
        if not self._active:
            return
        indices = None
        if self._tasks is not None:
            indices = next(self._tasks, None)
            if indices is None:
                return
        worker = self._active[self._turn % len(self._active)]
        self._turn += 1
        self._index_queues[worker].put((self._sent, indices))
        self._owner[self._sent] = worker
        self._sent += 1

    def __iter__(self) -> "_MultiProcessIter":
        return self

    def __len__(self) -> int:
        return self._len()()

    def __next__(self):
        while self._given < self._sent:
            task = self._given
            while task not in self._arrived:
                task_id, data = self._receive()
                self._arrived[task_id] = data
            data = self._arrived.pop(task)
            worker = self._owner.pop(task)
            self._given += 1
            if isinstance(data, IterationEnd):
                if worker in self._active:
                    self._active.remove(worker)
                continue
            self._send()
            if isinstance(data, ExceptionWrapper):
                if not self._persistent:  # the traceback keeps this iterator alive: stop the workers now
                    self._shutdown()
                data.reraise()
            return data
        if not self._persistent:
            self._shutdown()
        raise StopIteration

    def _receive(self) -> tuple:
        """The next (task id, result) from any worker; an error if a worker died or `timeout` passed."""
        timeout = self._timeout
        deadline = time.monotonic() + timeout if timeout > 0 else None
        while True:
            wait = POLL_SECONDS if deadline is None else min(POLL_SECONDS, max(deadline - time.monotonic(), 0))
            try:
                return self._result_queue.get(timeout=wait)
            except queue.Empty:
                dead = [w for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown()
                    pids = ", ".join(str(w.pid) for w in dead)
                    codes = ", ".join(str(w.exitcode) for w in dead)
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly "
                                       f"(exit code(s) {codes})") from None
                if deadline is not None and time.monotonic() >= deadline:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds") from None

    def _shutdown(self) -> None:
        """Stop the workers: ask, wait a little, then terminate; no process is left behind."""
        if self._closed:
            return
        self._closed = True
        for q in self._index_queues:
            q.put(None)
        for w in self._workers:
            w.join(timeout=5 * POLL_SECONDS)
            if w.is_alive():
                w.terminate()
                w.join()
        for q in [*self._index_queues, self._result_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        self._shutdown()
