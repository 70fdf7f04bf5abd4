"""Dtype promotion and binary-op dispatch: how `a + b` picks its result dtype and reaches its op.

Binary ops broadcast like NumPy, accept Python scalars on either side and promote dtypes like
PyTorch (`dtypes.result_type`): a tensor operand outranks a 0-d tensor, which outranks a Python
number, unless the lower rank is of a higher category (bool < integer < float). `Cast` is the op
promotion applies (differentiable between float dtypes). A Python number then meets the tensor as
its backend's `scalar` of the tensor's dtype (an int wrapped into it, as PyTorch wraps uint8 + 300),
so that no array library widens the result by the number's value (CuPy 13 does).
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..autograd.tensor_base import TensorBase, make, tensor_types
from ..backends import CPU
from .op import Op
from .shapes import broadcast_shape


class Cast(Op):
    """x converted to another dtype. Backward: the gradient is cast back to x's dtype."""

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.in_dtype = x._data.dtype
        return x._data.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return cast(g, ctx.in_dtype), None


def cast(x, dtype) -> TensorBase:
    """x converted to NumPy dtype `dtype` (differentiable between float dtypes);
    x itself when it already has that dtype."""
    dtype = np.dtype(dtype)
    if x._data.dtype == dtype:
        return x
    return Cast.apply(x, dtype)


def cast_to(x, dtype) -> TensorBase:
    """x cast to `dtype` (a dtype or its name) when one is given, else x: an op's dtype= keyword
    (sum, prod, softmax, the norms, the scans, nansum)."""
    return x if dtype is None else cast(x, dtypes.as_dtype(dtype).np)


def as_float(x) -> TensorBase:
    """x, or x in the default float dtype when it is bool or integer: ops that compute in floats
    (erf, logsumexp, deg2rad, trapezoid, ...) take integers as PyTorch does."""
    return x if x._data.dtype.kind == "f" else cast(x, dtypes.get_default_dtype().np)


# ---------------------------------------------------------------- promotion

SCALARS = (int, float, bool)


def as_operand(x, op: str):
    """A binary op's operand: a tensor or a Python number (NumPy scalars become numbers, NumPy
    arrays CPU tensors sharing their memory); anything else is a TypeError naming the op."""
    if isinstance(x, np.generic) and x.dtype.kind in "biuf":
        return x.item()  # NumPy scalars promote like Python numbers (as in PyTorch)
    if isinstance(x, TensorBase) or isinstance(x, SCALARS):
        return x
    if isinstance(x, numbers.Number) and not isinstance(x, complex):
        return x.item() if hasattr(x, "item") else x
    if isinstance(x, np.ndarray):
        dtypes.from_numpy_dtype(x.dtype)  # unsupported dtypes raise here
        return make(x, CPU)  # as torch.as_tensor: no copy
    raise TypeError(f"unsupported operand type for {op}: {type(x).__name__} (expected a Tensor or a Python number)")


def _dtype_and_tier(x):
    """An operand's dtype and promotion tier: 0 a tensor with dims, 1 a 0-d tensor, 2 a Python number."""
    if isinstance(x, TensorBase):
        return x.dtype, 0 if x._data.ndim else 1
    return dtypes.scalar_dtype(x), 2


def promote(*operands, op: str = "op", min_category: int = dtypes.BOOL):
    """Cast tensor operands to PyTorch's result dtype (scalars stay Python numbers).
    `min_category=FLOAT` gives true division's int -> default float rule."""
    if _one_float_dtype(operands):  # nothing to cast: the common case, found without the result type
        return operands
    tiers = ([], [], [])
    for x in operands:
        if x is not None:
            d, tier = _dtype_and_tier(x)
            tiers[tier].append(d)
    rt = dtypes.result_type(*tiers)
    if rt.category < min_category:
        rt = dtypes.get_default_dtype()
    return tuple(cast(x, rt.np) if isinstance(x, TensorBase) and x._data.dtype != rt.np else x
                 for x in operands)


def _one_float_dtype(operands: tuple) -> bool:
    """Whether promotion leaves operands as they are because every tensor among them has one floating
    dtype and the rest are Python numbers or None: a Python number never widens a float tensor, so the
    result is that dtype. Measured on where(cond, g, 0.0), as backwards run it: promote 3.7 -> 0.8 us, the
    whole where 10.3 -> 7.4 us."""
    dtype = None
    for x in operands:
        if x.__class__ in tensor_types:  # isinstance(x, TensorBase)
            if dtype is None and x._data.dtype.kind == "f":
                dtype = x._data.dtype
            elif x._data.dtype is not dtype:
                return False
        elif x is not None and x.__class__ not in SCALARS:
            return False
    return dtype is not None


# ---------------------------------------------------------------- dispatch

def apply_binary(fn, a, b, op: str, min_category: int = dtypes.BOOL):
    """Run binary Function `fn` on (a, b) after promotion, with PyTorch's broadcast error."""
    if op == "sub":
        refuse_bool_subtraction(a, b)
    a, b = promote(as_operand(a, op), as_operand(b, op), op=op, min_category=min_category)
    if a.__class__ in SCALARS and isinstance(b, TensorBase):
        a = b._device.backend.scalar(a, b._data.dtype)
    elif b.__class__ in SCALARS and isinstance(a, TensorBase):
        b = a._device.backend.scalar(b, a._data.dtype)
    try:
        return fn.apply(a, b)
    except ValueError as e:
        raise_broadcast(a, b, op, e)


def is_bool_operand(x) -> bool:
    """Whether an operand is a bool: True/False, or a bool tensor."""
    return x.__class__ is bool or (x.__class__ in tensor_types and x._data.dtype.kind == "b")


def refuse_bool_subtraction(a, b) -> None:
    """PyTorch's error for a subtraction with a bool operand (a bool tensor, or True/False with a tensor):
    it is not a mask's inversion. (Two bool tensors meet Sub's own refusal, which names xor.)"""
    if is_bool_operand(a) or is_bool_operand(b):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")


def binary_op(fn, op: str, min_category: int = dtypes.BOOL, doc: str = ""):
    """The public function of binary Function `fn` (add, mul, ...). Operands that need no promotion go
    straight to apply: two tensors of one dtype; a float tensor and a Python number, either side; an
    integer tensor and a Python int (x % 1, labels == k), except under true division (int -> float)."""
    float_only = min_category == dtypes.FLOAT

    def run(a, b):
        tb = b.__class__
        if tb in tensor_types and a.__class__ in tensor_types and a._data.dtype is b._data.dtype and (
                not float_only or a._data.dtype.kind == "f"):
            try:
                return fn.apply(a, b)
            except ValueError as e:
                raise_broadcast(a, b, op, e)
        if (tb is float or tb is int) and isinstance(a, TensorBase) and (a._data.dtype.kind == "f" or (
                tb is int and a._data.dtype.kind in "iu" and not float_only)):
            return fn.apply(a, a._device.backend.scalar(b, a._data.dtype))  # a number never widens the dtype
        ta = a.__class__
        if (ta is float or ta is int) and isinstance(b, TensorBase) and (b._data.dtype.kind == "f" or (
                ta is int and b._data.dtype.kind in "iu" and not float_only)):
            return fn.apply(b._device.backend.scalar(a, b._data.dtype), b)  # 1 - x, 1 / x: 4.9 -> 2.4 us
        return apply_binary(fn, a, b, op, min_category)

    run.__name__, run.__doc__ = op, doc
    return run


def raise_broadcast(a, b, op: str, err: Exception):
    """PyTorch's error for operands whose shapes do not broadcast (naming the dim); `err` otherwise."""
    broadcast_shape([tuple(x._data.shape) if isinstance(x, TensorBase) else () for x in (a, b)], op)
    raise err
