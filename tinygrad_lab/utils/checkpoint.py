"""Gradient checkpointing, as torch.utils.checkpoint: trade compute for memory.

Normally the graph keeps what every op saved for backward (activations) until backward has run.
`checkpoint(function, *args)` runs `function` without recording, so none of its intermediate results
are kept, only its inputs; when backward reaches it, it runs `function` again, this time recording,
and backpropagates through that fresh graph. The forward pass runs twice over the checkpointed part;
the memory held between forward and backward is its inputs instead of all its activations.

It is written as an ordinary `autograd.Function` whose backward calls `backward()` itself (PyTorch's
"reentrant" checkpoint): gradients of parameters used inside `function` are added into their `.grad`
by that inner pass. So use `loss.backward()` through a checkpoint; `autograd.grad(loss, params)`
cannot collect those parameters' gradients (PyTorch's non-reentrant variant can; it needs saved-tensor
hooks, which this engine does not have). `use_reentrant` is accepted either way.
"""
from __future__ import annotations

from .. import random
from .._warn import warn
from ..autograd import Function, backward, enable_grad
from ..autograd.tensor_base import TensorBase

__all__ = ["checkpoint", "checkpoint_sequential"]


class Checkpoint(Function):
    """forward: function(*args) with nothing recorded; backward: the same again, recorded, then backward."""

    @staticmethod
    def forward(ctx, function, preserve_rng_state, *args):
        ctx.function, ctx.args = function, args
        ctx.rng = random.get_rng_state() if preserve_rng_state else None  # dropout draws the same masks again
        ctx.save_for_backward(*[a for a in args if isinstance(a, TensorBase)])
        return function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        saved = iter(ctx.saved_tensors)  # checked against in-place changes since forward
        inputs = [next(saved).detach().requires_grad_(a.requires_grad) if isinstance(a, TensorBase) else a
                  for a in ctx.args]
        with _rng(ctx.rng), enable_grad():
            outputs = ctx.function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, TensorBase) and o.requires_grad and g is not None]
        if pairs:
            backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, TensorBase) else None for a in inputs)


class _rng:
    """Within the block, the CPU random stream is at `state` (when given); afterwards as it was."""

    def __init__(self, state):
        self.state = state

    def __enter__(self):
        if self.state is not None:
            self.outer = random.get_rng_state()
            random.set_rng_state(self.state)

    def __exit__(self, *exc):
        if self.state is not None:
            random.set_rng_state(self.outer)


def checkpoint(function, *args, use_reentrant: bool | None = None, preserve_rng_state: bool = True, **kwargs):
    """function(*args, **kwargs), computed again in backward instead of keeping its activations."""
    if not any(isinstance(a, TensorBase) and a.requires_grad for a in args):
        warn("None of the inputs have requires_grad=True. Gradients will be None")
    call = function if not kwargs else (lambda *a: function(*a, **kwargs))
    return Checkpoint.apply(call, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """A Sequential (or list of modules) run in `segments` parts, each checkpointed except the last,
    whose activations backward needs first anyway."""
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(1, len(functions) // max(1, segments))
    last = size * (segments - 1)  # the checkpointed parts end here; the rest runs as usual

    def run(part):
        def chain(x):
            for f in part:
                x = f(x)
            return x
        return chain
    for start in range(0, last, size):
        input = checkpoint(run(functions[start:start + size]), input, use_reentrant=use_reentrant, **kwargs)
    return run(functions[last:])(input)
