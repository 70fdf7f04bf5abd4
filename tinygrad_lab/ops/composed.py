"""Differentiable gradients for the ops whose backward is written on arrays (the recurrent cells and
layers, batch norm): with create_graph the gradient must itself be a graph, so such an op's
backward runs its forward again as a composition of ops and lets the engine differentiate that."""
from __future__ import annotations

from ..autograd.api import grad
from . import elementwise as ew


def composed_backward(ctx, composed, inputs: tuple, grads: tuple, *args) -> tuple:
    """The gradients of an op's tensor `inputs` (its first arguments; `args` are the rest, which get
    None) as differentiable tensors: `composed(*inputs, *args)` (the op written with ops) is run on
    aliases of the inputs (clones: fresh nodes, so the engine stops there and does not walk on into
    the graph before them) and differentiated by the engine with create_graph."""
    wanted = [k for k, t in enumerate(inputs) if t is not None and ctx.needs_input_grad[k]]
    aliases = [None if t is None else ew.Clone.apply(t) for t in inputs]
    outs = composed(*aliases, *args)
    found = grad(outs, [aliases[k] for k in wanted], grad_outputs=grads, create_graph=True, allow_unused=True)
    out = [None] * (len(inputs) + len(args))
    for k, g in zip(wanted, found):
        out[k] = g
    return tuple(out)
