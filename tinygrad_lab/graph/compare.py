"""A learner's piece of the engine beside the engine's own, node by node, on one graph.

    from tinygrad_lab.graph.compare import compare

    result = compare(loss, "unbroadcast", my_unbroadcast)
    print(result)          # every gradient as the engine's, or the first node where they differ
    result.first           # that Difference: the node, what differs, the numbers

`compare` runs the backward pass of `loss` twice on its graph (kept: retain_graph): once with the
engine's own pieces, once with `fn` in place of a seam (`tinygrad_lab.seams`), both through the
engine's step generator (`backward_steps`, as the stepper does). It then walks the engine's steps in
order and names the first node whose gradients differ: those that reached it ("received": the
gradient of one of its outputs) or those it sent on ("sent": the gradient for one of its inputs).
The leaves' `.grad` are as they were before; the graph can still be stepped or run afterwards.

It compares the seams a backward pass runs: an op's backward ("Mul.backward"), "unbroadcast",
"backward_order", "accumulate" and "im2col" (conv's backward recomputes its columns).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from .. import seams
from ..autograd.api import _seed_grads
from ..autograd.engine import _graph_nodes, backward_steps
from ..autograd.function import AccumulateGrad, edge
from ..autograd.tensor_base import TensorBase, make
from .capture import capture
from .model import Graph
from .nodes import GraphNode, arg_name
from .source import Source, backward_source, function_source, lines_run, only_what_ran

_BACKWARD_SEAMS = ("unbroadcast", "backward_order", "accumulate", "im2col")
_WHERE_IT_RUNS = {
    "unbroadcast": "it runs inside the backward of every op whose inputs were broadcast (add, mul, matmul, ...)",
    "backward_order": "it ran once, before the first node: it decided the order of every step",
    "accumulate": "it runs wherever two gradients meet: a tensor that fed several ops",
    "im2col": "it runs inside the convolution's backward, which recomputes the columns",
}


class Difference(NamedTuple):
    """Where the learner's pass first differs from the engine's.

    index       the step of the engine's pass (0: the output's node)
    node        the engine's node (a grad_fn, or an AccumulateGrad)
    graph_node  the same node in `Comparison.graph` (its id is the one the graph view shows)
    what        "received" (the gradient of output `position`), "sent" (the gradient for input
                `position`, named `argument`), or "did not run" (no gradient reached it)
    expected    the engine's gradient (a NumPy array; None: no gradient)
    got         the learner's pass' gradient
    max_error   the largest absolute difference (inf when the shapes or presence differ)
    """

    index: int
    node: Any
    graph_node: GraphNode | None
    what: str
    position: int
    argument: str
    expected: np.ndarray | None
    got: np.ndarray | None
    max_error: float

    @property
    def where(self) -> str:
        """The node in words: "node 4 (Mul)", "node 0 (parameter 'weight')"."""
        return _where(self.graph_node, self.node)

    def __str__(self) -> str:
        if self.what == "did not run":
            return f"{self.where} did not run: no gradient reached it (the engine's: {_show(self.expected)})"
        part = f"the gradient of its output {self.position}" if self.what == "received" else \
            f"the gradient it sent to {self.argument}"
        return (f"{self.where}, {part}: expected {_show(self.expected)}, got {_show(self.got)} "
                f"(max error {self.max_error:.3g})")


class NodeComparison(NamedTuple):
    """One node of the engine's pass, side by side with the learner's (what the comparison stepper shows).

    index       the step of the engine's pass
    node        the engine's node; `graph_node` the same node in `Comparison.graph`
    op          its op's name ("AccumulateGrad" for a leaf)
    received    ((expected, got), ...) per output: the gradient that reached it in each pass
    sent        ((argument, expected, got), ...) per input: the gradient it sent on in each pass
    ran         whether the learner's pass ran this node at all
    max_error   the largest absolute difference among them (inf: a shape or a gradient missing)
    agrees      every one of them the same within the comparison's tolerance
    """

    index: int
    node: Any
    graph_node: GraphNode | None
    op: str
    received: tuple
    sent: tuple
    ran: bool
    max_error: float
    agrees: bool

    @property
    def where(self) -> str:
        return _where(self.graph_node, self.node)


class Comparison:
    """What `compare` found. True when every gradient matched (within rtol/atol).

    seam       the seam's name
    fn         the learner's function that ran in the seam's place
    graph      the captured graph of the loss (names the nodes as the graph view does)
    steps      how many nodes the engine's pass ran
    first      the first Difference, in the engine's order (None: none)
    nodes      a NodeComparison for each node of the engine's pass, in its order
    error      what the learner's piece raised, if it raised; `failed_at` the node it was running
    identical  every gradient equal bit for bit (not only within tolerance)
    """

    def __init__(self, seam: str, graph: Graph, steps: int, first: Difference | None, identical: bool,
                 error: BaseException | None = None, failed_at: Any = None, nodes: tuple = (),
                 fn: Callable | None = None, lines: tuple = ({}, {})):
        self.seam, self.graph, self.steps, self.first = seam, graph, steps, first
        self.identical, self.error, self.failed_at = identical, error, failed_at
        self.nodes, self.fn = nodes, fn
        self.lines = lines  # (engine's, learner's): node -> the line numbers of the seam's backward that ran there

    def sources(self, at: NodeComparison) -> tuple[Source | None, Source | None, str]:
        """(the learner's code, the engine's code, a note) for what ran at node `at`: an op's backward
        at that op's nodes (each gradient's line marked); the piece itself for the other seams."""
        op_seam = self.seam.endswith(".backward")
        if op_seam and at.op != self.seam[:-len(".backward")]:
            return None, None, f"this node ran the engine's own {at.op}.backward: your {self.seam} runs at the " \
                               f"{self.seam[:-len('.backward')]} nodes"
        if op_seam:
            fn = at.node.fn
            yours = only_what_ran(backward_source(fn, self.fn), self.lines[1].get(at.node))
            engines = only_what_ran(backward_source(fn, seams.reference(self.seam)), self.lines[0].get(at.node))
            return yours, engines, ""
        return function_source(self.fn), function_source(seams.reference(self.seam)), _WHERE_IT_RUNS[self.seam]

    @property
    def first_index(self) -> int | None:
        """The step of the first node that differs (or that was running when the learner's piece raised)."""
        if self.first is not None:
            return self.first.index
        if self.failed_at is not None:
            return next((n.index for n in self.nodes if n.node is self.failed_at), None)
        return None

    def __bool__(self) -> bool:
        return self.first is None and self.error is None

    def __repr__(self) -> str:
        if self.error is not None:
            where = f" at {_where(self.graph.node_of(self.failed_at), self.failed_at)}" \
                if self.failed_at is not None else ""
            return f"<Comparison {self.seam}: it raised {type(self.error).__name__}{where}: {self.error}>"
        if self.first is not None:
            return f"<Comparison {self.seam}: the first difference is at {self.first}>"
        how = "bit for bit" if self.identical else "within tolerance"
        return f"<Comparison {self.seam}: every gradient as the engine's ({self.steps} nodes, {how})>"


def compare(loss: TensorBase, seam: str | type, fn: Callable, *, gradient: TensorBase | None = None,
            params: Mapping[str, TensorBase] | None = None, rtol: float = 1e-5, atol: float = 1e-7) -> Comparison:
    """Run the backward pass of `loss` with the engine's pieces and with `fn` in place of `seam`, and
    compare them node by node (see the module docstring). `params` names parameters in the graph."""
    name = seams.get(seam).name
    if not (name in _BACKWARD_SEAMS or name.endswith(".backward")):
        raise ValueError(f"compare runs backward passes, which do not run the seam {name!r}; it compares "
                         f"an op's backward, {', '.join(_BACKWARD_SEAMS)}")
    if edge(loss) is None:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    seed = _seed_grads((loss,), (gradient,) if gradient is not None else (), False)[0]
    graph = capture(loss, params=params)
    saved = _snapshot(edge(loss)[0])
    codes = (getattr(seams.reference(name), "__code__", None), getattr(fn, "__code__", None)) \
        if name.endswith(".backward") else (None, None)
    try:
        reference, ref_lines, broken = _run(loss, seed, codes[0])
        if broken is not None:  # the engine's own pass: its error is the caller's
            raise broken
        _restore(saved)
        with seams.replace(name, fn):
            learner, lines, error = _run(loss, seed, codes[1])
    finally:
        _restore(saved)
    first, identical = _first_difference(graph, reference, learner, rtol, atol)
    failed_at = None
    if error is not None:  # the node it was running: the engine's first one it did not finish
        failed_at = next((node for node in reference if node not in learner), None)
        first = None
    nodes = tuple(_side_by_side(graph, reference, learner, rtol, atol))
    return Comparison(name, graph, len(reference), first, identical and error is None, error, failed_at, nodes, fn,
                      (ref_lines, lines))


# ---------------------------------------------------------------- running the two passes

def _run(loss, seed, code=None) -> tuple:
    """One pass, as far as it got: node -> (gradients received, gradients sent), as host arrays, in the
    order the nodes ran; node -> the line numbers of `code`, the seam's backward, that ran there; and
    what the pass raised (None)."""
    out, lines = {}, {}
    steps = backward_steps([loss], [seed], retain_graph=True)
    try:
        while True:
            with lines_run(code) as ran:
                step = next(steps, None)
            if step is None:
                return out, lines, None
            out[step.node], lines[step.node] = _record(step), ran
    except Exception as e:  # the learner's code: reported, not raised
        return out, lines, e


def _record(step) -> tuple:
    """(gradients received, gradients sent) of one step; a gradient sent to an input that needs none
    goes nowhere (the engine drops it, as PyTorch does), so it is recorded as no gradient."""
    sent = step.grad_inputs
    if type(step.node) is not AccumulateGrad:
        sent = tuple(None if e is None else g for e, g in zip(step.node.edges, sent))
    return _host(step.grad_outputs), _host(sent)


def _host(grads) -> tuple:
    """Copies (a later step may accumulate into a .grad in place), on the host."""
    return tuple(None if g is None else np.array(g._device.backend.to_host(g._data), copy=True) for g in grads)


def _snapshot(root) -> list:
    """(tensor, its .grad's values) for every leaf and retain_grad tensor a pass from root writes."""
    tensors = []
    for n in _graph_nodes([root]):
        if type(n) is AccumulateGrad:
            if n.variable is not None:
                tensors.append(n.variable)
        elif n._retained:
            tensors.extend(t for t in (ref() for ref in n._retained.values()) if t is not None)
    return [(t, None if t._grad is None else t._grad._data.copy()) for t in tensors]


def _restore(saved: list) -> None:
    for t, before in saved:
        t._grad = None if before is None else make(before.copy(), t._device)


# ---------------------------------------------------------------- comparing

def _first_difference(graph: Graph, reference: dict, learner: dict, rtol: float, atol: float) -> tuple:
    """The first Difference in the engine's order (None), and whether everything was bit-identical."""
    identical = True
    for index, (node, (received, sent)) in enumerate(reference.items()):
        gnode = graph.node_of(node)
        if node not in learner:
            return Difference(index, node, gnode, "did not run", 0, "", received[0] if received else None,
                              None, float("inf")), False
        theirs_received, theirs_sent = learner[node]
        for what, ours, theirs in (("received", received, theirs_received), ("sent", sent, theirs_sent)):
            for i, (a, b) in enumerate(zip(ours, theirs)):
                same, error = _agree(a, b, rtol, atol)
                identical = identical and error == 0.0
                if not same:
                    argument = arg_name(node.fn, i) if what == "sent" and node.fn is not None else ""
                    return Difference(index, node, gnode, what, i, argument, a, b, error), False
    return None, identical


def _side_by_side(graph: Graph, reference: dict, learner: dict, rtol: float, atol: float):
    """A NodeComparison for each node of the engine's pass, in its order."""
    for index, (node, (received, sent)) in enumerate(reference.items()):
        ran = node in learner
        theirs_received, theirs_sent = learner[node] if ran else ((None,) * len(received), (None,) * len(sent))
        pairs = list(zip(received, theirs_received)) + list(zip(sent, theirs_sent))
        checked = [_agree(a, b, rtol, atol) for a, b in pairs]
        names = tuple(arg_name(node.fn, i) if node.fn is not None else "" for i in range(len(sent)))
        yield NodeComparison(index, node, graph.node_of(node), "AccumulateGrad" if node.fn is None else node.fn.__name__,
                             tuple(zip(received, theirs_received)), tuple(zip(names, sent, theirs_sent)), ran,
                             max((e for _, e in checked), default=0.0) if ran else float("inf"),
                             ran and all(same for same, _ in checked))


def _agree(a, b, rtol: float, atol: float) -> tuple:
    """(close enough, the largest absolute difference)."""
    if a is None or b is None:
        return a is None and b is None, 0.0 if a is None and b is None else float("inf")
    if a.shape != b.shape:
        return False, float("inf")
    if np.array_equal(a, b, equal_nan=True):
        return True, 0.0
    with np.errstate(invalid="ignore"):
        error = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)), error


def _show(arr) -> str:
    if arr is None:
        return "no gradient"
    flat = np.array2string(np.asarray(arr), precision=4, threshold=8, edgeitems=3, separator=", ")
    return f"{flat} (shape {list(arr.shape)})"


def _where(g: GraphNode | None, node) -> str:
    """A node in words, as the graph view shows it: "node 4 (Mul)", "node 0 (parameter 'weight')"."""
    if g is None:
        return str(node.name)
    what = g.op if g.kind == "op" else f"{g.kind} {g.name!r}" if g.name else g.kind
    return f"node {g.id} ({what})"
