"""`tinygrad_lab.multiprocessing`: Python's multiprocessing, with tensors shared between
processes, as torch.multiprocessing.

Everything of the standard library's module is here (Process, Queue, Pool, get_context,
set_start_method, ...). Importing it teaches multiprocessing's pickler to send tensors as
handles to shared memory (see `reductions.py`), so a tensor put on a Queue or passed to a
Process keeps sharing its memory with the sender: in-place updates on one side are seen on
the other, with the fork and the spawn start methods alike. `Tensor.share_memory_()` and
`Module.share_memory()` move data into shared memory beforehand (needed with fork, where
a child inherits ordinary memory only as a private copy).

    import tinygrad_lab.multiprocessing as mp
    model.share_memory()
    workers = [mp.Process(target=train, args=(model,)) for _ in range(2)]   # Hogwild
"""
from multiprocessing import *  # noqa: F401,F403
from multiprocessing import __all__ as _mp_all

from .reductions import init_reductions
from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes

__all__ = list(_mp_all) + ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                           "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy",
                           "get_all_sharing_strategies"]

_STRATEGIES = ("file_descriptor",)


def get_all_sharing_strategies() -> set:
    """How tensors can be shared: by passing file descriptors of anonymous memory (PyTorch's default on Linux)."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _STRATEGIES[0]


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"sharing strategy {new_strategy!r} is not supported by tinygrad_lab; the only one is "
                         f"'file_descriptor'")


init_reductions()
