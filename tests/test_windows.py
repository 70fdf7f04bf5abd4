"""Window functions: torch.hann_window / hamming_window / blackman_window / bartlett_window /
kaiser_window and the torch.signal.windows namespace. Values, dtypes and shapes are compared with
PyTorch (the `torch` fixture skips those tests without it) for the short lengths where the edge cases
live (0, 1, 2, odd, even), both periodic and symmetric; errors raise PyTorch's exception types."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

from ._devices import host
from ._helpers import assert_like_torch, bad_input_tests, dtype_name

LENGTHS = (0, 1, 2, 7, 8)
DTYPES = (None, "float32", "float64")
TOLERANCE = {"float16": dict(rtol=1e-3, atol=1e-3), "float32": dict(rtol=1e-5, atol=1e-6),
             "float64": dict(rtol=1e-12, atol=1e-12)}  # PyTorch computes in the dtype, we in float64

# name -> the extra positional arguments after (window_length, periodic)
TORCH_WINDOWS = {"hann_window": (), "hamming_window": (), "blackman_window": (), "bartlett_window": (),
                 "kaiser_window": (), "hamming_window(alpha, beta)": (0.6, 0.3), "kaiser_window(beta)": (3.5,)}


def _call(mod, name: str, *args, **kwargs):
    return getattr(mod, name.partition("(")[0])(*args, **kwargs)


def _dtype_kw(mod, dtype):
    return {} if dtype is None else {"dtype": getattr(mod, dtype)}


def _tolerance(t) -> dict:
    return TOLERANCE[dtype_name(t.dtype)]


# ================================================================ torch.*_window

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("name", TORCH_WINDOWS)
def test_window_matches_pytorch(torch, name, length, periodic, dtype):
    extra = TORCH_WINDOWS[name]
    got = _call(tl, name, length, periodic, *extra, **_dtype_kw(tl, dtype))
    want = _call(torch, name, length, periodic, *extra, **_dtype_kw(torch, dtype))
    assert_like_torch(got, want, **_tolerance(want))
    assert not got.requires_grad and got.is_leaf


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_window_defaults_to_periodic_and_the_default_dtype(torch, name):
    assert_like_torch(getattr(tl, name)(8), getattr(torch, name)(8), rtol=1e-5, atol=1e-6)
    tl.set_default_dtype(tl.float64)
    try:
        got = getattr(tl, name)(8)
    finally:
        tl.set_default_dtype(tl.float32)
    assert got.dtype is tl.float64
    np.testing.assert_allclose(got.numpy(), getattr(torch, name)(8, dtype=torch.float64).numpy(), atol=1e-12)


def test_window_keywords_and_half_precision(torch):
    assert_like_torch(tl.kaiser_window(7, periodic=False, beta=5.0), torch.kaiser_window(7, False, 5.0),
                      rtol=1e-5, atol=1e-6)
    assert_like_torch(tl.hamming_window(8, alpha=0.5, beta=0.5), torch.hamming_window(8, True, 0.5, 0.5),
                      rtol=1e-5, atol=1e-6)
    assert_like_torch(tl.hann_window(8, dtype=tl.float16), torch.hann_window(8, dtype=torch.float16),
                      **TOLERANCE["float16"])


@pytest.mark.parametrize("length", [0, 1, 5])
def test_window_requires_grad_gives_a_leaf(torch, length):
    got, want = tl.hann_window(length, requires_grad=True), torch.hann_window(length, requires_grad=True)
    assert got.requires_grad and got.is_leaf and got.grad_fn is None
    assert want.requires_grad
    got.sum().backward()
    np.testing.assert_array_equal(got.grad.numpy(), np.ones(length, dtype=np.float32))


def test_periodic_window_is_the_longer_symmetric_one_cut_short():
    for name in ("hann_window", "blackman_window", "bartlett_window", "kaiser_window"):
        longer = getattr(tl, name)(9, periodic=False, dtype=tl.float64).numpy()
        np.testing.assert_array_equal(getattr(tl, name)(8, dtype=tl.float64).numpy(), longer[:8])
    np.testing.assert_allclose(tl.hann_window(5, False, dtype=tl.float64).numpy(), [0, 0.5, 1, 0.5, 0], atol=1e-15)
    np.testing.assert_allclose(tl.hamming_window(5, False, 0.5, 0.5).numpy(), tl.hann_window(5, False).numpy())


def test_window_on_each_device(device):
    for name in ("hann_window", "kaiser_window", "bartlett_window"):
        got = getattr(tl, name)(7, dtype=tl.float64, device=device)
        assert got.device == tl.device(device)
        np.testing.assert_allclose(host(got), getattr(tl, name)(7, dtype=tl.float64).numpy(), atol=1e-15)


# ================================================================ torch.signal.windows

SIGNAL_WINDOWS = {"hann": {}, "hamming": {}, "blackman": {}, "nuttall": {}, "bartlett": {}, "cosine": {},
                  "kaiser": {}, "kaiser(beta=0.5)": {"beta": 0.5}, "gaussian": {}, "gaussian(std=1.92)": {"std": 1.92},
                  "exponential": {}, "exponential(tau=2.78)": {"tau": 2.78}, "general_hamming": {},
                  "general_hamming(alpha=0.3)": {"alpha": 0.3}, "general_cosine": {"a": [0.46, 0.23, 0.31]},
                  "general_cosine(tuple)": {"a": (0.5, 0.5)}}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("name", SIGNAL_WINDOWS)
def test_signal_window_matches_pytorch(torch, name, length, sym, dtype):
    import torch.signal.windows  # noqa: F401  (not imported by `import torch`)
    kw = SIGNAL_WINDOWS[name]
    got = _call(tl.signal.windows, name, length, sym=sym, **kw, **_dtype_kw(tl, dtype))
    want = _call(torch.signal.windows, name, length, sym=sym, **kw, **_dtype_kw(torch, dtype))
    assert_like_torch(got, want, **_tolerance(want))


@pytest.mark.parametrize("length", [1, 2, 7])
def test_exponential_window_off_centre(torch, length):
    import torch.signal.windows  # noqa: F401
    got = tl.signal.windows.exponential(length, center=3.0, tau=0.3, sym=False)
    assert_like_torch(got, torch.signal.windows.exponential(length, center=3.0, tau=0.3, sym=False),
                      rtol=1e-5, atol=1e-6)
    if length == 1:
        assert got.item() < 1e-4  # a length-1 window is [1.] only when it is centred


def test_signal_window_is_the_top_level_window(torch):
    np.testing.assert_array_equal(tl.signal.windows.hann(8, sym=False).numpy(), tl.hann_window(8).numpy())
    np.testing.assert_array_equal(tl.signal.windows.kaiser(7, beta=4.0).numpy(),
                                  tl.kaiser_window(7, False, 4.0).numpy())
    got = tl.signal.windows.bartlett(5, requires_grad=True, device="cpu")
    assert got.requires_grad and got.is_leaf


# ================================================================ errors

BAD = {
    "negative length": (lambda m: m.hann_window(-1), RuntimeError,
                        r"hann_window requires non-negative window_length, got window_length=-1"),
    "negative length, kaiser": (lambda m: m.kaiser_window(-3), RuntimeError, r"kaiser_window requires non-negative"),
    "integer dtype": (lambda m: m.hamming_window(5, dtype=m.int64), RuntimeError,
                      r"hamming_window expects floating point dtypes, got: int64"),
    "bool dtype": (lambda m: m.bartlett_window(5, dtype=m.bool), RuntimeError, r"expects floating point dtypes"),
    "dtype checked before length": (lambda m: m.blackman_window(-1, dtype=m.int32), RuntimeError,
                                    r"expects floating point dtypes"),
    "float length": (lambda m: m.hann_window(5.0), TypeError, r"'window_length' must be int, not float"),
    "bool length": (lambda m: m.hann_window(True), TypeError, r"'window_length' must be int, not bool"),
    "periodic not a bool": (lambda m: m.hann_window(5, 1), TypeError, r"'periodic' must be bool, not int"),
    "signal: negative M": (lambda m: _windows(m).hann(-1), ValueError,
                           r"hann requires non-negative window length, got M=-1"),
    "signal: integer dtype": (lambda m: _windows(m).kaiser(4, dtype=m.int32), ValueError,
                              r"kaiser expects float32 or float64 dtypes, got: int32"),
    "signal: float16": (lambda m: _windows(m).cosine(4, dtype=m.float16), ValueError,
                        r"expects float32 or float64 dtypes, got: float16"),
    "signal: negative beta": (lambda m: _windows(m).kaiser(4, beta=-1.0), ValueError,
                              r"beta must be non-negative, got: -1.0 instead"),
    "signal: zero std": (lambda m: _windows(m).gaussian(4, std=0.0), ValueError,
                         r"Standard deviation must be positive, got: 0.0 instead"),
    "signal: std checked for M=0": (lambda m: _windows(m).gaussian(0, std=-1.0), ValueError,
                                    r"Standard deviation must be positive"),
    "signal: negative tau": (lambda m: _windows(m).exponential(4, tau=-2.0), ValueError, r"Tau must be positive"),
    "signal: center of a symmetric window": (lambda m: _windows(m).exponential(4, center=1.0), ValueError,
                                             r"Center must be None for symmetric windows"),
    "signal: coefficients not a list": (lambda m: _windows(m).general_cosine(4, a=3), TypeError,
                                        r"Coefficients must be a list/tuple"),
    "signal: no coefficients": (lambda m: _windows(m).general_cosine(4, a=[]), ValueError,
                                r"Coefficients cannot be empty"),
    "signal: sym by position": (lambda m: _windows(m).hann(5, False), TypeError, r"positional argument"),
}


def _windows(m):
    if m is not tl:
        import torch.signal.windows  # noqa: F401
    return m.signal.windows


test_bad_input_raises, test_pytorch_raises_the_same_type = bad_input_tests(BAD)
