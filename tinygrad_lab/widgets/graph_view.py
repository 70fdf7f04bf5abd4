"""GraphView: the engine's recorded graph in the notebook, drawn by Graphviz.

    GraphView(loss)                       # everything that produced `loss` (graph.capture)
    with GraphView.live() as view:        # the picture grows while the block runs (graph.record)
        ...

Python owns the state (traits `svg`, `selected`, `details`, `highlighted`, `legend`); the
browser draws the SVG, fits it to its frame, keeps the highlighted node in view and reports
clicks by setting `selected` to the clicked node's Graphviz name. Nodes carry the learner's
variable names, looked up in the notebook's namespace at each drawing. All the graph logic
is `tinygrad_lab.graph`'s.
"""
from __future__ import annotations

import threading
import time

import anywidget
import traitlets

from .. import graph as _graph
from ..autograd.tensor_base import TensorBase
from ..graph import render
from ._base import StaticFallback, asset, png_bundle, shows_errors, user_namespace

_OPTIONS = ("show_values", "show_grads", "cluster_modules", "collapse")
NOT_KEPT = ("not kept: no op saved this tensor for backward and no variable holds it "
            "(run the forward inside `with graph.record():` to keep every value)")


def _fmt_summary(s) -> str:
    if s.min is None:
        return "empty"
    if not s.shape:
        return f"{s.preview[0]:.4g}"
    preview = ", ".join(f"{v:.4g}" for v in s.preview) + (", …" if s.numel > len(s.preview) else "")
    return f"[{preview}]" + (f"  min {s.min:.4g} · max {s.max:.4g} · mean {s.mean:.4g}" if s.numel > 1 else "")


def node_details(g: "_graph.Graph", name: str) -> dict:
    """What the details panel shows for the drawn node called `name` ("n3": graph node 3; "m1": module call 1)."""
    kind, num = name[:1], name[1:]
    i = int(num) if num.isdigit() else -1
    if kind == "m" and 0 <= i < len(g.modules):
        call = g.modules[i]
        members = [n for n in g if any(c.key == i for c in n.scope)]
        return {"module": call.label, "depth": call.depth, "ops inside": sum(n.kind == "op" for n in members)}
    if kind in "nc" and 0 <= i < len(g):
        return _tensor_details(g, g[i])
    return {"node": name}


def _tensor_details(g: "_graph.Graph", n) -> dict:
    """A node's op, the learner's name, shape, dtype, device, module, inputs, saved tensors, value and gradient."""
    out = {"node": f"#{n.id}", "op": n.op or n.kind, "name": n.name, "shape": str(list(n.shape)),
           "dtype": n.dtype or "?", "device": n.device, "requires_grad": str(n.requires_grad),
           "module": n.module.label if n.module is not None else None,
           "inputs": ", ".join(f"{arg}={g[src].name or f'{g[src].op or g[src].kind} #{src}'}"
                               for (src, _), arg in zip(n.inputs, n.input_names)),
           "saved": "; ".join(f"{s.name} {list(s.shape)} ({s.nbytes} B)" for s in n.saved or ())}
    out = {k: v for k, v in out.items() if v}
    grad = n.grad
    out["value"] = _fmt_summary(n.value) if n.value is not None else NOT_KEPT
    out["grad"] = _fmt_summary(grad) if grad is not None else "not computed yet (no backward pass seen)"
    return out


class GraphView(StaticFallback, anywidget.AnyWidget):
    """A recorded graph, clickable: select a node to see its op, shape, dtype, device, module,
    value and gradient, and saved tensors. The wheel scrolls the page; Ctrl + wheel or the
    buttons zoom; drag pans; double-click fits."""

    _esm = asset("graph_view.js")
    _css = asset("graph_view.css")

    svg = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    details = traitlets.Dict().tag(sync=True)
    highlighted = traitlets.List(traitlets.Unicode()).tag(sync=True)
    highlighted_edges = traitlets.List(traitlets.Unicode()).tag(sync=True)
    marked = traitlets.List(traitlets.Unicode()).tag(sync=True)  # red: e.g. the first node where gradients differ
    legend = traitlets.List().tag(sync=True)    # [kind, fill, border, text, text colour] per row in use
    colors = traitlets.Dict().tag(sync=True)    # graph.render.COLORS, as CSS variables
    error = traitlets.Unicode("").tag(sync=True)
    show_values = traitlets.Bool(False).tag(sync=True)
    show_grads = traitlets.Bool(False).tag(sync=True)
    cluster_modules = traitlets.Bool(False).tag(sync=True)
    collapse = traitlets.Any(None)  # module names or a depth (see graph.render.to_dot)
    collapse_depth = traitlets.Int(-1).tag(sync=True)  # the toolbar's depth box: sets `collapse`, -1 for none

    def __init__(self, source=None, *, params=None, highlight: int | None = None, mark: int | None = None,
                 max_nodes: int | None = 300, redraw_interval: float = 0.3, **options):
        """`source`: a tensor (its graph is captured), a `graph.Graph`, or None (an empty view,
        e.g. for live()). Options: show_values, show_grads, cluster_modules, collapse."""
        super().__init__(colors=dict(render.COLORS), **options)
        if isinstance(source, TensorBase):
            source = _graph.capture(source, params=params)
        self.graph = source if source is not None else _graph.Graph(params)
        self.highlight = highlight
        self.mark = mark  # a node id drawn in red (graph.render's `mark`), its name in `marked` for the browser
        self.marked = [f"n{mark}"] if mark is not None else []
        self.max_nodes = max_nodes
        self.redraw_interval = redraw_interval
        self._recorder = None
        self._display = None
        self._last_draw = 0.0
        self._drawing = threading.Lock()
        self.redraw()
        self.observe(lambda change: self.redraw(), names=list(_OPTIONS))
        self.observe(lambda change: setattr(self, "collapse", None if change["new"] < 0 else change["new"]),
                     names="collapse_depth")
        self.observe(self._on_select, names="selected")

    def __repr__(self) -> str:
        return f"<GraphView: {len(self.graph)} nodes>"

    # ---------------------------------------------------------------- drawing
    def _draw_options(self) -> dict:
        return dict(show_values=self.show_values, show_grads=self.show_grads, cluster_modules=self.cluster_modules,
                    collapse=self.collapse, max_nodes=self.max_nodes, highlight=self.highlight, mark=self.mark)

    @shows_errors
    def redraw(self) -> None:
        """Render the graph again with the current options (Graphviz runs in this process); names
        come from the notebook's variables as they are now."""
        namespace = user_namespace()
        if namespace is not None:
            self.graph.name_tensors(namespace)
        drawing = render.draw(self.graph, legend=False, **self._draw_options())
        self.svg = render.dot_to(drawing.dot, "svg").decode("utf-8")
        self.legend = legend_rows(drawing.legend)
        self._last_draw = time.monotonic()
        if self.selected:
            self.details = node_details(self.graph, self.selected)

    def _static_bundle(self) -> dict:
        """The drawing with its legend, as SVG and PNG: a picture in an untrusted notebook (PNG), on
        GitHub and in nbconvert's HTML, where the widget itself cannot run."""
        if not self.svg:
            return {}
        dot = render.to_dot(self.graph, legend=True, **self._draw_options())
        return {"image/svg+xml": render.dot_to(dot, "svg").decode("utf-8"),
                **png_bundle(render.dot_to(dot, "png", dpi=96))}

    @shows_errors
    def _on_select(self, change) -> None:
        self.details = node_details(self.graph, change["new"]) if change["new"] else {}

    # ---------------------------------------------------------------- live mode
    @classmethod
    def live(cls, params=None, **options) -> "GraphView":
        """A view that records every op while its `with` block runs and redraws a few times a
        second (in a background thread, so the computation never waits for Graphviz)."""
        view = cls(None, params=params, **options)
        view._recorder = _graph.record(params)
        view.graph = view._recorder.graph
        view.graph.subscribe(view._on_new_node)
        return view

    def __enter__(self) -> "GraphView":
        if self._recorder is None:
            raise RuntimeError("only GraphView.live() views record: use `with GraphView.live() as view:`")
        from IPython.display import display
        self._display = display(self, display_id=True)
        self._recorder.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._recorder.__exit__(*exc)
        with self._drawing:
            self.redraw()  # the final picture, whatever the throttle skipped
        if self._display is not None:
            # once, at the end: the output's static picture becomes the final graph (what a notebook
            # shows before it runs); the live view itself is updated through its traits only
            self._display.update(self)

    def _on_new_node(self, event: str, node) -> None:
        if time.monotonic() - self._last_draw < self.redraw_interval or not self._drawing.acquire(blocking=False):
            return
        self._last_draw = time.monotonic()

        def draw():
            try:
                self.redraw()
            finally:
                self._drawing.release()
        threading.Thread(target=draw, daemon=True).start()


def legend_rows(kinds: tuple) -> list:
    """[kind, fill, border, text, text colour] for each legend row (graph.render's LEGEND and colours)."""
    rows = []
    for kind in kinds:
        fill, border = render.PALETTE.get(kind, ("#ffffff", render.COLORS["grad"]) if kind == "current" else ("", ""))
        rows.append([kind, fill, border, render.LEGEND[kind], render.COLORS.get(kind, "")])
    return rows
