"""The widgets in a real JupyterLab, in a real Chromium: a notebook is opened, all its
cells run, and what the student would see and click is checked against the engine.

Expected values come from running the same program here, through tinygrad_lab.graph
(an independent walk of the same backward pass), not from constants. Geometry (a node
inside its frame, the page scrolled) is measured in the browser.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tinygrad_lab import graph

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

PROGRAM = """\
import tinygrad_lab as tl
x = tl.tensor([1.0, 2.0], requires_grad=True)
w = tl.tensor([0.5, -1.0], requires_grad=True)
y = ((x * w).relu() + x.exp()).sum()
"""

CELLS = [
    PROGRAM + "from tinygrad_lab import widgets\nview = widgets.GraphView(y, params={'x': x, 'w': w})\nview",
    "stepper = widgets.BackwardStepper(y)\nstepper",
    "timing = widgets.TimingPlot('lsq', sizes=[16, 32], devices=['cpu'], threads=[1])\ntiming",
    "print('all cells ran')",
]


def _expected():
    scope: dict = {}
    exec(PROGRAM, scope)
    g = graph.capture(scope["y"], params={"x": scope["x"], "w": scope["w"]})
    stepper = graph.BackwardStepper(scope["y"])
    order = []
    while not stepper.done:
        order.append(stepper.step().node.id)
    return g, order


def _run_all(page, lab_server, name: str, cells: list[str] = CELLS) -> None:
    page.goto(f"{lab_server.url}/lab/tree/{lab_server.write_notebook(name, cells)}?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for()  # the kernel is up
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()
    page.locator(".jp-OutputArea-output", has_text="all cells ran").wait_for(timeout=120_000)


def _node_titles(scope) -> list[str]:
    return [t for t in scope.locator("g.node > title").all_text_contents() if re.fullmatch(r"n\d+", t)]


def test_graph_stepper_and_timing_widgets_work_in_jupyterlab(lab_server, page):
    g, order = _expected()
    _run_all(page, lab_server, "widgets.ipynb")
    cells = page.locator(".jp-Notebook .jp-CodeCell")

    # the graph: every node drawn
    view = cells.nth(0).locator(".tl-graph")
    view.locator("svg g.node").first.wait_for(state="attached")
    assert sorted(_node_titles(view)) == sorted(f"n{n.id}" for n in g)

    # clicking a node shows its details, computed in the kernel
    mul = next(n for n in g if n.op == "Mul")
    view.locator("g.node", has=page.locator("title", has_text=re.compile(rf"^n{mul.id}$"))).click()
    details = view.locator(".tl-graph-details")
    details.get_by_text("Mul", exact=True).wait_for()
    shape_row = details.locator("tr", has=page.locator("th", has_text=re.compile("^shape$")))
    assert shape_row.locator("td").inner_text() == str(list(mul.shape))

    # a toolbar toggle redraws in the kernel: values appear in the labels (exp saved its output)
    exp_values = "= [" + ", ".join(f"{v:.4g}" for v in next(n for n in g if n.op == "Exp").value.preview) + "]"
    assert view.locator("svg text", has_text=exp_values).count() == 0
    view.locator("input[data-trait='show_values']").check()
    view.locator("svg text", has_text=exp_values).wait_for(state="attached")

    # the stepper: Step n times highlights the node the stepper model predicts
    stepper = cells.nth(1)
    stepper.locator(".tl-graph svg g.node").first.wait_for(state="attached")
    step_button = stepper.get_by_role("button", name="Step", exact=True)
    for n, node_id in enumerate(order, start=1):
        step_button.click()
        highlighted = stepper.locator(".tl-graph g.node.tl-hl > title")
        highlighted.get_by_text(re.compile(rf"^n{node_id}$")).wait_for(state="attached")
        assert highlighted.all_text_contents() == [f"n{node_id}"], f"after {n} steps"
        stepper.locator(".tl-explanation").get_by_text(f"step {n} of {len(order)}").wait_for()

    # the timing plot: a PNG was drawn
    image = cells.nth(2).locator("img.widget-image")
    image.wait_for()
    assert page.evaluate("(img) => img.naturalWidth", image.element_handle()) > 100

    assert page.console_errors == [], page.console_errors


# ---------------------------------------------------------------- fit, follow, names, wheel

MLP = """\
import tinygrad_lab as tl
from tinygrad_lab import graph, nn, widgets
tl.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
x = tl.randn(5, 3)
loss = ((model(x) - 1.0) ** 2).mean()
"""
CHAIN = """\
w = tl.tensor([0.5, -0.25], requires_grad=True)
h = w
for _ in range(9):
    h = (h * 1.5).tanh()
total = h.sum()
"""
GEOMETRY = """(root) => {
  const vp = root.querySelector('.tl-graph-viewport');
  const r = vp.getBoundingClientRect();
  const frame = {left: r.left, top: r.top, right: r.left + vp.clientWidth, bottom: r.top + vp.clientHeight};
  const nodes = [];
  root.querySelectorAll('g.node').forEach((g) => {
    const t = g.querySelector(':scope > title').textContent;
    if (!/^n\\d+$/.test(t)) return;
    const b = g.getBoundingClientRect();
    const lines = Array.from(g.querySelectorAll('text')).map((x) => x.textContent);
    nodes.push({title: t, current: g.classList.contains('tl-hl'), first: lines[0],
                inside: b.left >= frame.left - 1 && b.right <= frame.right + 1 && b.top >= frame.top - 1
                        && b.bottom <= frame.bottom + 1});
  });
  return {nodes, scale: parseFloat(root.dataset.scale), height: vp.clientHeight};
}"""
# the nearest scrolling ancestor of an element: JupyterLab's notebook panel
SCROLL_TOP = """(e) => { let p = e.parentElement;
  while (p && !(p.scrollHeight > p.clientHeight && /(auto|scroll)/.test(getComputedStyle(p).overflowY))) p = p.parentElement;
  return p.scrollTop; }"""


def _expected_nodes(program: str, name: str, params: bool = False) -> list:
    scope: dict = {}
    exec(program, scope)
    g = graph.capture(scope[name], params=dict(scope["model"].named_parameters()) if params else None,
                      namespace=scope)
    return list(g)


def test_graphs_fit_follow_carry_names_and_leave_the_wheel_to_the_page(lab_server, page):
    nodes = _expected_nodes(MLP, "loss")
    assert len(nodes) == 15
    chain = _expected_nodes(MLP + CHAIN, "total")
    cells = [MLP + "view = widgets.GraphView(loss)\nview",
             CHAIN + "stepper = widgets.BackwardStepper(total)\nstepper",
             "print('all cells ran')"]
    _run_all(page, lab_server, "fit.ipynb", cells)
    out = page.locator(".jp-Notebook .jp-CodeCell")

    # every node of the 15-node graph inside its frame, as first drawn
    view = out.nth(0).locator(".tl-graph")
    view.locator("svg g.node").first.wait_for(state="attached")
    first = view.evaluate(GEOMETRY)
    assert len(first["nodes"]) == 15 and all(n["inside"] for n in first["nodes"]), first
    assert first["scale"] >= 0.6  # and still legible

    # the learner's names on the nodes: the variables x and loss, parameters by module path, as here
    drawn = {n["title"]: n["first"] for n in first["nodes"]}
    assert {drawn[f"n{n.id}"] for n in nodes if n.kind != "op"} == {"x", "0.weight", "0.bias", "2.weight",
                                                                    "2.bias", "4.weight", "4.bias"}
    assert drawn[f"n{nodes[-1].id}"] == "loss = Mean"

    # the wheel scrolls the page, not the graph; Ctrl + wheel zooms the graph, not the page
    viewport = view.locator(".tl-graph-viewport")
    viewport.scroll_into_view_if_needed()
    box = viewport.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40)
    before = viewport.evaluate(SCROLL_TOP)
    page.mouse.wheel(0, 200)
    page.wait_for_timeout(500)
    assert viewport.evaluate(SCROLL_TOP) > before and view.evaluate(GEOMETRY)["scale"] == first["scale"]
    viewport.scroll_into_view_if_needed()
    box = viewport.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40)
    before = viewport.evaluate(SCROLL_TOP)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -200)
    page.keyboard.up("Control")
    page.wait_for_timeout(500)
    assert view.evaluate(GEOMETRY)["scale"] > first["scale"] and viewport.evaluate(SCROLL_TOP) == before

    # the stepper keeps its current node in view at every step of a graph taller than its frame
    stepper = out.nth(1)
    sview = stepper.locator(".tl-graph")
    sview.locator("svg g.node").first.wait_for(state="attached")
    shape = sview.evaluate(GEOMETRY)
    assert not all(n["inside"] for n in shape["nodes"])  # too tall to show whole: the frame scrolls
    step_button = stepper.get_by_role("button", name="Step", exact=True)
    total = len([n for n in chain if n.kind == "op"]) + 1  # each op, then the leaf w
    for k in range(1, total + 1):
        step_button.click()
        stepper.locator(".tl-explanation").get_by_text(f"step {k} of {total}").wait_for()
        page.wait_for_function("(root) => root.querySelector('g.node.tl-hl') !== null", arg=sview.element_handle())
        page.wait_for_timeout(150)
        current = [n for n in sview.evaluate(GEOMETRY)["nodes"] if n["current"]]
        assert len(current) == 1 and current[0]["inside"], (k, current)
    assert page.console_errors == [], page.console_errors


# ---------------------------------------------------------------- committed lessons, before they run

@pytest.mark.parametrize("lesson", ["00_welcome", "02_autograd_and_the_graph", "03_stepping_through_backward",
                                    "07_training_networks"])
def test_a_committed_lesson_shows_pictures_before_it_runs(lab_server, page, lesson):
    """A fresh clone's notebook is untrusted: JupyterLab hides its SVG and HTML outputs and cannot show
    widgets whose state was stripped. Each widget output must still show a picture (its PNG)."""
    path = NOTEBOOKS / f"{lesson}.ipynb"
    nb = json.loads(path.read_text())
    widget_cells = [i for i, c in enumerate(nb["cells"]) if any(
        "application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in c.get("outputs", []))]
    assert widget_cells, lesson
    page.goto(f"{lab_server.url}/lab/tree/{lab_server.copy_notebook(path)}?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    cells = page.locator(".jp-Notebook .jp-Cell")
    for i in widget_cells:
        cell = cells.nth(i)
        cell.scroll_into_view_if_needed()
        images = cell.locator(".jp-OutputArea-output img")
        images.first.wait_for(timeout=15_000)
        for k in range(images.count()):
            width = page.evaluate("(img) => img.complete ? img.naturalWidth : 0", images.nth(k).element_handle())
            assert width > 100, (lesson, i, k)
        text = " ".join(cell.locator(".jp-OutputArea-output").all_inner_texts())
        assert not re.search(r"<(GraphView|BackwardStepper|LiveLoss|TimingPlot)", text), (lesson, i, text)
