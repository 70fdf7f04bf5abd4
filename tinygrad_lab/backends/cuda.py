"""The CUDA backend: CuPy arrays in GPU memory.

CuPy is imported only when a CUDA device is first asked for. Whether CUDA can
be used is found out once (`probe`): CuPy importable, a driver and a GPU
present, and a first kernel that compiles and runs. Every failure is kept as a
readable reason for `tinygrad_lab.cuda.is_available()` and `tinygrad-lab doctor`;
none of them is an exception until a CUDA tensor is actually asked for.

Ops run on the current CUDA device, as CuPy's do: a program with several GPUs
picks one with `tinygrad_lab.cuda.set_device(i)`.
"""
from __future__ import annotations

import importlib
import threading
from typing import Any, Callable

import numpy as np

from .base import Backend

MAX_PENDING_CHECKS = 64  # raise_if's checks kept unread at most (each holds a few small arrays)

INSTALL_HINT = ("install CuPy for your CUDA version: pip install 'tinygrad-lab[cuda]' (CUDA 12), "
                "or pip install cupy-cuda13x (CUDA 13)")


def probe(importer: Callable[[str], Any] = importlib.import_module) -> tuple[Any, int, str | None]:
    """(cupy module or None, number of GPUs, why CUDA is unusable or None): never raises."""
    try:
        cupy = importer("cupy")
    except Exception as e:  # ImportError, or a broken installation failing on import
        return None, 0, f"CuPy is not installed ({type(e).__name__}: {e}); {INSTALL_HINT}"
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as e:  # no driver, driver too old for the CUDA runtime, ...
        return None, 0, f"CuPy cannot reach an NVIDIA driver or GPU ({type(e).__name__}: {e})"
    if count == 0:
        return None, 0, "no NVIDIA GPU was found (CUDA reports 0 devices)"
    try:
        if int((cupy.arange(3) + 1).sum()) != 6:  # compiles and runs a first kernel
            return None, 0, "a first CUDA kernel ran but gave a wrong result"
    except Exception as e:  # e.g. NVRTC or cuBLAS libraries missing for this CuPy wheel
        return None, 0, f"CuPy failed to initialise CUDA ({type(e).__name__}: {e}); {INSTALL_HINT}"
    return cupy, count, None


class _CuPyGenerator:
    """CuPy's seeded RandomState behind the NumPy Generator methods the factories use."""

    def __init__(self, state):
        self._state = state

    def random(self, size, dtype=np.float64):
        return self._state.random_sample(size, dtype=dtype)

    def standard_normal(self, size, dtype=np.float64):
        return self._state.standard_normal(size, dtype=dtype)

    def integers(self, low, high, size, dtype=np.int64):
        return self._state.randint(low, high, size, dtype=dtype)

    def permutation(self, n: int):
        return self._state.permutation(n)

    def poisson(self, lam, size=None):
        return self._state.poisson(lam, size)


class _EventStopwatch:
    """Times GPU work with two CUDA events in the device's queue (a wall clock read around launches would
    time the launches); `seconds` waits for the end event, so reading it is the sync, not the timing."""

    def __init__(self, cupy, index: int):
        self._cupy, self._index = cupy, index
        with cupy.cuda.Device(index):
            self._start, self._end = cupy.cuda.Event(), cupy.cuda.Event()
            self._start.record()

    def stop(self) -> None:
        with self._cupy.cuda.Device(self._index):
            self._end.record()

    @property
    def seconds(self) -> float:
        self._end.synchronize()
        return self._cupy.cuda.get_elapsed_time(self._start, self._end) / 1e3


class CUDABackend(Backend):
    """NVIDIA GPUs through CuPy. `xp` is cupy once `check` has found CUDA usable."""

    name = "cuda"
    xp = None

    def __init__(self, importer: Callable[[str], Any] = importlib.import_module):
        self._importer = importer
        self._probed = False
        self.device_count = 0
        self.unavailable_reason: str | None = None
        self._peak: dict[int, int] = {}
        self._tracking = False
        self._checks = threading.local()  # per thread: the checks waiting for its next sync (raise_if)

    def status(self) -> tuple[bool, str | None]:
        """(usable, reason if not); probes CUDA on the first call only."""
        if not self._probed:
            self._probed = True
            cupy, self.device_count, self.unavailable_reason = probe(self._importer)
            if cupy is not None:
                self.xp = cupy
        return self.unavailable_reason is None, self.unavailable_reason

    def check(self, index: int | None) -> None:
        ok, reason = self.status()
        if not ok:
            raise RuntimeError(f"CUDA is not available: {reason}. Use device='cpu', or test "
                               f"tinygrad_lab.cuda.is_available() before asking for 'cuda'.")
        if index is not None and not 0 <= index < self.device_count:
            raise RuntimeError(f"CUDA error: invalid device ordinal: {self.name}:{index} asked for, but this machine "
                               f"has {self.device_count} GPU(s) ({self.name}:0 to {self.name}:{self.device_count - 1})")

    # ---- the array interface ----
    def asarray(self, obj, dtype=None, index: int = 0):
        with self.xp.cuda.Device(index):
            return self.xp.asarray(obj, dtype=dtype)

    def to_host(self, arr) -> np.ndarray:
        self.raise_pending()
        return self.xp.asnumpy(arr)

    def synchronize(self, index: int = 0) -> None:
        self.xp.cuda.Device(index).synchronize()
        self.raise_pending()

    def stopwatch(self, index: int = 0) -> _EventStopwatch:
        return _EventStopwatch(self.xp, index)

    # ---- checks read at the next sync, as a CUDA kernel's assert surfaces there
    def may_be_true(self, condition) -> bool:
        return True  # not computed: reading it would stall the device

    def raise_if(self, bad, error, index: int = 0) -> None:
        pending = self._pending()
        pending.append((index, bad, error))
        if len(pending) >= MAX_PENDING_CHECKS:  # a program that never syncs: read them now and then
            self.raise_pending()

    def _pending(self) -> list:
        pending = getattr(self._checks, "pending", None)
        if pending is None:
            pending = self._checks.pending = []
        return pending

    def raise_pending(self) -> None:
        """Read this thread's pending checks (one small read per device) and raise the first that failed."""
        pending = self._pending()
        if not pending:
            return
        self._checks.pending = []
        for dev in sorted({i for i, _, _ in pending}):
            checks = [(bad, error) for i, bad, error in pending if i == dev]
            with self.xp.cuda.Device(dev):
                failed = self.xp.asnumpy(self.xp.stack([bad for bad, _ in checks]))
            for (_, error), f in zip(checks, failed):
                if f:
                    e = error()
                    raise type(e)(f"{e} (found at the next sync of {self.name}:{dev}: the device checks without "
                                  f"waiting, so the op that failed ran earlier)") from None

    def generator(self, seed: int, index: int = 0) -> _CuPyGenerator:
        with self.xp.cuda.Device(index):
            return _CuPyGenerator(self.xp.random.RandomState(seed))

    def diagonal(self, arr, offset, axis1, axis2):
        return self.xp.diagonal(arr, offset, axis1, axis2)  # CuPy's diagonal views are writable already

    def erf(self, arr):
        return self._importer("cupyx.scipy.special").erf(arr)

    def special(self, name: str):
        return getattr(self._importer("cupyx.scipy.special"), name)

    def index_add(self, target, key, values) -> None:
        self._importer("cupyx").scatter_add(target, key, values)

    def index_max(self, target, key, values) -> None:
        self._importer("cupyx").scatter_max(target, key, values)

    def elementwise_kernel(self, in_params, out_params, operation, name, index=0):
        # --fmad=false: by default nvcc contracts a*b+c into one fused multiply-add, rounded once, where
        # the eager ops (one kernel each) round twice; a fused chain then differs from eager in the last bit
        with self.xp.cuda.Device(index):
            return self.xp.ElementwiseKernel(in_params, out_params, operation, name=name, options=("--fmad=false",))

    # ---- memory (CuPy's pool), for tinygrad_lab.cuda ----
    def track_peak_memory(self, on: bool = True) -> None:
        """Note the peak of used bytes per device from now on (on=False: stop). CuPy's pool keeps the
        current figure only, so the peak needs a Python allocator that runs on every allocation: it is
        installed only while someone wants peaks (reset_peak_memory_stats starts it), not for every program."""
        cupy = self.xp
        if not on:
            cupy.cuda.set_allocator(cupy.get_default_memory_pool().malloc)
            self._tracking = False
            return
        if self._tracking:
            return
        pool = cupy.get_default_memory_pool()
        peak = self._peak

        def malloc(nbytes: int):
            mem = pool.malloc(nbytes)
            used = pool.used_bytes()
            dev = mem.device_id
            if used > peak.get(dev, 0):
                peak[dev] = used
            return mem

        cupy.cuda.set_allocator(malloc)
        self._tracking = True

    def memory_allocated(self, index: int) -> int:
        with self.xp.cuda.Device(index):
            return int(self.xp.get_default_memory_pool().used_bytes())

    def memory_reserved(self, index: int) -> int:
        with self.xp.cuda.Device(index):
            return int(self.xp.get_default_memory_pool().total_bytes())

    def max_memory_allocated(self, index: int) -> int:
        """The peak since reset_peak_memory_stats (tracking starts there, or here on the first call)."""
        self.track_peak_memory()
        return max(self._peak.get(index, 0), self.memory_allocated(index))

    def reset_peak_memory_stats(self, index: int) -> None:
        self.track_peak_memory()
        self._peak[index] = self.memory_allocated(index)

    def empty_cache(self) -> None:
        self.xp.get_default_memory_pool().free_all_blocks()
        self.xp.get_default_pinned_memory_pool().free_all_blocks()
