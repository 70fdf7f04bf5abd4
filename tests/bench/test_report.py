"""The JSON file (schema, validator, atomic write), the printed table and summary, and the plot."""
from __future__ import annotations

import os

import pytest

from tinygrad_lab import bench
from tinygrad_lab.bench import report, schema
from tinygrad_lab.bench.workloads import WORKLOADS

from ._helpers import record

ENV = {"timestamp": "2026-01-01T00:00:00+00:00", "python": "3.11", "platform": "Linux", "cpu": "x", "cpus": 2,
       "numpy": "2.0", "blas": [], "tinygrad_lab": "0.1.0", "torch": None, "cupy": None,
       "gpu": {"available": False, "reason": "no GPU", "name": None}, "harness_overhead_s": 3e-8}


def doc(*records):
    return {"schema_version": schema.SCHEMA_VERSION, "environment": ENV, "records": list(records)}


def test_a_valid_document_passes():
    assert schema.errors(doc(record(), record(status="skipped", reason="why", median_s=None))) == []


@pytest.mark.parametrize("broken, problem", [
    (record(median_s="fast"), "$.records[0].median_s: expected number or null, got str"),
    (record(size=True), "$.records[0].size: expected integer, got bool"),
    (record(status="great"), "$.records[0].status: 'great' is not one of"),
    (record(min_s=-1.0), "$.records[0].min_s: -1.0 is below the minimum 0"),
    (record(extra=1), "$.records[0]: unexpected key 'extra'"),
    (record(targets=[{"goal": "≤1×"}]), "$.records[0].targets[0]: missing key 'met'"),
])
def test_the_validator_names_each_problem(broken, problem):
    found = schema.errors(doc(broken))
    assert any(p.startswith(problem) for p in found), found
    with pytest.raises(ValueError, match="not a valid tinygrad-lab bench document"):
        schema.validate(doc(broken))


def test_a_missing_record_field_is_found():
    rec = record()
    del rec["floor"]
    assert schema.errors(doc(rec)) == ["$.records[0]: missing key 'floor'"]


def test_the_environment_follows_the_schema():
    schema.validate(bench.environment(measure_harness=False), schema.ENVIRONMENT)


def test_write_json_round_trips_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "out.json"
    records = [record(), record(impl="tinygrad_lab", ratio_to_floor=1.5, targets=[{"goal": "≤1.05× numpy", "met": False}])]
    bench.write_json(records, ENV, path)
    assert bench.read_json(path) == (records, ENV)
    assert os.listdir(tmp_path) == ["out.json"]


def test_write_json_refuses_an_invalid_document_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "out.json"
    bench.write_json([record()], ENV, path)
    before = path.read_bytes()
    with pytest.raises(ValueError):
        bench.write_json([record(median_s="fast")], ENV, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["out.json"]


def test_write_json_replaces_atomically(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    bench.write_json([record()], ENV, path)
    before = path.read_bytes()

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(report.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        bench.write_json([record(), record()], ENV, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["out.json"]


def test_the_table_aligns_its_columns_and_shows_targets():
    w = WORKLOADS["lsq"]
    rows = [record(), record(impl="tinygrad_lab", median_s=2.5e-5, min_s=2e-5, max_s=3e-5, ratio_to_floor=2.5,
                             targets=[{"goal": "≤40.0 µs", "met": True}]),
            record(impl="torch", status="skipped", reason="not installed", median_s=None)]
    table = bench.Table(w, ["cpu"])
    header, lines = table.header(), table.rows(rows)
    assert header[0] == "== lsq: gradient of ||y - A x||^2, A of shape (10d, d)"
    assert header[1] == "   size = d; ×floor = median / median of numpy on cpu"
    assert len(lines) == 2  # the skipped record goes to the summary
    assert lines[1].split() == ["640x64", "float32", "1", "tinygrad_lab", "cpu", "25.0", "µs", "20.0", "µs", "30.0",
                                "µs", "2.50×", "≤40.0", "µs:", "met"]
    assert lines[0].index("10.0 µs") == lines[1].index("25.0 µs") == header[2].index("median")
    assert lines[0].index("1.00×") == lines[1].index("2.50×") == header[2].index("×floor")


def test_the_table_makes_room_for_the_sizes_asked_for():
    rows = [record(size=8192, shape="81920x8192")]
    table = bench.Table(WORKLOADS["lsq"], ["cpu", "cuda"], sizes=[8192])
    assert table.rows(rows)[0].index("float32") == table.header()[2].index("dtype")
    assert "numpy on cpu, cupy on cuda" in table.header()[1]


def test_the_summary_counts_targets_and_lists_misses_skips_errors_and_noise():
    rows = [record(impl="tinygrad_lab", targets=[{"goal": "≤40.0 µs", "met": True}]),
            record(impl="tinygrad_lab", threads=2, median_s=5e-5, ratio_to_floor=5.0,
                   targets=[{"goal": "≤40.0 µs", "met": False}]),
            record(impl="tinygrad_lab", device="cuda", targets=[{"goal": "≤1.1× cupy", "met": None}]),
            record(impl="torch", device="cuda", status="skipped", reason="no GPU", median_s=None),
            record(impl="torch", device="cuda", status="skipped", reason="no GPU", median_s=None),
            record(impl="cupy", status="error", reason="ValueError: bad"),
            record(foreign_cpu=0.5)]
    lines = report.format_summary(rows)
    assert lines[0] == "targets: 1/2 met"
    assert lines[1] == "  missed: lsq [640x64 float32, 2 thr] tinygrad_lab/cpu 50.0 µs = 5.00× numpy; goal ≤40.0 µs"
    assert "  1 target(s) not judged: their reference implementation did not run" in lines
    assert "error: lsq [640x64 float32, 1 thr] cupy/cpu: ValueError: bad" in lines
    assert "skipped: torch/cuda (2 records): no GPU" in lines
    assert lines[-1].startswith("noisy: 1 records")
