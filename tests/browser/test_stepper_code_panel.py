"""The stepper's code panel in a real JupyterLab: at a matmul's step it marks the gradient lines of the
branch that ran, not the other ways Matmul.backward can compute a gradient (1-d operands, batches).
A screenshot is left in the test's folder for a person to look at."""
from __future__ import annotations

from tinygrad_lab import graph

from .test_widgets_in_jupyterlab import _run_all

PROGRAM = """\
import tinygrad_lab as tl
from tinygrad_lab import widgets

tl.manual_seed(0)
x = tl.randn(4, 3)
w = tl.randn(3, 2, requires_grad=True)
loss = (x @ w).tanh().sum()
"""


def test_the_code_panel_marks_only_the_lines_that_ran(lab_server, page, tmp_path):
    scope: dict = {}
    exec(PROGRAM, scope)
    model = graph.BackwardStepper(scope["loss"])
    steps = list(iter(model.step, None))
    k, step = next((i + 1, s) for i, s in enumerate(steps) if s.op == "Matmul")
    ran, every = step.source(), graph.backward_source(step.raw.node.fn)
    assert 0 < len(ran.marks) < len(every.marks)  # the check below can tell the two apart

    _run_all(page, lab_server, "code_panel.ipynb", [PROGRAM + "stepper = widgets.BackwardStepper(loss)\nstepper",
                                                     "print('all cells ran')"])
    widget = page.locator(".jp-Notebook .jp-CodeCell").nth(0)
    widget.locator(".tl-graph svg g.node").first.wait_for(state="attached")
    for n in range(1, k + 1):
        widget.get_by_role("button", name="Step", exact=True).click()
        widget.locator(".tl-explanation").get_by_text(f"step {n} of {len(steps)}").wait_for()
    code = widget.locator(".tl-code")
    code.get_by_text("Matmul.backward").first.wait_for()
    assert code.locator(".tl-code-mark").count() == len(ran.marks)
    page.set_viewport_size({"width": 1400, "height": 1800})
    code.scroll_into_view_if_needed()
    widget.screenshot(path=str(tmp_path / "stepper_code_panel.png"))
    assert page.console_errors == [], page.console_errors
