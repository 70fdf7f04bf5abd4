"""`tinygrad-lab bench`: the JSON it writes follows its schema, failures give a non-zero exit status,
and the parser needs nothing but the standard library."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tinygrad_lab import bench
from tinygrad_lab.bench import schema
from tinygrad_lab.cli import main

from .test_runner import MATMUL, wrong_matmul

QUICK = ["bench", "--quick", "--no-progress", "--threads", "1", "--repeats", "2"]


def test_quick_json_follows_the_schema(tmp_path, capsys):
    out, png = tmp_path / "out.json", tmp_path / "out.png"
    status = main([*QUICK, "--workload", "lsq,mlp", "--sizes", "16", "--dtypes", "float32",
                   "--json", str(out), "--plot", str(png)])
    assert status == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    schema.validate(doc)
    jsonschema = pytest.importorskip("jsonschema")  # the schema is standard JSON Schema too
    jsonschema.Draft202012Validator.check_schema(schema.SCHEMA)
    jsonschema.validate(doc, schema.SCHEMA)
    records = doc["records"]
    assert {r["workload"] for r in records} == {"lsq", "mlp"}
    assert all(r["size"] == 16 and r["threads"] == 1 for r in records)
    assert {r["status"] for r in records if r["impl"] in ("numpy", "tinygrad_lab") and r["device"] == "cpu"} == {"ok"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "== lsq: gradient of ||y - A x||^2" in printed and "targets:" in printed
    assert f"wrote {len(records)} records to {out}" in printed


def test_a_wrong_implementation_makes_the_command_fail(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(bench.WORKLOADS, "wrong", dataclasses.replace(MATMUL, name="wrong", autograd=wrong_matmul))
    assert main([*QUICK, "--workload", "wrong", "--sizes", "8", "--json", str(tmp_path / "x.json")]) == 1
    assert "FAILED cross-check" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_an_implementation_that_raises_makes_the_command_fail(monkeypatch, capsys):
    def broken(rt, host, variant):
        raise RuntimeError("no such op")

    monkeypatch.setitem(bench.WORKLOADS, "broken", dataclasses.replace(MATMUL, name="broken", autograd=broken))
    assert main([*QUICK, "--workload", "broken", "--sizes", "8"]) == 1
    assert "error: broken [8x8 float32, 1 thr] tinygrad_lab/cpu: RuntimeError: no such op" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--devices", "tpu"], "unknown device(s) tpu"),
    (["--sizes", "0"], "expected positive integers"),
    (["--threads", "one"], "expected comma-separated integers"),
])
def test_bad_arguments_are_refused(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", *args])
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_unknown_workloads_are_refused(capsys):
    assert main(["bench", "--workload", "lsq,nope"]) == 2
    assert "unknown workload 'nope'" in capsys.readouterr().err


def test_list_shows_every_workload(capsys):
    assert main(["bench", "--list"]) == 0
    printed = capsys.readouterr().out
    assert all(name in printed for name in bench.WORKLOADS)


def test_the_cli_knows_the_devices_the_runner_knows():
    from tinygrad_lab.bench import cli, runner

    assert cli.DEVICES == runner.DEVICES


def test_the_parser_imports_only_the_standard_library():
    """`tinygrad-lab doctor` builds this parser where the bench extras may be missing."""
    code = ("import sys, argparse, tinygrad_lab.bench.cli as cli; cli.add_arguments(argparse.ArgumentParser()); "
            "print(sorted(m for m in ('threadpoolctl', 'tqdm', 'matplotlib', 'torch', 'cupy') if m in sys.modules))")
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo).stdout
    assert out.strip() == "[]"
