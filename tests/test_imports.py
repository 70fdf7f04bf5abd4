"""The package has no import cycles: its modules form layers (DESIGN.md: "nothing imports upward,
no import circles"). Found statically, from every import statement in every module, including
imports inside functions (a deferred import is still a dependency)."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tinygrad_lab"


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, whether it is a package's __init__)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def imports(name: str, path: Path, is_package: bool, known: dict) -> set[str]:
    """The package's modules that module `name` imports, anywhere in its code. `from pkg import x`
    depends on pkg.x when x is a module, else on pkg (its __init__)."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[:len(here) - node.level + 1] + [node.module] if node.module else
                            here[:len(here) - node.level + 1]) if node.level else node.module
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.add(sub if sub in known else base)
    return {m for m in found if m in known and m != name}


def cycles(root: Path) -> list[list[str]]:
    """The import cycles among root's modules: strongly connected components of more than one
    module (Tarjan's algorithm, iterative), each sorted, the list sorted."""
    known = modules(root)
    graph = {m: sorted(imports(m, p, pkg, known)) for m, (p, pkg) in known.items()}
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def test_the_package_has_no_import_cycles():
    assert cycles(PACKAGE) == []


def test_cycles_through_imports_inside_functions_are_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n    return g\n")
    (pkg / "c.py").write_text("import pkg.a\nfrom . import d\n")
    (pkg / "d.py").write_text("X = 1\n")
    assert cycles(pkg) == [["pkg.a", "pkg.c", "pkg.sub.b"]]  # a -> sub.b -> (inside f) c -> a
    (pkg / "sub" / "b.py").write_text("def f():\n    return 1\n")
    assert cycles(pkg) == []
