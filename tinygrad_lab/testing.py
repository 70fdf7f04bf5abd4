"""`testing.assert_close`, as torch.testing's: two results compared with tolerances that suit their dtype,
and a failure message that says how many elements differ, by how much and where.

Tensors, Python numbers and NumPy arrays compare as leaves; lists, tuples and dicts of them compare item by
item (the message names the item). A leaf pair is close where |actual - expected| <= atol + rtol * |expected|.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from .autograd.tensor_base import Size, TensorBase

__all__ = ["assert_close"]

# (rtol, atol) by dtype, PyTorch's defaults; integer and bool dtypes compare exactly
_TOLERANCES = {np.dtype("float16"): (1e-3, 1e-5), np.dtype("float32"): (1.3e-6, 1e-5),
               np.dtype("float64"): (1e-7, 1e-7)}


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False, msg=None) -> None:
    """Raise AssertionError unless actual and expected are close (see the module's docstring). msg replaces
    the message, or is called with it and returns the one to raise."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'atol' if atol is None else 'rtol'}.")
    problem = _compare(actual, expected, (), dict(rtol=rtol, atol=atol, equal_nan=equal_nan,
                                                  check_device=check_device, check_dtype=check_dtype))
    if problem is not None:
        raise AssertionError(problem if msg is None else msg(problem) if callable(msg) else msg)


def _compare(actual, expected, path: tuple, opts: dict) -> str | None:
    """The first problem found (a message), or None."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        if set(actual) != set(expected):
            return _at(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                       f"{sorted(set(expected) - set(actual), key=repr)}\nAdditional keys in the actual mapping: "
                       f"{sorted(set(actual) - set(expected), key=repr)}", path)
        return next((p for k in expected if (p := _compare(actual[k], expected[k], path + (k,), opts))), None)
    if _is_sequence(expected) and _is_sequence(actual):
        if len(actual) != len(expected):
            return _at(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        return next((p for i, (a, e) in enumerate(zip(actual, expected)) if (p := _compare(a, e, path + (i,), opts))),
                    None)
    return _at_leaf(actual, expected, path, opts)


def _is_sequence(x) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, str)


def _at(message: str, path: tuple) -> str:
    return message + (f"\n\nThe failure occurred for item {''.join(f'[{k!r}]' for k in path)}" if path else "")


def _at_leaf(actual, expected, path: tuple, opts: dict) -> str | None:
    a, e = _as_array(actual), _as_array(expected)
    if a is None or e is None:
        return _at(f"No comparison of {type(actual).__name__} and {type(expected).__name__}: compare tensors, "
                   f"numbers or NumPy arrays (or lists, tuples and dicts of them).", path)
    for name, mine, theirs in _attributes(actual, expected, a, e, opts):
        if mine != theirs:
            return _at(f"The values for attribute '{name}' do not match: {mine} != {theirs}.", path)
    rtol, atol = (opts["rtol"], opts["atol"]) if opts["rtol"] is not None else _tolerances(a.dtype, e.dtype)
    dtype = np.result_type(a, e)
    a, e = a.astype(dtype, copy=False), e.astype(dtype, copy=False)
    close = _close(a, e, rtol, atol, opts["equal_nan"])
    if close.all():
        return None
    scalar = a.ndim == 0 and not isinstance(actual, np.ndarray)
    return _at((_scalar_message if scalar else _tensor_message)(a, e, close, rtol, atol), path)


def _tolerances(*dtypes) -> tuple:
    """The defaults for a pair of dtypes: the looser of the two (integers and bool: exact)."""
    pairs = [_TOLERANCES.get(np.dtype(d), (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _as_array(x):
    """A leaf as a NumPy array (a tensor's on the host), or None for what cannot be compared."""
    if isinstance(x, TensorBase):
        return np.asarray(x._device.backend.to_host(x._data))
    if isinstance(x, (bool, int, float, np.number, np.bool_, np.ndarray)):
        return np.asarray(x)
    return None


def _attributes(actual, expected, a, e, opts: dict) -> list:
    """(name, actual's, expected's) of what must match before values are compared."""
    checks = [("shape", Size(a.shape), Size(e.shape))]
    both = isinstance(actual, TensorBase) and isinstance(expected, TensorBase)
    if both and opts["check_device"]:
        checks.append(("device", actual.device, expected.device))
    if both and opts["check_dtype"]:
        checks.append(("dtype", actual.dtype, expected.dtype))
    return checks


def _close(a, e, rtol: float, atol: float, equal_nan: bool):
    """Elementwise closeness; infinities are close to themselves, NaN to NaN only with equal_nan."""
    if a.dtype.kind in "biu":
        return a == e
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.where(np.isfinite(a) & np.isfinite(e), np.abs(a - e) <= atol + rtol * np.abs(e), a == e)
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    return close


def _differences(a, e):
    """(absolute, relative) differences, relative to |expected|, computed in the compared floating dtype
    (integers in float32), as float64 arrays for printing."""
    kind = a.dtype if a.dtype.kind == "f" else np.dtype(np.float32)
    a, e = a.astype(kind), e.astype(kind)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        diff = np.abs(a - e)
        return diff.astype(np.float64), (diff / np.abs(e)).astype(np.float64)


def _tensor_message(a, e, close, rtol: float, atol: float) -> str:
    diff, rel = _differences(a, e)
    exact = rtol == 0 and atol == 0
    wrong = int((~close).sum())
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {wrong} / {close.size} ({100 * wrong / close.size:.1f}%)"]
    for name, values, allowed in (("absolute", diff, atol), ("relative", rel, rtol)):
        masked = np.where(close, -np.inf, np.nan_to_num(values, nan=np.inf))
        at = np.unravel_index(int(np.argmax(masked)), close.shape)
        value = values[at]
        shown = int(value) if a.dtype.kind in "biu" and math.isfinite(value) and name == "absolute" else value
        lines.append(f"Greatest {name} difference: {shown} at index {tuple(int(i) for i in at)}"
                     + ("" if exact else f" (up to {allowed} allowed)"))
    return "\n".join(lines)


def _scalar_message(a, e, close, rtol: float, atol: float) -> str:
    diff, rel = _differences(a, e)
    return (f"Scalars are not {'equal' if rtol == 0 and atol == 0 else 'close'}!\n\n"
            f"Expected {e.item()} but got {a.item()}.\n"
            f"Absolute difference: {diff.item()} (up to {atol} allowed)\n"
            f"Relative difference: {rel.item()} (up to {rtol} allowed)")
