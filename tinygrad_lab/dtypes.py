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

    __slots__ = ("name", "np", "category", "rank", "itemsize")

    def __init__(self, name: str, np_dtype: type, category: int, rank: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.rank = rank
        self.itemsize = self.np.itemsize

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOAT

    def __repr__(self) -> str:
        return f"tinygrad_lab.{self.name}"

    def __reduce__(self):  # pickles as the module-level singleton
        return (_by_name, (self.name,))


bool_ = DType("bool", np.bool_, BOOL, 0)
uint8 = DType("uint8", np.uint8, INT, 1)
int32 = DType("int32", np.int32, INT, 2)
int64 = DType("int64", np.int64, INT, 3)
float16 = DType("float16", np.float16, FLOAT, 4)
float32 = DType("float32", np.float32, FLOAT, 5)
float64 = DType("float64", np.float64, FLOAT, 6)

ALL = (bool_, uint8, int32, int64, float16, float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
# PyTorch's aliases
_BY_NAME.update(bool=bool_, int=int32, long=int64, half=float16, float=float32, double=float64)

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
    """The smallest dtype both `a` and `b` convert to (PyTorch's `promote_types`)."""
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
