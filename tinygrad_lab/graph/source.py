"""The code that ran: the source of an op's `backward`, read when asked, with the lines that
produced each input's gradient marked.

`backward_source(fn)` reads `fn.backward` with `inspect` (the engine's files as they are now, or
a notebook cell's source for a learner's Function) and finds, from its syntax tree, which
line computes the gradient of which forward argument: the i-th element of what it returns,
and the assignments of the name returned there. A backward that delegates to a function
it closes over (the `grad` of a generated unary op) shows that function's source too.
Nothing here knows an op by name, so it follows whatever the engine's code says.
"""
from __future__ import annotations

import ast
import contextlib
import inspect
import os
import sys
import textwrap
from collections.abc import Callable
from typing import NamedTuple

from .. import seams
from .nodes import arg_name


class Source(NamedTuple):
    """A function's source, as shown beside the numbers.

    name    its qualified name ("Mul.backward")
    file    where it lives: a path inside the package ("tinygrad_lab/ops/elementwise.py"), or a file name
    start   the line number of `lines[0]` in that file
    lines   the source lines, dedented
    marks   line index (0-based in `lines`) -> the forward arguments whose gradient that line produces
    helpers functions it calls through its closure (e.g. the `grad` of a generated op), each a Source
    """

    name: str
    file: str
    start: int
    lines: tuple
    marks: dict
    helpers: tuple = ()

    def __str__(self) -> str:
        out = [f"{self.name}  ({self.file}:{self.start})"]
        width = len(str(self.start + len(self.lines)))
        for k, line in enumerate(self.lines):
            mark = self.marks.get(k)
            note = "   <- grad " + ", grad ".join(mark) if mark else ""
            out.append(f"{'>' if mark else ' '} {self.start + k:>{width}}  {line}{note}")
        for helper in self.helpers:
            out += ["", "which calls:", str(helper)]
        return "\n".join(out)


def backward_source(fn: type, backward: Callable | None = None) -> Source | None:
    """The source of Function `fn`'s backward with each argument's gradient line marked (None when
    Python cannot find the source, e.g. a function typed into an interactive prompt). `backward`:
    the function that ran as its backward, e.g. a learner's in the op's place (`tinygrad_lab.seams`);
    by default the one in force now (`seams.current`), the op's own where nobody replaced it."""
    func = backward if backward is not None else _current_backward(fn)
    if func is not None:
        func = inspect.unwrap(func)  # a learner's function, not the seam's checking wrapper around it
    src = _read(func)
    if src is None:
        return None
    name, file, start, text = src
    tree = _function(text)
    marks = _gradient_lines(tree, fn) if tree is not None else {}
    helpers = tuple(h for h in (_helper(func, tree, marks, name) for name in _closure_calls(func, tree)) if h)
    return Source(name, file, start, tuple(text.splitlines()), marks, helpers)


def function_source(func: Callable) -> Source | None:
    """The source of any function (e.g. a learner's piece that replaced a seam), nothing marked."""
    src = _read(inspect.unwrap(func))
    if src is None:
        return None
    name, file, start, text = src
    return Source(name, file, start, tuple(text.splitlines()), {})


# ---------------------------------------------------------------- the lines that ran

@contextlib.contextmanager
def lines_run(code):
    """The line numbers `code` runs inside the block (a set, filled as it runs): the stepper shows
    which lines of a backward produced the gradients, not every line that could have (and so does
    the comparison stepper, for both passes)."""
    lines: set = set()
    if code is None:
        yield lines
        return

    def in_backward(frame, event, arg):
        if event == "line":
            lines.add(frame.f_lineno)
        return in_backward

    previous = sys.gettrace()  # a debugger's or coverage's tracer comes back afterwards
    sys.settrace(lambda frame, event, arg: in_backward if frame.f_code is code else None)
    try:
        yield lines
    finally:
        sys.settrace(previous)


def only_what_ran(source: Source | None, ran: set | None) -> Source | None:
    """`source` with its gradient marks kept only on the simple statements that ran (an `if`'s
    branch not taken loses its marks); as it is when no line was recorded (`ran` empty or None: a
    backward that is not a plain function)."""
    if source is None or not ran:
        return source
    try:
        tree = ast.parse("\n".join(source.lines))
    except SyntaxError:  # a lambda's line, cut from its call
        return source
    kept = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body"):  # simple statements only
            span = range(node.lineno - 1, node.end_lineno)
            if any(source.start + k in ran for k in span):
                kept.update(span)
    return source._replace(marks={k: v for k, v in source.marks.items() if k in kept})


def _current_backward(fn: type) -> Callable | None:
    """What runs as `fn`'s backward in this thread now: a learner's replacement, or `fn.backward`."""
    try:
        seam = seams.get(f"{getattr(fn, '__name__', '')}.backward")
    except KeyError:  # a learner's own Function: no seam
        return getattr(fn, "backward", None)
    return seams.current(seam.name) if seam.owner is fn else getattr(fn, "backward", None)


def _read(func) -> tuple | None:
    try:
        lines, start = inspect.getsourcelines(func)
        path = inspect.getsourcefile(func) or inspect.getfile(func)
    except (OSError, TypeError):
        return None
    return func.__qualname__, _where(path), max(start, 1), textwrap.dedent("".join(lines)).rstrip("\n")


def _where(path: str) -> str:
    """A file of the package as "tinygrad_lab/ops/elementwise.py"; any other by its name (a notebook
    cell's as "a notebook cell")."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    full = os.path.abspath(path)
    if full.startswith(package + os.sep):
        return os.path.relpath(full, os.path.dirname(package)).replace(os.sep, "/")
    return "a notebook cell" if "ipykernel" in full else os.path.basename(full)


def _function(text: str) -> ast.AST | None:
    """The function (def or lambda) at the top of `text`."""
    try:
        tree = ast.parse(text)
    except SyntaxError:  # a lambda cut out of a longer statement
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return node
    return None


def _own_nodes(func: ast.AST):
    """The nodes of a function's body, not those of functions defined inside it."""
    stack = list(func.body) if isinstance(func.body, list) else [func.body]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def _gradient_lines(func: ast.AST, fn: type) -> dict:
    """line index -> argument names, from what each `return` hands back in position i."""
    n_args = max(1, len(_arg_names(fn)))
    assigned = _assignments(func)
    marks: dict = {}
    returns = [func.body] if isinstance(func, ast.Lambda) else \
        [r.value for r in _own_nodes(func) if isinstance(r, ast.Return) and r.value is not None]
    for value in returns:
        for positions, expr in _positions(value, n_args):
            if isinstance(expr, ast.Constant) and expr.value is None:
                continue
            labels = [_label(fn, p) for p in positions]
            for node in [expr] + (assigned.get(expr.id, []) if isinstance(expr, ast.Name) else []):
                _mark(marks, node, labels)
    return {line: tuple(names) for line, names in sorted(marks.items())}


def _mark(marks: dict, node: ast.AST, labels: list) -> None:
    """Add `labels` to every line `node` spans (0-based line indices)."""
    for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
        names = marks.setdefault(line - 1, [])
        names += [label for label in labels if label not in names]


def _label(fn: type, position: int) -> str:
    """Forward argument `position`'s name; for *tensors, the bare name ("tensors": each of them)."""
    name = arg_name(fn, position)
    return name.split("[")[0] if "[" in name else name


def _arg_names(fn: type) -> tuple:
    try:
        return tuple(inspect.signature(fn.forward).parameters)[1:]
    except (TypeError, ValueError):
        return ()


def _positions(value: ast.AST, n_args: int) -> list:
    """(argument positions, expression) for what a return hands back: tuple elements by position,
    `(None,) + rest` as position 0 then the rest, a single value as position 0."""
    if isinstance(value, ast.Tuple):
        return [((i,), e) for i, e in enumerate(value.elts)]
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and isinstance(value.left, ast.Tuple):
        head = [((i,), e) for i, e in enumerate(value.left.elts)]
        rest = tuple(range(len(head), n_args))
        return head + ([(rest, value.right)] if rest and not _only_none(value.right) else [])
    if n_args == 1 or not isinstance(value, (ast.Call, ast.Name)):
        return [((0,), value)]
    return [(tuple(range(n_args)), value)]  # a tuple built elsewhere: every argument's gradient


def _only_none(expr: ast.AST) -> bool:
    """`(None,) * k`: a run of None gradients."""
    return isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult) and any(
        isinstance(side, ast.Tuple) and all(isinstance(e, ast.Constant) and e.value is None for e in side.elts)
        for side in (expr.left, expr.right))


def _assignments(func: ast.AST) -> dict:
    """name -> the statements that assign it a value other than None."""
    out: dict = {}
    for node in _own_nodes(func):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if isinstance(value, ast.Constant) and value.value is None:
            continue
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    out.setdefault(name.id, []).append(node)
    return out


def _closure_calls(func, tree: ast.AST | None) -> list:
    """Names the function calls that it holds in its closure and that are plain functions."""
    if tree is None or func.__closure__ is None:
        return []
    free = dict(zip(func.__code__.co_freevars, (c.cell_contents for c in func.__closure__)))
    called = [n.func.id for n in _own_nodes(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    return [name for name in dict.fromkeys(called) if inspect.isfunction(free.get(name))]


def _helper(func, tree: ast.AST, marks: dict, name: str) -> Source | None:
    """The source of closure function `name`, its lines marked with the arguments of the line calling it."""
    helper = dict(zip(func.__code__.co_freevars, (c.cell_contents for c in func.__closure__)))[name]
    src = _read(helper)
    if src is None:
        return None
    qualname, file, start, text = src
    calls = [n for n in _own_nodes(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id == name]
    args = tuple(dict.fromkeys(a for c in calls for a in marks.get(c.lineno - 1, ())))
    lines = tuple(text.splitlines())
    shown = "lambda" if qualname.endswith("<lambda>") else qualname
    return Source(f"{name} = {shown}", file, start, lines, {k: args for k in range(len(lines))} if args else {})
