"""Reduction semantics the op table does not cover: (values, indices) of max/min with a
dim, gradients at ties and zeros, argmax/argmin, all/any, result dtypes, var/std
conventions, dim errors. Checked against PyTorch (skipped without it) or by hand."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.backends import cpu as cpu_backend

from .op_table import TL, check_against_torch, error_of, value_and_grads

_TIES = [[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 0.0, 2.0], [5.0, 5.0, 5.0, 5.0]]

# ---------------------------------------------------------------- max/min with a dim: (values, indices)

EXTREMUM_DIM = {
    "max dim=1": lambda x: x.max(1),
    "max dim=0 keepdim": lambda x: x.max(0, keepdim=True),
    "max dim=-1 keepdim": lambda x: x.max(dim=-1, keepdim=True),
    "min dim=1": lambda x: x.min(1),
    "min dim=0": lambda x: x.min(dim=0),
}


@pytest.mark.parametrize("op", EXTREMUM_DIM.values(), ids=EXTREMUM_DIM.keys())
def test_max_min_with_dim_give_values_and_first_indices(op, torch):
    def run(m):
        r = op(m.tensor(_TIES))
        values, indices = r  # a named tuple: unpacks, and has .values / .indices
        assert values is r.values and indices is r.indices
        return r.values, r.indices

    values, indices = check_against_torch(run)
    assert indices.dtype is tl.int64


def test_max_with_dim_indices_are_first_occurrence_by_hand():
    values, indices = tl.tensor(_TIES).max(dim=1)
    assert values.tolist() == [3.0, 2.0, 5.0]
    assert indices.tolist() == [1, 0, 0]
    assert tl.tensor(_TIES).min(dim=1).indices.tolist() == [3, 2, 0]


def test_max_with_dim_gradient_goes_to_the_index_like_pytorch(torch):
    """With a dim, PyTorch sends the whole gradient to the returned index (no splitting)."""
    check_against_torch(lambda m: value_and_grads(m, lambda m, x: x.max(dim=1).values, _TIES, weights=[1.0, 2.0, 3.0]))


def test_max_of_0d_with_dim_like_pytorch(torch):
    check_against_torch(lambda m: tuple(m.tensor(2.5).max(dim=0)))


# ---------------------------------------------------------------- gradients at ties: split evenly

TIE_GRADS = {
    "max()": lambda m, x: x.max(),
    "min()": lambda m, x: x.min(),
    "amax(dim=1)": lambda m, x: x.amax(dim=1),
    "amin(dim=(0, 1))": lambda m, x: x.amin(dim=(0, 1)),
    "amax(dim=0, keepdim)": lambda m, x: x.amax(dim=0, keepdim=True),
    "norm(inf)": lambda m, x: x.norm(p=float("inf")),
    "norm(inf, dim=1)": lambda m, x: x.norm(p=float("inf"), dim=1),
}


@pytest.mark.parametrize("op", TIE_GRADS.values(), ids=TIE_GRADS.keys())
def test_gradient_at_ties_matches_pytorch(op, torch):
    check_against_torch(lambda m: value_and_grads(m, op, _TIES))


def test_max_without_dim_splits_gradient_among_ties_by_hand():
    x = tl.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]


# ---------------------------------------------------------------- prod with zeros

PROD_WITH_ZEROS = {
    "one zero": ([2.0, 0.0, 3.0, 4.0], lambda m, x: x.prod()),
    "two zeros": ([2.0, 0.0, 3.0, 0.0], lambda m, x: x.prod()),
    "all zeros": ([0.0, 0.0], lambda m, x: x.prod()),
    "one zero per row, dim=1": ([[2.0, 0.0, 3.0], [1.0, 2.0, 0.0]], lambda m, x: x.prod(dim=1)),
    "rows with 0, 1 and 2 zeros, dim=1": ([[2.0, 5.0, 3.0], [1.0, 2.0, 0.0], [0.0, 4.0, 0.0]],
                                          lambda m, x: x.prod(dim=1)),
    "zeros along dim=0, keepdim": ([[2.0, 0.0], [0.0, 0.0], [3.0, 4.0]], lambda m, x: x.prod(dim=0, keepdim=True)),
    "3-d, dim=1": (np.array([[[1.0, 0.0], [2.0, 3.0]], [[0.0, 2.0], [0.0, 5.0]]]), lambda m, x: x.prod(dim=1)),
}


@pytest.mark.parametrize("data, op", PROD_WITH_ZEROS.values(), ids=PROD_WITH_ZEROS.keys())
def test_prod_gradient_with_zeros_matches_pytorch(data, op, torch):
    shape = tuple(op(TL, tl.tensor(data)).shape)
    weights = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)  # distinct weights: each output counts
    check_against_torch(lambda m: value_and_grads(m, op, data, weights=weights))


def test_prod_gradient_with_zeros_by_hand():
    x = tl.tensor([2.0, 0.0, 3.0, 4.0], requires_grad=True)
    x.prod().backward()
    assert x.grad.tolist() == [0.0, 24.0, 0.0, 0.0]
    y = tl.tensor([2.0, 0.0, 3.0, 0.0], requires_grad=True)
    y.prod().backward()
    assert y.grad.tolist() == [0.0, 0.0, 0.0, 0.0]


# ---------------------------------------------------------------- norm at zero

NORM_AT_ZERO = {
    "norm() of zeros": ([0.0, 0.0, 0.0], lambda m, x: x.norm()),
    "norm(dim=1) with a zero row": ([[0.0, 0.0], [3.0, 4.0]], lambda m, x: x.norm(dim=1)),
    "norm(p=2, dim=0, keepdim) with a zero column": ([[0.0, 1.0], [0.0, 2.0]],
                                                     lambda m, x: x.norm(p=2, dim=0, keepdim=True)),
    **{f"norm(p={p}, dim=1), a zero row and a zero element": ([[0.0, 0.0, 0.0], [0.0, 1.0, -2.0], [0.5, 1.0, -2.0]],
                                                               lambda m, x, p=p: x.norm(p=p, dim=1))
       for p in (3, 1.5, 0.5, -0.5, -1)},  # the formula's 0 * inf = nan where PyTorch's gradient is 0
    "vector_norm(ord=3) of zeros": ([0.0, 0.0], lambda m, x: m.linalg.vector_norm(x, 3)),
    "pairwise_distance(p=3) of equal rows": ([[1.0, 2.0], [1.0, 2.0]],
                                             lambda m, x: m.nn.functional.pairwise_distance(x[:1], x[1:], 3, eps=0.0)),
}


@pytest.mark.parametrize("data, op", NORM_AT_ZERO.values(), ids=NORM_AT_ZERO.keys())
def test_norm_at_zero_has_zero_gradient_like_pytorch(data, op, torch):
    check_against_torch(lambda m: value_and_grads(m, op, data))


def test_norm_at_zero_gradient_by_hand():
    x = tl.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    x.norm(dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 0.0], [0.6, 0.8]])
    assert not np.isnan(x.grad.numpy()).any()


# ---------------------------------------------------------------- argmax/argmin, all/any

ARG = {
    "argmax()": lambda x: x.argmax(),
    "argmin()": lambda x: x.argmin(),
    "argmax(dim=1)": lambda x: x.argmax(dim=1),
    "argmin(dim=0, keepdim)": lambda x: x.argmin(dim=0, keepdim=True),
    "argmax(dim=-1, keepdim)": lambda x: x.argmax(dim=-1, keepdim=True),
    "argmax(keepdim) without dim": lambda x: x.argmax(keepdim=True),
}


@pytest.mark.parametrize("op", ARG.values(), ids=ARG.keys())
def test_argmax_argmin_match_pytorch(op, torch):
    check_against_torch(lambda m: op(m.tensor(_TIES)))
    check_against_torch(lambda m: op(m.tensor([[3, 1, 3], [0, 7, 7]], dtype=m.int32)))


def test_argmax_by_hand():
    x = tl.tensor(_TIES)
    assert x.argmax().item() == 8  # first of the 5.0s, in flattened order
    assert x.argmax(dim=1).tolist() == [1, 0, 0]
    assert x.argmin(dim=1).dtype is tl.int64


LOGICAL = {
    "all() bool": lambda m: m.tensor([[True, False], [True, True]]).all(),
    "any() bool": lambda m: m.tensor([[True, False], [False, False]]).any(),
    "all(dim=1) bool": lambda m: m.tensor([[True, False], [True, True]]).all(dim=1),
    "any(dim=0, keepdim) bool": lambda m: m.tensor([[True, False], [False, False]]).any(dim=0, keepdim=True),
    "all() float": lambda m: m.tensor([1.5, -2.0, 0.0]).all(),
    "any() float": lambda m: m.tensor([0.0, -0.0, 0.5]).any(),
    "all(dim=0) int64": lambda m: m.tensor([[1, 0], [2, 3]]).all(dim=0),
    "any() all-zero int64": lambda m: m.tensor([0, 0]).any(),
    "all() uint8 (PyTorch keeps uint8)": lambda m: m.tensor([1, 2], dtype=m.uint8).all(),
    "all() empty": lambda m: m.zeros(0).all(),
    "any() empty": lambda m: m.zeros(0).any(),
}


@pytest.mark.parametrize("case", LOGICAL.values(), ids=LOGICAL.keys())
def test_all_any_match_pytorch(case, torch):
    check_against_torch(case)


# ---------------------------------------------------------------- result dtypes, conventions, errors

REDUCE_DTYPES = {
    "sum(int32) -> int64": lambda m: m.tensor([1, 2, 3], dtype=m.int32).sum(),
    "sum(bool) -> int64": lambda m: m.tensor([True, True, False]).sum(dim=0),
    "sum(uint8) -> int64": lambda m: m.tensor([200, 100], dtype=m.uint8).sum(),
    "prod(int32) -> int64": lambda m: m.tensor([2, 3, 4], dtype=m.int32).prod(),
    "prod(bool) -> int64": lambda m: m.tensor([True, True]).prod(),
    "prod(uint8, dim) -> int64": lambda m: m.tensor([[200, 3]], dtype=m.uint8).prod(1),  # NumPy's would be uint64
    "logsumexp(int64) -> float32": lambda m: m.tensor([[1, 2], [3, 3]]).logsumexp(1),
    "logsumexp(bool) -> float32": lambda m: m.tensor([True, False]).logsumexp(0),
    "sum(float16) stays float16": lambda m: m.tensor([1.5, 2.5], dtype=m.float16).sum(),
    "sum(dtype=float64)": lambda m: m.tensor([1, 2]).sum(dtype=m.float64),
    "max(int32) stays int32": lambda m: m.tensor([1, 5, 2], dtype=m.int32).max(),
    "amax(int64, dim)": lambda m: m.tensor([[1, 5], [7, 2]]).amax(dim=0),
    "mean(float16)": lambda m: m.tensor([1.0, 2.0, 4.0], dtype=m.float16).mean(),
    "sum over empty dim -> 0": lambda m: m.zeros(0, 3).sum(dim=0),
    "prod over empty dim -> 1": lambda m: m.zeros(2, 0).prod(dim=1),
    "mean over a size-1 dim": lambda m: m.tensor([[1.0], [2.0]]).mean(dim=1),
}


@pytest.mark.parametrize("case", REDUCE_DTYPES.values(), ids=REDUCE_DTYPES.keys())
def test_reduction_dtypes_match_pytorch(case, torch):
    check_against_torch(case, rtol=1e-3, atol=0)


VAR_STD = {
    "var() default correction=1": lambda m, x: x.var(),
    "std() default correction=1": lambda m, x: x.std(),
    "var(correction=0)": lambda m, x: x.var(correction=0),
    "var(unbiased=False)": lambda m, x: x.var(unbiased=False),
    "std(dim=1, correction=0, keepdim)": lambda m, x: x.std(dim=1, correction=0, keepdim=True),
    "var(dim=(0, 1), correction=2)": lambda m, x: x.var(dim=(0, 1), correction=2),
    "var(dim=0) over one element -> nan": lambda m, x: x[:1].var(dim=0),
}


@pytest.mark.parametrize("op", VAR_STD.values(), ids=VAR_STD.keys())
def test_var_std_conventions_match_pytorch(op, torch):
    data = [[1.0, 2.0, 4.0], [-1.0, 0.5, 3.0]]
    check_against_torch(lambda m: value_and_grads(m, op, data))


def test_var_default_is_unbiased_by_hand():
    x = tl.tensor([1.0, 2.0, 3.0, 4.0])
    assert x.var().item() == pytest.approx(5 / 3)
    assert x.var(correction=0).item() == pytest.approx(1.25)


def test_logsumexp_is_stable_like_pytorch(torch):
    data = [[1000.0, 1000.0, -1000.0], [-np.inf, -np.inf, -np.inf], [0.0, float(np.log(2.0)), -np.inf]]
    check_against_torch(lambda m: m.tensor(data).logsumexp(dim=1))
    check_against_torch(lambda m: value_and_grads(m, lambda m, x: x.logsumexp(dim=1), data[:1] + data[2:]))


def test_logsumexp_by_hand():
    out = tl.tensor([[1000.0, 1000.0]]).logsumexp(dim=1)
    assert out.item() == pytest.approx(1000.0 + np.log(2.0))


def test_mean_of_integers_raises_like_pytorch(torch):
    ref = error_of(lambda: torch.tensor([1, 2]).mean())
    assert ref is not None
    with pytest.raises(type(ref), match="dtype"):
        tl.tensor([1, 2]).mean()


@pytest.mark.parametrize("op", [lambda x: x.sum(dim=2), lambda x: x.max(dim=-3), lambda x: x.mean(dim=(0, 2)),
                                lambda x: x.argmax(dim=5)], ids=["sum", "max", "mean", "argmax"])
def test_dim_out_of_range_raises_index_error_like_pytorch(op, torch):
    ref = error_of(lambda: op(torch.ones(2, 3)))
    assert isinstance(ref, IndexError)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\]"):
        op(tl.ones(2, 3))


def test_repeated_dim_raises_like_pytorch(torch):
    ref = error_of(lambda: torch.ones(2, 3).sum(dim=(1, -1)))
    with pytest.raises(type(ref), match="multiple times"):
        tl.ones(2, 3).sum(dim=(1, -1))


def test_max_of_empty_raises_like_pytorch(torch):
    ref = error_of(lambda: torch.zeros(0).max())
    assert ref is not None
    with pytest.raises(type(ref)):
        tl.zeros(0).max()


def test_max_with_other_tensor_is_maximum(torch):
    check_against_torch(lambda m: m.tensor([1.0, 5.0]).max(m.tensor([3.0, 2.0])))
    assert tl.tensor([1.0, 5.0]).max(tl.tensor([3.0, 2.0])).tolist() == [3.0, 5.0]


# ---------------------------------------------------------------- the CPU backend's reductions over one axis of a matrix

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64])
@pytest.mark.parametrize("shape", [(4, 6), (31, 10), (32, 10), (64, 128), (640, 64), (300, 300)])
def test_backend_sum_matches_numpy_on_both_sides_of_its_matrix_vector_path(shape, dtype):
    """Float matrices of 32 to 2**16 elements with >= 32 rows are summed over an axis as a product
    with ones (BLAS); everything else by add.reduce. Both must agree with NumPy's sum in values,
    shape and dtype, over either axis (negative too), with and without keepdims, and for a
    non-contiguous view, which takes NumPy's path."""
    be = tl.device("cpu").backend
    a = np.random.default_rng(21).standard_normal(shape).astype(dtype)
    rtol = {np.float16: 1e-2, np.float32: 1e-5}.get(dtype, 1e-12)
    for arr in (a, a[:, ::2], a.T):
        for axis in (0, 1, -1, (0,), (1,), (0, 1)):
            for keepdims in (False, True):
                got = be.sum(arr, axis, keepdims)
                want = arr.sum(axis=axis, keepdims=keepdims)
                assert got.shape == want.shape and got.dtype == want.dtype, (arr.shape, axis, keepdims)
                np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * arr.shape[0])
    be.sum(np.ones((64, 8), np.float32), 0, False)
    with pytest.raises(ValueError):  # the cached vector of ones is read-only: nobody can change later sums
        cpu_backend._ones[(64, np.dtype(np.float32))][0] = 2.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("shape", [(4, 6), (31, 10), (32, 10), (64, 16), (64, 17), (1000, 3)])
def test_backend_amax_is_numpy_max_on_both_sides_of_its_transposed_path(shape, dtype):
    """Matrices of 32+ rows of at most 16 take their row maxima from a transposed copy: the same
    values as ndarray.max, NaNs and infinities included, along either axis, with or without keepdims."""
    be = tl.device("cpu").backend
    a = np.random.default_rng(22).standard_normal(shape).astype(dtype) * 100
    if dtype != np.int64:
        a[0, 0], a[-1, -1], a[1 % shape[0], 0] = np.nan, np.inf, -np.inf
    for arr in (a, a[:, ::2], a.T):
        for axis in (0, 1, -1):
            for keepdims in (False, True):
                got, want = be.amax(arr, axis, keepdims), arr.max(axis=axis, keepdims=keepdims)
                assert got.shape == want.shape and got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- PyTorch's overloads and keywords

UNBIASED_BY_POSITION = {
    "x.var(True)": lambda m, x: x.var(True),
    "x.std(False)": lambda m, x: x.std(False),
    "x.var(1, False)": lambda m, x: x.var(1, False),
    "var(x, 0, True, True)": lambda m, x: m.var(x, 0, True, True),
    "std(x, 1, False, True)": lambda m, x: m.std(x, 1, False, True),
    "x.var(1) (an int is a dim)": lambda m, x: x.var(1),
}


@pytest.mark.parametrize("op", UNBIASED_BY_POSITION.values(), ids=UNBIASED_BY_POSITION.keys())
def test_var_std_take_unbiased_by_position_like_pytorch(op, torch):
    data = [[1.0, 2.0, 4.0], [-1.0, 0.5, 3.0]]
    check_against_torch(lambda m: value_and_grads(m, op, data))


def test_var_std_unbiased_by_position_by_hand():
    a = np.array([[1.0, 2.0, 4.0], [-1.0, 0.5, 3.0]])
    x = tl.tensor(a)
    np.testing.assert_allclose(x.var(False).numpy(), np.var(a))
    np.testing.assert_allclose(x.var(True).numpy(), np.var(a, ddof=1))
    np.testing.assert_allclose(tl.std(x, 1, False, True).numpy(), np.std(a, axis=1, keepdims=True))
    np.testing.assert_allclose(x.var(1).numpy(), np.var(a, axis=1, ddof=1))  # 1 is a dim, True is not


SOFTMAX_DTYPE = {
    "x.softmax(1, dtype=float64)": lambda m, x: x.float().softmax(1, dtype=m.float64),
    "x.log_softmax(0, dtype=float64)": lambda m, x: x.float().log_softmax(0, dtype=m.float64),
    "F.softmax(dtype=float32)": lambda m, x: m.nn.functional.softmax(x, -1, dtype=m.float32),
    "F.log_softmax(dtype=float32)": lambda m, x: m.nn.functional.log_softmax(x, 1, dtype=m.float32),
    "F.softmin(dtype=float32)": lambda m, x: m.nn.functional.softmin(x, 0, dtype=m.float32),
}


@pytest.mark.parametrize("op", SOFTMAX_DTYPE.values(), ids=SOFTMAX_DTYPE.keys())
def test_softmax_family_casts_to_dtype_first_like_pytorch(op, torch):
    data = [[1.0, 2.0, 4.0], [-1.0, 0.5, 3.0]]
    check_against_torch(lambda m: value_and_grads(m, op, data), rtol=1e-6, atol=1e-7)


def test_softmax_of_integers_with_dtype_like_pytorch(torch):
    check_against_torch(lambda m: m.tensor([[1, 2, 3], [0, 0, 9]]).softmax(1, dtype=m.float64))
    check_against_torch(lambda m: m.tensor([[1, 2, 3], [0, 0, 9]]).log_softmax(0, dtype=m.float64))


def test_softmax_with_dtype_by_hand():
    a = np.array([[1, 2, 3], [0, 0, 9]])
    out = tl.tensor(a).softmax(1, dtype=tl.float64)
    want = np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)
    assert out.dtype is tl.float64
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(tl.tensor(a).log_softmax(1, dtype=tl.float64).numpy(), np.log(want), rtol=1e-12)


EMPTY_DIM = {
    "softmax": lambda m, x: x.softmax(1),
    "log_softmax": lambda m, x: x.log_softmax(-1),
    "F.softmin": lambda m, x: m.nn.functional.softmin(x, 1),
    "F.log_softmax(dtype)": lambda m, x: m.nn.functional.log_softmax(x, 1, dtype=m.float32),
}


@pytest.mark.parametrize("op", EMPTY_DIM.values(), ids=EMPTY_DIM.keys())
def test_softmax_family_over_an_empty_dim_is_empty_like_pytorch(op, torch):
    check_against_torch(lambda m: value_and_grads(m, op, np.zeros((3, 0))))


def test_softmax_over_an_empty_dim_by_hand():
    x = tl.zeros(3, 0, requires_grad=True)
    out = x.log_softmax(1)
    assert tuple(out.shape) == (3, 0) and out.dtype is tl.float32
    (out.softmax(1).sum() + out.sum()).backward()
    assert tuple(x.grad.shape) == (3, 0)
    assert tuple(tl.zeros(0, 4).softmax(1).shape) == (0, 4)  # an empty other dim: nothing to reduce over


PROD_DTYPE = {
    "prod(dtype=float64)": lambda m, x: x.float().prod(dtype=m.float64),
    "prod(1, dtype=float64)": lambda m, x: m.prod(x.float(), 1, dtype=m.float64),
    "prod(0, keepdim, dtype=float32)": lambda m, x: x.prod(0, keepdim=True, dtype=m.float32),
}


@pytest.mark.parametrize("op", PROD_DTYPE.values(), ids=PROD_DTYPE.keys())
def test_prod_casts_to_dtype_first_like_pytorch(op, torch):
    data = [[1.5, 2.0, -4.0], [-1.0, 0.5, 3.0]]
    check_against_torch(lambda m: value_and_grads(m, op, data), rtol=1e-6, atol=1e-7)


def test_prod_with_dtype_by_hand(torch):
    check_against_torch(lambda m: m.tensor([[3, 200], [7, 250]], dtype=m.uint8).prod(1, dtype=m.float32))
    out = tl.tensor([[3, 200], [7, 250]], dtype=tl.uint8).prod(dtype=tl.float64)
    assert out.dtype is tl.float64 and out.item() == 3 * 200 * 7 * 250


NORM0_DATA = [[0.0, -2.0, 0.5], [0.0, 0.0, -0.0], [3.0, -1.0, 7.0]]


@pytest.mark.parametrize("args", [(0,), (0, 1), (0, 0, True), (0.0, -1)], ids=str)
def test_norm_p0_counts_nonzeros_without_gradient_like_pytorch(args, torch):
    check_against_torch(lambda m: value_and_grads(m, lambda m, x: m.norm(x, *args), NORM0_DATA))


def test_norm_p0_by_hand():
    a = np.array(NORM0_DATA + [[np.nan, np.inf, 0.0]])
    x = tl.tensor(a, requires_grad=True)
    out = x.norm(0, dim=1)
    np.testing.assert_array_equal(out.detach().numpy(), np.count_nonzero(a, axis=1))  # nan and inf count as nonzero
    assert out.requires_grad and out.dtype is tl.float64
    out.sum().backward()
    assert x.grad is None  # no gradient flows back (PyTorch's x.grad stays None too)
