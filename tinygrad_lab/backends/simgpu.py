"""A simulated GPU for lessons on machines without one: the device type "simgpu".

    from tinygrad_lab.backends import simgpu     # registers the device; its functions mirror torch.cuda's
    a = tl.randn(2048, 2048, device="simgpu")
    b = a @ a                                    # returns at once: the matmul is only queued
    simgpu.synchronize()                         # waits until the queued work is done

It is a teaching device, not a fast one: NumPy does the work, on one worker thread that
plays the GPU's stream. What it shows is real, though:

- launches are asynchronous. Elementwise ufuncs and matmul return a new array at once,
  its values still being computed; the work runs later, in launch order, on the stream.
  Anything that reads values (printing, .item(), copying to the host, any other NumPy
  function or method) first waits for the stream, as a GPU's device-to-host copy does.
  So a timer without `synchronize()` measures the launch, and with it the work;
- a kernel's error surfaces later, at the next synchronisation, as CUDA's do;
- memory is counted as PyTorch's caching allocator reports it: `memory_allocated` is the
  bytes of live arrays in 512-byte blocks, freed blocks stay cached (`memory_reserved`)
  and are reused for the same size, and `empty_cache` gives the cached ones back. (The
  cache is a model: the host memory itself is freed at once.)
"""
from __future__ import annotations

import queue
import threading
import weakref

import numpy as np

from . import register_backend
from .base import Backend

BLOCK = 512  # bytes: allocations are rounded up to whole blocks, as in PyTorch's allocator


class _Stream:
    """One worker thread running queued kernels in order; the first error is kept for synchronize()."""

    def __init__(self) -> None:
        self._queue: queue.Queue = queue.Queue()
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name="simgpu-stream", daemon=True).start()

    def _run(self) -> None:
        while True:
            fn, args, kwargs = self._queue.get()
            try:
                if self._error is None:
                    with np.errstate(all="ignore"):
                        fn(*args, **kwargs)
            except BaseException as e:  # noqa: BLE001  (reported at the next synchronize)
                self._error = e
            del fn, args, kwargs  # the arrays are the program's again: freeing them frees device memory
            self._queue.task_done()

    def launch(self, fn, *args, **kwargs) -> None:
        self._queue.put((fn, args, kwargs))

    def synchronize(self) -> None:
        self._queue.join()
        if self._error is not None:
            e, self._error = self._error, None
            raise RuntimeError(f"simgpu: a queued kernel failed ({type(e).__name__}: {e}); like a CUDA error, "
                               f"it is reported at the next synchronisation, not where it was launched") from e


class _Allocator:
    """Bytes in use and cached, in 512-byte blocks, as torch.cuda's memory figures report them."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # a collection inside track() may free (and so re-enter) on this thread
        self.allocated = self.peak = self.reserved = 0
        self._cached: dict[int, int] = {}  # block size -> how many freed blocks of that size are cached

    def track(self, arr: np.ndarray) -> None:
        size = -(-max(arr.nbytes, 1) // BLOCK) * BLOCK
        with self._lock:
            if self._cached.get(size):
                self._cached[size] -= 1
            else:
                self.reserved += size
            self.allocated += size
            self.peak = max(self.peak, self.allocated)
        weakref.finalize(arr, self._free, size).atexit = False

    def _free(self, size: int) -> None:
        with self._lock:
            self.allocated -= size
            self._cached[size] = self._cached.get(size, 0) + 1

    def empty_cache(self) -> None:
        with self._lock:
            self.reserved -= sum(size * n for size, n in self._cached.items())
            self._cached.clear()


_stream = _Stream()
_allocator = _Allocator()


def _plain(x):
    return x.view(np.ndarray) if isinstance(x, SimArray) else x


def adopt(arr) -> "SimArray":
    """A host array taken onto the device (tracked by the allocator; no copy)."""
    if not isinstance(arr, np.ndarray):
        arr = np.asarray(arr)
    if isinstance(arr, SimArray):
        return arr
    if arr.base is None:
        _allocator.track(arr)
    return arr.view(SimArray)


def _matmul_shape(a: tuple, b: tuple) -> tuple:
    if not a or not b:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2, b2 = (1,) + a if len(a) == 1 else a, b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size {b2[-2]} is "
                         f"different from {a2[-1]})")
    out = np.broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    return out[:-2] + out[-2:-1] * (len(a) > 1) + out[-1:] * (len(b) > 1)


def _queued(ufunc, inputs: list, kwargs: dict) -> "SimArray":
    """Launch ufunc(*inputs) on the stream: its output array is made now, its values later."""
    probes = [np.ones((1,) * (2 if ufunc is np.matmul else 1), x.dtype) if isinstance(x, np.ndarray) else x
              for x in inputs]
    with np.errstate(all="ignore"):
        dtype = np.result_type(ufunc(*probes, **kwargs))  # dtype and casting rules, checked now
    shape = (_matmul_shape(np.shape(inputs[0]), np.shape(inputs[1])) if ufunc is np.matmul
             else np.broadcast_shapes(*(np.shape(x) for x in inputs)))
    out = adopt(np.empty(shape, dtype))
    _stream.launch(ufunc, *inputs, out=out.view(np.ndarray), **kwargs)
    return out


class SimArray(np.ndarray):
    """The simulated GPU's arrays: NumPy arrays whose values may still be being computed."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [_plain(x) for x in inputs]
        if (method == "__call__" and ufunc.nout == 1 and "out" not in kwargs and "where" not in kwargs
                and (ufunc.signature is None or ufunc is np.matmul)):
            return _queued(ufunc, plain, kwargs)
        _stream.synchronize()
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*plain, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return tuple(map(adopt, result)) if isinstance(result, tuple) else (
            adopt(result) if isinstance(result, np.ndarray) else result)

    def __array_function__(self, func, types, args, kwargs):
        _stream.synchronize()  # any other NumPy function reads values: wait for them
        result = func(*(_plain(a) for a in args), **kwargs) if func is not np.concatenate else func(
            [_plain(a) for a in args[0]], *args[1:], **kwargs)
        return adopt(result) if isinstance(result, np.ndarray) else result

    def reshape(self, *shape, **kwargs):
        out = np.ndarray.reshape(self, *shape, **kwargs)  # a view reads nothing: no need to wait
        if np.may_share_memory(out, self):
            return out
        _stream.synchronize()
        return adopt(np.ndarray.reshape(_plain(self), *shape, **kwargs).copy())


_SAFE = {"view", "transpose", "swapaxes", "squeeze", "reshape"}
_READERS = ["__getitem__", "__setitem__", "__iter__", "__bool__", "__float__", "__int__", "__index__", "__complex__",
            "__repr__", "__str__", "__format__", "__reduce__", "__reduce_ex__", "__copy__", "__deepcopy__",
            "__array__", "__contains__"]


def _after_sync(name: str):
    method = getattr(np.ndarray, name)

    def wrapper(self, *args, **kwargs):
        _stream.synchronize()
        return method(self, *args, **kwargs)

    wrapper.__name__ = name
    return wrapper


for _name in [n for n in dir(np.ndarray) if not n.startswith("_") and callable(getattr(np.ndarray, n))] + _READERS:
    if _name not in _SAFE:
        setattr(SimArray, _name, _after_sync(_name))


class _Namespace:
    """NumPy as the ops see it on this device: functions that make arrays make SimArrays."""

    def __getattr__(self, name: str):
        attr = getattr(np, name)
        if isinstance(attr, np.ufunc) or not callable(attr) or isinstance(attr, type):
            return attr

        def make(*args, **kwargs):
            result = attr(*args, **kwargs)
            return adopt(result) if isinstance(result, np.ndarray) else result

        return make


class _Generator:
    """NumPy's seeded generator, its arrays made on the device."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.Generator(np.random.PCG64(seed))

    def __getattr__(self, name: str):
        method = getattr(self._rng, name)
        return lambda *a, **k: adopt(np.asarray(method(*a, **k)))


class SimGPUBackend(Backend):
    name = "simgpu"
    xp = _Namespace()

    def check(self, index):
        if index not in (None, 0):
            raise RuntimeError(f"simgpu has one device, simgpu:0, not simgpu:{index}")

    def asarray(self, obj, dtype=None, index: int = 0):
        _stream.synchronize()
        return adopt(np.array(_plain(obj) if isinstance(obj, np.ndarray) else obj, dtype=dtype, copy=True))

    def to_host(self, arr):
        _stream.synchronize()
        return np.array(_plain(arr), copy=True)

    def synchronize(self, index: int = 0) -> None:
        _stream.synchronize()

    def generator(self, seed: int, index: int = 0):
        return _Generator(seed)

    def erf(self, arr):
        from scipy.special import erf
        _stream.synchronize()
        return adopt(erf(_plain(arr)))

    def index_add(self, target, key, values) -> None:
        _stream.synchronize()
        np.add.at(_plain(target), key, _plain(values))


register_backend(SimGPUBackend())


# ---- torch.cuda's functions for this device -------------------------------------------------
def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def synchronize(device=None) -> None:
    """Wait until every queued launch has run (and raise the first error one of them hit)."""
    _stream.synchronize()


def memory_allocated(device=None) -> int:
    """Bytes held by live arrays on the device, in 512-byte blocks."""
    return _allocator.allocated


def max_memory_allocated(device=None) -> int:
    """The peak of memory_allocated since start or reset_peak_memory_stats()."""
    return _allocator.peak


def memory_reserved(device=None) -> int:
    """Bytes the allocator holds: live blocks and freed ones kept for reuse."""
    return _allocator.reserved


def reset_peak_memory_stats(device=None) -> None:
    _allocator.peak = _allocator.allocated


def empty_cache() -> None:
    """Give the cached free blocks back: memory_reserved falls, memory_allocated does not."""
    _allocator.empty_cache()
