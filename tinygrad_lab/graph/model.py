"""The `Graph` that holds a recorded graph's nodes, in creation order.

A `Graph` is built after the fact by `capture()` or live by `record()`; `render`
draws it and `BackwardStepper` annotates it with gradients. Node ids are
graph-local and follow creation order (never `id()` nor the engine's global
counter), so the same program gives the same graph whatever ran before it.
What a node knows is `nodes.GraphNode`'s (re-exported here).
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping

from ..autograd.function import AccumulateGrad, RemovableHandle
from ..autograd.tensor_base import TensorBase
from ..nn.parameter import Parameter
from . import render
from .nodes import (PREVIEW, GraphNode, IdentityMap, ModuleCall, SavedTensor, TensorSummary, arg_name, dtype_name,
                    saved_info, saved_names, summarize)

__all__ = ["Graph", "GraphNode", "ModuleCall", "SavedTensor", "TensorSummary", "PREVIEW", "arg_name", "dtype_name",
           "saved_info", "saved_names", "summarize"]


class Graph:
    """The ops and leaf tensors that produced some tensors, in creation order (`nodes[i].id == i`).

    Built by `capture()` (after the fact) or `record()` (live, growing as ops run).
    `subscribe(callback)` calls `callback(event, node)` with event "node" for each new
    node and "grad" when a node's gradient is seen.
    """

    def __init__(self, params: Mapping[str, TensorBase] | None = None):
        self.nodes: list[GraphNode] = []
        self.consumers: list[int] = []       # per node: how many ops use its output
        self._roots: tuple | None = None      # capture() names the outputs; record() has the sinks
        self._tensors = IdentityMap()         # tensor -> (node id, output nr)
        self._engine = IdentityMap()          # engine Node -> node id
        self._param_names = IdentityMap()
        for name, t in (params or {}).items():
            self._param_names.add(t, name)
        self._calls: dict = {}                # id(module) -> ModuleCall
        self._call_list: list[ModuleCall] = []
        self._call_modules: list = []         # by key: the modules (held, so their ids stay theirs)
        self._scopes: dict = {}               # ids of a scope's modules -> tuple of ModuleCall
        self._paths: dict = {}                # call key -> {id(submodule): path under that module}
        self._subscribers: dict = {}

    # ---------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[GraphNode]:
        return iter(self.nodes)

    def __getitem__(self, i: int) -> GraphNode:
        return self.nodes[i]

    @property
    def outputs(self) -> tuple:
        """The output nodes: the tensors given to capture(), or the nodes nothing consumed (record())."""
        return tuple(self.nodes[i] for i in sorted(self.output_ids()))

    def output_ids(self) -> set[int]:
        """Ids of the output nodes."""
        if self._roots is not None:
            return set(self._roots)
        return {i for i, c in enumerate(self.consumers) if c == 0}

    @property
    def modules(self) -> tuple:
        """Every module call seen, in order of first appearance (`modules[k].key == k`)."""
        return tuple(self._call_list)

    def node_of(self, engine_node) -> GraphNode | None:
        """The graph node of an engine node (a `grad_fn` Node or a leaf's AccumulateGrad)."""
        if type(engine_node) is AccumulateGrad:
            leaf = engine_node.variable
            hit = self._tensors.get(leaf) if leaf is not None else None
            return self.nodes[hit[0]] if hit is not None else None
        i = self._engine.get(engine_node)
        return self.nodes[i] if i is not None else None

    def where(self, t: TensorBase) -> tuple | None:
        """(node id, output nr) of tensor `t` in this graph, or None when the graph does not hold it."""
        if t._grad_fn is not None:
            i = self._engine.get(t._grad_fn)
            if i is not None:
                return (i, t._output_nr)
        return self._tensors.get(t)

    def __repr__(self) -> str:
        kinds = [n.kind for n in self.nodes]
        outs = ", ".join(f"{n.op or n.kind} {n.shape}" for n in self.outputs)
        return (f"<Graph: {len(kinds)} nodes ({kinds.count('op')} ops, {kinds.count('input')} inputs, "
                f"{kinds.count('parameter')} parameters); outputs: {outs or 'none'}>")

    # ---------------------------------------------------------------- the learner's names
    def name_tensors(self, namespace: Mapping[str, object]) -> None:
        """Label the nodes of the tensors held in `namespace` (a notebook's or a function's variables)
        with their variable names, so the node of `loss` reads "loss". Names given by `params=` or a
        module path stay; a tensor held under several names gets the shortest (then the first
        alphabetically); names starting with "_" are skipped. A node whose value was not known takes
        it from the tensor. Only names and summaries are kept, never the tensors."""
        found: dict = {}
        for var, t in namespace.items():
            if isinstance(t, TensorBase) and not var.startswith("_"):
                hit = self.where(t)
                if hit is not None:
                    found.setdefault(hit, []).append((len(var), var, t))
        outputs: dict = {}  # node id -> {output nr: variable}
        for (i, nr), named in sorted(found.items()):
            _, var, t = min(named, key=lambda v: v[:2])
            outputs.setdefault(i, {})[nr] = var
            if nr == 0 and self.nodes[i].value is None:
                self.nodes[i].value = summarize(t._data)
        for i, named in outputs.items():
            node = self.nodes[i]
            if node.name is None:
                n = len(node.output_shapes)  # several outputs: "values, indices"; "_" for one not held
                node.name = named[0] if n == 1 else ", ".join(named.get(k, "_") for k in range(n))

    # ---------------------------------------------------------------- gradients
    def observe_step(self, step) -> GraphNode | None:
        """Keep the gradient a backward step (`autograd.BackwardStep`) computed for an op's output
        (a leaf's is its `.grad`); subscribers hear of it either way."""
        node = self.node_of(step.node)
        if node is None:
            return None
        if node._leaf is None:
            g = next((x for x in step.grad_outputs if x is not None), None)
            node._grad = summarize(g._data) if g is not None else None
        if self._subscribers:
            self._notify("grad", node)
        return node

    def clear_grads(self) -> None:
        """Forget the gradients seen."""
        for n in self.nodes:
            n._grad = None

    # ---------------------------------------------------------------- rendering
    def to_dot(self, **options) -> str:
        """Graphviz source; byte-identical for the same program (options: see `render.to_dot`)."""
        return render.to_dot(self, **options)

    def to_svg(self, **options) -> str:
        """SVG drawn by Graphviz `dot`; raises GraphvizNotFound when it is not installed."""
        return render.to_svg(self, **options)

    def to_png(self, dpi: int = 96, **options) -> bytes:
        """PNG drawn by Graphviz `dot` (a picture that shows everywhere, even in an untrusted notebook)."""
        return render.to_png(self, dpi, **options)

    # ---------------------------------------------------------------- live updates
    def subscribe(self, callback: Callable[[str, GraphNode], None]) -> RemovableHandle:
        """Call `callback(event, node)` for each new node ("node") and gradient seen ("grad")."""
        return RemovableHandle(self._subscribers, callback)

    def _notify(self, event: str, node: GraphNode) -> None:
        for cb in list(self._subscribers.values()):
            cb(event, node)

    # ---------------------------------------------------------------- building (capture, record)
    def _add(self, node: GraphNode) -> GraphNode:
        node.id = len(self.nodes)
        self.nodes.append(node)
        self.consumers.append(0)
        for src, _ in node.inputs:
            self.consumers[src] += 1
        if self._subscribers:
            self._notify("node", node)
        return node

    def _add_op(self, fn: type, inputs: tuple, arg_positions: tuple, output_shapes: tuple, dtype: str | None,
                device, requires_grad: bool, modules: tuple, saved: tuple | None, value: TensorSummary | None,
                engine_node=None) -> GraphNode:
        node = self._add(GraphNode("op", fn, None, inputs, arg_positions, output_shapes, dtype, str(device),
                                   requires_grad, self._scope(modules), saved, value))
        if engine_node is not None:
            self._engine.add(engine_node, node.id)
        return node

    def _add_leaf(self, t: TensorBase, modules: tuple) -> GraphNode:
        """A tensor no recorded op made: a parameter (named by `params=` or by the module owning it) or an input."""
        name, scope = self._leaf_name(t, modules)
        kind = "parameter" if name is not None or isinstance(t, Parameter) else "input"
        node = self._add(GraphNode(kind, None, name, (), (), (t._data.shape,), dtype_name(t._data.dtype),
                                   str(t._device), t._requires_grad, scope, (), summarize(t._data), t))
        self._tensors.add(t, (node.id, 0))
        if t._accum is not None:
            self._engine.add(t._accum, node.id)
        return node

    def _add_unknown(self, shape: tuple, device, requires_grad: bool) -> GraphNode:
        """An input tensor the graph only knows the shape of (a constant argument no op saved, a freed leaf)."""
        return self._add(GraphNode("input", None, None, (), (), (tuple(shape),), None, str(device),
                                   requires_grad, (), (), None))

    def _leaf_name(self, t: TensorBase, modules: tuple) -> tuple:
        """(name, scope) of a leaf: `params=` names first; a Parameter is named by its path in the
        innermost module of `modules` that holds it, and placed in that module's scope."""
        name = self._param_names.get(t)
        if not isinstance(t, Parameter):
            return name, ()
        calls = self._scope(modules)
        for i in range(len(modules) - 1, -1, -1):
            for pname, p in modules[i].named_parameters():
                if p is t:
                    prefix = calls[i].name
                    return (name or (f"{prefix}.{pname}" if prefix else pname)), calls[:i + 1]
        return name, ()

    def _scope(self, modules: tuple) -> tuple:
        """The ModuleCalls of a scope (a tuple of nn.Module objects, outermost first)."""
        if not modules:
            return ()
        key = tuple(map(id, modules))
        calls = self._scopes.get(key)
        if calls is None:
            calls, parent, parent_module = [], None, None
            for m in modules:
                call = self._calls.get(id(m))
                if call is None:
                    call = self._calls[id(m)] = self._new_call(m, parent, parent_module)
                    self._call_list.append(call)
                    self._call_modules.append(m)
                calls.append(call)
                parent, parent_module = call, m
            calls = self._scopes[key] = tuple(calls)
        return calls

    def _new_call(self, module, parent: ModuleCall | None, parent_module) -> ModuleCall:
        """A module seen for the first time: named by its path under the module that called it."""
        key, kind = len(self._call_list), type(module).__name__
        if parent is None:
            return ModuleCall(key, "", kind, 0, None)
        paths = self._paths.get(parent.key)
        if paths is None:  # once per calling module: its submodules' paths, by identity
            paths = self._paths[parent.key] = {id(m): n for n, m in parent_module.named_modules() if n}
        rel = paths.get(id(module), kind)
        return ModuleCall(key, f"{parent.name}.{rel}" if parent.name else rel, kind, parent.depth + 1, parent.key)


def caller_namespace() -> dict:
    """The variables where user code called into tinygrad_lab: the locals over the globals of the
    first frame outside the package (in a notebook cell, that is the notebook's namespace)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "tinygrad_lab":
        frame = frame.f_back
    if frame is None:
        return {}
    try:
        return {**frame.f_globals, **frame.f_locals}
    finally:
        del frame
