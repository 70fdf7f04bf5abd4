"""`Op`: the base class of the built-in ops, marking them as such; `tensor_args`: what an op's
public function checks of its arguments before it touches them."""
from __future__ import annotations

import functools
import inspect

from .. import seams
from ..autograd.function import Function, check_gradients
from ..autograd.tensor_base import TensorBase, make, tensor_types


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


_ABSENT = object()


def tensor_args(*names: str, op: str | None = None):
    """Decorator of an op's public function: its parameters `names` take tensors (one whose default
    is None may also be None). Anything else there is PyTorch's TypeError naming the op (`op`, or the
    function's name), the argument and what it got: `linear(): argument 'input' (position 1) must be
    Tensor, not numpy.ndarray`, not the AttributeError ('no attribute _data') the op meets inside.
    The arguments are looked at only once the op has failed, so a correct call pays for one frame
    (a check before every call cost 2.9% more bytecodes on the MLP step). Deviation: an op composed
    of binary ops (gelu) that happens to work on a NumPy array still does; PyTorch refuses it."""
    def decorate(fn):
        params = list(inspect.signature(fn).parameters.values())
        checks = tuple((i, p.name, p.default is None) for i, p in enumerate(params) if p.name in names)
        if len(checks) != len(names):
            raise TypeError(f"tensor_args: {fn.__name__} has no parameter among {names} for each name")
        shown = op or fn.__name__

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (AttributeError, TypeError):
                _check_tensors(shown, checks, args, kwargs)
                raise

        return checked

    return decorate


def _check_tensors(op: str, checks: tuple, args: tuple, kwargs: dict) -> None:
    """Raise `not_a_tensor` for the first checked argument that is not a tensor (nor an allowed None)."""
    for i, name, optional in checks:
        a = args[i] if i < len(args) else kwargs.get(name, _ABSENT)
        if a.__class__ not in tensor_types and a is not _ABSENT and not (optional and a is None):
            raise not_a_tensor(op, name, i, a) from None


def tensor_list(tensors, op: str, zero_dim: bool = True) -> list:
    """A sequence-of-tensors argument (cat's, stack's) as a list, or PyTorch's error: a tensor itself
    (whose rows would be joined), an element that is not a tensor, a 0-d one where `zero_dim` is False."""
    if tensors.__class__ in tensor_types:
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor "
                        f"(of shape {list(tensors._data.shape)}; pass a list: {op}([a, b]))")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if t.__class__ not in tensor_types:
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 'tensors', but got {_type_name(t)}")
        if not zero_dim and t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated ({op}(); "
                               f"stack() joins 0-d tensors, or unsqueeze them first)")
    return tensors


def _type_name(value) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def not_a_tensor(op: str, name: str, i: int, value) -> TypeError:
    """PyTorch's TypeError for a non-tensor where an op takes a tensor, with how to make one."""
    what = _type_name(value)
    hint = ""
    if isinstance(value, (list, tuple)) or hasattr(value, "__array__"):
        hint = " (make one with tinygrad_lab.tensor(...), or from_numpy(...) for a NumPy array)"
    return TypeError(f"{op}(): argument '{name}' (position {i + 1}) must be Tensor, not {what}{hint}")
