"""Helpers shared by the user-API tests (dtypes, creation, tensor, errors)."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
FLOAT_NAMES = ("float16", "float32", "float64")


def dtype_name(d) -> str:
    """'float32' for tl.float32 and torch.float32 alike (their reprs differ only in the prefix)."""
    return repr(d).rpartition(".")[2]


def pair(torch, data, dtype: str | None = None, requires_grad: bool = False):
    """The same data as a tinygrad_lab tensor and as a torch tensor (`dtype` by name)."""
    def build(mod):
        return mod.tensor(data, dtype=None if dtype is None else getattr(mod, dtype), requires_grad=requires_grad)
    return build(tl), build(torch)


def assert_like_torch(actual, expected, *, rtol: float = 0.0, atol: float = 0.0) -> None:
    """`actual` is a tinygrad_lab Tensor with the shape, dtype and values of torch tensor `expected`
    (exact unless a tolerance is given; NaNs compare equal)."""
    assert isinstance(actual, tl.Tensor), f"expected a tinygrad_lab Tensor, got {type(actual).__name__}"
    assert tuple(actual.shape) == tuple(expected.shape), f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    assert dtype_name(actual.dtype) == dtype_name(expected.dtype), f"dtype {actual.dtype} != {expected.dtype}"
    a, e = actual.detach().numpy(), expected.detach().numpy()
    if rtol == 0.0 and atol == 0.0:
        np.testing.assert_array_equal(a, e)
    else:
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)


def assert_tree_like_torch(got, want, where: str = "result", tol: float = 1e-12) -> None:
    """Nested tuples/lists of tensors with PyTorch's structure, shapes and values (within tol); a list
    matches a tuple (PyTorch's forward-mode jacobian gives lists where reverse mode gives tuples)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), \
            f"{where}: {type(got).__name__}, PyTorch a {type(want).__name__} of {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_tree_like_torch(g, w, f"{where}[{i}]", tol)
        return
    assert isinstance(got, tl.Tensor), f"{where}: {type(got).__name__}, PyTorch a tensor"
    assert tuple(got.shape) == tuple(want.shape), f"{where}: shape {tuple(got.shape)}, PyTorch {tuple(want.shape)}"
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol, err_msg=where)


def assert_prints_as_torch(script) -> None:
    """`python script tinygrad_lab` prints exactly what `python script torch` prints (a program written once
    for both libraries, which imports the one named by its argument)."""
    import subprocess
    import sys

    def run(lib: str) -> str:
        done = subprocess.run([sys.executable, str(script), lib], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout
    assert run("tinygrad_lab") == run("torch")


def bad_input_tests(bad: dict) -> tuple:
    """The two tests of a table of bad inputs, name -> (fn(m), exception type, words): tinygrad_lab
    (m = tl) raises that type with those words in its message, and PyTorch (m = torch) the same type.
    Assign them to test_ names in the module that holds the table."""
    @pytest.mark.parametrize("name", bad)
    def raises_with_its_words(name):
        fn, kind, words = bad[name]
        with pytest.raises(kind, match=words):
            fn(tl)

    @pytest.mark.parametrize("name", bad)
    def pytorch_raises_the_same_type(name, torch):
        fn, kind, _ = bad[name]
        with pytest.raises(kind):
            fn(torch)

    return raises_with_its_words, pytorch_raises_the_same_type
