"""`tinygrad-lab bench`: time the engine beside explicit NumPy/CuPy and PyTorch, print a table.

Only the standard library is imported at module level: `tinygrad-lab doctor` builds this parser
even where the bench extras (threadpoolctl, tqdm, matplotlib) are missing. Exit status: 0, or 1
when implementations disagree or one raised, 2 for bad arguments or a missing requirement.
Missed speed targets are reported, never an error.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable

DEVICES = ("cpu", "cuda")  # = bench.runner.DEVICES, not imported: only the stdlib is imported here


def _ints(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _positive_int(text: str) -> int:
    values = _ints(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"expected one positive integer, got {text!r}")
    return values[0]


def _names(text: str) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return values


def _devices(text: str) -> list[str]:
    values = _names(text)
    unknown = [v for v in values if v not in DEVICES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown device(s) {', '.join(unknown)}; choose from {','.join(DEVICES)}")
    return values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `tinygrad-lab bench`."""
    parser.add_argument("--workload", "--workloads", dest="workloads", type=_names, metavar="NAMES",
                        help="comma-separated workloads (default: all of them; --list shows them)")
    parser.add_argument("--sizes", type=_ints, metavar="N,N",
                        help="sizes replacing each workload's own (a size means d, n, elements or batch: --list)")
    parser.add_argument("--devices", type=_devices, default=list(DEVICES), metavar="cpu,cuda",
                        help="devices (default cpu,cuda; what cannot run here is reported as skipped, with why)")
    parser.add_argument("--threads", type=_ints, metavar="N,N",
                        help="thread counts pinned for BLAS and PyTorch (default 1 and the number of CPUs)")
    parser.add_argument("--dtypes", type=_names, metavar="NAMES",
                        help="dtypes replacing each workload's own (e.g. float64)")
    parser.add_argument("--repeats", type=_positive_int, metavar="N",
                        help="samples per implementation (default 15, 5 with --quick)")
    parser.add_argument("--json", metavar="PATH", help="write the records and environment to this JSON file")
    parser.add_argument("--plot", metavar="PATH", help="draw time vs size and speed-up over NumPy to this image")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, 5 samples of >= 5 ms each: under a minute on 2 cores")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")


def _environment_lines(env: dict[str, Any], fmt_time: Callable[[float], str]) -> list[str]:
    blas = ", ".join(f"{b['internal_api']} {b['version']} ({b['architecture']}, {b['threading_layer']}, "
                     f"{b['num_threads']} threads by default)" for b in env["blas"]) or "not detected"
    torch = (f"{env['torch']} (BLAS {env['torch_blas']}, {env['torch_threads']} threads by default)"
             if env["torch"] else "not installed")
    gpu = env["gpu"]["name"] or f"none ({env['gpu']['reason']})"
    lines = [f"CPU:     {env['cpu']} ({env['cpus']} CPUs usable)",
             f"python:  {env['python']} on {env['platform']}",
             f"numpy:   {env['numpy']}, BLAS {blas}",
             f"torch:   {torch}",
             f"cupy:    {env['cupy'] or 'not installed'}",
             f"GPU:     {gpu}"]
    if env["harness_overhead_s"] is not None:
        lines.append(f"harness: {fmt_time(env['harness_overhead_s'])} per iteration for an empty step (in every time)")
    return lines


def run(args: argparse.Namespace) -> int:
    """Run the benchmark described by parsed `args`; returns the exit status."""
    started = time.perf_counter()
    from tinygrad_lab import bench
    from tinygrad_lab.bench.runner import default_threads, make_timer, resolve_workloads
    from tinygrad_lab.bench.runtimes import Unavailable, blas_threads

    try:
        workloads = resolve_workloads(args.workloads)
        if args.list:
            for w in workloads:
                print(f"{w.name:12} {w.title}\n{'':12} size = {w.size_label}; default sizes "
                      f"{','.join(map(str, w.sizes))}, --quick {','.join(map(str, w.quick_sizes))}; "
                      f"dtypes {','.join(w.dtypes)}")
            return 0
        blas_threads()  # threadpoolctl must be there to pin thread counts honestly
    except (ValueError, Unavailable) as exc:
        print(f"tinygrad-lab bench: {exc}", file=sys.stderr)
        return 2
    write: Callable[[str], Any] = print
    progress = not args.no_progress and sys.stderr.isatty()
    if progress:
        try:
            from tqdm.auto import tqdm

            write = tqdm.write  # prints above the progress bar
        except ImportError:
            progress = False
    threads = args.threads or list(default_threads())
    timer = make_timer(args.quick, args.repeats)
    env = bench.environment()
    print("tinygrad-lab bench" + (" --quick" if args.quick else ""))
    print("\n".join(_environment_lines(env, bench.fmt_time)))
    print(f"method:  {timer.repeats} interleaved samples of >= {bench.fmt_time(timer.min_sample_s)} per "
          f"implementation, median/min/max per iteration; threads {','.join(map(str, threads))}")
    tables = {w.name: bench.Table(w, args.devices, args.sizes) for w in workloads}
    shown: list[str] = []

    def show(group: list[dict[str, Any]]) -> None:
        name = group[0]["workload"]
        if not shown or shown[-1] != name:
            shown.append(name)
            write("\n" + "\n".join(tables[name].header()))
        for line in tables[name].rows(group):
            write(line)

    try:
        records = bench.run(workloads, sizes=args.sizes, devices=args.devices, threads=threads, dtypes=args.dtypes,
                            quick=args.quick, timer=timer, progress=progress, on_records=show)
    except bench.CrossCheckError as exc:
        print(f"\ntinygrad-lab bench: FAILED cross-check: {exc}", file=sys.stderr)
        return 1
    print("\n" + "\n".join(bench.format_summary(records)))
    if args.json:
        bench.write_json(records, env, args.json)
        print(f"wrote {len(records)} records to {args.json}")
    if args.plot:
        bench.plot(records, path=args.plot)
        print(f"wrote the plot to {args.plot}")
    print(f"total time: {time.perf_counter() - started:.0f} s")
    return 1 if any(r["status"] == "error" for r in records) else 0
