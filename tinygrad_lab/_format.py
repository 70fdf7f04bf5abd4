"""Text form of tensors, laid out the way PyTorch prints them.

``format_tensor`` turns a host NumPy array into the string that ``repr(tensor)``
gives in PyTorch under the same print options (by default precision 4,
threshold 1000, edgeitems 3, linewidth 80; ``set_printoptions`` changes them),
with ``tensor(`` as the prefix and no ``torch.``.
Matching PyTorch's layout exactly means people can compare the two outputs
directly when they learn with both libraries.

The rules below follow ``torch/_tensor_str.py``. It was reimplemented here,
not copied:

* One element formatter covers the whole tensor. If the tensor has more than
  ``threshold`` elements, it looks only at the summarised edge items.
  Floats use one of three styles. If every nonzero finite value is a whole
  number, PyTorch prints ``1.``. If max/min > 1000, max > 1e8 or min < 1e-4,
  it prints ``1.0000e-05``. Otherwise it prints ``0.1000``. Every element is
  right-aligned to the widest finite nonzero one.
* A 1-d row fits as many elements on a line as ``linewidth`` allows, counting
  the indent. Higher dimensions nest with one extra space of indent per level
  and ``ndim - 1`` newlines between slices.
* Summarised axes show their first and last ``edgeitems`` entries around
  ``...``.
* Empty tensors print ``[]``. The ``size=`` suffix is added here unless the
  tensor is 1-d.
* Trailing keyword parts go on the last line, or on a new line indented by
  ``len("tensor(")`` when they would pass the line width. This uses PyTorch's
  own length arithmetic so that line breaks fall in the same places.

Callers build the keyword parts they pass in ``suffixes``, such as
``dtype=...``, ``requires_grad=True`` and ``grad_fn=<...>``. PyTorch shows the
dtype unless it is float32, int64 or bool. For empty tensors it shows every
dtype except float32.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

PREFIX = "tensor("


class PrintOptions:
    """The print options (torch.set_printoptions): digits after the point, the element count above which a
    tensor is summarised, the items kept at each end of a summarised axis, the line width, and sci_mode
    (None: chosen from the values; True/False: always/never scientific notation)."""

    def __init__(self, precision: int = 4, threshold: float = 1000, edgeitems: int = 3, linewidth: int = 80,
                 sci_mode: bool | None = None) -> None:
        self.precision = precision
        self.threshold = threshold
        self.edgeitems = edgeitems
        self.linewidth = linewidth
        self.sci_mode = sci_mode


OPTIONS = PrintOptions()
_PROFILES = {"default": PrintOptions(), "short": PrintOptions(precision=2, edgeitems=2),
             "full": PrintOptions(threshold=math.inf)}


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Change how tensors print, as torch.set_printoptions: a profile ('default', 'short': 2 digits and 2
    edge items, 'full': never summarised) sets all four numbers, the other arguments then override one
    each; sci_mode is set on every call (None: automatic). set_printoptions(profile='default') restores
    the defaults. Deviation: an unknown profile is a ValueError (PyTorch ignores it)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: unknown profile {profile!r} (use one of {', '.join(_PROFILES)})")
        base = _PROFILES[profile]
        OPTIONS.precision, OPTIONS.threshold = base.precision, base.threshold
        OPTIONS.edgeitems, OPTIONS.linewidth = base.edgeitems, base.linewidth
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(OPTIONS, name, value)
    OPTIONS.sci_mode = sci_mode


def _edges(a: np.ndarray) -> np.ndarray:
    """Keep only the first and last `edgeitems` entries of every long axis."""
    k = OPTIONS.edgeitems
    for axis, n in enumerate(a.shape):
        if n > 2 * k:
            a = a.take(np.r_[0:k, n - k : n], axis=axis)
    return a


class _ElementFormat:
    """Chooses one style and width for all elements, then formats each one."""

    def __init__(self, a: np.ndarray) -> None:
        self.is_float = a.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        flat = a.ravel()
        if not self.is_float:
            self.width = max(len(str(v)) for v in flat.tolist())
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:  # only zeros, nan and inf: keep the defaults
            return
        mags = np.abs(finite).astype(np.float64)
        lo, hi = float(mags.min()), float(mags.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        if OPTIONS.sci_mode is not None:
            self.sci_mode = bool(OPTIONS.sci_mode)
        # Widths ignore zeros and non-finite values, as in PyTorch.
        self.width = max(len(self._text(v)) for v in finite.tolist())

    def _text(self, v: float | int | bool) -> str:
        if not self.is_float:
            return str(v)
        if self.sci_mode:
            return f"{v:.{OPTIONS.precision}e}"
        if self.int_mode:
            return f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        return f"{v:.{OPTIONS.precision}f}"

    def __call__(self, v: float | int | bool) -> str:
        return self._text(v).rjust(self.width)


def _render(a: np.ndarray, indent: int, summarize: bool, fmt: _ElementFormat) -> str:
    """Nested bracket text for ``a``, whose first line starts at column ``indent``."""
    if a.ndim == 0:
        return fmt(a.item())
    n, k = a.shape[0], OPTIONS.edgeitems
    cut = summarize and n > 2 * k
    if a.ndim == 1:
        if cut:
            items = [*map(fmt, a[:k].tolist()), " ...", *map(fmt, a[n - k:].tolist())]
        else:
            items = [fmt(v) for v in a.tolist()]
        per_line = max(1, (OPTIONS.linewidth - indent) // (fmt.width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows: list[int | None] = [*range(k), None, *range(n - k, n)] if cut else [*range(n)]
    parts = ["..." if i is None else _render(a[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _add_suffixes(text: str, suffixes: Sequence[str]) -> str:
    """Append ``, key=value`` parts and the closing parenthesis, wrapping like PyTorch."""
    # PyTorch measures the last line as its length + 2, and a wrapped line
    # without that + 2. This code does the same so line breaks match.
    last = len(text) - text.rfind("\n") + 1
    out = [text]
    for suffix in suffixes:
        if last + len(suffix) + 2 > OPTIONS.linewidth:
            out.append(",\n" + " " * len(PREFIX) + suffix)
            last = len(PREFIX) + len(suffix)
        else:
            out.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(out) + ")"


def format_tensor(values: np.ndarray, suffixes: Sequence[str] = ()) -> str:
    """Return ``repr``-style text for ``values``, e.g. ``tensor([1., 2.], requires_grad=True)``.

    ``suffixes`` are the keyword parts to print after the values, already
    formatted, in order (``"dtype=tinygrad_lab.float64"``,
    ``"requires_grad=True"``, ``"grad_fn=<MulBackward>"``). For empty tensors
    that are not 1-d, ``size=(...)`` is put in front of them.
    """
    a = np.asarray(values)
    extra: list[str] = []
    if a.size == 0:
        body = "[]"
        if a.ndim != 1:
            extra.append(f"size={tuple(a.shape)}")
    else:
        summarize = a.size > OPTIONS.threshold
        fmt = _ElementFormat(_edges(a) if summarize else a)
        body = _render(a, len(PREFIX), summarize, fmt)
    return _add_suffixes(PREFIX + body, [*extra, *suffixes])
