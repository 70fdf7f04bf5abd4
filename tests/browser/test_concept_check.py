"""A lesson's concept check in a real JupyterLab, opened as a student gets it from a clone: the cell that
answers the question shows nothing until the student has written a prediction and runs it; then it
shows the engine's answer, and the worked answer below stays folded until opened. Screenshots of both
moments are left in the test's folder for a person to look at."""
from __future__ import annotations

import json
from pathlib import Path

LESSON = Path(__file__).resolve().parents[2] / "notebooks" / "00_welcome.ipynb"


def _concept_check_index() -> int:
    cells = json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
    return next(i for i, c in enumerate(cells) if "concept-check" in c.get("metadata", {}).get("tags", []))


def _screenshot(page, cells, index: int, path: Path) -> None:
    """The question, the prediction cell, the answer's cell and the worked answer, in one picture."""
    first, last = cells.nth(index - 2).bounding_box(), cells.nth(index + 1).bounding_box()
    page.screenshot(path=str(path), clip={"x": first["x"], "y": first["y"], "width": first["width"],
                                          "height": last["y"] + last["height"] - first["y"]})


def test_a_concept_checks_answer_appears_only_when_the_student_runs_it(lab_server, page, tmp_path):
    index = _concept_check_index()
    page.set_viewport_size({"width": 1200, "height": 1400})
    page.goto(f"{lab_server.url}/lab/tree/{lab_server.copy_notebook(LESSON)}?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for()
    cells = page.locator(".jp-Notebook .jp-Cell")
    answer = cells.nth(index)
    worked = cells.nth(index + 1).locator(".jp-RenderedMarkdown details")
    assert "x3 = tl.tensor" in answer.locator(".jp-InputArea").inner_text()
    cells.nth(index - 2).scroll_into_view_if_needed()
    assert answer.locator(".jp-OutputArea-output").count() == 0, "the answer is shown before the student runs it"
    assert worked.locator("summary").is_visible() and not worked.get_by_text("two multiplications").is_visible()
    _screenshot(page, cells, index, tmp_path / "before.png")

    # the student runs the lesson up to and including the check's cell
    answer.click()
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Above Selected Cell", exact=True).click()
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=120_000)
    answer.click()
    page.keyboard.press("Shift+Enter")
    answer.locator(".jp-OutputArea-output", has_text="outer Mul's inputs").wait_for(timeout=60_000)
    assert "MulBackward" in answer.locator(".jp-OutputArea").inner_text()
    worked.locator("summary").click()  # the folded answer opens on request
    worked.get_by_text("two multiplications", exact=False).wait_for()
    cells.nth(index - 2).scroll_into_view_if_needed()
    _screenshot(page, cells, index, tmp_path / "after.png")
    assert page.console_errors == [], page.console_errors
