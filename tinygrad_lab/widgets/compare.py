"""The CompareStepper widget: a learner's piece of the engine beside the engine's own, node by node,
on one graph.

    widgets.CompareStepper(loss, "unbroadcast", my_unbroadcast, params=dict(model.named_parameters()))

Step / Back / Reset / First difference and a slider walk the engine's backward pass; at each node
the gradients that reached it and those it sent on are shown for both passes, side by side, the
ones that differ in red with the largest difference. The first node where they differ is marked
on the graph (red) from the start and kept in view; the code panels show the learner's function
that ran and the engine's. The comparison is `tinygrad_lab.graph.compare.compare` (both passes
run through the engine's step generator); this widget only lays it out.
"""
from __future__ import annotations

import html

import ipywidgets
import numpy as np

from ..graph import render
from ..graph.compare import Comparison, NodeComparison, compare
from ._base import AroundGraphView, shows_errors
from .graph_view import GraphView
from .stepper import _MONO, _panel, _source_html

_RED, _MUTED = render.COLORS["differs"], render.COLORS["muted"]


class CompareStepper(AroundGraphView, ipywidgets.VBox):
    """Step through the backward pass of `loss` with the engine's pieces and with `fn` in place of
    `seam` (a `tinygrad_lab.seams` name: "Mul.backward", "unbroadcast", "backward_order",
    "accumulate", "im2col"), node by node; the first node where the gradients differ is marked.
    `params` names parameters in the graph; other options go to the GraphView."""

    def __init__(self, loss, seam, fn, *, params=None, rtol: float = 1e-5, atol: float = 1e-7,
                 interval_ms: int = 800, **view_options):
        self.result: Comparison = compare(loss, seam, fn, params=params, rtol=rtol, atol=atol)
        self.total = len(self.result.nodes)
        first = self.result.first_index
        marked = self.result.nodes[first].graph_node if first is not None else None
        self.view = GraphView(self.result.graph, mark=marked.id if marked is not None else None, **view_options)
        self.slider = ipywidgets.IntSlider(value=0, min=0, max=self.total, description="steps",
                                           continuous_update=False)
        self.play = ipywidgets.Play(value=0, min=0, max=self.total, interval=interval_ms, description="Play")
        ipywidgets.jslink((self.play, "value"), (self.slider, "value"))
        self.buttons = {name: ipywidgets.Button(description=name, layout=ipywidgets.Layout(width=width))
                        for name, width in (("Step", "70px"), ("Back", "70px"), ("Reset", "70px"),
                                            ("First difference", "130px"))}
        self.buttons["Step"].on_click(lambda _: self._move(1))
        self.buttons["Back"].on_click(lambda _: self._move(-1))
        self.buttons["Reset"].on_click(lambda _: setattr(self.slider, "value", 0))
        self.buttons["First difference"].on_click(lambda _: self.go_to_first_difference())
        self.buttons["First difference"].disabled = first is None
        self.verdict = ipywidgets.HTML(_panel(verdict_html(self.result)))
        self.verdict.add_class("tl-verdict")
        self.numbers = ipywidgets.HTML(layout=ipywidgets.Layout(flex="1 1 420px", min_width="0"))
        self.numbers.add_class("tl-numbers")
        self.code = ipywidgets.HTML(layout=ipywidgets.Layout(flex="2 1 640px", min_width="0"))
        self.code.add_class("tl-code")
        self.slider.observe(lambda change: self.go_to(change["new"]), names="value")
        controls = ipywidgets.HBox([self.buttons["Step"], self.buttons["Back"], self.play, self.buttons["Reset"],
                                    self.buttons["First difference"], self.slider])
        panels = ipywidgets.HBox([self.numbers, self.code],
                                 layout=ipywidgets.Layout(flex_flow="row wrap", grid_gap="8px", width="100%"))
        super().__init__([self.verdict, controls, self.view, panels])
        self.position = 0
        if first is not None:
            self.go_to_first_difference()  # a learner sees the numbers that matter first
        else:
            self._show()

    def __repr__(self) -> str:
        return f"<CompareStepper widget: {_plain(self.result)}>"

    @property
    def current(self) -> NodeComparison | None:
        """The node shown (None before the first step)."""
        return self.result.nodes[self.position - 1] if self.position else None

    def _move(self, delta: int) -> None:
        self.slider.value = min(max(self.slider.value + delta, 0), self.total)

    def go_to_first_difference(self) -> None:
        first = self.result.first_index
        if first is not None:
            self.slider.value = first + 1
            self.go_to(first + 1)  # also when the slider is there already

    @shows_errors
    def go_to(self, n: int) -> None:
        """Show node n of the engine's pass (1-based; 0: before the first)."""
        self.position = min(max(int(n), 0), self.total)
        self._show()

    def _show(self) -> None:
        at, view = self.current, self.view
        if at is None or at.graph_node is None:
            view.highlight, view.highlighted, view.highlighted_edges = None, [], []
            self.numbers.value = _panel("Press <b>Step</b> to see the first node, both passes side by side"
                                        + (", or <b>First difference</b>." if self.result.first_index is not None
                                           else "."))
            self.code.value = ""
        else:
            node = at.graph_node.id
            view.highlight, view.highlighted = node, [f"n{node}"]
            view.highlighted_edges = [f"n{src}->n{node}" for src, _ in at.graph_node.inputs]
            self.numbers.value = numbers_html(self.result, at, self.total)
            self.code.value = code_html(self.result, at)
        view.redraw()


# ---------------------------------------------------------------- HTML

def _plain(result: Comparison) -> str:
    """The verdict in one line of text (the widget's repr)."""
    return repr(result)[len("<Comparison "):-1]


def verdict_html(result: Comparison) -> str:
    esc = html.escape
    if result.error is not None:
        where = result.nodes[result.first_index].where if result.first_index is not None else "a node"
        return (f'<b style="color: {_RED}">your {esc(result.seam)} raised {esc(type(result.error).__name__)}</b> '
                f"at {esc(where)}: {esc(str(result.error))}")
    if result.first is not None:
        return (f'<b style="color: {_RED}">the first difference</b> (marked red on the graph): '
                f"{esc(str(result.first))}")
    how = "bit for bit" if result.identical else "within tolerance"
    return f"<b>every gradient as the engine's</b>: {result.steps} nodes, {how}, with your {esc(result.seam)}"


def _text(arr) -> str:
    if arr is None:
        return "no gradient"
    with np.printoptions(precision=4, suppress=True, threshold=12, edgeitems=3, linewidth=60):
        return f"{np.asarray(arr)}  (shape {list(np.shape(arr))})"


def _short(arr) -> str:
    if arr is None:
        return "None"
    with np.printoptions(precision=4, suppress=True, threshold=6, edgeitems=2, linewidth=1000):
        return str(np.asarray(arr))


def _row(label: str, expected, got, ran: bool) -> str:
    esc = html.escape
    differs = not ran or (expected is None) != (got is None) or (
        expected is not None and (np.shape(expected) != np.shape(got) or not np.allclose(expected, got, rtol=1e-5,
                                                                                        atol=1e-7, equal_nan=True)))
    if differs and ran and expected is not None and got is not None and np.shape(expected) == np.shape(got):
        note = f"differs: max error {float(np.max(np.abs(np.asarray(expected, float) - got))):.3g}"
    else:
        note = "differs" if differs else "same"
    theirs = _text(got) if ran else "did not run"
    color = _RED if differs else "inherit"
    return (f'<tr data-differs="{str(differs).lower()}"><td style="padding-right: 8px; white-space: nowrap">'
            f"<b>{esc(label)}</b></td><td style='white-space: pre-wrap'>{esc(_text(expected))}</td>"
            f'<td style="white-space: pre-wrap; color: {color}">{esc(theirs)}</td>'
            f'<td style="padding-left: 8px; color: {_RED if differs else _MUTED}">{esc(note)}</td></tr>')


def numbers_html(result: Comparison, at: NodeComparison, total: int) -> str:
    """Both passes at one node: what reached it and what it sent on, the engine's beside the learner's."""
    esc = html.escape
    first = result.first_index == at.index
    status = (f'<b style="color: {_RED}">the first difference</b>' if first else
              f'<b style="color: {_RED}">differs</b>' if not at.agrees else "same in both passes")
    rows = [_row("g (received)" if len(at.received) == 1 else f"g{k} (received)", e, g, at.ran)
            for k, (e, g) in enumerate(at.received)]
    rows += [_row(f"grad {arg} (sent)" if arg else f"grad {k} (sent)", e, g, at.ran)
             for k, (arg, e, g) in enumerate(at.sent)]
    head = (f"<tr style='color: {_MUTED}'><td></td><td>the engine's</td><td>yours</td><td></td></tr>")
    return _panel(f"<div><b>step {at.index + 1} of {total}: {esc(at.where)}</b> &nbsp; {status}</div>"
                  f'<table style="border-collapse: collapse; {_MONO}">{head}{"".join(rows)}</table>')


def code_html(result: Comparison, at: NodeComparison) -> str:
    """The learner's code that ran, beside the engine's (one above the other where the page is narrow)."""
    yours, engines, note = result.sources(at)
    if yours is None and engines is None:
        return _panel(f"<b>the code that ran</b>: {html.escape(note)}")
    parts = [f"<div style='color: {_MUTED}'>{html.escape(note)}</div>"] if note else []
    sent = {"yours": {arg: _short(g) for arg, _, g in at.sent}, "engine": {arg: _short(e) for arg, e, _ in at.sent}}
    for title, source, grads in (("your code that ran", yours, sent["yours"]),
                                 ("the engine's", engines, sent["engine"])):
        body = _source_html(source, grads) if source is not None else " (its source is not available)"
        parts.append(f"<div style='margin-top: 4px'><b>{title}</b>{body}</div>")
    return _panel("".join(parts))
