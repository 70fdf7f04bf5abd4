"""Graphviz drawings of a recorded graph: DOT source, SVG and PNG through the `dot` program.

One visual language, shared with the widgets (which read `PALETTE`, `COLORS` and `LEGEND`
from here): input tensors are blue boxes, parameters green boxes, ops grey rounded
boxes labelled with the tensor they make (shape, dtype, what they saved for backward),
ops that record no gradient dashed, the output amber; collapsed modules are 3-D boxes,
collapsed elementwise chains boxes with cut corners. Gradients are orange everywhere:
the `grad = …` lines, the outline of the backward stepper's current node and the edges
its gradients travel. Nodes are labelled with the learner's names (`u = Add`).
Edges run forward, from an input to the op that uses it. The DOT text depends only on
the graph, so the same program gives byte-identical output. Labels use only glyphs
that default fonts have (DejaVu, Liberation, Helvetica, Menlo, Consolas).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .nodes import PREVIEW, DrawnGraph, GraphNode, TensorSummary
from .summarise import Box, summarise

# kind -> (fill, border) of its boxes
PALETTE = {
    "input": ("#dbeafe", "#2563eb"),
    "parameter": ("#dcfce7", "#16a34a"),
    "op": ("#f3f4f6", "#6b7280"),
    "nograd": ("#ffffff", "#9ca3af"),
    "output": ("#fde68a", "#d97706"),
    "module": ("#ede9fe", "#7c3aed"),
    "chain": ("#f3f4f6", "#6b7280"),
    "rest": ("#e5e7eb", "#6b7280"),
}
# colours of what is not a kind of box: gradients (text, current node, edges carrying them),
# what ops saved, text that says something is unknown, and the widgets' selection outline
COLORS = {"grad": "#c2410c", "saved": "#0f766e", "muted": "#6b7280", "selected": "#c026d3", "edge": "#6b7280",
          "differs": "#dc2626"}
_SHAPES = {
    "input": 'shape=box, style="filled"',
    "parameter": 'shape=box, style="filled"',
    "op": 'shape=box, style="rounded,filled"',
    "nograd": 'shape=box, style="rounded,filled,dashed"',
    "output": 'shape=box, style="rounded,filled,bold"',
    "module": 'shape=box3d, style="filled"',
    "chain": 'shape=box, style="filled,diagonals"',
    "rest": 'shape=folder, style="filled"',
}
STYLES = {kind: f'{shape}, fillcolor="{PALETTE[kind][0]}", color="{PALETTE[kind][1]}"'
          for kind, shape in _SHAPES.items()}
# legend rows, in the order listed: kind -> what it means (the widgets show the same rows)
LEGEND = {
    "input": "input tensor",
    "parameter": "parameter",
    "op": "op (shows the tensor it makes)",
    "nograd": "op without gradient",
    "output": "output",
    "module": "collapsed module",
    "chain": "collapsed elementwise ops",
    "rest": "earlier nodes, folded",
    "saved": "saved: what backward needs",
    "grad": "grad: gradient of the output",
    "current": "current backward step",
    "differs": "first difference: your piece's gradients differ here",
}
HIGHLIGHT = f'penwidth=3, color="{COLORS["grad"]}"'
MARK = f'penwidth=4, color="{COLORS["differs"]}"'  # the comparison's first difference


class Drawing(NamedTuple):
    """A graph's DOT source and the legend rows it uses (keys of LEGEND, in LEGEND's order)."""

    dot: str
    legend: tuple


class GraphvizNotFound(RuntimeError):
    """Graphviz's `dot` program (or the `graphviz` Python package) is missing; `.dot` holds the source."""

    def __init__(self, dot: str, missing: str = "the Graphviz `dot` program"):
        self.dot = dot
        super().__init__(
            f"Cannot draw the graph: {missing} is not installed (the Python package `graphviz` only calls `dot`).\n"
            "Install Graphviz with one of:\n"
            "  sudo apt-get install graphviz         (Debian, Ubuntu)\n"
            "  brew install graphviz                 (macOS)\n"
            "  conda install -c conda-forge graphviz (conda, any OS)\n"
            "  pip install graphviz                  (the Python package, if missing)\n"
            "On Binder, list `graphviz` in binder/apt.txt. The DOT source is still available: "
            "graph.to_dot(), or this error's .dot.")


def draw(graph: DrawnGraph, *, show_values: bool = False, show_grads: bool = False, show_saved: bool = True,
         cluster_modules: bool = False, collapse: Sequence[str] | int | None = None,
         max_nodes: int | None = 300, highlight: int | None = None, mark: int | None = None,
         legend: bool = True) -> Drawing:
    """The DOT source of `graph` and the legend rows it uses (options: see `to_dot`)."""
    view = summarise(graph, collapse, max_nodes)
    labeller = _Labeller(graph, show_values, show_grads, show_saved)
    names = [_box_name(b) for b in view.boxes]
    current = view.box_of[highlight] if highlight is not None else None
    marked = view.box_of[mark] if mark is not None else None
    lines, used, outputs = [], set(), graph.output_ids()
    for i, box in enumerate(view.boxes):
        kind = _style_kind(graph, box, outputs)
        used.add(kind)
        extra = f", {MARK}" if i == marked else f", {HIGHLIGHT}" if i == current else ""
        lines.append((box.cluster if cluster_modules else None,
                      f'{names[i]} [label=<{labeller.label(box)}>, {STYLES[kind]}{extra}]'))
    out = ["digraph tinygrad_lab {",
           '  graph [rankdir=TB, fontname="Helvetica", fontsize=10, nodesep=0.25, ranksep=0.3]',
           '  node [fontname="Helvetica", fontsize=10, margin="0.08,0.04"]',
           f'  edge [color="{COLORS["edge"]}", arrowsize=0.6]']
    out += _clustered(graph, lines)
    for frm, to, nr, _ in view.edges:
        out.append(f"  {names[frm]} -> {names[to]}" + (f' [label="{nr}"]' if nr is not None else ""))
    used |= labeller.shown
    if current is not None:
        used.add("current")
    if marked is not None:
        used.add("differs")
    rows = tuple(k for k in LEGEND if k in used)
    if legend and rows:
        out.append(_legend(rows))
    if view.note:
        out.append(f'  label="{_esc(view.note)}"; labelloc=b; fontsize=10')
    out.append("}")
    return Drawing("\n".join(out) + "\n", rows)


def to_dot(graph: DrawnGraph, **options) -> str:
    """Graphviz source for `graph`.

    show_values / show_grads  add each node's value / gradient (all values up to 8 elements,
                              else the first few and the range)
    show_saved                list what each op saved for backward, with its size
    cluster_modules           draw each module call as a box around its nodes
    collapse                  module names (as `named_modules()` spells them) or a depth to fold into one box
    max_nodes                 above this many boxes, summarise (see `summarise`); None: never
    highlight                 a node id to mark, e.g. the backward stepper's current node
    mark                      a node id to mark in red, dashed: the first node where a learner's piece differs
    legend                    draw the legend (only the rows the drawing uses)
    """
    return draw(graph, **options).dot


def to_svg(graph: DrawnGraph, **options) -> str:
    """The drawing as SVG text, rendered by Graphviz `dot` (options: see `to_dot`)."""
    return dot_to(to_dot(graph, **options), "svg").decode("utf-8")


def to_png(graph: DrawnGraph, dpi: int = 96, **options) -> bytes:
    """The drawing as PNG bytes, rendered by Graphviz `dot` at `dpi` (96: the size the SVG has in a browser)."""
    return dot_to(to_dot(graph, **options), "png", dpi)


def dot_to(dot: str, fmt: str, dpi: int | None = None) -> bytes:
    """`dot` rendered to `fmt` ("svg", "png") by Graphviz, at `dpi` (a graph attribute) when given."""
    try:
        import graphviz
    except ImportError:
        raise GraphvizNotFound(dot, "the Python package `graphviz`") from None
    if dpi is not None:
        head, _, rest = dot.partition("\n")
        dot = f"{head}\n  dpi={dpi}\n{rest}"
    try:
        return graphviz.Source(dot, engine="dot").pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise GraphvizNotFound(dot) from None


# ---------------------------------------------------------------- boxes

def _box_name(box: Box) -> str:
    if box.kind == "node":
        return f"n{box.members[0]}"
    if box.kind == "module":
        return f"m{box.call.key}"
    return f"c{box.members[0]}" if box.kind == "chain" else "rest"


def _style_kind(graph: DrawnGraph, box: Box, outputs: set) -> str:
    if box.kind != "node":
        return box.kind
    n = graph.nodes[box.members[0]]
    if n.id in outputs:
        return "output"
    if n.kind == "op" and not n.requires_grad:
        return "nograd"
    return n.kind


class _Labeller:
    """The HTML-like label of each box (Graphviz's `label=<...>`): a title line, the tensor it makes,
    then saved tensors (teal), the value and the gradient (orange). `shown` collects the legend rows
    its text uses ("saved", "grad")."""

    def __init__(self, graph: DrawnGraph, values: bool, grads: bool, saved: bool):
        self.nodes, self.values, self.grads, self.saved = graph.nodes, values, grads, saved
        self.shown: set = set()

    def label(self, box: Box) -> str:
        nodes = [self.nodes[i] for i in box.members]
        if box.kind == "node":
            return _br(self._node(nodes[0]))
        if box.kind == "rest":
            return _html(f"{len(nodes):,} earlier nodes")
        ops = [n for n in nodes if n.kind == "op"]
        last = ops[-1] if ops else nodes[-1]
        if box.kind == "module":
            title, what = box.call.label, "op"
        else:
            names = [n.op for n in ops]
            title, what = " → ".join(names if len(names) <= 4 else [names[0], "…", names[-1]]), "elementwise op"
        kinds = [n.kind for n in nodes]
        counts = [f"{k:,} {word}{'s' * (k != 1)}" for k, word in
                  ((len(ops), what), (kinds.count("parameter"), "parameter"), (kinds.count("input"), "input")) if k]
        return _br([_html(title), _html(" · ".join(counts)), _html("→ " + _tensor(last))])

    def _node(self, n: GraphNode) -> list:
        lines = [_title(n), _html(_tensor(n))]
        if self.saved and n.kind == "op" and n.saved != ():
            self.shown.add("saved")
            text = "saved: freed" if n.saved is None else \
                f"saved: {', '.join(s.name for s in n.saved)} · {_bytes(sum(s.nbytes for s in n.saved))}"
            lines.append(_font(COLORS["saved"], text))
        if self.values:
            lines += [_html(t) for t in summary_lines(n.value)] if n.value is not None else \
                [_font(COLORS["muted"], "value not kept")]
        grad = n.grad if self.grads else None
        if grad is not None:
            self.shown.add("grad")
            lines += [_font(COLORS["grad"], "grad " + t) for t in summary_lines(grad)]
        return lines


def _title(n: GraphNode) -> str:
    """"u = Add" for an op whose output the learner holds as u, "Add" otherwise; a leaf's name, in bold.
    (One text run per line: a browser's font then sets it as Graphviz measured it.)"""
    if n.kind == "op":
        return _html(f"{n.name} = {n.op}" if n.name else n.op)
    return f"<b>{_html(n.name)}</b>" if n.name else _html(n.kind)


def _tensor(n: GraphNode) -> str:
    shapes = " | ".join(_shape(s) for s in n.output_shapes)
    return f"{shapes} {n.dtype}" if n.dtype else shapes


def _shape(shape: tuple) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.4g}"


def summary_lines(s: TensorSummary) -> list:
    """A tensor summary as label lines: "= 0.5" for one number, "= [1, 2, 3]" for up to PREVIEW,
    else the first values and the range."""
    if s.numel == 0:
        return ["= []"]
    if not s.shape:
        return [f"= {_num(s.preview[0])}"]
    if s.numel <= PREVIEW:
        return ["= [" + ", ".join(_num(v) for v in s.preview) + "]"]
    return ["= [" + ", ".join(_num(v) for v in s.preview[:3]) + ", …]", f"min {_num(s.min)} · max {_num(s.max)}"]


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""


def _esc(text: str) -> str:
    """Text inside a quoted DOT string."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _html(text: str) -> str:
    """Text inside a Graphviz HTML-like label."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _font(color: str, text: str) -> str:
    return f'<font color="{color}">{_html(text)}</font>'


def _br(lines: list) -> str:
    return "<br/>".join(lines)


# ---------------------------------------------------------------- clusters and legend

def _clustered(graph: DrawnGraph, lines: list) -> list:
    """Node lines, nested in `subgraph cluster_*` blocks by module call when a line has a cluster."""
    calls = graph.modules
    inside: dict = {}
    for cluster, line in lines:
        inside.setdefault(cluster.key if cluster is not None else None, []).append(line)
    children: dict = {}
    for c in calls:
        children.setdefault(c.parent, []).append(c.key)
    shown = set()
    for key in sorted(k for k in inside if k is not None):  # a cluster is drawn when it or a child has nodes
        while key is not None and key not in shown:
            shown.add(key)
            key = calls[key].parent
    out = []

    def emit(key, indent: str) -> None:
        if key is not None:
            out.append(f'{indent}subgraph cluster_m{key} {{')
            out.append(f'{indent}  label="{_esc(calls[key].label)}"; style="rounded,dashed"; color="{PALETTE["module"][1]}"; '
                       f'fontcolor="#5b21b6"; fontsize=10')
            indent += "  "
        out.extend(indent + line for line in inside.get(key, ()))
        for child in children.get(key, ()):
            if child in shown:
                emit(child, indent)
        if key is not None:
            out.append(indent[:-2] + "}")

    emit(None, "  ")
    return out


def _legend(rows: tuple) -> str:
    """A small table: a swatch (a box's colours; the current step's orange outline) or a coloured
    word, and what it means."""
    cells = []
    for kind in rows:
        text = _html(LEGEND[kind])
        if kind in PALETTE:
            fill, border = PALETTE[kind]
            swatch = f'<td bgcolor="{fill}" color="{border}" border="1" width="14"> </td>'
        elif kind in ("current", "differs"):
            swatch = f'<td bgcolor="#ffffff" color="{COLORS["grad" if kind == "current" else kind]}" border="2" width="14"> </td>'
        else:  # a word in its colour, as the labels write it: "saved", "grad"
            word, _, rest = text.partition(":")
            swatch, text = "<td></td>", f'<font color="{COLORS[kind]}">{word}</font>:{rest}'
        cells.append(f'<tr>{swatch}<td align="left">{text}</td></tr>')
    return (f'  legend [shape=plaintext, fontsize=8, fontcolor="{COLORS["muted"]}", label=<<table border="0" '
            f'cellborder="0" cellspacing="1" cellpadding="1">{"".join(cells)}</table>>]')
