"""The Backend interface: everything the ops need from an array library.

Ops are written once against `backend.xp` (NumPy or CuPy) plus the few helpers
below that an array module lacks. A backend knows nothing of autograd.
"""
from __future__ import annotations

import time
from typing import Any, Callable


_BASIC_KEYS = (int, slice, type(None), type(Ellipsis))


class Stopwatch:
    """Times work on the host: started when made; `stop()`, then `seconds`."""

    def __init__(self):
        self._start = time.perf_counter()
        self._end = None

    def stop(self) -> None:
        self._end = time.perf_counter()

    @property
    def seconds(self) -> float:
        return self._end - self._start

import numpy as np


class Backend:
    """One array library on one kind of device.

    name         device type string ("cpu", "cuda", ...)
    xp           the array module (numpy, cupy) the ops call
    """

    name: str
    xp: Any

    def check(self, index: int | None) -> None:
        """Raise a RuntimeError saying why device `index` of this kind cannot be used (if it cannot).
        Called once per device, when it is first named."""

    def asarray(self, obj: Any, dtype=None, index: int = 0) -> Any:
        """A backend array from host data (NumPy array, list, scalar); no copy where possible."""
        raise NotImplementedError

    def to_host(self, arr: Any):
        """A NumPy array with the same values (the array itself on the CPU)."""
        raise NotImplementedError

    def synchronize(self, index: int = 0) -> None:
        """Wait until queued work on the device has finished (a no-op on the CPU)."""

    def generator(self, seed: int, index: int = 0) -> Any:
        """A seeded random generator with NumPy's Generator methods
        (random, standard_normal, integers, permutation, poisson)."""
        raise NotImplementedError

    def broadcast_to(self, arr: Any, shape: tuple) -> Any:
        """A read-only view of arr broadcast to shape (shape already validated)."""
        return self.xp.broadcast_to(arr, shape)

    def diagonal(self, arr: Any, offset: int, axis1: int, axis2: int) -> Any:
        """A view of a diagonal of arr (as a new last axis) that writes through to arr, as PyTorch's does:
        NumPy makes its diagonal views read-only, so the flag follows arr's here (CuPy overrides this)."""
        out = self.xp.diagonal(arr, offset, axis1, axis2)
        out.flags.writeable = arr.flags.writeable
        return out

    def sum(self, arr: Any, axes: tuple | int, keepdims: bool) -> Any:
        """arr summed over axes (given, not None), as ndarray.sum; add.reduce is the function it wraps."""
        return self.xp.add.reduce(arr, axes, None, None, keepdims)

    def amax(self, arr: Any, axis: int, keepdims: bool) -> Any:
        """arr's maximum along one axis, as ndarray.max (softmax's shift)."""
        return arr.max(axis, None, keepdims)

    def matmul_t(self, x: Any, w: Any) -> Any:
        """x @ wᵀ for matrices x (N, K) and w (M, K), C-ordered: a linear layer's product."""
        return x @ w.T

    def zero(self, dtype) -> Any:
        """A zero of `dtype` to compute with (relu's max(x, 0)): here a NumPy scalar, which array
        modules pass to their kernels as it is."""
        return np.dtype(dtype).type(0)

    def masked(self, arr: Any, mask: Any) -> Any:
        """arr where mask is True, 0 elsewhere: where(mask, arr, 0), every masked backward (relu,
        clamp, where's gradient) runs it. mask is a bool array of arr's shape or one that broadcasts."""
        return self.xp.where(mask, arr, self.zero(arr.dtype))

    def erf(self, arr: Any) -> Any:
        """The error function, elementwise (exact GELU needs it; NumPy has none)."""
        raise NotImplementedError

    def special(self, name: str):
        """The special function `name` (erfinv, gammaln, digamma, polygamma, ...) as an
        elementwise function on this backend's arrays: SciPy's (`scipy.special`), whose ufuncs also take
        NumPy-based device arrays; the CUDA backend gives CuPy's (`cupyx.scipy.special`)."""
        import scipy.special  # imported on first use: scipy is large
        return getattr(scipy.special, name)

    def index_add(self, target: Any, key: Any, values: Any) -> None:
        """target[key] += values, accumulating repeated indices (np.add.at)."""
        raise NotImplementedError

    def axpy(self, y: Any, x: Any, alpha) -> None:
        """y += alpha·x, written into y (add_(x, alpha=...), the update of every optimizer step): here
        alpha·x first, then one add. x is an array or a number; y's dtype is kept."""
        self.xp.add(y, x * alpha, out=y, casting="unsafe")

    # ---- what a GPU does differently: checks without a sync, and answers that do not depend on the device
    def raise_if(self, bad: Any, error: Callable[[], Exception], index: int = 0) -> None:
        """Raise error() if `bad`, a 0-d boolean array of this backend, is true: here at once. A GPU
        backend reads it at its next sync instead, so that a check does not stall the device (the
        error surfaces there, as a failed device-side assert does in PyTorch)."""
        if bad:
            raise error()

    def may_be_true(self, condition: Callable[[], Any]) -> bool:
        """Whether condition() (a 0-d boolean array) may be true, to skip work that it makes unneeded: its
        value here, read at once. A GPU answers True without computing it: reading it would stall the device."""
        return bool(condition())

    def check_indices(self, idx: Any, size: int, dim: int, index: int = 0) -> None:
        """PyTorch's IndexError (raise_if) where integer index array `idx` for a dim of `size` holds a value
        outside [-size, size): CuPy's indexing wraps such an index around, and reads the wrong element."""
        if not idx.size:
            return
        lo, hi = idx.min(), idx.max()
        self.raise_if((lo < -size) | (hi >= size), lambda: IndexError(
            f"index {int(lo) if int(lo) < -size else int(hi)} is out of bounds for dimension {dim} with size {size}"),
            index)

    def index_put(self, target: Any, key: Any, values: Any) -> None:
        """target[key] = values where repeated positions keep the last value, as NumPy's assignment does.
        CuPy leaves the winner undefined (its threads race), so here each position's last occurrence
        is found first (the largest occurrence number, scattered with maximum.at) and every occurrence
        writes that value. Costs a position table of target's size (int64)."""
        parts = key if key.__class__ is tuple else (key,)
        if not getattr(values, "ndim", 0) or all(isinstance(k, _BASIC_KEYS) for k in parts):
            target[key] = values  # one value for all, or a basic key: no position is written twice
            return
        xp = self.xp
        pos = xp.arange(target.size).reshape(target.shape)[key]
        flat = pos.reshape(-1)
        order = "int32" if flat.size < 2**31 else "uint64"  # what CUDA's atomic max takes (not int64)
        last = xp.zeros(target.size, dtype=order)
        self.index_max(last, flat, xp.arange(flat.size, dtype=order))
        target[key] = xp.broadcast_to(values, pos.shape).reshape(-1)[last[flat]].reshape(pos.shape)

    def index_max(self, target: Any, key: Any, values: Any) -> None:
        """target[key] = maximum(target[key], values), repeated indices included (np.maximum.at)."""
        self.xp.maximum.at(target, key, values)

    def scalar(self, value: int | float, dtype: Any) -> Any:
        """A Python number as an operand of a kernel of `dtype`: a NumPy scalar of that dtype (an int
        wrapped into it, as PyTorch wraps uint8 + 300 to uint8 + 44). CuPy 13 promotes a Python number
        by its value (float16 * 256 gives float32), a NumPy scalar of the array's dtype it does not."""
        dtype = np.dtype(dtype)
        if dtype.kind in "iu":
            return np.array(value).astype(dtype)[()]
        with np.errstate(over="ignore"):  # 1e5 as float16 is inf, as in PyTorch
            return dtype.type(value)

    def fresh(self, arr: Any) -> bool:
        """Whether arr is an array made afresh, that a caller may keep and write into: it owns its memory
        (not a view, as workspace buffers and broadcasts are) and is C-contiguous. (CuPy's arrays are
        always writable: it has no writeable flag.)"""
        return arr.base is None and arr.flags.c_contiguous

    def remainder(self, a: Any, b: Any) -> Any:
        """a % b with the sign of b, as PyTorch: for floats from fmod (r = fmod(a, b), plus b where r and b
        differ in sign), which CuPy's float % (a - floor(a / b) * b) is not: it differs near multiples of b
        (1.0 % 0.1) and gives nan for an infinite b."""
        xp = self.xp
        if xp.result_type(a, b).kind != "f":
            return xp.remainder(a, b)
        r = xp.fmod(a, b)
        return xp.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)

    def stopwatch(self, index: int = 0) -> Stopwatch:
        """A started timer of the work queued from now until its `stop()`: a wall clock here; a GPU's
        records events in its queue, so that `seconds` is the work's, not the launches' (read lazily)."""
        return Stopwatch()

    def counters(self) -> dict | None:
        """The device work done so far, where the backend can count it: {'launches': kernel launches,
        'syncs': device->host reads, 'uploads': host->device copies}. None here (nothing is counted)."""
        return None

    def elementwise_kernel(self, in_params: str, out_params: str, operation: str, name: str, index: int = 0):
        """A compiled elementwise kernel of the C statements `operation` over the named parameters (CuPy's
        ElementwiseKernel), called with input arrays and returning the output; None where the backend
        compiles none (the jit then runs a fused chain as ufuncs writing into reused buffers)."""
        return None

    def matrix_transpose(self, arr: Any, out: Any = None) -> Any:
        """The transpose of 2-D array arr as a C-contiguous array: a new one, or written into `out`
        (C-contiguous, shape arr.shape[::-1]). Convolution's layout changes use it."""
        if out is None:
            return arr.T.copy()  # a copy even where arr.T is contiguous already (one row or column)
        out[...] = arr.T
        return out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
