"""The README's code runs, and its hello-autograd example prints what the README says."""
from __future__ import annotations

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_python_examples():
    assert len(_python_blocks()) >= 2


def test_every_readme_example_runs_and_prints_what_its_comments_say():
    for block in _python_blocks():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), {})
        # a line `print(expr)   # expected` promises its output starts with `expected`
        promised = [m.group(1).strip() for m in re.finditer(r"print\(.*\)\s+#\s*(.+)", block)]
        printed = out.getvalue().splitlines()
        for line, expected in zip(printed, promised):
            head = expected.split("...")[0].strip()
            assert line.startswith(head), (line, expected)


def _anchor(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def test_every_relative_link_in_the_readme_and_docs_leads_somewhere():
    root = README.parent
    for page in [README, *sorted((root / "docs").glob("*.md"))]:
        text = page.read_text()
        anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue                                   # a web address
            path, _, anchor = target.partition("#")
            if path:
                assert (page.parent / path).exists(), f"{page.name} links to missing {path}"
            else:
                assert anchor in anchors, f"{page.name} links to missing heading #{anchor}"
