"""BackwardStepper: the real backward pass, one node at a time.

It advances the engine's own step generator (`autograd.engine.backward_steps`,
the one `Tensor.backward()` drains), so what a student steps through is exactly
what runs: after `run()` every leaf's `.grad` is bit for bit what `backward()`
gives. The graph is retained, so `reset()` restores the leaves' gradients and
starts a fresh pass, and `back()` replays all steps but the last.

A stepper made while a learner's pieces replace the engine's (`tinygrad_lab.seams`) keeps
running them at every step, also after the `with` block has ended (a widget steps when its
buttons are pressed), and a step's `source()` is the code of the backward that ran: the
learner's where theirs replaced the op's.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping

from .. import seams
from ..autograd.api import _seed_grads
from ..autograd.engine import BackwardStep, _graph_nodes, backward_steps
from ..autograd.function import AccumulateGrad, edge
from ..autograd.tensor_base import TensorBase, make
from .capture import capture
from .explain import Explanation, explain
from .model import Graph, GraphNode, arg_name
from .source import Source, backward_source, lines_run, only_what_ran


class Step:
    """One node of the backward pass, as the stepper shows it.

    index  position in the pass (0 is the output's node)
    node   the graph node (in `stepper.graph`; None for a leaf that no longer exists)
    raw    the engine's BackwardStep
    """

    __slots__ = ("index", "node", "raw", "_graph", "_ran", "_lines")

    def __init__(self, index: int, node: GraphNode | None, raw: BackwardStep, graph: Graph,
                 ran: Callable | None = None, lines: set | None = None):
        self.index, self.node, self.raw, self._graph = index, node, raw, graph
        self._ran = ran  # the backward that ran, where a learner's replaced the op's (seams)
        self._lines = lines  # the line numbers of that backward that ran (None: not recorded)

    @property
    def op(self) -> str:
        fn = self.raw.node.fn
        return fn.__name__ if fn is not None else "AccumulateGrad"

    @property
    def grad_output(self) -> TensorBase | None:
        """The incoming gradient: d(loss)/d(this node's output)."""
        return next((g for g in self.raw.grad_outputs if g is not None), None)

    @property
    def sends(self) -> tuple:
        """(input node, argument name, gradient) for each input that wants a gradient."""
        engine, graph = self.raw.node, self._graph
        return tuple((graph.node_of(e[0]), arg_name(engine.fn, i), g)
                     for i, (e, g) in enumerate(zip(engine.edges, self.raw.grad_inputs)) if e is not None)

    def explain(self) -> Explanation:
        """The chain rule at this node, in words, symbols and every number it uses."""
        return explain(self.raw, self._graph)

    def source(self) -> Source | None:
        """The source of the backward that ran at this node, each input's gradient line marked
        (read from the engine's files now; None for a leaf, which has no backward)."""
        fn = self.raw.node.fn
        source = backward_source(fn, self._ran) if fn is not None else None
        return only_what_ran(source, self._lines)

    def __repr__(self) -> str:
        return f"<Step {self.index}: {self.op} (node {self.node.id if self.node is not None else '?'})>"


class BackwardStepper:
    """Walk the backward pass of `loss` one node at a time.

    `graph` is the captured graph (gradients appear on it as steps run); `history`
    the steps taken, `current` the last one, `next` the node that runs next.
    """

    def __init__(self, loss: TensorBase, gradient: TensorBase | None = None, *,
                 params: Mapping[str, TensorBase] | None = None):
        if edge(loss) is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        self.loss = loss
        self._seed = _seed_grads((loss,), (gradient,) if gradient is not None else (), False)[0]
        self.graph = capture(loss, params=params)
        self._root = edge(loss)[0]
        self._before = [(t, None if t._grad is None else t._grad._data.copy()) for t in _grad_targets(self._root)]
        self.history: list[Step] = []
        self._gen = None
        self._pending: dict = {}  # the engine's own waiting gradients (backward_steps(pending=...))
        self.replacements = seams.replaced()  # the learner's pieces in force when it was made: name -> fn

    @property
    def done(self) -> bool:
        return self._gen is not None and not self._pending

    @property
    def current(self) -> Step | None:
        return self.history[-1] if self.history else None

    @property
    def next(self) -> GraphNode | None:
        """The node the next step runs (None when done)."""
        if self._gen is None:
            return self.graph.node_of(self._root)
        if not self._pending:
            return None
        return self.graph.node_of(max(self._pending, key=lambda n: n.id))

    def step(self) -> Step | None:
        """Run exactly one node of the backward pass; None when done."""
        if self.done:
            return None
        if self._gen is None:
            self._gen = backward_steps([self.loss], [self._seed], retain_graph=True, pending=self._pending)
        with self._replaced(), lines_run(self._backward_of_next()) as lines:
            raw = next(self._gen, None)
        if raw is None:  # the pass ended with gradients left waiting: a learner's order (seams) ran nodes too early
            self._pending.clear()
            return None
        fn = raw.node.fn
        ran = self.replacements.get(f"{fn.__name__}.backward") if fn is not None else None
        step = Step(raw.index, self.graph.observe_step(raw), raw, self.graph, ran, lines)
        self.history.append(step)
        return step

    def _backward_of_next(self):
        """The code of the backward the next step runs (the learner's where it replaces the op's)."""
        node = max(self._pending, key=lambda n: n.id) if self._gen is not None and self._pending else self._root
        fn = node.fn
        if fn is None:  # a leaf: no backward
            return None
        backward = self.replacements.get(f"{fn.__name__}.backward") or getattr(fn, "backward", None)
        return getattr(backward, "__code__", None)

    def _replaced(self) -> contextlib.ExitStack:
        """The learner's pieces of `replacements` in force (again), for one step."""
        stack = contextlib.ExitStack()
        for name, fn in self.replacements.items():
            stack.enter_context(seams.replace(name, fn))
        return stack

    def run(self) -> None:
        """Run the remaining steps."""
        while self.step() is not None:
            pass

    def reset(self) -> None:
        """Back to before the first step: leaves' gradients restored, history cleared."""
        if self._gen is not None:
            self._gen.close()
            self._gen = None
        for t, before in self._before:
            t._grad = None if before is None else make(before.copy(), t._device)
        self.history.clear()
        self._pending = {}
        self.graph.clear_grads()

    def back(self) -> Step | None:
        """Undo the last step (by replaying all steps before it); returns the new current step."""
        n = len(self.history) - 1
        if n < 0:
            return None
        self.reset()
        for _ in range(n):
            self.step()
        return self.current

    def __repr__(self) -> str:
        nxt = self.next
        where = "done" if nxt is None else f"next: {nxt.op or nxt.kind} (node {nxt.id})"
        return f"<BackwardStepper: {len(self.history)} steps taken, {where}>"


def _grad_targets(root) -> list:
    """The leaves (and retain_grad tensors) whose .grad a backward pass from `root` writes."""
    out = []
    for n in _graph_nodes([root]):
        if type(n) is AccumulateGrad:
            t = n.variable
            if t is not None:
                out.append(t)
        elif n._retained:
            out.extend(t for t in (ref() for ref in n._retained.values()) if t is not None)
    return out
