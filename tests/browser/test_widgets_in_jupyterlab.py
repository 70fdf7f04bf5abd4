"""The widgets in a real JupyterLab, in a real Chromium: a notebook is opened, all its
cells run, and what the student would see and click is checked against the engine.

Expected values come from running the same program here, through tinygrad_lab.graph
(an independent walk of the same backward pass), not from constants.
"""
from __future__ import annotations

import re

from tinygrad_lab import graph

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


def _run_all(page, lab_server, name: str) -> None:
    page.goto(f"{lab_server.url}/lab/tree/{lab_server.write_notebook(name, CELLS)}")
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
