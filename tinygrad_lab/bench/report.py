"""Reporting records: the printed table and summary, and the JSON file (written atomically)."""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

from .._fileio import write_atomic
from .schema import SCHEMA_VERSION, validate
from .timer import ForeignLoad, fmt_time
from .workloads import Workload

Record = dict[str, Any]


def _time(key: str) -> Callable[[Record], str]:
    return lambda r: "" if r[key] is None else fmt_time(r[key])


def _count(key: str) -> Callable[[Record], str]:
    return lambda r: "" if r.get(key) is None else str(r[key])


def _bytes(r: Record) -> str:
    n = r.get("peak_bytes_per_step")
    if n is None:
        return ""
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def _targets(r: Record) -> str:
    verdict = {True: "met", False: "MISSED", None: "n/a"}
    return "; ".join(f"{t['goal']}: {verdict[t['met']]}" for t in r["targets"])


class Table:
    """The printed table of one workload, with columns wide enough for every value it will show
    (so rows can be printed as they are measured, aligned with a header printed first)."""

    def __init__(self, workload: Workload, devices: Sequence[str], sizes: Sequence[int] | None = None) -> None:
        self.workload, self.devices = workload, devices
        impls = [i.name for d in devices for i in workload.impls(d)]
        shapes = [workload.shape(s) for s in (sizes or (*workload.sizes, *workload.quick_sizes))]
        self.columns: list[tuple[str, int, Callable[[Record], str]]] = [
            ("shape", max(map(len, shapes)), lambda r: r["shape"]),
            ("dtype", 7, lambda r: r["dtype"]),
            ("thr", 3, lambda r: str(r["threads"])),
            ("impl", max(map(len, impls), default=4), lambda r: r["impl"]),
            ("device", max(6, *map(len, devices)), lambda r: r["device"]),
            ("median", 9, _time("median_s")),
            ("min", 9, _time("min_s")),
            ("max", 9, _time("max_s")),
            ("×floor", 7, lambda r: "" if r["ratio_to_floor"] is None else f"{r['ratio_to_floor']:.2f}×"),
            ("target", 0, _targets),
        ]
        if any(d != "cpu" for d in devices):  # what one step does on the device, where it is counted
            self.columns[-1:-1] = [("launches", 8, _count("launches_per_step")), ("syncs", 5, _count("syncs_per_step")),
                                   ("uploads", 7, _count("uploads_per_step")), ("peak mem", 8, _bytes)]
        if workload.variants != ("",):
            self.columns.insert(0, ("variant", max(map(len, workload.variants)), lambda r: r["variant"]))
        self.widths = [max(width, len(name)) for name, width, _ in self.columns]

    def _line(self, cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, self.widths)).rstrip()

    def header(self) -> list[str]:
        """The workload's title, what its ratios are taken to, and the column header."""
        w = self.workload
        floors = ", ".join(f"{w.floor(d)} on {d}" for d in self.devices)
        header = self._line([name for name, _, _ in self.columns])
        return [f"== {w.name}: {w.title}", f"   size = {w.size_label}; ×floor = median / median of {floors}",
                header, "-" * len(header)]

    def rows(self, records: Sequence[Record]) -> list[str]:
        """One line per timed record (skipped ones are summarised by `format_summary`)."""
        lines = []
        for r in records:
            if r["status"] == "ok":
                noisy = r["foreign_cpu"] is not None and r["foreign_cpu"] > ForeignLoad.NOISY
                lines.append(self._line([cell(r) for _, _, cell in self.columns]) + ("  (noisy)" if noisy else ""))
        return lines


def _where(r: Record) -> str:
    variant = f" {r['variant']}" if r["variant"] else ""
    return f"{r['workload']}{variant} [{r['shape']} {r['dtype']}, {r['threads']} thr] {r['impl']}/{r['device']}"


def format_summary(records: Sequence[Record]) -> list[str]:
    """Targets met and missed, errors, skipped implementations with their reasons, noise."""
    judged = [(r, t) for r in records for t in r["targets"] if t["met"] is not None]
    missed = [(r, t) for r, t in judged if not t["met"]]
    lines = [f"targets: {len(judged) - len(missed)}/{len(judged)} met"]
    for r, t in missed:
        ratio = "" if r["ratio_to_floor"] is None else f" = {r['ratio_to_floor']:.2f}× {r['floor']}"
        lines.append(f"  missed: {_where(r)} {fmt_time(r['median_s'])}{ratio}; goal {t['goal']}")
    unmeasured = sum(t["met"] is None for r in records for t in r["targets"])
    if unmeasured:
        lines.append(f"  {unmeasured} target(s) not judged: their reference implementation did not run")
    lines += [f"error: {_where(r)}: {r['reason']}" for r in records if r["status"] == "error"]
    skipped = Counter((r["impl"], r["device"], r["reason"]) for r in records if r["status"] == "skipped")
    lines += [f"skipped: {impl}/{device} ({n} records): {reason}" for (impl, device, reason), n in skipped.items()]
    noisy = sum(r["foreign_cpu"] is not None and r["foreign_cpu"] > ForeignLoad.NOISY for r in records)
    if noisy:
        lines.append(f"noisy: {noisy} records were timed while other processes used more than "
                     f"{ForeignLoad.NOISY:.0%} of the CPUs")
    return lines


def write_json(records: Sequence[Record], env: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write records and environment as one JSON document (see schema.SCHEMA), atomically: a
    temporary file in the same folder, then os.replace, so a reader never sees half a file."""
    doc = {"schema_version": SCHEMA_VERSION, "environment": env, "records": list(records)}
    validate(doc)
    text = json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    write_atomic(path, text.encode("utf-8"))


def read_json(path: str | os.PathLike[str]) -> tuple[list[Record], dict[str, Any]]:
    """Records and environment of a file written by `write_json` (validated)."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    validate(doc)
    return doc["records"], doc["environment"]
