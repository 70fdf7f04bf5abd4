"""LiveLoss: a progress bar (tqdm's notebook bar) and a live loss curve for lesson training loops.

    with widgets.LiveLoss(total=200) as live:
        for epoch in range(200):
            ...
            live.update(loss)          # a tensor or a number; advances the bar by one
"""
from __future__ import annotations

import math
import time

import anywidget
import traitlets

from ._base import StaticFallback, asset

_W, _H, _PAD = 420, 180, 36


def loss_curve_svg(values: list, title: str = "loss") -> str:
    """The curve as a small standalone SVG (the static picture; the browser draws the same)."""
    head = f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}">'
    if not values:
        return head + f'<text x="{_PAD}" y="{_H // 2}" font-size="12">{title}: no values yet</text></svg>'
    lo, hi = min(values), max(values)
    span, n = (hi - lo) or 1.0, max(len(values) - 1, 1)
    pts = " ".join(f"{_PAD + i / n * (_W - 2 * _PAD):.1f},{_H - _PAD - (y - lo) / span * (_H - 2 * _PAD):.1f}"
                   for i, y in enumerate(values))
    return (head + f'<polyline points="{pts}" fill="none" stroke="#1565c0" stroke-width="1.5"/>'
            f'<text x="{_PAD}" y="{_H - 8}" font-size="12">{title}: {len(values)} steps, last {values[-1]:.4g}, '
            f'min {lo:.4g}</text></svg>')


class LiveLoss(StaticFallback, anywidget.AnyWidget):
    """Collects losses as a loop runs; the browser redraws the curve at most `every` seconds apart."""

    _esm = asset("live_loss.js")
    _css = asset("live_loss.css")

    values = traitlets.List(traitlets.Float()).tag(sync=True)
    title = traitlets.Unicode("loss").tag(sync=True)

    def __init__(self, total: int | None = None, title: str = "loss", every: float = 0.2):
        super().__init__(title=title)
        self.total, self.every = total, every
        self._pending: list[float] = []
        self._last = -math.inf  # never sent: the first value goes at once, however long the machine has been up
        self._bar = None

    def __repr__(self) -> str:
        return f"<LiveLoss {self.title!r}: {len(self.values) + len(self._pending)} values>"

    def _static_bundle(self) -> dict:
        return {"image/svg+xml": loss_curve_svg(self.values, self.title)}

    def __enter__(self) -> "LiveLoss":
        from IPython.display import display
        from tqdm.auto import tqdm
        self._bar = tqdm(total=self.total, desc=self.title)
        display(self)
        return self

    def __exit__(self, *exc) -> None:
        self.flush()
        if self._bar is not None:
            self._bar.close()

    def update(self, loss) -> None:
        """Record one loss value (a one-element tensor or a number) and advance the bar."""
        value = float(loss.item() if hasattr(loss, "item") else loss)
        if math.isfinite(value):
            self._pending.append(value)
        else:  # NaN cannot travel as JSON: say so in the title instead (the classic diverging run)
            self.title = f"{self.title.split(' (')[0]} (non-finite loss seen: {value})"
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix(loss=f"{value:.4g}", refresh=False)
        if time.monotonic() - self._last >= self.every:
            self.flush()

    def flush(self) -> None:
        """Send the values collected since the last redraw to the browser."""
        if self._pending:
            self.values = self.values + self._pending
            self._pending = []
        self._last = time.monotonic()
