"""capture(): the graph that produced some tensors, read from the engine's nodes after the fact.

The engine's nodes know their inputs, input shapes, module scope and what they
saved, but not their output values: those exist here only for leaves, for the
captured tensors themselves, for intermediate tensors an op saved for its
backward (unchanged since), for tensors the caller holds in variables, and for
every op that ran while `record()` listened (it leaves a summary on each engine
node). A single-output node does not store its dtype either: it is taken from a
saved copy, else from the inputs (built-in ops other than Cast keep the floating
dtype of their inputs). Nodes are named after the caller's variables.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from ..autograd.engine import _graph_nodes
from ..autograd.function import _FREED, AccumulateGrad, _SavedOutput, edge
from ..autograd.tensor_base import TensorBase
from ..ops.elementwise import Cast
from .model import Graph, GraphNode, caller_namespace
from .nodes import RECORDED_VALUE, dtype_name, saved_info, summarize


class _Facts(NamedTuple):
    """What the consumers and saved tensors of a graph tell about each output (keyed by (node, output_nr))."""

    shapes: dict
    dtypes: dict
    arrays: dict      # values still as they were when the op ran
    first_use: dict   # node -> the first node that consumed it
    constants: dict   # node -> saved tensors among its no-grad arguments


def capture(outputs: TensorBase | Sequence[TensorBase], params: Mapping[str, TensorBase] | None = None,
            namespace: Mapping[str, object] | None = None) -> Graph:
    """The graph of everything that produced `outputs` (a tensor or several).
    `params` names leaves, e.g. `dict(model.named_parameters())`; parameters are otherwise
    named by their path in the module that used them. Other tensors held in variables are
    named after them: the variables of `namespace`, by default the caller's (see `Graph.name_tensors`)."""
    outs = (outputs,) if isinstance(outputs, TensorBase) else tuple(outputs)
    heads = [edge(t) for t in outs]
    order = _graph_nodes([h[0] for h in heads if h is not None])[::-1]  # inputs first
    facts = _scan(order, outs)
    graph = Graph(params)
    ids: dict = {}  # engine node -> graph node id
    for n in order:
        ids[n] = (_leaf_node(graph, n, facts) if type(n) is AccumulateGrad else _op_node(graph, n, ids, facts)).id
    roots = []
    for t, head in zip(outs, heads):
        if head is not None:
            roots.append(ids[head[0]])
        else:  # a tensor that needs no gradient: the graph is just that tensor
            hit = graph._tensors.get(t)
            roots.append(hit[0] if hit is not None else graph._add_leaf(t, ()).id)
    graph._roots = tuple(roots)
    graph.name_tensors(caller_namespace() if namespace is None else namespace)
    return graph


def _scan(order: list, outs: tuple) -> _Facts:
    facts = _Facts({}, {}, {}, {}, {})
    for t in outs:
        if t._grad_fn is not None:
            _know(facts, (t._grad_fn, t._output_nr), t._data, True)
    for n in order:
        if type(n) is AccumulateGrad:
            continue
        for e, shape in zip(n.edges, n.input_shapes):
            if e is not None:
                facts.shapes.setdefault(e, shape)
                facts.first_use.setdefault(e[0], n)
        if n._saved is _FREED:
            continue
        for value, version in n._saved:
            if value.__class__ is _SavedOutput:
                _know(facts, (n, value.nr), value.data, value.vc[0] == version)
            elif isinstance(value, TensorBase):
                if value._grad_fn is not None:
                    _know(facts, (value._grad_fn, value._output_nr), value._data, value._version == version)
                elif not value._requires_grad:
                    facts.constants.setdefault(n, []).append(value)
    return facts


def _know(facts: _Facts, key: tuple, arr, unchanged: bool) -> None:
    facts.shapes.setdefault(key, arr.shape)
    facts.dtypes.setdefault(key, dtype_name(arr.dtype))
    if unchanged:
        facts.arrays.setdefault(key, arr)


def _leaf_node(graph: Graph, n: AccumulateGrad, facts: _Facts) -> GraphNode:
    user = facts.first_use.get(n)
    leaf = n.variable
    if leaf is None:  # the leaf was freed: only its shape is left
        return graph._add_unknown(facts.shapes[(n, 0)], user.device, True)
    return graph._add_leaf(leaf, user.scope if user is not None else ())


def _op_node(graph: Graph, n, ids: dict, facts: _Facts) -> GraphNode:
    inputs, positions = [], []
    constants = list(facts.constants.get(n, ()))
    for i, (e, shape) in enumerate(zip(n.edges, n.input_shapes)):
        if shape is None:
            continue  # not a tensor
        inputs.append((ids[e[0]], e[1]) if e is not None else _constant(graph, n, shape, constants))
        positions.append(i)
    inputs = tuple(inputs)
    if n.output_shapes is not None:  # several outputs: the engine keeps their shapes and dtypes
        shapes, dtype = n.output_shapes, dtype_name(n.output_dtypes[0])
    else:
        shapes = (facts.shapes[(n, 0)],)
        dtype = facts.dtypes.get((n, 0)) or _inferred_dtype(graph, n.fn, inputs)
    value = getattr(n, RECORDED_VALUE, None)
    if value is None:
        arr = facts.arrays.get((n, 0))
        value = summarize(arr) if arr is not None else None
    return graph._add_op(n.fn, inputs, tuple(positions), shapes, dtype, n.device,
                         dtype is None or np.dtype(dtype).kind == "f", n.scope, saved_info(n), value, engine_node=n)


def _constant(graph: Graph, n, shape: tuple, constants: list) -> tuple:
    """The node of a no-grad tensor argument: the tensor itself when the op saved it, else its shape only."""
    for k, t in enumerate(constants):
        if t._data.shape == shape:
            del constants[k]
            hit = graph._tensors.get(t)
            return hit if hit is not None else (graph._add_leaf(t, ()).id, 0)
    return (graph._add_unknown(shape, n.device, False).id, 0)


def _inferred_dtype(graph: Graph, fn: type, inputs: tuple) -> str | None:
    """A built-in op's output dtype from its floating inputs' (None for Cast and user Functions)."""
    if fn is Cast or not fn.array_forward:
        return None
    known = {graph.nodes[i].dtype for i, _ in inputs} - {None}
    floats = [d for d in sorted(known) if np.dtype(d).kind == "f"]
    return str(np.result_type(*floats)) if floats else None
