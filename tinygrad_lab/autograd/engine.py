"""The backward engine: reverse-mode autodiff as a generator of steps.

`backward_steps` yields one `BackwardStep` per graph node it runs, in a
deterministic topological order (decreasing node id: every node was created
after its inputs, so it runs after all of its consumers). The order is found
as the pass goes: a node joins a max-heap of ids when its first gradient
arrives, so the graph is never walked twice. `Tensor.backward()`
and `autograd.grad()` drain it; the stepper widget advances it one node at a time,
so what a student steps through is exactly what ran.
"""
from __future__ import annotations

from collections import deque
from heapq import heapify, heappop, heappush
from operator import attrgetter
from typing import Iterator, Sequence

from . import events
from .function import _FREED, AccumulateGrad, edge
from .grad_mode import state as _grad_state
from .tensor_base import TensorBase, make


class BackwardStep:
    """One node of the backward pass: the gradients that arrived at its outputs
    (`grad_outputs`) and those it sent to its inputs (`grad_inputs`, aligned with
    `node.edges`; for AccumulateGrad, the leaf's new `.grad`)."""

    __slots__ = ("index", "node", "grad_outputs", "grad_inputs")

    def __init__(self, index: int, node, grad_outputs: tuple, grad_inputs: tuple):
        self.index = index
        self.node = node
        self.grad_outputs = grad_outputs
        self.grad_inputs = grad_inputs

    def __repr__(self) -> str:
        return f"<BackwardStep {self.index}: {self.node.name}>"


def _add(a: TensorBase, b: TensorBase) -> TensorBase:
    from ..ops.elementwise import add  # the engine sits above the ops
    return add(a, b)


def _checked(node, out: tuple) -> tuple:
    """The gradients a backward returned, checked: one per forward argument (extra trailing Nones are
    allowed, as in PyTorch), each None or a tensor of its input's shape; otherwise an error naming
    the function. Run for user Functions (built-in ops' gradients are right by construction, and tested)."""
    n = len(node.edges)
    if len(out) != n:
        if not (len(out) > n and all(g is None for g in out[n:])):
            raise RuntimeError(f"function {node.name} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(out)})")
        out = out[:n]
    for i, (g, expected) in enumerate(zip(out, node.input_shapes)):
        if g is None or node.edges[i] is None:
            continue
        if not isinstance(g, TensorBase):
            raise TypeError(f"{node.name} returned a gradient of type {type(g).__name__} at index {i}; "
                            f"expected a Tensor or None")
        if g._data.shape != expected:
            raise RuntimeError(f"Function {node.name} returned an invalid gradient at index {i} - got shape "
                               f"{list(g._data.shape)} but expected shape compatible with {list(expected)}")
    return out


_node_id = attrgetter("id")


def _graph_nodes(roots: Sequence) -> list:
    """All nodes reachable from `roots`, in decreasing id order (iterative: no recursion limit)."""
    seen = set(roots)
    stack = list(seen)
    while stack:
        for e in stack.pop().edges:
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                stack.append(e[0])
    return sorted(seen, key=_node_id, reverse=True)


def _needed(order: list, targets: set) -> set:
    """Nodes from which a target can be reached (ascending id = inputs first)."""
    needed = set()
    for n in reversed(order):
        if n in targets or any(e is not None and e[0] in needed for e in n.edges):
            needed.add(n)
    return needed


def backward_steps(tensors: Sequence[TensorBase], grad_tensors: Sequence[TensorBase], *,
                   retain_graph: bool = False, create_graph: bool = False,
                   inputs: Sequence[TensorBase] | None = None,
                   capture: bool = False, drain: bool = False,
                   captured: list | None = None, pending: dict | None = None) -> Iterator[BackwardStep]:
    """Run backward from `tensors` seeded with `grad_tensors`, one node per step.

    inputs   restrict the pass to what reaches these tensors
    capture  (autograd.grad) do not touch `.grad`; the gradients of `inputs` are
             written into `captured` (a list, one slot per input) instead
    drain    the caller runs no code between steps (Tensor.backward): grad mode is
             set once for the whole pass, and unless someone subscribes to events
             no BackwardStep objects are built and nothing is yielded
    pending  a dict the pass keeps its waiting gradients in (node -> gradients): the nodes
             a gradient has reached that have not run yet. The one that runs next is the
             one with the highest id; the stepper reads it to show what comes next.
    """
    roots = []
    buffers: dict = {} if pending is None else pending
    for t, g in zip(tensors, grad_tensors):
        e = edge(t)
        if e is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        node, nr = e
        roots.append(node)
        buf = buffers.setdefault(node, [None] * node.n_outputs)
        buf[nr] = g if buf[nr] is None else _add(buf[nr], g)
    # The nodes waiting for their turn, highest id first (ids are unique, so nodes are never compared).
    # Node ids grow along the graph, so when a node comes off the heap every node that can send it a
    # gradient has run: each of them has a larger id and got into the heap from a node larger still.
    heap = [(-n.id, n) for n in buffers]
    heapify(heap)

    targets = {}  # (node, output_nr) -> position in inputs
    needed = None
    if inputs is not None:
        for i, t in enumerate(inputs):
            e = edge(t)
            if e is None:
                raise RuntimeError(f"input {i} of the gradient does not require grad")
            targets[e] = i
        needed = _needed(_graph_nodes(roots), {n for n, _ in targets})
    if captured is None:
        captured = []
    captured[:] = [None] * (len(inputs) if inputs is not None else 0)

    prev_mode = _grad_state.enabled
    muted = events.state.muted
    publish = bool(events.subscribers) and not muted
    backward_mode = (create_graph, muted or not create_graph)  # backward's own ops are not published
    step_index = 0
    # Leaves whose pending gradient is a fresh array nothing else holds: AccumulateGrad may keep it as
    # .grad instead of copying (PyTorch "steals" such gradients too). Only when no step object can
    # hold on to it (drained, unobserved) and no graph of the backward is built.
    owned: set | None = set() if drain and not publish and not create_graph else None
    try:
        if drain:
            _grad_state.enabled, events.state.muted = backward_mode
        while heap:
            node = heappop(heap)[1]
            grads = buffers.pop(node)
            if needed is not None and node not in needed:
                continue
            if not drain:
                _grad_state.enabled, events.state.muted = backward_mode
            if type(node) is AccumulateGrad:
                out = _leaf_step(node, grads[0], targets, captured, capture, inputs is None, create_graph,
                                 owned is not None and node in owned)
            else:
                if node._pre_hooks or node._retained or node.n_outputs > 1:
                    grads = _run_prehooks(node, grads)
                if targets and _capture_outputs(node, grads, targets, captured, capture, inputs, needed,
                                                create_graph):
                    out = (None,) * len(node.edges)  # a captured input: nothing upstream is wanted
                else:
                    # one output (almost every node): a call without *grads builds no argument tuple
                    out = node.fn.backward(node, grads[0]) if len(grads) == 1 else node.fn.backward(node, *grads)
                    if type(out) is not tuple:
                        out = (out,)
                    edges = node.edges
                    if len(out) != len(edges) or not node.fn.array_forward:
                        out = _checked(node, out)
                    for e, g in zip(edges, out):
                        if e is None or g is None:
                            continue
                        nxt, nr = e
                        if needed is not None and nxt not in needed:
                            continue
                        buf = buffers.get(nxt)
                        if buf is None:
                            buf = buffers[nxt] = [None] * nxt.n_outputs
                            heappush(heap, (-nxt.id, nxt))
                        if buf[nr] is None:
                            buf[nr] = g
                            if (owned is not None and nxt.__class__ is AccumulateGrad and g._data.size >= _STEAL_MIN
                                    and _fresh(node, g, grads, out)):
                                owned.add(nxt)
                        else:
                            buf[nr] = _add(buf[nr], g)  # a new sum: nobody else holds it
                            if owned is not None and nxt.__class__ is AccumulateGrad:
                                owned.add(nxt)
                    if not retain_graph:
                        node._saved = _FREED
            if drain and not publish:
                continue  # a drained pass yields nothing: no step is built, none is looked at
            _grad_state.enabled, events.state.muted = prev_mode, muted
            step = BackwardStep(step_index, node, tuple(grads), out)
            step_index += 1
            if publish:
                events.publish(step)
            yield step
            if drain:
                _grad_state.enabled, events.state.muted = backward_mode
    finally:
        _grad_state.enabled = prev_mode
        events.state.muted = muted


_STEAL_MIN = 4096  # elements: below this a copy costs less than checking whether it can be skipped


def _fresh(node, g, grads, out) -> bool:
    """Whether gradient g, returned by a built-in op's backward, is an array nothing else refers to:
    not a view (workspace buffers and broadcasts are views), not an incoming gradient passed
    through, not sent to two inputs. A user Function's backward may return anything: never fresh."""
    arr = g._data
    if not node.fn.array_forward or arr.base is not None:
        return False
    flags = arr.flags
    if not (flags.writeable and flags.c_contiguous):
        return False
    for x in grads:  # identity, not ==: a Tensor's == is elementwise
        if x is g:
            return False  # an incoming gradient passed on
    sent = 0
    for x in out:
        sent += x is g
    return sent == 1


def _leaf_step(node, g, targets, captured, capture, accumulate_all, create_graph, owned=False) -> tuple:
    """AccumulateGrad: run the leaf's hooks, then add g into its .grad (or capture
    it for autograd.grad). `owned`: g is a fresh array the leaf may keep without copying."""
    leaf = node._variable()
    if leaf is None:  # the leaf no longer exists: nobody can read its gradient
        return (None,)
    m = leaf._meta
    if m is not None and m.hooks:
        g = _call_hooks(m.hooks.values(), g)
        owned = False  # a hook may have kept it
    if capture:
        pos = targets.get((node, 0))
        if pos is not None:
            captured[pos] = g
        return (g,)
    if accumulate_all or (node, 0) in targets:
        _accumulate(leaf, g, create_graph, owned)
    return (leaf._grad,)


def _capture_outputs(node, grads, targets, captured, capture, inputs, needed, create_graph) -> bool:
    """Record gradients of non-leaf `inputs`; True when the node need not run further
    (autograd.grad, and no other wanted input lies upstream)."""
    hit = False
    for nr, g in enumerate(grads):
        pos = targets.get((node, nr))
        if pos is not None:
            hit = True
            if capture:
                captured[pos] = g
            else:  # backward(inputs=[non_leaf]) fills its .grad
                _accumulate(inputs[pos], g, create_graph)
    return hit and capture and not any(e is not None and e[0] in needed for e in node.edges)


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
                _accumulate(t, grads[nr], grads[nr]._requires_grad)
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


def _accumulate(leaf: TensorBase, g: TensorBase, create_graph: bool, owned: bool = False) -> None:
    """leaf.grad += g (PyTorch's AccumulateGrad), cast to the leaf's dtype. An `owned` g becomes
    the new .grad itself; any other is copied, as it may be shared or a broadcast view."""
    if g._data.dtype != leaf._data.dtype:
        from ..ops.elementwise import cast
        g = cast(g, leaf._data.dtype)
    old = leaf._grad
    if old is None:
        if create_graph or owned:
            leaf._grad = g
        else:  # an owned, contiguous, writable copy: g may be shared or a broadcast view
            leaf._grad = make(g._data.copy(), leaf._device)
    elif create_graph or old._requires_grad:
        leaf._grad = _add(old, g)
    else:
        xp = leaf._device.backend.xp
        xp.add(old._data, g._data, out=old._data)
        old._bump_version()


def run_backward(tensors, grad_tensors, **kwargs) -> list:
    """Drain the step generator (at C speed); return the captured gradients (autograd.grad)."""
    captured: list = []
    deque(backward_steps(tensors, grad_tensors, drain=True, captured=captured, **kwargs), maxlen=0)
    return captured
