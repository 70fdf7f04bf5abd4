"""save / load: torch.save and torch.load for checkpoints and whole models, without pickle.

A file is one zip archive (members stored uncompressed, like ``.npz``):

    manifest.json     the structure: a JSON tree describing the saved object
    tensors/<i>.npy   the data of tensor i, a plain .npy array (never an object array)
    arrays/<j>.npy    the data of NumPy array (or NumPy scalar) j

``manifest.json`` is ``{"format": "tinygrad_lab.save", "version": 1 or 2, "tensors": [...],
"arrays": [...], "root": node}``. A node is ``null``, ``true``/``false``, a JSON
integer or string (Python None, bool, int, str as themselves), or an object with a
``"type"``: ``float`` (``"value"``: ``repr()`` of the float, exact, including nan/inf),
``list``/``tuple``/``Size`` (``"items"``), ``dict``/``OrderedDict`` (``"items"``: a list
of ``[key, value]`` node pairs, so keys keep their order and their type: optimizer
state uses int keys), ``tensor``/``ndarray``/``numpy_scalar`` (``"index"`` into the
tables), ``dtype`` and ``device`` (``"name"``). A tensor entry records the member
name, dtype, shape, requires_grad and the device it was saved from. Version 2 adds,
for whole modules and optimizers: ``parameter`` (a tensor that loads as an
nn.Parameter), tensors as dict keys, ``set``/``frozenset`` and ``defaultdict``
(``"factory"``), ``global`` (a class or function by ``"module"`` and ``"name"``),
``object`` (``"class"``: a global, ``"state"``: a dict of its attributes) and ``ref``
(``"index"``: the n-th object built, for an object met again). Files that need none of
these are still written as version 1.

Why not pickle (what torch.save uses): unpickling runs code chosen by whoever wrote
the file. Loading here only parses JSON and .npy headers (``allow_pickle`` is never
on) and builds the types above, so a file can never run code: a class or function a
file names is looked up among the allowed ones (add_safe_globals, safe_globals, a few
builtins), never imported; an object is made with object.__new__ and given its saved
attributes, never __init__, __setstate__ or __reduce__. Every damaged or foreign file
raises `SerializationError` naming the file, and a file naming something not allowed a
`WeightsOnlyLoadError` (also a pickle.UnpicklingError, as torch.load's).

Deviations from PyTorch, and why:
- Objects are saved as their class (by name) and their ``__dict__``: an object of a class
  with ``__slots__``, its own ``__new__``, or defined inside a function, and lambdas,
  are a TypeError naming where they sit in the object. ``.grad`` is not saved (as in PyTorch).
- The same tensor or object saved twice loads as one object (as in PyTorch), but
  distinct tensors that shared memory (views) load as independent copies, and a
  container (list, dict) referenced twice loads as two equal containers. A container
  that contains itself is refused (an object may refer back to itself).
- ``weights_only=False`` never unpickles: it loads with the same code, and also allows
  every nn.Module, Optimizer and LRScheduler class defined in the process (what
  ``torch.load(path, weights_only=False)`` of a whole model needs); other classes and
  all functions still have to be allowed.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import pickle
import struct
import types
import zipfile
from collections import OrderedDict, defaultdict

import numpy as np

from . import dtypes
from ._fileio import atomic_open
from .autograd.tensor_base import Size, TensorBase, make
from .backends import Device
from .creation import resolve_device

FORMAT_NAME = "tinygrad_lab.save"
FORMAT_VERSION = 2  # the newest this module reads and writes; files without objects are still written as 1
MANIFEST = "manifest.json"
MAX_DEPTH = 200  # nesting limit, checked on save and load (keeps both far from Python's recursion limit)

_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed member timestamps: saving the same object twice gives identical bytes
_NPY_DTYPE = re.compile(r"[<>|=]?[biufc][0-9]{1,2}")  # plain numeric NumPy dtypes, nothing else
_DEVICE = re.compile(r"[a-z][a-z0-9_]{0,31}(:[0-9]{1,4})?")  # 'cpu', 'cuda:0': a device name, nothing else
_DTYPE_NAMES = frozenset(d.name for d in dtypes.ALL)

_SUPPORTED = ("tensors and Parameters, NumPy arrays and scalars, Python numbers, strings, bools, None, dtypes, "
              "devices, dict / OrderedDict / defaultdict / list / tuple / set of these, module-level functions "
              "and classes (by name), and objects of module-level classes (such as modules and optimizers: "
              "their class by name and their __dict__)")
_GLOBAL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){1,32}")  # module.qualname, no <locals>


def _not_storable(cls: type) -> str | None:
    """Why an object of this class cannot be saved as its __dict__ (None when it can)."""
    if "<" in cls.__qualname__:
        return "its class is defined inside a function, so a file cannot name it; define it at module level"
    if any("__slots__" in vars(c) for c in cls.__mro__[:-1]) or "__dict__" not in dir(cls):
        return "it keeps its state in slots or in C, not in a __dict__"
    if cls.__new__ is not object.__new__:
        return "its class has its own __new__, which loading would have to call"
    return None


class SerializationError(RuntimeError, ValueError):
    """The file is not a readable tinygrad_lab.save file (damaged, truncated or foreign).

    Both a RuntimeError (what torch.load raises for a bad archive) and a ValueError."""


class WeightsOnlyLoadError(SerializationError, pickle.UnpicklingError):
    """The file names a class or function that is not allowed (add_safe_globals). Also a
    pickle.UnpicklingError, what torch.load raises in the same case."""


# ============================================================================ allowed globals

# what every file may name: the types a defaultdict's factory or an attribute commonly is
_DEFAULT_GLOBALS = (dict, list, tuple, set, frozenset, int, float, complex, str, bool, OrderedDict)
_safe_globals: list = []


def add_safe_globals(safe_globals: list) -> None:
    """Allow files to name these classes and functions (as torch.serialization.add_safe_globals):
    `add_safe_globals([MyNet])` lets `load` build MyNet objects. An entry may also be a pair
    (obj, "module.name") for an object saved under another name. Loading still never runs code:
    an object is built without calling __init__ (its class's __new__, then its saved __dict__)."""
    for entry in safe_globals:
        obj, name = entry if isinstance(entry, tuple) else (entry, None)
        if not callable(obj) or (name is not None and not isinstance(name, str)):
            raise TypeError(f"add_safe_globals expects classes, functions or (object, 'module.name') pairs, got "
                            f"{entry!r}")
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> list:
    """The classes and functions allowed with add_safe_globals (a copy)."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget every add_safe_globals entry."""
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list):
    """with safe_globals([MyNet]): these are allowed inside the block only."""
    before = list(_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _safe_globals[:] = before


def _full_name(obj) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', '?')}"


def _find_global(module: str, name: str, weights_only: bool):
    """The allowed object named module.name, or None. Only objects already in this process are
    considered (the allow-list, and with weights_only=False the loaded Module, Optimizer and
    LRScheduler classes): nothing is imported, no attribute of a module is looked up."""
    wanted = f"{module}.{name}"
    for entry in _safe_globals:
        obj, alias = entry if isinstance(entry, tuple) else (entry, None)
        if (alias or _full_name(obj)) == wanted:
            return obj
    for obj in _DEFAULT_GLOBALS:
        if _full_name(obj) == wanted:
            return obj
    if not weights_only:
        for cls in _model_classes():
            if _full_name(cls) == wanted:
                return cls
    return None


def _model_classes():
    """Every nn.Module, Optimizer and LRScheduler class defined so far (what weights_only=False allows)."""
    from .nn.modules.module import Module
    from .optim.lr_scheduler import LRScheduler
    from .optim.optimizer import Optimizer
    pending = [Module, Optimizer, LRScheduler]
    while pending:
        cls = pending.pop()
        yield cls
        pending.extend(cls.__subclasses__())


def _unsafe_global_error(file: str, module: str, name: str) -> WeightsOnlyLoadError:
    short = name.rpartition(".")[2]
    return WeightsOnlyLoadError(
        f"cannot load {file}: weights-only load failed. Unsupported global: GLOBAL {module}.{name} was not an "
        f"allowed global by default. Loading never runs code from a file, but it builds objects of the classes "
        f"a file names, so each must be allowed first. If you trust {module}.{name}, allow it with "
        f"tinygrad_lab.serialization.add_safe_globals([{short}]) or inside a "
        f"`with tinygrad_lab.serialization.safe_globals([{short}]):` block (load(..., weights_only=False) also "
        f"allows every nn.Module, optimizer and lr scheduler class defined in this process).")


# ============================================================================ save

class _Encoder:
    """Turns the object into the JSON manifest tree plus the list of arrays to store."""

    def __init__(self):
        self.tensors: list[dict] = []
        self.tensor_arrays: list[np.ndarray] = []
        self.arrays: list[dict] = []
        self.array_data: list[np.ndarray] = []
        self._tensor_index: dict[int, int] = {}
        self._object_index: dict[int, int] = {}
        self._keepalive: list = []  # keeps memoized tensors and objects alive so id()s stay unique
        self._active: set[int] = set()  # ids of the containers on the current path (cycle check)
        self.version = 1  # 2 once the file needs a node type that format 1 lacks (objects, sets, ...)

    def node(self, x, path: str, depth: int = 0, key: bool = False):
        if depth > MAX_DEPTH:
            raise ValueError(f"cannot save: the object is nested more than {MAX_DEPTH} levels deep at {path}")
        if x is None or type(x) is bool or type(x) is str:
            return x
        if type(x) is int:
            if x.bit_length() > 4000:
                raise ValueError(f"cannot save an int of {x.bit_length()} bits at {path}")
            return x
        if type(x) is float:
            return {"type": "float", "value": repr(x)}  # repr is exact: float(repr(x)) == x, nan and inf too
        if isinstance(x, np.generic) and not key:  # np.float64 too (a float subclass): it keeps its type
            return {"type": "numpy_scalar", "index": self._array(np.asarray(x), path)}
        if type(x) is tuple or (type(x) is Size and not key):
            return {"type": "tuple" if type(x) is tuple else "Size",
                    "items": self._items(x, path, depth, key)}
        if isinstance(x, TensorBase):  # also as a dict key: a whole optimizer's state is keyed by parameter
            return self._tensor_node(x, key)
        if key:
            raise TypeError(f"cannot save a dict key of type {type(x).__qualname__} at {path}: keys must be "
                            f"str, int, float, bool, None, tensors or tuples of these")
        return self._value(x, path, depth)

    def _value(self, x, path: str, depth: int):
        """The node of anything that cannot be a dict key."""
        if type(x) is np.ndarray:
            return {"type": "ndarray", "index": self._array(x, path)}
        if type(x) is list:
            return {"type": "list", "items": self._items(x, path, depth, False)}
        if type(x) is dict or type(x) is OrderedDict:
            return self._dict(x, path, depth)
        if isinstance(x, dtypes.DType):
            return {"type": "dtype", "name": x.name}
        if isinstance(x, Device):
            return {"type": "device", "name": str(x)}
        if type(x) is set or type(x) is frozenset:
            return self._set(x, path, depth)
        if type(x) is defaultdict:
            return self._defaultdict(x, path, depth)
        if isinstance(x, (type, types.FunctionType, types.BuiltinFunctionType)):
            return self._global(x, path)
        return self._object(x, path, depth)

    def _tensor_node(self, t: TensorBase, key: bool) -> dict:
        from .nn.parameter import Parameter  # (nn builds on this module)
        if key or isinstance(t, Parameter):
            self.version = 2
        return {"type": "parameter" if isinstance(t, Parameter) else "tensor", "index": self._tensor(t)}

    def _set(self, s, path: str, depth: int) -> dict:
        self._enter(s, path)
        try:
            items = [self.node(v, f"{path} (item {v!r})", depth + 1, key=True) for v in s]
        finally:
            self._active.discard(id(s))
        items.sort(key=lambda n: json.dumps(n, sort_keys=True))  # a set's order changes between runs
        self.version = 2
        return {"type": type(s).__name__, "items": items}

    def _defaultdict(self, d: defaultdict, path: str, depth: int) -> dict:
        factory = None if d.default_factory is None else self._global(d.default_factory, f"{path}.default_factory")
        node = self._dict(d, path, depth)
        node.update(type="defaultdict", factory=factory)
        return node

    def _global(self, x, path: str) -> dict:
        """A class or function, by name (module and qualified name): loading looks the name up among
        the allowed globals, never imports anything."""
        module, name = getattr(x, "__module__", None), getattr(x, "__qualname__", None)
        kind = "class" if isinstance(x, type) else "function"
        if not isinstance(module, str) or not isinstance(name, str) or not _GLOBAL.fullmatch(f"{module}.{name}"):
            raise TypeError(f"cannot save the {kind} {name if isinstance(name, str) else repr(x)} at {path}: only "
                            f"functions and classes defined at module level can be saved (by name); lambdas and "
                            f"local definitions cannot")
        self.version = 2
        return {"type": "global", "module": module, "name": name}

    def _object(self, x, path: str, depth: int) -> dict:
        """An instance of a module-level class, as its class (by name) and its __dict__; an object met
        again (a module registered twice, an optimizer's parameters) is a reference to the first."""
        index = self._object_index.get(id(x))
        if index is not None:
            return {"type": "ref", "index": index}
        why = _not_storable(type(x))
        if why:
            raise TypeError(f"cannot save object of type {type(x).__qualname__} at {path}: {why}. "
                            f"tinygrad_lab.save stores {_SUPPORTED}")
        self._object_index[id(x)] = len(self._object_index)
        self._keepalive.append(x)
        cls = self._global(type(x), path)
        return {"type": "object", "class": cls, "state": self._dict(vars(x), path, depth)}

    def _enter(self, x, path: str) -> None:
        if id(x) in self._active:
            raise ValueError(f"cannot save: circular reference at {path} (the container contains itself)")
        self._active.add(id(x))

    def _items(self, seq, path: str, depth: int, key: bool) -> list:
        self._enter(seq, path)
        try:
            return [self.node(v, f"{path}[{i}]", depth + 1, key) for i, v in enumerate(seq)]
        finally:
            self._active.discard(id(seq))

    def _dict(self, d: dict, path: str, depth: int) -> dict:
        self._enter(d, path)
        try:
            items = [[self.node(k, f"{path} (key {k!r})", depth + 1, key=True),
                      self.node(v, f"{path}[{k!r}]", depth + 1)] for k, v in d.items()]
        finally:
            self._active.discard(id(d))
        return {"type": "dict" if type(d) is dict else "OrderedDict", "items": items}

    def _tensor(self, t: TensorBase) -> int:
        i = self._tensor_index.get(id(t))
        if i is not None:
            return i
        host = _c_order(t._device.backend.to_host(t._data))
        i = len(self.tensors)
        self._tensor_index[id(t)] = i
        self._keepalive.append(t)
        self.tensors.append({"file": f"tensors/{i}.npy", "dtype": dtypes.from_numpy_dtype(host.dtype).name,
                             "shape": list(host.shape), "requires_grad": bool(t._requires_grad or
                                                                               t._grad_fn is not None),
                             "device": str(t._device)})
        self.tensor_arrays.append(host)
        return i

    def _array(self, a: np.ndarray, path: str) -> int:
        if not _NPY_DTYPE.fullmatch(a.dtype.str):
            raise TypeError(f"cannot save a NumPy array of dtype {a.dtype} at {path}: only bool, integer, "
                            f"float and complex arrays can be saved")
        j = len(self.arrays)
        self.arrays.append({"file": f"arrays/{j}.npy", "dtype": a.dtype.str, "shape": list(a.shape)})
        self.array_data.append(_c_order(a))
        return j


def _c_order(a: np.ndarray) -> np.ndarray:
    """a in C order (a copy only when it is a non-contiguous view; np.ascontiguousarray would turn 0-d into 1-d)."""
    return a if a.flags.c_contiguous else a.copy(order="C")


def _write_array(zf: zipfile.ZipFile, name: str, arr: np.ndarray) -> None:
    """One stored .npy member (written straight from the array: no extra copy of the data)."""
    info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o644 << 16
    with zf.open(info, "w", force_zip64=arr.nbytes > (1 << 30)) as fp:
        np.lib.format.write_array(fp, arr, allow_pickle=False)


def _write_zip(fileobj, enc: _Encoder, manifest: bytes) -> None:
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        info = zipfile.ZipInfo(MANIFEST, date_time=_ZIP_DATE)
        info.compress_type = zipfile.ZIP_STORED
        info.external_attr = 0o644 << 16
        zf.writestr(info, manifest)
        for meta, arr in zip(enc.tensors, enc.tensor_arrays):
            _write_array(zf, meta["file"], arr)
        for meta, arr in zip(enc.arrays, enc.array_data):
            _write_array(zf, meta["file"], arr)


def _binary(f, op: str, mode: str) -> None:
    """A text-mode file object would fail deep inside zipfile: say what is wrong instead."""
    if isinstance(f, io.TextIOBase):
        raise TypeError(f"{op}() needs a file object opened in binary mode ('{mode}'), got a text-mode "
                        f"{type(f).__name__}{' ' + repr(f.name) if isinstance(getattr(f, 'name', None), str) else ''}")


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True) -> None:
    """Save `obj` to `f`, as torch.save: a state_dict or checkpoint dict (tensors, numbers,
    strings, containers), or a whole module or optimizer. `f` is a path, or a binary file
    object opened for writing. pickle_module and pickle_protocol are accepted and ignored
    (nothing is pickled).

    Writing to a path is atomic: the data goes to a temporary file in the same
    directory, is flushed to disk, then renamed over `f`; a failed save leaves any
    previous file untouched and no temporary file behind. A save whose process was
    killed mid-write cannot clean up: the next save to the same path removes its
    temporary file."""
    enc = _Encoder()
    root = enc.node(obj, "obj")  # every unsupported object is reported here, before any file is touched
    manifest = json.dumps({"format": FORMAT_NAME, "version": enc.version, "tensors": enc.tensors,
                           "arrays": enc.arrays, "root": root},
                          ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")

    if not isinstance(f, (str, bytes, os.PathLike)):
        if not hasattr(f, "write"):
            raise TypeError(f"save() expects a path or a binary file object opened for writing, "
                            f"got {type(f).__name__}")
        _binary(f, "save", "wb")
        _write_zip(f, enc, manifest)
        if hasattr(f, "flush"):
            f.flush()
        return

    path = os.fspath(f)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if os.path.islink(path):
        path = os.path.realpath(path)  # write through a symlink, as open(path, "wb") would
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(2, f"cannot save to {path!r}: parent directory {directory!r} does not exist", path)
    if os.path.isdir(path):
        raise IsADirectoryError(21, f"cannot save to {path!r}: it is a directory", path)
    with atomic_open(path) as fp:  # a temporary renamed over path; a killed save's temporary goes next time
        _write_zip(fp, enc, manifest)


# ============================================================================ load

class _Reader:
    """Reads and validates one file; every problem becomes a SerializationError naming it."""

    def __init__(self, fileobj, name: str, weights_only: bool = True, unsafe: list | None = None):
        self.name = name
        self.fileobj = fileobj
        self.weights_only = weights_only
        self.unsafe = unsafe  # a list: collect the globals that are not allowed instead of refusing the file
        self.objects_seen = 0
        self.objects: list = []
        self.parameters: dict[int, object] = {}

    def fail(self, why: str) -> SerializationError:
        return SerializationError(f"cannot load {self.name}: {why}")

    # ------------------------------------------------------------ the archive
    def open_zip(self) -> zipfile.ZipFile:
        fp = self.fileobj
        start = fp.tell()  # a file object is read from where it stands, as torch.load does
        fp.seek(0, io.SEEK_END)
        self.size = fp.tell() - start
        fp.seek(start)
        head = fp.read(4)
        fp.seek(start)
        if self.size == 0:
            raise self.fail("the file is empty")
        if head.startswith(b"\x80"):
            raise self.fail("it looks like a pickle (e.g. written by torch.save); tinygrad_lab files are zip "
                            "archives with a JSON manifest, and pickles are never loaded because they can run code")
        if head[:4] == b"\x93NUM":
            raise self.fail("it is a single .npy array, not a tinygrad_lab.save file (use numpy.load)")
        try:
            zf = zipfile.ZipFile(fp, "r")
        except zipfile.BadZipFile as e:
            if head[:2] == b"PK":
                raise self.fail(f"it is a damaged or truncated zip archive ({e})") from None
            raise self.fail(f"it is not a zip archive ({e}); was it written by tinygrad_lab.save?") from None
        return zf

    def check_members(self, zf: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
        members: dict[str, zipfile.ZipInfo] = {}
        for info in zf.infolist():
            if info.filename in members:
                raise self.fail(f"the archive has two members named {info.filename!r}")
            members[info.filename] = info
        if MANIFEST not in members:
            names = sorted(members)
            if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
                raise self.fail("it is a PyTorch checkpoint (torch.save: a pickle inside a zip); tinygrad_lab "
                                "never unpickles. Load it with torch.load and convert the tensors with "
                                "tinygrad_lab.tensor(t.numpy())")
            shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
            raise self.fail(f"the zip archive has no {MANIFEST!r}, so it was not written by tinygrad_lab.save "
                            f"(its members: {shown or 'none'})")
        for info in members.values():
            if info.flag_bits & 0x1:
                raise self.fail(f"member {info.filename!r} is encrypted")
            if info.compress_type != zipfile.ZIP_STORED:
                raise self.fail(f"member {info.filename!r} is compressed (method {info.compress_type}); "
                                f"tinygrad_lab.save stores members uncompressed")
            if info.file_size != info.compress_size:
                raise self.fail(f"the zip directory gives member {info.filename!r} two different sizes "
                                f"({info.compress_size} stored, {info.file_size} uncompressed): it is damaged")
            if info.file_size > self.size:
                raise self.fail(f"member {info.filename!r} claims {info.file_size} bytes, more than the whole file "
                                f"({self.size} bytes): it is truncated or damaged")
        self.check_layout(zf)
        return members

    def check_layout(self, zf: zipfile.ZipFile) -> None:
        """Members lie one after another, in directory order, and none reaches into the next.

        Every size check above passes for a crafted archive whose members overlap (each
        member's data runs over the next member's header, to the end of the file): a few
        megabytes would then read as gigabytes. save() writes members back to back, so
        anything else is refused."""
        end, previous = 0, None  # where the previous member's data ends, and its name
        for info in zf.infolist():
            name = info.filename
            if previous is not None and info.header_offset < end:
                how = "comes before" if info.header_offset < previous[1] else "starts inside"
                raise self.fail(f"member {name!r} {how} member {previous[0]!r} in the archive (overlapping or "
                                f"out-of-order members: a damaged or crafted file)")
            self.fileobj.seek(info.header_offset)
            header = self.fileobj.read(30)  # the local header: 30 bytes, then the name and extra field
            if len(header) != 30 or header[:4] != b"PK\x03\x04":
                raise self.fail(f"member {name!r} has no local header where the zip directory puts it")
            name_len, extra_len = struct.unpack("<HH", header[26:30])
            previous = (name, info.header_offset)
            end = info.header_offset + 30 + name_len + extra_len + info.compress_size
        if end > zf.start_dir:
            raise self.fail(f"member {previous[0]!r} runs into the zip directory (a damaged or crafted file)")

    def read_manifest(self, zf: zipfile.ZipFile) -> dict:
        raw = zf.read(MANIFEST)  # zipfile checks the CRC
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            raise self.fail(f"{MANIFEST} is not ASCII JSON") from None

        def no_duplicates(pairs):
            out = {}
            for k, v in pairs:
                if k in out:
                    raise self.fail(f"{MANIFEST} repeats the field {k!r}")
                out[k] = v
            return out

        def no_constant(c):
            raise self.fail(f"{MANIFEST} contains the non-JSON constant {c}")

        try:
            m = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant)
        except (json.JSONDecodeError, RecursionError) as e:
            raise self.fail(f"{MANIFEST} is not valid JSON ({type(e).__name__}: {e})") from None
        if not isinstance(m, dict) or m.get("format") != FORMAT_NAME:
            raise self.fail(f"{MANIFEST} does not declare format {FORMAT_NAME!r}; not a tinygrad_lab.save file")
        version = m.get("version")
        if type(version) is not int:
            raise self.fail(f"{MANIFEST} has no integer format version")
        if version > FORMAT_VERSION:
            raise self.fail(f"it was written in format version {version} by a newer tinygrad_lab; this one "
                            f"reads version {FORMAT_VERSION} (upgrade tinygrad_lab)")
        if version < 1:
            raise self.fail(f"unknown format version {version}")
        self.fields(m, "the manifest", {"format", "version", "tensors", "arrays", "root"})
        for table in ("tensors", "arrays"):
            if not isinstance(m[table], list):
                raise self.fail(f"the manifest's {table!r} is not a list")
        return m

    def fields(self, d, what: str, expected: set) -> None:
        if not isinstance(d, dict):
            raise self.fail(f"{what} is not a JSON object")
        if set(d) != expected:
            extra, missing = sorted(set(d) - expected), sorted(expected - set(d))
            raise self.fail(f"{what} has unexpected fields {extra} / lacks fields {missing}")

    def check_shape(self, shape, what: str) -> tuple:
        if not isinstance(shape, list) or len(shape) > 64 or \
                not all(type(s) is int and 0 <= s < (1 << 62) for s in shape):
            raise self.fail(f"{what} has an invalid shape {shape!r}")
        return tuple(shape)

    def check_tables(self, m: dict, members: dict) -> None:
        expected_members = {MANIFEST}
        for i, t in enumerate(m["tensors"]):
            what = f"tensor entry {i}"
            self.fields(t, what, {"file", "dtype", "shape", "requires_grad", "device"})
            if t["file"] != f"tensors/{i}.npy":
                raise self.fail(f"{what} names the member {t['file']!r}; expected 'tensors/{i}.npy'")
            if not isinstance(t["dtype"], str) or t["dtype"] not in _DTYPE_NAMES:
                raise self.fail(f"{what} has an unknown dtype {t['dtype']!r}")
            t["shape"] = self.check_shape(t["shape"], what)
            if type(t["requires_grad"]) is not bool:
                raise self.fail(f"{what} has a non-bool requires_grad {t['requires_grad']!r}")
            if t["requires_grad"] and not dtypes.as_dtype(t["dtype"]).is_floating_point:
                raise self.fail(f"{what} has requires_grad on the non-float dtype {t['dtype']}")
            if not isinstance(t["device"], str) or not _DEVICE.fullmatch(t["device"]):
                raise self.fail(f"{what} has an invalid device {t['device']!r}")
            t["np_dtype"] = dtypes.as_dtype(t["dtype"]).np
            expected_members.add(t["file"])
        for j, a in enumerate(m["arrays"]):
            what = f"array entry {j}"
            self.fields(a, what, {"file", "dtype", "shape"})
            if a["file"] != f"arrays/{j}.npy":
                raise self.fail(f"{what} names the member {a['file']!r}; expected 'arrays/{j}.npy'")
            if not isinstance(a["dtype"], str) or not _NPY_DTYPE.fullmatch(a["dtype"]):
                raise self.fail(f"{what} has an unsupported dtype {a['dtype']!r}")
            try:
                a["np_dtype"] = np.dtype(a["dtype"])
            except TypeError:
                raise self.fail(f"{what} has an unknown dtype {a['dtype']!r}") from None
            a["shape"] = self.check_shape(a["shape"], what)
            expected_members.add(a["file"])
        if set(members) != expected_members:
            extra, missing = sorted(set(members) - expected_members), sorted(expected_members - set(members))
            raise self.fail(f"the archive's members do not match the manifest (unexpected: {extra[:5]}, "
                            f"missing: {missing[:5]})")

    def read_npy(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo, dtype: np.dtype, shape: tuple) -> np.ndarray:
        """The array in one .npy member, checked against the manifest's dtype and shape (never unpickled)."""
        what = f"member {info.filename!r}"
        with zf.open(info) as fp:
            try:
                version = np.lib.format.read_magic(fp)
                if version == (1, 0):
                    hshape, fortran, hdtype = np.lib.format.read_array_header_1_0(fp)
                elif version == (2, 0):
                    hshape, fortran, hdtype = np.lib.format.read_array_header_2_0(fp)
                else:
                    raise ValueError(f"unsupported .npy version {version}")
            except ValueError as e:
                raise self.fail(f"{what} is not a valid .npy array ({e})") from None
            if hdtype.hasobject or hdtype.fields is not None or hdtype.subdtype is not None:
                raise self.fail(f"{what} holds {hdtype} data (Python objects / records are never loaded)")
            if hdtype.newbyteorder("=") != dtype.newbyteorder("="):
                raise self.fail(f"{what} holds {hdtype} data but the manifest says {dtype}")
            if tuple(hshape) != shape:
                raise self.fail(f"{what} has shape {tuple(hshape)} but the manifest says {shape}")
            nbytes = math.prod(shape) * hdtype.itemsize
            if nbytes > info.file_size:
                raise self.fail(f"{what} is truncated: shape {shape} needs {nbytes} bytes of data")
            arr = np.empty(shape[::-1] if fortran else shape, dtype=hdtype)
            if nbytes:
                view = memoryview(arr.reshape(-1).view(np.uint8))
                got = 0
                while got < nbytes:
                    n = fp.readinto(view[got:])
                    if not n:
                        raise self.fail(f"{what} is truncated: {got} of {nbytes} bytes of data")
                    got += n
            if fp.read(1):
                raise self.fail(f"{what} has data beyond its shape {shape}")
        if fortran:
            arr = arr.T.copy(order="C")
        if not arr.dtype.isnative:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        return arr

    # ------------------------------------------------------------ the object tree
    def check_node(self, n, depth: int = 0, key: bool = False) -> None:
        """Validate the whole tree before anything is built (and every global it names against the
        allowed ones). Objects are numbered in the order met, as build() will create them."""
        if depth > MAX_DEPTH:
            raise self.fail(f"the manifest is nested more than {MAX_DEPTH} levels deep")
        if n is None or type(n) in (bool, int, str):
            return
        if not isinstance(n, dict) or not isinstance(n.get("type"), str):
            raise self.fail(f"the manifest has a malformed node {_short(n)}")
        kind = n["type"]
        check, as_key = self._CHECKS.get(kind, (None, False))
        if check is None or (key and not as_key):
            where = " as a dict key" if key else ""
            raise self.fail(f"the manifest has an unknown node type {_short(kind)}{where}")
        check(self, n, kind, depth, key)

    def _check_float(self, n, kind, depth, key) -> None:
        self.fields(n, "a float node", {"type", "value"})
        if not isinstance(n["value"], str) or not re.fullmatch(r"-?(inf|nan|[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?)",
                                                                n["value"]):
            raise self.fail(f"the manifest has an invalid float {_short(n['value'])}")

    def _check_items(self, n, kind, depth, key) -> None:
        fields = {"type", "items", "factory"} if kind == "defaultdict" else {"type", "items"}
        self.fields(n, f"a {kind} node", fields)
        if not isinstance(n["items"], list):
            raise self.fail(f"the manifest's {kind} node has no item list")
        if kind == "defaultdict" and n["factory"] is not None:
            self._check_global(n["factory"], "a defaultdict's factory")
        for item in n["items"]:
            if kind in ("dict", "OrderedDict", "defaultdict"):
                if not isinstance(item, list) or len(item) != 2:
                    raise self.fail(f"the manifest's {kind} node has an item that is not a [key, value] pair")
                self.check_node(item[0], depth + 1, key=True)
                self.check_node(item[1], depth + 1)
            elif kind == "Size":
                if type(item) is not int or item < 0:
                    raise self.fail(f"the manifest's Size node has a non-size item {_short(item)}")
            else:  # tuples inherit their place (a key's items are keys); set items are keys
                self.check_node(item, depth + 1, key or kind in ("set", "frozenset"))

    def _check_indexed(self, n, kind, depth, key) -> None:
        self.fields(n, f"a {kind} node", {"type", "index"})
        table = self.manifest["tensors" if kind in ("tensor", "parameter") else "arrays"]
        if type(n["index"]) is not int or not 0 <= n["index"] < len(table):
            raise self.fail(f"the manifest's {kind} node refers to entry {_short(n['index'])}, which does not exist")
        if kind == "numpy_scalar" and table[n["index"]]["shape"] != ():
            raise self.fail("the manifest's numpy_scalar node refers to an array that is not 0-d")

    def _check_named(self, n, kind, depth, key) -> None:
        self.fields(n, f"a {kind} node", {"type", "name"})
        valid = _DTYPE_NAMES.__contains__ if kind == "dtype" else _DEVICE.fullmatch
        if not isinstance(n["name"], str) or not valid(n["name"]):
            raise self.fail(f"the manifest has an {'unknown dtype' if kind == 'dtype' else 'invalid device'} "
                            f"{_short(n['name'])}")

    def _check_global(self, n, what: str = "a global", depth=0, key=False):
        """A class or function by name: well formed, and one of the allowed globals (returned)."""
        if not isinstance(n, dict) or n.get("type") != "global":
            raise self.fail(f"the manifest's {what} is not a global node")
        self.fields(n, "a global node", {"type", "module", "name"})
        if not (isinstance(n["module"], str) and isinstance(n["name"], str)
                and _GLOBAL.fullmatch(f"{n['module']}.{n['name']}")):
            raise self.fail(f"the manifest names an invalid global {_short(n.get('module'))}.{_short(n.get('name'))}")
        return self.allowed(n["module"], n["name"])

    def _check_object(self, n, kind, depth, key) -> None:
        self.fields(n, "an object node", {"type", "class", "state"})
        cls = self._check_global(n["class"], "an object's class")
        if cls is not None and (not isinstance(cls, type) or _not_storable(cls)):
            raise self.fail(f"the manifest builds an object of {n['class']['module']}.{n['class']['name']}, which "
                            f"is not a class whose objects load as their __dict__")
        self.objects_seen += 1
        state = n["state"]
        if not isinstance(state, dict) or state.get("type") != "dict":
            raise self.fail("the manifest's object node has no dict of attributes")
        self.check_node(state, depth + 1)
        if not all(isinstance(item[0], str) for item in state["items"]):
            raise self.fail("the manifest's object node has an attribute whose name is not a string")

    def _check_ref(self, n, kind, depth, key) -> None:
        self.fields(n, "a ref node", {"type", "index"})
        if type(n["index"]) is not int or not 0 <= n["index"] < self.objects_seen:
            raise self.fail(f"the manifest refers to object {_short(n['index'])} before it is built")

    _CHECKS = {  # node type -> (check, allowed as a dict key)
        "float": (_check_float, True), "tuple": (_check_items, True), "Size": (_check_items, True),
        "list": (_check_items, False), "dict": (_check_items, False), "OrderedDict": (_check_items, False),
        "defaultdict": (_check_items, False), "set": (_check_items, False), "frozenset": (_check_items, True),
        "tensor": (_check_indexed, True), "parameter": (_check_indexed, True), "ndarray": (_check_indexed, False),
        "numpy_scalar": (_check_indexed, False), "dtype": (_check_named, False), "device": (_check_named, False),
        "global": (_check_global, False), "object": (_check_object, False), "ref": (_check_ref, False),
    }

    def allowed(self, module: str, name: str):
        """The allowed global with this name; a WeightsOnlyLoadError (or a note, when only collecting) if none."""
        found = _find_global(module, name, self.weights_only)
        if found is None:
            if self.unsafe is None:
                raise _unsafe_global_error(self.name, module, name)
            self.unsafe.append(f"{module}.{name}")
        return found

    def build(self, n, tensors: list, arrays: list):
        if n is None or type(n) in (bool, int, str):
            return n
        kind = n["type"]
        if kind == "float":
            return float(n["value"])
        if kind in ("tensor", "ndarray", "numpy_scalar", "parameter", "ref", "global", "dtype", "device", "Size"):
            return self._build_leaf(n, kind, tensors, arrays)
        if kind == "object":
            obj = object.__new__(self.allowed(n["class"]["module"], n["class"]["name"]))
            self.objects.append(obj)  # before its attributes: they may refer back to it
            obj.__dict__.update(self.build(n["state"], tensors, arrays))
            return obj
        if kind in ("list", "tuple", "set", "frozenset"):
            items = [self.build(v, tensors, arrays) for v in n["items"]]
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[kind](items)
        out = {"dict": dict, "OrderedDict": OrderedDict}.get(kind)
        out = out() if out is not None else defaultdict(
            None if n["factory"] is None else self.allowed(n["factory"]["module"], n["factory"]["name"]))
        for k, v in n["items"]:
            key = self.build(k, tensors, arrays)
            if key in out:
                raise self.fail(f"the manifest repeats the dict key {key!r}")
            out[key] = self.build(v, tensors, arrays)
        return out

    def _build_leaf(self, n, kind: str, tensors: list, arrays: list):
        if kind == "tensor":
            return tensors[n["index"]]
        if kind == "parameter":
            return self.parameter(n["index"], tensors)
        if kind == "ndarray":
            return arrays[n["index"]]
        if kind == "numpy_scalar":
            return arrays[n["index"]][()]
        if kind == "ref":
            return self.objects[n["index"]]
        if kind == "global":
            return self.allowed(n["module"], n["name"])
        if kind == "dtype":
            return dtypes.as_dtype(n["name"])
        if kind == "Size":
            return Size(n["items"])
        try:
            return Device(n["name"])
        except RuntimeError as e:
            raise RuntimeError(f"cannot load {self.name}: it contains the device {n['name']!r}: {e}") from None

    def parameter(self, index: int, tensors: list):
        """Tensor `index` as an nn.Parameter (one Parameter per tensor, however often it is named)."""
        from .nn.parameter import Parameter
        if index not in self.parameters:
            t = tensors[index]
            self.parameters[index] = Parameter(t, requires_grad=t.requires_grad)
        return self.parameters[index]


def _short(x) -> str:
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


def _location(spec) -> str:
    """A device spec as the canonical location string ('cpu', 'cuda:0'), without needing its backend."""
    if isinstance(spec, Device):
        s = str(spec)
    elif isinstance(spec, str):
        s = spec
    else:
        raise TypeError(f"map_location keys and values must be device strings or tinygrad_lab.device, "
                        f"got {type(spec).__name__}")
    kind, _, idx = s.partition(":")
    if kind == "cpu" and idx in ("", "0"):
        return "cpu"
    return f"{kind}:{idx or 0}"


def _place(arr: np.ndarray, meta: dict, map_location, name: str):
    """The loaded array as a fresh leaf tensor on the device map_location picks."""
    saved = meta["device"]
    if map_location is None:
        target = saved
    elif isinstance(map_location, (str, Device)):
        target = map_location
    elif isinstance(map_location, dict):
        mapping = {_location(k): v for k, v in map_location.items()}
        target = mapping.get(_location(saved), saved)
    else:  # a function (checked by _check_map_location)
        out = map_location(make(arr, resolve_device("cpu")), saved)
        if out is not None and not isinstance(out, TensorBase):
            raise TypeError(f"map_location function returned {type(out).__name__}, expected a Tensor or None")
        return _leaf(out._data, out._device, meta) if out is not None else _place(arr, meta, None, name)
    try:
        dev = resolve_device(target)
        data = dev.backend.asarray(arr, index=dev.index or 0)
    except (RuntimeError, TypeError, ValueError, ImportError, OSError) as e:
        if map_location is None:
            raise RuntimeError(f"cannot load {name}: a tensor was saved on device {saved!r}, which is not "
                               f"available here ({e}). Pass map_location='cpu' (or another available device) "
                               f"to tinygrad_lab.load") from None
        raise RuntimeError(f"cannot load {name}: map_location sends a tensor saved on {saved!r} to device "
                           f"{str(target)!r}, which is not available here ({e})") from None
    return _leaf(data, dev, meta)


def _check_map_location(map_location) -> None:
    """Refuse a malformed map_location up front, even for a file without tensors."""
    if map_location is None or isinstance(map_location, (str, Device)) or callable(map_location):
        return
    if isinstance(map_location, dict):
        for k, v in map_location.items():
            _location(k), _location(v)
        return
    raise TypeError(f"map_location must be None, a device string, a tinygrad_lab.device, a dict or a "
                    f"function, got {type(map_location).__name__}")


def _leaf(data, device: Device, meta: dict):
    t = make(data, device)
    if meta["requires_grad"]:
        t.requires_grad = True
    return t


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None, mmap=None,
         **pickle_load_args):
    """Load an object saved by `save` (as torch.load). `f` is a path or a binary file object.

    map_location (as in PyTorch): None puts each tensor on the device it was saved
    from; a device string or tinygrad_lab.device puts all of them there; a dict
    maps saved locations to new ones ({'cuda:0': 'cpu'}); a function
    fn(cpu_tensor, saved_location) may return the tensor to use (or None).
    Tensors load as fresh leaves, with requires_grad as saved.

    weights_only (default True, as since PyTorch 2.6): a file that names a class or function
    (a whole model, an optimizer) loads only if it is allowed (add_safe_globals / safe_globals),
    else a WeightsOnlyLoadError says which and how to allow it. Deviation: weights_only=False
    does not unpickle (nothing here ever runs code from a file); it also allows every nn.Module,
    Optimizer and LRScheduler class defined in this process, which is what loading a whole model
    saved with torch.save(model) needs. pickle_module and mmap are not supported."""
    if pickle_module is not None or mmap:
        raise TypeError("tinygrad_lab.load never unpickles and does not memory-map files: pickle_module and mmap "
                        "are not supported")
    weights_only = True if weights_only is None else bool(weights_only)
    _check_map_location(map_location)
    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fspath(f)
        name = repr(os.fsdecode(path))
        with open(path, "rb") as fp:  # FileNotFoundError / PermissionError / IsADirectoryError as they are
            return _load(fp, name, map_location, weights_only)
    if not hasattr(f, "read"):
        raise TypeError(f"load() expects a path or a binary file object, got {type(f).__name__}")
    _binary(f, "load", "rb")
    name = repr(getattr(f, "name", None) or f"<{type(f).__name__}>")
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load(f, name, map_location, weights_only)


def get_unsafe_globals_in_checkpoint(f) -> list[str]:
    """The classes and functions the file names that load (weights_only=True) would refuse now."""
    unsafe: list[str] = []
    with (open(f, "rb") if isinstance(f, (str, bytes, os.PathLike)) else contextlib.nullcontext(f)) as fp:
        r = _Reader(fp, repr(getattr(fp, "name", "<file>")), weights_only=True, unsafe=unsafe)
        with r.open_zip() as zf:
            members = r.check_members(zf)
            r.manifest = m = r.read_manifest(zf)
            r.check_tables(m, members)
            r.check_node(m["root"])
    return sorted(set(unsafe))


def _load(fp, name: str, map_location, weights_only: bool):
    r = _Reader(fp, name, weights_only)
    try:
        with r.open_zip() as zf:
            members = r.check_members(zf)
            r.manifest = m = r.read_manifest(zf)
            r.check_tables(m, members)
            r.check_node(m["root"])
            host_tensors = [r.read_npy(zf, members[t["file"]], t["np_dtype"], t["shape"]) for t in m["tensors"]]
            arrays = [r.read_npy(zf, members[a["file"]], a["np_dtype"], a["shape"]) for a in m["arrays"]]
    except SerializationError:
        raise
    except MemoryError:
        raise
    except Exception as e:  # noqa: BLE001 (zipfile, struct, numpy header parsing...: all mean a damaged file)
        raise SerializationError(f"cannot load {name}: the file is damaged or truncated "
                                 f"({type(e).__name__}: {e})") from None
    tensors = [_place(arr, meta, map_location, name) for arr, meta in zip(host_tensors, m["tensors"])]
    return r.build(m["root"], tensors, arrays)
