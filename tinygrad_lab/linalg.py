"""tinygrad_lab.linalg: PyTorch's torch.linalg. The ops live in ops/decompositions.py (inv, det, solve,
cholesky, qr, svd, eigh, the norms, ...), ops/factorizations.py (lu_factor, lu, lu_solve, lstsq,
matrix_exp) and ops/linalg.py (matmul, multi_dot); every one is differentiable, with gradients checked
against PyTorch and finite differences. Not here: eig and eigvals (a real matrix can have complex
eigenvalues, and tinygrad_lab has no complex dtype)."""
from __future__ import annotations

from typing import NamedTuple

from .autograd.tensor_base import TensorBase, make
from .ops.decompositions import (LinAlgError, cholesky, cross, det, eigh, eigvalsh, inv, matrix_norm,  # noqa: F401
                                 matrix_power, matrix_rank, norm, pinv, qr, slogdet, solve, solve_triangular, svd,
                                 svdvals, vecdot, vector_norm)
from .ops.diagonal import diagonal as _diagonal
from .ops.factorizations import lstsq, lu, lu_factor, lu_factor_ex, lu_solve, matrix_exp  # noqa: F401
from .ops.linalg import matmul, multi_dot  # noqa: F401

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "inv_ex",
           "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm",
           "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
           "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm"]


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):  # noqa: N803 (PyTorch's names)
    """Diagonal `offset` of the matrices in dims dim1, dim2 (the last two by default), as torch.linalg.diagonal."""
    return _diagonal(A, offset, dim1, dim2)


def _info(a: TensorBase) -> TensorBase:
    """The LAPACK status of each matrix of a batch: 0 (success); failures raise LinAlgError here."""
    return make(a._device.backend.xp.zeros(a._data.shape[:-2], dtype="int32"), a._device)


class _WithInfo(NamedTuple):
    result: TensorBase
    info: TensorBase


class _CholeskyEx(NamedTuple):
    L: TensorBase  # noqa: N815 (PyTorch's field name)
    info: TensorBase


class _InvEx(NamedTuple):
    inverse: TensorBase
    info: TensorBase


def cholesky_ex(A, *, upper: bool = False, check_errors: bool = False):  # noqa: N803
    """(L, info) as torch.linalg.cholesky_ex. Deviation: a matrix that is not positive-definite raises
    LinAlgError whatever check_errors says (PyTorch returns a nonzero info instead)."""
    return _CholeskyEx(cholesky(A, upper=upper), _info(A))


def inv_ex(A, *, check_errors: bool = False):  # noqa: N803
    """(inverse, info) as torch.linalg.inv_ex; a singular matrix raises LinAlgError (see cholesky_ex)."""
    return _InvEx(inv(A), _info(A))


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False):  # noqa: N803
    """(result, info) as torch.linalg.solve_ex; a singular matrix raises LinAlgError (see cholesky_ex)."""
    return _WithInfo(solve(A, B, left=left), _info(A))
