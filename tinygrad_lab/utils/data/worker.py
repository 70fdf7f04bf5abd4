"""What runs inside a DataLoader worker process, and what it sends back.

A worker takes tasks `(task_id, indices)` from its own index queue, assembles each
batch with the same function as the main process (`dataloader.fetch_batch`) and puts
`(task_id, batch)` on the shared result queue: tensors travel as shared memory
(tinygrad_lab.multiprocessing), not as pickled copies. An exception travels as an
`ExceptionWrapper` holding the worker's traceback, re-raised by the main process.
A worker stops on `None`, and by itself when its parent process is gone.
"""
from __future__ import annotations

import os
import queue
import random
import signal
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ... import random as _random

POLL_SECONDS = 1.0  # how often a waiting worker checks that its parent is alive, and the main process its workers


@dataclass(frozen=True)
class WorkerInfo:
    """Which worker this is (`get_worker_info()` inside a worker): its id, how many there are,
    its seed (base_seed + id) and its copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's WorkerInfo inside a DataLoader worker process; None in the main process.
    An IterableDataset uses it to give each worker its own share of the stream."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, with its traceback as text (tracebacks do not pickle)."""

    def __init__(self, where: str) -> None:
        exc_type, exc = sys.exc_info()[:2]
        self.exc_type = exc_type
        self.message = f"Caught {exc_type.__name__} {where}.\nOriginal {''.join(traceback.format_exc())}"

    def reraise(self):
        """Raise the worker's exception type with the worker's traceback in its message
        (RuntimeError when that type cannot be made from a message alone)."""
        try:
            exc = self.exc_type(self.message)
        except Exception:
            exc = RuntimeError(self.message)
        raise exc


class IterationEnd:
    """An IterableDataset's stream ended in worker `worker_id`."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class Resume:
    """Start the next epoch (persistent workers): an IterableDataset's stream restarts."""


def _seed_everything(base_seed: int, worker_id: int) -> int:
    """Seed Python's, NumPy's and tinygrad_lab's random numbers in a worker, as PyTorch does."""
    seed = base_seed + worker_id
    random.seed(seed)
    _random.manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(1)[0])
    return seed


def worker_loop(fetcher, index_queue, result_queue, base_seed: int, init_fn, worker_id: int,
                num_workers: int) -> None:
    """The body of worker `worker_id`: `fetcher(stream, indices)` makes one batch (dataloader.Fetcher)."""
    global _worker_info
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt (Ctrl-C, a notebook's stop) is the main process's to handle
    parent = os.getppid()
    seed = _seed_everything(base_seed, worker_id)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, fetcher.dataset)
    init_error = stream = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        stream = fetcher.new_stream()
    except Exception:
        init_error = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
    while True:
        try:
            task = index_queue.get(timeout=POLL_SECONDS)
        except queue.Empty:
            if os.getppid() != parent:  # the main process died: nobody will ask for more
                break
            continue
        if task is None:
            break
        if isinstance(task, Resume):
            stream = fetcher.new_stream()
            result_queue.put((task, None))
            continue
        task_id, indices = task
        result_queue.put((task_id, init_error or _run(fetcher, stream, indices, worker_id)))
    result_queue.cancel_join_thread()  # exit even when nobody reads what is left in the pipe


def _run(fetch, stream, indices, worker_id: int):
    try:
        return fetch(stream, indices)
    except StopIteration:
        return IterationEnd(worker_id)
    except Exception:
        return ExceptionWrapper(f"in DataLoader worker process {worker_id}")
