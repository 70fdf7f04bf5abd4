"""tinygrad_lab.signal.windows: PyTorch's torch.signal.windows, the window functions under SciPy's names
and conventions: the length is M, sym=True (the default) gives the symmetric window (for filter
design) and sym=False the periodic one (for spectral analysis; torch.hann_window's periodic=True).
Errors are PyTorch's ValueErrors; only float32 and float64 are made, as in PyTorch. Every window is
made by creation.make_window; the cosine windows share creation.cosine_sum."""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..autograd.tensor_base import TensorBase
from ..creation import BLACKMAN, HAMMING, HANN, cosine_sum, kaiser_shape, make_window, triangle
from ..ops import shapes

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]

NUTTALL = (0.3635819, 0.4891775, 0.1365995, 0.0106411)  # the four-term Blackman-Nuttall coefficients


def _checked(op: str, M, dtype) -> tuple:
    """(the length, the NumPy dtype) after PyTorch's checks, in its order: the length, then the dtype."""
    n = shapes.whole(M, "M", op)
    if n < 0:
        raise ValueError(f"{op} requires non-negative window length, got M={n}")
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    if dt not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"{op} expects float32 or float64 dtypes, got: {dt.name}")
    return n, dt.np


def _positive(what: str, value, zero_too: bool = False) -> None:
    if value < 0 or (value == 0 and not zero_too):
        raise ValueError(f"{what} must be {'non-negative' if zero_too else 'positive'}, got: {value} instead.")


def _cosine(op: str, M, a, sym: bool, dtype, device, requires_grad: bool) -> TensorBase:
    n, dt = _checked(op, M, dtype)
    return make_window(n, not sym, dt, device, requires_grad, cosine_sum(a))


def general_cosine(M: int, *, a, sym: bool = True, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """The generalised cosine window with coefficients a (a list or tuple):
    a[0] - a[1] cos(2 pi k / (M - 1)) + a[2] cos(4 pi k / (M - 1)) - ..., as torch.signal.windows.general_cosine."""
    if not isinstance(a, (list, tuple)):
        raise TypeError(f"Coefficients must be a list/tuple, got {type(a).__name__}")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    return _cosine("general_cosine", M, a, sym, dtype, device, requires_grad)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype=None, device=None,
                    requires_grad: bool = False) -> TensorBase:
    """alpha - (1 - alpha) cos(2 pi k / (M - 1)), as torch.signal.windows.general_hamming (0.54: Hamming's,
    0.5: Hann's)."""
    return _cosine("general_hamming", M, (alpha, 1.0 - alpha), sym, dtype, device, requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """The Hann window, sin^2(pi k / (M - 1)), as torch.signal.windows.hann."""
    return _cosine("hann", M, HANN, sym, dtype, device, requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """The Hamming window, 0.54 - 0.46 cos(2 pi k / (M - 1)), as torch.signal.windows.hamming."""
    return _cosine("hamming", M, HAMMING, sym, dtype, device, requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """The Blackman window (three cosine terms: 0.42, 0.5, 0.08), as torch.signal.windows.blackman."""
    return _cosine("blackman", M, BLACKMAN, sym, dtype, device, requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """The Blackman-Nuttall window (four cosine terms, NUTTALL), as torch.signal.windows.nuttall."""
    return _cosine("nuttall", M, NUTTALL, sym, dtype, device, requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """The Bartlett (triangular) window, 1 - |2k / (M - 1) - 1|, as torch.signal.windows.bartlett."""
    n, dt = _checked("bartlett", M, dtype)
    return make_window(n, not sym, dt, device, requires_grad, triangle)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, device=None,
           requires_grad: bool = False) -> TensorBase:
    """The Kaiser window, I0(beta sqrt(1 - (2k / (M - 1) - 1)^2)) / I0(beta) with beta >= 0, as
    torch.signal.windows.kaiser."""
    n, dt = _checked("kaiser", M, dtype)
    _positive("beta", beta, zero_too=True)
    return make_window(n, not sym, dt, device, requires_grad, kaiser_shape(beta))


def cosine(M: int, *, sym: bool = True, dtype=None, device=None, requires_grad: bool = False) -> TensorBase:
    """The cosine (sine) window, sin(pi (k + 1/2) / M), as torch.signal.windows.cosine."""
    n, dt = _checked("cosine", M, dtype)
    return make_window(n, not sym, dt, device, requires_grad,
                       lambda m: np.sin((math.pi / m) * (np.arange(m) + 0.5)))


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, device=None,
             requires_grad: bool = False) -> TensorBase:
    """The Gaussian window, exp(-(k - (M - 1) / 2)^2 / (2 std^2)) with std > 0, as torch.signal.windows.gaussian."""
    n, dt = _checked("gaussian", M, dtype)
    _positive("Standard deviation", std)
    return make_window(n, not sym, dt, device, requires_grad,
                       lambda m: np.exp(-(np.arange(m) - (m - 1) / 2) ** 2 / (2.0 * std * std)))


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype=None,
                device=None, requires_grad: bool = False) -> TensorBase:
    """The exponential (Poisson) window, exp(-|k - center| / tau) with tau > 0, as
    torch.signal.windows.exponential; center defaults to the middle and may be given only with sym=False."""
    n, dt = _checked("exponential", M, dtype)
    _positive("Tau", tau)
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def shape(m: int) -> np.ndarray:
        middle = (m - 1) / 2 if center is None else float(center)
        return np.exp(-np.abs(np.arange(m) - middle) / float(tau))
    return make_window(n, not sym, dt, device, requires_grad, shape, one_is_one=center is None)
