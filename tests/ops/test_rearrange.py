"""Rearranging ops (tinygrad_lab/ops/rearrange.py), searchsorted/bucketize/isin (ops/sorting.py) and
logspace/tril_indices/triu_indices (creation.py): values against independent truths (NumPy's own
functions, or by hand), against PyTorch (skipped without it), gradients by finite differences, and bad
input raising PyTorch's exception types with messages that name the problem."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import gradcheck, gradgradcheck

from .._helpers import bad_input_tests

RNG = np.random.default_rng(0)


def _t(arr, requires_grad: bool = False):
    return tl.tensor(np.asarray(arr), requires_grad=requires_grad)


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _randn(*shape):
    return RNG.standard_normal(shape)


def _leaf(*shape):
    """A float64 leaf that requires grad (gradcheck's finite differences need float64)."""
    return _t(_randn(*shape), requires_grad=True)


# ---------------------------------------------------------------- values against NumPy (no PyTorch needed)

@pytest.mark.parametrize("shape, dim, size, step", [
    ((10,), 0, 3, 1), ((10,), 0, 3, 2), ((10,), 0, 3, 4), ((4, 7, 3), 1, 2, 3), ((4, 7, 3), -1, 3, 1),
    ((5, 6), 0, 5, 1), ((5, 6), 1, 0, 2), ((0, 5), 1, 2, 2),
])
def test_unfold_is_numpys_sliding_window_view(shape, dim, size, step):
    x = _randn(*shape)
    want = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    want = want[(slice(None),) * (dim % len(shape)) + (slice(None, None, step),)]
    got = _t(x).unfold(dim, size, step)
    assert got.shape == want.shape
    np.testing.assert_array_equal(_np(got), want)


def test_unfold_of_a_0d_tensor_is_one_window():
    assert _np(tl.tensor(5.0).unfold(0, 1, 1)).tolist() == [5.0]
    assert tl.tensor(5.0).unfold(-1, 0, 1).shape == (0,)


@pytest.mark.parametrize("k", [-5, -1, 0, 1, 2, 3, 4, 7])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (1, 2), (2, -3)])
def test_rot90_is_numpys(k, dims):
    x = _randn(2, 3, 4)
    np.testing.assert_array_equal(_np(tl.rot90(_t(x), k, dims)), np.rot90(x, k, axes=dims))


def test_rot90_defaults_and_method():
    x = _randn(3, 4)
    np.testing.assert_array_equal(_np(tl.rot90(_t(x))), np.rot90(x))
    np.testing.assert_array_equal(_np(_t(x).rot90(2, [1, 0])), np.rot90(x, 2, axes=(1, 0)))


def test_fliplr_flipud_are_numpys():
    x = _randn(3, 4, 2)
    np.testing.assert_array_equal(_np(tl.fliplr(_t(x))), np.fliplr(x))
    np.testing.assert_array_equal(_np(_t(x).flipud()), np.flipud(x))
    np.testing.assert_array_equal(_np(tl.flipud(_t(x[0, :, 0]))), np.flipud(x[0, :, 0]))


@pytest.mark.parametrize("sa, sb", [((2, 2), (2, 3)), ((3,), (2,)), ((2, 1, 3), (3, 2)), ((), (3,)), ((), ()),
                                    ((2, 3), (4,)), ((0, 2), (2, 2))])
def test_kron_is_numpys(sa, sb):
    a, b = _randn(*sa), _randn(*sb)
    got = tl.kron(_t(a), _t(b))
    np.testing.assert_allclose(_np(got), np.kron(a, b))
    assert got.shape == np.kron(a, b).shape


def test_kron_promotes_dtypes():
    got = tl.kron(tl.tensor([1, 2]), tl.tensor([1.5]))
    assert got.dtype == tl.float32 and _np(got).tolist() == [1.5, 3.0]
    assert tl.tensor([[1, 2]]).kron(tl.tensor([[3], [4]])).dtype == tl.int64


@pytest.mark.parametrize("sections", [1, 3, 4, 10, 12])
def test_tensor_split_sections_match_numpys_array_split(sections):
    x = np.arange(10.0)
    got = tl.tensor_split(_t(x), sections)
    want = np.array_split(x, sections)
    assert [_np(p).tolist() for p in got] == [w.tolist() for w in want]


@pytest.mark.parametrize("indices", [[2, 4], [-3, 8], [6, 2, 12], [0], [], [10, 10]])
def test_tensor_split_indices_cut_as_python_slices(indices):
    x = list(range(10))
    got = tl.tensor_split(tl.tensor(x), indices)
    bounds = [0] + indices + [None]
    assert [_np(p).tolist() for p in got] == [x[a:b] for a, b in zip(bounds, bounds[1:])]


def test_tensor_split_takes_index_tensors_and_dims():
    x = _randn(3, 7)
    got = tl.tensor_split(_t(x), tl.tensor([1, 5]), dim=1)
    assert [p.shape for p in got] == [(3, 1), (3, 4), (3, 2)]
    assert [p.shape for p in _t(x).tensor_split(tl.tensor(2), -1)] == [(3, 4), (3, 3)]
    assert [p.shape for p in tl.tensor_split(_t(x), (tl.tensor(2), 5), 1)] == [(3, 2), (3, 3), (3, 2)]


def test_hsplit_vsplit_dsplit_are_numpys():
    x = _randn(4, 6, 8)
    for ours, theirs in ((tl.hsplit, np.hsplit), (tl.vsplit, np.vsplit), (tl.dsplit, np.dsplit)):
        for arg in (2, [1, 3]):
            got, want = ours(_t(x), arg), theirs(x, arg)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(_np(g), w)
    np.testing.assert_array_equal(_np(_t(x[0, 0]).hsplit(4)[1]), np.hsplit(x[0, 0], 4)[1])


def test_block_diag_by_hand():
    got = tl.block_diag(tl.tensor([1, 2]), tl.tensor([[1.5]]), tl.tensor(True))
    assert got.dtype == tl.float32
    assert _np(got).tolist() == [[1, 2, 0, 0], [0, 0, 1.5, 0], [0, 0, 0, 1]]
    assert tl.block_diag().shape == (1, 0)
    assert _np(tl.block_diag(tl.zeros(0), tl.ones(2, 2))).tolist() == [[0, 0], [1, 1], [1, 1]]


def test_cartesian_prod_is_itertools_product():
    import itertools
    a, b, c = [1, 2], [3, 4, 5], [6]
    got = tl.cartesian_prod(tl.tensor(a), tl.tensor(b), tl.tensor(c))
    assert _np(got).tolist() == [list(p) for p in itertools.product(a, b, c)]
    assert _np(tl.cartesian_prod(tl.tensor(a))).tolist() == a


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations_are_itertools(r, with_replacement):
    import itertools
    x = [10, 20, 30, 40]
    got = tl.combinations(tl.tensor(x), r, with_replacement=with_replacement)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    want = [list(p) for p in pick(x, r)]
    if r == 0:
        assert got.shape == (0,)
    else:
        assert got.shape == (len(want), r) and _np(got).tolist() == want


@pytest.mark.parametrize("row, col, offset", [(3, 3, 0), (3, 4, 1), (4, 3, -1), (0, 4, 0), (5, 2, -7), (2, 5, 9)])
def test_tril_triu_indices_are_numpys(row, col, offset):
    lower, upper = tl.tril_indices(row, col, offset), tl.triu_indices(row, col, offset)
    assert lower.dtype == upper.dtype == tl.int64
    assert lower.shape[0] == upper.shape[0] == 2
    np.testing.assert_array_equal(_np(lower), np.stack(np.tril_indices(row, offset, col)))
    np.testing.assert_array_equal(_np(upper), np.stack(np.triu_indices(row, offset, col)))
    assert tl.tril_indices(row, col, offset, dtype=tl.int32).dtype == tl.int32


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (7,), (1, 2147483647)])
def test_unravel_index_is_numpys(shape):
    flat = RNG.integers(0, min(np.prod(shape), 10**6), size=(2, 3))
    got = tl.unravel_index(tl.tensor(flat), shape)
    want = np.unravel_index(flat, shape)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == tl.int64 and g.shape == w.shape
        np.testing.assert_array_equal(_np(g), w)


def test_unravel_index_wraps_around_as_pytorch():
    rows, cols = tl.unravel_index(tl.tensor([-1, 12]), (3, 4))
    assert _np(rows).tolist() == [2, 0] and _np(cols).tolist() == [3, 0]
    assert [_np(t).tolist() for t in tl.unravel_index(tl.tensor(5), 6)] == [5]
    assert tl.unravel_index(tl.tensor(0), ()) == ()


@pytest.mark.parametrize("n, increasing", [(None, False), (None, True), (2, False), (5, True), (0, False), (1, True)])
def test_vander_is_numpys(n, increasing):
    x = np.array([0.5, -2.0, 3.0, 1.5])
    got = tl.vander(_t(x), n, increasing)
    np.testing.assert_allclose(_np(got), np.vander(x, n, increasing))


def test_vander_makes_integers_int64():
    got = tl.vander(tl.tensor([1, 2, 3], dtype=tl.int32))
    assert got.dtype == tl.int64 and _np(got).tolist() == np.vander([1, 2, 3]).tolist()
    assert tl.vander(tl.tensor([True, False])).dtype == tl.int64


@pytest.mark.parametrize("start, end, steps, base", [(0, 3, 4, 10.0), (-2, 2, 9, 2.0), (1, 1, 1, 3.0), (0, 1, 0, 10.0),
                                                     (2, -1, 5, 0.5)])
def test_logspace_is_numpys(start, end, steps, base):
    got = tl.logspace(start, end, steps, base)
    assert got.dtype == tl.float32
    np.testing.assert_allclose(_np(got), np.logspace(start, end, steps, base=base), rtol=1e-6)
    got = tl.logspace(tl.tensor(start), tl.tensor(end), steps, base, dtype=tl.float64)
    np.testing.assert_allclose(_np(got), np.logspace(start, end, steps, base=base), rtol=1e-12)


def test_logspace_integer_dtypes_truncate():
    assert _np(tl.logspace(0, 1, 3, dtype=tl.int64)).tolist() == [1, 3, 10]
    assert _np(tl.logspace(0, 3, 7, base=2, dtype=tl.int32)).tolist() == [1, 1, 2, 2, 4, 5, 8]
    assert _np(tl.logspace(0, 1.2, 4, dtype=tl.int64)).tolist() == [1, 2, 4, 10]
    assert tl.logspace(0, 1, 2, requires_grad=True).requires_grad


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_is_numpys(side):
    seq = np.sort(RNG.integers(0, 10, size=12)).astype(np.float64)
    values = RNG.integers(-1, 12, size=(3, 5)).astype(np.float64)
    got = tl.searchsorted(_t(seq), _t(values), side=side)
    assert got.dtype == tl.int64
    np.testing.assert_array_equal(_np(got), np.searchsorted(seq, values, side=side))
    right = tl.searchsorted(_t(seq), _t(values), right=side == "right", out_int32=True)
    assert right.dtype == tl.int32
    np.testing.assert_array_equal(_np(right), np.searchsorted(seq, values, side=side))


def test_searchsorted_rows_sorter_and_scalars():
    rows = np.sort(_randn(2, 3, 6), axis=-1)
    values = _randn(2, 3, 4)
    got = _np(tl.searchsorted(_t(rows), _t(values)))
    want = np.stack([np.searchsorted(r, v) for r, v in zip(rows.reshape(6, 6), values.reshape(6, 4))])
    np.testing.assert_array_equal(got, want.reshape(2, 3, 4))
    unsorted = np.array([5.0, 1.0, 3.0])
    order = tl.argsort(_t(unsorted))
    got = tl.searchsorted(_t(unsorted), _t([2.0, 4.0, 6.0]), sorter=order)
    assert _np(got).tolist() == np.searchsorted(unsorted, [2.0, 4.0, 6.0], sorter=np.argsort(unsorted)).tolist()
    scalar = tl.searchsorted(_t([1.0, 3.0, 5.0]), 4)
    assert scalar.shape == () and int(scalar) == 2


def test_bucketize_is_searchsorted_turned_round():
    bounds = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    x = np.array([[3.0, 6.0], [9.0, 0.0]])
    np.testing.assert_array_equal(_np(tl.bucketize(_t(x), _t(bounds))), np.searchsorted(bounds, x, "left"))
    np.testing.assert_array_equal(_np(tl.bucketize(_t(x), _t(bounds), right=True)), np.searchsorted(bounds, x, "right"))
    assert tl.bucketize(4, _t(bounds), out_int32=True).dtype == tl.int32


@pytest.mark.parametrize("invert", [False, True])
def test_isin_is_numpys(invert):
    elements = RNG.integers(0, 10, size=(3, 4))
    test = RNG.integers(0, 10, size=5)
    got = tl.isin(_t(elements), _t(test), invert=invert)
    assert got.dtype == tl.bool
    np.testing.assert_array_equal(_np(got), np.isin(elements, test, invert=invert))


def test_isin_takes_a_number_on_either_side_and_mixed_dtypes():
    assert bool(tl.isin(2, tl.tensor([2, 5]))) and tl.isin(2, tl.tensor([2, 5])).shape == ()
    assert _np(tl.isin(tl.tensor([[1, 2]]), 2)).tolist() == [[False, True]]
    assert _np(tl.isin(tl.tensor([1, 2]), tl.tensor([2.0]))).tolist() == [False, True]
    assert _np(tl.isin(tl.tensor([float("nan"), 1.0]), tl.tensor([float("nan")]))).tolist() == [False, False]


def test_broadcast_shapes_and_tensors():
    assert tl.broadcast_shapes((5, 1), 5) == (5, 5) == np.broadcast_shapes((5, 1), (5,))
    assert tl.broadcast_shapes((0, 1), (1, 4), ()) == np.broadcast_shapes((0, 1), (1, 4), ())
    assert tl.broadcast_shapes() == ()
    a, b = tl.broadcast_tensors(tl.tensor([[1], [2]]), tl.tensor([1.0, 2.0, 3.0]))
    assert a.shape == b.shape == (2, 3) and a.dtype == tl.int64 and b.dtype == tl.float32
    np.testing.assert_array_equal(_np(a), np.broadcast_to([[1], [2]], (2, 3)))


def test_sum_to_size_by_hand():
    x = _randn(2, 3, 4)
    np.testing.assert_allclose(_np(_t(x).sum_to_size(3, 1)), x.sum(axis=(0, 2), keepdims=True)[0])
    np.testing.assert_allclose(_np(_t(x).sum_to_size([1, 3, 4])), x.sum(axis=0, keepdims=True))
    same = _t(x)
    assert same.sum_to_size(2, 3, 4) is same
    assert tl.tensor(1, dtype=tl.int32).sum_to_size(()).dtype == tl.int64


def test_row_stack_is_vstack():
    assert _np(tl.row_stack([tl.zeros(2), tl.ones(2)])).tolist() == [[0, 0], [1, 1]]


# ---------------------------------------------------------------- gradients by finite differences

GRADCHECKS = {
    "unfold overlapping": (lambda x: x.unfold(1, 3, 1), [(2, 6, 3)]),
    "unfold with gaps": (lambda x: x.unfold(-1, 2, 3), [(3, 8)]),
    "unfold of 0-d": (lambda x: x.unfold(0, 1, 1), [()]),
    "tensor_split sections": (lambda x: tl.tensor_split(x, 3, 1), [(2, 7)]),
    "tensor_split overlapping indices": (lambda x: tl.tensor_split(x, [4, 1, -2]), [(6, 2)]),
    "hsplit": (lambda x: tl.hsplit(x, [1, 3]), [(2, 5)]),
    "vsplit": (lambda x: tl.vsplit(x, 2), [(4, 2)]),
    "dsplit": (lambda x: tl.dsplit(x, [1]), [(2, 2, 3)]),
    "rot90 k=1": (lambda x: tl.rot90(x, 1, (0, 2)), [(2, 3, 4)]),
    "rot90 k=-1": (lambda x: tl.rot90(x, -1), [(2, 3)]),
    "rot90 k=2": (lambda x: tl.rot90(x, 2, (1, 0)), [(2, 3)]),
    "rot90 k=0": (lambda x: tl.rot90(x, 4), [(2, 3)]),
    "fliplr": (tl.fliplr, [(3, 2)]),
    "flipud": (tl.flipud, [(3,)]),
    "kron": (tl.kron, [(2, 3), (3, 2)]),
    "kron 3-d by 1-d": (tl.kron, [(2, 1, 2), (3,)]),
    "block_diag": (lambda a, b, c: tl.block_diag(a, b, c), [(2, 3), (4,), ()]),
    "cartesian_prod": (lambda a, b: tl.cartesian_prod(a, b), [(3,), (2,)]),
    "combinations": (lambda x: tl.combinations(x, 3), [(5,)]),
    "combinations with replacement": (lambda x: tl.combinations(x, 2, with_replacement=True), [(3,)]),
    "vander": (lambda x: tl.vander(x, 4), [(3,)]),
    "vander increasing": (lambda x: tl.vander(x, increasing=True), [(4,)]),
    "broadcast_tensors": (lambda a, b: tl.broadcast_tensors(a, b), [(3, 1), (1, 4)]),
    "sum_to_size": (lambda x: x.sum_to_size(1, 3), [(4, 2, 3)]),
    "sum_to_size ()": (lambda x: x.sum_to_size(()), [(2, 3)]),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradients_match_finite_differences(name):
    fn, shapes = GRADCHECKS[name]
    inputs = [_leaf(*s) for s in shapes]
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["unfold overlapping", "kron", "vander", "rot90 k=1"])
def test_second_derivatives_match_finite_differences(name):
    fn, shapes = GRADCHECKS[name]
    inputs = [_leaf(*s) for s in shapes]
    assert gradgradcheck(fn, inputs)  # also checks each backward's own backward (the seeded grad_outputs')


def test_unfold_gradient_counts_each_elements_windows():
    x = tl.ones(7, requires_grad=True)
    x.unfold(0, 3, 2).sum().backward()
    # windows [0:3], [2:5], [4:7]: elements 2 and 4 are read twice
    assert _np(x.grad).tolist() == [1, 1, 2, 1, 2, 1, 1]


def test_non_differentiable_results_have_no_grad():
    x = tl.tensor([1.0, 3.0, 5.0], requires_grad=True)
    v = tl.tensor([2.0], requires_grad=True)
    for out in (tl.searchsorted(x, v), tl.bucketize(v, x), tl.isin(v, x)):
        assert not out.requires_grad


# ---------------------------------------------------------------- against PyTorch

AGAINST_TORCH = {
    "unfold": lambda m, x: x.unfold(1, 2, 1),
    "tensor_split": lambda m, x: m.tensor_split(x, [1, -1], dim=2),
    "hsplit": lambda m, x: m.hsplit(x, 2),
    "rot90": lambda m, x: m.rot90(x, 3, [2, 0]),
    "fliplr": lambda m, x: m.fliplr(x),
    "kron": lambda m, x: m.kron(x, x[0]),
    # torch.vander's own backward raises in PyTorch 2.13 (it changes a saved cumprod in place): its values
    # equal linalg.vander's reversed, whose gradient works
    "vander": lambda m, x: m.vander(x[0, 0], 3) if m is tl else m.linalg.vander(x[0, 0], N=3).flip(-1),
    "combinations": lambda m, x: m.combinations(x[1, 1], 2),
    "cartesian_prod": lambda m, x: m.cartesian_prod(x[0, 0], x[1, 1, :2]),
    "block_diag": lambda m, x: m.block_diag(x[0], x[1, 0], x[0, 0, 0]),
    "broadcast_tensors": lambda m, x: m.broadcast_tensors(x, x[0, :, :1]),
    "sum_to_size": lambda m, x: x.sum_to_size(1, 2, 1),
}


@pytest.mark.parametrize("name", AGAINST_TORCH)
def test_values_and_gradients_match_pytorch(name, torch):
    fn = AGAINST_TORCH[name]
    x = _randn(2, 2, 4)
    ours, theirs = _t(x, True), torch.tensor(x, requires_grad=True)
    got, want = fn(tl, ours), fn(torch, theirs)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    weights = [_randn(*w.shape) for w in want]
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(_np(g), w.detach().numpy())
    sum(((g * _t(a)).sum() for g, a in zip(got, weights)), tl.tensor(0.0, dtype=tl.float64)).backward()
    sum((w * torch.tensor(a)).sum() for w, a in zip(want, weights)).backward()
    np.testing.assert_allclose(_np(ours.grad), theirs.grad.numpy(), rtol=1e-10)


INDEX_CASES = {
    "searchsorted": lambda m: m.searchsorted(m.tensor([[1.0, 3, 5], [2, 4, 6]]), m.tensor([[3.0, 4], [1, 7]]),
                                             side="right"),
    "searchsorted sorter": lambda m: m.searchsorted(m.tensor([5.0, 1, 3]), m.tensor([2.0, 4.0]),
                                                    sorter=m.tensor([1, 2, 0])),
    "searchsorted scalar": lambda m: m.searchsorted(m.tensor([1.0, 3, 5]), 4.5, out_int32=True),
    "searchsorted int values": lambda m: m.searchsorted(m.tensor([1.0, 3, 5]), m.tensor([3, 6])),
    "searchsorted empty rows": lambda m: m.searchsorted(m.zeros(0, 3), m.zeros(0, 2)),
    "bucketize": lambda m: m.bucketize(m.tensor([[3.0, 6, 9]]), m.tensor([1.0, 3, 5, 7, 9]), right=True),
    "isin": lambda m: m.isin(m.tensor([[1, 2], [3, 4]]), m.tensor([4, 1, 9])),
    "isin scalar": lambda m: m.isin(3, m.tensor([1, 3]), invert=True),
    "tril_indices": lambda m: m.tril_indices(4, 3, -1),
    "triu_indices": lambda m: m.triu_indices(3, 5, 2, dtype=m.int32),
    "unravel_index": lambda m: m.unravel_index(m.tensor([[0, 5], [11, -3]]), (3, 2, 2)),
    "logspace": lambda m: m.logspace(-1, 2, 7, base=3.0, dtype=m.float64),
    "logspace int": lambda m: m.logspace(0, 2.5, 6, base=2, dtype=m.int64),
    "broadcast_shapes": lambda m: m.broadcast_shapes((2, 1, 3), (4, 1), 3),
}


@pytest.mark.parametrize("name", INDEX_CASES)
def test_index_results_match_pytorch(name, torch):
    got, want = INDEX_CASES[name](tl), INDEX_CASES[name](torch)
    if isinstance(want, tuple) and not isinstance(want, torch.Size):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert str(g.dtype).rsplit(".")[-1] == str(w.dtype).rsplit(".")[-1]
            np.testing.assert_array_equal(_np(g), w.numpy())
        return
    if isinstance(want, torch.Size):
        assert tuple(got) == tuple(want)
        return
    assert str(got.dtype).rsplit(".")[-1] == str(want.dtype).rsplit(".")[-1]
    np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- bad input: PyTorch's exception types, clear words

BAD = {
    "unfold size too large": (lambda m: m.arange(7.0).unfold(0, 8, 2), RuntimeError, "maximum size.*7.*size is 8"),
    "unfold step 0": (lambda m: m.arange(7.0).unfold(0, 3, 0), RuntimeError, "step is 0"),
    "unfold negative size": (lambda m: m.arange(7.0).unfold(0, -1, 1), RuntimeError, "size is -1"),
    "unfold dim out of range": (lambda m: m.zeros(2, 3).unfold(2, 1, 1), IndexError, "out of range"),
    "rot90 equal dims": (lambda m: m.rot90(m.zeros(2, 3), 1, [1, -1]), RuntimeError, "rotation dims to be different"),
    "rot90 three dims": (lambda m: m.rot90(m.zeros(2, 3), 1, [0, 1, 0]), RuntimeError, "rotation dims == 2"),
    "rot90 of a vector": (lambda m: m.rot90(m.zeros(3), 1, [0, 0]), RuntimeError, "total dims >= 2"),
    "rot90 dim out of range": (lambda m: m.rot90(m.zeros(2, 3), 1, [0, 2]), IndexError, "out of range"),
    "fliplr of a vector": (lambda m: m.fliplr(m.zeros(3)), RuntimeError, ">= 2-d"),
    "flipud of a 0-d tensor": (lambda m: m.flipud(m.tensor(1.0)), RuntimeError, ">= 1-d"),
    "tensor_split 0 sections": (lambda m: m.tensor_split(m.zeros(4), 0), RuntimeError, "sections must be larger"),
    "tensor_split of 0-d": (lambda m: m.tensor_split(m.tensor(1.0), 2), RuntimeError, "at least a 1-dimensional"),
    "tensor_split float indices": (lambda m: m.tensor_split(m.zeros(4), m.tensor([1.0])), RuntimeError, "long"),
    "tensor_split 2-d indices": (lambda m: m.tensor_split(m.zeros(4), m.tensor([[1]])), RuntimeError, "2 dims"),
    "hsplit uneven": (lambda m: m.hsplit(m.zeros(2, 5), 2), RuntimeError, "5 is not divisible by the split_size 2"),
    "vsplit of a vector": (lambda m: m.vsplit(m.zeros(4), 2), RuntimeError, "at least 2 dimension"),
    "dsplit of a matrix": (lambda m: m.dsplit(m.zeros(2, 4), 2), RuntimeError, "at least 3 dimension"),
    "block_diag 3-d": (lambda m: m.block_diag(m.zeros(2, 2, 2)), RuntimeError, "Input 0 has 3 dimensions"),
    "block_diag of a list": (lambda m: m.block_diag([m.ones(1)]), TypeError, "element 0"),
    "cartesian_prod of a matrix": (lambda m: m.cartesian_prod(m.zeros(2, 2), m.zeros(2)), RuntimeError,
                                   r"1D vector, but got shape \[2, 2\]"),
    "cartesian_prod mixed dtypes": (lambda m: m.cartesian_prod(m.tensor([1]), m.tensor([1.5])), RuntimeError,
                                    "same dtype"),
    "combinations negative r": (lambda m: m.combinations(m.tensor([1, 2]), -1), RuntimeError, "non-negative.*-1"),
    "combinations of a matrix": (lambda m: m.combinations(m.zeros(2, 2)), RuntimeError, "1D vector"),
    "tril_indices negative row": (lambda m: m.tril_indices(-1, 4), RuntimeError, "row must be non-negative"),
    "triu_indices negative col": (lambda m: m.triu_indices(3, -4), RuntimeError, "col must be non-negative"),
    "tril_indices float dtype": (lambda m: m.tril_indices(3, 3, dtype=m.float32), NotImplementedError,
                                 "tril_indices"),
    "unravel_index float indices": (lambda m: m.unravel_index(m.tensor([1.0]), (3, 4)), TypeError, "integer dtype"),
    "unravel_index negative shape": (lambda m: m.unravel_index(m.tensor([1]), (3, -4)), ValueError, "negative"),
    "vander of a matrix": (lambda m: m.vander(m.zeros(2, 2)), RuntimeError, "one-dimensional"),
    "vander negative N": (lambda m: m.vander(m.zeros(3), N=-1), RuntimeError, "N must be non-negative"),
    "logspace negative steps": (lambda m: m.logspace(0, 1, -1), RuntimeError, "non-negative"),
    "logspace 1-d start": (lambda m: m.logspace(m.tensor([0.0]), 1, 2), RuntimeError, "0-dimensional"),
    "logspace bool": (lambda m: m.logspace(0, 2, 3, dtype=m.bool), NotImplementedError, "logspace"),
    "searchsorted sorter length": (lambda m: m.searchsorted(m.tensor([1.0, 2, 3]), 2, sorter=m.tensor([0, 1])),
                                   RuntimeError, r"same size.*\[3\].*\[2\]"),
    "searchsorted sorter dtype": (lambda m: m.searchsorted(m.tensor([1.0, 2]), 2,
                                                           sorter=m.tensor([0, 1], dtype=m.int32)),
                                  RuntimeError, "long dtype"),
    "searchsorted sorter out of range": (lambda m: m.searchsorted(m.tensor([1.0, 2]), 2, sorter=m.tensor([0, 2])),
                                         RuntimeError, "sorter index out of range"),
    "searchsorted side": (lambda m: m.searchsorted(m.tensor([1.0, 2]), 2, side="middle"), RuntimeError,
                          "'left' or 'right'"),
    "searchsorted side against right": (lambda m: m.searchsorted(m.tensor([1.0, 2]), 2, side="left", right=True),
                                        RuntimeError, "opposites"),
    "searchsorted rows mismatch": (lambda m: m.searchsorted(m.zeros(2, 3), m.zeros(1, 3)), RuntimeError,
                                   r"boundaries tensor \[2, 3\] and input value tensor \[1, 3\]"),
    "searchsorted scalar with rows": (lambda m: m.searchsorted(m.zeros(2, 3), 3), RuntimeError, "scalar only"),
    "searchsorted 0-d boundaries": (lambda m: m.searchsorted(m.tensor(1.0), m.tensor([3.0])), RuntimeError,
                                    "positive dimension"),
    "searchsorted bool": (lambda m: m.searchsorted(m.tensor([False, True]), m.tensor([True])), NotImplementedError,
                          "(?i)bool"),
    "bucketize 2-d boundaries": (lambda m: m.bucketize(m.tensor([3.0]), m.zeros(2, 2)), RuntimeError,
                                 r"1 dimension, but got dim\(2\)"),
    "isin two numbers": (lambda m: m.isin(1, 2), TypeError, "int"),
    "isin a list": (lambda m: m.isin(m.tensor([1, 2]), [2]), TypeError, "list"),
    "isin bool": (lambda m: m.isin(m.tensor([True]), m.tensor([True])), RuntimeError, "Bool"),
    "broadcast_shapes mismatch": (lambda m: m.broadcast_shapes((2, 3), (4,)), RuntimeError, "4"),
    "broadcast_shapes negative": (lambda m: m.broadcast_shapes((2, -3), (3,)), ValueError, "negative"),
    "broadcast_tensors mismatch": (lambda m: m.broadcast_tensors(m.zeros(2), m.zeros(3)), RuntimeError,
                                   "non-singleton dimension 0"),
    "sum_to_size not expandable": (lambda m: m.ones(2, 3).sum_to_size(2), RuntimeError, "not expandable"),
    "sum_to_size longer": (lambda m: m.ones(2, 3).sum_to_size(4, 2, 3), RuntimeError, "not expandable"),
    "kron of a list": (lambda m: m.kron([1, 2], m.ones(2)), TypeError, "Tensor"),
}


test_bad_input_raises_pytorchs_exception, test_pytorch_raises_the_same_exception_type = bad_input_tests(BAD)
