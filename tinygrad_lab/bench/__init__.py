"""Benchmarks: tinygrad_lab timed beside explicit NumPy/CuPy (the floors) and PyTorch.

    from tinygrad_lab import bench
    records = bench.run(workloads=["lsq"], sizes=[64, 1024], threads=[1, 2])
    bench.plot(records, workload="lsq")            # a matplotlib Figure
    bench.write_json(records, bench.environment(), "lsq.json")

`run` returns tidy records (one dict per implementation, device and thread count of each
case; `schema.RECORD` lists the fields). Every implementation is cross-checked against
explicit NumPy before it is timed. The command line is `tinygrad-lab bench`.

Only NumPy is imported here; threadpoolctl, tqdm, matplotlib, PyTorch and CuPy are imported
when they are first needed.
"""
from .environment import environment
from .plot import plot
from .report import Table, format_summary, read_json, write_json
from .runner import CrossCheckError, plan, run
from .schema import SCHEMA, validate
from .timer import Timer, fmt_time
from .workloads import WORKLOADS, Impl, Target, Workload

__all__ = ["CrossCheckError", "Impl", "SCHEMA", "Table", "Target", "Timer", "WORKLOADS", "Workload", "environment",
           "fmt_time", "format_summary", "plan", "plot", "read_json", "run", "validate", "write_json"]
