"""`out=`: PyTorch's functions (torch.add(a, b, out=t), torch.matmul(..., out=t), ...) can write their
result into a tensor the caller gives. `accepts_out(fn)` adds that keyword to a public function.

As in PyTorch, out= does not take part in autograd: with a result or an `out` that requires grad
(while grad mode is on) it is an error. An `out` of another shape is resized (new memory), with
PyTorch's warning unless it was empty; a result of a higher dtype category (float into an int
`out`) is refused.
"""
from __future__ import annotations

import functools
import warnings

from .. import dtypes
from ..autograd.grad_mode import state as _grad_state
from ..autograd.tensor_base import TensorBase


def write_out(result, out, op: str):
    """Write `result` (a tensor, or a tuple of them) into `out` (the same structure); return out."""
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{op}(): out must be a tuple of {len(result)} tensors")
        for r, o in zip(result, out):
            write_out(r, o, op)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    if not isinstance(out, TensorBase):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _grad_state.enabled and (result._requires_grad or out._requires_grad):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation, "
                           f"but one of the arguments requires grad.")
    if out._device is not result._device:
        raise RuntimeError(f"Expected out tensor to have device {result._device}, but got {out._device} instead "
                           f"(in {op})")
    want, have = dtypes.from_numpy_dtype(result._data.dtype), dtypes.from_numpy_dtype(out._data.dtype)
    if want.category > have.category:
        raise RuntimeError(f"result type {want.name} can't be cast to the desired output type {have.name} (in {op})")
    if out._data.shape != result._data.shape:
        if out._data.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out._data.shape)}, which does not match the required output shape "
                          f"{list(result._data.shape)} (in {op}).", UserWarning, stacklevel=3)
        out._data = out._device.backend.xp.empty(result._data.shape, dtype=out._data.dtype)
    out._data[...] = result._data
    out._bump_version()
    return out


def accepts_out(fn):
    """`fn` with PyTorch's out= keyword: the result is written into `out`, which is returned."""
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else write_out(result, out, fn.__name__)

    return with_out
