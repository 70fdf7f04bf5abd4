"""The libraries a workload runs on, one `Runtime` per (library, device).

Two kinds: *array* runtimes (NumPy, CuPy) run the explicit, hand-written code against `xp`;
*tensor* runtimes (tinygrad_lab, PyTorch) run the same PyTorch-shaped autograd code against `lib`.
A runtime that cannot run here raises `Unavailable` with the reason, which the records carry.
Optional libraries (torch, cupy, threadpoolctl) are imported only when first asked for.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
from typing import Any, Callable, ContextManager, Iterable, Iterator

import numpy as np

NUMPY, CUPY, TINYGRAD, TORCH = "numpy", "cupy", "tinygrad_lab", "torch"
FLOORS = {"cpu": NUMPY, "cuda": CUPY}  # the explicit array code that sets the floor on each device


class Unavailable(Exception):
    """This runtime cannot run here; the message says why (shown in the skipped records)."""


class Runtime:
    """One library on one device.

    upload(host array) -> the library's object on the device; download(object) -> NumPy array;
    sync: waits for the device's queued work (None on the CPU); threads(n): a context pinning the
    library's own thread pool (BLAS pools are pinned for everyone by `pinned_threads`);
    backend: the tinygrad_lab backend whose device work (launches, syncs, memory) can be measured,
    or None.
    """

    kind: str  # "array" or "tensor"
    backend: Any = None
    index: int = 0

    def __init__(self, name: str, device: str, upload: Callable[[np.ndarray], Any],
                 download: Callable[[Any], np.ndarray], sync: Callable[[], Any] | None = None) -> None:
        self.name, self.device = name, device
        self.upload, self.download, self.sync = upload, download, sync

    def put(self, arr: np.ndarray, copy: bool = False) -> Any:
        """`arr` on this runtime's device; `copy=True` for state a step updates in place (on the CPU
        uploads share memory with the host array, which every implementation reads)."""
        return self.upload(arr.copy() if copy else arr)

    def threads(self, n: int) -> ContextManager[Any]:
        return contextlib.nullcontext()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}/{self.device}>"


class ArrayRuntime(Runtime):
    """NumPy or CuPy: explicit code written against the array module `xp`."""

    kind = "array"

    def __init__(self, name: str, device: str, xp: Any, download: Callable[[Any], np.ndarray],
                 sync: Callable[[], Any] | None = None) -> None:
        super().__init__(name, device, xp.asarray, download, sync)
        self.xp = xp


class TensorRuntime(Runtime):
    """tinygrad_lab or PyTorch: autograd code written against the PyTorch-shaped module `lib`."""

    kind = "tensor"

    def __init__(self, name: str, device: str, lib: Any, sync: Callable[[], Any] | None = None,
                 set_threads: Callable[[int], Any] | None = None, get_threads: Callable[[], int] | None = None) -> None:
        if device == "cpu":
            upload: Callable[[np.ndarray], Any] = lib.from_numpy
            download: Callable[[Any], np.ndarray] = lib.Tensor.numpy
        else:
            def upload(arr: np.ndarray) -> Any:
                return lib.from_numpy(arr).to(device)

            def download(t: Any) -> np.ndarray:
                return t.cpu().numpy()
        super().__init__(name, device, upload, download, sync)
        self.lib = lib
        self._set_threads, self._get_threads = set_threads, get_threads

    @contextlib.contextmanager
    def threads(self, n: int) -> Iterator[None]:
        if self._set_threads is None or self._get_threads is None:
            yield
            return
        old = self._get_threads()
        self._set_threads(n)
        try:
            yield
        finally:
            self._set_threads(old)

    def thread_count(self) -> int | None:
        """The library's own intra-op thread count now (None when it has no pool of its own)."""
        return None if self._get_threads is None else self._get_threads()


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip().rstrip(":")


def _import(module: str, what: str, hint: str) -> Any:
    try:
        return importlib.import_module(module)
    except Exception as exc:  # ImportError, or a broken installation failing on import
        raise Unavailable(f"{what} is not installed ({_describe(exc)}); {hint}") from None


def _numpy(device: str) -> Runtime:
    if device != "cpu":
        raise Unavailable(f"NumPy runs on the CPU only, not on {device!r}")
    return ArrayRuntime(NUMPY, "cpu", np, np.asarray)


def _cupy(device: str) -> Runtime:
    if device != "cuda":
        raise Unavailable(f"CuPy runs on CUDA devices only, not on {device!r}")
    cupy = _import("cupy", "CuPy", "pip install 'tinygrad-lab[cuda]' (or cupy-cuda13x for CUDA 13)")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, or a driver too old for this CuPy
        raise Unavailable(f"CuPy cannot reach a GPU ({_describe(exc)})") from None
    if not count:
        raise Unavailable("CuPy finds no GPU (CUDA reports 0 devices)")
    return ArrayRuntime(CUPY, "cuda", cupy, cupy.asnumpy, cupy.cuda.runtime.deviceSynchronize)


def _tinygrad(device: str) -> Runtime:
    import tinygrad_lab as tl

    try:
        dev = tl.device(device).check()
    except RuntimeError as exc:  # e.g. "CUDA is not available: CuPy is not installed ..."
        raise Unavailable(str(exc)) from None
    sync = None if dev.type == "cpu" else functools.partial(dev.backend.synchronize, dev.index or 0)
    rt = TensorRuntime(TINYGRAD, device, tl, sync)
    if dev.type != "cpu":
        rt.backend, rt.index = dev.backend, dev.index or 0
    return rt


def _torch(device: str) -> Runtime:
    torch = _import("torch", "PyTorch", "pip install 'tinygrad-lab[oracle]'")
    threads = dict(set_threads=torch.set_num_threads, get_threads=torch.get_num_threads)
    if device == "cpu":
        return TensorRuntime(TORCH, "cpu", torch, **threads)
    if device != "cuda":
        raise Unavailable(f"PyTorch has no {device!r} device here")
    if not torch.cuda.is_available():
        built = torch.version.cuda or "none (a CPU-only build)"
        raise Unavailable(f"PyTorch sees no CUDA GPU (torch {torch.__version__}, built with CUDA {built})")
    return TensorRuntime(TORCH, "cuda", torch, torch.cuda.synchronize, **threads)


_LOADERS: dict[str, Callable[[str], Runtime]] = {NUMPY: _numpy, CUPY: _cupy, TINYGRAD: _tinygrad, TORCH: _torch}
_CACHE: dict[tuple[str, str], Runtime | Unavailable] = {}


def get_runtime(name: str, device: str) -> Runtime:
    """The runtime of library `name` on `device` (cached), or raise `Unavailable` saying why."""
    key = (name, device)
    if key not in _CACHE:
        try:
            _CACHE[key] = _LOADERS[name](device)
        except Unavailable as exc:
            _CACHE[key] = exc
    found = _CACHE[key]
    if isinstance(found, Unavailable):
        raise found
    return found


# --------------------------------------------------------------------------- results and threads


def to_host(result: Any) -> np.ndarray:
    """A result of any runtime as one flat NumPy array (a copy; tuples are concatenated), for the
    cross-check of implementations against each other."""
    if isinstance(result, (tuple, list)):
        return np.concatenate([to_host(r) for r in result]) if result else np.empty(0)
    if result is None:
        raise ValueError("the step returned None (was no gradient computed?)")
    if type(result).__module__.split(".")[0] == "cupy":
        result = result.get()
    elif hasattr(result, "detach"):  # a tensor of tinygrad_lab or PyTorch, on any device
        result = result.detach().cpu().numpy()
    return np.array(result, copy=True).reshape(-1)


def _threadpoolctl() -> Any:
    return _import("threadpoolctl", "threadpoolctl",
                   "pip install 'tinygrad-lab[bench]' (it pins the BLAS thread count)")


@contextlib.contextmanager
def pinned_threads(n: int, runtimes: Iterable[Runtime]) -> Iterator[None]:
    """Pin every BLAS/OpenMP pool in the process (threadpoolctl) and each runtime's own pool to n."""
    with _threadpoolctl().threadpool_limits(limits=n), contextlib.ExitStack() as stack:
        for rt in runtimes:
            stack.enter_context(rt.threads(n))
        yield


def numpy_blas() -> list[dict[str, Any]]:
    """threadpoolctl's records of the BLAS that NumPy uses (every BLAS loaded, if none is NumPy's)."""
    blas = [i for i in _threadpoolctl().threadpool_info() if i.get("user_api") == "blas"]
    return [i for i in blas if "numpy" in i.get("filepath", "")] or blas


def blas_threads() -> int | None:
    """NumPy's BLAS thread count in force now (what `pinned_threads` set), None if undetected."""
    counts = [i["num_threads"] for i in numpy_blas()]
    return max(counts) if counts else None
