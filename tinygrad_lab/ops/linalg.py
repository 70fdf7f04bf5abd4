"""matmul for 1-D, 2-D and batched operands, with NumPy's broadcasting of batch dims; PyTorch's
other products built on it (mm, bmm, mv, dot, outer, addmm, baddbmm, tensordot, ...); einsum.

The backward is the textbook pair dA = dC Bᵀ, dB = Aᵀ dC, with the 1-D cases
written out (outer products and matrix-vector products), so that A @ x with a
vector x costs two matrix-vector products, exactly like the hand-written NumPy
gradient. einsum's backward is an einsum too.
"""
from __future__ import annotations

import math
import string

from ..autograd.tensor_base import make
from . import broadcast
from . import elementwise as ew
from . import movement as mv
from . import reduce as rd
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
            if ga._data.shape != ctx.input_shapes[0]:  # batch dims a was broadcast over
                ga = broadcast.sum_to(ga, ctx.input_shapes[0])
        if n[1]:
            if a._data.ndim == 1:  # dB = a ⊗ dC
                gb = ew.mul(mv.unsqueeze(a, -1), mv.unsqueeze(g, -2)) if b._data.ndim > 1 else ew.mul(a, g)
            elif b._data.ndim == 1:  # dB = Aᵀ dC, computed as dC A (no transpose needed)
                gb = Matmul.apply(g, a) if g._data.ndim == 1 else mv.squeeze(Matmul.apply(mv.unsqueeze(g, -2), a), -2)
            else:
                gb = Matmul.apply(mv.mT(a), g)
            if gb._data.shape != ctx.input_shapes[1]:  # batch dims b was broadcast over
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


# ---------------------------------------------------------------- PyTorch's other products (compositions of matmul)

def _need_dims(t, n: int, op: str, what: str) -> None:
    if t._data.ndim != n:
        raise RuntimeError(f"{op}: {what} must be a {n}D tensor, got a {t._data.ndim}D tensor of shape "
                           f"{list(t._data.shape)}")


def mm(a, b):
    """The product of two matrices, as torch.mm."""
    _need_dims(a, 2, "mm", "self")
    _need_dims(b, 2, "mm", "mat2")
    return matmul(a, b)


def bmm(a, b):
    """Batched matrix product of (B, n, k) and (B, k, m), as torch.bmm (no broadcasting of the batch)."""
    _need_dims(a, 3, "bmm", "batch1")
    _need_dims(b, 3, "bmm", "batch2")
    if a._data.shape[0] != b._data.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {a._data.shape[0]} and "
                           f"{b._data.shape[0]}")
    return matmul(a, b)


def matvec(a, v):
    """Matrix times vector, as torch.mv (named matvec here: `mv` is this module's name for ops/movement)."""
    _need_dims(a, 2, "mv", "self")
    _need_dims(v, 1, "mv", "vec")
    return matmul(a, v)


def dot(a, b):
    """The dot product of two vectors, as torch.dot."""
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    return matmul(a, b)


vdot = dot  # real tensors: no conjugation


def inner(a, b):
    """The sum of products over the last dims of a and b, as torch.inner (a number times a tensor for 0-d)."""
    if not a._data.ndim or not b._data.ndim:
        return ew.mul(a, b)
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b):
    """The outer product of two vectors: out[i, j] = a[i] * b[j], as torch.outer."""
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"outer: expected 1D tensors, got {a._data.ndim}D and {b._data.ndim}D")
    return ew.mul(mv.unsqueeze(a, 1), b)


ger = outer


def _scaled_sum(bias, product, beta, alpha):
    """beta * bias + alpha * product; with beta == 0 the bias is ignored (its NaNs too), as PyTorch."""
    product = product if alpha == 1 else ew.mul(product, alpha)
    if beta == 0:
        return ew.add(product, ew.zeros_like(product)) if bias._data.shape != product._data.shape else product
    return ew.add(bias if beta == 1 else ew.mul(bias, beta), product)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002 (PyTorch's parameter names)
    """beta * input + alpha * (mat1 @ mat2), as torch.addmm."""
    return _scaled_sum(input, mm(mat1, mat2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * (mat @ vec), as torch.addmv."""
    return _scaled_sum(input, matvec(mat, vec), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i], as torch.addbmm."""
    return _scaled_sum(input, rd.sum(bmm(batch1, batch2), 0), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * (batch1 @ batch2) per batch, as torch.baddbmm."""
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * outer(vec1, vec2), as torch.addr."""
    return _scaled_sum(input, outer(vec1, vec2), beta, alpha)


def _tensordot_dims(a, b, dims) -> tuple:
    """tensordot's dims argument as two lists of non-negative dims (a's, b's), checked to match in size."""
    na, nb = a._data.ndim, b._data.ndim
    if isinstance(dims, int):
        if dims < 0 or dims > min(na, nb):
            raise RuntimeError(f"tensordot expects dims >= 0 and <= the dims of both tensors, got {dims}")
        dims_a, dims_b = list(range(na - dims, na)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
        dims_a, dims_b = [d % na for d in dims_a], [d % nb for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a._data.shape[da] != b._data.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a._data.shape[da]} in dim "
                               f"{da} and second has size {b._data.shape[db]} in dim {db}")
    return dims_a, dims_b


def tensordot(a, b, dims=2):
    """Sum of products over dims of a and b, as torch.tensordot: dims=n pairs a's last n dims with b's
    first n; dims=([a dims], [b dims]) names them. Computed as one matrix product after moving the
    summed dims together."""
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    free_a = [d for d in range(a._data.ndim) if d not in dims_a]
    free_b = [d for d in range(b._data.ndim) if d not in dims_b]
    k = math.prod(a._data.shape[d] for d in dims_a)
    left = mv.reshape(mv.permute(a, free_a + dims_a), (-1, k))
    right = mv.reshape(mv.permute(b, dims_b + free_b), (k, -1))
    shape = tuple(a._data.shape[d] for d in free_a) + tuple(b._data.shape[d] for d in free_b)
    return mv.reshape(matmul(left, right), shape)


def multi_dot(tensors):
    """The product of a chain of matrices (the first may be a vector, the last too), as torch.linalg.multi_dot."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def chain_matmul(*matrices):
    """The product of matrices, as torch.chain_matmul."""
    return multi_dot(matrices)


# ---------------------------------------------------------------- einsum

class Einsum(Op):
    """The sum of products an equation names (NumPy's einsum), e.g. "ij,jk->ik"; the equation is
    explicit ("->" given) and has no "...". Backward for operand i: the einsum of g with the other
    operands, into operand i's letters; a letter only operand i has (summed away in forward) is
    broadcast back with a vector of ones, and a letter it repeats (a diagonal, "ii") is put back on the
    diagonal with an identity matrix."""

    @staticmethod
    def forward(ctx, equation, *operands):
        ctx.equation = equation
        ctx.save_for_backward(*operands)
        return ctx.xp.einsum(equation, *(t._data for t in operands), optimize=len(operands) > 2)

    @staticmethod
    def backward(ctx, g):
        operands = ctx.saved_tensors
        inputs, output = ctx.equation.split("->")
        subs = inputs.split(",")
        return (None,) + tuple(_einsum_grad(g, output, subs, operands, i) if need else None
                               for i, need in enumerate(ctx.needs_input_grad[1:]))


def _einsum_grad(g, output: str, subs: list, operands, i: int):
    """The gradient of operand i of einsum `subs -> output` (see Einsum)."""
    xp, device = g._device.backend.xp, g._device
    target, sizes = subs[i], dict(zip(subs[i], operands[i]._data.shape))
    parts = [(output, g)] + [(s, t) for j, (s, t) in enumerate(zip(subs, operands)) if j != i]
    present = set("".join(s for s, _ in parts))
    fresh = iter(c for c in string.ascii_letters if c not in present and c not in target)
    for letter in dict.fromkeys(target):
        if letter not in present:  # summed away in forward: broadcast back
            parts.append((letter, make(xp.ones(sizes[letter], dtype=g._data.dtype), device)))
    renamed, seen = "", set()
    for letter in target:
        if letter in seen:  # a repeated letter (a diagonal): put it back on the diagonal
            f = next(fresh)
            parts.append((letter + f, make(xp.eye(sizes[letter], dtype=g._data.dtype), device)))
            letter = f
        seen.add(letter)
        renamed += letter
    return Einsum.apply(",".join(s for s, _ in parts) + "->" + renamed, *(t for _, t in parts))


def einsum(equation: str, *operands):
    """Sums of products named by an equation, as torch.einsum: "ij,jk->ik" is a matrix product,
    "bij,bjk->bik" a batched one, "ii->i" a diagonal; "..." stands for broadcast dims, and without
    "->" the output has the letters used once, in alphabetical order."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    subs, output = _einsum_letters(equation.replace(" ", ""), operands)
    dtypes_ = {t._data.dtype for t in operands}
    if len(dtypes_) > 1:
        raise RuntimeError(f"einsum(): operands must have one dtype, got {sorted(str(d) for d in dtypes_)}")
    sizes = {}
    for s, t in zip(subs, operands):
        for letter, n in zip(s, t._data.shape):
            have = sizes.get(letter, 1)
            if have != n and 1 not in (have, n):
                raise RuntimeError(f"einsum(): operands do not broadcast: subscript {letter} has size {n} for one "
                                   f"operand and {have} for another (equation {equation!r})")
            sizes[letter] = n if have == 1 else have  # a size 1 stretches to the other (which may be 0)
    operands = [broadcast.expand(t, tuple(sizes[c] for c in s)) for s, t in zip(subs, operands)]
    return Einsum.apply(",".join(subs) + "->" + output, *operands)


def _einsum_letters(equation: str, operands) -> tuple:
    """(one subscript string per operand, the output's) with "..." spelled out as letters."""
    inputs, arrow, output = equation.partition("->")
    subs = inputs.split(",")
    if len(subs) != len(operands):
        raise RuntimeError(f"einsum(): {len(subs)} operands in the equation {equation!r} but {len(operands)} given")
    unused = [c for c in string.ascii_letters if c not in equation]
    n_ell = max([t._data.ndim - (len(s) - 3) for s, t in zip(subs, operands) if "..." in s] or [0])
    ell = "".join(unused[:n_ell])
    spelled = []
    for s, t in zip(subs, operands):
        k = t._data.ndim - (len(s) - 3) if "..." in s else 0
        s = s.replace("...", ell[n_ell - k:])
        if len(s) != t._data.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in {s!r} does not match the number of "
                               f"dimensions ({t._data.ndim}) of its operand")
        spelled.append(s)
    if not arrow:
        counts = "".join(spelled)
        output = ell + "".join(sorted(c for c in set(counts) if counts.count(c) == 1 and c not in ell))
    return spelled, output.replace("...", ell)
