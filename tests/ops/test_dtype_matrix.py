"""Binary arithmetic over every pair of dtypes, and with Python numbers, out of place and in place: the result's
dtype and values, or the refusal (the exception's type), must be PyTorch's. KNOWN lists where we still differ."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_lab as tl

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
VALUES = {"bool": [True, False, True], "uint8": [0, 200, 7], "int8": [-5, 100, 7], "int16": [-300, 2, 7],
          "int32": [-7, 3, 100000], "int64": [-7, 3, 2 ** 40], "float16": [0.5, -1.5, 3.0], "float32": [0.5, -1.5, 3.25],
          "float64": [0.5, -1.5, 3.25]}
SCALARS = [2, -3, 1.5, True, 0]
OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
       "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "pow": lambda a, b: a ** b,
       "eq": lambda a, b: a == b, "lt": lambda a, b: a < b, "and": lambda a, b: a & b,
       "iadd": lambda a, b: a.__iadd__(b), "imul": lambda a, b: a.__imul__(b), "isub": lambda a, b: a.__isub__(b),
       "idiv": lambda a, b: a.__itruediv__(b)}
KNOWN = {  # (op, dtype, other) -> why we differ
    ("floordiv", d, "float16"): "inf // 3 (an int too large for float16): inf here, nan in PyTorch"
    for d in ("int32", "int64")
}


def _run(lib, op, dtype, other):
    a = lib.tensor(VALUES[dtype], dtype=getattr(lib, dtype))
    b = lib.tensor(VALUES[other], dtype=getattr(lib, other)) if other in DTYPES else other
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = OPS[op](a, b)
        except Exception as e:  # noqa: BLE001 - the exception's type is what is compared
            return type(e).__name__
    return str(out.dtype).rsplit(".", 1)[-1], np.asarray(out.tolist(), dtype=float)


def _cases():
    return [pytest.param(op, d, o, id=f"{op}-{d}-{o}", marks=[pytest.mark.xfail(reason=KNOWN[(op, d, o)], strict=True)]
                         if (op, d, o) in KNOWN else [])
            for op in OPS for d in DTYPES for o in DTYPES + SCALARS]


@pytest.mark.parametrize("op, dtype, other", _cases())
def test_matches_pytorch(op, dtype, other, torch):
    ours, theirs = _run(tl, op, dtype, other), _run(torch, op, dtype, other)
    if isinstance(theirs, str) or isinstance(ours, str):
        assert ours == theirs
        return
    assert ours[0] == theirs[0], f"dtype {ours[0]}, PyTorch {theirs[0]}"
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-3, equal_nan=True)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("bounds", [(-3, None), (-129, None), (-256, None), (None, 300), (-3, 100), (None, 2 ** 31)])
def test_clamp_bounds_convert_as_pytorch(dtype, bounds, torch):
    """An integer tensor's clamp converts its Python int bounds to the tensor's dtype as PyTorch does: negative
    bounds wrap into uint8 (clamp(min=-3) is clamp(min=253)), bounds the dtype cannot hold are refused."""
    def run(lib):
        x = lib.tensor([0, 5, 100], dtype=getattr(lib, dtype))
        try:
            out = x.clamp(*bounds)
        except RuntimeError:
            return "RuntimeError"
        return str(out.dtype).rsplit(".", 1)[-1], out.tolist()

    assert run(tl) == run(torch)


@pytest.mark.parametrize("dtype", DTYPES)
def test_square_dtype_as_pytorch(dtype, torch):
    """square is x * x, except for bools, which square to int64 as in PyTorch (x ** 2)."""
    ours, theirs = (lib.square(lib.tensor(VALUES[dtype], dtype=getattr(lib, dtype))) for lib in (tl, torch))
    assert str(ours.dtype).rsplit(".", 1)[-1] == str(theirs.dtype).rsplit(".", 1)[-1]
    np.testing.assert_allclose(np.asarray(ours.tolist(), float), np.asarray(theirs.tolist(), float), rtol=1e-3)
