"""benchmarks/ops.py, the op-by-op comparison with PyTorch on small tensors: every case runs under both
libraries and computes the same values, and the table lists each op once, worst ratio first."""
from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

import tinygrad_lab as tl

survey = runpy.run_path(str(Path(__file__).resolve().parents[2] / "benchmarks" / "ops.py"))


def _arrays(out) -> list:
    return [o.detach().numpy() for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("grad", [False, True])
def test_every_case_computes_what_pytorch_computes(grad):
    torch = pytest.importorskip("torch")
    ours, theirs = survey["cases"](tl, grad), survey["cases"](torch, grad)
    assert ours.keys() == theirs.keys()
    for name in ours:
        if name == "randn":  # the libraries' generators differ; the shapes do not
            assert ours[name]().shape == tuple(theirs[name]().shape)
            continue
        for got, want in zip(_arrays(ours[name]()), _arrays(theirs[name]()), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=name)


def test_the_table_lists_each_op_once_worst_first(capsys):
    pytest.importorskip("torch")
    survey["main"](["add", "unbind", "--samples", "1", "--number", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("(4, 8) float32, no grad")
    assert lines[1].split() == ["op", "tinygrad_lab", "torch", "ratio"]
    rows = [line.split() for line in lines[2:]]
    assert sorted(r[0] for r in rows) == ["add", "unbind"]
    ratios = [float(r[-1].rstrip("x")) for r in rows]
    assert ratios == sorted(ratios, reverse=True)
