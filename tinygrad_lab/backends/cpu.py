"""The CPU backend: NumPy arrays in host memory."""
from __future__ import annotations

import threading

import numpy as np

from .base import Backend

_scratch = threading.local()  # per-thread reusable buffers of the helpers below
_ones: dict = {}  # (length, dtype) -> a read-only vector of ones, for sum
_zeros: dict = {}  # dtype -> a read-only 0-d zero, for zero
_BRANCHY = 4096  # elements: from here masked's branch-free select beats np.where
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}  # the unsigned integer of each float size
_iinfo: dict = {}  # integer dtype -> np.iinfo, for scalar
_axpy: dict = {}  # dtype -> BLAS's axpy for it, or None (see _axpy_blas)
_AXPY_MIN = 4096  # elements: from here axpy calls BLAS


def _axpy_blas(dtype):
    """BLAS's axpy for dtype (saxpy, daxpy), or None; scipy.linalg is imported on first use (~0.25 s)."""
    if dtype not in _axpy:
        _axpy[dtype] = None
        if dtype.kind == "f" and dtype.isnative and dtype.itemsize in (4, 8):
            from scipy.linalg import blas
            _follow_numpy_threads()
            _axpy[dtype] = blas.saxpy if dtype.itemsize == 4 else blas.daxpy
    return _axpy[dtype]


def _blas_fits(y, x) -> bool:
    """Whether BLAS's axpy can add x into y: float32/float64 vectors (a C-contiguous array is one,
    flattened) of one shape, y writable, not overlapping (or the same array)."""
    return (x.__class__ is np.ndarray and x.dtype == y.dtype and x.shape == y.shape
            and x.flags.c_contiguous and y.flags.c_contiguous and y.flags.writeable
            and (x is y or not np.may_share_memory(x, y)) and _axpy_blas(y.dtype) is not None)


def _follow_numpy_threads() -> None:
    """SciPy's wheels bring a BLAS of their own, beside NumPy's, loaded on first use: it gets NumPy's
    BLAS thread count, so that a limit set before it loaded (threadpoolctl's threadpool_limits, as the
    benchmarks pin one thread) holds for it too. Otherwise its threads, on cores that are busy (test
    workers, Hogwild processes), turn a 0.13 ms axpy into 8 ms."""
    from threadpoolctl import ThreadpoolController
    libs = ThreadpoolController().select(user_api="blas").lib_controllers
    numpy_threads = [lib.num_threads for lib in libs if "numpy.libs" in lib.filepath]
    for lib in libs:
        if numpy_threads and "scipy.libs" in lib.filepath:
            lib.set_num_threads(min(numpy_threads))


class CPUBackend(Backend):
    name = "cpu"
    xp = np

    def check(self, index):
        if index not in (None, 0):
            raise RuntimeError(f"the cpu device has no index {index}")

    def asarray(self, obj, dtype=None, index: int = 0):
        return np.asarray(obj, dtype=dtype)

    def to_host(self, arr):
        return arr

    def generator(self, seed: int, index: int = 0):
        return np.random.Generator(np.random.PCG64(seed))

    def broadcast_to(self, arr, shape):
        # np.broadcast_to is pure Python (~2.5 us); for a C-contiguous array the strided view is built
        # directly (~1.1 us; 0.6 us for one element, all of whose strides are 0). Every reduction's
        # backward uses it, and a full reduction's gradient (every loss's) is 0-d.
        if arr.size == 1:
            strides = (0,) * len(shape)
        elif arr.flags.c_contiguous and arr.size:
            lead = len(shape) - arr.ndim
            strides = [0] * lead
            for n, s, st in zip(arr.shape, shape[lead:], arr.strides):
                strides.append(0 if n == 1 and s != 1 else st)
        else:
            return np.broadcast_to(arr, shape)
        out = np.ndarray(shape, arr.dtype, arr, 0, strides)
        out.setflags(write=False)
        return out

    def sum(self, arr, axes, keepdims):
        # NumPy reduces a matrix over either axis row by row (~30 ns a row); for a float matrix of 32 rows
        # or more that is a matrix-vector product with ones, one BLAS call (64x10: 2.0 -> 1.4 us, 640x64:
        # 12.8 -> 3.2 us). Above 2**16 elements BLAS is not always the faster, and NumPy's reduce is kept.
        if axes.__class__ is tuple:
            if len(axes) != 1:
                return np.add.reduce(arr, axes, None, None, keepdims)
            axes = axes[0]
        if not (arr.ndim == 2 and arr.shape[0] >= 32 and arr.size <= 1 << 16 and arr.dtype.kind == "f"
                and arr.itemsize >= 4 and arr.flags.c_contiguous):
            return np.add.reduce(arr, axes, None, None, keepdims)
        axes %= 2
        n = arr.shape[axes]
        ones = _ones.get((n, arr.dtype))
        if ones is None:
            if len(_ones) >= 64:  # a few lengths recur (batch sizes, layer widths): keep the cache small
                _ones.clear()
            ones = _ones[(n, arr.dtype)] = np.ones(n, arr.dtype)
            ones.setflags(write=False)
        if axes == 0:
            out = ones @ arr
            return out.reshape(1, -1) if keepdims else out
        out = arr @ ones
        return out.reshape(-1, 1) if keepdims else out

    def amax(self, arr, axis, keepdims):
        # NumPy takes a matrix's row maxima row by row (~50 ns a row). When the rows are short (a few
        # classes), the maxima over the rows of a transposed copy are a few vectorised passes instead:
        # the same values, (64, 10): 3.8 -> 2.0 us, (1000, 10): 45 -> 7 us.
        if arr.ndim == 2 and axis % 2 == 1 and arr.shape[0] >= 32 and arr.shape[1] <= 16:
            out = np.maximum.reduce(arr.T.copy(), 0)
            return out.reshape(-1, 1) if keepdims else out
        return np.maximum.reduce(arr, axis, None, None, keepdims)

    def matmul_t(self, x, w):
        # OpenBLAS multiplies a few rows x by a large wᵀ up to twice as fast as (w xᵀ)ᵀ, copied back to C order
        # (a .view() of a layer's output must work, as in PyTorch). One thread, float32, x (8, 9216) by w (128,
        # 9216), mnist's fc1: 1113 -> 562 us; (8, 784) by (400, 784): 282 -> 126 us; (32, 256) by (256, 256):
        # 96 -> 70 us. With more rows, or a small w (the copy costs more than it saves), as written.
        if x.shape[0] <= 32 and w.size >= 1 << 16:
            return np.ascontiguousarray((w @ x.T).T)
        return x @ w.T

    def zero(self, dtype):
        # A 0-d array made once per dtype: a ufunc converts a Python (or NumPy) scalar to an array anew
        # on every call, which on a small array costs as much as the operation itself (maximum of 4
        # float32 and 0: 1.6 -> 1.0 us).
        z = _zeros.get(dtype)
        if z is None:
            z = np.zeros((), dtype)
            z.setflags(write=False)
            z = _zeros.setdefault(np.dtype(dtype), z)
        return z

    def masked(self, arr, mask):
        # where(mask, arr, 0), bit for bit, several times faster on large float arrays: the bits of arr
        # ANDed with all-ones where mask is True and zeros elsewhere (a select mispredicts on random
        # masks; this has no branches). 1M float32, a random mask: 8.9 -> 0.4 ms (np.where -> this).
        if arr.dtype.kind != "f" or arr.size < _BRANCHY or mask.shape != arr.shape:
            return np.where(mask, arr, self.zero(arr.dtype))
        keep = mask.astype(_UINT[arr.itemsize])  # 1 where mask (astype: a cast 3x faster than a ufunc's)
        np.negative(keep, out=keep)  # 0 - 1 wraps to all ones
        return np.bitwise_and(keep, arr.view(keep.dtype), out=keep).view(arr.dtype)

    def erf(self, arr):
        from scipy.special import erf  # imported on first use: scipy is large
        return erf(arr)

    def index_add(self, target, key, values) -> None:
        np.add.at(target, key, values)

    def axpy(self, y, x, alpha) -> None:
        # BLAS's axpy adds alpha·x into y in one pass, where NumPy first makes alpha·x (a temporary and a
        # second pass): one thread, float32, 1.2M elements 246 -> 128 us, 8192 3.5 -> 2.9 us (add_ with
        # alpha, the whole call); below _AXPY_MIN elements the checks cost what the pass saves.
        if y.size >= _AXPY_MIN and _blas_fits(y, x):
            _axpy[y.dtype](x.reshape(-1), y.reshape(-1), a=alpha)
        else:
            np.add(y, x * alpha, out=y, casting="unsafe")  # Backend.axpy's way, without its call's bytecodes

    def check_indices(self, idx, size, dim, index=0) -> None:
        pass  # NumPy's indexing raises IndexError itself

    def scalar(self, value, dtype):
        # NumPy 2 keeps a tensor's dtype for a Python number, as PyTorch; only an int outside an integer
        # dtype's range is refused (OverflowError), where PyTorch wraps it
        if value.__class__ is int and dtype.kind in "iu":
            info = _iinfo.get(dtype) or _iinfo.setdefault(dtype, np.iinfo(dtype))
            if not info.min <= value <= info.max:
                return np.array(value).astype(dtype)[()]
        return value

    def fresh(self, arr):
        return arr.base is None and arr.flags.writeable and arr.flags.c_contiguous

    def index_put(self, target, key, values) -> None:
        target[key] = values  # NumPy: repeated positions keep the last value

    def remainder(self, a, b):
        return np.remainder(a, b)  # fmod-based, as PyTorch

    def matrix_transpose(self, arr, out=None):
        # Reading the columns of a matrix whose rows are a multiple of 1 KiB apart maps them all onto
        # a few cache sets, and the copy gets 4-6x slower. Rows moved 64 bytes apart first (one
        # contiguous copy, into a buffer kept per thread) avoid that.
        rows, cols = arr.shape
        row_bytes = cols * arr.itemsize
        if rows > 16 and row_bytes >= 2048 and row_bytes % 1024 == 0:
            stride = cols + 64 // arr.itemsize
            nbytes = rows * stride * arr.itemsize
            buf = getattr(_scratch, "transpose", None)
            if buf is None or buf.nbytes < nbytes:
                buf = np.empty(nbytes, dtype=np.uint8)
                if nbytes <= 16 << 20:
                    _scratch.transpose = buf
            padded = buf[:nbytes].view(arr.dtype).reshape(rows, stride)
            padded[:, :cols] = arr
            arr = padded[:, :cols]
        if out is None:
            return arr.T.copy()  # always a new array (ascontiguousarray returns a 1-row one as it is)
        out[...] = arr.T
        return out
