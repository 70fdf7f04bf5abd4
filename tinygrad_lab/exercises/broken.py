"""Exercise 4's broken program: a tiny network built from three hand-written Functions,
one of which has a wrong backward. Find it with `graph.BackwardStepper`, not by reading this file."""
from __future__ import annotations

from .. import creation
from ..autograd import Function
from ..tensor import Tensor


class Scale(Function):
    """y = c · x for a Python number c."""

    @staticmethod
    def forward(ctx, x: Tensor, c: float) -> Tensor:
        ctx.c = c
        return x * c

    @staticmethod
    def backward(ctx, g: Tensor) -> tuple:
        return g * ctx.c, None


class Square(Function):
    """y = x²."""

    @staticmethod
    def forward(ctx, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * 2 * x


class Softplus(Function):
    """y = log(1 + eˣ), a smooth ReLU."""

    @staticmethod
    def forward(ctx, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return (x.exp() + 1).log()

    @staticmethod
    def backward(ctx, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return g * s * (1 - s)


# The forward pass, one op per stage: (the tensor it makes, how, from which tensors).
STAGES = (
    ("h", lambda x, w: x @ w, ("x", "w")),
    ("a", Softplus.apply, ("h",)),
    ("s", Square.apply, ("a",)),
    ("z", lambda s: Scale.apply(s, 0.5), ("s",)),
    ("loss", lambda z: z.sum(), ("z",)),
)


def program() -> dict[str, Tensor]:
    """Run the forward pass; returns its tensors by name: inputs x, w, then h = x @ w,
    a = Softplus(h), s = Square(a), z = Scale(s, 0.5) and loss = z.sum()."""
    t = {"x": creation.tensor([[0.5, -1.0, 2.0]], dtype="float64", requires_grad=True),
         "w": creation.tensor([[1.0, -0.5], [0.25, 2.0], [-1.5, 0.5]], dtype="float64", requires_grad=True)}
    for name, f, args in STAGES:
        t[name] = f(*[t[a] for a in args])
    return t
