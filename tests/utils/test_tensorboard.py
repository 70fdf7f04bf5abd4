"""SummaryWriter's files, read back with TensorBoard's own reader (EventAccumulator)."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

pytest.importorskip("tensorboard", exc_type=ImportError)
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from tinygrad_lab.utils.tensorboard import SummaryWriter  # noqa: E402


def _read(path) -> EventAccumulator:
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_scalars_come_back_with_their_steps_and_values(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(5):
            w.add_scalar("loss/train", 1.0 / (step + 1), step)
        w.add_scalar("accuracy", tl.tensor(0.75), 4)
    acc = _read(tmp_path)
    assert sorted(acc.Tags()["scalars"]) == ["accuracy", "loss/train"]
    events = acc.Scalars("loss/train")
    assert [e.step for e in events] == [0, 1, 2, 3, 4]
    np.testing.assert_allclose([e.value for e in events], [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5], rtol=1e-6)
    assert acc.Scalars("accuracy")[0].value == 0.75


def test_add_scalars_writes_one_run_per_curve(tmp_path):
    w = SummaryWriter(tmp_path)
    w.add_scalars("loss", {"train": 0.5, "val": 0.7}, 3)
    w.close()
    for name, value in (("loss_train", 0.5), ("loss_val", 0.7)):
        events = _read(tmp_path / name).Scalars("loss")
        assert [(e.step, round(e.value, 6)) for e in events] == [(3, value)]


def test_histograms_keep_count_sum_range_and_buckets(tmp_path):
    values = tl.tensor([0.5, 1.5, 1.5, 2.5, -1.0])
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("weights", values, 7)
        w.add_histogram("fixed", values, 7, bins=np.array([-2.0, 0.0, 1.0, 2.0, 3.0]))
    acc = _read(tmp_path)
    h = acc.Histograms("weights")[0].histogram_value
    assert (h.min, h.max, h.num, h.sum, h.sum_squares) == (-1.0, 2.5, 5, 5.0, 12.0)
    assert sum(h.bucket) == 5 and acc.Histograms("weights")[0].step == 7
    f = acc.Histograms("fixed")[0].histogram_value
    assert list(f.bucket_limit) == [0.0, 1.0, 2.0, 3.0] and list(f.bucket) == [1, 1, 2, 1]
    with pytest.raises(ValueError, match="NaN or infinity"):
        SummaryWriter(tmp_path / "bad").add_histogram("x", tl.tensor([float("nan")]))


def test_text_is_stored_as_the_text_plugin_reads_it(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "lr = **0.1**", 2)
    acc = _read(tmp_path)
    (event,) = acc.Tensors("notes/text_summary")
    assert event.step == 2 and event.tensor_proto.string_val == [b"lr = **0.1**"]
    assert acc.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"


def test_the_graph_is_our_recorded_graph_grouped_by_module(tmp_path):
    model = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.ReLU(), tl.nn.Linear(4, 2))
    with SummaryWriter(tmp_path) as w:
        w.add_graph(model, tl.randn(5, 3))
    nodes = {n.name: n for n in _read(tmp_path).Graph().node}
    assert "Sequential/Linear[0]/weight" in nodes and "Sequential/Linear[2]/bias" in nodes
    ops = [n for n in nodes.values() if n.op == "Linear"]
    assert len(ops) == 2 and [n.op for n in nodes.values()].count("Relu") + [n.op for n in nodes.values()].count(
        "ReLU") == 1
    last = next(n for n in ops if n.name.startswith("Sequential/Linear[2]/"))
    assert "Sequential/Linear[2]/weight" in last.input
    assert [d.size for d in last.attr["_output_shapes"].list.shape[0].dim] == [5, 2]


def test_default_log_dir_and_flush(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    assert w.get_logdir().startswith("runs") and w.get_logdir().endswith("_lr0.1")
    w.add_scalar("x", 1.0, 0)
    w.flush()
    assert _read(tmp_path / w.get_logdir()).Scalars("x")[0].value == 1.0
    w.close()
