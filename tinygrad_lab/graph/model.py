"""The recorded graph: what each node knows, and the `Graph` that holds the nodes.

A `Graph` is built after the fact by `capture()` or live by `record()`; `render`
draws it and `BackwardStepper` annotates it with gradients. Node ids are
graph-local and follow creation order (never `id()` nor the engine's global
counter), so the same program gives the same graph whatever ran before it.
Nodes keep summaries of values, never the arrays: a recorded training loop must
not keep its activations alive.
"""
from __future__ import annotations

import functools
import inspect
import math
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

import numpy as np

from ..autograd.function import _FREED, AccumulateGrad, RemovableHandle, _SavedOutput
from ..autograd.tensor_base import TensorBase
from ..nn.parameter import Parameter

PREVIEW = 8  # values kept from each tensor (flattened, from the start)


class TensorSummary(NamedTuple):
    """A tensor's values in a few numbers, kept instead of the tensor (which may be big, or gone).
    The statistics are None for an empty tensor."""

    shape: tuple
    dtype: str
    numel: int
    min: float | None
    max: float | None
    mean: float | None
    norm: float | None
    preview: tuple  # the first PREVIEW values, flattened


@functools.cache
def dtype_name(dtype) -> str:
    """'float32' for an array's dtype (str(dtype) is slow, and recording calls this for every op)."""
    return str(dtype)


def summarize(arr) -> TensorSummary:
    """Summarise a backend array (NumPy or CuPy): four reductions and a short preview, read back as one
    small array (on a GPU every read is a sync; np.stack and np.concatenate dispatch to CuPy's)."""
    shape, dtype, n = arr.shape, dtype_name(arr.dtype), arr.size
    if n == 0:
        return TensorSummary(shape, dtype, 0, None, None, None, None, ())
    flat = arr.reshape(-1)
    if flat.dtype.kind != "f":
        flat = flat.astype("float64")
    stats = np.stack([flat.min(), flat.max(), flat.sum(), flat.dot(flat)])
    lo, hi, total, sq, *preview = np.concatenate([stats, flat[:PREVIEW]]).tolist()
    return TensorSummary(shape, dtype, n, lo, hi, total / n, math.sqrt(sq) if sq >= 0 else math.nan, tuple(preview))


class SavedTensor(NamedTuple):
    """Something an op kept for its backward: which input it is (by the forward's argument
    name), "output" for its own output, or "array" for a plain array such as a mask."""

    name: str
    shape: tuple
    dtype: str
    nbytes: int


class ModuleCall(NamedTuple):
    """An `nn.Module` whose `__call__` was running when nodes were made.

    key     graph-local number, in order of first appearance
    name    path from the outermost module, as `named_modules()` spells it ("" for that module)
    type    the module's class name
    depth   0 for the outermost module, 1 for its children, ...
    parent  key of the enclosing call, None for the outermost
    """

    key: int
    name: str
    type: str
    depth: int
    parent: int | None

    @property
    def label(self) -> str:
        return f"{self.name} ({self.type})" if self.name else self.type


@functools.cache
def _forward_arg_names(fn: type) -> tuple:
    """The names of `fn.forward`'s arguments after ctx; a *varargs name stays last."""
    try:
        params = list(inspect.signature(fn.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return ()
    return tuple(("*" if p.kind is p.VAR_POSITIONAL else "") + p.name for p in params)


def arg_name(fn: type | None, i: int) -> str:
    """The name of forward argument `i` of Function `fn` ("tensors[1]" inside *tensors, "arg2" if unknown)."""
    names = _forward_arg_names(fn) if fn is not None else ()
    if i < len(names) and not names[i].startswith("*"):
        return names[i]
    if names and names[-1].startswith("*"):
        return f"{names[-1][1:]}[{i - len(names) + 1}]"
    return f"arg{i}"


def saved_names(node) -> list:
    """Per entry node._saved of engine `node`: which forward argument it is ("output" for the op's
    own output, "array" for a plain array such as a mask); each argument is matched once, so
    x * x, which saves x twice, names them a and b."""
    taken: set = set()
    return [_saved_name(node, value, taken) for value, _ in node._saved]


def _saved_name(node, value, taken: set) -> str:
    if value.__class__ is _SavedOutput:
        return "output"
    if not isinstance(value, TensorBase):
        return "array"
    for i, (e, shape) in enumerate(zip(node.edges, node.input_shapes)):
        if i not in taken and (
                (e is not None and (e[0] is value._accum or (e[0] is value._grad_fn and e[1] == value._output_nr)))
                or (e is None and not value._requires_grad and shape == value._data.shape)):  # a constant
            taken.add(i)
            return arg_name(node.fn, i)
    return "input"


def saved_info(node) -> tuple | None:
    """What engine `node` saved for backward (None: freed by a backward pass that did not retain the graph)."""
    if node._saved is _FREED:
        return None
    out = []
    for (value, _), name in zip(node._saved, saved_names(node)):
        arr = value.data if value.__class__ is _SavedOutput else value._data if isinstance(value, TensorBase) else value
        if hasattr(arr, "nbytes") and hasattr(arr, "shape"):
            out.append(SavedTensor(name, arr.shape, dtype_name(arr.dtype), arr.nbytes))
    return tuple(out)


class IdentityMap:
    """object -> value by identity, without keeping the object alive (tensors, engine nodes).
    Entries of dead objects stay until their id is reused; a lookup checks the object is the same."""

    __slots__ = ("_d",)

    def __init__(self):
        self._d: dict = {}

    def add(self, obj, value) -> None:
        self._d[id(obj)] = (weakref.ref(obj), value)

    def get(self, obj):
        hit = self._d.get(id(obj))
        return hit[1] if hit is not None and hit[0]() is obj else None


class GraphNode:
    """One node of a recorded graph: an op (with the tensor it made) or a leaf tensor.

    id             graph-local creation order (0, 1, ...)
    kind           "op", "input" or "parameter"
    op             the Function's class name ("Mul"), None for leaves
    fn             the Function class, None for leaves
    name           a leaf's name: from `params=`, or its path in the module that owns it
    inputs         per tensor argument, in order: (id of the node that made it, output number)
    positions      per tensor argument: its position among the forward's arguments (see `input_names`)
    shape, dtype   of the (first) output; dtype None when the graph cannot know it
    device         where the tensor lives ("cpu", "cuda:0")
    output_shapes  one shape per output
    requires_grad  whether the output requires grad
    scope          the module calls it was made inside, outermost first
    saved          what the op kept for backward; None when already freed
    value          summary of the output's values (None when unknown)
    grad           summary of the gradient of the output once a backward pass was seen (a leaf: its .grad)
    """

    __slots__ = ("id", "kind", "fn", "name", "inputs", "positions", "output_shapes", "dtype", "device",
                 "requires_grad", "scope", "saved", "value", "_grad", "_leaf")

    def __init__(self, kind: str, fn: type | None, name: str | None, inputs: tuple, positions: tuple,
                 output_shapes: tuple, dtype: str | None, device: str, requires_grad: bool, scope: tuple,
                 saved: tuple | None, value: TensorSummary | None, leaf: TensorBase | None = None):
        self.id, self.kind, self.fn, self.name = -1, kind, fn, name
        self.inputs, self.positions, self.output_shapes, self.dtype, self.device = (
            inputs, positions, output_shapes, dtype, device)
        self.requires_grad, self.scope, self.saved, self.value = requires_grad, scope, saved, value
        self._grad = None
        self._leaf = weakref.ref(leaf) if leaf is not None else None

    @property
    def op(self) -> str | None:
        return self.fn.__name__ if self.fn is not None else None

    @property
    def shape(self) -> tuple:
        return self.output_shapes[0]

    @property
    def input_names(self) -> tuple:
        """Per tensor argument: the forward's argument name ("a", "b", "x", "w", ...)."""
        return tuple(arg_name(self.fn, i) for i in self.positions)

    @property
    def module(self) -> ModuleCall | None:
        """The innermost module call the node was made in."""
        return self.scope[-1] if self.scope else None

    @property
    def grad(self) -> TensorSummary | None:
        """The gradient of an op's output seen in a backward pass; a leaf's current `.grad`
        (read when asked: the leaf keeps it, so recording need not)."""
        if self._leaf is None:
            return self._grad
        leaf = self._leaf()
        return summarize(leaf._grad._data) if leaf is not None and leaf._grad is not None else None

    def __repr__(self) -> str:
        what = self.op if self.kind == "op" else f"{self.kind} {self.name!r}" if self.name else self.kind
        dtype = f" {self.dtype}" if self.dtype else ""
        return f"<GraphNode {self.id}: {what} {self.shape}{dtype} <- {[i for i, _ in self.inputs]}>"


class Graph:
    """The ops and leaf tensors that produced some tensors, in creation order (`nodes[i].id == i`).

    Built by `capture()` (after the fact) or `record()` (live, growing as ops run).
    `subscribe(callback)` calls `callback(event, node)` with event "node" for each new
    node and "grad" when a node's gradient is seen.
    """

    def __init__(self, params: Mapping[str, TensorBase] | None = None):
        self.nodes: list[GraphNode] = []
        self._consumers: list[int] = []      # per node: how many ops use its output
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
        return tuple(self.nodes[i] for i in sorted(self._output_ids()))

    def _output_ids(self) -> set:
        if self._roots is not None:
            return set(self._roots)
        return {i for i, c in enumerate(self._consumers) if c == 0}

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

    def __repr__(self) -> str:
        kinds = [n.kind for n in self.nodes]
        outs = ", ".join(f"{n.op or n.kind} {n.shape}" for n in self.outputs)
        return (f"<Graph: {len(kinds)} nodes ({kinds.count('op')} ops, {kinds.count('input')} inputs, "
                f"{kinds.count('parameter')} parameters); outputs: {outs or 'none'}>")

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
        from .render import to_dot
        return to_dot(self, **options)

    def to_svg(self, **options) -> str:
        """SVG drawn by Graphviz `dot`; raises GraphvizNotFound when it is not installed."""
        from .render import to_svg
        return to_svg(self, **options)

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
        self._consumers.append(0)
        for src, _ in node.inputs:
            self._consumers[src] += 1
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
