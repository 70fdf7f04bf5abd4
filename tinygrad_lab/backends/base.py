"""The Backend interface: everything the ops need from an array library.

Ops are written once against `backend.xp` (NumPy or CuPy) plus the few helpers
below that an array module lacks. A backend knows nothing of autograd.
"""
from __future__ import annotations

from typing import Any

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
        (random, standard_normal, integers, permutation)."""
        raise NotImplementedError

    def broadcast_to(self, arr: Any, shape: tuple) -> Any:
        """A read-only view of arr broadcast to shape (shape already validated)."""
        return self.xp.broadcast_to(arr, shape)

    def sum(self, arr: Any, axes: tuple | int, keepdims: bool) -> Any:
        """arr summed over axes (given, not None), as ndarray.sum; add.reduce is the function it wraps."""
        return self.xp.add.reduce(arr, axes, None, None, keepdims)

    def amax(self, arr: Any, axis: int, keepdims: bool) -> Any:
        """arr's maximum along one axis, as ndarray.max (softmax's shift)."""
        return arr.max(axis, None, keepdims)

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

    def matrix_transpose(self, arr: Any, out: Any = None) -> Any:
        """The transpose of 2-D array arr as a C-contiguous array: a new one, or written into `out`
        (C-contiguous, shape arr.shape[::-1]). Convolution's layout changes use it."""
        if out is None:
            return self.xp.ascontiguousarray(arr.T)
        out[...] = arr.T
        return out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
