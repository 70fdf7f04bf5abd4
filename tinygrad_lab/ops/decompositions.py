"""Linear algebra beyond products (torch.linalg): inv, det, slogdet, solve, solve_triangular,
cholesky, qr, svd, eigh and the functions built on them (norms, renorm, pinv, matrix_power, cross, ...).

Every op works on the last two dims, with any batch dims in front. The forwards call the backend's
LAPACK (`xp.linalg`); the backwards are the textbook matrix-calculus results, written with ops
(matmul, solve, triangles), so second derivatives work. Real matrices only.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..autograd.tensor_base import TensorBase, make
from . import broadcast
from . import elementwise as ew
from . import movement as mv
from . import reduce as rd
from .diagonal import Tril, Triu, diag_embed, diagonal, tril
from .indexing import getitem
from .linalg import matmul
from .op import Op, constant, tensor_args
from .promotion import cast_to
from .shapes import broadcast_shape, normalize_dim


class LinAlgError(RuntimeError):
    """A matrix that has no answer (singular, not positive-definite), as torch.linalg.LinAlgError."""


_mT = mv.mT  # the transpose of the last two dims


def _square(a, op: str) -> None:
    if a._data.ndim < 2 or a._data.shape[-1] != a._data.shape[-2]:
        raise RuntimeError(f"linalg.{op}: A must be batches of square matrices, but they are "
                           f"{list(a._data.shape[-2:])} matrices (shape {list(a._data.shape)})")
    if a._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.{op}: Expected a floating point tensor as input. Got {a.dtype}")


def _lapack(xp, op: str, fn, *args):
    """fn(*args), with LAPACK's complaint as PyTorch's LinAlgError naming the op."""
    try:
        return fn(*args)
    except xp.linalg.LinAlgError as e:
        raise LinAlgError(f"linalg.{op}: {e} (the input is singular or not positive-definite)") from None


def lapack_solve(xp, op: str, a, b):
    """X with a @ X = b on arrays, their batch dims broadcast first: NumPy's solve broadcasts them, CuPy's does
    not, and batches that clash are PyTorch's error, not NumPy's."""
    if a.shape[:-2] != b.shape[:-2]:
        batch = broadcast_shape((a.shape[:-2], b.shape[:-2]), f"linalg.{op}")
        a, b = xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:])
    return _lapack(xp, op, xp.linalg.solve, a, b)


# ---------------------------------------------------------------- inverse, determinant, solve

class Inv(Op):
    """The inverse matrix. Backward: -out^T @ g @ out^T."""

    @staticmethod
    def forward(ctx, a):
        out = _lapack(ctx.xp, "inv", ctx.xp.linalg.inv, a._data)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return ew.neg(matmul(matmul(_mT(out), g), _mT(out)))


def inv(a):
    """The inverse of each square matrix, as torch.linalg.inv."""
    _square(a, "inv")
    return Inv.apply(a)


class Det(Op):
    """The determinant. Backward: g * det * inv(A)^T (the cofactor matrix); for a singular matrix the
    cofactors are computed from the SVD instead (first derivatives only)."""

    @staticmethod
    def forward(ctx, a):
        out = ctx.xp.linalg.det(a._data)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        if bool((out._data != 0).all()):
            cofactor = ew.mul(mv.unsqueeze(mv.unsqueeze(out, -1), -1), _mT(inv(a)))
        else:
            cofactor = constant(ctx, _cofactor_by_svd(ctx.xp, a._data))
        return ew.mul(mv.unsqueeze(mv.unsqueeze(g, -1), -1), cofactor)


def _cofactor_by_svd(xp, a):
    """The cofactor matrices (adjugate transposed) of possibly singular matrices: with A = U S V^T,
    adj(A) = det(U) det(V) V diag(product of the other singular values) U^T."""
    u, s, vt = xp.linalg.svd(a)
    n = s.shape[-1]
    others = xp.stack([xp.prod(xp.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
    signs = xp.linalg.det(u) * xp.linalg.det(vt)
    adj = (xp.swapaxes(vt, -1, -2) * others[..., None, :]) @ xp.swapaxes(u, -1, -2)
    return xp.swapaxes(adj * signs[..., None, None], -1, -2)


def det(a):
    """The determinant of each square matrix, as torch.linalg.det."""
    _square(a, "det")
    return Det.apply(a)


class SignLogAbsDet(NamedTuple):
    """What slogdet returns: PyTorch's (sign, logabsdet) named tuple."""

    sign: TensorBase
    logabsdet: TensorBase


class LogAbsDet(Op):
    """log |det(A)|. Backward: g * inv(A)^T."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.linalg.slogdet(a._data)[1]

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return ew.mul(mv.unsqueeze(mv.unsqueeze(g, -1), -1), _mT(inv(a)))


def slogdet(a) -> SignLogAbsDet:
    """(sign, log |det|) of each square matrix, as torch.linalg.slogdet: no overflow for large determinants."""
    _square(a, "slogdet")
    sign = make(a._device.backend.xp.linalg.slogdet(a._data)[0], a._device)
    return SignLogAbsDet(sign, LogAbsDet.apply(a))


def logdet(a):
    """log det(A), NaN where the determinant is negative, as torch.logdet."""
    sign, logabs = slogdet(a)
    return ew.where(ew.lt(sign, 0), float("nan"), logabs)


class Solve(Op):
    """X with A @ X = B (B holds the right-hand sides as columns; batch dims broadcast).
    Backward: d/dB = solve(A^T, g), d/dA = -d/dB @ X^T (summed back over broadcast batch dims)."""

    @staticmethod
    def forward(ctx, a, b):
        out = lapack_solve(ctx.xp, "solve", a._data, b._data)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        gb = Solve.apply(_mT(a), g)
        n = ctx.needs_input_grad
        ga = broadcast.sum_to(ew.neg(matmul(gb, _mT(out))), ctx.input_shapes[0]) if n[0] else None
        return ga, (broadcast.sum_to(gb, ctx.input_shapes[1]) if n[1] else None)


def solve(a, b, *, left: bool = True):
    """X with A @ X = B (left=False: X @ A = B), as torch.linalg.solve. B is a batch of vectors when it
    is 1-D or has A's shape without the last dim; otherwise of matrices."""
    _square(a, "solve")
    if not left:
        return _mT(solve(_mT(a), _mT(b)))
    vector = b._data.ndim == 1 or (b._data.ndim == a._data.ndim - 1 and b._data.shape == a._data.shape[:-1])
    bm = mv.unsqueeze(b, -1) if vector else b
    if bm._data.shape[-2] != a._data.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({list(a._data.shape[-2:])} and {list(bm._data.shape[-2:])})")
    a, bm = _same_dtype(a, bm)
    out = Solve.apply(a, bm)
    return mv.squeeze(out, -1) if vector else out


class SolveTriangular(Op):
    """X with A @ X = B for triangular A (upper or lower; with unitriangular, ones assumed on the diagonal).
    Backward: d/dB = solve_triangular(A^T, g) (the other triangle), d/dA = -d/dB @ X^T, kept to A's triangle."""

    @staticmethod
    def forward(ctx, a, b, upper, unit):
        xp = ctx.xp
        t = xp.triu(a._data) if upper else xp.tril(a._data)
        if unit:
            n = t.shape[-1]
            t = t * (1 - xp.eye(n, dtype=t.dtype)) + xp.eye(n, dtype=t.dtype)
        out = lapack_solve(xp, "solve_triangular", t, b._data)
        ctx.upper, ctx.unit = upper, unit
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        gb = SolveTriangular.apply(_mT(a), g, not ctx.upper, ctx.unit)
        n = ctx.needs_input_grad
        ga = None
        if n[0]:
            full = ew.neg(matmul(gb, _mT(out)))
            ga = broadcast.sum_to((Triu if ctx.upper else Tril).apply(full, 1 if ctx.unit and ctx.upper else
                                                                       -1 if ctx.unit else 0), ctx.input_shapes[0])
        return ga, (broadcast.sum_to(gb, ctx.input_shapes[1]) if n[1] else None), None, None


def solve_triangular(a, b, *, upper: bool, left: bool = True, unitriangular: bool = False):
    """X with A @ X = B (left=False: X @ A = B) for triangular A, as torch.linalg.solve_triangular."""
    _square(a, "solve_triangular")
    if not left:
        return _mT(solve_triangular(_mT(a), _mT(b), upper=not upper, unitriangular=unitriangular))
    a, b = _same_dtype(a, b)
    return SolveTriangular.apply(a, b, bool(upper), bool(unitriangular))


def _same_dtype(a, b):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"linalg: expected A and B to have the same dtype, but got A of {a.dtype} and B of "
                           f"{b.dtype}")
    return a, b


# ---------------------------------------------------------------- factorizations

class Cholesky(Op):
    """The lower-triangular L with L @ L^T = A (A symmetric positive-definite).
    Backward (Murray, 2016): with P = the lower triangle of L^T @ g, its diagonal halved,
    S = L^-T @ P @ L^-1, and d/dA = (S + S^T) / 2 (A is symmetric)."""

    @staticmethod
    def forward(ctx, a):
        out = _lapack(ctx.xp, "cholesky", ctx.xp.linalg.cholesky, a._data)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (low,) = ctx.saved_tensors
        p = Tril.apply(matmul(_mT(low), Tril.apply(g, 0)), 0)
        p = ew.sub(p, ew.mul(diag_embed(diagonal(p, 0, -2, -1)), 0.5))
        left = SolveTriangular.apply(_mT(low), p, True, False)  # L^-T P
        s = _mT(SolveTriangular.apply(_mT(low), _mT(left), True, False))  # (L^-T (L^-T P)^T)^T = L^-T P L^-1
        return ew.mul(ew.add(s, _mT(s)), 0.5)


def cholesky(a, *, upper: bool = False):
    """The Cholesky factor of each symmetric positive-definite matrix, as torch.linalg.cholesky
    (lower-triangular L with L @ L^T = A; upper=True gives L^T)."""
    _square(a, "cholesky")
    low = Cholesky.apply(a)
    return _mT(low) if upper else low


class QR(Op):
    """A = Q @ R with orthonormal columns in Q and upper-triangular R (mode 'reduced' or 'complete').
    Backward (rows >= columns, reduced; Liao et al. 2019): with M = R @ gR^T - gQ^T @ Q and copyltu(M)
    the symmetric matrix holding M's lower triangle, d/dA = (gQ + Q @ copyltu(M)) @ R^-T.
    Wide A = [X Y] (rows < columns): X = Q R1 is a square QR and R2 = Q^T Y, so d/dY = Q gR2, and d/dX is
    the square case's with gQ + Y gR2^T in place of gQ."""

    @staticmethod
    def forward(ctx, a, mode):
        q, r = ctx.xp.linalg.qr(a._data, mode=mode)
        ctx.mode = mode
        ctx.save_for_backward(q, r)
        return q, r

    @staticmethod
    def backward(ctx, gq, gr):
        q, r = ctx.saved_tensors
        m, n = ctx.input_shapes[0][-2:]
        if ctx.mode == "complete" and m > n:
            raise NotImplementedError(f"linalg.qr: the gradient is implemented for mode='reduced' (or rows <= "
                                      f"columns) (got a {m}x{n} input, mode={ctx.mode!r})")
        gq = gq if gq is not None else ew.zeros_like(q)
        gr = gr if gr is not None else ew.zeros_like(r)
        if m >= n:
            return _qr_backward_tall(q, r, gq, gr), None
        r1, r2 = (getitem(r, (Ellipsis, cols)) for cols in (slice(0, m), slice(m, None)))
        gr1, gr2 = (getitem(gr, (Ellipsis, cols)) for cols in (slice(0, m), slice(m, None)))
        gq = ew.add(gq, matmul(matmul(q, r2), _mT(gr2)))  # + Y gR2^T, with Y = Q R2
        return mv.cat([_qr_backward_tall(q, r1, gq, gr1), matmul(q, gr2)], -1), None


def _qr_backward_tall(q, r, gq, gr):
    """d/dA of A = Q R for rows >= columns (reduced): see QR."""
    mm = ew.sub(matmul(r, _mT(gr)), matmul(_mT(gq), q))
    low = Tril.apply(mm, -1)
    copyltu = ew.add(ew.add(low, _mT(low)), diag_embed(diagonal(mm, 0, -2, -1)))
    rhs = ew.add(gq, matmul(q, copyltu))  # (gQ + Q copyltu(M)) R^-T = solve(R, (...)^T)^T
    return _mT(SolveTriangular.apply(r, _mT(rhs), True, False))


class QRResult(NamedTuple):
    Q: TensorBase
    R: TensorBase


def qr(a, mode: str = "reduced") -> QRResult:
    """The QR decomposition, as torch.linalg.qr: mode 'reduced' (Q: m x k), 'complete' (Q: m x m) or 'r'
    (R only; Q is empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           f"'r', or 'complete'")
    if a._data.ndim < 2:
        raise RuntimeError(f"linalg.qr: The input tensor A must have at least 2 dimensions (got {a._data.ndim})")
    q, r = QR.apply(a, "reduced" if mode == "r" else mode)
    if mode == "r":
        q = make(a._device.backend.xp.zeros((0,), dtype=a._data.dtype), a._device)
    return QRResult(q, r)


class SVD(Op):
    """A = U @ diag(S) @ Vh, singular values S in descending order.
    Backward (reduced SVD, distinct singular values; as PyTorch's): with E_ij = S_j**2 - S_i**2 (i != j),
    J = (U^T gU - (U^T gU)^T) / E and K likewise for V, d/dA = U (J S + S K + diag(gS)) Vh
    + (I - U U^T) gU S^-1 Vh + U S^-1 gVh (I - V V^T)."""

    @staticmethod
    def forward(ctx, a, full_matrices):
        u, s, vh = ctx.xp.linalg.svd(a._data, full_matrices=full_matrices)
        ctx.full = full_matrices
        ctx.set_materialize_grads(False)  # unused vectors give None, not zeros: 0 / (S_j^2 - S_i^2) is nan
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    @staticmethod
    def backward(ctx, gu, gs, gvh):
        u, s, vh = ctx.saved_tensors
        m, n = ctx.input_shapes[0][-2:]
        if ctx.full and m != n and (gu is not None or gvh is not None):
            raise NotImplementedError("linalg.svd: the gradient of the singular vectors needs full_matrices=False "
                                      "for a non-square input (the completed vectors are not unique)")
        return svd_backward(u, s, vh, gu, gs, gvh), None


def svd_backward(u, s, vh, gu, gs, gvh):
    """d/dA of the reduced SVD (see SVD); the vectors beyond the k = min(m, n) first carry no gradient."""
    k = s._data.shape[-1]
    u, gu = (_first_columns(t, k) for t in (u, gu))
    vh, gvh = (_first_rows(t, k) for t in (vh, gvh))
    v = _mT(vh)
    inner = diag_embed(gs) if gs is not None else ew.zeros_like(matmul(_mT(v), v))
    s2 = ew.mul(s, s)
    gaps = ew.sub(mv.unsqueeze(s2, -2), mv.unsqueeze(s2, -1))  # E_ij = S_j^2 - S_i^2
    safe = ew.add(gaps, constant_eye(s, k))  # 1 on the diagonal, where the skew parts are 0
    return _svd_vector_terms(u, v, vh, gu, gvh, inner, safe, mv.unsqueeze(s, -1), mv.unsqueeze(s, -2))


def _first_columns(t, k: int):
    return t if t is None or t._data.shape[-1] == k else getitem(t, (Ellipsis, slice(0, k)))


def _first_rows(t, k: int):
    return t if t is None or t._data.shape[-2] == k else getitem(t, (Ellipsis, slice(0, k), slice(None)))


def _svd_vector_terms(u, v, vh, gu, gvh, inner, safe, s_col, s_row):
    """U (J S + S K + diag(gS)) Vh plus the terms for the space U and V do not span."""
    extra = None
    if gu is not None:
        utgu = matmul(_mT(u), gu)
        inner = ew.add(inner, ew.mul(ew.div(ew.sub(utgu, _mT(utgu)), safe), s_row))
        rest = ew.sub(gu, matmul(u, utgu))  # (I - U U^T) gU
        extra = matmul(ew.div(rest, s_row), vh)
    if gvh is not None:
        gv = _mT(gvh)
        vtgv = matmul(_mT(v), gv)
        inner = ew.add(inner, ew.mul(s_col, ew.div(ew.sub(vtgv, _mT(vtgv)), safe)))
        rest = ew.sub(gv, matmul(v, vtgv))  # (I - V V^T) gV
        term = matmul(ew.div(u, s_row), _mT(rest))
        extra = term if extra is None else ew.add(extra, term)
    out = matmul(matmul(u, inner), vh)
    return out if extra is None else ew.add(out, extra)


def constant_eye(like, n: int):
    """A constant identity matrix of like's dtype and device."""
    xp = like._device.backend.xp
    return make(xp.eye(n, dtype=like._data.dtype), like._device)


class SVDResult(NamedTuple):
    U: TensorBase
    S: TensorBase
    Vh: TensorBase


def svd(a, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition A = U @ diag(S) @ Vh, as torch.linalg.svd."""
    _matrix(a, "svd")
    return SVDResult(*SVD.apply(a, bool(full_matrices)))


def svdvals(a):
    """The singular values of each matrix, in descending order, as torch.linalg.svdvals."""
    _matrix(a, "svdvals")
    return SVD.apply(a, False)[1]


class Eigh(Op):
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix (read from its lower
    triangle, or the upper with UPLO='U'). Backward (distinct eigenvalues): with F_ij = 1/(L_j - L_i)
    (i != j, 0 on the diagonal), d/dA = Q (diag(gL) + F * (Q^T gQ)) Q^T, made symmetric (its mean with its
    transpose), as PyTorch's: the gradient of a function of a symmetric matrix, at every order of derivative."""

    @staticmethod
    def forward(ctx, a, uplo):
        values, vectors = ctx.xp.linalg.eigh(a._data, UPLO=uplo)
        ctx.set_materialize_grads(False)  # unused eigenvectors give None, not zeros: 0 / (L_j - L_i) is nan
        ctx.save_for_backward(values, vectors)
        return values, vectors

    @staticmethod
    def backward(ctx, gl, gq):
        values, q = ctx.saved_tensors
        n = values._data.shape[-1]
        inner = diag_embed(gl) if gl is not None else ew.zeros_like(matmul(_mT(q), q))
        if gq is not None:
            gaps = ew.sub(mv.unsqueeze(values, -2), mv.unsqueeze(values, -1))  # L_j - L_i
            eye = constant_eye(values, n)
            f = ew.where(ew.cast(eye, "bool"), 0.0, ew.div(1.0, ew.add(gaps, eye)))
            inner = ew.add(inner, ew.mul(f, matmul(_mT(q), gq)))
        ga = matmul(matmul(q, inner), _mT(q))
        return ew.mul(ew.add(ga, _mT(ga)), 0.5), None


class EighResult(NamedTuple):
    eigenvalues: TensorBase
    eigenvectors: TensorBase


def eigh(a, UPLO: str = "L") -> EighResult:  # noqa: N803 (PyTorch's name)
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices, as torch.linalg.eigh."""
    _square(a, "eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return EighResult(*Eigh.apply(a, UPLO))


def eigvalsh(a, UPLO: str = "L"):  # noqa: N803
    """The eigenvalues of symmetric matrices, ascending, as torch.linalg.eigvalsh."""
    return eigh(a, UPLO).eigenvalues


def _matrix(a, op: str) -> None:
    if a._data.ndim < 2:
        raise RuntimeError(f"linalg.{op}: The input tensor A must have at least 2 dimensions.")
    if a._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.{op}: Expected a floating point tensor as input. Got {a.dtype}")


# ---------------------------------------------------------------- built from the above

def matrix_power(a, n: int):
    """a @ a @ ... (n times) by repeated squaring, as torch.linalg.matrix_power; n = 0 gives the identity
    and a negative n powers of the inverse."""
    if a._data.ndim < 2 or a._data.shape[-1] != a._data.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{list(a._data.shape[-2:])} matrices")
    if n < 0:
        a, n = inv(a), -n
    if n == 0:
        eye = broadcast.expand(constant_eye(a, a._data.shape[-1]), a._data.shape)
        return ew.add(ew.mul(a, 0), eye) if a._data.dtype.kind == "f" else eye
    result, square = None, a
    while n:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    return result


def pinv(a, *, hermitian: bool = False, rtol=None, atol=None):
    """The Moore-Penrose pseudo-inverse V diag(1/S) U^T (singular values below the tolerance count as 0),
    as torch.linalg.pinv; hermitian=True reads only the lower triangle, as PyTorch does."""
    if hermitian:
        a = ew.add(tril(a), _mT(tril(a, -1)))
    u, s, vh = svd(a, full_matrices=False)
    tol = _rank_tolerance(a, s, rtol, atol)
    keep = ew.gt(s, tol)
    inv_s = ew.where(keep, ew.div(1.0, ew.where(keep, s, 1.0)), 0.0)
    return matmul(ew.mul(_mT(vh), mv.unsqueeze(inv_s, -2)), _mT(u))


def _rank_tolerance(a, s, rtol, atol):
    """max(atol, rtol * largest singular value); rtol defaults to eps * max(m, n) (as PyTorch)."""
    eps = float(np.finfo(a._data.dtype).eps)
    if rtol is None:
        rtol = 0.0 if atol not in (None, 0) else eps * max(a._data.shape[-2:])
    largest = s._data[..., :1] if s._data.shape[-1] else s._data
    return make(a._device.backend.xp.maximum(atol or 0.0, rtol * largest), a._device)


def matrix_rank(a, *, atol=None, rtol=None, hermitian: bool = False):
    """The number of singular values above the tolerance, as torch.linalg.matrix_rank (no gradient)."""
    s = make(svdvals(a)._data, a._device)  # no gradient: a count
    return rd.sum(ew.gt(s, _rank_tolerance(a, s, rtol, atol)), -1)


def cross(a, b, dim: int = -1):
    """The cross product of 3-vectors along dim, as torch.linalg.cross."""
    from .scatter import index_select
    d = dim % max(a._data.ndim, 1)
    if a._data.shape[d] != 3 or b._data.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a._data.shape[d]} and "
                           f"{b._data.shape[d]}")
    xp = a._device.backend.xp
    shift1, shift2 = (make(xp.asarray(i, dtype="int64"), a._device) for i in ([1, 2, 0], [2, 0, 1]))
    return ew.sub(ew.mul(index_select(a, d, shift1), index_select(b, d, shift2)),
                  ew.mul(index_select(a, d, shift2), index_select(b, d, shift1)))


def vecdot(x, y, *, dim: int = -1):
    """The dot product along dim, as torch.linalg.vecdot."""
    return rd.sum(ew.mul(x, y), dim)


# ---------------------------------------------------------------- norms

def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002 (PyTorch's names)
    """The ord-norm of x over dim (all elements by default), as torch.linalg.vector_norm: ord 2, 1, inf,
    -inf, 0 (the count of nonzeros) or any number."""
    x = cast_to(x, dtype)
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {x.dtype}")
    if dim is None and x._data.ndim != 1:
        flat = mv.reshape(x, (-1,))
        out = vector_norm(flat, ord, 0, False)
        return mv.reshape(out, (1,) * x._data.ndim) if keepdim else out
    return rd.norm(x, ord, dim, keepdim)


@tensor_args("x", op="renorm")
def renorm(x, p, dim: int, maxnorm):
    """x with each slice along dim (x.select(dim, i)) whose p-norm exceeds maxnorm scaled down to norm maxnorm,
    as torch.renorm (the scale is maxnorm / (norm + 1e-7), as PyTorch's). Composed of ops: the gradient also
    flows through each slice's norm."""
    nd = x._data.ndim
    if nd < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} dimensions (shape "
                           f"{list(x._data.shape)})")
    if not p > 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (got p={p})")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = normalize_dim(dim, nd, "renorm")
    norms = vector_norm(x, p, tuple(k for k in range(nd) if k != d), keepdim=True)
    scale = ew.where(ew.gt(norms, maxnorm), ew.div(maxnorm, ew.add(norms, 1e-7)), 1.0)
    return ew.mul(x, scale)


def matrix_norm(a, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None):  # noqa: A002
    """The ord-norm of matrices (in dims `dim`), as torch.linalg.matrix_norm: 'fro', 'nuc', 1, -1, 2, -2,
    inf, -inf."""
    a = cast_to(a, dtype)
    d0, d1 = (d % a._data.ndim for d in dim)
    if ord == "fro":
        return rd.norm(a, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(mv.movedim(a, (d0, d1), (-2, -1)))
        out = rd.sum(s, -1) if ord == "nuc" else (rd.amax(s, -1) if ord == 2 else rd.amin(s, -1))
        return mv.unsqueeze(mv.unsqueeze(out, min(d0, d1)), max(d0, d1)) if keepdim else out
    if ord in (1, -1, float("inf"), float("-inf")):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)  # 1: the largest column sum; inf: row sum
        sums = rd.sum(ew.abs(a), inner, keepdim=True)
        out = (rd.amax if ord > 0 else rd.amin)(sums, outer, keepdim=True)
        return out if keepdim else mv.squeeze(out, (d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(a, ord=None, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002
    """torch.linalg.norm: a vector norm (1-D input, or an int dim) or a matrix norm (2-D input, or a
    pair of dims); with ord=None, the 2-norm of all elements."""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return vector_norm(a, 2, dim, keepdim, dtype=dtype)
    if (dim is not None and len(dim) == 2) or (dim is None and a._data.ndim == 2):
        return matrix_norm(a, ord, dim or (-2, -1), keepdim, dtype=dtype)
    if dim is None and a._data.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{a._data.ndim}D.")
    return vector_norm(a, ord, dim, keepdim, dtype=dtype)
