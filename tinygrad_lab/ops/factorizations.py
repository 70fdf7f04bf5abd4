"""More of torch.linalg: the LU factorization (lu_factor, lu, lu_unpack, lu_solve), least squares
(lstsq), the matrix exponential (matrix_exp), solving with a Cholesky factor (cholesky_solve,
cholesky_inverse), and PyTorch's older top-level names (torch.svd, torch.qr, torch.dist, torch.norm,
which also takes p='nuc', and the deprecated torch.cholesky, torch.lu, torch.lu_solve and
torch.triangular_solve, which warn as PyTorch's do).

How to read this file:
- NumPy and CuPy have no LU, so `LUFactor`'s forward is Gaussian elimination with partial pivoting
  written out: a loop over the columns, each step done for every matrix of the batch at once. Its
  backward is the matrix-calculus result for A = P L U, written with triangular solves.
- lu, lu_unpack, lu_solve and lstsq are compositions of differentiable ops (triangles of a matrix,
  triangular solves, QR): their gradients need no code of their own.
- matrix_exp is scaling and squaring with a Padé approximant; its gradient is itself a matrix
  exponential, of a block matrix twice the size.

Real matrices only, as in ops/decompositions.py. PyTorch's linalg.eig and linalg.eigvals are left out:
a real matrix can have complex eigenvalues, and tinygrad_lab has no complex dtype.
"""
from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from .._warn import warn
from ..autograd.tensor_base import TensorBase, make
from . import broadcast
from . import elementwise as ew
from . import movement as mv
from . import reduce as rd
from .decompositions import (LinAlgError, SolveTriangular, _lapack, lapack_solve, matrix_norm, pinv,
                             solve_triangular, svdvals)
from .decompositions import cholesky as linalg_cholesky
from .decompositions import qr as linalg_qr
from .decompositions import svd as linalg_svd
from .diagonal import Tril, Triu
from .indexing import getitem
from .linalg import matmul
from .op import Op, tensor_args
from .promotion import cast_to
from .shapes import broadcast_shape

_mT = mv.mT  # the transpose of the last two dims


# ---------------------------------------------------------------- LU: P A = L U, by Gaussian elimination

class LUFactor(Op):
    """P A = L U with partial pivoting, packed as PyTorch's lu_factor returns it: L's multipliers below the
    diagonal, U on and above it, and 1-based int32 pivots. Backward: see lu_backward (the pivots are
    piecewise constant: no gradient). Deviation: where U has a zero on its diagonal (A singular) the
    backward's triangular solve raises LinAlgError; PyTorch's gradient is NaN there."""

    @staticmethod
    def forward(ctx, a):
        lu, pivots = _lu_arrays(ctx.xp, a._data)
        ctx.save_for_backward(lu, pivots)
        return lu, pivots

    @staticmethod
    def backward(ctx, g, _g_pivots):
        lu, pivots = ctx.saved_tensors
        p, low, up = _unpack(lu, pivots)
        k = min(lu._data.shape[-2:])
        g_low = getitem(Tril.apply(g, -1), (Ellipsis, slice(None), slice(0, k)))  # L's part of g
        g_up = getitem(Triu.apply(g, 0), (Ellipsis, slice(0, k), slice(None)))  # U's part
        return lu_backward(p, low, up, g_low, g_up)


def lu_backward(p, low, up, g_low, g_up):
    """d/dA of A = P L U (L: m x k unit lower-triangular, U: k x n upper, k = min(m, n)) from the gradients
    of L's and U's triangles. With M = tril(L^T gL, -1) + triu(gU U^T) (k x k):
      square A:       d/dA = P L^-T M U^-T
      wide (m < n):   U = [U1 U2]:  d/dA = P L^-T [(M - gU2 U2^T) U1^-T,  gU2]
      tall (m > n):   L = [L1; L2]: d/dA = P [L1^-T (M - L2^T gL2) U^-T;  gL2 U^-T]
    (the extra columns U2 = L^-1 P^T A2 and rows L2 = A2 U^-1 are linear in the extra part A2 of A)."""
    m, n = p._data.shape[-1], up._data.shape[-1]
    k = min(m, n)
    mm = ew.add(Tril.apply(matmul(_mT(low), g_low), -1), Triu.apply(matmul(g_up, _mT(up)), 0))
    low1, up1 = _rows(low, 0, k), _cols(up, 0, k)
    if m < n:
        g_up2 = _cols(g_up, k, n)
        mm = ew.sub(mm, matmul(g_up2, _mT(_cols(up, k, n))))
    if m > n:
        g_low2 = _rows(g_low, k, m)
        mm = ew.sub(mm, matmul(_mT(_rows(low, k, m)), g_low2))
    grad = _times_inverse_t(_inverse_t_times(low1, mm), up1)  # L1^-T M U1^-T
    if m < n:
        grad = mv.cat([grad, _inverse_t_times(low1, g_up2)], -1)
    if m > n:
        grad = mv.cat([grad, _times_inverse_t(g_low2, up1)], -2)
    return matmul(p, grad)


def _rows(t, start: int, stop: int):
    return getitem(t, (Ellipsis, slice(start, stop), slice(None)))


def _cols(t, start: int, stop: int):
    return getitem(t, (Ellipsis, slice(start, stop)))


def _inverse_t_times(low, x):
    """L^-T X for unit lower-triangular L: a solve with the upper-triangular L^T."""
    return SolveTriangular.apply(_mT(low), x, True, True)


def _times_inverse_t(x, up):
    """X U^-T for upper-triangular U: (U^-1 X^T)^T."""
    return _mT(SolveTriangular.apply(up, _mT(x), True, False))


def _lu_arrays(xp, a):
    """Gaussian elimination with partial pivoting (what LAPACK's getrf computes) on each m x n matrix of
    a batch: the packed LU (L's multipliers below the diagonal, U on and above it) and the pivots, 1-based:
    at step j, row j was swapped with row pivots[j] - 1."""
    m, n = a.shape[-2:]
    k = min(m, n)
    count = int(np.prod(a.shape[:-2], dtype=np.int64))
    lu = a.reshape((count, m, n)).copy()
    items = xp.arange(count)
    pivots = xp.zeros((count, k), dtype=np.int32)
    for j in range(k):
        p = j + xp.argmax(xp.abs(lu[:, j:, j]), axis=1)  # the largest entry on or below the diagonal
        pivots[:, j] = p + 1
        lu[items, j], lu[items, p] = lu[items, p], lu[items, j]  # swap rows j and p (copies on the right)
        d = lu[:, j, j]
        lu[:, j + 1:, j] /= (d + (d == 0))[:, None]  # a column of zeros stays as it is (as LAPACK leaves it)
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]  # eliminate below row j
    return lu.reshape(a.shape), pivots.reshape(a.shape[:-2] + (k,))


def _permutation(xp, pivots, m: int):
    """The row order the pivots' swaps give: P^T A = A[perm] (one perm per batch item)."""
    count = int(np.prod(pivots.shape[:-1], dtype=np.int64))
    flat = pivots.reshape((count, pivots.shape[-1])).astype(np.int64) - 1
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    items = xp.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j]
        perm[items, j], perm[items, p] = perm[items, p], perm[items, j]
    return perm.reshape(pivots.shape[:-1] + (m,))


def permutation_matrix(pivots, m: int, dtype) -> TensorBase:
    """P (a constant m x m matrix per batch item) with A = P L U, from LU's pivots."""
    xp = pivots._device.backend.xp
    perm = _permutation(xp, pivots._data, m)
    return make((perm[..., None, :] == xp.arange(m)[:, None]).astype(dtype), pivots._device)  # P[perm[i], i] = 1


class LUFactorResult(NamedTuple):
    LU: TensorBase  # noqa: N815 (PyTorch's field names)
    pivots: TensorBase


class LUFactorExResult(NamedTuple):
    LU: TensorBase  # noqa: N815
    pivots: TensorBase
    info: TensorBase


class PLUResult(NamedTuple):
    """What linalg.lu and lu_unpack return: A = P @ L @ U."""

    P: TensorBase  # noqa: N815
    L: TensorBase  # noqa: N815
    U: TensorBase  # noqa: N815


def _check_lu_input(a, op: str, pivot: bool) -> None:
    _float_matrices(a, op)
    if not pivot:
        raise NotImplementedError(f"{op}: LU without pivoting is not implemented (PyTorch has it only on CUDA); "
                                  f"use pivot=True (input of shape {list(a._data.shape)})")


@tensor_args("A", op="linalg.lu_factor_ex")
def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False) -> LUFactorExResult:  # noqa: N803
    """(LU, pivots, info) as torch.linalg.lu_factor_ex: info is 0, or the 1-based index of U's first zero
    on the diagonal (the matrix is singular); check_errors=True raises then."""
    out = _lu_factor_ex(A, "linalg.lu_factor_ex", pivot)
    if check_errors:
        _refuse_singular(out.info, A, "linalg.lu_factor_ex")
    return out


def _lu_factor_ex(a, op: str, pivot: bool) -> LUFactorExResult:
    _check_lu_input(a, op, pivot)
    lu_, pivots = LUFactor.apply(a)
    xp = a._device.backend.xp
    k = pivots._data.shape[-1]
    zero = xp.diagonal(lu_._data, axis1=-2, axis2=-1)[..., :k] == 0
    first = xp.argmax(zero, axis=-1) + 1 if k else 0  # U's first zero on the diagonal, 1-based
    info = xp.where(zero.any(axis=-1), first, 0).astype(np.int32)
    return LUFactorExResult(lu_, pivots, make(info, a._device))


def _refuse_singular(info, a, op: str) -> None:
    """LinAlgError naming the first singular matrix of the batch and U's zero on the diagonal."""
    flat = np.asarray(a._device.backend.to_host(info._data)).ravel()
    bad = np.flatnonzero(flat)
    if bad.size:
        i, j = int(bad[0]), int(flat[bad[0]])
        where = f"(Batch element {i}): " if a._data.ndim > 2 else ""
        raise LinAlgError(f"{op}: {where}U[{j},{j}] is zero, so the matrix (of the input of shape "
                          f"{list(a._data.shape)}) is singular and lu_solve would divide by zero. linalg.lu(A) "
                          f"or linalg.lu_factor_ex(A) factor it without this check.")


@tensor_args("A", op="linalg.lu_factor")
def lu_factor(A, *, pivot: bool = True) -> LUFactorResult:  # noqa: N803
    """(LU, pivots) with P A = L U, as torch.linalg.lu_factor: L's multipliers and U packed in one matrix,
    the pivots 1-based int32. A singular matrix raises LinAlgError, a RuntimeError (lu_solve could not use
    it), as PyTorch raises a RuntimeError."""
    lu_, pivots, info = _lu_factor_ex(A, "linalg.lu_factor", pivot)
    _refuse_singular(info, A, "linalg.lu_factor")
    return LUFactorResult(lu_, pivots)


@tensor_args("A", op="linalg.lu")
def lu(A, *, pivot: bool = True) -> PLUResult:  # noqa: N803
    """A = P @ L @ U (P a permutation, L unit lower-triangular m x k, U upper-triangular k x n, k = min(m, n)),
    as torch.linalg.lu. Differentiable: lu_factor's backward, through lu_unpack's triangles."""
    _check_lu_input(A, "linalg.lu", pivot)
    lu_, pivots = LUFactor.apply(A)
    return _unpack(lu_, pivots)


@tensor_args("LU_data", "LU_pivots")
def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True) -> PLUResult:  # noqa: N803
    """(P, L, U) from lu_factor's packed result, as torch.lu_unpack; what is not unpacked comes back empty.
    Differentiable in LU_data: L and U are its triangles."""
    _check_pivots(LU_data, LU_pivots, "lu_unpack")
    return _unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


def _unpack(lu_, pivots, unpack_data: bool = True, unpack_pivots: bool = True) -> PLUResult:
    xp = lu_._device.backend.xp
    m, n = lu_._data.shape[-2:]
    k = min(m, n)
    empty = make(xp.zeros((0,), dtype=lu_._data.dtype), lu_._device)
    p = permutation_matrix(pivots, m, lu_._data.dtype) if unpack_pivots else empty
    if not unpack_data:
        return PLUResult(p, empty, empty)
    eye = make(xp.eye(m, k, dtype=lu_._data.dtype), lu_._device)
    low = ew.add(Tril.apply(_cols(lu_, 0, k), -1), eye)  # ones on the diagonal
    return PLUResult(p, low, Triu.apply(_rows(lu_, 0, k), 0))


def _check_pivots(lu_, pivots, op: str) -> None:
    if pivots._data.dtype != np.int32:
        raise RuntimeError(f"{op}: pivots should be a tensor of int32 (as lu_factor returns them), got {pivots.dtype}")
    m, n = lu_._data.shape[-2:]
    if pivots._data.shape != lu_._data.shape[:-2] + (min(m, n),):
        raise RuntimeError(f"{op}: pivots of shape {list(pivots._data.shape)} do not fit LU of shape "
                           f"{list(lu_._data.shape)} (one per row of U: {list(lu_._data.shape[:-2] + (min(m, n),))})")
    if pivots._data.size and bool(((pivots._data < 1) | (pivots._data > m)).any()):
        raise RuntimeError(f"{op}: pivots must be between 1 and LU.size(-2) = {m} inclusive (pass what "
                           f"lu_factor returned)")


@tensor_args("LU", "pivots", "B", op="linalg.lu_solve")
def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False):  # noqa: N803
    """X with A X = B, from lu_factor's (LU, pivots) of A, as torch.linalg.lu_solve; adjoint=True solves
    A^T X = B, left=False X A = B. Differentiable in LU and B (two triangular solves and a permutation)."""
    batch = _check_lu_solve(LU, pivots, B, left)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _mT(lu_solve(LU, pivots, _mT(B), adjoint=not adjoint))
    p = permutation_matrix(pivots, LU._data.shape[-1], LU._data.dtype)
    LU, B = _expand_batch(LU, batch), _expand_batch(B, batch)  # noqa: N806
    if adjoint:  # A^T = U^T L^T P^T: X = P L^-T U^-T B
        y = SolveTriangular.apply(_mT(LU), B, False, False)
        return matmul(p, SolveTriangular.apply(_mT(LU), y, True, True))
    y = SolveTriangular.apply(LU, matmul(_mT(p), B), False, True)  # L^-1 P^T B
    return SolveTriangular.apply(LU, y, True, False)


def _check_lu_solve(lu_, pivots, b, left: bool) -> None:
    op = "linalg.lu_solve"
    _float_matrices(lu_, op)
    m, n = lu_._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"{op}: LU must be batches of square matrices, but they are {m} by {n} matrices")
    if b._data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions (got shape {list(b.shape)})")
    if b._data.dtype != lu_._data.dtype:
        raise RuntimeError(f"{op}: Expected LU and B to have the same dtype, but found LU of {lu_.dtype} and B of "
                           f"{b.dtype}")
    if b._data.shape[-2 if left else -1] != n:
        rows, cols = b._data.shape[-2:]
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({n}x{n} and {rows}x{cols})")
    _check_pivots(lu_, pivots, op)
    return _broadcast_batch(lu_, b, op)


def _broadcast_batch(a, b, op: str) -> tuple:
    """The batch dims that A's and B's broadcast to, or PyTorch's RuntimeError."""
    return broadcast_shape((a._data.shape[:-2], b._data.shape[:-2]), op)


def _expand_batch(t, batch: tuple):
    """t expanded to the batch dims `batch` (CuPy's solve does not broadcast them as NumPy's does)."""
    return broadcast.expand(t, *batch, *t._data.shape[-2:])


def _float_matrices(a, op: str) -> None:
    """PyTorch's errors for what LAPACK cannot take: fewer than 2 dims, a dtype other than float32/float64."""
    if a._data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions (got shape {list(a.shape)})")
    if a._data.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{op}: Expected a float32 or float64 tensor as input. Got {a.dtype}")


# ---------------------------------------------------------------- least squares

class LstsqResult(NamedTuple):
    solution: TensorBase
    residuals: TensorBase
    rank: TensorBase
    singular_values: TensorBase


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@tensor_args("A", "B", op="linalg.lstsq")
def lstsq(A, B, rcond=None, *, driver=None) -> LstsqResult:  # noqa: N803 (PyTorch's names)
    """The X minimising ||A X - B|| (the smallest such X when A is wide or rank-deficient), as
    torch.linalg.lstsq, with what each LAPACK driver returns beside it: rank for all but 'gels', the
    singular values for 'gelsd' and 'gelss', the squared residuals per column for all but 'gelsy' when
    A is tall with full rank. The default driver is 'gelsy' (on a CUDA device 'gels'), as PyTorch's.

    Computed with QR where A has full rank, so the gradient (in A and B, of solution and residuals) is
    exact; with the pseudo-inverse (singular values below rcond * the largest dropped) otherwise.
    Deviations, for rank-deficient A only: the rank is counted from singular values for every driver, and
    the solution is the SVD's (gelsy truncates a pivoted QR instead: the same answer unless rcond drops a
    singular value that is not ~0); the gradient is that of the solution returned (PyTorch's backward is
    the pseudo-inverse's formula, which ignores rcond)."""
    vector = _check_lstsq(A, B)
    driver = _lstsq_driver(A, driver)
    xp = A._device.backend.xp
    bm = mv.unsqueeze(B, -1) if vector else B
    none = make(xp.zeros((0,), dtype=A._data.dtype), A._device)
    rank = make(xp.zeros((0,), dtype=np.int64), A._device)
    full_rank, values = True, none
    if driver != "gels":
        s = _lapack(xp, "lstsq", lambda a: xp.linalg.svd(a, compute_uv=False), A._data)
        rank = make(_rank(xp, s, rcond, A._data.shape[-2:]), A._device)
        full_rank = bool((rank._data == min(A._data.shape[-2:])).all())
        values = make(s, A._device) if driver in ("gelsd", "gelss") else none
    batch = _broadcast_batch(A, bm, "linalg.lstsq")
    A, bm = _expand_batch(A, batch), _expand_batch(bm, batch)  # noqa: N806
    x = _least_squares(A, bm, full_rank, rcond)
    m, n = A._data.shape[-2:]
    residuals = none
    if driver != "gelsy" and m > n and full_rank:  # the squared length of each column of A X - B
        r = ew.sub(matmul(A, x), bm)
        residuals = rd.sum(ew.mul(r, r), -2)
    return LstsqResult(mv.squeeze(x, -1) if vector else x, residuals, rank, values)


def _check_lstsq(a, b) -> bool:
    """PyTorch's errors for lstsq's arguments; whether B is a batch of vectors (A's shape without its last dim)."""
    op = "linalg.lstsq"
    _float_matrices(a, op)
    if b._data.dtype != a._data.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but got A of {a.dtype} and B of {b.dtype}")
    sa, sb = a._data.shape, b._data.shape
    vector = sb == sa[:-1]
    if not vector and len(sb) != len(sa):
        raise RuntimeError(f"{op}: B must be a batch of vectors (of shape {list(sa[:-1])}) or of matrices with A's "
                           f"number of dims, but A has shape {list(sa)} and B {list(sb)}")
    if not vector and sb[-2] != sa[-2]:
        raise RuntimeError(f"{op}: A and B must have as many rows (A.size(-2) == B.size(-2)), but A has shape "
                           f"{list(sa)} and B {list(sb)}")
    return vector


def _lstsq_driver(a, driver) -> str:
    if driver is None:
        return "gels" if a._device.type == "cuda" else "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(f"linalg.lstsq: parameter `driver` should be one of {_DRIVERS}, got {driver!r}")
    return driver


def _rank(xp, s, rcond, shape: tuple):
    """How many singular values exceed rcond times the largest (rcond: eps * max(m, n) by default)."""
    if rcond is None:
        rcond = float(np.finfo(s.dtype).eps) * max(shape)
    largest = s[..., :1] if s.shape[-1] else s
    return (s > rcond * largest).sum(axis=-1).astype(np.int64)


def _least_squares(a, b, full_rank: bool, rcond):
    """The smallest X minimising ||A X - B||: for full-rank A from its QR (tall: R^-1 Q^T B; wide, from
    A^T = Q R: Q R^-T B), else from the pseudo-inverse."""
    m, n = a._data.shape[-2:]
    if a._data.size == 0 or b._data.size == 0:
        return matmul(_mT(a), b)  # zeros of the solution's shape (a sum over no rows), or an empty tensor
    if not full_rank:
        return matmul(pinv(a, rtol=rcond), b)
    if m >= n:
        q, r = linalg_qr(a)
        return solve_triangular(r, matmul(_mT(q), b), upper=True)
    q, r = linalg_qr(_mT(a))
    return matmul(q, solve_triangular(_mT(r), b, upper=False))


# ---------------------------------------------------------------- the matrix exponential

class MatrixExp(Op):
    """exp(A) = I + A + A^2/2! + ... Backward: d/dA is the upper-right block of exp([[A^T, g], [0, A^T]]),
    the derivative of exp at A^T in the direction g (Najfeld and Havel, 1995): a matrix exponential
    itself, so second derivatives work."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        data = a._data
        if data.dtype == np.float16:  # LAPACK has no float16: computed in float32
            return _expm_arrays(ctx.xp, data.astype(np.float32)).astype(np.float16)
        return _expm_arrays(ctx.xp, data)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        n = a._data.shape[-1]
        at = _mT(a)
        block = mv.cat([mv.cat([at, g], -1), mv.cat([ew.zeros_like(at), at], -1)], -2)
        return _cols(_rows(MatrixExp.apply(block), 0, n), n, 2 * n)


@tensor_args("A", op="linalg.matrix_exp")
def matrix_exp(A):  # noqa: N803
    """The matrix exponential of each square matrix, as torch.linalg.matrix_exp (and torch.matrix_exp)."""
    if A._data.ndim < 2:
        raise RuntimeError(f"linalg.matrix_exp: The input tensor A must have at least 2 dimensions (got shape "
                           f"{list(A._data.shape)})")
    if A._data.shape[-1] != A._data.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{A._data.shape[-2]} by {A._data.shape[-1]} matrices")
    if A._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point tensor as input. Got {A.dtype}")
    return MatrixExp.apply(A)


# Higham (2005), "The scaling and squaring method for the matrix exponential revisited": the [13/13] Padé
# approximant's coefficients, and the largest 1-norm for which it is exact to double precision.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm_arrays(xp, a):
    """exp(A) for a batch of square matrices: scale each A by 2^-s until its 1-norm is at most THETA13,
    take the Padé approximant r(A / 2^s) and square it s times (exp(A) = exp(A / 2^s)^(2^s))."""
    if a.size == 0:
        return a.copy()
    norm = xp.abs(a).sum(axis=-2).max(axis=-1)  # the 1-norm: the largest column sum
    s = xp.ceil(xp.log2(xp.maximum(norm / _THETA13, 1.0)))
    s = xp.where(xp.isfinite(s), s, 0).astype(np.int64)  # inf/nan entries: no scaling (the result is nan)
    r = _pade13(xp, a / (2.0 ** s).astype(a.dtype)[..., None, None])
    for i in range(int(s.max())):
        r = xp.where((s > i)[..., None, None], r @ r, r)  # each matrix squared its own number of times
    return r


def _pade13(xp, x):
    """r(X) = (V - U)^-1 (V + U), U the odd and V the even part of the [13/13] Padé numerator."""
    b = _PADE13
    eye = xp.eye(x.shape[-1], dtype=x.dtype)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    return lapack_solve(xp, "matrix_exp", v - u, v + u)


# ---------------------------------------------------------------- solving with a Cholesky factor

class CholeskySolve(Op):
    """X = (L L^T)^-1 B (upper=True: (U^T U)^-1 B) by two triangular solves; only L's triangle is read.
    Backward: d/dB = cholesky_solve(g, L); with S = d/dB X^T + X d/dB^T, d/dL = -S L (upper: -U S). As in
    PyTorch, that is the gradient of all of L, as if A = L L^T were formed from both triangles: its other
    triangle is not zero."""

    @staticmethod
    def forward(ctx, b, low, upper):
        xp = ctx.xp
        t = xp.triu(low._data) if upper else xp.tril(low._data)
        first, second = (xp.swapaxes(t, -1, -2), t) if upper else (t, xp.swapaxes(t, -1, -2))
        y = lapack_solve(xp, "cholesky_solve", first, b._data)
        out = lapack_solve(xp, "cholesky_solve", second, y)
        ctx.upper = upper
        ctx.save_for_backward(low, out)
        return out

    @staticmethod
    def backward(ctx, g):
        low, x = ctx.saved_tensors
        gb = CholeskySolve.apply(g, low, ctx.upper)
        n = ctx.needs_input_grad
        gl = None
        if n[1]:
            half = matmul(gb, _mT(x))
            s = ew.add(half, _mT(half))
            gl = broadcast.sum_to(ew.neg(matmul(low, s) if ctx.upper else matmul(s, low)), ctx.input_shapes[1])
        return (broadcast.sum_to(gb, ctx.input_shapes[0]) if n[0] else None), gl, None


@tensor_args("B", "L")
def cholesky_solve(B, L, upper: bool = False):  # noqa: N803
    """X with A X = B, given A's Cholesky factor L (A = L L^T; upper=True: A = U^T U), as torch.cholesky_solve.
    Deviation: a zero on L's diagonal raises LinAlgError (PyTorch returns NaNs)."""
    op = "cholesky_solve"
    _float_matrices(L, op)
    if L._data.shape[-1] != L._data.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {L._data.shape[-2]} by "
                           f"{L._data.shape[-1]} matrices")
    if B._data.ndim < 2:
        raise RuntimeError(f"{op}: b should have at least 2 dimensions, but has {B._data.ndim} dimensions instead")
    if B._data.dtype != L._data.dtype:
        raise RuntimeError(f"{op}: Expected b and A to have the same dtype, but found b of {B.dtype} and A of "
                           f"{L.dtype} instead.")
    if B._data.shape[-2] != L._data.shape[-1]:
        n, (rows, cols) = L._data.shape[-1], B._data.shape[-2:]
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is {n} by {n} but each b matrix is "
                           f"{rows} by {cols}")
    batch = _broadcast_batch(L, B, op)
    return CholeskySolve.apply(_expand_batch(B, batch), _expand_batch(L, batch), bool(upper))


@tensor_args("L")
def cholesky_inverse(L, upper: bool = False):  # noqa: N803
    """A^-1 from A's Cholesky factor L (A = L L^T; upper=True: A = U^T U), as torch.cholesky_inverse."""
    _float_matrices(L, "cholesky_inverse")
    xp = L._device.backend.xp
    n = L._data.shape[-1]
    eye = xp.broadcast_to(xp.eye(n, dtype=L._data.dtype), L._data.shape[:-2] + (n, n))  # L's shape, if square
    return cholesky_solve(make(eye.copy(), L._device), L, upper)


# ---------------------------------------------------------------- PyTorch's older names

class SVDLegacyResult(NamedTuple):
    """What torch.svd returns: V itself, where linalg.svd returns its transpose Vh."""

    U: TensorBase  # noqa: N815
    S: TensorBase  # noqa: N815
    V: TensorBase  # noqa: N815


@tensor_args("input")
def svd(input, some: bool = True, compute_uv: bool = True) -> SVDLegacyResult:  # noqa: A002 (PyTorch's names)
    """A = U diag(S) V^T, as torch.svd: reduced (some=True) or full; compute_uv=False gives U and V as zeros
    (m x m and n x n), as PyTorch does. Use linalg.svd, which returns Vh = V^T, in new code."""
    if not compute_uv:
        s = svdvals(input)
        xp, shape = input._device.backend.xp, input._data.shape
        zeros = [make(xp.zeros(shape[:-2] + (k, k), dtype=s._data.dtype), input._device) for k in shape[-2:]]
        return SVDLegacyResult(zeros[0], s, zeros[1])
    u, s, vh = linalg_svd(input, full_matrices=not some)
    return SVDLegacyResult(u, s, _mT(vh))


@tensor_args("input")
def qr(input, some: bool = True):  # noqa: A002
    """(Q, R), as torch.qr: reduced (some=True) or complete. New code uses linalg.qr(A, mode)."""
    return linalg_qr(input, "reduced" if some else "complete")


@tensor_args("input")
def cholesky(input, upper: bool = False):  # noqa: A002
    """The Cholesky factor L (upper=True: U = L^T), as the deprecated torch.cholesky, with its warning.
    New code uses linalg.cholesky(A) (and .mH for U)."""
    warn("cholesky is deprecated, as torch.cholesky is: use linalg.cholesky(A) for L, and linalg.cholesky(A).mH "
         "for upper=True")
    return linalg_cholesky(input, upper=upper)


@tensor_args("A", op="lu")
def legacy_lu(A, pivot: bool = True, get_infos: bool = False):  # noqa: N803 (PyTorch's names)
    """(LU, pivots), or (LU, pivots, info) with get_infos, as the deprecated torch.lu (torch.lu, Tensor.lu):
    linalg.lu_factor_ex, which does not raise for a singular matrix. New code uses linalg.lu_factor(_ex)."""
    warn("lu is deprecated, as torch.lu is: use linalg.lu_factor(A), or linalg.lu_factor_ex(A) for the "
         "infos")
    out = _lu_factor_ex(A, "lu", pivot)
    return out if get_infos else (out.LU, out.pivots)


@tensor_args("b", "LU_data", "LU_pivots", op="lu_solve")
def legacy_lu_solve(b, LU_data, LU_pivots):  # noqa: N803
    """X with A X = b, from torch.lu's factors of A, as the deprecated torch.lu_solve (torch.lu_solve,
    Tensor.lu_solve). New code uses linalg.lu_solve(LU, pivots, B): the arguments in the other order."""
    warn("lu_solve is deprecated, as torch.lu_solve is: use linalg.lu_solve(LU, pivots, B), whose arguments come "
         "in the other order")
    return lu_solve(LU_data, LU_pivots, b)


class TriangularSolveResult(NamedTuple):
    """What torch.triangular_solve returns: the solution, and a copy of A (broadcast to the batch)."""

    solution: TensorBase
    cloned_coefficient: TensorBase


@tensor_args("b", "A", op="triangular_solve")
def triangular_solve(b, A, upper: bool = True, transpose: bool = False,  # noqa: N803
                     unitriangular: bool = False) -> TriangularSolveResult:
    """(X, a copy of A) with A X = b (transpose=True: A^T X = b) for triangular A, the batch dims broadcast,
    as the deprecated torch.triangular_solve. New code uses linalg.solve_triangular(A, B, upper=...)."""
    warn("triangular_solve is deprecated, as torch.triangular_solve is: use linalg.solve_triangular(A, B, upper=...), "
         "whose arguments come in the other order and which returns no copy of A")
    _check_triangular_solve(b, A)
    batch = _broadcast_batch(A, b, "triangular_solve")
    a = _expand_batch(A, batch)
    solve_upper = bool(upper) != bool(transpose)  # the transpose of an upper triangle is a lower one
    solution = SolveTriangular.apply(_mT(a) if transpose else a, _expand_batch(b, batch), solve_upper,
                                     bool(unitriangular))
    return TriangularSolveResult(solution, ew.Clone.apply(a))


def _check_triangular_solve(b, a) -> None:
    _float_matrices(a, "triangular_solve")
    if b._data.ndim < 2:
        raise RuntimeError(f"triangular_solve: Expected b to have at least 2 dimensions, but it has {b._data.ndim} "
                           f"dimensions instead")
    (m, n), (rows, cols) = a._data.shape[-2:], b._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"triangular_solve: A must be batches of square matrices, but they are {m} by {n} matrices")
    if rows != n:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is {n} by {n} but each b "
                           f"matrix is {rows} by {cols}")
    if b._data.dtype != a._data.dtype:
        raise RuntimeError(f"triangular_solve: Expected b and A to have the same dtype, but found b of type "
                           f"{b.dtype} and A of type {a.dtype} instead.")


@tensor_args("input", "other")
def dist(input, other, p=2):  # noqa: A002
    """The p-norm of input - other (broadcast together), over all elements, as torch.dist."""
    if isinstance(p, TensorBase):
        p = p.item()
    if not isinstance(p, numbers.Real):
        raise TypeError(f"dist(): argument 'p' (position 3) must be Number, not {type(p).__name__}")
    return rd.norm(ew.sub(input, other), p)


@tensor_args("input")
def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None):  # noqa: A002
    """torch.norm: the p-norm over dim (all elements by default; see reduce.norm), or with p='nuc' the
    nuclear norm (the sum of the singular values) of the matrices in the two dims `dim` (of a 2-D input
    when dim is None). New code uses linalg.vector_norm and linalg.matrix_norm."""
    if not (isinstance(p, str) and p == "nuc"):
        return rd.norm(cast_to(input, dtype), p, dim, keepdim)
    dims = tuple(range(input._data.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))} (the "
                           f"nuclear norm is of matrices; input of shape {list(input._data.shape)})")
    return matrix_norm(input, "nuc", dims, keepdim, dtype=dtype)
