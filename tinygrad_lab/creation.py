"""Factories: tensors from data (tensor, as_tensor, from_numpy), filled tensors
(zeros, ones, full, empty, eye, arange, linspace and their *_like forms) and
random tensors (rand, randn, randint, randperm, normal, and the in-place
normal_/uniform_).

Python data follows PyTorch's inference: floats give the default float dtype
(float32), ints give int64, bools give bool; NumPy arrays keep their dtype.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import dtypes
from . import random as _random
from .autograd.tensor_base import TensorBase, make
from .backends import CPU, Device
from .ops import inplace as _inplace
from .ops.promotion import cast


_default_device = [CPU]  # where factories put tensors when no device is given (set_default_device)


def set_default_device(device) -> None:
    """Make the factories (tensor, zeros, randn, arange, ...) create tensors on `device` when none is
    given, as torch.set_default_device; None goes back to the CPU."""
    _default_device[0] = CPU if device is None else resolve_device(device)


def get_default_device() -> Device:
    """The device factories use when none is given (the CPU unless set_default_device changed it)."""
    return _default_device[0]


def resolve_device(device) -> Device:
    """A Device from None (the default device)/str/Device; 'cuda' means 'cuda:0' (as PyTorch's tensors report)."""
    if device is None:
        return _default_device[0]
    dev = Device(device)
    if dev.index is None and dev.type != "cpu":
        dev = Device(dev.type, 0)
    return dev.check()


def size_args(size) -> tuple:
    """Accept f(2, 3), f((2, 3)) and f([2, 3])."""
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = size[0]
    try:
        shape = tuple(int(s) for s in size)
    except TypeError:
        raise TypeError(f"size must be a sequence of ints, got {size!r}") from None
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    return shape


def _finish(arr, device: Device, requires_grad: bool) -> TensorBase:
    t = make(arr, device)
    if requires_grad:
        t.requires_grad = True  # validates the dtype
    return t


def _float_dtype(dtype) -> np.dtype:
    return (dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)).np


def _infer_np(data, dtype) -> np.ndarray:
    """A host array for Python data or a NumPy array, with PyTorch's dtype inference."""
    if isinstance(data, TensorBase):
        arr = data._device.backend.to_host(data._data)
    elif isinstance(data, np.ndarray):
        arr = data
    else:
        try:
            arr = np.array(data)
        except ValueError as e:
            raise ValueError(f"tensor(): could not build a tensor from the data: {e}") from None
        if arr.dtype == object:
            raise TypeError(f"tensor(): could not infer a dtype from the data (of type {type(data).__name__}); "
                            f"nested lists must be rectangular and contain numbers")
        if arr.dtype.kind == "f" and dtype is None:  # with a dtype, Python floats go to it directly
            arr = arr.astype(dtypes.get_default_dtype().np)
    if dtype is not None:
        arr = arr.astype(dtypes.as_dtype(dtype).np, copy=False)
    dtypes.from_numpy_dtype(arr.dtype)  # unsupported dtypes raise here
    return arr


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """A new tensor with a copy of `data` (nested lists, numbers, NumPy arrays)."""
    dev = resolve_device(device)
    arr = _infer_np(data, dtype)
    return _finish(dev.backend.asarray(np.array(arr, copy=True), index=dev.index or 0), dev, requires_grad)


def as_tensor(data, dtype=None, device=None) -> TensorBase:
    """Like tensor(), but shares memory with `data` when dtype and device allow it."""
    dev = resolve_device(device)
    if isinstance(data, TensorBase):
        out = data if dtype is None else cast(data, dtypes.as_dtype(dtype).np)
        return out if out._device is dev else make(
            dev.backend.asarray(out._device.backend.to_host(out._data), index=dev.index or 0), dev)
    arr = _infer_np(data, dtype)
    return make(dev.backend.asarray(arr, index=dev.index or 0), dev)


_NP_TO_DTYPE = {d.np: d for d in dtypes.ALL}


def from_numpy(arr: np.ndarray) -> TensorBase:
    """A CPU tensor sharing memory with `arr`: writes to either are seen by the other."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    if arr.dtype not in _NP_TO_DTYPE:
        dtypes.from_numpy_dtype(arr.dtype)  # raises the unsupported-dtype TypeError
    return make(arr, CPU)


def _filled(fill, size, dtype, device, requires_grad, default=None) -> TensorBase:
    dev = resolve_device(device)
    dt = dtypes.as_dtype(dtype).np if dtype is not None else (default or dtypes.get_default_dtype().np)
    xp = dev.backend.xp
    shape = size_args(size)
    arr = xp.empty(shape, dtype=dt) if fill is None else xp.full(shape, fill, dtype=dt)
    return _finish(arr, dev, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """A tensor of zeros, as torch.zeros; dtype defaults to the default float (float32), device to cpu."""
    return _filled(0, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """A tensor of ones, as torch.ones; dtype defaults to the default float (float32), device to cpu."""
    return _filled(1, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Uninitialised memory, as PyTorch: the values are whatever was there."""
    return _filled(None, size, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """A tensor filled with `fill_value`; its dtype follows the value (bool, int64 or default float)."""
    default = dtypes.scalar_dtype(fill_value).np if not isinstance(fill_value, TensorBase) else None
    return _filled(fill_value, (size,), dtype, device, requires_grad, default=default)


def _like(x, dtype, device):
    return (x.dtype if dtype is None else dtype), (x._device if device is None else device)


def zeros_like(x, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """zeros with x's shape, and x's dtype and device unless given (as torch.zeros_like)."""
    dt, dev = _like(x, dtype, device)
    return zeros(x._data.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def ones_like(x, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """ones with x's shape, and x's dtype and device unless given (as torch.ones_like)."""
    dt, dev = _like(x, dtype, device)
    return ones(x._data.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def empty_like(x, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Uninitialised memory with x's shape, and x's dtype and device unless given (as torch.empty_like)."""
    dt, dev = _like(x, dtype, device)
    return empty(x._data.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def full_like(x, fill_value, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """x's shape filled with `fill_value`; x's dtype (not the value's) and device unless given, as torch.full_like."""
    dt, dev = _like(x, dtype, device)
    return full(x._data.shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


def rand_like(x, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Uniform samples in [0, 1) with x's shape, and x's dtype and device unless given (as torch.rand_like)."""
    dt, dev = _like(x, dtype, device)
    return rand(x._data.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def randn_like(x, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Standard normal samples with x's shape, and x's dtype and device unless given (as torch.randn_like)."""
    dt, dev = _like(x, dtype, device)
    return randn(x._data.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def randint_like(x, low=0, high=None, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Integers in [low, high) with x's shape, and x's dtype and device unless given (as torch.randint_like:
    randint_like(x, high) or randint_like(x, low, high))."""
    if high is None:
        low, high = 0, low
    dt, dev = _like(x, dtype, device)
    return randint(low, high, x._data.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def eye(n: int, m: int | None = None, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """The n x m identity matrix (m defaults to n), as torch.eye; dtype defaults to the default float (float32)."""
    dev = resolve_device(device)
    return _finish(dev.backend.xp.eye(n, n if m is None else m, dtype=_float_dtype(dtype)), dev, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Values from start (inclusive) to end (exclusive); int64 unless an argument is a float."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and larger bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dt = dtypes.get_default_dtype().np if is_float else np.dtype(np.int64)
    else:
        dt = dtypes.as_dtype(dtype).np
    dev = resolve_device(device)
    n = max(0, math.ceil((end - start) / step))
    arr = (start + step * dev.backend.xp.arange(n, dtype=np.float64)).astype(dt) if dt.kind == "f" \
        else dev.backend.xp.arange(start, end, step, dtype=dt)
    return _finish(arr, dev, requires_grad)


def linspace(start, end, steps: int, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """`steps` evenly spaced values from start to end inclusive, as torch.linspace; default float dtype (float32)."""
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
    dev = resolve_device(device)
    return _finish(dev.backend.xp.linspace(start, end, steps).astype(_float_dtype(dtype)), dev, requires_grad)


# ---------------------------------------------------------------- random

def _gen(device):
    return _random.generator(device)


def rand(*size, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Uniform samples in [0, 1)."""
    dev = resolve_device(device)
    dt = _float_dtype(dtype)
    arr = _gen(dev).random(size_args(size), dtype=np.float64 if dt == np.float16 else dt).astype(dt, copy=False)
    return _finish(arr, dev, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Standard normal samples."""
    dev = resolve_device(device)
    dt = _float_dtype(dtype)
    arr = _gen(dev).standard_normal(size_args(size), dtype=np.float64 if dt == np.float16 else dt).astype(dt, copy=False)
    return _finish(arr, dev, requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Integers in [low, high): randint(high, size) or randint(low, high, size)."""
    if size is None:
        if high is None or isinstance(high, numbers.Integral):
            raise TypeError("randint() missing the 'size' argument: use randint(high, size) or randint(low, high, size)")
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dev = resolve_device(device)
    dt = np.dtype(np.int64) if dtype is None else dtypes.as_dtype(dtype).np
    arr = _gen(dev).integers(low, high, size=size_args((size,)), dtype=np.int64).astype(dt, copy=False)
    return _finish(arr, dev, requires_grad)


def randperm(n: int, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """A random permutation of 0..n-1."""
    dev = resolve_device(device)
    dt = np.dtype(np.int64) if dtype is None else dtypes.as_dtype(dtype).np
    return _finish(_gen(dev).permutation(int(n)).astype(dt), dev, requires_grad)


def normal(mean=0.0, std=1.0, size=None, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Normal samples: scalar mean/std with a size, or tensor mean and/or std (broadcast)."""
    if isinstance(mean, TensorBase) or isinstance(std, TensorBase):
        ref = mean if isinstance(mean, TensorBase) else std
        shape = np.broadcast_shapes(*(t._data.shape for t in (mean, std) if isinstance(t, TensorBase)))
        dev, dt = ref._device, ref._data.dtype
        m = mean._data if isinstance(mean, TensorBase) else mean
        s = std._data if isinstance(std, TensorBase) else std
    else:
        if size is None:
            raise TypeError("normal() with float mean and std needs a size")
        dev, dt, shape, m, s = resolve_device(device), _float_dtype(dtype), size_args((size,)), mean, std
    if (np.asarray(s) < 0).any() if not hasattr(s, "device") else bool((s < 0).any()):
        raise RuntimeError(f"normal expects std >= 0.0, but found std {s}")
    arr = (m + s * _gen(dev).standard_normal(shape)).astype(dt)
    return _finish(arr, dev, requires_grad)


def normal_(x, mean: float = 0.0, std: float = 1.0):
    """Fill x in place with normal samples (use under no_grad for parameters)."""
    return _inplace.inplace(x, "normal_", lambda t: make(
        (mean + std * _gen(t._device).standard_normal(t._data.shape)).astype(t._data.dtype), t._device))


def uniform_(x, a: float = 0.0, b: float = 1.0):
    """Fill x in place with uniform samples in [a, b)."""
    return _inplace.inplace(x, "uniform_", lambda t: make(
        (a + (b - a) * _gen(t._device).random(t._data.shape)).astype(t._data.dtype), t._device))
