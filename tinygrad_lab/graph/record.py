"""record(): the live graph, built from the engine's event stream while a block runs.

It subscribes to `autograd.events` (the engine's one instrumentation point): each
OpEvent adds a node, whether or not the op recorded a gradient node, so
forward-only code shows too; each BackwardStep stores the gradient it computed.
A node keeps a summary of its output's values, not the array, so recording a
training loop does not keep its activations alive; the same summary is left on
the engine's node (`nodes.RECORDED_VALUE`), so `capture()` and the stepper show
the values of a computation that ran inside the block. When the block ends, the
nodes are named after the variables of the code that ran it.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..autograd import events
from ..autograd.engine import BackwardStep
from ..autograd.events import OpEvent
from ..autograd.function import scope_stack
from ..autograd.tensor_base import TensorBase
from .model import Graph, caller_namespace
from .nodes import RECORDED_VALUE, dtype_name, saved_info, summarize


class Recorder:
    """The context manager `record()` returns; `graph` grows while the block runs."""

    def __init__(self, params: Mapping[str, TensorBase] | None = None, values: bool = True,
                 namespace: Mapping[str, object] | None = None):
        self.graph = Graph(params)
        self._values = values
        self._namespace = namespace
        self._subscription = None

    def __enter__(self) -> Recorder:
        self._subscription = events.subscribe(self._on_event)
        return self

    def __exit__(self, *exc) -> None:
        self._subscription.remove()
        self._subscription = None
        self.graph.name_tensors(caller_namespace() if self._namespace is None else self._namespace)

    def __repr__(self) -> str:
        state = "recording" if self._subscription is not None else "stopped"
        return f"<Recorder ({state}): {len(self.graph)} nodes>"

    def _on_event(self, event) -> None:
        if event.__class__ is OpEvent:
            self._add_op(event)
        elif isinstance(event, BackwardStep):
            self.graph.observe_step(event)

    def _add_op(self, event: OpEvent) -> None:
        graph, node = self.graph, event.node
        modules = node.scope if node is not None else tuple(scope_stack)
        inputs, positions = [], []
        for i, a in enumerate(event.args):
            if isinstance(a, TensorBase):
                inputs.append(self._source(a, modules))
                positions.append(i)
        outs = event.outputs
        first = outs[0]._data
        shapes = (first.shape,) if len(outs) == 1 else tuple(t._data.shape for t in outs)
        value = summarize(first) if self._values else None
        if node is not None and value is not None:
            setattr(node, RECORDED_VALUE, value)
        added = graph._add_op(event.fn, tuple(inputs), tuple(positions), shapes,
                              dtype_name(first.dtype), outs[0]._device, outs[0]._requires_grad, modules,
                              saved_info(node) if node is not None else (), value, engine_node=node)
        if node is None:  # no engine node to find these outputs by: remember the tensors
            for nr, t in enumerate(outs):
                graph._tensors.add(t, (added.id, nr))

    def _source(self, t: TensorBase, modules: tuple) -> tuple:
        """(node id, output nr) of an op's tensor argument; a tensor made before recording is a new leaf."""
        hit = self.graph.where(t)
        return hit if hit is not None else (self.graph._add_leaf(t, modules).id, 0)


def record(params: Mapping[str, TensorBase] | None = None, *, values: bool = True,
           namespace: Mapping[str, object] | None = None) -> Recorder:
    """Record every op run inside the `with` block: `with graph.record() as rec: ...`, then
    `rec.graph`. `params` names leaves; `values=False` skips value summaries (cheaper);
    nodes are named after the variables of `namespace` (default: the code running the block)."""
    return Recorder(params, values, namespace)
