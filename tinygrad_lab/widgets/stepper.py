"""The BackwardStepper widget: Step / Back / Play / Reset and a slider over the steps of
the real backward pass, the current node and the edges carrying gradient highlighted,
and the chain rule at that node with its numbers.

The stepping is `tinygrad_lab.graph.BackwardStepper` (the engine's own backward
generator); this widget only shows it.
"""
from __future__ import annotations

import html

import ipywidgets

from .. import graph as _graph
from ._base import StaticFallback, shows_errors
from .graph_view import GraphView


class BackwardStepper(StaticFallback, ipywidgets.VBox):
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
        self.explanation = ipywidgets.HTML()
        self.explanation.add_class("tl-explanation")
        self.slider.observe(lambda change: self.go_to(change["new"]), names="value")
        controls = ipywidgets.HBox([self.buttons["Step"], self.buttons["Back"], self.play, self.buttons["Reset"],
                                    self.slider])
        super().__init__([controls, self.view, self.explanation])
        self._show()

    def __repr__(self) -> str:
        return f"<BackwardStepper widget: step {len(self.model.history)} of {self.total}>"

    def _static_bundle(self) -> dict:
        return self.view._static_bundle()

    @property
    def error(self) -> str:
        return self.view.error

    @error.setter
    def error(self, message: str) -> None:
        self.view.error = message  # shown above the graph

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
            self.explanation.value = ("<pre>Press Step to run the first node of the backward pass"
                                      f"{f' ({nxt.op})' if nxt is not None and nxt.op else ''}.</pre>")
        else:
            cur = step.node.id
            view.highlight = cur
            view.highlighted = [f"n{cur}"]
            view.highlighted_edges = [f"n{src.id}->n{cur}" for src, _, g in step.sends
                                      if src is not None and g is not None]
            title = f"step {step.index + 1} of {self.total}: node {cur}"
            self.explanation.value = f"<pre><b>{html.escape(title)}</b>\n{html.escape(str(step.explain()))}</pre>"
        view.redraw()
