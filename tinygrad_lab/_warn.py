"""Warnings attributed to the learner's line of code, not to the engine's.

`warnings.warn(..., stacklevel=N)` needs the number of frames between the warning and the user's
code, which changes whenever a function gains a caller or a wrapper (the ops' argument checks).
`warn` finds the first caller outside this package instead, whatever the path to it.
"""
from __future__ import annotations

import sys
import warnings

_PACKAGE = __name__.rpartition(".")[0] + "."  # "tinygrad_lab."


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """warnings.warn(message, category), shown at the first calling line outside tinygrad_lab."""
    frame, level = sys._getframe(1), 2  # stacklevel 2: warn's caller
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
