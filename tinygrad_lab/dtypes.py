"""Data types with PyTorch's names and PyTorch's type-promotion rules.

A `DType` wraps a NumPy dtype (CuPy uses the same ones). Promotion follows
PyTorch, not NumPy: a Python float scalar does not turn a float16 tensor into
float64, an int tensor plus a Python float gives the *default* float dtype, and
0-d tensors rank below tensors with dimensions (`torch.result_type`).
"""
from __future__ import annotations

import numpy as np

BOOL, INT, FLOAT = 0, 1, 2  # categories, in promotion order


class DType:
    """A tensor element type: `tinygrad_lab.float32`, `tinygrad_lab.long`, ..."""

    __slots__ = ("name", "np", "category", "rank", "itemsize", "scalar_name")

    def __init__(self, name: str, np_dtype: type, category: int, rank: int, scalar_name: str):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.rank = rank  # promotion order: of two dtypes, the higher rank holds both (but see promote_types)
        self.itemsize = self.np.itemsize
        self.scalar_name = scalar_name  # PyTorch's ScalarType name: in its messages and legacy type names (FloatTensor)

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOAT

    def __repr__(self) -> str:
        return f"tinygrad_lab.{self.name}"

    def __reduce__(self):  # pickles as the module-level singleton
        return (_by_name, (self.name,))


bool_ = DType("bool", np.bool_, BOOL, 0, "Bool")
uint8 = DType("uint8", np.uint8, INT, 1, "Byte")
int8 = DType("int8", np.int8, INT, 2, "Char")
int16 = DType("int16", np.int16, INT, 3, "Short")
int32 = DType("int32", np.int32, INT, 4, "Int")
int64 = DType("int64", np.int64, INT, 5, "Long")
float16 = DType("float16", np.float16, FLOAT, 6, "Half")
float32 = DType("float32", np.float32, FLOAT, 7, "Float")
float64 = DType("float64", np.float64, FLOAT, 8, "Double")

ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
# PyTorch's aliases
_BY_NAME.update(bool=bool_, short=int16, int=int32, long=int64, half=float16, float=float32, double=float64)

_default_float = [float32]


def _by_name(name: str) -> DType:
    return _BY_NAME[name]


def get_default_dtype() -> DType:
    """The float dtype for Python floats and factories: float32 unless set_default_dtype changed it."""
    return _default_float[0]


def set_default_dtype(d: DType) -> None:
    """Set the float dtype used for Python floats and factories (float32 by default)."""
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float[0] = d


def from_numpy_dtype(npd) -> DType:
    """The DType of a NumPy dtype, or a TypeError naming the unsupported one."""
    d = _BY_NP.get(npd)
    if d is None:
        d = _BY_NP.get(np.dtype(npd).newbyteorder("="))
        if d is None:
            supported = ", ".join(x.name for x in ALL)
            raise TypeError(f"unsupported dtype {np.dtype(npd)}: tinygrad_lab supports {supported}")
    return d


def scalar_name(npd) -> str:
    """PyTorch's name of the dtype of NumPy dtype `npd` ('Float', 'Long', ...) for error messages;
    NumPy's name for one we do not have."""
    d = _BY_NP.get(npd)
    return str(npd) if d is None else d.scalar_name


def as_dtype(d) -> DType:
    """Accept a DType, a NumPy dtype/type, a Python type (float, int, bool) or a name.
    As in PyTorch, Python's float means float64."""
    if isinstance(d, DType):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    try:
        return from_numpy_dtype(np.dtype(d))
    except TypeError:
        raise TypeError(f"unsupported dtype {d!r}: use one of tinygrad_lab.{', '.join(x.name for x in ALL)}") from None


def promote_types(a: DType, b: DType) -> DType:
    """The smallest dtype both `a` and `b` convert to (PyTorch's `promote_types`): the higher rank,
    except that neither of uint8 and int8 holds the other's values, so the two give int16."""
    if (a is uint8 and b is int8) or (a is int8 and b is uint8):
        return int16
    return a if a.rank >= b.rank else b


def scalar_dtype(x) -> DType:
    """The dtype PyTorch gives a Python scalar operand ("wrapped number")."""
    if isinstance(x, (bool, np.bool_)):
        return bool_
    if isinstance(x, (int, np.integer)):
        return int64
    if isinstance(x, (float, np.floating)):
        return _default_float[0]
    raise TypeError(f"unsupported scalar operand of type {type(x).__name__}")


def _combine(higher: DType | None, lower: DType | None) -> DType | None:
    # PyTorch's combine_categories: a lower-priority operand only wins by category.
    if higher is None:
        return lower
    if lower is None or higher.category == FLOAT:
        return higher
    if higher.category == BOOL or lower.category == FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type(dims: list[DType], zero_dims: list[DType], scalars: list[DType]) -> DType:
    """PyTorch's result_type over three priority tiers of operands:
    tensors with dimensions > 0-d tensors > Python scalars."""
    tiers = []
    for tier in (dims, zero_dims, scalars):
        r = None
        for d in tier:
            r = d if r is None else promote_types(r, d)
        tiers.append(r)
    return _combine(tiers[0], _combine(tiers[1], tiers[2]))


# ---------------------------------------------------------------- PyTorch's dtype functions (torch.finfo, ...)

_PY_TYPES = {float: float64, int: int64, bool: bool_}  # Python's types stand for these, as in PyTorch


def _dtype_arg(d, fn: str, name: str, position: int) -> DType:
    """Argument `name` of dtype function `fn`: a DType (or Python's float, int, bool, as PyTorch takes
    them); anything else is PyTorch's TypeError."""
    if isinstance(d, DType):
        return d
    if isinstance(d, type) and d in _PY_TYPES:
        return _PY_TYPES[d]
    raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be a dtype (tinygrad_lab.float32, "
                    f"tinygrad_lab.int64, ...), not {type(d).__name__}")


class finfo:  # noqa: N801 (PyTorch's name)
    """Machine limits of a float dtype, as torch.finfo: bits, eps, max, min, tiny (= smallest_normal),
    resolution and dtype (its name); finfo() describes the default float dtype."""

    def __init__(self, type: DType | None = None) -> None:  # noqa: A002 (PyTorch's parameter name)
        d = get_default_dtype() if type is None else _dtype_arg(type, "finfo", "type", 1)
        if not d.is_floating_point:
            raise TypeError(f"finfo() requires a floating point dtype, got {d!r}; use iinfo for integer dtypes")
        info = np.finfo(d.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision  # NumPy's is of the dtype itself: float16's is 0.0010004
        self.dtype = d.name

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 (PyTorch's name)
    """Limits of an integer dtype, as torch.iinfo: bits, max, min and dtype (its name). bool has none."""

    def __init__(self, type: DType) -> None:  # noqa: A002
        d = _dtype_arg(type, "iinfo", "type", 1)
        if d is bool_:
            raise TypeError(f"{d!r} is not supported by iinfo (it has no integer limits)")
        if d.category != INT:
            raise TypeError(f"iinfo() requires an integer dtype, got {d!r}; use finfo for floating point dtypes")
        info = np.iinfo(d.np)
        self.bits, self.max, self.min, self.dtype = int(info.bits), int(info.max), int(info.min), d.name

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def holds(npd, low, high) -> bool:
    """Whether integer NumPy dtype `npd` takes the values from low to high by PyTorch's checked conversion
    (torch.tensor's data, clamp's bounds): within its range, or negative and wrapping into an unsigned dtype as
    two's complement does (-3 is 253 in uint8, -256 overflows)."""
    info = np.iinfo(npd)
    return (-int(info.max) if info.min == 0 else int(info.min)) <= low and high <= info.max


def can_cast(from_: DType, to: DType) -> bool:
    """Whether PyTorch's casting rules allow from_ -> to (as torch.can_cast): never float to integer or
    bool, never integer to bool; within a category any size goes (int64 -> uint8 is allowed)."""
    a, b = _dtype_arg(from_, "can_cast", "from_", 1), _dtype_arg(to, "can_cast", "to", 2)
    return a.category <= b.category


def promote_types_of(type1: DType, type2: DType) -> DType:
    """torch.promote_types: the smallest dtype both convert to, with PyTorch's argument checks."""
    return promote_types(_dtype_arg(type1, "promote_types", "type1", 1), _dtype_arg(type2, "promote_types", "type2", 2))


def result_type_of(tensor, other) -> DType:
    """torch.result_type: the dtype an op on `tensor` and `other` (tensors or Python numbers) computes in,
    by PyTorch's rules (tensors with dims > 0-d tensors > numbers, unless a lower tier has a higher category)."""
    tiers = ([], [], [])
    for position, x in enumerate((tensor, other), 1):
        d = getattr(x, "dtype", None)
        if isinstance(d, DType) and hasattr(x, "shape"):
            tiers[0 if len(x.shape) else 1].append(d)
        elif isinstance(x, (bool, int, float, np.bool_, np.integer, np.floating)):
            tiers[2].append(scalar_dtype(x))
        else:
            name = ("tensor", "other")[position - 1]
            raise TypeError(f"result_type(): argument '{name}' (position {position}) must be a Tensor or a Python "
                            f"number, not {type(x).__name__}")
    return result_type(*tiers)
