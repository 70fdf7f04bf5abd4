"""`Op`: the base class of the built-in ops, marking them as such."""
from __future__ import annotations

from .. import seams
from ..autograd.function import Function, check_gradients
from ..autograd.tensor_base import TensorBase, make


class Op(Function):
    """Base class of every built-in op (the Functions in ops/), written exactly like a user's
    `autograd.Function`, with two promises that let the engine do less:

    - forward computes on backend arrays (`ctx.xp`) and calls no ops, so `apply` runs it as it
      is, where a user Function's forward runs with grad mode switched off;
    - backward's gradients are right by construction (and every op is gradchecked in the tests),
      so the engine does not check their count and shapes, as it does a user Function's.

    A class copied from here into a notebook runs on the same path if it subclasses `Op`, and is
    checked like any user Function if it subclasses `autograd.Function`.

    Each differentiable op's backward is a seam (`tinygrad_lab.seams`), named after the class
    ("Mul.backward"): a learner's backward can run in its place, its gradients checked.
    """

    array_forward = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.differentiable:
            summary = (cls.__doc__ or "").strip().split("\n")[0]
            seams.register(f"{cls.__name__}.backward", cls, "backward", adapt=seams.checked(_check), doc=(
                f"{cls.__name__}'s backward: backward(ctx, *grad_outputs) -> one gradient (a tensor, or None) "
                f"per argument of forward, each of that argument's shape. {summary}"))


def _check(out, ctx, *grad_outputs):
    """What a learner's backward returned, checked as a user Function's is."""
    return check_gradients(ctx, out if out.__class__ is tuple else (out,))


def constant(ctx, arr) -> TensorBase:
    """A constant (no-grad) tensor on the node's device, e.g. a mask a backward uses."""
    return make(arr, ctx.device)
