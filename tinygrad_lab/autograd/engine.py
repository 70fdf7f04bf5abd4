"""The backward engine: reverse-mode autodiff, one graph node at a time.

Read `backward_steps` first: it is the whole algorithm. The graph's nodes are visited in an order
where every node comes before its inputs (`backward_order`: decreasing id, since a node is always
created after its inputs), so a node runs once, after every gradient meant for it has arrived.
`BackwardPass.step` runs one node: its backward turns the gradients of its outputs into gradients
for its inputs, and `BackwardPass.send` adds those to what waits at the inputs (`accumulate`).

`Tensor.backward()`, `autograd.grad()` and the stepper widget all run these same steps. For a
pass nobody watches, `BackwardPass.drain` is a faster driver of the same `step` (see there), so
what a student steps through is exactly what `loss.backward()` ran.
"""
from __future__ import annotations

import sys
from collections import deque
from heapq import heapify, heappop, heappush
from operator import attrgetter
from time import perf_counter
from typing import Iterator, Sequence

from .. import seams
from ..ops.elementwise import add
from ..ops.promotion import cast
from . import events
from .function import _FREED, AccumulateGrad, check_gradients, check_result, edge
from .grad_mode import state as _grad_state
from .tensor_base import TensorBase, make


class BackwardStep:
    """One node of the backward pass: the gradients that arrived at its outputs
    (`grad_outputs`) and those it sent to its inputs (`grad_inputs`, aligned with
    `node.edges`; for AccumulateGrad, the leaf's new `.grad`), and the `seconds` it took."""

    __slots__ = ("index", "node", "grad_outputs", "grad_inputs", "seconds")

    def __init__(self, index: int, node, grad_outputs: tuple, grad_inputs: tuple, seconds: float = 0.0):
        self.index = index
        self.node = node
        self.grad_outputs = grad_outputs
        self.grad_inputs = grad_inputs
        self.seconds = seconds

    def __repr__(self) -> str:
        return f"<BackwardStep {self.index}: {self.node.name}>"


def backward_steps(tensors: Sequence[TensorBase], grad_tensors: Sequence[TensorBase], *, retain_graph: bool = False,
                   create_graph: bool = False, inputs: Sequence[TensorBase] | None = None, capture: bool = False,
                   drain: bool = False, captured: list | None = None, pending: dict | None = None) -> Iterator[BackwardStep]:
    """Run backward from `tensors` seeded with `grad_tensors`, yielding one BackwardStep per node.

    inputs   restrict the pass to what reaches these tensors
    capture  (autograd.grad) do not touch `.grad`; the gradients of `inputs` are
             written into `captured` (a list, one slot per input) instead
    drain    the caller runs no code between steps (Tensor.backward): unless someone
             watches, the pass runs at once in the fast driver and yields nothing
    pending  a dict the pass keeps its waiting gradients in (node -> gradients): the nodes
             a gradient has reached that have not run yet. The one that runs next is the
             one with the highest id; the stepper reads it to show what comes next.
    """
    walk = BackwardPass(tensors, grad_tensors, retain_graph=retain_graph, create_graph=create_graph,
                        inputs=inputs, capture=capture, captured=captured, pending=pending)
    if drain and walk.unwatched():
        walk.drain()
        return
    index = 0
    for node in backward_order(walk.roots):  # every node before its inputs
        grads = walk.waiting.pop(node, None)   # the gradients of its outputs, all arrived
        if grads is None:
            continue                           # no gradient reached this node
        with walk.backward_mode() as mode:
            grads, sent = walk.step(node, grads)
        step = BackwardStep(index, node, grads, sent, mode.seconds)
        if events.observed():
            events.publish(step)
        yield step
        index += 1


def backward_order(roots: Sequence) -> list:
    """Every node reachable from `roots`, each before all of its inputs: decreasing id, as a node
    is created after its inputs (iterative: no recursion limit). The "backward_order" seam."""
    seen = set(roots)
    stack = list(seen)
    while stack:
        for e in stack.pop().edges:
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                stack.append(e[0])
    return sorted(seen, key=_node_id, reverse=True)


_node_id = attrgetter("id")
_graph_nodes = backward_order  # the reference walk, also while a learner's order is in force (the stepper, capture)


def accumulate(total: TensorBase, g: TensorBase) -> TensorBase:
    """Two gradients for the same output of a node (it fed two ops), combined: their sum.
    Differentiable, so that with create_graph the sum is part of the gradient's graph.
    The "accumulate" seam."""
    return add(total, g)


class BackwardPass:
    """One backward pass: the gradients waiting at nodes that have not run yet (`waiting`), the
    root nodes it starts from, and what it is for (every leaf's `.grad`, or only `inputs`';
    written into `.grad`, or captured for `autograd.grad`)."""

    # a pass for every leaf's .grad keeps these as they are (restrict_to sets them for `inputs`)
    inputs = None      # the tensors whose gradients are wanted, or None for every leaf
    capture = False    # write the gradients of `inputs` into `captured` (autograd.grad), not into .grad
    targets = None     # (node, output_nr) -> position in `inputs`: where each wanted gradient arrives
    needed = None      # the nodes from which some input in `inputs` can be reached
    # the fast driver's (drain)
    heap = None        # the nodes with a gradient waiting, by decreasing id
    owned = None       # the leaves whose waiting gradient nothing else refers to (may be kept without a copy)

    def __init__(self, tensors, grad_tensors, *, retain_graph=False, create_graph=False, inputs=None,
                 capture=False, captured=None, pending=None):
        self.waiting: dict = {} if pending is None else pending  # node -> [gradient per output]: arrived, not yet run
        self.retain_graph, self.create_graph, self.captured = retain_graph, create_graph, captured
        self.roots = []  # the nodes of `tensors`, where the pass starts
        for t, g in zip(tensors, grad_tensors):
            e = edge(t)
            if e is None:
                raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
            node, nr = e
            if node not in self.waiting:
                self.roots.append(node)
            buf = self.waiting.setdefault(node, [None] * node.n_outputs)
            buf[nr] = g if buf[nr] is None else accumulate(buf[nr], g)
        if inputs is not None:  # not every leaf's .grad is wanted
            self.restrict_to(inputs, capture)

    def restrict_to(self, inputs, capture: bool) -> None:
        """backward(inputs=...) and autograd.grad: only the gradients of `inputs` are wanted, added
        into their .grad or, with `capture`, written into `captured`; what leads to none of them
        does not run."""
        self.inputs, self.capture = inputs, capture
        self.targets, self.needed = _wanted(self.roots, inputs)
        if self.captured is None:
            self.captured = []
        self.captured[:] = [None] * len(inputs)
        for root in self.roots:
            if root not in self.needed:
                self.waiting.pop(root, None)

    def step(self, node, grads: list) -> tuple:
        """Run one node on the gradients of its outputs; returns (those gradients, after the hooks
        ran; what it sent to its inputs; for a leaf, its new .grad)."""
        if node.__class__ is AccumulateGrad:
            return grads, (self.leaf_step(node, grads[0]),)
        if node._prepares_grads:  # hooks, retain_grad, several outputs
            grads = _run_prehooks(node, grads)
        if self.targets and self.capture_outputs(node, grads):
            return grads, (None,) * len(node.edges)  # a captured input: nothing upstream is wanted
        sent = node.fn.backward(node, *grads)  # one gradient (or None) per argument of forward
        if sent.__class__ is not tuple:
            sent = (sent,)
        if not node.fn.array_forward:
            sent = check_gradients(node, sent)  # built-in ops' gradients are right by construction
        self.send(node, sent, grads)
        if not self.retain_graph:
            node._saved = _FREED  # what forward saved is no longer needed
        return grads, sent

    def send(self, node, sent: tuple, grads) -> None:
        """Each gradient node's backward returned goes to the node and output it is for."""
        for e, g in zip(node.edges, sent):
            if e is None or g is None:
                continue
            to, nr = e
            if self.needed is not None and to not in self.needed:
                continue  # leads to no wanted input
            buf = self.waiting.get(to)
            if buf is None:  # the first gradient for this node
                buf = self.waiting[to] = [None] * to.n_outputs
                if self.heap is not None:
                    heappush(self.heap, (-to.id, to))  # the fast driver finds the order as it goes
            buf[nr] = g if buf[nr] is None else accumulate(buf[nr], g)
            if to.__class__ is AccumulateGrad and self.owned is not None and _stealable(buf[nr], g, node, grads, sent):
                self.owned.add(to)

    def leaf_step(self, node, g: TensorBase):
        """AccumulateGrad: run the leaf's hooks, then add g into its .grad. Returns the leaf's new .grad
        (None for a leaf that no longer exists, whose gradient nobody can read)."""
        leaf = node._variable()
        if leaf is None:
            return None
        owned = node in self.owned if self.owned else False
        if leaf._meta is not None and leaf._meta.hooks:
            g = _call_hooks(leaf._meta.hooks.values(), g)
            owned = False  # a hook may have kept it
        if self.inputs is not None:  # only some gradients are wanted
            return self.leaf_target(node, leaf, g, owned)
        accumulate_grad(leaf, g, self.create_graph, owned)
        return leaf._grad

    def leaf_target(self, node, leaf, g: TensorBase, owned: bool):
        """A leaf's gradient when only `inputs`' are wanted: captured (autograd.grad; returned) or
        added into .grad if the leaf is one of them."""
        pos = self.targets.get((node, 0))
        if self.capture:
            if pos is not None:
                self.captured[pos] = g
            return g
        if pos is not None:
            accumulate_grad(leaf, g, self.create_graph, owned)
        return leaf._grad

    def capture_outputs(self, node, grads) -> bool:
        """Record gradients of non-leaf `inputs`; True when the node need not run further
        (autograd.grad, and no other wanted input lies upstream)."""
        hit = False
        for nr, g in enumerate(grads):
            pos = self.targets.get((node, nr))
            if pos is not None:
                hit = True
                if self.capture:
                    self.captured[pos] = g
                else:  # backward(inputs=[non_leaf]) fills its .grad
                    accumulate_grad(self.inputs[pos], g, self.create_graph)
        return hit and self.capture and not any(e is not None and e[0] in self.needed for e in node.edges)

    def backward_mode(self) -> "_BackwardMode":
        """While backward runs: grad mode on only to record the gradients' own graph (create_graph);
        the ops it runs publish no events unless create_graph records them."""
        return _BackwardMode(self.create_graph)

    def unwatched(self) -> bool:
        """Whether the fast driver may run this pass: nobody subscribes to its steps, and no learner's
        walk pieces are in force (the fast driver calls neither backward_order nor, when it steals, a
        learner's accumulate): while a learner's piece is in force anywhere, backward_steps runs."""
        return not events.observed() and not seams.live

    # ---- the fast driver ----
    def drain(self) -> None:
        """Run every step of the pass at once, for a caller that watches none of them (Tensor.backward,
        autograd.grad): the same `step`, driven faster than backward_steps drives it.
        - The order is found as the pass goes: a node joins a max-heap of ids when its first
          gradient arrives (`send`), so the graph is not walked first. It is the same order:
          when a node comes off the heap, every node that can send it a gradient has run.
        - Grad mode is set once, no BackwardStep is built.
        - Gradient stealing (`_stealable`): a leaf may keep a fresh gradient array as its .grad
          without a copy, as PyTorch's AccumulateGrad does.
        Measured on (a*b + c).relu().sum(): the backward of 4 elements 29.4 -> 22.2 us (this driver
        instead of the loop); forward and backward of 1M elements 8.1 -> 7.6 ms (stealing)."""
        heap = self.heap = [(-n.id, n) for n in self.waiting]
        heapify(heap)
        if not self.create_graph:  # a gradient that is part of a graph is never kept as .grad
            self.owned = set()
        step, waiting = self.step, self.waiting
        with self.backward_mode():
            while heap:
                node = heappop(heap)[1]
                step(node, waiting.pop(node))


class _BackwardMode:
    """Grad mode and muting as backward_mode says, and how long the block took (`seconds`: a step's time,
    which the stepper and the profiler show)."""

    def __init__(self, create_graph: bool):
        self.create_graph = create_graph
        self.seconds = 0.0

    def __enter__(self):
        self.prev = _grad_state.enabled, events.state.muted
        _grad_state.enabled = self.create_graph
        events.state.muted = self.prev[1] or not self.create_graph
        self.start = perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = perf_counter() - self.start
        _grad_state.enabled, events.state.muted = self.prev


def _wanted(roots: list, inputs) -> tuple:
    """For backward(inputs=...) and autograd.grad: where each input's gradient arrives
    ((node, output_nr) -> its position in inputs) and the nodes from which one can be reached."""
    targets = {}
    for i, t in enumerate(inputs):
        e = edge(t)
        if e is None:
            raise RuntimeError(f"input {i} of the gradient does not require grad")
        targets[e] = i
    ends = {n for n, _ in targets}
    needed = set()
    for n in reversed(_graph_nodes(roots)):  # inputs first
        if n in ends or any(e is not None and e[0] in needed for e in n.edges):
            needed.add(n)
    return targets, needed


# ---------------------------------------------------------------- gradient stealing (the fast driver)

_STEAL_MIN = 4096  # elements: below this a copy costs less than checking whether it can be skipped


def _stealable(total, g, node, grads, sent) -> bool:
    """Whether the gradient now waiting at a leaf is an array nothing else refers to, so that
    AccumulateGrad may keep it as .grad instead of copying it: a sum the pass made itself, or a
    large gradient `g` that node's backward made afresh (not a view, which workspace buffers and
    broadcasts are; not an incoming gradient passed on; not sent to two inputs). A user Function's
    backward may return anything: never stolen."""
    if total is not g:
        return True
    arr = g._data
    if arr.size < _STEAL_MIN or not node.fn.array_forward or not g._device.backend.fresh(arr):
        return False
    for x in grads:  # identity, not ==: a Tensor's == is elementwise
        if x is g:
            return False
    times = 0
    for x in sent:
        times += x is g
    return times == 1


# ---------------------------------------------------------------- hooks and .grad

def _run_prehooks(node, grads: list) -> list:
    """Tensor hooks (`register_hook`), then retain_grad, on each output's gradient;
    missing gradients of multi-output nodes become zeros."""
    pre = node._pre_hooks
    if pre:
        grads = list(grads)
        for nr, hooks in pre.items():
            if grads[nr] is not None:
                grads[nr] = _call_hooks(hooks.values(), grads[nr])
    if node._retained:
        for nr, ref in node._retained.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                accumulate_grad(t, grads[nr], grads[nr]._requires_grad)
    if node.n_outputs > 1 and node._materialize:
        grads = [_zeros_like_output(node, nr) if g is None else g for nr, g in enumerate(grads)]
    return tuple(grads)


def _call_hooks(hooks, g):
    """Tensor hooks in registration order; one that returns a tensor replaces the gradient, which
    must keep its size and dtype (as PyTorch checks), one that returns None leaves it."""
    for h in list(hooks):
        r = h(g)
        if r is None:
            continue
        name = getattr(h, "__name__", type(h).__name__)
        if not isinstance(r, TensorBase):
            raise TypeError(f"expected Tensor, but hook '{name}' returned '{type(r).__name__}' "
                            f"(a hook returns the new gradient, a tensor, or None to keep it)")
        if r._data.shape != g._data.shape:
            raise RuntimeError(f"hook '{name}' has changed the size of value (from {list(g._data.shape)} "
                               f"to {list(r._data.shape)})")
        if r._data.dtype != g._data.dtype:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was {g.dtype} got {r.dtype})")
        g = r
    return g


def _zeros_like_output(node, nr):
    shape, dtype = node.output_shapes[nr], node.output_dtypes[nr]
    return make(node.xp.zeros(shape, dtype=dtype), node.device)


def accumulate_grad(leaf: TensorBase, g: TensorBase, create_graph: bool, owned: bool = False) -> None:
    """leaf.grad += g (PyTorch's AccumulateGrad), cast to the leaf's dtype. An `owned` g becomes
    the new .grad itself; any other is copied, as it may be shared or a broadcast view."""
    if g._data.dtype != leaf._data.dtype:
        g = cast(g, leaf._data.dtype)
    old = leaf._grad
    if old is None:
        leaf._grad = g if create_graph or owned else make(g._data.copy(), leaf._device)
    elif create_graph or old._requires_grad:
        leaf._grad = add(old, g)
    else:  # in place: .grad keeps its memory
        leaf._device.backend.xp.add(old._data, g._data, out=old._data)
        old._bump_version()


def run_backward(tensors, grad_tensors, **kwargs) -> list:
    """Run a whole pass (the fast driver unless someone watches); return the captured gradients
    (autograd.grad)."""
    captured: list = []
    deque(backward_steps(tensors, grad_tensors, drain=True, captured=captured, **kwargs), maxlen=0)
    return captured


def _check_order(order, roots):
    if not isinstance(order, (list, tuple)):
        raise TypeError(f"backward_order returned {type(order).__name__}: it must return a list of nodes")
    return order


def _check_accumulate(out, total, g):
    return check_result(out, total._data.shape, f"accumulate of two gradients of shape {list(total._data.shape)}")


_here = sys.modules[__name__]
seams.register("backward_order", _here, "backward_order", adapt=seams.checked(_check_order), doc=(
    "The order the backward pass visits the graph's nodes in: backward_order(roots) -> a list of every node "
    "reachable from the root nodes (through node.next_functions), each before all of its inputs (a reverse "
    "topological order). A node runs when its turn comes, with the gradients that have reached it by then."))
seams.register("accumulate", _here, "accumulate", adapt=seams.checked(_check_accumulate), doc=(
    "How two gradients for the same output of a node combine (the output fed several ops): "
    "accumulate(total, grad) -> a tensor of the same shape (the engine's: their sum). With create_graph "
    "it must be differentiable (use tensor ops)."))
