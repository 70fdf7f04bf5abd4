"""profiler (torch.profiler's API over the engine's event stream): every op and backward node counted once,
self times that add up to the total, record_function regions charged with what ran inside them, a Chrome
trace written atomically, and no subscriber left behind."""
from __future__ import annotations

import json
import os

import pytest

import tinygrad_lab as tl
from tinygrad_lab.profiler import ProfilerActivity, profile, record_function


@pytest.fixture
def run(no_leftover_subscribers):
    model = tl.nn.Sequential(tl.nn.Linear(8, 16), tl.nn.ReLU(), tl.nn.Linear(16, 2))
    x = tl.randn(4, 8)

    @record_function("loss")
    def loss_of(batch):
        return model(batch).relu().sum()

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("forward"):
            loss = loss_of(x)
        loss.backward()
    return prof


def test_every_op_and_backward_node_counted_once(run):
    counts = {e.key: e.count for e in run.key_averages()}
    assert counts == {"forward": 1, "loss": 1, "Linear": 2, "Relu": 2, "Sum": 1, "SumBackward": 1,
                      "ReluBackward": 2, "LinearBackward": 2, "AccumulateGrad": 4}


def test_times_add_up(run):
    averages = {e.key: e for e in run.key_averages()}
    ops_inside = sum(averages[k].cpu_time_total for k in ("Linear", "Relu", "Sum"))
    loss, forward = averages["loss"], averages["forward"]
    assert loss.cpu_time_total >= ops_inside and loss.self_cpu_time_total == pytest.approx(
        loss.cpu_time_total - ops_inside, rel=1e-9, abs=1e-6)
    assert forward.self_cpu_time_total == pytest.approx(forward.cpu_time_total - loss.cpu_time_total, abs=1e-6)
    assert all(e.cpu_time_total > 0 for e in averages.values())
    table = run.key_averages().table(sort_by="self_cpu_time_total", row_limit=3)
    lines = table.splitlines()
    assert "Self CPU %" in lines[1] and len(lines) == 3 + 3 + 2 and lines[-1].startswith("Self CPU time total:")


def test_shapes_and_the_chrome_trace(run, tmp_path):
    by_shape = run.key_averages(group_by_input_shape=True)
    assert ((4, 8), (16, 8), (16,)) in {e.input_shapes for e in by_shape if e.key == "Linear"}
    path = tmp_path / "trace.json"
    run.export_chrome_trace(path)
    trace = json.loads(path.read_text())["traceEvents"]
    assert len(trace) == len(run.events()) == 2 + 5 + 9 and os.listdir(tmp_path) == ["trace.json"]  # regions, ops, nodes
    assert all(t["ph"] == "X" and t["dur"] >= 0 and t["ts"] >= 0 for t in trace)


def test_nothing_is_recorded_outside_the_block(no_leftover_subscribers):
    with profile() as prof:
        pass
    tl.ones(2).exp()
    assert prof.events() == []
