"""Student versions of the exercise notebooks, in nbgrader's conventions.

In each solution cell (metadata `nbgrader.solution: true`) the code between
`### BEGIN SOLUTION` and `### END SOLUTION` becomes nbgrader's stub
`# YOUR CODE HERE` / `raise NotImplementedError()` (markdown: `YOUR ANSWER HERE`);
a solution cell without markers is replaced whole. Outputs and execution counts
are cleared; test cells and all metadata are kept as they are.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import nbformat

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
MARKDOWN_STUB = "YOUR ANSWER HERE"


def strip_solutions(source: str, stub: str) -> str:
    """`source` with every BEGIN/END SOLUTION region (markers included) replaced by `stub`,
    indented as its BEGIN marker; raises ValueError on unpaired markers."""
    out: list[str] = []
    inside = False
    for line in source.splitlines():
        marker = line.strip()
        if marker == BEGIN:
            if inside:
                raise ValueError(f"nested {BEGIN!r}")
            inside = True
            indent = line[:len(line) - len(line.lstrip())]
            out += [indent + s for s in stub.splitlines()]
        elif marker == END:
            if not inside:
                raise ValueError(f"{END!r} without {BEGIN!r}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN!r} without {END!r}")
    return "\n".join(out)


def release_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student version of solution notebook `nb` (a new notebook; `nb` is left as it is)."""
    nb = nbformat.from_dict(nb)  # a deep copy
    for i, cell in enumerate(nb.cells):
        info = cell.get("metadata", {}).get("nbgrader", {})
        has_marker = BEGIN in cell.source or END in cell.source
        stub = CODE_STUB if cell.cell_type == "code" else MARKDOWN_STUB
        if info.get("solution"):
            cell.source = strip_solutions(cell.source, stub) if has_marker else stub
        elif has_marker:
            raise ValueError(f"cell {i} has solution markers but is not a solution cell "
                             f"(metadata nbgrader.solution is not true): its solution would be released")
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def release(source: Path, out: Path) -> list[Path]:
    """Write the student version of every notebook in `source` to `out`; returns the files written.
    Refuses an `out` that is `source` or inside it (that would overwrite or mix with the solutions)."""
    source, out = Path(source).resolve(), Path(out).resolve()
    if out == source or source in out.parents:
        raise ValueError(f"refusing to write the student versions into the source folder {source}: "
                         f"choose an --out outside it")
    notebooks = sorted(source.glob("*.ipynb"))
    if not notebooks:
        raise ValueError(f"no notebooks (*.ipynb) in {source}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks:
        student = release_notebook(nbformat.read(path, as_version=4))
        _write_atomic(student, out / path.name)
        written.append(out / path.name)
    return written


def _write_atomic(nb: nbformat.NotebookNode, path: Path) -> None:
    """Write `nb` to a temporary file beside `path`, then rename it over `path`: never a half-written file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            nbformat.write(nb, f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
