"""The BackwardStepper widget: Step / Back / Play / Reset and a slider over the steps of
the real backward pass, the current node and the edges carrying gradient highlighted (and
kept in view), the chain rule at that node with every number it uses, and beside it the
source of the `backward` that ran, the line that produced each input's gradient marked
with the gradient it produced.

The stepping is `tinygrad_lab.graph.BackwardStepper` (the engine's own backward
generator), the explanation `graph.explain`, the source `graph.source` (read from the
engine's files when shown); this widget only lays them out.
"""
from __future__ import annotations

import html

import ipywidgets

from .. import graph as _graph
from ..graph import render
from ..graph.source import Source
from ._base import AroundGraphView, shows_errors
from .graph_view import GraphView

_MONO = "font-family: var(--jp-code-font-family, monospace); font-size: 12px"
_PANEL = ("border: 1px solid var(--jp-border-color2, #ddd); padding: 6px 8px; margin: 0; overflow-x: auto; "
          "line-height: 1.45")
_ROLE_COLORS = {"grad": render.COLORS["grad"], "saved": render.COLORS["saved"], "missing": render.COLORS["muted"]}
_ROLE_NOTES = {"saved": "saved by forward", "number": "a Python number", "value": "its forward value",
               "ctx": "kept by forward", "shape": "shape", "missing": "not available", "grad": ""}


class BackwardStepper(AroundGraphView, ipywidgets.VBox):
    """Walk `loss.backward()` one node at a time. After the last step every leaf's `.grad` is
    what `loss.backward()` gives. Options go to the GraphView (collapse, cluster_modules, ...)."""

    def __init__(self, loss, *, params=None, show_values: bool = False, interval_ms: int = 800, **view_options):
        self.model = _graph.BackwardStepper(loss, params=params)
        self.model.run()  # once, to know how many steps there are; then back to the start
        self.total = len(self.model.history)
        self.model.reset()
        self.view = GraphView(self.model.graph, show_grads=True, show_values=show_values, **view_options)
        self.slider = ipywidgets.IntSlider(value=0, min=0, max=self.total, description="steps", continuous_update=False)
        self.play = ipywidgets.Play(value=0, min=0, max=self.total, interval=interval_ms, description="Play")
        ipywidgets.jslink((self.play, "value"), (self.slider, "value"))
        self.buttons = {name: ipywidgets.Button(description=name, layout=ipywidgets.Layout(width="70px"))
                        for name in ("Step", "Back", "Reset")}
        self.buttons["Step"].on_click(lambda _: self._move(1))
        self.buttons["Back"].on_click(lambda _: self._move(-1))
        self.buttons["Reset"].on_click(lambda _: setattr(self.slider, "value", 0))
        # side by side where the notebook is wide enough for both, else the code below the numbers
        self.explanation = ipywidgets.HTML(layout=ipywidgets.Layout(flex="1 1 360px", min_width="0"))
        self.explanation.add_class("tl-explanation")
        self.code = ipywidgets.HTML(layout=ipywidgets.Layout(flex="2 1 640px", min_width="0"))
        self.code.add_class("tl-code")
        self.slider.observe(lambda change: self.go_to(change["new"]), names="value")
        controls = ipywidgets.HBox([self.buttons["Step"], self.buttons["Back"], self.play, self.buttons["Reset"],
                                    self.slider])
        panels = ipywidgets.HBox([self.explanation, self.code],
                                 layout=ipywidgets.Layout(flex_flow="row wrap", grid_gap="8px", width="100%"))
        super().__init__([controls, self.view, panels])
        self._show()

    def __repr__(self) -> str:
        return f"<BackwardStepper widget: step {len(self.model.history)} of {self.total}>"

    def _move(self, delta: int) -> None:
        self.slider.value = min(max(self.slider.value + delta, 0), self.total)

    @shows_errors
    def go_to(self, n: int) -> None:
        """Show the pass after `n` steps (forward by stepping; backward by replaying from the start)."""
        if n < len(self.model.history):
            self.model.reset()
        while len(self.model.history) < n and self.model.step() is not None:
            pass
        self._show()

    def _show(self) -> None:
        step = self.model.current
        view = self.view
        if step is None or step.node is None:
            view.highlight, view.highlighted, view.highlighted_edges = None, [], []
            nxt = self.model.next
            self.explanation.value = _panel(f"Press <b>Step</b> to run the first node of the backward pass"
                                            f"{f' ({html.escape(nxt.op)})' if nxt is not None and nxt.op else ''}.")
            self.code.value = ""
        else:
            cur = step.node.id
            view.highlight = cur
            view.highlighted = [f"n{cur}"]
            view.highlighted_edges = [f"n{src.id}->n{cur}" for src, _, g in step.sends
                                      if src is not None and g is not None]
            explanation = step.explain()
            title = f"step {step.index + 1} of {self.total}: node {cur}"
            self.explanation.value = explanation_html(title, explanation)
            self.code.value = code_html(step.source(), explanation)
        view.redraw()


# ---------------------------------------------------------------- HTML of the two panels

def _panel(body: str) -> str:
    return f'<div style="{_PANEL}; {_MONO}; white-space: normal">{body}</div>'


def explanation_html(title: str, e: _graph.Explanation) -> str:
    """The chain rule at a step: words, formulas, a table of every number (gradients in the graph's
    orange, saved tensors in its teal) and, for single numbers, the formulas worked out by hand."""
    esc = html.escape
    rows = []
    for n in e.numbers:
        color = _ROLE_COLORS.get(n.role, "inherit")
        who = "" if n.label in ("", n.name) else (f"to {n.label}" if n.role == "grad" else n.label)
        note = ", ".join(x for x in (who, _ROLE_NOTES.get(n.role, "")) if x)
        rows.append(f'<tr style="color: {color}"><td style="padding-right: 8px; white-space: nowrap">'
                    f'<b>{esc(n.name)}</b></td><td style="white-space: pre-wrap">= {esc(n.text)}</td>'
                    f'<td style="padding-left: 8px; color: {render.COLORS["muted"]}">{esc(note)}</td></tr>')
    parts = [f"<div><b>{esc(title)}</b></div>", f"<div><b>{esc(e.op)}</b>: {esc(e.words)}</div>"]
    if e.op != "AccumulateGrad":
        parts.append(f'<div style="color: {render.COLORS["muted"]}">chain rule: grad input = g * (d out / d input),'
                     " g = the gradient arriving at the output</div>")
    parts.append("<div style='margin: 4px 0'>" + "<br>".join(esc(f) for f in e.formulas) + "</div>")
    parts.append(f'<table style="border-collapse: collapse; {_MONO}">{"".join(rows)}</table>')
    if e.checks:
        parts.append("<div style='margin-top: 4px'><b>by hand:</b><br>" + "<br>".join(esc(c) for c in e.checks)
                     + "</div>")
    return _panel("".join(parts))


def code_html(source: Source | None, e: _graph.Explanation) -> str:
    """The backward that ran, with real line numbers; each line that produced an input's gradient is
    marked in orange with that gradient's value."""
    if e.op == "AccumulateGrad":
        return _panel("<b>the code that ran</b>: none of its own. The engine adds g into the leaf's "
                      "<code>.grad</code> (autograd's AccumulateGrad node).")
    if source is None:
        return _panel(f"<b>the code that ran</b>: {html.escape(e.op)}.backward (its source is not available)")
    grads = {n.name[len("grad "):]: n.text for n in e.numbers if n.name.startswith("grad ")}
    return _panel("<b>the code that ran</b>" + _source_html(source, grads))


def _source_html(source: Source, grads: dict) -> str:
    esc, orange = html.escape, render.COLORS["grad"]
    width = len(str(source.start + len(source.lines)))
    out = [f'<div style="color: {render.COLORS["muted"]}; margin: 2px 0">{esc(source.name)} &nbsp; '
           f'{esc(source.file)}:{source.start}</div><div style="overflow-x: auto">'
           f'<pre style="margin: 0; {_MONO}; line-height: 1.35; white-space: pre">']
    for k, line in enumerate(source.lines):
        number = f'<span style="color: {render.COLORS["muted"]}">{source.start + k:>{width}}</span>  '
        args = source.marks.get(k)
        if not args:
            out.append(f"{number}{esc(line)}\n")
            continue
        indent = " " * (width + 2 + len(line) - len(line.lstrip()))
        made = "; ".join(f"grad {a} = {grads[a]}" if a in grads else f"grad {a}: not needed here"
                         for a in _sent(args, grads))
        out.append(f'<span class="tl-code-mark" style="display: inline-block; min-width: 100%; background: #fff7ed; '
                   f'box-shadow: inset 3px 0 {orange}">{number}{esc(line)}\n'
                   f'<span style="color: {orange}">{indent}^ {esc(made)}</span></span>\n')
    out.append("</pre></div>")
    for helper in source.helpers:
        out.append(f'<div style="margin-top: 4px">which calls <code>{esc(helper.name.split(" = ")[0])}</code>, '
                   "defined here:</div>" + _source_html(helper, grads))
    return "".join(out)


def _sent(args: tuple, grads: dict) -> list:
    """The gradients a marked line stands for: an argument by name; for *tensors, each tensors[i] sent."""
    out = []
    for a in args:
        out += [k for k in grads if k.split("[")[0] == a] or [a]
    return out
