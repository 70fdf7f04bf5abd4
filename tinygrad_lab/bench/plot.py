"""The chart: time per iteration against size (log–log) and speed-up over explicit NumPy.

matplotlib is imported here only, and no pyplot state is touched: the Figure gets its own Agg
canvas, so writing a PNG works on a machine without a display and notebooks stay unaffected.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

from .workloads import WORKLOADS

Record = dict[str, Any]
_LINESTYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P")


def _distinct(values: Sequence[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def _draw(ax_time: Any, ax_speed: Any | None, rows: Sequence[Record], colors: dict[tuple[str, str], Any]) -> None:
    """One workload's series on its pair of axes."""
    threads = _distinct(r["threads"] for r in rows)
    dtypes = _distinct(r["dtype"] for r in rows)
    variants = _distinct(r["variant"] for r in rows)
    series: dict[tuple, list[Record]] = {}
    for r in rows:
        series.setdefault((r["impl"], r["device"], r["threads"], r["dtype"], r["variant"]), []).append(r)
    for (impl, device, n, dtype, variant), points in series.items():
        points.sort(key=lambda r: r["size"])
        label = f"{impl}/{device}" + (f" {n} thr" if len(threads) > 1 else "") \
            + (f" {dtype}" if len(dtypes) > 1 else "") + (f" {variant}" if len(variants) > 1 else "")
        style = dict(color=colors[impl, device], linestyle=_LINESTYLES[threads.index(n) % len(_LINESTYLES)],
                     marker=_MARKERS[(dtypes.index(dtype) + variants.index(variant)) % len(_MARKERS)])
        sizes = [r["size"] for r in points]
        ax_time.plot(sizes, [r["median_s"] for r in points], label=label, **style)
        ax_time.fill_between(sizes, [r["min_s"] for r in points], [r["max_s"] for r in points],
                             color=style["color"], alpha=0.12, linewidth=0)
        speedups = [(r["size"], r["speedup_vs_numpy"]) for r in points if r["speedup_vs_numpy"] is not None]
        if ax_speed is not None and speedups:
            ax_speed.plot(*zip(*speedups), label=label, **style)
    (ax_speed or ax_time).legend(fontsize="small", loc="center left", bbox_to_anchor=(1.02, 0.5))


def plot(records: Sequence[Record], workload: str | None = None, variant: str | None = None,
         axes: Any = None, path: str | os.PathLike[str] | None = None) -> Any:
    """Draw timed records and return the matplotlib Figure.

    One row per workload measured at several sizes (every workload if none was; only `workload`
    when given, and only its `variant` when given): time per iteration against size on log–log
    axes, with the min–max band, and beside it the speed-up over explicit NumPy (above 1: faster
    than NumPy). `axes` draws into existing axes instead: one Axes (time only) or a pair (time,
    speed-up), for a single workload. `path` also saves the figure.
    """
    from matplotlib import colormaps
    from matplotlib.ticker import NullLocator
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = [r for r in records if r["status"] == "ok" and (workload is None or r["workload"] == workload)
            and (variant is None or r["variant"] == variant)]
    names = _distinct(r["workload"] for r in rows)
    if not names:
        raise ValueError("nothing to plot: no timed records" + (f" of workload {workload!r}" if workload else ""))
    curves = [n for n in names if len({r["size"] for r in rows if r["workload"] == n}) > 1]
    names = curves or names
    if axes is not None:
        if len(names) > 1:
            raise ValueError(f"axes given for one workload, but the records hold {len(names)}: pass workload=")
        grid = [tuple(axes) if isinstance(axes, (tuple, list)) else (axes, None)]
        fig = grid[0][0].figure
    else:
        fig = Figure(figsize=(14, 4.5 * len(names)), layout="constrained")
        FigureCanvasAgg(fig)
        grid = [tuple(pair) for pair in fig.subplots(len(names), 2, squeeze=False)]
    impls = _distinct((r["impl"], r["device"]) for r in rows)
    cmap = colormaps["tab10"]
    colors = {key: cmap(i % 10) for i, key in enumerate(impls)}
    for name, (ax_time, ax_speed) in zip(names, grid):
        w = WORKLOADS.get(name)
        size_label = f"size ({w.size_label})" if w else "size"
        _draw(ax_time, ax_speed, [r for r in rows if r["workload"] == name], colors)
        ax_time.set(xscale="log", yscale="log", xlabel=size_label, ylabel="time per iteration (s)",
                    title=f"{name}: {w.title}" if w else name)
        ax_time.grid(True, which="both", alpha=0.3)
        if ax_speed is not None:
            if not ax_speed.get_lines():
                ax_speed.text(0.5, 0.5, "no NumPy reference in this workload", ha="center",
                              transform=ax_speed.transAxes)
            ax_speed.axhline(1.0, color="black", linewidth=0.8)
            ax_speed.set(xscale="log", yscale="log", xlabel=size_label, ylabel="speed-up over explicit NumPy (×)",
                         title="above 1: faster than NumPy on the CPU")
            ax_speed.grid(True, which="both", alpha=0.3)
        sizes = sorted({r["size"] for r in rows if r["workload"] == name})
        for ax in (ax_time, ax_speed) if ax_speed is not None else (ax_time,):
            ax.set_xticks(sizes, [str(s) for s in sizes])  # the sizes measured, not log-scale minor labels
            ax.xaxis.set_minor_locator(NullLocator())
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
