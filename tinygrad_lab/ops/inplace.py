"""The one mechanism for in-place ops (add_, mul_, x[k] = v, copy_, fill_, ...).

Without autograd, an in-place op writes straight into the tensor's memory (so
views and `from_numpy` arrays see the change) and bumps its version counter.
With autograd, the op runs out of place on a snapshot of the old value, the
result is written into the tensor's memory, and the tensor takes the new graph
node: consumers recorded earlier keep pointing at the old node, and any saved
copy of the old value is caught by the version check at backward time.

Deviation from PyTorch: every in-place write into an expanded (broadcast) tensor,
whose elements share memory, is refused with PyTorch's "clone() first" advice, on
every device (NumPy's broadcast views are read-only, CuPy's are not: the check is
ours); PyTorch also refuses most of them, but allows order-independent ones such
as fill_ and zero_.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import state as _grad_state
from ..autograd.tensor_base import TensorBase, make, tensor_types
from .elementwise import Clone, check_alpha, mul
from .promotion import refuse_bool_subtraction

_SHARED_ERROR = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                 "location (in {op}). Please clone() the tensor before performing the operation.")
_LEAF_ERROR = ("a leaf Variable that requires grad is being used in an in-place operation ({op}). "
               "Wrap it in `with tinygrad_lab.no_grad():` (e.g. for optimizer updates) or use an out-of-place op.")


def _check_dtype(x, result_dtype, op: str) -> None:
    xd = dtypes.from_numpy_dtype(x._data.dtype)
    rd = dtypes.from_numpy_dtype(result_dtype)
    if rd.category > xd.category:
        raise RuntimeError(f"result type {rd.name} can't be cast to the desired output type {xd.name} (in {op})")


def _refuse_shared_elements(arr, op: str) -> None:
    """PyTorch's error for a write into an array whose elements share memory: a stride of 0 over a dim of
    2 or more (an expanded tensor); an empty array has no elements to share (NumPy gives it 0 strides). NumPy refuses such writes itself (its views are read-only), CuPy does not."""
    if 0 in arr.strides and arr.size > 1 and any(st == 0 and n > 1 for n, st in zip(arr.shape, arr.strides)):
        raise RuntimeError(_SHARED_ERROR.format(op=op))


def _write(x, arr, op: str) -> None:
    _refuse_shared_elements(x._data, op)
    try:
        x._data[...] = arr
    except ValueError as e:
        _raise_write_error(e, x._data, arr, op)


def _raise_write_error(e: ValueError, out, arr, op: str):
    if "read-only" in str(e):  # shared elements were refused before the write: this memory is read-only itself
        raise _read_only(out, op) from None
    raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape "
                       f"{list(getattr(arr, 'shape', ()))} (in {op})") from None


def _read_only(d, op: str) -> RuntimeError:
    """A write into memory that is read-only itself: from_numpy of a read-only NumPy array (as
    np.broadcast_to or a memory map gives)."""
    shape = list(d.shape)
    return RuntimeError(f"cannot write into a tensor of shape {shape} whose memory is read-only, in {op}. It shares "
                        f"a read-only NumPy array (from_numpy of an array with flags.writeable False): clone() the "
                        f"tensor, or pass a writable copy (array.copy()) to from_numpy.")


def inplace(x, op: str, fn, *args):
    """x = fn(x, *args), written into x's memory. `fn` is an out-of-place op."""
    wants_grad = _grad_state.enabled and (
        x._requires_grad or any(isinstance(a, TensorBase) and a._requires_grad for a in args))
    if not wants_grad:
        _grad_state.enabled, prev = False, _grad_state.enabled
        try:
            res = fn(x, *args)
        finally:
            _grad_state.enabled = prev
        _check_dtype(x, res._data.dtype, op)
        if res._data is not x._data:
            _write(x, res._data, op)
        x._bump_version()
        return x
    if x._grad_fn is None and x._requires_grad:
        raise RuntimeError(_LEAF_ERROR.format(op=op))
    if x._base is not None:
        raise RuntimeError(f"{op}: an in-place op on a view of another tensor while recording gradients is not "
                           f"supported by tinygrad_lab (PyTorch rewrites the base's history here). Use "
                           f"the out-of-place op, or .clone() the view first.")
    old = make(x._data.copy(), x._device)  # the old value, at the same place in the graph
    old._requires_grad, old._grad_fn, old._output_nr = x._requires_grad, x._grad_fn, x._output_nr
    res = fn(old, *args)
    if res is old or any(res is a for a in args):  # x must get a node of its own (e.g. copy_ of a same-shaped leaf)
        res = Clone.apply(res)
    _check_dtype(x, res._data.dtype, op)
    if res._data.shape != x._data.shape:
        raise RuntimeError(f"output with shape {list(x._data.shape)} doesn't match the broadcast shape "
                           f"{list(res._data.shape)} (in {op})")
    _write(x, res._data, op)
    x._grad_fn, x._output_nr, x._requires_grad = res._grad_fn, res._output_nr, res._requires_grad
    x._bump_version()
    return x


def arithmetic_(x, op: str, ufunc: str, fn, other, alpha=1):
    """add_/sub_/mul_/div_. While autograd records, the general `inplace` with the out-of-place op `fn`;
    otherwise one ufunc with out= on the raw arrays, or for add_/sub_ with alpha (other scaled first,
    as in add_(other, alpha=...)) the backend's axpy: x + alpha·other in one pass (BLAS on the CPU).
    An optimizer step is a dozen of these, so dtype checks run only when dtypes differ."""
    tensor = other.__class__ in tensor_types
    if _grad_state.enabled and (x._requires_grad or (tensor and other._requires_grad)):
        return inplace(x, op, fn, other if alpha == 1 else mul(other, check_alpha(x, other, alpha)))
    xd = x._data
    other_arr = other
    if tensor:
        if other._device is not x._device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{x._device} and {other._device}! (in {op})")
        other_arr = other._data
        if other_arr.dtype is not xd.dtype:  # computed in the promoted dtype, as PyTorch (float16 /= int32: in float16)
            promoted = dtypes.promote_types(dtypes.from_numpy_dtype(xd.dtype), dtypes.from_numpy_dtype(other_arr.dtype)).np
            _check_dtype(x, promoted, op)
            other_arr = other_arr.astype(promoted, copy=False)
    if ufunc == "subtract" or xd.dtype.kind != "f":
        other_arr = _checked_operand(x, other, other_arr, ufunc, op, alpha)
    if 0 in xd.strides:  # (the test inline: an optimizer step runs a dozen of these)
        _refuse_shared_elements(xd, op)
    try:
        if alpha == 1:
            getattr(x._device.backend.xp, ufunc)(xd, other_arr, out=xd, casting="unsafe")
        else:
            x._device.backend.axpy(xd, other_arr, alpha if ufunc == "add" else -alpha)
    except ValueError as e:
        _raise_write_error(e, xd, other_arr, op)
    x._bump_version()
    return x


def _checked_operand(x, other, other_arr, ufunc: str, op: str, alpha):
    """PyTorch's refusals for a subtraction with a bool and for arithmetic into an integer (or bool) tensor
    (a float result, a float alpha, bool and int making int64); returns the operand, a Python int wrapped
    into x's dtype as PyTorch does (uint8 += -3 adds 253)."""
    if ufunc == "subtract":
        refuse_bool_subtraction(x, other)
    kind = x._data.dtype.kind
    if kind == "f":
        return other_arr
    if ufunc == "divide" or isinstance(other, float):
        _check_dtype(x, dtypes.get_default_dtype().np, op)
    elif other.__class__ is int and kind == "b":
        _check_dtype(x, np.int64, op)
    check_alpha(x, other, alpha)
    return x._device.backend.scalar(other, x._data.dtype) if other.__class__ is int else other_arr


def unary_(x, op: str, ufunc: str, fn):
    """sqrt_, exp_, tanh_, ... (the ops that are one ufunc on floats). While autograd records, or for a
    tensor that is not float, the general `inplace` with out-of-place op `fn`; otherwise the ufunc
    writes straight into x's memory: no new array and no copy (an optimizer's sqrt_ of 1.2M float32
    is one pass instead of three)."""
    xd = x._data
    if (_grad_state.enabled and x._requires_grad) or xd.dtype.kind != "f" or 0 in xd.strides:
        return inplace(x, op, fn)
    try:
        getattr(x._device.backend.xp, ufunc)(xd, out=xd)
    except ValueError as e:
        _raise_write_error(e, xd, xd, op)
    x._bump_version()
    return x


def addc_(x, op: str, fn, combine, tensor1, tensor2, value=1):
    """addcmul_/addcdiv_: x += value · combine(tensor1, tensor2), combine being the product or the
    quotient. While autograd records, or for a tensor that is not float, the general `inplace` with
    out-of-place op `fn`; otherwise the product (quotient) is the one new array, added into x by
    add_ (one pass, BLAS axpy): Adam's and Adadelta's updates."""
    if x._data.dtype.kind != "f" or (_grad_state.enabled and any(
            isinstance(t, TensorBase) and t._requires_grad for t in (x, tensor1, tensor2))):
        return inplace(x, op, lambda a, b, c: fn(a, b, c, value=value), tensor1, tensor2)
    return arithmetic_(x, op, "add", None, combine(tensor1, tensor2), value)
