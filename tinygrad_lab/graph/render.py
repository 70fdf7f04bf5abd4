"""Graphviz drawings of a recorded graph: DOT source, and SVG through the `dot` program.

Visual grammar (the legend in each drawing lists the kinds it uses):
input tensors are blue boxes, parameters green boxes, ops grey rounded boxes
labelled with the tensor they make (shape, dtype, and what they saved for
backward), ops that record no gradient dashed, the output amber; collapsed
modules are 3-D boxes, collapsed elementwise chains boxes with cut corners.
Edges run forward, from an input to the op that uses it. The DOT text depends
only on the graph, so the same program gives byte-identical output.
"""
from __future__ import annotations

from collections.abc import Sequence

from .nodes import PREVIEW, DrawnGraph, GraphNode, TensorSummary
from .summarise import Box, summarise

STYLES = {
    "input": 'shape=box, style="filled", fillcolor="#dbeafe", color="#2563eb"',
    "parameter": 'shape=box, style="filled", fillcolor="#dcfce7", color="#16a34a"',
    "op": 'shape=box, style="rounded,filled", fillcolor="#f3f4f6", color="#6b7280"',
    "nograd": 'shape=box, style="rounded,filled,dashed", fillcolor="#ffffff", color="#9ca3af"',
    "output": 'shape=box, style="rounded,filled,bold", fillcolor="#fde68a", color="#d97706"',
    "module": 'shape=box3d, style="filled", fillcolor="#ede9fe", color="#7c3aed"',
    "chain": 'shape=box, style="filled,diagonals", fillcolor="#f3f4f6", color="#6b7280"',
    "rest": 'shape=folder, style="filled", fillcolor="#e5e7eb", color="#6b7280"',
}
# (fill colour, text) of each legend row, in the order listed
LEGEND = {
    "input": ("#dbeafe", "input tensor"),
    "parameter": ("#dcfce7", "parameter"),
    "op": ("#f3f4f6", "op, labelled with the tensor it makes"),
    "nograd": ("#ffffff", "op that records no gradient (dashed)"),
    "output": ("#fde68a", "output"),
    "module": ("#ede9fe", "collapsed module"),
    "chain": ("#f3f4f6", "collapsed elementwise ops"),
    "rest": ("#e5e7eb", "earlier nodes, folded"),
    "saved": ("#ffffff", "saved: what an op keeps for backward"),
    "current": ("#fecaca", "current backward step (red)"),
}
HIGHLIGHT = 'penwidth=3, color="#dc2626"'


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


def to_dot(graph: DrawnGraph, *, show_values: bool = False, show_grads: bool = False, show_saved: bool = True,
           cluster_modules: bool = False, collapse: Sequence[str] | int | None = None,
           max_nodes: int | None = 300, highlight: int | None = None, legend: bool = True) -> str:
    """Graphviz source for `graph`.

    show_values / show_grads  add value / gradient summaries (all values for tensors of <= 8 elements)
    show_saved                list what each op saved for backward, with its size
    cluster_modules           draw each module call as a box around its nodes
    collapse                  module names (as `named_modules()` spells them) or a depth to fold into one box
    max_nodes                 above this many boxes, summarise (see `summarise`); None: never
    highlight                 a node id to mark, e.g. the backward stepper's current node
    """
    view = summarise(graph, collapse, max_nodes)
    labeller = _Labeller(graph, show_values, show_grads, show_saved)
    names = [_box_name(b) for b in view.boxes]
    current = view.box_of[highlight] if highlight is not None else None
    lines, used, outputs = [], set(), graph.output_ids()
    for i, box in enumerate(view.boxes):
        kind = _style_kind(graph, box, outputs)
        used.add(kind)
        extra = f", {HIGHLIGHT}" if i == current else ""
        lines.append((box.cluster if cluster_modules else None,
                      f'{names[i]} [label="{_esc(labeller.label(box))}", {STYLES[kind]}{extra}]'))
    out = ["digraph tinygrad_lab {",
           '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, nodesep=0.3, ranksep=0.35]',
           '  node [fontname="Helvetica", fontsize=10, margin="0.1,0.05"]',
           '  edge [color="#6b7280", arrowsize=0.6]']
    out += _clustered(graph, lines)
    for frm, to, nr, _ in view.edges:
        out.append(f"  {names[frm]} -> {names[to]}" + (f' [label="{nr}"]' if nr is not None else ""))
    if legend:
        if labeller.saved_shown:
            used.add("saved")
        if current is not None:
            used.add("current")
        out.append(_legend(used))
    if view.note:
        out.append(f'  label="{_esc(view.note)}"; labelloc=b; fontsize=10')
    out.append("}")
    return "\n".join(out) + "\n"


def to_svg(graph: DrawnGraph, **options) -> str:
    """The drawing as SVG text, rendered by Graphviz `dot` (options: see `to_dot`)."""
    dot = to_dot(graph, **options)
    try:
        import graphviz
    except ImportError:
        raise GraphvizNotFound(dot, "the Python package `graphviz`") from None
    try:
        return graphviz.Source(dot, engine="dot").pipe(format="svg", encoding="utf-8")
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
    """The text of each box."""

    def __init__(self, graph: DrawnGraph, values: bool, grads: bool, saved: bool):
        self.nodes, self.values, self.grads, self.saved = graph.nodes, values, grads, saved
        self.saved_shown = False

    def label(self, box: Box) -> str:
        nodes = [self.nodes[i] for i in box.members]
        if box.kind == "node":
            return "\n".join(self._node(nodes[0]))
        if box.kind == "rest":
            return f"{len(nodes):,} earlier nodes"
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
        return "\n".join([title, " · ".join(counts), "→ " + _tensor(last)])

    def _node(self, n: GraphNode) -> list:
        title = n.op if n.kind == "op" else n.name or n.kind
        lines = [title, _tensor(n)]
        if self.saved and n.kind == "op" and n.saved != ():
            self.saved_shown = True
            lines.append("saved: freed" if n.saved is None else
                         f"saved: {', '.join(s.name for s in n.saved)} · {_bytes(sum(s.nbytes for s in n.saved))}")
        if self.values and n.value is not None:
            lines += _summary(n.value)
        grad = n.grad if self.grads else None
        if grad is not None:
            lines += ["∇ " + line for line in _summary(grad)]
        return lines


def _tensor(n: GraphNode) -> str:
    shapes = " | ".join(_shape(s) for s in n.output_shapes)
    return f"{shapes} {n.dtype}" if n.dtype else shapes


def _shape(shape: tuple) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.4g}"


def _summary(s: TensorSummary) -> list:
    if 0 < s.numel <= PREVIEW:
        return ["= [" + ", ".join(_num(v) for v in s.preview) + "]"]
    if s.numel == 0:
        return ["= []"]
    return [f"min {_num(s.min)}  max {_num(s.max)}", f"mean {_num(s.mean)}  norm {_num(s.norm)}"]


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


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
            out.append(f'{indent}  label="{_esc(calls[key].label)}"; style="rounded,dashed"; color="#7c3aed"; '
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


def _legend(used: set) -> str:
    rows = "".join(f'<tr><td bgcolor="{fill}" width="18"> </td><td align="left">{text}</td></tr>'
                   for kind, (fill, text) in LEGEND.items() if kind in used)
    return (f'  legend [shape=plaintext, fontsize=9, label=<<table border="0" cellborder="1" cellspacing="2">'
            f'<tr><td colspan="2"><b>legend</b></td></tr>{rows}</table>>]')
