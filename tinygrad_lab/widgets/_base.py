"""What every tinygrad_lab widget shares: its browser assets, a static picture in its
mimebundle, a deterministic repr, and errors in callbacks shown in the widget itself."""
from __future__ import annotations

import functools
import traceback
from pathlib import Path


def asset(name: str) -> Path:
    """A file of the browser side: `widgets/` in a checkout, `tinygrad_lab/widgets/static/` in a wheel."""
    for folder in (Path(__file__).parent / "static", Path(__file__).resolve().parents[2] / "widgets"):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"widget asset {name!r} is missing: reinstall tinygrad-lab")


def shows_errors(method):
    """Run a trait observer or button callback so that an exception lands in `self.error`
    (shown in red in the widget) instead of the browser console, where students never look."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            result = method(self, *args, **kwargs)
        except Exception as e:
            last = traceback.extract_tb(e.__traceback__)[-1]
            self.error = f"{type(e).__name__}: {e}\n  (in {last.name}, {Path(last.filename).name}:{last.lineno})"
            return None
        self.error = ""
        return result
    return wrapper


class StaticFallback:
    """Mixin: a deterministic text/plain repr and a static image in the mimebundle, so a notebook
    shows a real picture on GitHub/nbviewer and nbval compares something stable."""

    def _static_bundle(self) -> dict:
        """{mime type: data} for the static picture (e.g. {'image/svg+xml': svg})."""
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})  # anywidget adds metadata
        data = {**data, **self._static_bundle(), "text/plain": repr(self)}
        return (data, metadata) if metadata else data
