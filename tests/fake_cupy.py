"""A CuPy-faithful stand-in for CI machines without a GPU: `cupy`, `cupyx` and `cupy.cuda` as
far as tinygrad_lab uses them, computing with NumPy but behaving as CuPy does where CuPy differs.

What it refuses, as CuPy does:
- any function, method or keyword argument that CuPy 13 or 14 lacks: the names and signatures come
  from CuPy itself (tests/cupy_api.json, made by tests/make_cupy_api.py); what every listed
  version has is allowed, so `indices(..., sparse=True)` (no `sparse` in CuPy) and
  `put_along_axis` (CuPy 14 only) fail here as on a GPU;
- implicit conversion to NumPy (`np.asarray(a)`, `__array__`; no `__array_interface__` or buffer),
  with CuPy's message; host NumPy arrays and lists as ufunc operands ("Unsupported type");
- NumPy functions without a CuPy counterpart called on its arrays (`__array_function__`).

Where it gives other answers than NumPy, as CuPy does (its "Differences from NumPy" page and source):
- no `writeable` flag (`flags` has c_contiguous, f_contiguous and owndata only), and views made by
  `broadcast_to` are writable, so a write into an expanded array goes through;
- integer-array indices out of bounds wrap around (indexing, index assignment, `take`,
  `take_along_axis`, `cupyx.scatter_add`), where NumPy raises;
- index assignment with repeated indices keeps the *first* value (CuPy: undefined; NumPy: last);
- float `%` and `//` are `x - floor(x / y) * y` and `floor(x / y)` (NumPy's are fmod-based);
- Python scalars in ufuncs promote by value, as CuPy 13 does (`int8_array + 300` is int32,
  `float16_array * 1e5` float32), where NumPy 2 and CuPy 14 keep the array's dtype;
- reductions and indexing return 0-d arrays, never NumPy scalars.

What it counts (`counters`): every device->host read as a sync (`item`, `bool()`, `float()`,
`int()`, `tolist`, `get`, `asnumpy`, printing, and the ops whose output size depends on the data:
boolean-mask indexing, `nonzero`, `unique`...), with the line of tinygrad_lab that asked for it;
every operation that writes a new array as one kernel launch (views, `empty` and metadata are
free: a lower bound, as some CuPy routines launch several kernels); host->device copies as
uploads; calls of the allocator installed with `cuda.set_allocator`.

`ElementwiseKernel` runs the small C subset the jit generates, contracting a*b+c into a fused
multiply-add as nvcc does by default, unless compiled with options=('--fmad=false',).
"""
from __future__ import annotations

import collections
import contextlib
import inspect
import json
import math
import re
import sys
import threading
import time
import types
import weakref
from pathlib import Path

import numpy as np

MESSAGE = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy "
           "array explicitly.")


# ============================================================================ CuPy's API, from CuPy

def _load_api() -> dict:
    """Per module and class: name -> parameters (None: unknown), present in every listed version."""
    data = json.loads(Path(__file__).with_name("cupy_api.json").read_text())
    versions = list(data["versions"].values())
    api = {}
    for section in ("modules", "classes"):
        for owner in versions[0][section]:
            names = set.intersection(*(set(v[section].get(owner, {})) for v in versions))
            api[owner] = {n: _common_entry([v[section][owner][n] for v in versions]) for n in sorted(names)}
    api["ufunc_call_kwargs"] = set.intersection(*(set(v["ufunc_call_kwargs"]) for v in versions))
    api["versions"] = [v["version"] for v in versions]
    return api


def _common_entry(entries: list[dict]) -> dict:
    """One name across versions: the keyword arguments every version takes."""
    params = [p for p in (e.get("params") for e in entries) if p is not None]  # None: not introspectable
    if not params:
        return dict(entries[0], params=None)
    strict = [p for p in params if not any(x.startswith("**") for x in p)]  # those taking only named keywords
    base = strict[0] if strict else params[0]
    keep = [x for x in base if all(x in other or any(y.startswith("**") for y in other) for other in params)]
    return dict(entries[0], params=keep)


API = _load_api()


def _signature(params: list[str] | None) -> inspect.Signature | None:
    if params is None:
        return None
    out, kind = [], inspect.Parameter.POSITIONAL_OR_KEYWORD
    if "/" in params:
        kind = inspect.Parameter.POSITIONAL_ONLY
    for p in params:
        if p == "/":
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        elif p == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
        elif p.startswith("**"):
            out.append(inspect.Parameter(p[2:], inspect.Parameter.VAR_KEYWORD))
        elif p.startswith("*"):
            out.append(inspect.Parameter(p[1:], inspect.Parameter.VAR_POSITIONAL))
            kind = inspect.Parameter.KEYWORD_ONLY
        else:
            name = p.rstrip("=")
            default = None if p.endswith("=") else inspect.Parameter.empty
            if default is inspect.Parameter.empty and kind is inspect.Parameter.KEYWORD_ONLY:
                default = inspect.Parameter.empty
            out.append(inspect.Parameter(name, kind, default=default))
    return inspect.Signature(out)


def _check_call(qualname: str, sig: inspect.Signature | None, args: tuple, kwargs: dict) -> None:
    """CuPy's TypeError for a call its signature does not take."""
    if sig is None:
        return
    try:
        sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{qualname}() {e} (in CuPy {' and '.join(API['versions'])})") from None


def _max_positional(sig: inspect.Signature | None) -> float:
    if sig is None:
        return math.inf
    kinds = [p.kind for p in sig.parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return math.inf
    return sum(k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in kinds)


# ============================================================================ what is counted

class Counters:
    """Device work seen so far: syncs (with where they came from), kernel launches, uploads."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.syncs = 0
        self.launches = 0
        self.uploads = 0
        self.allocator_calls = 0
        self.sync_sites: collections.Counter = collections.Counter()  # (what, file:line) -> syncs
        self.upload_sites: collections.Counter = collections.Counter()  # file:line -> host->device copies

    def snapshot(self) -> dict:
        return {"syncs": self.syncs, "launches": self.launches, "uploads": self.uploads}


counters = Counters()
_HERE = __file__
_allow_sync = [True]


class DeviceSynchronized(RuntimeError):
    """Raised by a sync inside `cupyx.allow_synchronize(False)`, as CuPy does."""


def _caller() -> str:
    """The first frame outside this module and NumPy: what asked for the sync."""
    f = sys._getframe(2)
    while f is not None and (f.f_code.co_filename == _HERE or "/numpy/" in f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return "?"
    name = f.f_code.co_filename
    short = name[name.rfind("tinygrad_lab/"):] if "tinygrad_lab/" in name else Path(name).name
    return f"{short}:{f.f_lineno}"


# Simulated device time: a GPU runs a kernel after its launch returns, so a wall clock read around a
# launch sees the launch only. With SECONDS_PER_LAUNCH > 0 (tests set it), each launch queues that much
# work: a sync waits for the queue to drain, and an Event records when the queue reaches it.
SECONDS_PER_LAUNCH = 0.0
_busy_until = [0.0]


def _launch() -> None:
    counters.launches += 1
    if SECONDS_PER_LAUNCH:
        _busy_until[0] = max(time.perf_counter(), _busy_until[0]) + SECONDS_PER_LAUNCH


def _drain() -> None:
    wait = _busy_until[0] - time.perf_counter()
    if wait > 0:
        time.sleep(wait)


def _upload() -> None:
    counters.uploads += 1
    counters.upload_sites[_caller()] += 1


def _sync(what: str) -> None:
    if not _allow_sync[0]:
        raise DeviceSynchronized(f"Synchronization detected ({what}) inside cupyx.allow_synchronize(False)")
    counters.syncs += 1
    counters.sync_sites[(what, _caller())] += 1
    _drain()


# ============================================================================ devices

_current = threading.local()
DEVICE_COUNT = 2


def _current_device() -> int:
    return getattr(_current, "id", 0)


# ============================================================================ the array

_UNSUPPORTED_KINDS = "OSUVMm"


def _writable(a: np.ndarray) -> np.ndarray:
    """The same view, writable: CuPy has no read-only arrays (NumPy's broadcast views are)."""
    if a.flags.writeable:
        return a
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.writeable:
        return a.copy()
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(a.shape, a.dtype, buffer=root, offset=offset, strides=a.strides)


class Flags:
    """CuPy's flags: c_contiguous, f_contiguous and owndata, nothing else (no writeable)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, a: np.ndarray, owndata: bool):
        self.c_contiguous = a.flags.c_contiguous
        self.f_contiguous = a.flags.f_contiguous
        self.owndata = owndata

    def __getitem__(self, name: str) -> bool:
        key = {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous", "OWNDATA": "owndata"}.get(name)
        if key is None:
            raise KeyError(f"{name} is not defined for cupy.ndarray.flags")
        return getattr(self, key)

    def __repr__(self) -> str:
        return "\n".join(f"  {k.upper()} : {getattr(self, k)}" for k in self.__slots__)


class ndarray:  # noqa: N801  (CuPy's name)
    """A device array: NumPy underneath, CuPy's semantics on top."""

    __slots__ = ("_a", "_dev", "_owner", "__weakref__")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        a = np.empty(shape, dtype, order=order)
        _init(self, a, _current_device(), None)
        pool._allocated(self, a.nbytes, self._dev)

    # ---- what CuPy refuses
    def __array__(self, dtype=None, copy=None):
        raise TypeError(MESSAGE)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        mine = getattr(cupy, ufunc.__name__, None)
        if not isinstance(mine, ufunc_):
            return NotImplemented
        return mine(*inputs, **kwargs) if method == "__call__" else getattr(mine, method)(*inputs, **kwargs)

    def __array_function__(self, func, types_, args, kwargs):
        module = cupy
        for part in func.__module__.split(".")[1:]:
            if part.startswith("_"):
                continue
            module = getattr(module, part, None)
            if module is None:
                return NotImplemented
        mine = getattr(module, func.__name__, None)
        if mine is None or mine is func:
            return NotImplemented
        return mine(*args, **kwargs)

    # ---- metadata (no device work)
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    T = property(lambda self: _result(self._a.T, self._dev, (self,), launch=False))
    real = property(lambda self: _result(self._a.real, self._dev, (self,), launch=False))
    device = property(lambda self: cuda.Device(self._dev))

    @property
    def flags(self) -> Flags:
        return Flags(self._a, self._owner is None)

    @property
    def base(self):
        """The array this one is a view of (None when it owns its memory)."""
        return self._owner

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "strides": None if self._a.flags.c_contiguous
                else self.strides, "data": (self._a.__array_interface__["data"][0], False), "version": 3}

    # ---- device -> host: each one a sync
    def get(self, stream=None, order="C", out=None, blocking=True) -> np.ndarray:
        _sync("get")
        arr = np.array(self._a, order=order, copy=True)
        if out is not None:
            out[...] = arr
            return out
        return arr

    def item(self):
        _sync("item")
        return self._a.item()

    def tolist(self):
        _sync("tolist")
        return self._a.tolist()

    def __bool__(self) -> bool:
        if self._a.size != 1:
            return bool(self._a)  # NumPy's errors: ambiguous or empty
        _sync("bool")
        return bool(self._a)

    def __float__(self) -> float:
        _sync("float")
        return float(self._a)

    def __int__(self) -> int:
        _sync("int")
        return int(self._a)

    def __complex__(self) -> complex:
        _sync("complex")
        return complex(self._a)

    def __repr__(self) -> str:
        _sync("repr")
        return repr(self._a)

    def __str__(self) -> str:
        _sync("str")
        return str(self._a)

    def __format__(self, spec: str) -> str:
        _sync("format")
        return format(self._a if self._a.ndim else self._a.item(), spec)

    def __reduce__(self):
        return (_from_host, (self.get(),))

    # ---- host -> device
    def set(self, arr, stream=None) -> None:
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray, got {type(arr)}")
        _upload()
        self._a[...] = arr

    # ---- Python protocols
    def __len__(self) -> int:
        if not self._a.ndim:
            raise TypeError("len() of unsized object")
        return self._a.shape[0]

    def __iter__(self):
        if not self._a.ndim:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._a.shape[0]))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # ---- indexing, with CuPy's semantics
    def __getitem__(self, key):
        np_key, kind = _index_key(self._a, key)
        if kind == "basic":  # a view, also of a single element (CuPy never returns a scalar)
            return _result(self._a[_with_ellipsis(np_key)], self._dev, (self,), launch=False)
        if kind == "mask":
            _sync("boolean mask indexing")  # the output size depends on the data
        return _result(self._a[np_key], self._dev, (self,))

    def __setitem__(self, key, value) -> None:
        np_key, kind = _index_key(self._a, key)
        v = _operand(value, "__setitem__", allow_host=True)
        if kind == "basic":
            self._a[np_key] = v  # broadcast views too: CuPy has no read-only arrays
        else:
            _assign_first_wins(self._a, np_key, v)
        _launch()


def _init(obj: ndarray, a: np.ndarray, dev: int, owner) -> None:
    if a.dtype.kind in _UNSUPPORTED_KINDS:
        raise ValueError(f"Unsupported dtype {a.dtype}")
    obj._a = a
    obj._dev = dev
    obj._owner = owner


def _new(a: np.ndarray, dev: int, owner: ndarray | None = None) -> ndarray:
    """A device array over `a`: new memory (owner None) or a view of `owner`'s."""
    obj = object.__new__(ndarray)
    _init(obj, a, dev, owner)
    if owner is None:
        pool._allocated(obj, a.nbytes, dev)
    return obj


def _with_ellipsis(key):
    """A basic key that gives a view even where it selects one element (x[0] of a vector)."""
    parts = key if type(key) is tuple else (key,)
    if any(k is Ellipsis or isinstance(k, (bool, np.bool_)) for k in parts):
        return key
    return parts + (Ellipsis,)


def _from_host(arr: np.ndarray) -> ndarray:
    _upload()
    return _new(np.array(arr, copy=True), _current_device())


def peek(arr: ndarray) -> np.ndarray:
    """The NumPy array under a stand-in array, for tests (no sync counted)."""
    return arr._a


# ============================================================================ results and operands

def _wrap(r, dev: int, inputs: tuple = ()):
    """NumPy results as device arrays: a view of an input stays its view; scalars become 0-d arrays."""
    if isinstance(r, np.ndarray):
        for x in inputs:
            if r is x._a:
                return x  # the input itself (astype(copy=False), asarray)
            if np.may_share_memory(r, x._a):
                return _new(_writable(r), dev, x if x._owner is None else x._owner)
        return _new(_writable(r), dev)
    if isinstance(r, np.generic):
        return _new(np.array(r), dev)
    if isinstance(r, tuple):  # NumPy's linalg returns named tuples (QRResult, SVDResult); CuPy plain ones
        return tuple(_wrap(x, dev, inputs) for x in r)
    if type(r) is list:
        return [_wrap(x, dev, inputs) for x in r]
    return r


def _result(r, dev: int, inputs: tuple, launch: bool = True, out=None):
    """r as device arrays (`inputs`: the device arrays it may be a view of). One kernel launch,
    unless r is only a view of an input, or launch=False; `out`: the array written, returned."""
    if out is not None:
        _launch()
        return out
    if launch and not (isinstance(r, np.ndarray) and any(np.may_share_memory(r, x._a) for x in inputs)):
        _launch()
    return _wrap(r, dev, inputs)


def _operand(x, what: str, allow_host: bool = False):
    """The NumPy value of a CuPy operand: device arrays and scalars; host arrays only where CuPy copies them."""
    if x.__class__ is ndarray:
        return x._a
    if isinstance(x, np.ndarray):
        if not allow_host:
            raise TypeError(f"Unsupported type {type(x)}")
        _upload()
        return x
    if isinstance(x, (list, tuple)):
        if not allow_host:
            raise TypeError(f"Unsupported type {type(x)}")
        if any(isinstance(i, (ndarray, list, tuple)) for i in x):
            return type(x)(_operand(i, what, allow_host) for i in x)
        _upload()
        return x
    return x


def _unwrap_args(args, kwargs, allow_host: bool = False):
    """Arguments of a non-ufunc function: device arrays (also inside lists) unwrapped; host arrays refused."""
    return ([_arg(a, allow_host) for a in args], {k: _arg(v, allow_host) for k, v in kwargs.items()})


def _arg(a, allow_host):
    if a.__class__ is ndarray:
        return a._a
    if isinstance(a, np.ndarray):
        if not allow_host:
            raise TypeError(f"Unsupported type {type(a)}: a host NumPy array passed to a CuPy function "
                            f"(copy it with cupy.asarray first)")
        _upload()
        return a
    if type(a) in (list, tuple) and any(x.__class__ is ndarray or isinstance(x, (np.ndarray, list, tuple))
                                        for x in a):
        return type(a)(_arg(x, allow_host) for x in a)
    return a


def _inputs_of(args, kwargs) -> tuple:
    """The device arrays among a call's arguments (also inside lists)."""
    found = []

    def walk(x):
        if x.__class__ is ndarray:
            found.append(x)
        elif type(x) in (list, tuple):
            for i in x:
                walk(i)
    for a in args:
        walk(a)
    for v in kwargs.values():
        walk(v)
    return tuple(found)


# ============================================================================ indexing

def _index_key(a: np.ndarray, key):
    """(NumPy key with integer-array indices wrapped into range, 'basic' | 'advanced' | 'mask')."""
    parts = key if type(key) is tuple else (key,)
    converted, has_int, has_mask = [], False, False
    for k in parts:
        if k.__class__ is ndarray:
            k = k._a
        elif isinstance(k, (np.ndarray, list)):
            _upload()  # CuPy copies host indices over
            k = np.asarray(k)
        if isinstance(k, np.ndarray):
            if k.dtype == np.bool_:
                has_mask = True
            elif k.dtype.kind in "iu":
                has_int = True
            else:
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
        converted.append(k)
    if not (has_int or has_mask):
        return (tuple(converted) if type(key) is tuple else converted[0]), "basic"
    return tuple(_wrap_indices(a.shape, converted)), ("mask" if has_mask else "advanced")


def _wrap_indices(shape: tuple, parts: list) -> list:
    """Integer arrays taken modulo the size of the dim they index: CuPy wraps out-of-bounds indices."""
    def width(k):
        if k is None or k is Ellipsis or isinstance(k, (bool, np.bool_)):
            return 0
        return k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
    dim, out = 0, []
    for k in parts:
        if k is Ellipsis:
            dim += len(shape) - sum(width(j) for j in parts)
        elif isinstance(k, np.ndarray) and k.dtype != np.bool_:
            n = shape[dim] if dim < len(shape) else 0
            k = k % n if n else k
        out.append(k)
        dim += width(k)
    return out


def _assign_first_wins(a: np.ndarray, key: tuple, v) -> None:
    """a[key] = v where repeated positions keep the first value written (CuPy: undefined; NumPy: the last)."""
    pos = np.arange(a.size).reshape(a.shape)[key]
    vals = np.broadcast_to(np.asarray(v).astype(a.dtype, copy=False), pos.shape)
    a[np.unravel_index(pos.ravel()[::-1], a.shape)] = vals.ravel()[::-1]


# ============================================================================ ufuncs

_KIND_SCORE = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _min_types(v) -> list:
    """CuPy 13's smallest types of a scalar's value (_kernel.pyx `_min_scalar_type`): numpy's
    min_scalar_type, and for a non-negative integer also the signed type that holds it."""
    t = np.min_scalar_type(v)
    if t.kind == "u" and t.itemsize < 8 and int(v) <= np.iinfo(f"i{t.itemsize}").max:
        return [t, np.dtype(f"i{t.itemsize}")]
    return [t]


def _cupy13_scalar_types(np_ufunc, values: list) -> list:
    """CuPy 13's promotion of Python scalars (value-based, as NumPy 1): when no scalar is of a higher
    kind than the arrays, each scalar takes its value's smallest types, and the ufunc's first loop that
    all inputs cast to safely runs (`float16_array * 256` is float32, `int8_array + 300` int16).
    The scalars, as 0-d arrays of that loop's types."""
    arrays = [v for v in values if isinstance(v, np.ndarray)]
    scalars = [v for v in values if not isinstance(v, np.ndarray)]
    if not arrays or not scalars:
        return values
    array_kind = max(_KIND_SCORE[a.dtype.kind] for a in arrays)
    scalar_kind = max(_KIND_SCORE[np.asarray(s).dtype.kind] for s in scalars)
    if scalar_kind > array_kind:
        return values
    types_in = [[v.dtype] if isinstance(v, np.ndarray) else _min_types(v) for v in values]
    for loop in np_ufunc.types:
        ins = loop.split("->")[0]
        if len(ins) == len(values) and all(any(np.can_cast(t, c) for t in ts) for ts, c in zip(types_in, ins)):
            return [v if isinstance(v, np.ndarray) else np.asarray(v).astype(c) for v, c in zip(values, ins)]
    return values


def _cupy_floor_divide(x, y, out=None, **kw):
    if np.result_type(x, y).kind != "f":
        return np.floor_divide(x, y, out=out, **kw)
    with np.errstate(all="ignore"):
        return np.floor(np.true_divide(x, y, **kw), out=out)


def _cupy_remainder(x, y, out=None, **kw):
    if np.result_type(x, y).kind != "f":
        return np.remainder(x, y, out=out, **kw)
    with np.errstate(all="ignore"):
        q = np.floor(np.true_divide(x, y, **kw))
        return np.subtract(x, np.multiply(q, y, **kw), out=out, **kw)


_SPECIAL = {"floor_divide": _cupy_floor_divide, "remainder": _cupy_remainder, "mod": _cupy_remainder}


class ufunc_:  # noqa: N801
    """A CuPy ufunc: device arrays and scalars only; out, dtype and casting the only keywords."""

    def __init__(self, name: str, np_ufunc):
        self.name, self._np = name, np_ufunc
        self.nin, self.nout, self.nargs = np_ufunc.nin, np_ufunc.nout, np_ufunc.nargs
        self.types = np_ufunc.types
        self.__name__ = name

    def __repr__(self) -> str:
        return f"<ufunc '{self.name}'>"

    def __call__(self, *args, **kwargs):
        extra = set(kwargs) - API["ufunc_call_kwargs"]
        if extra:
            raise TypeError(f"Wrong arguments {({k: kwargs[k] for k in extra})}")
        ins, outs = args[:self.nin], args[self.nin:]
        out = kwargs.pop("out", None)
        if outs:
            out = outs if len(outs) > 1 else outs[0]
        values = [_operand(x, self.name) for x in ins]
        for v in values:
            if isinstance(v, np.ndarray) or isinstance(v, (int, float, bool, complex, np.generic)):
                continue
            raise TypeError(f"Unsupported type {type(v)}")
        if kwargs.get("dtype") is None:
            values = _cupy13_scalar_types(self._np, values)
        np_out = None if out is None else (tuple(o._a for o in out) if type(out) is tuple else _out_array(out))
        fn = _SPECIAL.get(self.name, self._np)
        with np.errstate(all="ignore"):
            r = fn(*values, out=np_out, **kwargs) if np_out is not None else fn(*values, **kwargs)
        _launch()
        if out is not None:
            return out
        return _wrap(r, _device_of(ins))

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        a = _operand(array, self.name)
        with np.errstate(all="ignore"):
            r = self._np.reduce(a, axis, dtype, None if out is None else _out_array(out), keepdims)
        return _result(r, array._dev, (), out=out)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        r = self._np.accumulate(_operand(array, self.name), axis, dtype, None if out is None else _out_array(out))
        return _result(r, array._dev, (), out=out)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        r = self._np.reduceat(_operand(array, self.name), _operand(indices, self.name), axis, dtype,
                              None if out is None else _out_array(out))
        return _result(r, array._dev, (), out=out)

    def outer(self, A, B, **kwargs):
        return _result(self._np.outer(_operand(A, self.name), _operand(B, self.name), **kwargs), A._dev, ())

    def at(self, a, indices, b=None):
        op = {"add": "add", "maximum": "max", "minimum": "min"}.get(self.name)
        if op is None:
            raise NotImplementedError(f"`{self.name}.at` is not supported yet")
        _scatter_into(a._a, indices, self._np, op, _operand(b, self.name))


def _out_array(out) -> np.ndarray:
    if out.__class__ is not ndarray:
        raise TypeError(f"Output arguments must be cupy.ndarray, got {type(out)}")
    return out._a


def _device_of(values) -> int:
    for v in values:
        if v.__class__ is ndarray:
            return v._dev
    return _current_device()


# ============================================================================ functions

# functions that return host values or metadata, and ones that allocate without writing
_NO_LAUNCH = {"empty", "empty_like", "shape", "ndim", "size", "result_type", "can_cast", "min_scalar_type",
              "isscalar", "iscomplexobj", "isrealobj", "get_array_module", "may_share_memory",
              "shares_memory", "promote_types", "common_type", "dtype", "finfo", "iinfo", "ix_"}
# functions whose output size depends on the data: the host must read a count first
_DATA_DEPENDENT = {"nonzero", "flatnonzero", "argwhere", "unique", "compress", "extract", "trim_zeros",
                   "bincount", "union1d", "intersect1d", "setdiff1d", "setxor1d"}
# functions that accept host data (they copy it to the device)
_CONVERTERS = {"array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "copy", "asarray_chkfinite"}
_CREATES = {"zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "identity", "tri",
            "indices", "zeros_like", "ones_like", "empty_like", "full_like"}


def _function(qualname: str, name: str, np_func, params):
    """A CuPy function computed by NumPy's: its signature checked, device arrays in and out, counted."""
    sig = _signature(params)
    max_args = _max_positional(sig)
    host_ok = name in _CONVERTERS

    def fn(*args, **kwargs):
        if kwargs or len(args) > max_args:
            _check_call(qualname, sig, args, kwargs)
        if name in _DATA_DEPENDENT or (name == "where" and len(args) + len(kwargs) == 1) or (
                name == "repeat" and _is_array(args[1:2])):
            _sync(f"{name} (output size depends on the data)")
        inputs = _inputs_of(args, kwargs)
        np_args, np_kwargs = _unwrap_args(args, kwargs, allow_host=host_ok)
        dev = _device_of(list(args) + list(kwargs.values())) if inputs else _current_device()
        with np.errstate(all="ignore"):
            r = np_func(*np_args, **np_kwargs)
        out = kwargs.get("out")
        return _result(r, dev, inputs, launch=name not in _NO_LAUNCH, out=out if out.__class__ is ndarray else None)

    fn.__name__ = fn.__qualname__ = name
    return fn


def _is_array(xs) -> bool:
    return bool(xs) and xs[0].__class__ is ndarray and xs[0].ndim > 0


def _np_asarray(a, dtype=None, order=None, *, blocking=False):
    """cupy.asarray: a device array as it is (or cast), host data copied over."""
    if a.__class__ is ndarray:
        if dtype is None or np.dtype(dtype) == a.dtype:
            return a
        _launch()
        return _new(a._a.astype(dtype), a._dev)
    if type(a) in (list, tuple) and any(x.__class__ is ndarray for x in a):  # stacked on the device
        _launch()
        return _new(np.array([x._a if x.__class__ is ndarray else x for x in a], dtype=dtype), _current_device())
    _upload()
    return _new(np.array(a, dtype=dtype, order=order or "K", copy=True), _current_device())


def _asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    if a.__class__ is ndarray:
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def _get_array_module(*args):
    return cupy if any(a.__class__ is ndarray for a in args) else np


def _take(a, indices, axis=None, out=None):
    """cupy.take: out-of-bounds indices wrap."""
    arr, idx = _operand(a, "take"), _operand(indices, "take", allow_host=True)
    n = arr.size if axis is None else arr.shape[axis]
    r = np.take(arr, np.asarray(idx) % n if n else idx, axis=axis)
    return _result(r, a._dev, (), out=_copy_into(out, r))


def _take_along_axis(a, indices, axis):
    arr, idx = _operand(a, "take_along_axis"), _operand(indices, "take_along_axis")
    n = arr.shape[axis] if axis is not None else arr.size
    return _result(np.take_along_axis(arr, idx % n if n else idx, axis), a._dev, ())


def _copy_into(out, r):
    if out is None:
        return None
    out._a[...] = r
    return out


def _broadcast_to(array, shape):
    """cupy.broadcast_to: a writable view (CuPy has no read-only arrays)."""
    return _result(np.broadcast_to(_operand(array, "broadcast_to"), shape), array._dev, (array,), launch=False)


# ============================================================================ ElementwiseKernel (the jit's C)

_TOKEN = re.compile(r"\s*(?:(\d+\.\d*(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?)|([A-Za-z_]\w*)|(\|\||&&|[<>=!]=|[-+*/()<>?:!,]))")
_C_FUNCS = {"exp": np.exp, "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
            "tanh": np.tanh, "fabs": np.abs, "pow": np.power, "isnan": np.isnan, "floor": np.floor}
_C_TYPES = {"float": np.float32, "double": np.float64}


class _Value:
    """A value in the kernel: its array, and its two factors when it is a product nvcc may fuse into an FMA."""

    __slots__ = ("v", "factors")

    def __init__(self, v, factors=None):
        self.v, self.factors = v, factors


class _CExpr:
    """A recursive-descent evaluator of the C expressions the jit writes, on NumPy arrays."""

    def __init__(self, text: str, env: dict, dtype, fma: bool):
        self.tokens = [m.group(1) or m.group(2) or m.group(3) for m in _TOKEN.finditer(text)]
        self.i, self.env, self.dtype, self.fma = 0, env, dtype, fma

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, expected=None):
        tok = self.peek()
        if expected is not None and tok != expected:
            raise SyntaxError(f"ElementwiseKernel: expected {expected!r}, got {tok!r}")
        self.i += 1
        return tok

    def parse(self) -> _Value:
        v = self.ternary()
        if self.peek() is not None:
            raise SyntaxError(f"ElementwiseKernel: unexpected {self.peek()!r}")
        return v

    def ternary(self) -> _Value:
        c = self.logical()
        if self.peek() != "?":
            return c
        self.take("?")
        a = self.ternary()
        self.take(":")
        b = self.ternary()
        return _Value(np.where(c.v, a.v, b.v).astype(self.dtype, copy=False))

    def logical(self) -> _Value:
        v = self.compare()
        while self.peek() in ("||", "&&"):
            op = self.take()
            w = self.compare()
            v = _Value(np.logical_or(v.v, w.v) if op == "||" else np.logical_and(v.v, w.v))
        return v

    def compare(self) -> _Value:
        v = self.additive()
        ops = {">": np.greater, "<": np.less, ">=": np.greater_equal, "<=": np.less_equal, "==": np.equal,
               "!=": np.not_equal}
        while self.peek() in ops:
            v = _Value(ops[self.take()](v.v, self.additive().v))
        return v

    def additive(self) -> _Value:
        v = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            w = self.term()
            v = self._add(v, w, op == "-")
        return v

    def _add(self, a: _Value, b: _Value, subtract: bool) -> _Value:
        if self.fma and (a.factors or b.factors):  # nvcc's default --fmad=true: a*b+c rounds once
            wide = np.float64 if self.dtype == np.float32 else np.longdouble
            if a.factors:
                x, y = (np.asarray(f, dtype=wide) for f in a.factors)
                r = x * y - np.asarray(b.v, dtype=wide) if subtract else x * y + np.asarray(b.v, dtype=wide)
            else:
                x, y = (np.asarray(f, dtype=wide) for f in b.factors)
                r = np.asarray(a.v, dtype=wide) - x * y if subtract else np.asarray(a.v, dtype=wide) + x * y
            return _Value(r.astype(self.dtype))
        return _Value(np.subtract(a.v, b.v) if subtract else np.add(a.v, b.v))

    def term(self) -> _Value:
        v = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()
            w = self.unary()
            v = _Value(np.multiply(v.v, w.v), (v.v, w.v)) if op == "*" else _Value(np.divide(v.v, w.v))
        return v

    def unary(self) -> _Value:
        tok = self.peek()
        if tok == "-":
            self.take()
            return _Value(np.negative(self.unary().v))
        if tok == "!":
            self.take()
            return _Value(np.logical_not(self.unary().v))
        if tok == "(" and self.tokens[self.i + 1] in _C_TYPES and self.tokens[self.i + 2] == ")":  # a cast
            ctype = _C_TYPES[self.tokens[self.i + 1]]
            self.i += 3
            return _Value(np.asarray(self.unary().v, dtype=ctype)[()])
        return self.primary()

    def primary(self) -> _Value:
        tok = self.take()
        if tok == "(":
            v = self.ternary()
            self.take(")")
            return v
        if tok[0].isdigit():
            return _Value(float(tok) if "." in tok or "e" in tok.lower() else int(tok))
        if tok in _C_FUNCS:
            self.take("(")
            args = [self.ternary()]
            while self.peek() == ",":
                self.take(",")
                args.append(self.ternary())
            self.take(")")
            return _Value(_C_FUNCS[tok](*(a.v for a in args)))
        if tok not in self.env:
            raise NameError(f"ElementwiseKernel: unknown name {tok!r}")
        return self.env[tok]


class ElementwiseKernel:
    """cupy.ElementwiseKernel for the C the jit generates: statements `T name = expr;` and `out0 = expr;`."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True, preamble="",
                 no_return=False, return_tuple=False, **kwargs):
        unknown = set(kwargs) - {"options", "loop_prep", "after_loop"}
        if unknown:
            raise TypeError(f"ElementwiseKernel() got unexpected keyword arguments {sorted(unknown)}")
        self.in_params = [p.split() for p in in_params.split(",") if p.strip()]
        self.out_params = [p.split() for p in out_params.split(",") if p.strip()]
        self.operation, self.name = operation, name
        self.options = tuple(kwargs.get("options", ()))
        self.fma = "--fmad=false" not in self.options

    def __call__(self, *args, size=None, block_size=None):
        if len(args) != len(self.in_params):
            raise TypeError(f"Wrong number of arguments for {self.name!r}")
        values = [_operand(a, self.name) for a in args]
        arrays = np.broadcast_arrays(*[np.asarray(v) for v in values])
        dtype = np.dtype(self.out_params[0][0])
        env = {name: _Value(a.astype(t, copy=False)) for (t, name), a in zip(self.in_params, arrays)}
        with np.errstate(all="ignore"):
            for stmt in filter(None, (s.strip() for s in self.operation.split(";"))):
                target, _, expr = stmt.partition("=")
                value = _CExpr(expr, env, dtype.type, self.fma).parse()  # a product keeps its factors:
                env[target.split()[-1]] = _Value(np.asarray(value.v, dtype=dtype), value.factors)  # fused later
        _launch()
        return _new(np.ascontiguousarray(env[self.out_params[0][1]].v), _device_of(args))


# ============================================================================ random numbers

class RandomState:
    """cupy.random.RandomState: NumPy's PCG64 underneath (so a seed gives the CPU's first draws)."""

    def __init__(self, seed=None):
        self._g = np.random.Generator(np.random.PCG64(seed))

    def _out(self, a):
        _launch()
        return _new(np.asarray(a), _current_device())

    def seed(self, seed=None) -> None:
        self._g = np.random.Generator(np.random.PCG64(seed))

    def random_sample(self, size=None, dtype=float):
        return self._out(self._g.random(size, dtype=np.dtype(dtype)))

    def standard_normal(self, size=None, dtype=float):
        return self._out(self._g.standard_normal(size, dtype=np.dtype(dtype)))

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        return self._out((self._g.normal(loc, scale, size)).astype(dtype))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        return self._out(self._g.uniform(low, high, size).astype(dtype))

    def rand(self, *size, **kwargs):
        return self.random_sample(size or None, **kwargs)

    def randn(self, *size, **kwargs):
        return self.standard_normal(size or None, **kwargs)

    def randint(self, low, high=None, size=None, dtype="l"):
        if high is None:
            low, high = 0, low
        return self._out(self._g.integers(low, high, size, dtype=np.dtype(dtype)))

    def permutation(self, num):
        if num.__class__ is ndarray:
            return self._out(self._g.permutation(num._a))
        return self._out(self._g.permutation(num))

    def shuffle(self, a) -> None:
        self._g.shuffle(a._a)
        _launch()

    def poisson(self, lam=1.0, size=None, dtype="l"):
        lam = lam._a if lam.__class__ is ndarray else lam
        return self._out(self._g.poisson(lam, size).astype(dtype))

    def choice(self, a, size=None, replace=True, p=None):
        a = a._a if a.__class__ is ndarray else a
        p = p._a if p.__class__ is ndarray else p
        return self._out(self._g.choice(a, size, replace, p))


# ============================================================================ memory

class _Pointer:
    def __init__(self, nbytes: int, device_id: int):
        self.mem = self
        self.size, self.device_id, self.ptr = nbytes, device_id, 0


class MemoryPool:
    """cupy.get_default_memory_pool(): bytes held by live arrays, per device."""

    def __init__(self):
        self._used: dict[int, int] = collections.defaultdict(int)
        self._allocator = None

    def malloc(self, nbytes: int) -> _Pointer:
        return _Pointer(nbytes, _current_device())

    def _allocated(self, obj, nbytes: int, dev: int) -> None:
        self._used[dev] += nbytes
        weakref.finalize(obj, self._freed, nbytes, dev)
        if self._allocator is not None:  # a Python allocator runs on every allocation
            counters.allocator_calls += 1
            with _on_device(dev):
                self._allocator(nbytes)

    def _freed(self, nbytes: int, dev: int) -> None:
        self._used[dev] -= nbytes

    def used_bytes(self) -> int:
        return self._used[_current_device()]

    def total_bytes(self) -> int:
        return self.used_bytes()

    def free_bytes(self) -> int:
        return 0

    def free_all_blocks(self, stream=None) -> None:
        pass

    def n_free_blocks(self) -> int:
        return 0


pool = MemoryPool()
_pinned_pool = MemoryPool()


@contextlib.contextmanager
def _on_device(dev: int):
    prev = _current_device()
    _current.id = dev
    try:
        yield
    finally:
        _current.id = prev


# ============================================================================ cupy.cuda

class Device:
    def __init__(self, device=None):
        self.id = _current_device() if device is None else int(device)
        if not 0 <= self.id < DEVICE_COUNT:
            raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {self.id}")
        self._prev = []

    def __enter__(self):
        self._prev.append(_current_device())
        _current.id = self.id
        return self

    def __exit__(self, *exc):
        _current.id = self._prev.pop()

    def use(self) -> None:
        _current.id = self.id

    def synchronize(self) -> None:
        _sync("Device.synchronize")

    compute_capability = "80"

    @property
    def mem_info(self):
        return (16 << 30, 16 << 30)

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


class Event:
    """A CUDA event: the stand-in is synchronous, so recording notes the time."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.t = None

    def record(self, stream=None) -> None:
        self.t = max(time.perf_counter(), _busy_until[0])  # when the queued work reaches the event

    def synchronize(self) -> None:
        _sync("Event.synchronize")

    @property
    def done(self) -> bool:
        return self.t is not None and self.t <= time.perf_counter()


def _elapsed(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events (CuPy's get_elapsed_time: both must have been reached)."""
    if not end.done:
        raise RuntimeError("cudaErrorNotReady: device not ready (synchronize the end event first)")
    return (end.t - start.t) * 1e3


class Stream:
    null = None

    def __init__(self, null=False, non_blocking=False, ptds=False):
        pass

    def synchronize(self) -> None:
        _sync("Stream.synchronize")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def _set_allocator(allocator=None) -> None:
    pool._allocator = None if allocator is None or getattr(allocator, "__self__", None) is pool else allocator


@contextlib.contextmanager
def allow_synchronize(allow: bool):
    prev = _allow_sync[0]
    _allow_sync[0] = allow
    try:
        yield
    finally:
        _allow_sync[0] = prev


# ============================================================================ the modules

def _module(name: str, doc: str = "") -> types.ModuleType:
    mod = types.ModuleType(name, doc)
    mod.__stand_in__ = True
    return mod


class _Missing:
    """A CuPy name the stand-in does not emulate: using it says so (not 'CuPy lacks it')."""

    def __init__(self, qualname: str):
        self.qualname = qualname

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"{self.qualname} exists in CuPy but the stand-in (tests/fake_cupy.py) does "
                                  f"not emulate it yet: add it there")


def _fill(mod, qualname: str, np_mod, overrides: dict) -> None:
    for name, entry in API[qualname].items():
        if name in overrides:
            setattr(mod, name, overrides[name])
            continue
        target = getattr(np_mod, name, None)
        kind = entry["kind"]
        if kind == "ufunc" and isinstance(target, np.ufunc):
            setattr(mod, name, ufunc_(name, target))
        elif kind == "function" and callable(target):
            setattr(mod, name, _function(f"{qualname}.{name}", name, target, entry["params"]))
        elif kind in ("constant", "class") and target is not None:
            setattr(mod, name, target)
        elif kind != "module":
            setattr(mod, name, _Missing(f"{qualname}.{name}"))


cupy = _module("cupy", "The stand-in's cupy")
cupy.ndarray, cupy.ufunc, cupy.ElementwiseKernel = ndarray, ufunc_, ElementwiseKernel
_fill(cupy, "cupy", np, {
    "ndarray": ndarray, "ufunc": ufunc_, "ElementwiseKernel": ElementwiseKernel, "asarray": _np_asarray,
    "asnumpy": _asnumpy, "get_array_module": _get_array_module, "take": _take, "take_along_axis": _take_along_axis,
    "broadcast_to": _broadcast_to, "get_default_memory_pool": lambda: pool,
    "get_default_pinned_memory_pool": lambda: _pinned_pool})

cupy.random = _module("cupy.random")
cupy.random.RandomState = RandomState
_global_rs = RandomState()
for _name in API["cupy.random"]:
    if hasattr(RandomState, _name) and not hasattr(cupy.random, _name):
        setattr(cupy.random, _name, getattr(_global_rs, _name))
cupy.random.seed = _global_rs.seed

cupy.linalg = _module("cupy.linalg")
_fill(cupy.linalg, "cupy.linalg", np.linalg, {})
cupy.lib = _module("cupy.lib")
cupy.lib.stride_tricks = _module("cupy.lib.stride_tricks")
_fill(cupy.lib.stride_tricks, "cupy.lib.stride_tricks", np.lib.stride_tricks, {
    "as_strided": lambda x, shape=None, strides=None: _result(
        np.lib.stride_tricks.as_strided(x._a, shape, strides, writeable=True), x._dev, (x,), launch=False)})

cuda = _module("cupy.cuda")
cuda.Device, cuda.Event, cuda.Stream, cuda.MemoryPool = Device, Event, Stream, MemoryPool
cuda.get_elapsed_time = _elapsed
cuda.set_allocator = _set_allocator
cuda.get_current_stream = lambda device=None: Stream()
cuda.runtime = _module("cupy.cuda.runtime")
cuda.runtime.getDeviceCount = lambda: DEVICE_COUNT
cuda.runtime.getDeviceProperties = lambda i: {"name": b"Stand-in (NumPy)", "totalGlobalMem": 16 << 30}
cuda.runtime.deviceSynchronize = lambda: _sync("deviceSynchronize")
cupy.cuda = cuda

cupyx = _module("cupyx", "The stand-in's cupyx")


# the dtypes CuPy's scatter operations take (CUDA's atomics; cupy/_core/_routines_indexing.pyx): int64 is not one
_SCATTER_DTYPES = {"add": "int32 float16 float32 float64 uint32 uint64", "max": "int32 float32 float64 uint32 uint64",
                   "min": "int32 float32 float64 uint32 uint64"}


def _scatter_into(a: np.ndarray, key, np_ufunc, name: str, values) -> None:
    if a.dtype.name not in _SCATTER_DTYPES[name].split():
        raise TypeError(f"scatter_{name} only supports {', '.join(_SCATTER_DTYPES[name].split())} as data type")
    np_ufunc.at(a, _index_key(a, key)[0], values)
    _launch()


def _scatter(np_ufunc, name: str):
    def scatter(a, slices, value):
        _scatter_into(a._a, slices, np_ufunc, name, _operand(value, "scatter", allow_host=True))
    return scatter


_fill(cupyx, "cupyx", types.SimpleNamespace(), {
    "scatter_add": _scatter(np.add, "add"), "scatter_max": _scatter(np.maximum, "max"),
    "scatter_min": _scatter(np.minimum, "min"),
    "allow_synchronize": allow_synchronize, "DeviceSynchronized": DeviceSynchronized})
cupyx.scipy = _module("cupyx.scipy")
cupyx.scipy.special = _module("cupyx.scipy.special")


def _special():
    import scipy.special
    return scipy.special


class _LazySpecial(types.ModuleType):
    def __getattr__(self, name):
        entry = API["cupyx.scipy.special"].get(name)
        target = getattr(_special(), name, None)
        if entry is None or not isinstance(target, np.ufunc):
            raise AttributeError(f"module 'cupyx.scipy.special' has no attribute {name!r}")
        fn = ufunc_(name, target)
        setattr(self, name, fn)
        return fn


cupyx.scipy.special.__class__ = _LazySpecial

MODULES = {"cupy": cupy, "cupyx": cupyx, "cupyx.scipy": cupyx.scipy, "cupyx.scipy.special": cupyx.scipy.special,
           "cupy.cuda": cuda}


def importer(name: str):
    """What `importlib.import_module` gives CUDABackend, for the stand-in's modules."""
    try:
        return MODULES[name]
    except KeyError:
        raise ImportError(f"No module named {name!r} in the stand-in") from None


# ndarray methods: every one CuPy has, computed by NumPy's, signatures checked
_EXPLICIT = set(vars(ndarray))


def _method(name: str, params):
    sig = _signature(params)
    qual = f"cupy.ndarray.{name}"
    data_dependent = name in ("nonzero", "compress")

    def method(self, *args, **kwargs):
        if kwargs:
            _check_call(qual, sig, args, kwargs)
        if data_dependent or (name == "repeat" and _is_array(args[:1])):
            _sync(f"ndarray.{name} (output size depends on the data)")
        if name in ("take", "put") and args:
            args = (_wrapped_take_indices(self, args[0], kwargs.get("axis", args[1] if len(args) > 1 else None)),
                    *args[1:])
        np_args, np_kwargs = _unwrap_args(args, kwargs)
        out = kwargs.get("out")
        with np.errstate(all="ignore"):
            r = getattr(self._a, name)(*np_args, **np_kwargs)
        if name in ("fill", "put", "sort"):
            _launch()
            return None
        return _result(r, self._dev, (self,), out=out if out.__class__ is ndarray else None)

    method.__name__ = name
    return method


def _wrapped_take_indices(self, idx, axis):
    i = _operand(idx, "take", allow_host=True)
    n = self._a.size if axis is None else self._a.shape[axis]
    return _new(np.asarray(i) % n if n else np.asarray(i), self._dev)


_BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
           "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "and": "bitwise_and",
           "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift", "rshift": "right_shift"}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
            "ge": "greater_equal"}


def _defers(other) -> bool:
    """CuPy hands a binary op to the other operand when it opts out of ufuncs or outranks the array."""
    return getattr(type(other), "__array_ufunc__", 0) is None or getattr(other, "__array_priority__", -1) > 100


def _binary(ufunc_name: str, reflected: bool = False, inplace: bool = False):
    def op(self, other):
        if _defers(other):
            return NotImplemented
        f = getattr(cupy, ufunc_name)
        if inplace:
            return f(self, other, out=self)
        return f(other, self) if reflected else f(self, other)
    return op


for _short, _uf in _BINARY.items():
    setattr(ndarray, f"__{_short}__", _binary(_uf))
    setattr(ndarray, f"__r{_short}__", _binary(_uf, reflected=True))
    setattr(ndarray, f"__i{_short}__", _binary(_uf, inplace=True))
for _short, _uf in _COMPARE.items():
    setattr(ndarray, f"__{_short}__", _binary(_uf))
ndarray.__matmul__ = lambda self, other: NotImplemented if _defers(other) else cupy.matmul(self, other)
ndarray.__rmatmul__ = lambda self, other: NotImplemented if _defers(other) else cupy.matmul(other, self)
ndarray.__neg__ = lambda self: cupy.negative(self)
ndarray.__pos__ = lambda self: cupy.positive(self)
ndarray.__abs__ = lambda self: cupy.absolute(self)
ndarray.__invert__ = lambda self: cupy.invert(self)
ndarray.__divmod__ = lambda self, other: (self // other, self % other)

for _name, _entry in API["cupy.ndarray"].items():
    if _entry["kind"] == "method" and not _name.startswith("__") and _name not in _EXPLICIT \
            and hasattr(np.ndarray, _name):
        setattr(ndarray, _name, _method(_name, _entry["params"]))
