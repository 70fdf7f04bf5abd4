"""The chart: time against size on log–log axes, and the speed-up over explicit NumPy."""
from __future__ import annotations

import pytest

from tinygrad_lab import bench

from ._helpers import record

pytest.importorskip("matplotlib")


def lsq_records():
    rows = []
    for size, numpy_s in ((64, 1e-5), (1024, 4e-3)):
        for impl, factor in (("numpy", 1.0), ("tinygrad_lab", 1.5)):
            median = numpy_s * factor
            rows.append(record(size=size, impl=impl, median_s=median, min_s=median * 0.9, max_s=median * 1.1,
                               speedup_vs_numpy=1 / factor))
    return rows + [record(impl="torch", status="skipped", reason="absent", median_s=None, min_s=None, max_s=None)]


def test_a_figure_with_log_log_time_and_speedup_axes():
    fig = bench.plot(lsq_records())
    time_ax, speed_ax = fig.axes
    assert (time_ax.get_xscale(), time_ax.get_yscale()) == ("log", "log")
    assert (speed_ax.get_xscale(), speed_ax.get_yscale()) == ("log", "log")
    assert time_ax.get_xlabel() == "size (d)" and "time" in time_ax.get_ylabel()
    assert "speed-up over explicit NumPy" in speed_ax.get_ylabel()
    assert [line.get_label() for line in time_ax.get_lines()] == ["numpy/cpu", "tinygrad_lab/cpu"]
    tg = time_ax.get_lines()[1]
    assert list(tg.get_xdata()) == [64, 1024] and list(tg.get_ydata()) == pytest.approx([1.5e-5, 6e-3])
    speed = {line.get_label(): list(line.get_ydata()) for line in speed_ax.get_lines()}
    assert speed["tinygrad_lab/cpu"] == pytest.approx([1 / 1.5, 1 / 1.5])
    for ax in (time_ax, speed_ax):  # ticks at the sizes measured, labelled plainly
        assert list(ax.get_xticks()) == [64, 1024] and [t.get_text() for t in ax.get_xticklabels()] == ["64", "1024"]


def test_one_row_per_workload_measured_at_several_sizes_and_a_png_file(tmp_path):
    path = tmp_path / "plot.png"
    matmul = [record(workload="matmul", shape=f"{n}x{n}", size=n) for n in (8, 16)]
    mlp = [record(workload="mlp", shape="64x64", size=64)]  # one size: no curve to draw
    fig = bench.plot(lsq_records() + matmul + mlp, path=path)
    assert [ax.get_title() for ax in fig.axes[::2]] == [
        "lsq: gradient of ||y - A x||^2, A of shape (10d, d)", "matmul: a @ b, square matrices, forward"]
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert len(bench.plot(mlp).axes) == 2  # drawn when nothing else is


def test_drawing_into_given_axes():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.subplots()
    assert bench.plot(lsq_records(), workload="lsq", axes=ax) is fig
    assert ax.get_yscale() == "log" and len(ax.get_lines()) == 2


def test_nothing_to_plot_is_an_error():
    with pytest.raises(ValueError, match="nothing to plot"):
        bench.plot([record(status="skipped", reason="absent", median_s=None)])
