"""Factories: tensors from data (tensor, as_tensor, from_numpy), filled tensors
(zeros, ones, full, empty, eye, arange, linspace and their *_like forms),
random tensors (rand, randn, randint, randperm, normal, and the in-place
normal_/uniform_/exponential_/geometric_/cauchy_/log_normal_/random_), tensors
sharing memory with their source (asarray, frombuffer) and window functions
(hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window;
tinygrad_lab.signal.windows builds on the same make_window).

Python data follows PyTorch's inference: floats give the default float dtype
(float32), ints give int64, bools give bool; NumPy arrays keep their dtype.
"""
from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from . import _warn, dtypes
from . import random as _random
from .autograd.tensor_base import TensorBase, make, make_view
from .backends import CPU, Device
from .ops import elementwise as _ew
from .ops import inplace as _inplace
from .ops import shapes
from .ops import transfer as _transfer
from .ops.op import tensor_args
from .ops.pointwise import Poisson, StandardGamma
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


def size_args(size, op: str = "tensor") -> tuple:
    """Accept f(2, 3), f((2, 3)) and f([2, 3]): whole numbers >= 0 (shapes.sizes, which the layers share)."""
    return shapes.sizes(size, op)


def _finish(arr, device: Device, requires_grad: bool) -> TensorBase:
    t = make(arr, device)
    if requires_grad:
        t.requires_grad = True  # validates the dtype
    return t


def _float_dtype(dtype) -> np.dtype:
    return (dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)).np


def _infer_np(data, dtype) -> np.ndarray:
    """A host array for Python data, a NumPy array or a tensor, with PyTorch's dtype inference."""
    if isinstance(data, TensorBase):
        arr = data._device.backend.to_host(data._data)
    elif isinstance(data, np.ndarray):
        arr = data
    else:
        return _from_python(data, None if dtype is None else dtypes.as_dtype(dtype))
    if dtype is not None:
        arr = arr.astype(dtypes.as_dtype(dtype).np, copy=False)
    dtypes.from_numpy_dtype(arr.dtype)  # unsupported dtypes raise here
    return arr


_PY_NUMBERS = {bool: dtypes.bool_, int: dtypes.int64, float: None}  # None: the default float dtype


def _leaf_dtype(x) -> dtypes.DType:
    """The dtype torch.tensor gives one element of Python data."""
    kind = type(x)
    if kind in _PY_NUMBERS:
        return _PY_NUMBERS[kind] or dtypes.get_default_dtype()
    if isinstance(x, (np.generic, np.ndarray)):
        return dtypes.from_numpy_dtype(x.dtype)  # NumPy scalars and arrays keep their dtype
    if isinstance(x, TensorBase):
        return x.dtype
    if isinstance(x, numbers.Integral):
        return dtypes.int64
    if isinstance(x, numbers.Real):
        return dtypes.get_default_dtype()
    if isinstance(x, (str, bytes, complex)):
        raise TypeError(f"tensor(): invalid data type '{kind.__name__}' ({x!r}): tinygrad_lab tensors hold "
                        f"{', '.join(d.name for d in dtypes.ALL)}")
    raise RuntimeError(f"tensor(): Could not infer dtype of {kind.__name__}")


def _data_dtype(data) -> dtypes.DType:
    """PyTorch's dtype for Python data: its elements' dtypes promoted together, where a bool is bool,
    an int int64 and a float the default float dtype (NumPy scalars and arrays, tensors keep theirs).
    Empty data gives the default float dtype."""
    found, todo = [], [data]
    while todo:
        x = todo.pop()
        if not isinstance(x, (list, tuple, range)):
            found.append(_leaf_dtype(x))
            continue
        kinds = set(map(type, x))
        if kinds <= _PY_NUMBERS.keys():  # a row of Python numbers: the dtype of each kind, not of each number
            found.extend(_PY_NUMBERS[k] or dtypes.get_default_dtype() for k in kinds)
        else:
            todo.extend(x)
    return functools.reduce(dtypes.promote_types, found) if found else dtypes.get_default_dtype()


def _from_python(data, dtype, op: str = "tensor") -> np.ndarray:
    """Python data as a host array of `dtype` (None: PyTorch's inference), converted once from exact
    values: every float through float64 and every int through int64 (never through float32 first, so
    tensor(0.1, dtype=float64) is 0.1), with PyTorch's errors for values the dtype cannot hold."""
    inferred = _data_dtype(data)
    target = inferred if dtype is None else dtype
    exact = np.float64 if target.is_floating_point or inferred.is_floating_point else \
        np.int64 if inferred.category == dtypes.INT else np.bool_
    try:
        arr = np.array(data, dtype=exact)
    except OverflowError:
        raise ValueError(f"{op}(): Overflow when unpacking long long: an integer in the data does not fit "
                         f"in int64 (the range is [{-2**63}, {2**63 - 1}])") from None
    except ValueError as e:
        raise ValueError(f"{op}(): could not build a tensor from the data: {e} "
                         f"(nested lists must be rectangular)") from None
    return _fit(arr, target, op) if target.np != arr.dtype else arr


def _fit(arr: np.ndarray, target: dtypes.DType, op: str) -> np.ndarray:
    """arr converted to `target`; values an integer dtype cannot hold are PyTorch's RuntimeError (as in
    PyTorch, negative values wrap into uint8, as two's complement arithmetic does)."""
    if target.category == dtypes.INT and arr.size:
        if not (np.isfinite(arr).all() and dtypes.holds(target.np, arr.min(), arr.max())):
            raise RuntimeError(f"{op}(): value cannot be converted to type {target.name} without overflow "
                               f"(the data holds values from {arr.min()} to {arr.max()})")
    with np.errstate(over="ignore"):  # float64 -> float16/float32 overflows to inf, as in PyTorch
        return arr.astype(target.np)


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


def _filled(op, fill, size, dtype, device, requires_grad, default=None) -> TensorBase:
    dev = resolve_device(device)
    dt = dtypes.as_dtype(dtype).np if dtype is not None else (default or dtypes.get_default_dtype().np)
    xp = dev.backend.xp
    shape = size_args(size, op)
    if fill.__class__ is int and 0 <= fill <= 1:  # zeros' and ones' fill fits every dtype: zeros(4, 8) 9.7 -> 2.5 us
        arr = xp.zeros(shape, dtype=dt) if fill == 0 else xp.ones(shape, dtype=dt)
        return _finish(arr, dev, requires_grad)
    if isinstance(fill, (int, float)):  # a Python number: exact, or PyTorch's error where dt cannot hold it
        fill = _from_python(fill, dtypes.from_numpy_dtype(dt), op).item()
    arr = xp.empty(shape, dtype=dt) if fill is None else xp.full(shape, fill, dtype=dt)
    return _finish(arr, dev, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """A tensor of zeros, as torch.zeros; dtype defaults to the default float (float32), device to cpu."""
    return _filled("zeros", 0, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """A tensor of ones, as torch.ones; dtype defaults to the default float (float32), device to cpu."""
    return _filled("ones", 1, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Uninitialised memory, as PyTorch: the values are whatever was there."""
    return _filled("empty", None, size, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """A tensor filled with `fill_value`; its dtype follows the value (bool, int64 or default float)."""
    default = dtypes.scalar_dtype(fill_value).np if not isinstance(fill_value, TensorBase) else None
    return _filled("full", fill_value, (size,), dtype, device, requires_grad, default=default)


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
    n, m = shapes.size(n, "n", "eye"), shapes.size(n if m is None else m, "m", "eye")
    dev = resolve_device(device)
    return _finish(dev.backend.xp.eye(n, m, dtype=_float_dtype(dtype)), dev, requires_grad)


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
    """`steps` evenly spaced values from start to end inclusive, as torch.linspace (start and end: numbers or 0-d
    tensors); default float dtype (float32). Computed in float64, then converted."""
    steps = shapes.size(steps, "steps", "linspace")
    start, end = _endpoint(start, "start", "linspace"), _endpoint(end, "end", "linspace")
    dev = resolve_device(device)
    return _finish(dev.backend.xp.linspace(start, end, steps).astype(_float_dtype(dtype)), dev, requires_grad)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> TensorBase:
    """`steps` values base ** e for e evenly spaced from start to end inclusive, as torch.logspace (start
    and end: numbers or 0-d tensors); default float dtype (float32). Computed in float64, then converted.
    With an integer dtype, as in PyTorch, start and end are first truncated to integers and so are the
    powers (logspace(0, 1, 3, dtype=int64) is [1, 3, 10])."""
    steps = shapes.size(steps, "steps", "logspace")
    start, end = _endpoint(start, "start", "logspace"), _endpoint(end, "end", "logspace")
    dt = _float_dtype(dtype)
    if dt == np.bool_:
        raise NotImplementedError('"logspace" is not implemented for bool: ask for a number dtype')
    if dt.kind in "iu":
        start, end = float(int(start)), float(int(end))
    dev = resolve_device(device)
    xp = dev.backend.xp
    with np.errstate(invalid="ignore", over="ignore"):  # a negative base to a fractional power is nan, as in PyTorch
        powers = xp.power(float(base), xp.linspace(start, end, steps, dtype=np.float64))
        return _finish(powers.astype(dt), dev, requires_grad)


def _endpoint(value, name: str, op: str) -> float:
    """A range's start or end: a number, or a 0-d tensor's number."""
    if isinstance(value, TensorBase):
        if value._data.ndim:
            raise RuntimeError(f"{op} only supports 0-dimensional start and end tensors, but got {name} with "
                               f"{value._data.ndim} dimension(s).")
        return float(value._data)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{op}(): argument '{name}' must be a number or a 0-d tensor, not {type(value).__name__}")
    return float(value)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> TensorBase:
    """The coordinates of the lower triangle of a row x col matrix (on and below diagonal `offset`; above
    the main one for offset > 0), as torch.tril_indices: a 2 x N int64 tensor (rows, then columns),
    in row-major order."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, lower=True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> TensorBase:
    """The coordinates of the upper triangle of a row x col matrix (on and above diagonal `offset`), as
    torch.triu_indices: a 2 x N int64 tensor (rows, then columns), in row-major order."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, lower=False)


def _triangle_indices(op: str, row, col, offset, dtype, device, lower: bool) -> TensorBase:
    row, col, offset = (shapes.whole(v, n, op) for v, n in ((row, "row"), (col, "col"), (offset, "offset")))
    for value, name in ((row, "row"), (col, "col")):
        if value < 0:
            raise RuntimeError(f"{op}(): {name} must be non-negative, got {value}")
    dt = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
    if dt.np.kind not in "iu":
        raise NotImplementedError(f'"{op}" is not implemented for {dt.name}: the indices are integers')
    inside = np.tri(row, col, offset, dtype=bool) if lower else ~np.tri(row, col, offset - 1, dtype=bool)
    dev = resolve_device(device)
    coords = np.stack(np.nonzero(inside)).astype(dt.np)
    return make(dev.backend.asarray(coords, index=dev.index or 0), dev)


# ---------------------------------------------------------------- random

def _gen(device, generator=None):
    """The stream to draw from: the device's (tinygrad_lab's global seed), or `generator`'s (host only,
    as a CPU torch.Generator is; see tinygrad_lab.random)."""
    if generator is None:
        return _random.generator(device)
    if device.type != "cpu":
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found 'cpu'")
    return _random.numpy_generator(generator)


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Uniform samples in [0, 1)."""
    dev = resolve_device(device)
    dt = _float_dtype(dtype)
    arr = _gen(dev, generator).random(size_args(size, "rand"), dtype=np.float64 if dt == np.float16 else dt)
    arr = arr.astype(dt, copy=False)
    return _finish(arr, dev, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """Standard normal samples."""
    dev = resolve_device(device)
    dt = _float_dtype(dtype)
    arr = _gen(dev, generator).standard_normal(size_args(size, "randn"), dtype=np.float64 if dt == np.float16 else dt)
    arr = arr.astype(dt, copy=False)
    return _finish(arr, dev, requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> TensorBase:
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
    arr = _gen(dev, generator).integers(low, high, size=size_args((size,), "randint"), dtype=np.int64)
    arr = arr.astype(dt, copy=False)
    return _finish(arr, dev, requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """A random permutation of 0..n-1."""
    n = shapes.size(n, "n", "randperm")
    dev = resolve_device(device)
    dt = np.dtype(np.int64) if dtype is None else dtypes.as_dtype(dtype).np
    return _finish(_gen(dev, generator).permutation(n).astype(dt), dev, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad: bool = False) -> TensorBase:
    """Normal samples: scalar mean/std with a size, or tensor mean and/or std (broadcast)."""
    if isinstance(mean, TensorBase) or isinstance(std, TensorBase):
        ref = mean if isinstance(mean, TensorBase) else std
        shape = shapes.broadcast_shape([t._data.shape for t in (mean, std) if isinstance(t, TensorBase)], "normal")
        dev, dt = ref._device, ref._data.dtype
        m = mean._data if isinstance(mean, TensorBase) else mean
        s = std._data if isinstance(std, TensorBase) else std
    else:
        if size is None:
            raise TypeError("normal() with float mean and std needs a size")
        dev, dt, shape, m, s = resolve_device(device), _float_dtype(dtype), size_args((size,), "normal"), mean, std
    if (np.asarray(s) < 0).any() if not hasattr(s, "device") else bool((s < 0).any()):
        raise RuntimeError(f"normal expects std >= 0.0, but found std {s}")
    arr = (m + s * _gen(dev, generator).standard_normal(shape)).astype(dt)
    return _finish(arr, dev, requires_grad)


def normal_(x, mean: float = 0.0, std: float = 1.0, *, generator=None):
    """Fill x in place with normal samples (use under no_grad for parameters)."""
    return _inplace.inplace(x, "normal_", lambda t: make(
        (mean + std * _gen(t._device, generator).standard_normal(t._data.shape)).astype(t._data.dtype), t._device))


def uniform_(x, a: float = 0.0, b: float = 1.0, *, generator=None):
    """Fill x in place with uniform samples in [a, b)."""
    return _inplace.inplace(x, "uniform_", lambda t: make(
        (a + (b - a) * _gen(t._device, generator).random(t._data.shape)).astype(t._data.dtype), t._device))


def _fill(x, op: str, draw, generator=None):
    """Fill x in place with draw(stream, xp, shape) (float64 or int64 samples), cast to x's dtype."""
    def sample(t):
        arr = draw(_gen(t._device, generator), t._device.backend.xp, t._data.shape)
        return make(arr.astype(t._data.dtype), t._device)
    return _inplace.inplace(x, op, sample)


def _continuous(x, op: str, law: str) -> None:
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"{op}: the {law} distribution is a continuous probability distribution; the tensor's dtype "
                           f"must be a floating point one, but it is {x.dtype}")


def exponential_(x, lambd: float = 1.0, *, generator=None):
    """Fill x in place with exponential samples of rate lambd (mean 1 / lambd), as Tensor.exponential_."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    _continuous(x, "exponential_", "Exponential")
    return _fill(x, "exponential_", lambda g, xp, shape: -xp.log1p(-g.random(shape)) / lambd, generator)


def geometric_(x, p: float, *, generator=None):
    """Fill x in place with the number of Bernoulli(p) trials up to the first success (1, 2, ...),
    as Tensor.geometric_ (integer tensors too)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    if x._data.dtype == np.bool_:
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for 'Bool' (shape {list(x._data.shape)})")
    return _fill(x, "geometric_", lambda g, xp, shape: xp.floor(xp.log1p(-g.random(shape)) / math.log1p(-p)) + 1,
                 generator)


def cauchy_(x, median: float = 0.0, sigma: float = 1.0, *, generator=None):
    """Fill x in place with Cauchy samples: median + sigma * tan(pi * (u - 1/2)), as Tensor.cauchy_."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    _continuous(x, "cauchy_", "Cauchy")
    return _fill(x, "cauchy_", lambda g, xp, shape: median + sigma * xp.tan(math.pi * (g.random(shape) - 0.5)),
                 generator)


def log_normal_(x, mean: float = 1.0, std: float = 2.0, *, generator=None):
    """Fill x in place with exp(N(mean, std**2)) samples, as Tensor.log_normal_."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    _continuous(x, "log_normal_", "log-normal")
    return _fill(x, "log_normal_", lambda g, xp, shape: xp.exp(mean + std * g.standard_normal(shape)), generator)


def random_(x, *args, generator=None, **kwargs):
    """Fill x in place with integers drawn uniformly from [from, to - 1], as Tensor.random_: random_(),
    random_(to), random_(from, to) (or the keywords 'from' and 'to'). Without `to`, up to 2**mantissa
    bits for floats (2**24 for float32) and the dtype's largest value for integers. Deviation: for int64
    without `to` the largest value itself is never drawn (an exclusive bound must fit in int64)."""
    low, high = _random_bounds(x, args, kwargs)
    return _fill(x, "random_", lambda g, xp, shape: g.integers(low, high, size=shape, dtype=np.int64), generator)


def _random_bounds(x, args: tuple, kwargs: dict) -> tuple:
    """random_'s [low, high) from its arguments, checked against x's dtype as PyTorch checks them."""
    if len(args) > 2 or set(kwargs) - {"from", "to"}:
        raise TypeError(f"random_() takes (from, to), (to) or nothing, and generator=; got {len(args)} positional "
                        f"arguments and the keywords {sorted(kwargs)}")
    low, to = (0, args[0]) if len(args) == 1 else tuple(args) + (0, None)[len(args):]
    low, to = kwargs.get("from", low), kwargs.get("to", to)
    if not isinstance(low, numbers.Integral) or not (to is None or isinstance(to, numbers.Integral)):
        raise TypeError(f"random_(): 'from' and 'to' must be integers, got {low!r} and {to!r}")
    if to is not None and low >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={to}")
    lowest, highest = _drawable(x._data.dtype)
    top = highest if to is None else to - 1
    if lowest is not None and (low < lowest or top > highest):
        raise RuntimeError(f"random_: [from, to - 1] = [{low}, {top}] is out of bounds for {x.dtype} "
                           f"([{lowest}, {highest}])")
    return int(low), int(min(top + 1, np.iinfo(np.int64).max))


_FLOAT_TOP = {np.dtype(np.float16): 2 ** 11, np.dtype(np.float32): 2 ** 24, np.dtype(np.float64): 2 ** 53}


def _drawable(dt: np.dtype) -> tuple:
    """(lowest, highest) value random_ may write into dtype dt. For floats lowest is None (nothing is
    checked, as PyTorch only warns) and highest the last integer before floats have gaps (random_()'s top)."""
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min), int(info.max)
    if dt.kind == "b":
        return 0, 1
    return None, _FLOAT_TOP[dt]


def bernoulli(input, p=None, *, generator=None):
    """0 or 1 in input's dtype, 1 with probability input (each element; or `p`, a number, for all), as
    torch.bernoulli; no gradient. Probabilities outside [0, 1] are refused."""
    probs = input._data if p is None else p
    xp = input._device.backend.xp
    if bool(xp.any((probs < 0) | (probs > 1) | (probs != probs))):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draws = _gen(input._device, generator).random(input._data.shape)
    return make((draws < probs).astype(input._data.dtype), input._device)


def multinomial(input, num_samples: int, replacement: bool = False, *, generator=None):
    """Indices drawn from the categories of each row of input (1-d or 2-d non-negative weights, not
    necessarily summing to 1), as torch.multinomial: int64 (num_samples,) or (rows, num_samples).
    With replacement each draw is the first category whose cumulative weight exceeds u·total
    (u uniform); without, each row's num_samples largest keys log(u) / weight (Efraimidis and
    Spirakis: the same law as drawing one at a time and removing what was drawn). Once the categories
    with weight are used up, those without follow in index order (PyTorch's order there is its own)."""
    w = input._data
    if w.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype}")
    if w.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim (got shape {list(w.shape)})")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > w.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    xp = input._device.backend.xp
    rows = w.reshape(-1, w.shape[-1]).astype(np.float64)
    if bool(xp.any(~xp.isfinite(rows) | (rows < 0))):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if bool(xp.any(rows.sum(axis=1) <= 0)):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    u = _gen(input._device, generator).random((rows.shape[0], num_samples if replacement else rows.shape[1]))
    if replacement:
        cumulative = xp.cumsum(rows, axis=1)
        picked = xp.stack([xp.searchsorted(c, r * c[-1], side="right") for c, r in zip(cumulative, u)])
        picked = xp.minimum(picked, rows.shape[1] - 1)  # u * total rounded up to the total
    else:
        with np.errstate(divide="ignore"):
            keys = xp.log(u) / rows  # weight 0: -inf, never among the largest
        picked = xp.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    return make(picked.astype(np.int64).reshape(w.shape[:-1] + (num_samples,)), input._device)


# ---------------------------------------------------------------- sharing memory: asarray, frombuffer

def asarray(obj, *, dtype=None, device=None, copy: bool | None = None,
            requires_grad: bool | None = None) -> TensorBase:
    """obj as a tensor, sharing its memory whenever it can, as torch.asarray. A tensor (obj itself when
    nothing changes), a NumPy array or an object with the buffer protocol (bytearray, array.array: its
    bytes read as `dtype`, the default float dtype if none) is shared unless copy=True or another dtype
    or device is asked for; copy=False refuses what would need a copy (ValueError). Python data and
    NumPy scalars are always copied, as tensor() does. requires_grad=None keeps a tensor's flag and
    history (and is False for everything else); False detaches, True asks for a gradient.
    Deviations: obj is never changed (PyTorch sets requires_grad on a leaf obj in place and returns
    it); DLPack capsules and CuPy arrays are not read (go through NumPy or a tensor)."""
    if isinstance(obj, TensorBase):
        return _asarray_tensor(obj, dtype, device, copy, requires_grad)
    if isinstance(obj, np.ndarray) or (not isinstance(obj, np.generic) and _is_buffer(obj)):
        arr = obj if isinstance(obj, np.ndarray) else _buffer_array("asarray", obj, _float_dtype(dtype))
        return _asarray_host(arr, dtype, device, copy, requires_grad)
    if copy is False and isinstance(obj, np.generic):
        raise RuntimeError(f"can't alias NumPy scalars ({type(obj).__name__} is always copied): make it an "
                           f"ndarray or leave out copy=False")
    if copy is False:
        raise ValueError(f"can't alias arbitrary sequence into a tensor ({type(obj).__name__} is always copied): "
                         f"leave out copy=False")
    return tensor(obj, dtype=dtype, device=device, requires_grad=bool(requires_grad))


def _asarray_tensor(obj, dtype, device, copy, requires_grad) -> TensorBase:
    """asarray of a tensor: obj itself, or obj moved, cast or cloned (differentiably, keeping its history)."""
    dt = obj.dtype if dtype is None else dtypes.as_dtype(dtype)
    dev = obj._device if device is None else resolve_device(device)
    if copy is False:
        _refuse_alias(obj.dtype, dt, obj._device, dev)
    out = cast(_transfer.to_device(obj, dev), dt.np)  # obj itself when the device and the dtype are its own
    if copy and out is obj:
        out = _ew.Clone.apply(obj)
    if requires_grad is None or bool(requires_grad) == out.requires_grad:
        return out
    alias = make_view(out._data, out._device, out)  # out's memory, cut from the graph (as detach())
    alias.requires_grad = requires_grad
    return alias


def _asarray_host(arr: np.ndarray, dtype, device, copy, requires_grad) -> TensorBase:
    """asarray of a host array: from_numpy's tensor over its memory, or tensor()'s copy."""
    src = dtypes.from_numpy_dtype(arr.dtype)
    dt = src if dtype is None else dtypes.as_dtype(dtype)
    dev = resolve_device(device)
    if copy or dt is not src or dev is not CPU:
        if copy is False:
            _refuse_alias(src, dt, CPU, dev)
        return tensor(arr, dtype=dt, device=dev, requires_grad=bool(requires_grad))
    t = from_numpy(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def _refuse_alias(src_dtype, dtype, src_device, device) -> None:
    """copy=False where sharing memory is impossible: PyTorch's ValueError, naming what differs."""
    if src_dtype is not dtype:
        raise ValueError(f"can't alias tensor with dtype '{src_dtype.name}' into dtype '{dtype.name}' "
                         f"(copy=False: converting needs a copy)")
    if src_device != device:
        raise ValueError(f"can't alias tensor from device '{src_device}' to '{device}' "
                         f"(copy=False: moving needs a copy)")


def _is_buffer(obj) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad: bool = False) -> TensorBase:
    """A 1-d CPU tensor over the bytes of `buffer` (bytearray, array.array, mmap, ...) from byte `offset`
    on, read as `count` elements of `dtype` (count -1: up to the end), as torch.frombuffer. It shares the
    buffer's memory: writes through either show in the other. A read-only buffer (bytes) gives a warning,
    as in PyTorch; deviation: writing to that tensor then raises (NumPy refuses), where PyTorch's
    writes are undefined behaviour."""
    if dtype is None:
        raise TypeError("frombuffer(): argument 'dtype' must be a dtype (tinygrad_lab.float32, ...), not NoneType")
    arr = _buffer_array("frombuffer", buffer, dtypes.as_dtype(dtype).np, count, offset)
    return _finish(arr, CPU, requires_grad)


def _buffer_array(op: str, buffer, dt: np.dtype, count=-1, offset=0) -> np.ndarray:
    """A NumPy array over `buffer`'s memory (no copy), with PyTorch's checks of count and offset."""
    count, offset = shapes.whole(count, "count", op), shapes.whole(offset, "offset", op)
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError(f"{op}(): object does not implement Python buffer protocol "
                         f"({type(buffer).__name__})") from None
    if not view.c_contiguous:
        raise RuntimeError(f"{op}(): could not retrieve buffer from object: its memory is not contiguous")
    length, size = view.nbytes, dt.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"{op}(): both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"{op}(): offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0 and (length - offset) % size:
        raise ValueError(f"{op}(): buffer length ({length - offset} bytes) after offset ({offset} bytes) must be "
                         f"a multiple of element size ({size})")
    if count > 0 and offset + count * size > length:
        raise ValueError(f"{op}(): requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) "
                         f"must not be greater than actual buffer length ({length} bytes)")
    if view.readonly:
        _warn.warn(f"{op}(): the given buffer ({type(buffer).__name__}) is not writable; the tensor shares its "
                   f"memory, so writing to the tensor will raise. Copy it first (e.g. bytearray(buffer)) "
                   f"for a writable tensor.")
    return np.frombuffer(view, dtype=dt, count=count if count > 0 else -1, offset=offset)


# ---------------------------------------------------------------- window functions (signal processing)
#
# Every window, torch.*_window and tinygrad_lab.signal.windows alike, is made by make_window from a
# "shape": shape(n) gives the n-point symmetric window at k = 0..n-1, a float64 NumPy array. The cosine
# windows (Hann, Hamming, Blackman, Nuttall) are one shape, cosine_sum, with their coefficients.

HANN, HAMMING, BLACKMAN = (0.5, 0.5), (0.54, 0.46), (0.42, 0.5, 0.08)


def make_window(length: int, periodic: bool, dt: np.dtype, device, requires_grad: bool, shape,
                one_is_one: bool = True) -> TensorBase:
    """A window of `length` points in dtype dt: shape's symmetric window, or, periodic, the first `length`
    points of the (length + 1)-point one (one period of a window repeated end to end, what spectral
    analysis wants). Length 0 is empty and length 1 is [1.] (one_is_one=False computes it instead: an
    exponential window with its centre elsewhere). Computed on the host in float64 (a window is small,
    and NumPy has every function the shapes use, I0 included), then converted and moved to the device
    once, as tril_indices does."""
    if length == 0 or (length == 1 and one_is_one):
        values = np.ones(length)
    else:
        values = shape(length + 1)[:length] if periodic else shape(length)
    dev = resolve_device(device)
    return _finish(dev.backend.asarray(values.astype(dt), index=dev.index or 0), dev, requires_grad)


def cosine_sum(coefficients):
    """The shape of a generalised cosine window, a0 - a1 cos(x) + a2 cos(2x) - ... with x = 2 pi k / (n - 1):
    Hann is (1/2, 1/2), Hamming (0.54, 0.46), Blackman (0.42, 0.5, 0.08)."""
    coefficients = [float(a) for a in coefficients]

    def shape(n: int) -> np.ndarray:
        x = (2 * math.pi / (n - 1)) * np.arange(n)
        return sum((-1) ** j * a * np.cos(j * x) for j, a in enumerate(coefficients))
    return shape


def _ramp(n: int) -> np.ndarray:
    """k = 0..n-1 mapped onto [-1, 1]: the position of each point in a symmetric window."""
    return np.arange(n) * (2.0 / (n - 1)) - 1.0


def triangle(n: int) -> np.ndarray:
    """The shape of the Bartlett window: 1 - |2k / (n - 1) - 1|, zero at both ends, 1 in the middle."""
    return 1.0 - np.abs(_ramp(n))


def kaiser_shape(beta: float):
    """The shape of the Kaiser window: I0(beta sqrt(1 - r^2)) / I0(beta) with r the point's position in
    [-1, 1] (I0: the modified Bessel function of order 0); larger beta, narrower window."""
    beta = float(beta)

    def shape(n: int) -> np.ndarray:
        inside = np.maximum(1.0 - _ramp(n) ** 2, 0.0)  # rounding may dip below 0 at the ends
        return np.i0(beta * np.sqrt(inside)) / np.i0(beta)
    return shape


def _window(op: str, window_length, periodic, dtype, device, requires_grad: bool, shape) -> TensorBase:
    """torch.*_window's checks, in PyTorch's order (the dtype, then the length), then make_window."""
    dt = _float_dtype(dtype)
    if dt.kind != "f":
        raise RuntimeError(f"{op} expects floating point dtypes, got: {dtypes.from_numpy_dtype(dt).name}")
    n = shapes.whole(window_length, "window_length", op)
    if n < 0:
        raise RuntimeError(f"{op} requires non-negative window_length, got window_length={n}")
    if not isinstance(periodic, (bool, np.bool_)):
        raise TypeError(f"{op}(): argument 'periodic' must be bool, not {type(periodic).__name__}")
    return make_window(n, bool(periodic), dt, device, requires_grad, shape)


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                requires_grad: bool = False) -> TensorBase:
    """The Hann window, sin^2(pi k / (N - 1)) for k = 0..N-1, as torch.hann_window. periodic=True (the
    default, what torch.stft takes) gives the first N points of the N+1-point window; default float dtype."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, cosine_sum(HANN))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """The Hamming window, alpha - beta cos(2 pi k / (N - 1)), as torch.hamming_window (periodic: as in
    hann_window); alpha = beta = 1/2 is the Hann window."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   cosine_sum((alpha, beta)))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False) -> TensorBase:
    """The Blackman window, 0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1)), as
    torch.blackman_window (periodic: as in hann_window)."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, cosine_sum(BLACKMAN))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False) -> TensorBase:
    """The Bartlett (triangular) window, 1 - |2k / (N - 1) - 1|, as torch.bartlett_window (periodic: as in
    hann_window)."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, triangle)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, device=None,
                  requires_grad: bool = False) -> TensorBase:
    """The Kaiser window, I0(beta sqrt(1 - (2k / (N - 1) - 1)^2)) / I0(beta), as torch.kaiser_window
    (periodic: as in hann_window). PyTorch takes beta only by position; here beta= works too."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, kaiser_shape(beta))


# ---------------------------------------------------------------- torch.range (deprecated) and torch.poisson
#
# inclusive_range is exported as tinygrad_lab.range; here it keeps its own name, which does not shadow the
# range builtin this module's loops use.

def inclusive_range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False):
    """start, start + step, ... up to and including end, as the deprecated torch.range, with its warning: the
    default float dtype unless `dtype` says otherwise, whatever the numbers' types. New code uses arange, whose
    end is excluded (range(a, b, s) is arange(a, b + s, s) up to rounding)."""
    _warn.warn("range is deprecated, as torch.range is, because its end is included where Python's range builtin "
               "excludes it: use arange, which gives the values in [start, end)")
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    start, end, step = (_endpoint(v, name, "range") for v, name in ((start, "start"), (end, "end"), (step, "step")))
    if step == 0:
        raise RuntimeError("step must be nonzero (range)")
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0:
        raise RuntimeError(f"upper bound and lower bound inconsistent with step sign (range from {start} to {end} "
                           f"with step {step})")
    count = int(math.floor((end - start) / step)) + 1
    values = start + step * np.arange(count, dtype=np.float64)
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    return tensor(values.astype(dt.np), dtype=dt, device=device, requires_grad=requires_grad)


@tensor_args("input", op="poisson")
def poisson(input, generator=None):  # noqa: A002 (PyTorch's parameter name)
    """A count drawn from Poisson(rate) for each rate in input (float, >= 0), in input's dtype, as torch.poisson;
    from the device's stream (tinygrad_lab.manual_seed), or `generator`'s. The gradient is zeros, as
    PyTorch's. Deviation: an infinite rate is refused (PyTorch gives a meaningless count)."""
    d = input._data
    if d.dtype.kind != "f":
        raise NotImplementedError(f'"poisson" is not implemented for \'{input.dtype}\': the rates must be floats '
                                  f"(input of shape {list(d.shape)})")
    if d.size and not bool(((d >= 0) & (d < np.inf)).all()):
        raise RuntimeError(f"invalid Poisson rate, expected rate to be non-negative and finite (input of shape "
                           f"{list(d.shape)})")
    return Poisson.apply(input, _gen(input._device, generator))


@tensor_args("input", op="_standard_gamma")
def standard_gamma(input, generator=None):  # noqa: A002
    """A draw from Gamma(alpha, 1) for each concentration alpha > 0 in input (float), as torch._standard_gamma,
    differentiable in alpha (implicit reparameterisation: ops.pointwise.StandardGamma)."""
    d = input._data
    if d.dtype.kind != "f":
        raise NotImplementedError(f'"_standard_gamma" is not implemented for \'{input.dtype}\' (input of shape '
                                  f"{list(d.shape)})")
    return StandardGamma.apply(input, _gen(input._device, generator))
