"""Triangles and diagonals of matrices (the last two dims, or the dims named): tril, triu,
diagonal, diag_embed (its inverse), diag, diagflat, diagonal_scatter and trace.

Diagonal reads the diagonal out; DiagonalScatter writes values onto a diagonal of zeros.
Each is the other's backward.
"""
from __future__ import annotations

from ..autograd.tensor_base import make
from . import elementwise as ew
from . import movement as mv
from . import reduce as rd
from .op import Op
from .shapes import normalize_dim


class Tril(Op):
    """The lower triangle (on and below diagonal k) of the last two dims, zeros above.
    Backward: the lower triangle of g."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return ctx.xp.tril(x._data, k)

    @staticmethod
    def backward(ctx, g):
        return Tril.apply(g, ctx.k), None


class Triu(Op):
    """The upper triangle (on and above diagonal k) of the last two dims, zeros below.
    Backward: the upper triangle of g."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return ctx.xp.triu(x._data, k)

    @staticmethod
    def backward(ctx, g):
        return Triu.apply(g, ctx.k), None


def tril(x, diagonal: int = 0):
    """The lower triangle of x's last two dims (below diagonal `diagonal`), as torch.tril."""
    _matrices(x, "tril")
    return Tril.apply(x, int(diagonal))


def triu(x, diagonal: int = 0):
    """The upper triangle of x's last two dims (above diagonal `diagonal`), as torch.triu."""
    _matrices(x, "triu")
    return Triu.apply(x, int(diagonal))


def _diagonal_positions(xp, shape: tuple, offset: int, dim1: int, dim2: int):
    """(rows, cols) of diagonal `offset` of dims dim1, dim2 of an array of `shape`."""
    n1, n2 = shape[dim1], shape[dim2]
    length = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    steps = xp.arange(length)
    return steps + max(-offset, 0), steps + max(offset, 0)


class Diagonal(Op):
    """Diagonal `offset` of dims dim1 and dim2, as a new last dim (a view, as in PyTorch: writing
    into it writes into x). Backward: g written onto the same diagonal of zeros (DiagonalScatter)."""

    is_view = True

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        return ctx.device.backend.diagonal(x._data, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, g):
        return DiagonalScatter.apply(g, ctx.input_shapes[0], *ctx.args), None, None, None


class DiagonalCopy(Diagonal):
    """torch.diag's matrix diagonal: a new tensor (torch.diagonal's is a view). Backward: Diagonal's."""

    is_view = False

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        return Diagonal.forward(ctx, x, offset, dim1, dim2).copy()


class DiagonalScatter(Op):
    """Zeros of `shape` with the last dim of d written onto diagonal `offset` of dims dim1 and dim2.
    Backward: that diagonal of g (Diagonal)."""

    @staticmethod
    def forward(ctx, d, shape, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        xp = ctx.xp
        out = xp.zeros(shape, dtype=d._data.dtype)
        rows, cols = _diagonal_positions(xp, shape, offset, dim1, dim2)
        xp.moveaxis(out, (dim1, dim2), (-2, -1))[..., rows, cols] = d._data  # moveaxis is a view: writes into out
        return out

    @staticmethod
    def backward(ctx, g):
        return Diagonal.apply(g, *ctx.args), None, None, None, None


def diagonal(x, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """Diagonal `offset` of dims dim1 and dim2, as a new last dim, as torch.diagonal."""
    n = x._data.ndim
    d1, d2 = normalize_dim(dim1, n, "diagonal"), normalize_dim(dim2, n, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(x, int(offset), d1, d2)


def diag_embed(x, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """Matrices (in dims dim1, dim2 of the result) with x's last dim on diagonal `offset` and zeros
    elsewhere, as torch.diag_embed."""
    n = x._data.ndim + 1
    d1, d2 = normalize_dim(dim1, n, "diag_embed"), normalize_dim(dim2, n, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    side = (x._data.shape[-1] if x._data.ndim else 1) + abs(int(offset))
    rest = iter(x._data.shape[:-1])
    shape = tuple(side if i in (d1, d2) else next(rest) for i in range(n))
    return DiagonalScatter.apply(x if x._data.ndim else mv.reshape(x, (1,)), shape, int(offset), d1, d2)


def diag(x, diagonal: int = 0):
    """A vector to the matrix with it on diagonal `diagonal`, or a matrix's diagonal as a vector, as torch.diag."""
    if x._data.ndim == 1:
        return diag_embed(x, diagonal)
    if x._data.ndim == 2:
        return DiagonalCopy.apply(x, int(diagonal), 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x._data.ndim}D")


def diagflat(x, offset: int = 0):
    """x flattened, on diagonal `offset` of a square matrix, as torch.diagflat."""
    return diag_embed(mv.reshape(x, (-1,)), offset)


def diagonal_scatter(x, src, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """x with diagonal `offset` of dims dim1, dim2 replaced by src, as torch.diagonal_scatter."""
    n = x._data.ndim
    d1, d2 = normalize_dim(dim1, n, "diagonal_scatter"), normalize_dim(dim2, n, "diagonal_scatter")
    xp = x._device.backend.xp
    mask = xp.zeros(x._data.shape, dtype=bool)
    rows, cols = _diagonal_positions(xp, x._data.shape, int(offset), d1, d2)
    xp.moveaxis(mask, (d1, d2), (-2, -1))[..., rows, cols] = True
    on_diagonal = DiagonalScatter.apply(ew.cast(src, x._data.dtype), x._data.shape, int(offset), d1, d2)
    return ew.where(make(mask, x._device), on_diagonal, x)


def trace(x):
    """The sum of the main diagonal of a matrix, as torch.trace."""
    if x._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x._data.ndim}")
    return rd.sum(Diagonal.apply(x, 0, 0, 1))


def _matrices(x, op: str) -> None:
    if x._data.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions, got shape {list(x._data.shape)}")

