"""The widgets' Python side, without a browser: traits hold what graph/ and bench/ computed,
clicks (trait changes) get answers, errors land in the widget, and the mimebundle carries
a deterministic repr and a static picture."""
from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("anywidget", reason="the lab extra is not installed")

import tinygrad_lab as tl  # noqa: E402
from tinygrad_lab import graph, nn, widgets  # noqa: E402
from tinygrad_lab.widgets.training import loss_curve_svg  # noqa: E402


def _drawn_nodes(svg: str) -> list[str]:
    return re.findall(r'<g id="node\d+" class="node">\s*<title>(n\d+)</title>', svg)


def _program():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    w = tl.tensor([0.5, -1.0], requires_grad=True)
    return x, w, ((x * w).relu() + x.exp()).sum()


def _bundle(widget) -> dict:
    b = widget._repr_mimebundle_()
    return b[0] if isinstance(b, tuple) else b


def test_graphview_draws_the_captured_graph_and_answers_clicks():
    x, w, y = _program()
    view = widgets.GraphView(y, params={"x": x, "w": w})
    g = view.graph
    assert sorted(_drawn_nodes(view.svg)) == sorted(f"n{n.id}" for n in g)  # every node drawn, by its name
    mul = next(n for n in g if n.op == "Mul")
    view.selected = f"n{mul.id}"  # what the browser sends on a click
    d = view.details
    assert d["op"] == "Mul" and d["shape"] == "[2]" and d["dtype"] == "float32" and d["device"] == "cpu"
    assert d["inputs"] == f"a=#{g[mul.inputs[0][0]].id}, b=#{g[mul.inputs[1][0]].id}"
    assert d["value"] == "—"  # capture() knows an intermediate value only where its op saved it
    view.selected = f"n{next(n for n in g if n.op == 'Exp').id}"  # exp saves its output
    assert view.details["value"].startswith("min 2.718 · max 7.389")
    view.selected = f"n{next(n for n in g if n.name == 'w').id}"
    assert view.details["name"] == "w" and view.details["op"] == "parameter"
    assert repr(view) == f"<GraphView: {len(g)} nodes>"
    bundle = _bundle(view)
    assert bundle["text/plain"] == repr(view) and bundle["image/svg+xml"] == view.svg
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_graphview_options_redraw():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    loss = model(tl.randn(5, 3)).sum()
    view = widgets.GraphView(loss, params=dict(model.named_parameters()))
    plain = view.svg
    view.cluster_modules = True
    assert view.svg != plain and "cluster" in view.svg
    view.collapse_depth = 0  # the toolbar's depth box: the whole model folds into one box
    assert view.collapse == 0 and len(_drawn_nodes(view.svg)) < len(view.graph)
    view.collapse_depth = -1
    assert view.collapse is None
    view.collapse = ["0"]  # the first Linear becomes one box
    assert "n" not in [t[0] for t in _drawn_nodes(view.svg)] or len(_drawn_nodes(view.svg)) < len(view.graph)


def test_graphview_errors_show_in_the_widget(monkeypatch):
    _, _, y = _program()
    view = widgets.GraphView(y)
    assert view.error == ""

    def missing(*a, **k):
        raise graph.GraphvizNotFound("digraph {}")
    monkeypatch.setattr(view.graph, "to_svg", missing)
    view.show_values = True  # a redraw, which now fails
    assert "GraphvizNotFound" in view.error and "apt" in view.error
    monkeypatch.undo()
    view.show_values = False
    assert view.error == ""


def test_graphview_live_grows_while_the_block_runs():
    seen = []
    with widgets.GraphView.live(redraw_interval=0.0) as view:
        view.graph.subscribe(lambda event, node: seen.append(node.id))
        a = tl.ones(3, requires_grad=True)
        b = (a * 2).exp()
        c = b.sum()
    assert len(view.graph) == 4 and seen == [0, 1, 2, 3]  # a, mul, exp, sum
    assert len(_drawn_nodes(view.svg)) == 4  # the final drawing has them all
    del c
    with pytest.raises(RuntimeError, match="only GraphView.live"):
        with widgets.GraphView(b):
            pass


def test_stepper_widget_follows_the_model_and_ends_at_backward():
    x, w, y = _program()
    reference = graph.BackwardStepper(y)  # an independent walk of the same pass
    expected = []
    while not reference.done:
        expected.append(reference.step().node.id)
    reference.reset()

    s = widgets.BackwardStepper(y)
    assert s.total == len(expected) and repr(s) == f"<BackwardStepper widget: step 0 of {s.total}>"
    for k in range(s.total):
        s.buttons["Step"].click()
        assert s.view.highlighted == [f"n{expected[k]}"] and s.view.highlight == expected[k]
        assert f"step {k + 1} of {s.total}" in s.explanation.value
    step = s.model.current
    assert s.view.highlighted_edges == [f"n{src.id}->n{step.node.id}" for src, _, g in step.sends
                                        if src is not None and g is not None]
    got = (x.grad.numpy().copy(), w.grad.numpy().copy())
    s.buttons["Back"].click()
    assert s.slider.value == s.total - 1 and s.view.highlighted == [f"n{expected[-2]}"]
    s.buttons["Reset"].click()
    assert x.grad is None and w.grad is None and s.view.highlighted == []
    x2, w2, y2 = _program()
    y2.backward()
    np.testing.assert_array_equal(got[0], x2.grad.numpy())
    np.testing.assert_array_equal(got[1], w2.grad.numpy())
    assert _bundle(s)["image/svg+xml"] == s.view.svg


def test_stepper_widget_explains_with_numbers():
    a = tl.tensor([2.0, 3.0], requires_grad=True)
    b = tl.tensor([5.0, 7.0], requires_grad=True)
    s = widgets.BackwardStepper((a * b).sum())
    s.slider.value = 2  # Sum, then Mul
    text = s.explanation.value
    assert "∂(a·b)/∂a = b" in text and "[5., 7.]" in text


def test_timing_plot_measures_and_draws(monkeypatch):
    pytest.importorskip("matplotlib")
    plot = widgets.TimingPlot("lsq", sizes=[16, 32], devices=["cpu"], threads=[1], quick=True)
    ok = [r for r in plot.records if r["status"] == "ok"]
    assert {r["impl"] for r in ok} >= {"numpy", "tinygrad_lab"} and {r["size"] for r in ok} == {16, 32}
    assert plot.progress.value == plot.progress.max == 2 and plot.error == ""
    assert plot.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "image/png" in _bundle(plot) and repr(plot) == f"<TimingPlot 'lsq': {len(ok)} timings>"
    bad = widgets.TimingPlot("no-such-workload", devices=["cpu"], threads=[1])
    assert "no-such-workload" in bad.error and "no-such-workload" in bad.error_box.value


def test_live_loss_collects_and_draws(monkeypatch):
    # a machine booted a second ago: time.monotonic() starts near 0 (the throttle must not assume uptime)
    monkeypatch.setattr("tinygrad_lab.widgets.training.time.monotonic", lambda: 1.0)
    live = widgets.LiveLoss(total=3, every=3600)
    for v in (3.0, tl.tensor(2.0), 1.0):
        live.update(v)
    assert live.values == [3.0]  # the first update sends; later ones wait for the throttle
    live.flush()
    assert live.values == [3.0, 2.0, 1.0] and repr(live) == "<LiveLoss 'loss': 3 values>"
    live.update(float("nan"))
    assert "non-finite" in live.title and live.values == [3.0, 2.0, 1.0]
    svg = _bundle(live)["image/svg+xml"]
    assert svg == loss_curve_svg([3.0, 2.0, 1.0], live.title) and "<polyline" in svg
    assert "36.0,36.0" in svg and "384.0,144.0" in svg  # highest value at the top left, lowest bottom right


def _mlp_and_cnn():
    tl.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    cnn = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8, 3))
    return [(mlp, tl.randn(5, 4)), (cnn, tl.randn(2, 1, 4, 4))]


@pytest.mark.parametrize("which", [0, 1], ids=["mlp", "cnn"])
def test_stepper_widget_on_models_with_collapsed_modules(which):
    model, x = _mlp_and_cnn()[which]
    target = tl.tensor([0, 2, 1, 1, 0][: x.shape[0]])
    loss = nn.functional.cross_entropy(model(x), target)
    s = widgets.BackwardStepper(loss, params=dict(model.named_parameters()), collapse=1, cluster_modules=True)
    drawn = len(_drawn_nodes(s.view.svg))
    assert drawn < len(s.view.graph)  # the layers are folded into boxes
    s.slider.value = s.total  # play to the end
    assert s.error == "" and s.model.done
    got = {name: p.grad.numpy().copy() for name, p in model.named_parameters()}
    for p in model.parameters():
        p.grad = None
    nn.functional.cross_entropy(model(x), target).backward()
    for name, p in model.named_parameters():
        np.testing.assert_array_equal(got[name], p.grad.numpy(), err_msg=name)
