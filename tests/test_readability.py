"""The engine is read by students (DESIGN.md): no function in autograd/ or ops/ over 40 lines of
code or of cyclomatic complexity over 15, as radon counts them (code lines: radon's SLOC, which
leaves out blank lines, comments and docstrings)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

radon_complexity = pytest.importorskip("radon.complexity", exc_type=ImportError)
radon_raw = pytest.importorskip("radon.raw", exc_type=ImportError)

PACKAGE = Path(__file__).resolve().parents[1] / "tinygrad_lab"
MAX_LINES, MAX_COMPLEXITY = 40, 15


def functions(path: Path, root: Path):
    """(qualified name, code lines, complexity) of every function and method in a file."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    # radon's endline is where the last statement starts: a function ending in a call over several lines
    # would be cut inside it. Python's own syntax tree knows where each function ends.
    ends = {n.lineno: n.end_lineno for n in ast.walk(ast.parse(source))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    seen = set()
    for block in radon_complexity.cc_visit(source):
        for f in [block, *getattr(block, "methods", ())]:
            if hasattr(f, "methods") or (f.lineno, f.fullname) in seen:  # a class (its methods count), or met already
                continue
            seen.add((f.lineno, f.fullname))
            body = textwrap.dedent("\n".join(lines[f.lineno - 1:ends.get(f.lineno, f.endline)]))
            yield f"{path.relative_to(root)}:{f.lineno} {f.fullname}", radon_raw.analyze(body).sloc, f.complexity


def too_long_or_complex(folder: Path) -> list:
    return [f"{name}: {n} lines, complexity {cc}" for path in sorted(folder.rglob("*.py"))
            for name, n, cc in functions(path, folder) if n > MAX_LINES or cc > MAX_COMPLEXITY]


@pytest.mark.parametrize("folder", ["autograd", "ops"])
def test_the_engines_functions_are_short_and_simple(folder):
    assert too_long_or_complex(PACKAGE / folder) == []


def test_the_check_finds_a_long_function_and_a_complex_one(tmp_path):
    long_body = "\n".join(f"    x{i} = {i}" for i in range(41))
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(15))
    (tmp_path / "m.py").write_text(f"def long():\n{long_body}\n\n\nclass C:\n    def branchy(self, x):\n"
                                   + textwrap.indent(branches, "    ") + "\n        return -1\n"
                                   f"\n\ndef fine():\n    '''doc'''\n    return 1\n")
    found = too_long_or_complex(tmp_path)
    assert len(found) == 2 and "long: 42 lines" in found[0] and "C.branchy" in found[1] and "complexity 16" in found[1]
