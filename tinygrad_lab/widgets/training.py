"""LiveLoss: a progress bar and a live loss curve for lesson training loops.

    with widgets.LiveLoss(total=200) as live:
        for epoch in range(200):
            ...
            live.update(loss)          # a tensor or a number; advances the bar by one

The curve is drawn by matplotlib (axes, ticks, the step count and the last and lowest loss in
its title) as a PNG; the browser shows the newest one and a progress bar. When the block ends
the notebook output's static picture becomes the final curve, so a committed notebook shows
it before it runs, on GitHub and in nbconvert's HTML.
"""
from __future__ import annotations

import base64
import io
import math
import time

import anywidget
import traitlets

from ._base import StaticFallback, asset, png_bundle

WIDTH, HEIGHT, DPI = 6.4, 2.6, 100  # inches and dots per inch: 640 x 260 px, 10 pt text is 14 px


def loss_curve_png(values: list, title: str = "loss", total: int | None = None) -> bytes:
    """The loss curve as PNG bytes: loss against step with axes and ticks, the progress and the last and
    lowest loss in the title."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH, HEIGHT), dpi=DPI)
    fig.subplots_adjust(left=0.11, right=0.98, top=0.88, bottom=0.19)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    steps = range(1, len(values) + 1)
    ax.plot(steps, values, color="#1565c0", linewidth=1.2)
    ax.set(xlabel="step", ylabel=title.split(" (")[0], title=curve_title(values, title, total))
    ax.title.set_fontsize(10)
    ax.grid(True, alpha=0.3)
    if not values:
        ax.text(0.5, 0.5, "no values yet", ha="center", va="center", transform=ax.transAxes, color="#6b7280")
    ax.set_xlim(1, max(len(values), 2))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def curve_title(values: list, title: str, total: int | None) -> str:
    """"MLP loss: step 240 of 240 · last 0.1513 · lowest 0.02882"."""
    done = f"step {len(values)}" + (f" of {total}" if total else "")
    if not values:
        return f"{title}: {done}"
    return f"{title}: {done} · last {values[-1]:.4g} · lowest {min(values):.4g}"


class LiveLoss(StaticFallback, anywidget.AnyWidget):
    """Collects losses as a loop runs; the curve is redrawn at most every `every` seconds (and never
    taking more than a fifth of the time, however slow the drawing)."""

    _esm = asset("live_loss.js")
    _css = asset("live_loss.css")

    image = traitlets.Unicode("").tag(sync=True)   # the curve, a base64 PNG
    step = traitlets.Int(0).tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)        # 0: unknown
    title = traitlets.Unicode("loss").tag(sync=True)
    values = traitlets.List(traitlets.Float())     # what the curve shows (kept in Python)

    def __init__(self, total: int | None = None, title: str = "loss", every: float = 0.2):
        super().__init__(title=title, total=total or 0)
        self.every = every
        self._pending: list[float] = []
        self._cost = 0.0        # seconds the last drawing took
        self._display = None
        self._draw()            # the empty axes
        self._last = -math.inf  # no value drawn yet: the first shows at once, however long the machine has been up

    def __repr__(self) -> str:
        return f"<LiveLoss {self.title!r}: {len(self.values) + len(self._pending)} values>"

    def _static_bundle(self) -> dict:
        return png_bundle(base64.b64decode(self.image), colors=32) if self.image else {}

    def __enter__(self) -> "LiveLoss":
        from IPython.display import display
        self._display = display(self, display_id=True)
        return self

    def __exit__(self, *exc) -> None:
        self.flush()
        if self._display is not None:
            # once, at the end: the output's static picture becomes the final curve (the live view is
            # updated through its traits only)
            self._display.update(self)

    def update(self, loss) -> None:
        """Record one loss value (a one-element tensor or a number) and advance the bar."""
        value = float(loss.item() if hasattr(loss, "item") else loss)
        if math.isfinite(value):
            self._pending.append(value)
        else:  # NaN cannot be drawn: say so in the title instead (the classic diverging run)
            self.title = f"{self.title.split(' (')[0]} (non-finite loss seen: {value})"
        self.step += 1
        now = time.monotonic()
        if now - self._last >= max(self.every, 5 * self._cost):
            self.flush()

    def flush(self) -> None:
        """Draw the values collected since the last drawing."""
        if self._pending:
            self.values = self.values + self._pending
            self._pending = []
        self._draw()

    def _draw(self) -> None:
        start = time.monotonic()
        self.image = base64.b64encode(loss_curve_png(self.values, self.title, self.total)).decode("ascii")
        self._last = time.monotonic()
        self._cost = self._last - start
