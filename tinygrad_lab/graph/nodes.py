"""What each node of a recorded graph knows: its op, shapes, scope, saved tensors and
summaries of its value and gradient (never the arrays: a recorded training loop must
not keep its activations alive), and `DrawnGraph`, what drawing needs from a graph.

The lowest module of the package: `summarise` and `render` read these, and `model.Graph`
(which holds the nodes and draws itself through `render`) sits above them all.
"""
from __future__ import annotations

import functools
import inspect
import math
import weakref
from typing import NamedTuple, Protocol

import numpy as np

from ..autograd.function import _FREED, _SavedOutput
from ..autograd.tensor_base import TensorBase

PREVIEW = 8  # values kept from each tensor (flattened, from the start)
# The attribute `record()` leaves on each engine node it sees: the summary of the node's output, so a
# graph captured later from the same tensors shows values no op saved (the engine frees the rest)
RECORDED_VALUE = "recorded_value"


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


class DrawnGraph(Protocol):
    """What `summarise` and `render` read from a graph (`model.Graph` is one)."""

    nodes: list[GraphNode]
    modules: tuple[ModuleCall, ...]
    consumers: list[int]

    def output_ids(self) -> set[int]: ...
