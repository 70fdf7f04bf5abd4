"""Host arrays in memory that several processes map: the storage of shared CPU tensors
(`Tensor.share_memory_()`, `tinygrad_lab.multiprocessing`).

The memory is an anonymous memory file (Linux `memfd_create`, elsewhere an unlinked
temporary file) mapped with mmap. It has no name, so nothing can leak: the kernel frees
it when the last process holding a mapping or its file descriptor lets go. Another
process gets it by receiving the descriptor (multiprocessing's `DupFd`: passed to a
spawned child at start, or over a Unix socket for a Queue), which is PyTorch's
"file_descriptor" sharing strategy; a forked child inherits the mapping itself.
"""
from __future__ import annotations

import mmap
import os
import tempfile
import weakref

import numpy as np


class SharedBlock(mmap.mmap):
    """A mapping of an anonymous memory file; `fd` is kept so the block can be sent to another process."""

    fd: int
    address: int


def _anonymous_file(nbytes: int) -> int:
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("tinygrad_lab-shared")
    else:  # macOS and others: a temporary file that is already unlinked
        with tempfile.TemporaryFile() as f:
            fd = os.dup(f.fileno())
    os.ftruncate(fd, nbytes)
    return fd


def _map(fd: int, nbytes: int) -> SharedBlock:
    """Map `fd` (which the block then owns: closed when the block is collected)."""
    block = SharedBlock(fd, nbytes)
    block.fd = fd
    block.address = np.frombuffer(block, np.uint8).ctypes.data
    weakref.finalize(block, os.close, fd)
    return block


def empty(shape: tuple, dtype) -> np.ndarray:
    """An uninitialised array in new shared memory."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    block = _map(_anonymous_file(max(nbytes, 1)), max(nbytes, 1))  # mmap cannot map 0 bytes
    return np.ndarray(shape, dtype, buffer=block)


def copy_to_shared(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of `arr` in new shared memory."""
    out = empty(arr.shape, arr.dtype)
    out[...] = arr
    return out


def block_of(arr: np.ndarray) -> SharedBlock | None:
    """The shared block an array's memory lies in (None for ordinary memory)."""
    base = arr
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return base if isinstance(base, SharedBlock) else None


def is_shared(arr) -> bool:
    return isinstance(arr, np.ndarray) and block_of(arr) is not None


def describe(arr: np.ndarray, fd_wrapper) -> tuple:
    """What another process needs to map `arr` (which must be shared): the block's descriptor
    wrapped by `fd_wrapper` (multiprocessing's DupFd), its size, and the array's layout in it."""
    block = block_of(arr)
    offset = arr.__array_interface__["data"][0] - block.address
    return fd_wrapper(block.fd), len(block), arr.dtype.str, arr.shape, arr.strides, offset


def rebuild(fd: int, nbytes: int, dtype: str, shape: tuple, strides: tuple, offset: int) -> np.ndarray:
    """The array `describe` described, mapped from a received descriptor (which it takes over)."""
    return np.ndarray(shape, np.dtype(dtype), buffer=_map(fd, nbytes), offset=offset, strides=strides)
