"""TimingPlot: run a benchmark workload over sizes and devices, then plot it.

    widgets.TimingPlot("lsq", sizes=[64, 256, 1024], devices=["cpu", "cuda"])

The measuring and the drawing are `tinygrad_lab.bench`'s (cross-checked, calibrated,
synchronised timings; time vs size on log–log axes beside the speed-up over explicit
NumPy). This widget adds a progress bar while it runs, says once per reason what was
skipped, and shows the picture as a PNG sized for a notebook (text at least 10 px at
its natural width), which is also its static fallback.
"""
from __future__ import annotations

import html
import io
from typing import Sequence

import ipywidgets
import traitlets

from .. import bench
from ._base import StaticFallback, png_bundle, shows_errors

WIDTH, HEIGHT, DPI = 9.0, 3.6, 100  # 900 x 360 px: a notebook's width, so the PNG is never scaled down
FONTS = {"font.size": 10, "axes.titlesize": 10, "axes.labelsize": 10, "legend.fontsize": 10,
         "xtick.labelsize": 9.5, "ytick.labelsize": 9.5}  # points: 9.5 pt is 13 px at 100 dpi


class TimingPlot(StaticFallback, ipywidgets.VBox):
    """The least-squares chart (or any `bench` workload): tinygrad_lab on each device, explicit
    NumPy/CuPy and PyTorch when installed. `records` keeps the measurements (tidy dicts)."""

    error = traitlets.Unicode("")

    def __init__(self, workload: str = "lsq", sizes: Sequence[int] | None = (64, 256, 1024),
                 devices: Sequence[str] = ("cpu", "cuda"), threads: Sequence[int] | None = None,
                 dtypes: Sequence[str] | None = ("float32",), quick: bool = True, run: bool = True):
        self.workload, self.sizes, self.devices = workload, sizes, tuple(devices)
        self.threads, self.dtypes, self.quick = threads, dtypes, quick
        self.records: list[dict] = []
        self._png = b""
        self.progress = ipywidgets.IntProgress(value=0, min=0, max=1, description="timing",
                                               layout=ipywidgets.Layout(width="420px"))
        self.status = ipywidgets.HTML("")
        self.image = ipywidgets.Image(format="png", layout=ipywidgets.Layout(max_width="100%"))
        self.error_box = ipywidgets.HTML("")
        super().__init__([self.progress, self.status, self.error_box, self.image])
        self.observe(lambda c: setattr(self.error_box, "value", _error_html(c["new"])), names="error")
        if run:
            self.run()

    def __repr__(self) -> str:
        done = sum(r["status"] == "ok" for r in self.records)
        return f"<TimingPlot {self.workload!r}: {done} timings>"

    def _static_bundle(self) -> dict:
        return png_bundle(self._png)

    @shows_errors
    def run(self) -> None:
        """Measure (the progress bar moves as each case finishes), then draw."""
        cases = bench.plan(bench.runner.resolve_workloads([self.workload]), self.sizes, self.dtypes, self.quick)
        self.progress.max = max(1, len(cases) * len(self.threads or bench.runner.default_threads()))
        self.progress.value = 0

        def advanced(group):
            self.progress.value += 1
            r = group[0]
            self.status.value = f"{r['workload']} size {r['size']} ({r['dtype']}, {r['threads']} thread(s))"

        self.records = bench.run([self.workload], sizes=self.sizes, devices=self.devices, threads=self.threads,
                                 dtypes=self.dtypes, quick=self.quick, on_records=advanced)
        self.status.value = "done" + "".join(f"<br>{html.escape(line)}" for line in skip_notes(self.records))
        self.draw()

    @shows_errors
    def draw(self) -> None:
        from matplotlib import rc_context
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        with rc_context(FONTS):
            fig = Figure(figsize=(WIDTH, HEIGHT), dpi=DPI, layout="constrained")
            FigureCanvasAgg(fig)
            bench.plot(self.records, workload=self.workload, axes=tuple(fig.subplots(1, 2)))
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=DPI)
        self._png = self.image.value = buf.getvalue()


def skip_notes(records: list) -> list:
    """One short line per device something was skipped on: which implementations, and why (each
    reason once, to its first clause; a reason another one repeats is left out)."""
    by_device: dict = {}
    for r in records:
        if r["status"] == "skipped":
            impls, reasons = by_device.setdefault(r["device"], ({}, {}))
            impls[r["impl"]] = None
            reasons[r["reason"].split(";")[0].strip()] = None
    out = []
    for device, (impls, reasons) in by_device.items():
        kept = [why for why in reasons if not any(why != other and why in other for other in reasons)]
        out.append(f"skipped on {device} ({', '.join(impls)}): {'; '.join(kept)}")
    return out


def _error_html(message: str) -> str:
    return f'<pre style="color:#b00020;background:#fdecea;padding:6px">{html.escape(message)}</pre>' if message \
        else ""
