"""ops/factorizations.py: LU (lu_factor, lu_factor_ex, lu, lu_unpack, lu_solve), lstsq, matrix_exp,
cholesky_solve / cholesky_inverse, and PyTorch's older names (torch.svd, torch.qr, torch.dist,
torch.norm with p='nuc'); also the wide-matrix gradient of linalg.qr. Values and gradients are checked
against PyTorch (skipped without it), gradients against finite differences (gradcheck, float64), and
a few results by hand."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import gradcheck, gradgradcheck

from .op_table import TL, error_of, torch_lib

TOL = {"float32": (2e-4, 2e-5), "float64": (1e-9, 1e-10)}  # (rtol, atol)


# ---------------------------------------------------------------- running the same program in both libraries

def _both(fn, arrays, dtype: str, seed: int = 0, grad: bool = True):
    """fn(m, *leaves) in tinygrad_lab and in PyTorch, leaves of `dtype` holding `arrays`: the outputs, and the
    leaves' gradients of a random weighting of the outputs that carry gradients. Returns (ours, theirs)."""
    results = []
    for m in (TL, torch_lib()):
        leaves = [m.tensor(np.asarray(a, dtype=dtype), requires_grad=grad) for a in arrays]
        outs = fn(m, *leaves)
        outs = tuple(outs) if isinstance(outs, tuple) else (outs,)
        rng = np.random.default_rng(seed)
        diff = [o for o in outs if o.requires_grad]
        loss = sum((o * m.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype))).sum() for o in diff)
        grads = m.autograd.grad(loss, leaves, allow_unused=True) if diff else [None] * len(leaves)
        results.append((outs, tuple(grads)))
    return results


def _numpy(t):
    return None if t is None else np.asarray(t.detach().numpy())


def _same(got, want, dtype: str, what: str) -> None:
    g, w = _numpy(got), _numpy(want)
    if w is None:
        assert g is None or not np.any(g), f"{what}: a gradient where PyTorch has none"
        return
    assert g is not None, f"{what}: no gradient, PyTorch has one"
    assert g.shape == w.shape, f"{what}: shape {g.shape}, PyTorch {w.shape}"
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype}, PyTorch {w.dtype}"
    rtol, atol = TOL[dtype]
    if w.dtype.kind in "iub":
        np.testing.assert_array_equal(g, w, err_msg=what)
    else:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * max(1.0, float(np.abs(w).max(initial=0))),
                                   err_msg=what)


def check_both(fn, arrays, dtype: str = "float64", seed: int = 0, grad: bool = True) -> None:
    """fn's outputs and gradients (see _both; grad=False: outputs only) agree with PyTorch's."""
    (outs, grads), (t_outs, t_grads) = _both(fn, arrays, dtype, seed, grad)
    assert len(outs) == len(t_outs), f"{len(outs)} outputs, PyTorch gives {len(t_outs)}"
    for i, (o, t) in enumerate(zip(outs, t_outs)):
        _same(o, t, dtype, f"output {i}")
    for i, (g, t) in enumerate(zip(grads, t_grads)):
        _same(g, t, dtype, f"gradient of input {i}")


def _randn(*shape, seed: int = 0):
    return np.random.default_rng(seed).standard_normal(shape)


def _spd_factor(*batch, n: int = 4, seed: int = 0):
    """A well-conditioned Cholesky factor (lower-triangular, positive diagonal)."""
    a = _randn(*batch, n, n, seed=seed)
    spd = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return np.linalg.cholesky(spd)


DTYPES = ["float32", "float64"]
SHAPES = {"square": (4, 4), "tall": (5, 3), "wide": (3, 5), "batched": (2, 4, 4), "batched tall": (2, 3, 5, 4),
          "batched wide": (2, 3, 4)}


# ---------------------------------------------------------------- LU

@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_factor_matches_pytorch(shape, dtype, torch):
    check_both(lambda m, a: tuple(m.linalg.lu_factor(a)), [_randn(*shape)], dtype)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_values_and_gradients_match_pytorch(shape, dtype, torch):
    check_both(lambda m, a: tuple(m.linalg.lu(a)), [_randn(*shape)], dtype)


@pytest.mark.parametrize("shape", [(0, 3, 3), (3, 0), (0, 3), (2, 0, 0)])
def test_lu_of_empty_matrices_matches_pytorch(shape, torch):
    check_both(lambda m, a: tuple(m.linalg.lu(a)), [np.zeros(shape)])
    check_both(lambda m, a: tuple(m.linalg.lu_factor_ex(a)), [np.zeros(shape)])


def test_lu_by_hand():
    """[[1, 2], [3, 4]]: row 2 has the larger first entry, so it becomes the pivot row."""
    lu_, pivots = tl.linalg.lu_factor(tl.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tl.float64))
    assert pivots.tolist() == [2, 2] and pivots.dtype == tl.int32
    np.testing.assert_allclose(lu_.numpy(), [[3.0, 4.0], [1 / 3, 2 / 3]])
    p, low, up = tl.linalg.lu(tl.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tl.float64))
    assert p.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    np.testing.assert_allclose(low.numpy(), [[1.0, 0.0], [1 / 3, 1.0]])
    np.testing.assert_allclose(up.numpy(), [[3.0, 4.0], [0.0, 2 / 3]])


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_lu_reconstructs_a_with_a_permutation_and_triangles(shape):
    a = _randn(*shape)
    p, low, up = (t.numpy() for t in tl.linalg.lu(tl.tensor(a)))
    np.testing.assert_allclose(p @ low @ up, a, atol=1e-12)
    k = min(shape[-2:])
    assert low.shape == shape[:-1] + (k,) and up.shape == shape[:-2] + (k, shape[-1])
    np.testing.assert_array_equal(np.tril(low, -1) + np.eye(*low.shape[-2:]), low)  # unit lower-triangular
    np.testing.assert_array_equal(np.triu(up), up)
    np.testing.assert_array_equal(p.sum(-1), 1)
    np.testing.assert_array_equal(p.sum(-2), 1)
    assert np.abs(np.tril(low, -1)).max() <= 1  # partial pivoting: no multiplier above 1 in size


def test_lu_of_a_batch_is_each_matrix_lu():
    """The elimination runs on the whole batch at once; each matrix gets its own pivots."""
    a = _randn(3, 2, 4, 4, seed=1)
    lu_, pivots = tl.linalg.lu_factor(tl.tensor(a))
    for i in np.ndindex(3, 2):
        one, piv = tl.linalg.lu_factor(tl.tensor(a[i]))
        np.testing.assert_allclose(lu_.numpy()[i], one.numpy(), atol=1e-14)
        np.testing.assert_array_equal(pivots.numpy()[i], piv.numpy())


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3)])
def test_lu_gradcheck_and_second_derivatives(shape):
    a = tl.tensor(_randn(*shape, seed=2), requires_grad=True)
    assert gradcheck(lambda x: tuple(tl.linalg.lu(x))[1:], (a,))
    assert gradcheck(lambda x: tl.linalg.lu_factor(x).LU, (a,))
    assert gradgradcheck(lambda x: tuple(tl.linalg.lu(x))[1:], (a,))


def test_lu_factor_of_a_singular_matrix_raises_as_pytorch(torch):
    singular = [[1.0, 2.0], [2.0, 4.0]]
    assert isinstance(error_of(lambda: torch.linalg.lu_factor(torch.tensor(singular))), RuntimeError)
    with pytest.raises(tl.linalg.LinAlgError, match=r"U\[2,2\] is zero.*\[2, 2\]"):
        tl.linalg.lu_factor(tl.tensor(singular))
    with pytest.raises(RuntimeError, match=r"Batch element 1"):
        tl.linalg.lu_factor(tl.stack([tl.eye(2), tl.tensor(singular)]))
    # lu and lu_factor_ex factor it all the same; info names U's first zero on the diagonal
    check_both(lambda m, a: tuple(m.linalg.lu_factor_ex(a)), [np.array([singular, np.eye(2), np.zeros((2, 2))])],
               grad=False)
    check_both(lambda m, a: tuple(m.linalg.lu(a)), [np.array(singular)], grad=False)
    with pytest.raises(tl.linalg.LinAlgError):
        tl.linalg.lu_factor_ex(tl.tensor(singular), check_errors=True)


def test_lu_factor_of_a_zero_column_matches_lapack(torch):
    """A column of zeros: no row swap and no scaling (what LAPACK does), info = that column."""
    check_both(lambda m, a: tuple(m.linalg.lu_factor_ex(a)), [np.array([[0.0, 1.0, 3.0], [0.0, 2.0, 4.0]])],
               grad=False)


LU_ERRORS = {
    "1-D": (lambda m: m.linalg.lu_factor(m.ones(3)), "2 dimensions"),
    "integer": (lambda m: m.linalg.lu_factor(m.ones(3, 3, dtype=m.int64)), "int64|Long"),
    "no pivoting": (lambda m: m.linalg.lu(m.eye(3), pivot=False), "pivoting"),
}


@pytest.mark.parametrize("fn, pattern", LU_ERRORS.values(), ids=LU_ERRORS.keys())
def test_lu_errors_are_runtime_errors_as_in_pytorch(fn, pattern, torch):
    ref = error_of(lambda: fn(torch_lib()))
    assert isinstance(ref, (RuntimeError, NotImplementedError)), ref
    with pytest.raises(RuntimeError, match=pattern):  # NotImplementedError is a RuntimeError
        fn(TL)


@pytest.mark.parametrize("shape", [(3, 5), (4, 4), (5, 3), (2, 5, 3)])
@pytest.mark.parametrize("unpack_data, unpack_pivots", [(True, True), (False, True), (True, False)])
def test_lu_unpack_matches_pytorch(shape, unpack_data, unpack_pivots, torch):
    def fn(m, a):
        lu_, pivots = m.linalg.lu_factor(a)
        return tuple(m.lu_unpack(lu_, pivots, unpack_data=unpack_data, unpack_pivots=unpack_pivots))

    check_both(fn, [_randn(*shape)], grad=unpack_data)  # PyTorch's backward fails when L and U are left empty


def test_lu_unpack_refuses_pivots_it_cannot_use(torch):
    lu_ = tl.tensor(_randn(3, 3))
    for bad in (tl.tensor([1, 2, 3]), tl.tensor([1, 2, 5], dtype=tl.int32), tl.tensor([1, 2], dtype=tl.int32),
                tl.tensor([0, 2, 3], dtype=tl.int32)):
        if bad.numel() == 3:  # too few pivots: PyTorch reads past their end, and raises only sometimes
            assert isinstance(error_of(lambda: torch.lu_unpack(torch.tensor(_randn(3, 3)),
                                                               torch.tensor(bad.numpy()))), RuntimeError)
        with pytest.raises(RuntimeError, match="pivots"):
            tl.lu_unpack(lu_, bad)


LU_SOLVE = {
    "matrix": ((4, 4), (4, 2)),
    "one column": ((4, 4), (4, 1)),
    "batched": ((2, 4, 4), (2, 4, 3)),
    "B broadcast over A's batch": ((2, 4, 4), (4, 3)),
    "A broadcast over B's batch": ((4, 4), (3, 4, 2)),
}


@pytest.mark.parametrize("shapes", LU_SOLVE.values(), ids=LU_SOLVE.keys())
@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False), (False, True)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_solve_matches_pytorch(shapes, left, adjoint, dtype, torch):
    sa, sb = shapes
    if not left:
        sb = sb[:-2] + sb[:-3:-1]  # B is k x n

    def fn(m, a, b):
        lu_, pivots = m.linalg.lu_factor(a)
        return m.linalg.lu_solve(lu_, pivots, b, left=left, adjoint=adjoint)

    check_both(fn, [_randn(*sa, seed=3), _randn(*sb, seed=4)], dtype)


@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False), (False, True)])
def test_lu_solve_solves_and_gradchecks(left, adjoint):
    a, b = _randn(4, 4, seed=5), _randn(4, 4, seed=6)
    lu_, pivots = tl.linalg.lu_factor(tl.tensor(a))
    x = tl.linalg.lu_solve(lu_, pivots, tl.tensor(b), left=left, adjoint=adjoint).numpy()
    op = a.T if adjoint else a
    np.testing.assert_allclose(op @ x if left else x @ op, b, atol=1e-12)
    lu_ = lu_.detach().requires_grad_()
    assert gradcheck(lambda m, y: tl.linalg.lu_solve(m, pivots, y, left=left, adjoint=adjoint),
                     (lu_, tl.tensor(b, requires_grad=True)))


LU_SOLVE_ERRORS = {
    "B 1-D": (lambda m, lu_, p: m.linalg.lu_solve(lu_, p, m.ones(3, dtype=m.float64)), "2 dimensions"),
    "dtypes differ": (lambda m, lu_, p: m.linalg.lu_solve(lu_, p, m.ones(3, 2)), "dtype"),
    "rows differ": (lambda m, lu_, p: m.linalg.lu_solve(lu_, p, m.ones(4, 2, dtype=m.float64)), r"3x3 and 4x2"),
    "int64 pivots": (lambda m, lu_, p: m.linalg.lu_solve(lu_, p.long(), m.ones(3, 2, dtype=m.float64)), "int32"),
    "too few pivots": (lambda m, lu_, p: m.linalg.lu_solve(lu_, p[:2], m.ones(3, 2, dtype=m.float64)), "pivots"),
}


@pytest.mark.parametrize("fn, pattern", LU_SOLVE_ERRORS.values(), ids=LU_SOLVE_ERRORS.keys())
def test_lu_solve_errors_are_runtime_errors_as_in_pytorch(fn, pattern, torch):
    a = _randn(3, 3)
    ref = error_of(lambda: fn(torch, *torch.linalg.lu_factor(torch.tensor(a))))
    assert isinstance(ref, RuntimeError), ref
    with pytest.raises(RuntimeError, match=pattern):
        fn(tl, *tl.linalg.lu_factor(tl.tensor(a)))


# ---------------------------------------------------------------- lstsq

LSTSQ = {
    "tall": ((5, 3), (5, 2)),
    "square": ((3, 3), (3, 2)),
    "wide": ((3, 5), (3, 2)),
    "vector B": ((5, 3), (5,)),
    "batch of vectors": ((2, 5, 3), (2, 5)),
    "batched": ((2, 5, 3), (2, 5, 2)),
    "batched wide": ((2, 3, 5), (2, 3, 2)),
    "broadcast batch": ((2, 1, 5, 3), (1, 3, 5, 2)),
}


@pytest.mark.parametrize("shapes", LSTSQ.values(), ids=LSTSQ.keys())
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lstsq_matches_pytorch(shapes, driver, dtype, torch):
    """All four outputs (residuals only where the driver gives them) and the gradients of solution and
    residuals in A and B."""
    sa, sb = shapes
    check_both(lambda m, a, b: tuple(m.linalg.lstsq(a, b, driver=driver)), [_randn(*sa, seed=7), _randn(*sb, seed=8)],
               dtype)


def test_lstsq_default_driver_is_gelsy_with_pytorchs_outputs(torch):
    """gelsy (PyTorch's CPU default): the rank, no residuals, no singular values."""
    a, b = tl.tensor(_randn(2, 5, 3)), tl.tensor(_randn(2, 5, 2))
    out = tl.linalg.lstsq(a, b)
    assert out._fields == ("solution", "residuals", "rank", "singular_values")
    assert out.rank.tolist() == [3, 3] and out.rank.dtype == tl.int64
    assert out.residuals.shape == (0,) and out.singular_values.shape == (0,)
    np.testing.assert_allclose(out.solution.numpy(), np.linalg.pinv(a.numpy()) @ b.numpy(), atol=1e-12)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("rcond", [None, 0.5])
def test_lstsq_of_a_rank_deficient_matrix_is_the_smallest_solution(driver, rcond, torch):
    """rcond=0.5 drops a nonzero singular value too. The gradient there is that of the solution we return
    (finite differences agree); PyTorch's backward ignores rcond, so it is not compared. Nor is gelsy's
    solution then: its truncated pivoted QR is another rank-1 approximation than the SVD's (a deviation)."""
    a = _randn(5, 3)
    a[:, 2] = a[:, 1]  # rank 2
    if driver != "gelsy" or rcond is None:
        check_both(lambda m, x, y: tuple(m.linalg.lstsq(x, y, rcond, driver=driver)), [a, _randn(5, 2)],
                   grad=rcond is None)
    out = tl.linalg.lstsq(tl.tensor(a), tl.tensor(_randn(5, 2)), rcond, driver=driver)
    assert out.rank.item() == (2 if rcond is None else 1) and out.residuals.shape == (0,)  # residuals: full rank only
    if rcond is not None:
        args = (tl.tensor(a, requires_grad=True), tl.tensor(_randn(5, 2), requires_grad=True))
        assert gradcheck(lambda x, y: tl.linalg.lstsq(x, y, rcond, driver=driver).solution, args)


@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 4, 4), (2, 4)), ((5, 2), (5,))])
def test_lstsq_gradcheck(shapes):
    a, b = (tl.tensor(_randn(*s, seed=i), requires_grad=True) for i, s in enumerate(shapes))
    assert gradcheck(lambda x, y: tuple(tl.linalg.lstsq(x, y, driver="gelsd"))[:2], (a, b))
    assert gradgradcheck(lambda x, y: tl.linalg.lstsq(x, y).solution, (a, b))


@pytest.mark.parametrize("sa, sb", [((0, 3), (0, 2)), ((5, 0), (5, 2)), ((0, 5, 3), (0, 5, 2)), ((5, 3), (5, 0))])
@pytest.mark.parametrize("driver", ["gelsy", "gelsd"])
def test_lstsq_of_empty_matrices_matches_pytorch(sa, sb, driver, torch):
    check_both(lambda m, a, b: tuple(m.linalg.lstsq(a, b, driver=driver)), [np.zeros(sa), np.ones(sb)])


LSTSQ_ERRORS = {
    "A 1-D": (lambda m: m.linalg.lstsq(m.ones(5), m.ones(5)), "2 dimensions"),
    "dtypes differ": (lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(5, 2, dtype=m.float64)), "dtype"),
    "rows differ": (lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(4, 2)), r"\[5, 3\].*\[4, 2\]"),
    "B of more dims": (lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(2, 5, 2)), r"\[5, 3\].*\[2, 5, 2\]"),
    "1-D B, batched A": (lambda m: m.linalg.lstsq(m.ones(2, 5, 3), m.ones(5)), r"\[2, 5, 3\].*\[5\]"),
    "unknown driver": (lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(5, 2), driver="foo"), "driver"),
    "integer": (lambda m: m.linalg.lstsq(m.ones(5, 3, dtype=m.int64), m.ones(5, 2, dtype=m.int64)), "int64|Long"),
}


@pytest.mark.parametrize("fn, pattern", LSTSQ_ERRORS.values(), ids=LSTSQ_ERRORS.keys())
def test_lstsq_errors_are_runtime_errors_as_in_pytorch(fn, pattern, torch):
    assert isinstance(error_of(lambda: fn(torch_lib())), RuntimeError)
    with pytest.raises(RuntimeError, match=pattern):
        fn(TL)


# ---------------------------------------------------------------- matrix_exp

MATRIX_EXP = {"3x3": (3, 3), "1x1": (1, 1), "batched": (2, 3, 4, 4), "empty": (0, 0), "empty batch": (0, 2, 2)}


@pytest.mark.parametrize("shape", MATRIX_EXP.values(), ids=MATRIX_EXP.keys())
@pytest.mark.parametrize("scale", [0.1, 1.0, 20.0])  # 20: scaled down and squared back several times
@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_exp_matches_pytorch(shape, scale, dtype, torch):
    """Values and the gradient: which of A or A^T the block-matrix formula takes is checked here."""
    arr = _randn(*shape, seed=9) * scale / max(1, shape[-1])
    check_both(lambda m, a: m.linalg.matrix_exp(a), [arr], dtype)


def test_matrix_exp_by_hand():
    t = 0.3
    rotation = tl.linalg.matrix_exp(tl.tensor([[0.0, -t], [t, 0.0]], dtype=tl.float64)).numpy()
    np.testing.assert_allclose(rotation, [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], atol=1e-15)
    nilpotent = tl.matrix_exp(tl.tensor([[0.0, 1.0], [0.0, 0.0]]))  # I + N: the series stops
    np.testing.assert_allclose(nilpotent.numpy(), [[1.0, 1.0], [0.0, 1.0]], atol=1e-7)
    diag = tl.tensor([[1.0, 0.0], [0.0, -2.0]], dtype=tl.float64).matrix_exp()
    np.testing.assert_allclose(diag.numpy(), np.diag(np.exp([1.0, -2.0])), rtol=1e-14)
    assert tl.matrix_exp(tl.zeros(3, 3)).tolist() == np.eye(3).tolist()
    big = tl.linalg.matrix_exp(tl.tensor([[50.0]], dtype=tl.float64)).item()
    assert big == pytest.approx(np.exp(50.0), rel=1e-13)


@pytest.mark.parametrize("scale", [0.5, 8.0])
def test_matrix_exp_gradcheck_and_second_derivatives(scale):
    a = tl.tensor(_randn(2, 3, 3, seed=10) * scale / 3, requires_grad=True)
    assert gradcheck(tl.linalg.matrix_exp, (a,), rtol=1e-5)
    assert gradgradcheck(tl.linalg.matrix_exp, (tl.tensor(_randn(3, 3, seed=11) * scale / 3, requires_grad=True),))


MATRIX_EXP_ERRORS = {
    "1-D": (lambda m: m.linalg.matrix_exp(m.ones(3)), "2 dimensions"),
    "not square": (lambda m: m.linalg.matrix_exp(m.ones(2, 3)), "2 by 3"),
    "integer": (lambda m: m.linalg.matrix_exp(m.ones(2, 2, dtype=m.int64)), "floating point"),
}


@pytest.mark.parametrize("fn, pattern", MATRIX_EXP_ERRORS.values(), ids=MATRIX_EXP_ERRORS.keys())
def test_matrix_exp_errors_are_runtime_errors_as_in_pytorch(fn, pattern, torch):
    assert isinstance(error_of(lambda: fn(torch_lib())), RuntimeError)
    with pytest.raises(RuntimeError, match=pattern):
        fn(TL)


# ---------------------------------------------------------------- cholesky_solve, cholesky_inverse

CHOLESKY_SOLVE = {"matrix": ((4, 2), ()), "batched": ((2, 4, 3), (2,)), "B broadcast": ((4, 3), (2,)),
                  "L broadcast": ((3, 4, 2), ())}


@pytest.mark.parametrize("shapes", CHOLESKY_SOLVE.values(), ids=CHOLESKY_SOLVE.keys())
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_solve_matches_pytorch(shapes, upper, dtype, torch):
    """Including PyTorch's gradient for L, which has both triangles (see CholeskySolve)."""
    sb, batch = shapes
    low = _spd_factor(*batch)
    factor = np.swapaxes(low, -1, -2) if upper else low
    check_both(lambda m, b, f: m.cholesky_solve(b, f, upper=upper), [_randn(*sb, seed=12), factor], dtype)
    check_both(lambda m, f: m.cholesky_inverse(f, upper=upper), [factor], dtype)


def test_cholesky_solve_solves_and_gradchecks():
    low = _spd_factor()
    a, b = low @ low.T, _randn(4, 2)
    np.testing.assert_allclose(a @ tl.cholesky_solve(tl.tensor(b), tl.tensor(low)).numpy(), b, atol=1e-12)
    np.testing.assert_allclose(tl.tensor(low).cholesky_inverse().numpy(), np.linalg.inv(a), atol=1e-12)
    # only L's triangle is read: finite differences see that, so L goes through tril here
    args = (tl.tensor(b, requires_grad=True), tl.tensor(low, requires_grad=True))
    assert gradcheck(lambda y, f: tl.cholesky_solve(y, tl.tril(f)), args)
    assert gradgradcheck(lambda y, f: tl.cholesky_solve(y, tl.tril(f)), args)


CHOLESKY_SOLVE_ERRORS = {
    "B 1-D": (lambda m: m.cholesky_solve(m.ones(3), m.eye(3)), "2 dimensions"),
    "dtypes differ": (lambda m: m.cholesky_solve(m.ones(3, 2), m.eye(3, dtype=m.float64)), "dtype"),
    "rows differ": (lambda m: m.cholesky_solve(m.ones(4, 2), m.eye(3)), "3 by 3.*4 by 2"),
    "L not square": (lambda m: m.cholesky_solve(m.ones(3, 2), m.ones(3, 4)), "3 by 4"),
}


@pytest.mark.parametrize("fn, pattern", CHOLESKY_SOLVE_ERRORS.values(), ids=CHOLESKY_SOLVE_ERRORS.keys())
def test_cholesky_solve_errors_are_runtime_errors_as_in_pytorch(fn, pattern, torch):
    assert isinstance(error_of(lambda: fn(torch_lib())), RuntimeError)
    with pytest.raises(RuntimeError, match=pattern):
        fn(TL)


def test_cholesky_inverse_of_a_singular_factor_raises_linalg_error(torch):
    assert isinstance(error_of(lambda: torch.cholesky_inverse(torch.zeros(3, 3))), torch.linalg.LinAlgError)
    with pytest.raises(tl.linalg.LinAlgError):
        tl.cholesky_inverse(tl.zeros(3, 3))


# ---------------------------------------------------------------- torch.svd, torch.qr, torch.dist, torch.norm

@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 4, 3)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_returns_v_not_vh_as_pytorch(shape, dtype, torch):
    """torch.svd's third output is V (linalg.svd's Vh transposed). Gradients through U diag(S) V^T and S
    (the vectors themselves are defined up to sign)."""
    def fn(m, a):
        u, s, v = m.svd(a)
        return u @ m.diag_embed(s) @ v.mT, s

    check_both(fn, [_randn(*shape)], dtype)
    u, s, v = tl.svd(tl.tensor(_randn(*shape)))
    tu, ts, tv = torch.svd(torch.tensor(_randn(*shape)))
    np.testing.assert_allclose(np.abs(v.numpy()), np.abs(tv.numpy()), atol=1e-12)


def test_svd_some_and_compute_uv_match_pytorch(torch):
    a = _randn(2, 4, 3)
    for kwargs in ({"some": False}, {"compute_uv": False}, {"some": False, "compute_uv": False}):
        got, want = tl.tensor(a).svd(**kwargs), torch.svd(torch.tensor(a), **kwargs)
        assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in want]
        np.testing.assert_allclose(got[1].numpy(), want[1].numpy(), atol=1e-12)
    u, s, v = tl.svd(tl.tensor(a), compute_uv=False)
    assert not u.numpy().any() and not v.numpy().any()  # zeros, as PyTorch's
    check_both(lambda m, x: m.svd(x, compute_uv=False)[1], [a])  # S keeps its gradient


@pytest.mark.filterwarnings("ignore:torch.qr is deprecated")
@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (3, 5), (2, 5, 3)])
@pytest.mark.parametrize("some", [True, False])
def test_qr_matches_pytorch(shape, some, torch):
    grad = some or shape[-2] <= shape[-1]  # complete QR of a tall matrix: Q's extra columns have no gradient
    check_both(lambda m, a: tuple(m.qr(a, some=some)), [_randn(*shape)], grad=grad)
    check_both(lambda m, a: tuple(a.qr(some)), [_randn(*shape)], grad=grad)


@pytest.mark.parametrize("shape", [(3, 5), (2, 2, 4)])
def test_linalg_qr_of_a_wide_matrix_has_a_gradient(shape, torch):
    """Wide A = [X Y]: X = Q R1 is a square QR, R2 = Q^T Y (decompositions.QR)."""
    check_both(lambda m, a: tuple(m.linalg.qr(a)), [_randn(*shape)])
    a = tl.tensor(_randn(*shape), requires_grad=True)
    assert gradcheck(lambda x: tuple(tl.linalg.qr(x)), (a,))
    assert gradgradcheck(lambda x: tuple(tl.linalg.qr(x)), (a,))


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, float("inf"), float("-inf"), 0])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4))])
def test_dist_matches_pytorch(p, shapes, torch):
    sa, sb = shapes
    grad = p != 0  # p=0 counts nonzeros: PyTorch's backward fails there (ours gives zeros)
    check_both(lambda m, a, b: m.dist(a, b, p), [_randn(*sa, seed=13), _randn(*sb, seed=14)], grad=grad)
    check_both(lambda m, a, b: a.dist(b, p=p), [_randn(*sa, seed=13), _randn(*sb, seed=14)], grad=grad)


def test_dist_by_hand_and_its_errors(torch):
    assert tl.dist(tl.tensor([1.0, 2.0, 2.0]), tl.zeros(3)).item() == pytest.approx(3.0)
    assert tl.dist(tl.tensor([1.0, 2.0]), tl.zeros(2), tl.tensor(1.0)).item() == pytest.approx(3.0)
    for fn, kind in ((lambda m: m.dist(m.ones(3), m.zeros(3), "fro"), TypeError),
                     (lambda m: m.dist(m.ones(3, dtype=m.int64), m.zeros(3, dtype=m.int64)), RuntimeError)):
        assert isinstance(error_of(lambda: fn(torch_lib())), kind)
        with pytest.raises(kind):
            fn(TL)


NUC = {"matrix": ((4, 3), None, False), "dims": ((2, 4, 3), (1, 2), False), "keepdim": ((2, 4, 3), (0, 2), True),
       "other order": ((3, 4), (1, 0), False)}


@pytest.mark.parametrize("shape, dim, keepdim", NUC.values(), ids=NUC.keys())
@pytest.mark.parametrize("dtype", DTYPES)
def test_nuclear_norm_matches_pytorch(shape, dim, keepdim, dtype, torch):
    arr = _randn(*shape, seed=15)
    check_both(lambda m, a: m.norm(a, p="nuc", dim=dim, keepdim=keepdim), [arr], dtype)
    check_both(lambda m, a: a.norm(p="nuc", dim=dim, keepdim=keepdim), [arr], dtype)
    dims = dim if dim is not None else (-2, -1)
    check_both(lambda m, a: m.linalg.matrix_norm(a, "nuc", dim=dims, keepdim=keepdim), [arr], dtype)
    check_both(lambda m, a: m.linalg.norm(a, "nuc", dim=dims, keepdim=keepdim), [arr], dtype)


@pytest.mark.parametrize("ord", [2, -2, "nuc", "fro"])
def test_matrix_norm_orders_by_hand_and_against_pytorch(ord, torch):  # noqa: A002 (PyTorch's name)
    a = np.diag([3.0, -4.0, 0.5])
    want = {2: 4.0, -2: 0.5, "nuc": 7.5, "fro": np.sqrt(9 + 16 + 0.25)}[ord]
    assert tl.linalg.matrix_norm(tl.tensor(a), ord).item() == pytest.approx(want)
    check_both(lambda m, x: m.linalg.matrix_norm(x, ord), [_randn(2, 4, 3, seed=16)])


def test_norm_keeps_its_other_orders_and_dtype(torch):
    arr = _randn(3, 4)
    for kwargs in ({}, {"p": 1}, {"p": "fro", "dim": (0, 1)}, {"p": float("inf"), "dim": 1}, {"p": 3, "dim": 0},
                   {"dtype": "float64"}):
        check_both(lambda m, a: m.norm(a, **{k: getattr(m, v) if k == "dtype" else v for k, v in kwargs.items()}),
                   [arr], "float32")


def test_nuclear_norm_needs_two_dims(torch):
    for fn in (lambda m: m.norm(m.ones(2, 3, 3), p="nuc"), lambda m: m.norm(m.ones(3, 3), p="nuc", dim=1)):
        assert isinstance(error_of(lambda: fn(torch_lib())), RuntimeError)
        with pytest.raises(RuntimeError, match="2-tuple"):
            fn(TL)


# ---------------------------------------------------------------- names, and the devices

def test_the_names_pytorch_has_are_here():
    for name in ("lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp"):
        assert name in tl.linalg.__all__ and callable(getattr(tl.linalg, name))
    for name in ("svd", "qr", "dist", "matrix_exp", "cholesky_solve", "cholesky_inverse", "lu_unpack", "norm"):
        assert callable(getattr(tl, name))
    for name in ("svd", "qr", "dist", "matrix_exp", "cholesky_solve", "cholesky_inverse", "norm"):
        assert callable(getattr(tl.Tensor, name))
    x = tl.tensor(_randn(2, 3))
    assert x.mH.tolist() == x.mT.tolist()  # real tensors: the conjugate transpose is the transpose


def test_the_ops_run_on_each_device(device):
    """LU, lu_solve, matrix_exp, cholesky_solve, lstsq and the legacy svd/qr on each device, with the CPU's
    values and gradients."""
    def run(dev):
        a = tl.tensor(_randn(2, 4, 4, seed=17), device=dev, requires_grad=True)
        b = tl.tensor(_randn(4, 3, seed=18), device=dev, requires_grad=True)  # broadcast over a's batch
        low = tl.tensor(_spd_factor(), device=dev, requires_grad=True)
        p, lo, up = tl.linalg.lu(a)
        lu_, pivots = tl.linalg.lu_factor(a)
        outs = [lo, up, tl.linalg.lu_solve(lu_, pivots, b, adjoint=True), tl.linalg.matrix_exp(a),
                tl.cholesky_solve(a[..., :3], low), tl.dist(a, b[..., :1]),
                tl.linalg.lstsq(a, b.expand(2, 4, 3)).solution,
                tl.svd(a[0])[1], tl.qr(a[1])[1]]
        sum(o.sum() for o in outs).backward()
        return [t.detach().to("cpu").numpy() for t in outs + [p, pivots, a.grad, b.grad, low.grad]]

    for got, want in zip(run(device), run("cpu")):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_solves_get_batches_of_one_shape_as_cupys_solve_needs(monkeypatch):
    """CuPy's linalg.solve does not broadcast batch dims (NumPy's does): the ops expand them first."""
    solve = np.linalg.solve

    def cupy_like_solve(a, b):
        assert a.shape[:-1] == b.shape[:a.ndim - 1], f"batch dims differ: {a.shape} and {b.shape}"
        return solve(a, b)

    monkeypatch.setattr(np.linalg, "solve", cupy_like_solve)
    a = tl.tensor(_randn(2, 4, 4, seed=19), requires_grad=True)
    b = tl.tensor(_randn(3, 1, 4, 2, seed=20), requires_grad=True)
    lu_, pivots = tl.linalg.lu_factor(a)
    outs = [tl.linalg.lu_solve(lu_, pivots, b), tl.linalg.lu_solve(lu_, pivots, b, adjoint=True),
            tl.linalg.solve(a, b), tl.linalg.solve_triangular(a, b, upper=True),
            tl.linalg.lstsq(a.unsqueeze(0), b).solution,
            tl.cholesky_solve(b, tl.tensor(_spd_factor(2), requires_grad=True))]
    sum(o.sum() for o in outs).backward()
    assert a.grad.shape == (2, 4, 4) and b.grad.shape == (3, 1, 4, 2)
