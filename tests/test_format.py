"""Tests for tinygrad_lab._format.format_tensor.

Most tests use PyTorch as the oracle: for every case, ``format_tensor`` of the
tensor's NumPy data must equal ``repr(tensor)`` character for character. The
hand-written expectations at the top run without torch.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
from typing import Callable

import numpy as np
import pytest

try:
    from tinygrad_lab._format import format_tensor
except Exception:  # the package __init__ may be missing or broken mid-edit
    _path = pathlib.Path(__file__).resolve().parents[1] / "tinygrad_lab" / "_format.py"
    _spec = importlib.util.spec_from_file_location("_tinygrad_lab_format", _path)
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    format_tensor = _module.format_tensor


# --------------------------------------------------------------------------
# Hand-written expectations (no torch needed)
# --------------------------------------------------------------------------

HAND_WRITTEN = [
    (np.array([1.0, 2.0, 3.0], np.float32), (), "tensor([1., 2., 3.])"),
    (np.array([[0.1, 0.2], [0.3, 0.4]], np.float32), (), "tensor([[0.1000, 0.2000],\n        [0.3000, 0.4000]])"),
    (np.array(3.0, np.float32), (), "tensor(3.)"),
    (np.array(-0.5, np.float64), ("dtype=tinygrad_lab.float64",), "tensor(-0.5000, dtype=tinygrad_lab.float64)"),
    (np.array([1, 2, 3], np.int64), (), "tensor([1, 2, 3])"),
    (np.array([1, -20], np.int32), ("dtype=tinygrad_lab.int32",), "tensor([  1, -20], dtype=tinygrad_lab.int32)"),
    (np.array([True, False]), (), "tensor([ True, False])"),
    (np.zeros((0,), np.float32), (), "tensor([])"),
    (np.zeros((0, 3), np.float32), (), "tensor([], size=(0, 3))"),
    (np.zeros((2, 0, 4), np.int64), ("dtype=tinygrad_lab.int64",), "tensor([], size=(2, 0, 4), dtype=tinygrad_lab.int64)"),
    (np.array([1e-5, 1e5], np.float32), (), "tensor([1.0000e-05, 1.0000e+05])"),
    (np.array([1.5, np.nan, -np.inf], np.float32), (), "tensor([1.5000,    nan,   -inf])"),
    (np.array([0.0, np.nan], np.float32), (), "tensor([0., nan])"),
    (np.array([np.nan, 1.0], np.float32), (), "tensor([nan, 1.])"),
    (np.array([-1.0, 10.0], np.float32), (), "tensor([-1., 10.])"),
    (np.array([1.0, 2.0], np.float32), ("requires_grad=True",), "tensor([1., 2.], requires_grad=True)"),
    (np.array([2.0, 4.0], np.float16), ("dtype=tinygrad_lab.float16", "grad_fn=<MulBackward>"),
     "tensor([2., 4.], dtype=tinygrad_lab.float16, grad_fn=<MulBackward>)"),
    (np.arange(1001, dtype=np.int64), (), "tensor([   0,    1,    2,  ...,  998,  999, 1000])"),
    (np.arange(30, dtype=np.float32),
     (),
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
     "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
     "        28., 29.])"),
    (np.arange(2000, dtype=np.float32).reshape(2, 1000),
     (),
     "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.9700e+02, 9.9800e+02,\n"
     "         9.9900e+02],\n"
     "        [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
     "         1.9990e+03]])"),
    (np.ones((2, 2, 2), np.uint8), ("dtype=tinygrad_lab.uint8",),
     "tensor([[[1, 1],\n         [1, 1]],\n\n        [[1, 1],\n         [1, 1]]], dtype=tinygrad_lab.uint8)"),
    # The suffix would pass column 80, so it goes on its own line.
    (np.full((1, 12), 0.5, np.float64), ("dtype=tinygrad_lab.float64", "requires_grad=True"),
     "tensor([[0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000,\n"
     "         0.5000, 0.5000, 0.5000]], dtype=tinygrad_lab.float64,\n"
     "       requires_grad=True)"),
]


@pytest.mark.parametrize("values, suffixes, expected", HAND_WRITTEN)
def test_hand_written(values: np.ndarray, suffixes: tuple[str, ...], expected: str) -> None:
    assert format_tensor(values, suffixes) == expected


def test_never_says_torch() -> None:
    samples = [np.arange(5000.0).reshape(50, 100), np.zeros((0, 2)), np.array(True), np.array([1e-9, 1e9])]
    for a in samples:
        assert "torch" not in format_tensor(a, ["requires_grad=True"])


# --------------------------------------------------------------------------
# PyTorch as the oracle
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch():  # noqa: ANN201 - the torch module
    return pytest.importorskip("torch", exc_type=ImportError)


def torch_suffixes(t) -> list[str]:  # noqa: ANN001
    """The keyword parts PyTorch prints for a dense CPU tensor, except ``size=``."""
    import torch

    parts = []
    if t.numel() == 0:
        if t.dtype != torch.float32:
            parts.append(f"dtype={t.dtype}")
    elif t.dtype not in (torch.float32, torch.int64, torch.bool):
        parts.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        parts.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        parts.append("requires_grad=True")
    return parts


def torch_layout(t, suffixes: list[str]) -> str:  # noqa: ANN001
    """PyTorch's own layout for ``t`` followed by arbitrary suffix strings.

    This uses PyTorch's private helpers, so the wrapping decision is made by
    PyTorch's rule with our (longer) package name in the suffixes.
    """
    import torch

    ts = torch._tensor_str
    indent = len("tensor(")
    size = [f"size={tuple(t.shape)}"] if t.numel() == 0 and t.dim() != 1 else []
    with torch.no_grad():
        body = ts._tensor_str(t.detach(), indent)
    return ts._add_suffixes("tensor(" + body, size + suffixes, indent, False)


def check_against_torch(t) -> None:  # noqa: ANN001
    import torch

    expected = repr(t)
    values = t.detach().numpy()
    suffixes = torch_suffixes(t)
    # 1. Same suffix strings as PyTorch: the layout must match exactly, line breaks included.
    assert format_tensor(values, suffixes) == expected
    # 2. Suffixes that use our package name. The name is longer, so a suffix
    #    can move onto the next line. Where PyTorch's private helpers exist,
    #    let PyTorch decide where the line breaks go.
    lab = [s.replace("torch.", "tinygrad_lab.") for s in suffixes]
    got = format_tensor(values, lab)
    if hasattr(torch._tensor_str, "_add_suffixes") and hasattr(torch._tensor_str, "_tensor_str"):
        assert torch_layout(t, suffixes) == expected  # sanity check of the helper itself
        assert got == torch_layout(t, lab)
    else:
        suffix_break = re.compile(r",\n {7}(?=\S)")  # a break before a suffix, never a value row
        renamed = expected.replace("torch.", "tinygrad_lab.")
        assert suffix_break.sub(", ", got) == suffix_break.sub(", ", renamed)


Case = Callable[..., object]

CASES: dict[str, Case] = {
    # 0-d
    "scalar_float": lambda T: T.tensor(3.0),
    "scalar_frac": lambda T: T.tensor(-0.123456),
    "scalar_int": lambda T: T.tensor(7),
    "scalar_bool": lambda T: T.tensor(False),
    "scalar_nan": lambda T: T.tensor(float("nan")),
    "scalar_small": lambda T: T.tensor(1e-7, dtype=T.float64),
    "scalar_f16": lambda T: T.tensor(1.5, dtype=T.float16),
    "scalar_zero": lambda T: T.tensor(0.0),
    "scalar_negzero": lambda T: T.tensor(-0.0),
    # 1-d basics
    "vec_int_valued_floats": lambda T: T.tensor([1.0, 2.0, 3.0]),
    "vec_frac": lambda T: T.tensor([0.1, 0.25, -3.5]),
    "vec_int64": lambda T: T.tensor([1, 2, 3]),
    "vec_int32_neg": lambda T: T.tensor([-100, 2, 33], dtype=T.int32),
    "vec_uint8": lambda T: T.tensor([0, 7, 255], dtype=T.uint8),
    "vec_bool": lambda T: T.tensor([True, False, True]),
    "vec_bool_all_true": lambda T: T.tensor([True, True]),
    "vec_f64": lambda T: T.tensor([1.5, 2.25], dtype=T.float64),
    "vec_f16": lambda T: T.tensor([0.1, 65504.0, -2.0], dtype=T.float16),
    "vec_f16_tiny": lambda T: T.tensor([6e-8, 1.0], dtype=T.float16),
    "vec_mixed_sign": lambda T: T.tensor([-1.5, 0.0, 2.75, -0.001]),
    "vec_negzero": lambda T: T.tensor([-0.0, 1.0]),
    # scientific notation
    "sci_small": lambda T: T.tensor([1e-5, 1e5]),
    "sci_ratio": lambda T: T.tensor([1.0, 1001.0]),
    "sci_ratio_frac": lambda T: T.tensor([0.5, 600.25]),
    "sci_big": lambda T: T.tensor([2e8, 3e8]),
    "sci_big_int_f64": lambda T: T.tensor([123456789012.0], dtype=T.float64),
    "sci_min_1e-4_f32": lambda T: T.tensor([1e-4, 2e-4]),
    "sci_negative": lambda T: T.tensor([-1e-6, 3.0, -4e6]),
    "sci_huge_f64": lambda T: T.tensor([1e300, 1e-300], dtype=T.float64),
    "sci_with_nan_inf": lambda T: T.tensor([1e-8, float("nan"), float("inf"), -float("inf")]),
    # non-finite and zeros
    "nan_inf_only": lambda T: T.tensor([float("nan"), float("inf"), -float("inf")]),
    "nan_inf_frac": lambda T: T.tensor([float("nan"), 1.25, -float("inf")]),
    "nan_inf_int_valued": lambda T: T.tensor([float("nan"), 100.0, -float("inf")]),
    "zeros": lambda T: T.zeros(4),
    "zeros_2d": lambda T: T.zeros(2, 3, dtype=T.float64),
    # empty
    "empty_0": lambda T: T.zeros(0),
    "empty_0_int": lambda T: T.zeros(0, dtype=T.int64),
    "empty_0_bool": lambda T: T.zeros(0, dtype=T.bool),
    "empty_0x3": lambda T: T.zeros(0, 3),
    "empty_2x0x4": lambda T: T.zeros(2, 0, 4),
    "empty_2x0x4_f16": lambda T: T.zeros(2, 0, 4, dtype=T.float16),
    "empty_0x3_grad": lambda T: T.zeros(0, 3, requires_grad=True),
    # 2-d / 3-d / 4-d
    "mat_frac": lambda T: T.tensor([[0.1, 0.2], [0.3, 0.4]]),
    "mat_int": lambda T: T.arange(12).reshape(3, 4),
    "mat_bool": lambda T: T.tensor([[True, False], [False, True]]),
    "cube": lambda T: T.arange(24, dtype=T.float32).reshape(2, 3, 4) / 7,
    "cube_int32": lambda T: T.arange(-12, 12, dtype=T.int32).reshape(2, 3, 4),
    "hyper": lambda T: T.arange(16, dtype=T.float64).reshape(2, 2, 2, 2),
    "single_elem_nested": lambda T: T.ones(1, 1, 1),
    # wrapping at 80 columns
    "long_row_ints_float": lambda T: T.arange(40, dtype=T.float32),
    "long_row_frac": lambda T: T.linspace(-1, 1, 50),
    "long_row_int": lambda T: T.arange(100),
    "long_row_bool": lambda T: T.arange(30) % 3 == 0,
    "wide_matrix": lambda T: T.linspace(0, 1, 60).reshape(3, 20),
    "wide_cube_sci": lambda T: T.logspace(-6, 6, 90, dtype=T.float64).reshape(3, 2, 15),
    # summarisation (> 1000 elements)
    "sum_1d": lambda T: T.arange(1001, dtype=T.float32),
    "sum_1d_frac": lambda T: T.linspace(0, 1, 5000),
    "sum_1d_int": lambda T: T.arange(-3000, 3000),
    "sum_2d": lambda T: T.arange(2000, dtype=T.float32).reshape(2, 1000),
    "sum_2d_square": lambda T: (T.arange(10000, dtype=T.float64).reshape(100, 100) / 3),
    "sum_2d_tall": lambda T: T.arange(3000).reshape(1000, 3),
    "sum_3d": lambda T: T.arange(24000, dtype=T.float32).reshape(20, 30, 40) - 12000,
    "sum_3d_bool": lambda T: (T.arange(2000).reshape(10, 10, 20) % 7) == 0,
    "sum_4d": lambda T: T.linspace(-5, 5, 4096).reshape(8, 8, 8, 8),
    "sum_edges_only_decide": lambda T: T.cat([T.ones(3), T.full((1000,), 1e-9), T.ones(3)]),
    "sum_f16": lambda T: T.linspace(0, 10, 2048, dtype=T.float16),
    # suffixes: requires_grad / grad_fn and their order with dtype
    "grad_leaf": lambda T: T.tensor([1.0, 2.0], requires_grad=True),
    "grad_leaf_f64": lambda T: T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True),
    "grad_fn_mul": lambda T: T.tensor([1.0, 2.0], requires_grad=True) * 2,
    "grad_fn_f64_sum": lambda T: T.tensor([[1.5, 2.0]], dtype=T.float64, requires_grad=True).sum(),
    "grad_fn_f16": lambda T: T.ones(2, 3, dtype=T.float16, requires_grad=True) + 1,
    "suffix_wraps_2d": lambda T: T.full((1, 12), 0.5, dtype=T.float64, requires_grad=True),
    "suffix_wraps_1d": lambda T: T.full((11,), 0.5, dtype=T.float64, requires_grad=True),
    "suffix_fits_1d": lambda T: T.full((8,), 0.5, dtype=T.float64, requires_grad=True),
    "suffix_long_row_f16": lambda T: T.arange(40, dtype=T.float16, requires_grad=True),
    "suffix_wrap_each": lambda T: T.full((13,), 0.25, dtype=T.float64) * T.ones(13, dtype=T.float64, requires_grad=True),
    "suffix_int32_summarised": lambda T: T.arange(5000, dtype=T.int32).reshape(50, 100),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(torch, name: str) -> None:  # noqa: ANN001
    check_against_torch(CASES[name](torch))


@pytest.mark.parametrize("seed", range(60))
def test_random_matches_torch(torch, seed: int) -> None:  # noqa: ANN001
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(0, 5))
    big = rng.random() < 0.3
    shape = tuple(int(s) for s in rng.integers(1, 40 if big else 7, size=ndim))
    kind = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"][int(rng.integers(0, 7))]
    if kind == "bool":
        a = rng.random(shape) < 0.5
    elif kind.startswith(("int", "uint")):
        lo = 0 if kind == "uint8" else -(10 ** int(rng.integers(1, 6)))
        hi = 256 if kind == "uint8" else 10 ** int(rng.integers(1, 6))
        a = rng.integers(lo, hi, size=shape).astype(kind)
    else:
        scale = 10.0 ** rng.integers(-6, 7)
        a = rng.standard_normal(shape) * scale
        if rng.random() < 0.3:
            a = np.round(a)  # whole-number floats
        if rng.random() < 0.3 and a.size:  # sprinkle zeros and non-finite values
            flat = a.reshape(-1)
            flat[rng.integers(0, a.size, size=3)] = rng.choice([0.0, np.nan, np.inf, -np.inf], size=3)
        with np.errstate(over="ignore"):  # float16 overflow to inf is intended
            a = a.astype(kind)
    t = torch.from_numpy(np.array(a))
    if t.dtype.is_floating_point and rng.random() < 0.3:
        t.requires_grad_(True)
    check_against_torch(t)


def test_hypothesis_floats_match_torch(torch) -> None:  # noqa: ANN001
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    dtypes = st.sampled_from([np.float16, np.float32, np.float64])

    @hypothesis.settings(max_examples=300, derandomize=True, deadline=None)
    @hypothesis.given(
        dtypes.flatmap(lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)))
    )
    def check(a: np.ndarray) -> None:
        check_against_torch(torch.from_numpy(a.copy()))

    check()
