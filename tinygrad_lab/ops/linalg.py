"""matmul for 1-D, 2-D and batched operands, with NumPy's broadcasting of batch dims.

The backward is the textbook pair dA = dC Bᵀ, dB = Aᵀ dC, with the 1-D cases
written out (outer products and matrix-vector products), so that A @ x with a
vector x costs two matrix-vector products, exactly like the hand-written NumPy
gradient.
"""
from __future__ import annotations

from . import broadcast
from . import elementwise as ew
from . import movement as mv
from .op import Op, tensor_args


class Matmul(Op):
    """a @ b. Backward: d/da = g @ bᵀ, d/db = aᵀ @ g (outer and matrix-vector products for
    1-D operands), summed back over broadcast batch dims."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        a, b = a._data, b._data
        # vector · vector: ndarray.dot is the same BLAS dot without matmul's ufunc dispatch (~0.4 µs)
        return a.dot(b) if a.ndim == 1 and b.ndim == 1 else a @ b

    @staticmethod
    def backward(ctx, g):
        # shapes are known to fit here, so Matmul.apply is called directly (matmul's checks cannot fail)
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        ga = gb = None
        if n[0]:
            if b._data.ndim == 1:  # dA = dC ⊗ b
                ga = ew.mul(mv.unsqueeze(g, -1), b)
            elif a._data.ndim == 1:  # dA = B dC, batch dims summed below
                ga = Matmul.apply(b, g) if g._data.ndim == 1 else mv.squeeze(Matmul.apply(b, mv.unsqueeze(g, -1)), -1)
            else:
                ga = Matmul.apply(g, mv.mT(b))
            ga = broadcast.sum_to(ga, ctx.input_shapes[0])
        if n[1]:
            if a._data.ndim == 1:  # dB = a ⊗ dC
                gb = ew.mul(mv.unsqueeze(a, -1), mv.unsqueeze(g, -2)) if b._data.ndim > 1 else ew.mul(a, g)
            elif b._data.ndim == 1:  # dB = Aᵀ dC, computed as dC A (no transpose needed)
                gb = Matmul.apply(g, a) if g._data.ndim == 1 else mv.squeeze(Matmul.apply(mv.unsqueeze(g, -2), a), -2)
            else:
                gb = Matmul.apply(mv.mT(a), g)
            gb = broadcast.sum_to(gb, ctx.input_shapes[1])
        return ga, gb


@tensor_args("a", "b")
def matmul(a, b):
    """Matrix product with NumPy's rules for 1-D and batched operands."""
    sa, sb = a._data.shape, b._data.shape
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D and {len(sb)}D")
    ka = sa[-1]
    kb = sb[-2] if len(sb) > 1 else sb[0]
    if ka != kb:
        if len(sa) == 1 and len(sb) == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the "
                               f"same number of elements, but got {sa[0]} and {sb[0]} elements respectively")
        rows = f"{sa[-2] if len(sa) > 1 else 1}x{ka}"
        cols = f"{kb}x{sb[-1] if len(sb) > 1 else 1}"
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows} and {cols}) "
                           f"(matmul of shapes {list(sa)} and {list(sb)})")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype} "
                           f"(matmul of shapes {list(sa)} and {list(sb)}); convert one with .to(dtype)")
    try:
        return Matmul.apply(a, b)
    except ValueError:
        raise RuntimeError(f"matmul: batch dimensions of shapes {list(sa)} and {list(sb)} cannot be broadcast") from None
