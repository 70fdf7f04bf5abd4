"""DOT and SVG drawings: golden files, determinism across processes, clusters, collapsing,
summarising big graphs, and the error when Graphviz is missing."""
from __future__ import annotations

import html
import json
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

import tinygrad_lab as tl
from tinygrad_lab import graph, nn
from tinygrad_lab.graph import render

from ._programs import chain, cnn, golden_dots, mlp, tiny_program

GOLDEN = pathlib.Path(__file__).parent / "golden"
REPO = pathlib.Path(tl.__file__).resolve().parents[1]
UPDATE = os.environ.get("TINYGRAD_LAB_UPDATE_GOLDEN") == "1"  # rewrite the golden files from this run

_FRESH = """
import json, sys
from tests.graph._programs import golden_dots, unrelated_work
if sys.argv[1] == "warm":
    unrelated_work()
print(json.dumps(golden_dots()))
"""


# ---------------------------------------------------------------- golden files and determinism

@pytest.fixture(scope="module")
def dots() -> dict:
    return golden_dots()


def test_golden_dot_files(dots):
    if UPDATE:
        for name, text in dots.items():
            (GOLDEN / f"{name}.dot").write_text(text, encoding="utf-8")
    for name, text in dots.items():
        expected = (GOLDEN / f"{name}.dot").read_text(encoding="utf-8")
        assert text == expected, f"{name}.dot differs from the golden file (TINYGRAD_LAB_UPDATE_GOLDEN=1 rewrites it)"


def _dots_in_fresh_process(mode: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", _FRESH, mode], capture_output=True, text=True, env=env, cwd=REPO,
                         timeout=300, check=True)
    return json.loads(out.stdout)


def test_dot_is_byte_identical_across_processes(dots):
    """Same program, two fresh processes, one after unrelated work: the same bytes as here."""
    assert _dots_in_fresh_process("cold") == dots
    assert _dots_in_fresh_process("warm") == dots


def test_dot_is_byte_identical_within_a_process(dots):
    assert golden_dots() == dots


# ---------------------------------------------------------------- labels and legend

def _labels(dot: str) -> dict:
    """DOT node name -> its label as text: Graphviz's HTML-like labels with lines split at <br/>,
    tags dropped and entities decoded."""
    out = {}
    for name, label in re.findall(r"^\s*(\w+) \[label=<(.*)>, (?:shape|style)=", dot, re.MULTILINE):
        text = re.sub(r"<[^>]+>", "", label.replace("<br/>", "\n"))
        out[name] = html.unescape(text)
    return out


def test_labels_carry_names_shape_dtype_saved_values_and_grads():
    model, _, loss = tiny_program()
    g = graph.capture(loss, params=dict(model.named_parameters()))
    plain = _labels(g.to_dot())
    assert plain["n0"] == "fc.weight\n[2, 3] float32"
    assert plain["n3"] == "Linear\n[1, 2] float32\nsaved: x, w · 36 B"
    assert plain["n5"] == "Mul\n[1, 2] float32\nsaved: a, b · 16 B"
    assert plain["n6"] == "loss = Sum\n[] float32"  # the test's own variable
    assert _labels(g.to_dot(show_saved=False))["n3"] == "Linear\n[1, 2] float32"
    values = _labels(g.to_dot(show_values=True))
    assert values["n1"] == "fc.bias\n[2] float32\n= [0.5, -0.5]"
    assert values["n6"].endswith("\n= 3.61") and values["n4"].endswith("= [1.9, 0]")  # relu saved its output
    assert values["n3"].endswith("\nvalue not kept")  # nothing saved Linear's output, no variable holds it
    loss.backward()
    grads = _labels(g.to_dot(show_grads=True))
    assert grads["n1"] == "fc.bias\n[2] float32\ngrad = [3.8, 0]"


def test_every_value_is_known_after_recording():
    model = tiny_program()[0]
    with graph.record():
        x = tl.tensor([[1.0, 2.0, 3.0]])
        r = model(x).relu()
        loss = (r * r).sum()
    labels = _labels(graph.capture(loss).to_dot(show_values=True))  # a later capture reads what record() kept
    assert not [n for n, text in labels.items() if "value not kept" in text]
    assert labels["n3"].endswith("= [1.9, -0.3]") and labels["n2"].startswith("x\n")


def test_big_tensors_show_first_values_and_range():
    x = tl.arange(20, dtype=tl.float32).requires_grad_()
    g = graph.capture(x)
    assert _labels(g.to_dot(show_values=True))["n0"] == "x\n[20] float32\n= [0, 1, 2, …]\nmin 0 · max 19"


def test_learners_names_label_leaves_and_ops():
    w = tl.tensor([0.5, -1.0], requires_grad=True)
    x = tl.tensor([1.0, 2.0])
    b = tl.tensor(0.1, requires_grad=True)
    z = (w * x).sum() + b
    loss = (z - 4.0) ** 2
    labels = {k: v.split("\n")[0] for k, v in _labels(graph.capture(loss).to_dot()).items() if k != "legend"}
    assert sorted(labels.values()) == ["Mul", "Sub", "Sum", "b", "loss = Pow", "w", "x", "z = Add"]
    alias = loss  # a second name for the same tensor: the shortest wins, deterministically
    labels = _labels(graph.capture(alias).to_dot())
    assert labels[max(labels, key=lambda k: int(k[1:]) if k[1:].isdigit() else -1)].startswith("loss = Pow")


def test_names_are_looked_up_without_keeping_tensors_alive():
    import gc
    import weakref

    def build():
        h = tl.tensor([1.0, 2.0], requires_grad=True) * 3.0
        return graph.capture(h.sum()), weakref.ref(h)
    g, ref = build()
    gc.collect()
    assert ref() is None and _labels(g.to_dot())["n1"].startswith("h = Mul")


def test_names_come_from_a_given_namespace_and_skip_private_names():
    a = tl.tensor([1.0], requires_grad=True)
    y = a * 2.0
    g = graph.capture(y, namespace={"_hidden": a, "first": y})
    assert [n.name for n in g] == [None, "first"]


def test_html_in_names_is_escaped():
    t = tl.tensor([1.0], requires_grad=True)
    g = graph.capture(t * 2.0, namespace={"a<b>": t})
    assert "a&lt;b&gt;" in g.to_dot() and "<b>a<b></b>" not in g.to_dot()


def test_styles_and_legend_share_one_palette():
    model, _, loss = tiny_program()
    dot = graph.capture(loss, params=dict(model.named_parameters())).to_dot()
    assert re.search(r'n0 \[.*fillcolor="#dcfce7", color="#16a34a"', dot)  # parameter: green
    assert re.search(r'n2 \[.*fillcolor="#dbeafe", color="#2563eb"', dot)  # input: blue
    assert re.search(r'n6 \[.*style="rounded,filled,bold", fillcolor="#fde68a"', dot)  # output: amber
    legend = re.search(r"legend \[.*\]", dot).group(0)
    for kind in ("input", "parameter", "op", "output"):
        fill, border = render.PALETTE[kind]
        assert f'bgcolor="{fill}" color="{border}"' in legend and render.LEGEND[kind] in legend
    assert f'<font color="{render.COLORS["saved"]}">saved</font>' in legend
    assert "collapsed module" not in legend  # only what the drawing uses
    assert "legend" not in graph.capture(loss).to_dot(legend=False)
    assert render.draw(graph.capture(loss)).legend == ("input", "parameter", "op", "output", "saved")


def test_forward_only_ops_are_dashed_and_the_current_step_is_orange():
    with graph.record() as rec:
        x = tl.tensor([1.0, 2.0])
        (x * 2.0).exp()
    drawing = render.draw(rec.graph, highlight=1, show_grads=True)
    grad = render.COLORS["grad"]
    assert re.search(rf'n1 \[.*style="rounded,filled,dashed".*penwidth=3, color="{grad}"', drawing.dot)
    assert "current" in drawing.legend and f'color="{grad}" border="2"' in drawing.dot  # the legend's outline


def test_labels_use_glyphs_default_fonts_have():
    model, _, loss = tiny_program()
    loss.backward()
    dot = graph.capture(loss, params=dict(model.named_parameters())).to_dot(show_values=True, show_grads=True)
    assert not re.search(r"[⇒∇ᵀˣ‖⊙]", dot)


def test_png_of_a_graph():
    model, _, loss = tiny_program()
    png = graph.capture(loss).to_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    svg = graph.capture(loss).to_svg()
    w_pt, h_pt = (float(v) for v in re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+) ([\d.]+)"', svg).groups())
    assert abs(width - w_pt * 96 / 72) <= 2 and abs(height - h_pt * 96 / 72) <= 2  # the size the SVG shows at


def test_repeated_argument_draws_one_edge_per_argument():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    dot = graph.capture((x * x).sum()).to_dot()
    assert dot.count("n0 -> n1\n") == 2


# ---------------------------------------------------------------- module clusters and collapsing

def _clusters(dot: str) -> dict:
    """cluster label -> the DOT node names inside it (nested clusters included)."""
    out, stack = {}, []
    for line in dot.splitlines():
        if re.match(r"\s*subgraph cluster_\w+ \{", line):
            stack.append(None)
        elif stack and stack[-1] is None and (m := re.match(r'\s*label="([^"]*)"; style', line)):
            stack[-1] = m.group(1)
            out[m.group(1)] = set()
        elif line.strip() == "}" and stack:
            stack.pop()
        elif m := re.match(r"\s*(\w+) \[label=", line):
            for label in stack:
                out[label].add(m.group(1))
    return out


def _named(dot: str, name: str) -> str:
    """The DOT node whose title is `name` (a leaf's name, or an op's: "Relu", also "loss = Relu")."""
    return next(n for n, label in _labels(dot).items() if label.split("\n")[0].split(" = ")[-1] == name)


def test_module_clusters_on_an_mlp():
    model, _, loss = mlp()
    dot = graph.capture(loss, params=dict(model.named_parameters())).to_dot(cluster_modules=True)
    clusters = _clusters(dot)
    assert set(clusters) == {"Sequential", "0 (Linear)", "1 (ReLU)", "2 (Linear)"}
    first = {_named(dot, "0.weight"), _named(dot, "0.bias"), "n3"}
    assert clusters["0 (Linear)"] == first and _labels(dot)["n3"].startswith("Linear")
    assert clusters["1 (ReLU)"] == {_named(dot, "Relu")}
    assert clusters["Sequential"] == first | clusters["1 (ReLU)"] | clusters["2 (Linear)"]
    outside = {_named(dot, "LogSoftmax"), _named(dot, "NllLoss"), "n2"}  # the loss, and the input x
    assert not outside & clusters["Sequential"]


def test_module_clusters_on_a_cnn():
    model, _, loss = cnn()
    dot = graph.capture(loss, params=dict(model.named_parameters())).to_dot(cluster_modules=True)
    clusters = _clusters(dot)
    assert set(clusters) == {"CNN", "features (Sequential)", "head (Sequential)", "features.0 (Conv2d)",
                             "features.1 (ReLU)", "features.2 (MaxPool2d)", "features.3 (Conv2d)",
                             "features.4 (ReLU)", "features.5 (MaxPool2d)", "head.0 (Flatten)", "head.1 (Linear)"}
    assert len(clusters["features.3 (Conv2d)"]) == 3  # weight, bias, Conv
    assert len(clusters["features (Sequential)"]) == 3 + 1 + 1 + 3 + 1 + 1
    assert clusters["CNN"] == clusters["features (Sequential)"] | clusters["head (Sequential)"]


def test_collapse_by_name_and_by_depth():
    model, _, loss = cnn()
    g = graph.capture(loss, params=dict(model.named_parameters()))
    dot = g.to_dot(collapse=["features"])
    labels = _labels(dot)
    assert labels["m1"] == "features (Sequential)\n6 ops · 4 parameters\n→ [2, 8, 2, 2] float32"
    assert not any(label.startswith(("Conv", "features.0")) for label in labels.values())
    assert "n2 -> m1" in dot and "m1 -> n11" in dot and labels["n11"].startswith("Flatten")  # x in, output on
    assert 'label="10 of 18 nodes hidden: 1 module collapsed"' in dot
    by_depth = _labels(g.to_dot(collapse=1))
    assert [n for n in by_depth if n.startswith("m")] == ["m1", "m8"]  # features, head
    whole = _labels(g.to_dot(collapse=0))
    assert whole["m0"].startswith("CNN\n8 ops · 6 parameters")


def test_summarising_collapses_deepest_modules_first():
    model, _, loss = cnn()
    g = graph.capture(loss, params=dict(model.named_parameters()))
    view = graph.summarise(g, max_nodes=14)
    # depth 2 first, in order, while it helps: a Conv2d folds 3 nodes into 1, a ReLU saves nothing
    assert [b.call.name for b in view.boxes if b.kind == "module"] == ["features.0", "features.3"]
    assert len(view.boxes) == 14 and view.note == "6 of 18 nodes hidden: 2 modules collapsed"
    view = graph.summarise(g, max_nodes=6)  # then depth 1: features and head
    assert [b.call.name for b in view.boxes if b.kind == "module"] == ["features", "head"]
    assert len(view.boxes) == 6


def test_summarising_collapses_elementwise_chains():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    for _ in range(5):
        y = (y * 2.0).tanh()            # 11 elementwise ops in a row
    loss = (y @ tl.tensor([1.0, 1.0])).sin()  # a matmul breaks the chain; sin alone is no chain
    g = graph.capture(loss)
    assert len(g) == 15
    view = graph.summarise(g, max_nodes=4)
    assert [b.kind for b in view.boxes] == ["chain", "node", "node", "node"]
    chain = view.boxes[0]  # the leaf only the chain uses goes into it
    assert [g[i].op for i in chain.members] == [None, "Exp"] + ["Mul", "Tanh"] * 5
    assert view.note == "12 of 15 nodes hidden: 1 elementwise chain collapsed"
    assert _labels(g.to_dot(max_nodes=4))["c0"] == "Exp → … → Tanh\n11 elementwise ops · 1 input\n→ [2] float32"


def test_ten_thousand_node_chain_renders_in_seconds():
    start = time.perf_counter()
    _, loss = chain(10_000)
    g = graph.capture(loss)
    dot = g.to_dot()
    seconds = time.perf_counter() - start
    assert len(g) == 10_002 and seconds < 10.0, seconds
    assert 'label="10,001 of 10,002 nodes hidden: 1 elementwise chain collapsed"' in dot
    assert list(_labels(dot)) == ["c0", "n10001"]


def test_ten_thousand_nodes_modules_first_then_chains():
    """Module calls, then an elementwise chain summing thousands of leaves."""
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            x = self.fc(x)
            for _ in range(10):
                x = x.tanh() * 0.9
            return x

    tl.manual_seed(0)
    model = nn.Sequential(*[Block() for _ in range(200)])  # 200 * (3 + 20) = 4,600 nodes
    y = model(tl.randn(1, 2)).sum()
    for i in range(2_700):  # 2,700 leaves, 2,700 adds in a chain
        y = y + tl.tensor([float(i)], requires_grad=True)
    start = time.perf_counter()
    g = graph.capture(y)
    view = graph.summarise(g)
    dot = g.to_dot()
    seconds = time.perf_counter() - start
    assert len(g) == 10_002 and seconds < 10.0, seconds
    # Linear (depth 2), then Block (depth 1), then the Sequential: still 5,403 boxes; then the chain,
    # which leaves out the output (the last Add) and the leaf that only the output uses
    assert [(b.kind, len(b.members)) for b in view.boxes] == [
        ("module", 4_600), ("node", 1), ("node", 1), ("chain", 5_398), ("node", 1), ("node", 1)]
    assert view.note == "9,998 of 10,002 nodes hidden: 1 module collapsed, 1 elementwise chain collapsed"
    assert f'label="{view.note}"' in dot
    labels = _labels(dot)
    assert labels["m0"] == "Sequential\n4,200 ops · 400 parameters\n→ [1, 2] float32"
    assert labels["c4602"] == "Add → … → Add\n2,699 elementwise ops · 2,699 inputs\n→ [1] float32"


def test_summarising_folds_the_earliest_nodes_last():
    leaves = [tl.tensor([float(i)], requires_grad=True) for i in range(400)]
    loss = tl.cat([t.exp() for t in leaves]).sum()  # no modules, no chains: 802 nodes
    g = graph.capture(loss)
    view = graph.summarise(g)
    assert len(view.boxes) == 300 and view.boxes[0].kind == "rest"
    assert view.note == "503 of 802 nodes hidden: 503 earliest nodes folded"
    assert [g[i].op for i in view.boxes[-1].members] == ["Sum"]  # the output end stays in view


def test_max_nodes_none_never_summarises():
    _, loss = chain(400)
    assert len(graph.summarise(graph.capture(loss), max_nodes=None).boxes) == 402


# ---------------------------------------------------------------- SVG and a missing Graphviz

def test_to_svg_renders_with_dot():
    pytest.importorskip("graphviz")
    if not any(pathlib.Path(p, "dot").exists() for p in os.environ.get("PATH", "").split(os.pathsep)):
        pytest.skip("Graphviz `dot` is not installed")
    model, _, loss = mlp()
    svg = graph.capture(loss, params=dict(model.named_parameters())).to_svg(cluster_modules=True)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "0.weight" in svg


def test_to_svg_of_ten_thousand_nodes_in_seconds():
    pytest.importorskip("graphviz")
    if not any(pathlib.Path(p, "dot").exists() for p in os.environ.get("PATH", "").split(os.pathsep)):
        pytest.skip("Graphviz `dot` is not installed")
    _, loss = chain(10_000)
    start = time.perf_counter()
    svg = graph.capture(loss).to_svg()
    assert time.perf_counter() - start < 10.0 and "10,001 of 10,002 nodes hidden" in svg


def test_missing_dot_names_how_to_install_it(tmp_path, monkeypatch):
    pytest.importorskip("graphviz")
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere
    g = graph.capture(tiny_program()[2])
    with pytest.raises(graph.GraphvizNotFound) as err:
        g.to_svg()
    message = str(err.value)
    for how in ("sudo apt-get install graphviz", "brew install graphviz", "conda install -c conda-forge graphviz",
                "binder/apt.txt"):
        assert how in message
    assert isinstance(err.value, RuntimeError)
    assert err.value.dot == g.to_dot()  # the source is still there


def test_missing_graphviz_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # `import graphviz` fails
    g = graph.capture(tiny_program()[2])
    with pytest.raises(graph.GraphvizNotFound, match="pip install graphviz") as err:
        g.to_svg(show_values=True)
    assert err.value.dot == g.to_dot(show_values=True)


def test_graph_package_does_not_import_jupyter():
    code = ("import sys, tinygrad_lab.graph; bad = [m for m in ('IPython', 'ipywidgets', 'anywidget', 'traitlets') "
            "if m in sys.modules]; print(bad)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]"
