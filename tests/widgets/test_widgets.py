"""The widgets' Python side, without a browser: traits hold what graph/ and bench/ computed,
clicks (trait changes) get answers, errors land in the widget, and the mimebundle carries
a deterministic repr and a static picture."""
from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("anywidget", reason="the lab extra is not installed")

import tinygrad_lab as tl  # noqa: E402
from tinygrad_lab import graph, nn, widgets  # noqa: E402
from tinygrad_lab.graph import render  # noqa: E402
from tinygrad_lab.widgets.timing import skip_notes  # noqa: E402


def _drawn_nodes(svg: str) -> list[str]:
    return re.findall(r'<g id="node\d+" class="node">\s*<title>(n\d+)</title>', svg)


def _program():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    w = tl.tensor([0.5, -1.0], requires_grad=True)
    return x, w, ((x * w).relu() + x.exp()).sum()


def _bundle(widget) -> dict:
    b = widget._repr_mimebundle_()
    return b[0] if isinstance(b, tuple) else b


def _png_size(data: str) -> tuple:
    png = base64.b64decode(data)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def test_graphview_draws_the_captured_graph_and_answers_clicks():
    x, w, y = _program()
    view = widgets.GraphView(y, params={"x": x, "w": w})
    g = view.graph
    assert sorted(_drawn_nodes(view.svg)) == sorted(f"n{n.id}" for n in g)  # every node drawn, by its name
    mul = next(n for n in g if n.op == "Mul")
    view.selected = f"n{mul.id}"  # what the browser sends on a click
    d = view.details
    assert d["op"] == "Mul" and d["shape"] == "[2]" and d["dtype"] == "float32" and d["device"] == "cpu"
    assert d["inputs"] == "a=x, b=w"  # the inputs by the learner's names
    assert d["value"].startswith("not kept")  # capture() knows an intermediate only where something kept it
    assert d["grad"].startswith("not computed yet")
    view.selected = f"n{next(n for n in g if n.op == 'Exp').id}"  # exp saves its output
    assert view.details["value"] == "[2.718, 7.389]  min 2.718 · max 7.389 · mean 5.054"
    view.selected = f"n{next(n for n in g if n.name == 'w').id}"
    assert view.details["name"] == "w" and view.details["op"] == "parameter"
    assert repr(view) == f"<GraphView: {len(g)} nodes>"
    bundle = _bundle(view)
    assert bundle["text/plain"] == repr(view) and "application/vnd.jupyter.widget-view+json" in bundle
    # the static picture: the same drawing with its legend, as SVG and as a PNG (shown even untrusted)
    assert sorted(_drawn_nodes(bundle["image/svg+xml"])) == sorted(_drawn_nodes(view.svg))
    assert "legend" in bundle["image/svg+xml"] and "legend" not in view.svg  # the live view's legend is HTML
    assert _png_size(bundle["image/png"])[0] > 100
    assert [row[0] for row in view.legend] == ["parameter", "op", "output", "saved"]
    assert view.legend[0][1:3] == list(render.PALETTE["parameter"]) and view.colors == render.COLORS


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
    monkeypatch.setattr(render, "dot_to", missing)
    view.show_values = True  # a redraw, which now fails
    assert "GraphvizNotFound" in view.error and "apt" in view.error
    monkeypatch.undo()
    view.show_values = False
    assert view.error == ""


def test_graphview_names_nodes_after_the_notebooks_variables(monkeypatch):
    namespace = {}
    monkeypatch.setattr("tinygrad_lab.widgets.graph_view.user_namespace", lambda: namespace)
    x, w, y = _program()
    view = widgets.GraphView(y, show_values=True)
    assert {n.name for n in view.graph if n.kind != "op"} == {"x", "w"}  # the caller's variables
    h = x.exp()  # not in this graph: ignored
    namespace.update(total=y, h=h)  # a name given later (in the notebook) appears at the next drawing
    view.show_grads = True
    assert view.graph.outputs[0].name == "y" and "<b>y</b> = Add" not in view.svg  # the first name stays
    assert re.search(r">y</text>|>y =|y = Add", view.svg)


@pytest.fixture
def display_updates(monkeypatch) -> list:
    """The mimebundles a displayed widget updates its output with (IPython's display handle, recorded)."""
    updates = []

    class Handle:
        def update(self, obj):
            updates.append(_bundle(obj))
    monkeypatch.setattr("IPython.display.display", lambda obj, display_id=None: Handle())
    return updates


def test_graphview_live_grows_while_the_block_runs(display_updates):
    updates = display_updates
    seen = []
    with widgets.GraphView.live(redraw_interval=0.0) as view:
        view.graph.subscribe(lambda event, node: seen.append(node.id))
        a = tl.ones(3, requires_grad=True)
        b = (a * 2).exp()
        c = b.sum()
    assert len(view.graph) == 4 and seen == [0, 1, 2, 3]  # a, mul, exp, sum
    assert len(_drawn_nodes(view.svg)) == 4  # the final drawing has them all
    assert [n.name for n in view.graph] == ["a", None, "b", "c"]  # named when the block ends
    # once, at the end, the output's static picture becomes the final graph
    assert len(updates) == 1 and len(_drawn_nodes(updates[0]["image/svg+xml"])) == 4 and "image/png" in updates[0]
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
    assert sorted(_drawn_nodes(_bundle(s)["image/svg+xml"])) == sorted(_drawn_nodes(s.view.svg))


def test_stepper_widget_explains_with_numbers_and_shows_the_code_that_ran():
    a = tl.tensor([2.0, 3.0], requires_grad=True)
    b = tl.tensor([5.0, 7.0], requires_grad=True)
    s = widgets.BackwardStepper((a * b).sum())
    s.slider.value = 2  # Sum, then Mul
    text = s.explanation.value
    assert "∂(a * b)/∂a = b, so grad a = g * b" in text and "[5., 7.]" in text
    assert f'<tr style="color: {render.COLORS["grad"]}"><td style="padding-right: 8px; white-space: nowrap">' \
           "<b>grad a</b></td><td style=\"white-space: pre-wrap\">= [5., 7.]</td>" in text  # gradients in orange
    code = s.code.value
    source = s.model.current.source()
    assert f"tinygrad_lab/ops/elementwise.py:{source.start}" in code and "Mul.backward" in code
    marked = re.findall(r'<span class="tl-code-mark"[^>]*>(.*?)</span></span>', code, re.DOTALL)
    assert len(marked) == 2 and "Mul.apply(g, b)" in marked[0] and "^ grad a = [5., 7.]" in marked[0]
    assert "^ grad b = [2., 3.]" in marked[1]
    s.slider.value = 3  # a leaf: no backward of its own
    assert "none of its own" in s.code.value


def test_timing_plot_measures_and_draws(monkeypatch):
    pytest.importorskip("matplotlib")
    plot = widgets.TimingPlot("lsq", sizes=[16, 32], devices=["cpu"], threads=[1], quick=True)
    ok = [r for r in plot.records if r["status"] == "ok"]
    assert {r["impl"] for r in ok} >= {"numpy", "tinygrad_lab"} and {r["size"] for r in ok} == {16, 32}
    assert plot.progress.value == plot.progress.max == 2 and plot.error == ""
    assert plot.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "image/png" in _bundle(plot) and repr(plot) == f"<TimingPlot 'lsq': {len(ok)} timings>"
    assert _png_size(_bundle(plot)["image/png"]) == (900, 360)  # a notebook's width: shown unscaled
    bad = widgets.TimingPlot("no-such-workload", devices=["cpu"], threads=[1])
    assert "no-such-workload" in bad.error and "no-such-workload" in bad.error_box.value


def test_skip_notes_say_each_reason_once():
    records = [{"status": "skipped", "device": "cuda", "impl": impl, "reason": reason} for impl, reason in (
        ("cupy", "CuPy is not installed (no module)"), ("tinygrad_lab", "CUDA is not available: CuPy is not "
         "installed (no module); install CuPy"), ("torch", "PyTorch sees no CUDA GPU")) * 3]
    assert skip_notes(records) == ["skipped on cuda (cupy, tinygrad_lab, torch): CUDA is not available: CuPy is "
                                   "not installed (no module); PyTorch sees no CUDA GPU"]


def test_live_loss_collects_and_draws(monkeypatch):
    # a machine booted a second ago: time.monotonic() starts near 0 (the throttle must not assume uptime)
    monkeypatch.setattr("tinygrad_lab.widgets.training.time.monotonic", lambda: 1.0)
    live = widgets.LiveLoss(total=3, every=3600)
    empty = live.image
    for v in (3.0, tl.tensor(2.0), 1.0):
        live.update(v)
    assert live.values == [3.0] and live.step == 3  # the first update draws; later ones wait for the throttle
    assert live.image != empty
    live.flush()
    assert live.values == [3.0, 2.0, 1.0] and repr(live) == "<LiveLoss 'loss': 3 values>"
    live.update(float("nan"))
    assert "non-finite" in live.title and live.values == [3.0, 2.0, 1.0]
    assert _png_size(_bundle(live)["image/png"]) == (640, 260)


def test_live_loss_curve_has_axes_ticks_and_the_final_state(display_updates):
    from tinygrad_lab.widgets.training import curve_title
    updates = display_updates
    with widgets.LiveLoss(total=50, title="MSE") as live:
        for i in range(50):
            live.update(1.0 / (i + 1))
    assert curve_title(live.values, "MSE", 50) == "MSE: step 50 of 50 · last 0.02 · lowest 0.02"
    # the final curve becomes the output's static picture, once
    assert len(updates) == 1 and updates[0]["text/plain"] == "<LiveLoss 'MSE': 50 values>"
    assert updates[0]["image/png"] != _bundle(widgets.LiveLoss(total=50, title="MSE"))["image/png"]


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


# ---------------------------------------------------------------- the committed lessons' pictures

LESSONS = sorted((Path(tl.__file__).resolve().parents[1] / "notebooks").glob("[01]*.ipynb"))


def _widget_outputs(path) -> list:
    nb = json.loads(path.read_text())
    return [o for c in nb["cells"] for o in c.get("outputs", [])
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_committed_widget_output_carries_a_picture_of_its_final_state(path):
    """A PNG shows in an untrusted notebook, on GitHub and in nbconvert's HTML; the live views'
    pictures are their final state, not the empty one they started with."""
    for out in _widget_outputs(path):
        data = out["data"]
        text = "".join(data["text/plain"])
        assert "image/png" in data, (path.stem, text)
        assert _png_size("".join(data["image/png"]))[0] >= 200, (path.stem, text)
        assert not re.search(r": 0 (values|nodes)>", text), (path.stem, text)


def test_nbconvert_html_shows_each_widget_as_an_image():
    nbconvert = pytest.importorskip("nbconvert")
    nbformat = pytest.importorskip("nbformat")
    path = next(p for p in LESSONS if p.stem.startswith("02"))
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nbformat.read(path, as_version=4))
    assert len(re.findall(r'<img [^>]*src="data:image/(png|svg)', body)) >= len(_widget_outputs(path)) == 3
    assert "&lt;GraphView" not in body
