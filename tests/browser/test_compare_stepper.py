"""CompareStepper in a real JupyterLab: a deliberately wrong learner backward (matmul's, whose gradient
for b is the transpose of the right one: square weights, so the shapes cannot tell) beside the engine's. The widget must name, mark in red
and show the numbers of the node the comparison finds (graph.compare, run here on the same program),
and stay usable (Step/Back). A screenshot is left in the test's folder for a person to look at."""
from __future__ import annotations

import re

from tinygrad_lab.graph.compare import compare

from .test_widgets_in_jupyterlab import _run_all

PROGRAM = """\
import tinygrad_lab as tl
from tinygrad_lab import widgets
from tinygrad_lab.ops.linalg import Matmul

tl.manual_seed(0)
x = tl.randn(4, 3)
w1 = tl.randn(3, 3, requires_grad=True)
w2 = tl.randn(3, 3, requires_grad=True)
loss = ((x @ w1).tanh() @ w2).pow(2).mean()

def my_matmul_backward(ctx, grad_output):          # a learner's mistake: the product's order for b
    a, b = ctx.saved_tensors
    return grad_output @ b.T, grad_output.T @ a
"""


def test_compare_stepper_names_marks_and_shows_the_first_wrong_node(lab_server, page, tmp_path):
    scope: dict = {}
    exec(PROGRAM, scope)
    want = compare(scope["loss"], "Matmul.backward", scope["my_matmul_backward"],
                   params={"w1": scope["w1"], "w2": scope["w2"]})
    # the first matmul backward runs (the one with w2) already sends a wrong gradient to w2
    assert want.first.graph_node.op == "Matmul" and want.first.what == "sent" and want.first.argument == "b"
    assert want.first.graph_node.inputs[1][0] == next(n.id for n in want.graph if n.name == "w2")
    first_id = want.first.graph_node.id

    _run_all(page, lab_server, "compare.ipynb", [
        PROGRAM + "cmp = widgets.CompareStepper(loss, 'Matmul.backward', my_matmul_backward, "
                  "params={'w1': w1, 'w2': w2})\ncmp",
        "print('all cells ran')"])
    widget = page.locator(".jp-Notebook .jp-CodeCell").nth(0)
    widget.locator(".tl-graph svg g.node").first.wait_for(state="attached")

    verdict = widget.locator(".tl-verdict")
    verdict.get_by_text("the first difference").wait_for()
    assert str(want.first) in verdict.inner_text().replace("\n", " ") or f"node {first_id}" in verdict.inner_text()
    # marked red on the graph and the current node: the widget opens at the first difference
    current = widget.locator(".tl-graph g.node.tl-hl > title")
    current.get_by_text(re.compile(rf"^n{first_id}$")).wait_for(state="attached")
    numbers = widget.locator(".tl-numbers")
    numbers.get_by_text(f"step {want.first_index + 1} of {len(want.nodes)}").wait_for()
    assert numbers.locator("tr[data-differs='true']").count() >= 1
    widget.locator(".tl-code").get_by_text("your code that ran").wait_for()
    page.set_viewport_size({"width": 1400, "height": 2000})  # the whole widget on screen, numbers and code
    numbers.scroll_into_view_if_needed()
    widget.screenshot(path=str(tmp_path / "compare_stepper.png"))

    # Back leaves the first difference; First difference comes back to it
    widget.get_by_role("button", name="Back", exact=True).click()
    numbers.get_by_text(f"step {want.first_index} of {len(want.nodes)}").wait_for()
    widget.get_by_role("button", name="First difference", exact=True).click()
    current.get_by_text(re.compile(rf"^n{first_id}$")).wait_for(state="attached")
    assert page.console_errors == [], page.console_errors
