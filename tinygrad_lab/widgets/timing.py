"""TimingPlot: run a benchmark workload over sizes and devices, then plot it.

    widgets.TimingPlot("lsq", sizes=[64, 256, 1024], devices=["cpu", "cuda"])

The measuring and the drawing are `tinygrad_lab.bench`'s (cross-checked, calibrated,
synchronised timings; time vs size on log–log axes beside the speed-up over explicit
NumPy). This widget adds a progress bar while it runs and shows the picture as a PNG,
which is also its static fallback.
"""
from __future__ import annotations

import io
from typing import Sequence

import ipywidgets
import traitlets

from .. import bench
from ._base import StaticFallback, shows_errors


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
        self.image = ipywidgets.Image(format="png", layout=ipywidgets.Layout(max_width="900px"))
        self.error_box = ipywidgets.HTML("")
        super().__init__([self.progress, self.status, self.error_box, self.image])
        self.observe(lambda c: setattr(self.error_box, "value", _error_html(c["new"])), names="error")
        if run:
            self.run()

    def __repr__(self) -> str:
        done = sum(r["status"] == "ok" for r in self.records)
        return f"<TimingPlot {self.workload!r}: {done} timings>"

    def _static_bundle(self) -> dict:
        import base64
        return {"image/png": base64.b64encode(self._png).decode("ascii")} if self._png else {}

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
        skipped = sorted({f"{r['impl']} on {r['device']}: {r['reason']}" for r in self.records
                          if r["status"] == "skipped"})
        self.status.value = "done" + ("".join(f"<br>skipped {s}" for s in skipped[:4]) if skipped else "")
        self.draw()

    @shows_errors
    def draw(self) -> None:
        fig = bench.plot(self.records, workload=self.workload)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=90)
        self._png = self.image.value = buf.getvalue()


def _error_html(message: str) -> str:
    import html
    return f'<pre style="color:#b00020;background:#fdecea;padding:6px">{html.escape(message)}</pre>' if message \
        else ""
