"""Indexing semantics the op table does not cover: out-of-range and bad-type errors,
PyTorch's placement of dims for mixed int/array keys, `x[key] = v` (values, dtypes,
broadcasting, gradients to x and v), gather's errors. Checked against PyTorch
(skipped without it) or by hand."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_lab as tl

from .op_table import TL, check_against_torch, error_of, tensor_key, torch_lib

_X = np.arange(24.0).reshape(2, 3, 4)

# ---------------------------------------------------------------- getitem

GETITEM = {
    "int": lambda m, x: x[1],
    "negative int": lambda m, x: x[-1, -2],
    "all ints -> 0-d": lambda m, x: x[1, 2, 3],
    "slices out of range clip": lambda m, x: x[:, 1:10, -10:2],
    "empty slice": lambda m, x: x[:, 2:1],
    "None and Ellipsis": lambda m, x: x[None, ..., 1, None],
    "Ellipsis alone": lambda m, x: x[...],
    "0-d int tensor index": lambda m, x: x[m.tensor(1)],
    "int64 tensor": lambda m, x: x[m.tensor([1, 0, 1])],
    "int32 tensor": lambda m, x: x[:, m.tensor([2, 0], dtype=m.int32)],
    "list index": lambda m, x: x[[1, 1, 0]],
    "range index (nn_tutorial's nll)": lambda m, x: x[1, range(3), m.tensor([3, 0, 2])],
    "negative array indices": lambda m, x: x[:, [-1, 0, -3]],
    "2-d index array": lambda m, x: x[m.tensor([[0, 1], [1, 1]])],
    "arrays separated by a slice": lambda m, x: x[m.tensor([0, 1]), :, m.tensor([3, 0])],
    "broadcast index arrays": lambda m, x: x[m.tensor([[0], [1]]), m.tensor([0, 2, 1])],
    "bool mask, full shape": lambda m, x: x[x > 10],
    "bool mask over the first dims": lambda m, x: x[m.tensor([[True, False, True], [False, False, True]])],
    "bool mask with a slice": lambda m, x: x[:, m.tensor([True, False, True])],
    "all-False mask": lambda m, x: x[x > 100],
    "empty int index": lambda m, x: x[m.tensor([], dtype=m.int64)],
    "True then an int (adds a dim)": lambda m, x: x[True, 0],
    "False then an int (empty)": lambda m, x: x[False, 0],
    "True between a slice and an int": lambda m, x: x[True, :, 0],
    "0-d tensor, slice, int": lambda m, x: x[m.tensor(1), :, 0],
    "int and a bool mask": lambda m, x: x[0, m.tensor([True, False, True])],
}


@pytest.mark.parametrize("op", GETITEM.values(), ids=GETITEM.keys())
def test_getitem_matches_pytorch(op, torch):
    check_against_torch(lambda m: op(m, m.tensor(_X)))


def test_int_and_array_separated_by_slice_follow_pytorch(torch):
    """x[0, :, idx]: NumPy moves the broadcast index dims first (shape (2, 3)); PyTorch applies
    the int as a select first, so the array dim stays in place (shape (3, 2))."""
    out = tl.tensor(_X)[0, :, tl.tensor([0, 1])]
    assert tuple(out.shape) == tuple(torch.tensor(_X)[0, :, torch.tensor([0, 1])].shape) == (3, 2)


def test_getitem_gradient_accumulates_repeated_indices_by_hand():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2, -3]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


def test_basic_index_is_a_view_advanced_index_is_a_copy(torch):
    def run(m):
        x = m.zeros(2, 3)
        basic, advanced = x[0], x[[0]]
        x.add_(1.0)
        return basic, advanced

    check_against_torch(run)


ONE_ELEMENT_VIEWS = {  # each picks the element at flat position 6 of a (3, 4) tensor: row 1, column 2
    "m[1, 2]": lambda m: m[1, 2],
    "m[1][2]": lambda m: m[1][2],
    "m[-2, -2]": lambda m: m[-2, -2],
    "m[1, 2, None]": lambda m: m[1, 2, None],
    "m[1, ..., 2]": lambda m: m[1, ..., 2],
    "m.select(1, 2).select(0, 1)": lambda m: m.select(1, 2).select(0, 1),
    "m.unbind()[1].unbind()[2]": lambda m: m.unbind()[1].unbind()[2],
    "m.t()[2, 1]": lambda m: m.t()[2, 1],
    "m.view(12)[6]": lambda m: m.view(12)[6],
    "m[1, 2:3][0]": lambda m: m[1, 2:3][0],
}


@pytest.mark.parametrize("pick", ONE_ELEMENT_VIEWS.values(), ids=ONE_ELEMENT_VIEWS.keys())
def test_an_index_that_picks_one_element_is_a_view_of_it(pick):
    """NumPy gives a copy (a scalar) for an element picked by ints; PyTorch gives a 0-d view: writing
    through it changes the tensor, and it reads what is written into the tensor later."""
    m = tl.zeros(3, 4)
    v = pick(m)
    v.add_(5.0)
    assert m.flatten().tolist() == [0.0] * 6 + [5.0] + [0.0] * 5
    m.mul_(2.0)
    assert v.tolist() in (10.0, [10.0])
    assert v._version == m._version == 2


# ---------------------------------------------------------------- getitem errors

OUT_OF_RANGE = {
    "int": lambda x: x[5],
    "negative int": lambda x: x[-3],
    "second dim": lambda x: x[0, 7],
    "too many indices": lambda x: x[0, 0, 0],
    "list": lambda x: x[[0, 5]],
    "tensor": lambda x: x[x.new_tensor([3]).long()],
    "negative tensor": lambda x: x[:, x.new_tensor([-4]).long()],
}


@pytest.mark.parametrize("op", OUT_OF_RANGE.values(), ids=OUT_OF_RANGE.keys())
def test_index_out_of_range_raises_index_error_naming_the_shape(op, torch):
    assert isinstance(error_of(lambda: op(torch.ones(2, 3))), IndexError)
    with pytest.raises(IndexError, match=r"2, 3"):
        op(tl.ones(2, 3))


BAD_INDEX = {
    "float tensor": lambda m, x: x[m.tensor([0.0])],
    "float": lambda m, x: x[1.5],
}


@pytest.mark.parametrize("op", BAD_INDEX.values(), ids=BAD_INDEX.keys())
def test_bad_index_types_raise_like_pytorch(op, torch):
    ref = error_of(lambda: op(torch_lib(), torch.ones(2, 3)))
    assert ref is not None
    with pytest.raises(type(ref)):
        op(TL, tl.ones(2, 3))


INDEX_TAKERS = {
    "getitem": lambda m, x, i: x[i],
    "index_put": lambda m, x, i: x.index_put((i,), m.tensor(1.0)),
    "gather": lambda m, x, i: x.gather(0, i),
    "take_along_dim": lambda m, x, i: x.take_along_dim(i),
    "index_select": lambda m, x, i: x.index_select(0, i),
    "index_add": lambda m, x, i: x.index_add(0, i, m.ones(2)),
    "scatter": lambda m, x, i: x.scatter(0, i, 1.0),
    "take": lambda m, x, i: x.take(i),
}


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("op", INDEX_TAKERS.values(), ids=INDEX_TAKERS.keys())
def test_which_index_dtypes_each_op_takes_is_pytorch_s(op, dtype, torch):
    """x[i] takes long, int, byte (as a mask) and bool; gather, scatter & co int32 and int64; take only
    int64: where PyTorch refuses, the same exception type, naming the dtype; where it takes, the same values."""
    def run(m):
        return op(m, m.arange(6.0), m.tensor([1, 0, 0, 1, 1, 0], dtype=getattr(m, dtype))[:2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's (and our) deprecation of uint8 masks
        ref = error_of(lambda: run(torch_lib()))
        if ref is None:
            check_against_torch(run)
            return
        with pytest.raises(type(ref)) as err:
            run(TL)
    named = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long"}[dtype]
    assert named in str(err.value) or "mask" in str(err.value)


def test_a_uint8_index_is_a_mask_as_in_pytorch(torch):
    x = np.arange(6.0)
    mask = np.array([1, 0, 2, 0, 0, 1], np.uint8)
    with pytest.warns(UserWarning, match="uint8 is deprecated"):
        got = tl.tensor(x)[tl.tensor(mask)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.tensor(x)[torch.tensor(mask)]
    np.testing.assert_array_equal(got.numpy(), want.numpy())  # [0., 2., 5.]: where the mask is nonzero


INDEX_PUT = {
    "ints": ((np.array([0, 2, 0]), np.array([1, 3, 1])), np.array([10.0, 20.0, 30.0])),
    "rows, broadcast": ((np.array([0, 0, 2]),), np.array([1.0, 2.0, 3.0, 4.0])),
    "bool mask": ((np.array([[True, False, False, True]] * 3),), np.array(5.0)),
}


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("indices,values", INDEX_PUT.values(), ids=INDEX_PUT.keys())
def test_index_put_values_and_gradients_match_pytorch(indices, values, accumulate, torch):
    """accumulate=False: the last write wins at a repeated position; True: repeated positions add up."""
    def run(m):
        x, v = m.arange(12.0).reshape(3, 4).requires_grad_(), m.tensor(values, dtype=m.float32, requires_grad=True)
        out = x.index_put(tuple(m.tensor(i) for i in indices), v, accumulate=accumulate)
        (out * m.arange(12.0).reshape(3, 4)).sum().backward()
        inplace = m.zeros(3, 4).index_put_(tuple(m.tensor(i) for i in indices), v.detach(), accumulate=accumulate)
        return out, x.grad, v.grad, inplace
    check_against_torch(run)


def test_index_put_refuses_what_pytorch_refuses(torch):
    for fn in (lambda m: m.zeros(3).index_put((m.tensor([1]),), m.tensor(1, dtype=m.int64)),  # dtypes differ
               lambda m: m.zeros(3).index_put((m.tensor([1]),), 5.0)):  # values not a tensor
        ref = error_of(lambda: fn(torch_lib()))
        with pytest.raises(type(ref)):
            fn(TL)


def test_mask_of_the_wrong_shape_raises_like_pytorch(torch):
    ref = error_of(lambda: torch.ones(2, 3)[torch.tensor([True, False, True])])
    assert isinstance(ref, IndexError)
    with pytest.raises(IndexError):
        tl.ones(2, 3)[tl.tensor([True, False, True])]


# ---------------------------------------------------------------- setitem: values and dtypes

SETITEM = {
    "int, scalar": ((1,), 7.0),
    "slice, broadcast row": ((slice(None), slice(1, 3)), np.array([10.0, 20.0])),
    "column with a (2, 1) value": ((slice(None), 0), np.array([5.0, 6.0])),
    "None and Ellipsis": ((None, Ellipsis, 2), np.array([[1.0, 2.0]])),
    "step slice": ((slice(None), slice(None, None, 2)), np.array([[1.0, 2.0], [3.0, 4.0]])),
    "int index array": ((np.array([1, 0]),), np.array([[1.0, 2.0, 3.0]])),
    "negative index array": ((slice(None), np.array([-1, 0])), 9.0),
    "bool mask, scalar": ((np.array([[True, False, True], [False, True, False]]),), -1.0),
    "bool mask, one value per hit": ((np.array([[True, False, True], [False, True, False]]),),
                                     np.array([1.0, 2.0, 3.0])),
    "row mask": ((np.array([False, True]),), np.array([4.0, 5.0, 6.0])),
}


def _setitem_result(m, key, value, dtype=None):
    x = m.tensor(np.arange(6.0).reshape(2, 3), dtype=dtype)
    x[tensor_key(m, key)] = m.tensor(value) if isinstance(value, np.ndarray) else value
    return x


@pytest.mark.parametrize("key, value", SETITEM.values(), ids=SETITEM.keys())
def test_setitem_values_match_pytorch(key, value, torch):
    check_against_torch(lambda m: _setitem_result(m, key, value))


def test_setitem_casts_to_the_tensor_dtype_like_pytorch(torch):
    check_against_torch(lambda m: _setitem_result(m, (0,), 2.7, dtype=m.int64))
    check_against_torch(lambda m: _setitem_result(m, (0,), np.array([1.5, 2.5, 3.5]), dtype=m.int32))
    check_against_torch(lambda m: _setitem_result(m, (1,), np.array([1, 2, 3]), dtype=m.float32))


def test_setitem_by_hand():
    x = tl.zeros(2, 3)
    x[:, 1] = tl.tensor([5.0, 6.0])
    x[0] = 1.0
    assert x.tolist() == [[1.0, 1.0, 1.0], [0.0, 6.0, 0.0]]


def test_setitem_value_that_does_not_broadcast_raises_like_pytorch(torch):
    ref = error_of(lambda: torch.zeros(2, 3).__setitem__(0, torch.ones(2)))
    assert ref is not None
    with pytest.raises(type(ref)):
        tl.zeros(2, 3)[0] = tl.ones(2)


def test_setitem_on_a_leaf_that_requires_grad_raises_like_pytorch(torch):
    ref = error_of(lambda: torch.zeros(3, requires_grad=True).__setitem__(0, 1.0))
    assert ref is not None
    with pytest.raises(type(ref), match="leaf"):
        tl.zeros(3, requires_grad=True)[0] = 1.0


# ---------------------------------------------------------------- setitem: gradients

SETITEM_GRAD = {
    "basic key, broadcast value": ((slice(None), slice(1, 3)), (1, 2)),
    "int key, scalar-shaped value": ((1, 0), ()),
    "column, (2,) value": ((slice(None), 2), (2,)),
    "index array, broadcast row": ((np.array([1, 0]),), (3,)),
    "mask, 0-d value": ((np.array([[True, False, True], [False, True, True]]),), ()),
    "None in key": ((None, 0), (1, 3)),
}


@pytest.mark.parametrize("key, value_shape", SETITEM_GRAD.values(), ids=SETITEM_GRAD.keys())
def test_setitem_gradient_reaches_x_and_value_like_pytorch(key, value_shape, torch):
    """x = a * 2 (a non-leaf); x[key] = v; the overwritten part of x gets no gradient,
    v gets the (broadcast-summed) gradient of the positions it was written to."""
    weights = np.arange(1.0, 7.0).reshape(2, 3)
    value = np.linspace(-1.0, 1.0, int(np.prod(value_shape))).reshape(value_shape)

    def run(m):
        a = m.tensor(np.ones((2, 3)), requires_grad=True)
        v = m.tensor(value, requires_grad=True)
        x = a * 2.0
        x[tensor_key(m, key)] = v
        (x * m.tensor(weights)).sum().backward()
        return x, a.grad, v.grad

    check_against_torch(run)


def test_setitem_gradient_by_hand():
    a = tl.ones(2, 3, requires_grad=True)
    v = tl.tensor([10.0], requires_grad=True)
    x = a * 2.0
    x[:, 1] = v  # v broadcast to both rows
    (x * tl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    assert a.grad.tolist() == [[2.0, 0.0, 6.0], [8.0, 0.0, 12.0]]
    assert v.grad.tolist() == [7.0]


# ---------------------------------------------------------------- gather

def test_gather_by_hand():
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = x.gather(1, tl.tensor([[0, 0], [1, 0]]))
    assert out.tolist() == [[1.0, 1.0], [4.0, 3.0]]
    out.sum().backward()
    assert x.grad.tolist() == [[2.0, 0.0], [1.0, 1.0]]  # repeated index: gradients add


def test_gather_with_a_smaller_index_matches_pytorch(torch):
    """PyTorch allows index.size(d) <= input.size(d) in the other dims: only that corner is read."""
    x = np.arange(12.0).reshape(3, 4)
    check_against_torch(lambda m: m.tensor(x).gather(1, m.tensor([[3, 0], [1, 1]])))
    check_against_torch(lambda m: m.tensor(x).gather(0, m.tensor([[2, 0, 1]])))


GATHER_ERRORS = {
    "index out of range": lambda m: m.ones(2, 3).gather(1, m.tensor([[0, 3]])),
    "negative index": lambda m: m.ones(2, 3).gather(1, m.tensor([[0, -1]])),
    "index with other ndim": lambda m: m.ones(2, 3).gather(1, m.tensor([0, 1])),
    "float index": lambda m: m.ones(2, 3).gather(1, m.tensor([[0.0]])),
    "index larger than input in another dim": lambda m: m.ones(2, 3).gather(1, m.tensor([[0], [0], [0]])),
}


@pytest.mark.parametrize("fn", GATHER_ERRORS.values(), ids=GATHER_ERRORS.keys())
def test_gather_errors_like_pytorch(fn, torch):
    ref = error_of(lambda: fn(torch_lib()))
    assert ref is not None
    with pytest.raises(type(ref)):
        fn(TL)


# ---------------------------------------------------------------- PyTorch's odd corners of gather & co

GATHER_CORNERS = {
    "empty uint8 index with more dims": lambda m: m.gather(m.arange(5.0), 0, m.zeros(2, 0, dtype=m.uint8)),
    "empty index larger in another dim": lambda m: m.gather(m.ones(2, 3), 1, m.zeros(5, 0, dtype=m.int64)),
    "0-d input, 1-D index": lambda m: m.gather(m.tensor(3.0), 0, m.tensor([0, 0])),
    "0-d input, 0-d index": lambda m: m.gather(m.tensor(3.0), 0, m.tensor(0)),
    "1-D input, 0-d index": lambda m: m.gather(m.tensor([1.0, 2.0]), 0, m.tensor(1)),
    "take_along_dim wraps indices along dim": lambda m: m.take_along_dim(
        m.arange(12.0).reshape(3, 4), m.tensor([[-1, 4], [-5, 9], [0, -100]]), 1),
    "scatter with an int32 index": lambda m: m.zeros(3, 4).scatter(0, m.tensor([[2, 0]], dtype=m.int32),
                                                                    m.ones(1, 2)),
    "scatter_add with an int32 index": lambda m: m.zeros(3, 4).scatter_add(
        1, m.tensor([[3, 3]], dtype=m.int32), m.ones(1, 2)),
    "nonzero as_tuple of a nonzero 0-d": lambda m: m.nonzero(m.tensor(2.0), as_tuple=True),
    "nonzero as_tuple of a zero 0-d": lambda m: m.nonzero(m.tensor(0.0), as_tuple=True),
    "zero_ the function": lambda m: m.zero_(m.ones(2, 3)),
}


@pytest.mark.parametrize("fn", GATHER_CORNERS.values(), ids=GATHER_CORNERS.keys())
def test_gather_corners_match_pytorch(fn, torch):
    check_against_torch(fn)


def test_gather_with_an_empty_index_keeps_the_graph():
    x = tl.ones(2, 3, requires_grad=True)
    out = tl.gather(x, 1, tl.zeros(4, 0, dtype=tl.uint8))
    assert tuple(out.shape) == (4, 0) and out.dtype == tl.float32 and out.requires_grad
    out.sum().backward()
    assert x.grad.tolist() == [[0.0] * 3] * 2


def test_take_along_dim_wraps_like_a_python_modulo():
    a, idx = np.arange(12.0).reshape(3, 4), np.array([[-1, -5, 4, 9]])
    got = tl.take_along_dim(tl.tensor(a), tl.tensor(idx), 1)
    assert np.array_equal(got.numpy(), np.take_along_axis(a, np.broadcast_to(idx % 4, (3, 4)), 1))
    with pytest.raises(RuntimeError, match="out of bounds"):  # without dim: flattened, no wrapping (as PyTorch)
        tl.take_along_dim(tl.tensor(a), tl.tensor([-1]))


def test_scatter_int32_index_and_nonzero_and_zero_by_hand():
    out = tl.zeros(3).scatter(0, tl.tensor([2, 0], dtype=tl.int32), tl.tensor([5.0, 7.0]))
    assert out.tolist() == [7.0, 0.0, 5.0]
    with pytest.raises(RuntimeError, match="int32/int64"):
        tl.zeros(3).scatter(0, tl.tensor([1], dtype=tl.uint8), tl.ones(1))
    assert [t.tolist() for t in tl.nonzero(tl.tensor(2.0), as_tuple=True)] == [[0]]
    assert [t.tolist() for t in tl.nonzero(tl.tensor(0.0), as_tuple=True)] == [[]]
    t = tl.ones(2)
    assert tl.zero_(t) is t and t.tolist() == [0.0, 0.0]


# ---------------------------------------------------------------- random keys against PyTorch

def _random_part(rng, size: int):
    """One part of a key for a dim of `size`: an int, a slice, a list, a 2-d index tensor, a bool mask, None,
    a 0-d index tensor or a bool, each as (kind, value) so that both libraries build it."""
    kind = rng.integers(9)
    if kind == 0:
        return ("int", int(rng.integers(-size, size)))
    if kind == 1:
        a, b = (int(v) for v in rng.integers(-size - 2, size + 2, 2))
        return ("slice", slice(a if rng.random() < 0.7 else None, b if rng.random() < 0.7 else None,
                               int(rng.choice([1, 2, 3]))))
    if kind == 2:
        return ("list", [int(v) for v in rng.integers(-size, size, int(rng.integers(0, 4)))])
    if kind == 3:
        return ("tensor", rng.integers(-size, size, (int(rng.integers(1, 3)), 2)))
    if kind == 4:
        return ("mask", rng.random(size) < 0.5)
    if kind == 5:
        return ("none", None)
    if kind == 6:
        return ("0-d tensor", int(rng.integers(-size, size)))
    return ("bool", bool(rng.random() < 0.5))


def _random_key(rng, shape: tuple) -> list:
    parts, dim = [], 0
    for i in range(int(rng.integers(1, 4))):
        if i == 1 and rng.random() < 0.2:
            parts.append(("ellipsis", Ellipsis))
            dim = len(shape) - 1
            continue
        part = _random_part(rng, shape[dim] if dim < len(shape) else 1)
        parts.append(part)
        dim += part[0] not in ("none", "bool")
    return parts


def _build(m, parts) -> tuple:
    build = {"list": list, "tensor": m.tensor, "mask": m.tensor, "0-d tensor": m.tensor}
    return tuple(build[kind](v) if kind in build else v for kind, v in parts)


def _index_both_ways(m, parts):
    """x[key] (values, and the gradient of a weighting of them), then x[key] = v; or the error's type."""
    x = m.tensor(np.arange(120.0).reshape(4, 5, 6), requires_grad=True)
    try:
        y = x[_build(m, parts)]
        (y * m.arange(1.0, y.numel() + 1).reshape(y.shape)).sum().backward()
        z = x.detach().clone()
        z[_build(m, parts)] = -m.arange(1.0, y.shape[-1] + 1, dtype=m.float64) if y.dim() else -7.0
    except Exception as e:  # noqa: BLE001 - the error's type is compared
        return type(e).__name__
    return tuple(y.shape), y.tolist(), x.grad.tolist(), z.tolist()


@pytest.mark.parametrize("seed", range(6))
def test_random_keys_index_and_assign_as_pytorch(seed, torch):
    """Random keys mixing every kind of index (a 0-d tensor is an int, a bool a new dim with an index of its
    own, ints apply before the advanced indices): dims, values, gradients and assignment as PyTorch. Found 74
    differences in 8,000 keys, among them silently wrong values: x[True, 3, [0, -3, -2]] picked rows of x[:, 3],
    x[t, :, idx] with a 0-d t put the index's dims first, x[2, ..., True] added its dim in front."""
    rng = np.random.default_rng(seed)
    for _ in range(100):
        parts = _random_key(rng, (4, 5, 6))
        assert _index_both_ways(tl, parts) == _index_both_ways(torch, parts), parts
