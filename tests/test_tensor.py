"""The Tensor façade: attributes, conversions, autograd handles, casts, repr,
dunders, NumPy interop, Python scalars on either side of every operator, and
augmented assignment. PyTorch is the oracle wherever it has the same API."""
from __future__ import annotations

import operator
import re

import numpy as np
import pytest

import tinygrad_lab as tl

from ._helpers import assert_like_torch, dtype_name, pair


def torch_repr(t) -> str:
    """PyTorch's repr in tinygrad_lab's spelling: 'torch.' -> 'tinygrad_lab.', and
    PyTorch's numbered node names (MulBackward0) without the number."""
    return re.sub(r"(Backward)\d+>", r"\1>", repr(t).replace("torch.", "tinygrad_lab."))


def grad_fn_name(t) -> str | None:
    """The grad_fn's name in either library, PyTorch's trailing digit stripped ('MulBackward')."""
    g = t.grad_fn
    if g is None:
        return None
    return re.sub(r"\d+$", "", g.name())


SHAPES = [(), (0,), (3,), (2, 3), (2, 1, 4)]

# ================================================================ attributes


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_shape_is_a_size_tuple(shape):
    s = tl.zeros(shape).shape
    assert isinstance(s, tl.Size) and isinstance(s, tuple)
    assert s == shape and tuple(s) == shape
    assert repr(s) == f"Size({list(shape)})"


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_shape_size_dim_numel_match_pytorch(torch, shape):
    t, ref = tl.zeros(shape), torch.zeros(shape)
    assert repr(t.shape) == repr(ref.shape).replace("torch.", "")
    assert t.size() == ref.size() and isinstance(t.size(), tl.Size)
    assert t.dim() == ref.dim() and t.ndim == ref.ndim
    assert t.numel() == ref.numel()
    for d in range(-t.dim(), t.dim()):
        assert t.size(d) == ref.size(d)


def test_size_repr_by_hand():
    assert repr(tl.zeros(2, 3).shape) == "Size([2, 3])"
    assert tl.zeros(2, 3).size(1) == 3 and tl.zeros(2, 3).size(-2) == 2


@pytest.mark.parametrize("name", ["bool", "int64", "float16", "float32", "float64"])
def test_dtype_attribute_matches_pytorch(torch, name):
    t, ref = pair(torch, [1, 0], name)
    assert t.dtype is getattr(tl, name)
    assert dtype_name(t.dtype) == dtype_name(ref.dtype)


def test_device_attribute(torch):
    t = tl.zeros(2)
    assert t.device == "cpu"
    assert t.device == tl.device("cpu")
    assert repr(t.device) == "device(type='cpu')" == repr(torch.zeros(2).device)
    assert str(t.device) == "cpu"


def test_T_and_mT_match_pytorch(torch):
    a, ra = pair(torch, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert_like_torch(a.T, ra.T)
    b, rb = pair(torch, np.arange(24.0).reshape(2, 3, 4).tolist())
    assert_like_torch(b.mT, rb.mT)
    assert b.mT.shape == (2, 4, 3)


def test_data_shares_memory_outside_the_graph():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert np.shares_memory(d.numpy(), x.detach().numpy())
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d.add_(1.0)  # not recorded, no version bump (as PyTorch)
    assert x.tolist() == [2.0, 3.0] and x._version == 0
    y = x * 2
    assert y.data.grad_fn is None and not y.data.requires_grad


def test_grad_is_none_until_backward():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert x.grad is None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def _autograd_flags(mod) -> dict:
    x = mod.tensor([1.0, 2.0], requires_grad=True)
    c = mod.tensor([3.0, 4.0])
    cases = {"leaf": x, "constant": c, "constant_op": c * 2, "product": x * c, "sum": (x * c).sum(),
             "detached": (x * c).detach()}
    return {k: (v.is_leaf, v.requires_grad, grad_fn_name(v)) for k, v in cases.items()}


def test_grad_fn_and_is_leaf_match_pytorch(torch):
    mine = _autograd_flags(tl)
    assert mine == _autograd_flags(torch)
    assert mine["product"] == (False, True, "MulBackward")
    assert mine["constant_op"] == (True, False, None)


def test_requires_grad_cannot_be_cleared_on_a_non_leaf(torch):
    for mod in (torch, tl):
        y = mod.tensor([1.0], requires_grad=True) * 2
        with pytest.raises(RuntimeError, match="leaf"):
            y.requires_grad = False


# ================================================================ conversions and autograd handles

@pytest.mark.parametrize("data", [2.5, -3, True, [[7.25]], [False]], ids=["float", "int", "bool", "1x1", "bool1"])
def test_item_matches_pytorch(torch, data):
    t, ref = pair(torch, data)
    assert type(t.item()) is type(ref.item())
    assert t.item() == ref.item()


@pytest.mark.parametrize("data", [2.5, [1, 2], [[1.5, 2.0], [3.0, 4.0]], [[True], [False]], []],
                         ids=["0d", "ints", "floats_2d", "bools", "empty"])
def test_tolist_matches_pytorch(torch, data):
    t, ref = pair(torch, data)
    assert t.tolist() == ref.tolist()
    assert type(t.tolist()) is type(ref.tolist())


def test_clone_is_new_memory_and_passes_gradient():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert not np.shares_memory(c.detach().numpy(), x.detach().numpy())
    assert c.requires_grad and not c.is_leaf
    (c * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    plain = tl.tensor([1.0, 2.0])
    copy = plain.clone()
    copy.add_(1.0)
    assert plain.tolist() == [1.0, 2.0] and copy.grad_fn is None


def test_detach_shares_memory_and_version_without_grad(torch):
    for mod in (torch, tl):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        d = x.detach()
        assert not d.requires_grad and d.grad_fn is None and d.is_leaf
        assert np.shares_memory(d.numpy(), x.detach().numpy())
        d.add_(1.0)
        assert x.tolist() == [2.0, 3.0]
        assert x._version == 1, mod.__name__  # the version counter is shared (PyTorch semantics)


def test_detach_in_place():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert y.tolist() == [2.0, 4.0]


def test_requires_grad_in_place():
    z = tl.ones(3)
    assert z.requires_grad_() is z and z.requires_grad
    assert z.requires_grad_(False) is z and not z.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        tl.ones(3, dtype=tl.int64).requires_grad_()


def test_retain_grad_matches_pytorch(torch):
    results = {}
    for mod in (torch, tl):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.retain_grad()
        (y * y).sum().backward()
        assert y.retains_grad
        results[mod.__name__] = (y.grad.tolist(), x.grad.tolist())
    assert results["tinygrad_lab"] == results["torch"] == ([6.0, 12.0], [18.0, 36.0])


def test_non_leaf_grad_is_none_without_retain_grad():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    (y * y).sum().backward()
    assert y.grad is None and not y.retains_grad


CASTS = ["float", "double", "half", "long", "int", "bool"]


@pytest.mark.parametrize("method", CASTS)
def test_cast_methods_match_pytorch(torch, method):
    t, ref = pair(torch, [1.7, -1.7, 0.0, 2.5])
    assert_like_torch(getattr(t, method)(), getattr(ref, method)())


@pytest.mark.parametrize("name", ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"])
def test_to_dtype_and_to_other_match_pytorch(torch, name):
    t, ref = pair(torch, [[0.0, 1.5], [3.0, 200.0]])
    assert_like_torch(t.to(getattr(tl, name)), ref.to(getattr(torch, name)))
    assert_like_torch(t.to(dtype=getattr(tl, name)), ref.to(dtype=getattr(torch, name)))
    other, rother = pair(torch, [1], name)
    assert_like_torch(t.to(other), ref.to(rother))


def test_to_returns_self_when_nothing_changes():
    t = tl.tensor([1.0, 2.0])
    assert t.to(tl.float32) is t
    assert t.to("cpu") is t
    assert t.to("cpu", tl.float64).dtype is tl.float64


@pytest.mark.parametrize("src,cast", [("float32", "double"), ("float64", "float"), ("float32", "half")])
def test_gradient_flows_through_float_casts(torch, src, cast):
    results = []
    for mod in (torch, tl):
        x = mod.tensor([1.0, -2.0, 0.5], dtype=getattr(mod, src), requires_grad=True)
        y = getattr(x, cast)()
        assert y.requires_grad and not y.is_leaf
        (y * y * 3).sum().backward()
        results.append(x.grad)
    ref, got = results
    assert_like_torch(got, ref, rtol=1e-3)
    assert got.dtype is getattr(tl, src)


# ================================================================ repr vs PyTorch

REPRS = {
    "floats": lambda m: m.tensor([1.5, 2.25, -3.0]),
    "whole_floats": lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "ints": lambda m: m.tensor([[1, 2], [3, 400]]),
    "negative_ints": lambda m: m.tensor([-1, 20, -300]),
    "bools": lambda m: m.tensor([True, False]),
    "float64": lambda m: m.tensor([1.0, 2.5], dtype=m.float64),
    "float16": lambda m: m.tensor([1.0, 2.5], dtype=m.float16),
    "int32": lambda m: m.tensor([1, 2], dtype=m.int32),
    "uint8": lambda m: m.tensor([1, 255], dtype=m.uint8),
    "small_and_large": lambda m: m.tensor([1e-5, 1.0, 1e5]),
    "requires_grad_leaf": lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    "mul_grad_fn": lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
    "add_grad_fn": lambda m: m.tensor([1.0, 2.0], requires_grad=True) + m.tensor([0.5, 0.5]),
    "sum_0d_grad_fn": lambda m: (m.tensor([1.0, 2.0], requires_grad=True) * 3).sum(),
    "float64_with_grad_fn": lambda m: m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True) * 2,
    "float64_requires_grad": lambda m: m.tensor([1.0], dtype=m.float64, requires_grad=True),
    "0d_float": lambda m: m.tensor(3.5),
    "0d_int": lambda m: m.tensor(3),
    "0d_bool": lambda m: m.tensor(False),
    "0d_float64": lambda m: m.tensor(0.25, dtype=m.float64),
    "empty": lambda m: m.tensor([]),
    "empty_int": lambda m: m.zeros(0, dtype=m.int64),
    "empty_2d": lambda m: m.zeros(0, 3),
    "long_row": lambda m: m.arange(30.0),
    "summarized": lambda m: m.arange(2000).reshape(40, 50),
}


@pytest.mark.parametrize("program", REPRS.values(), ids=REPRS.keys())
def test_repr_matches_pytorch(torch, program):
    assert repr(program(tl)) == torch_repr(program(torch))


def test_repr_by_hand():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward>)"
    assert repr(tl.tensor([1.0], dtype=tl.float64)) == "tensor([1.], dtype=tinygrad_lab.float64)"
    assert repr(tl.tensor(3)) == "tensor(3)"


def test_str_is_repr():
    t = tl.tensor([1.0, 2.0])
    assert str(t) == repr(t)


# ================================================================ dunders

@pytest.mark.parametrize("data", [0.0, 2.5, 0, -3, True, False, [[1.0]], [0]], ids=str)
def test_scalar_dunders_match_pytorch(torch, data):
    t, ref = pair(torch, data)
    assert bool(t) is bool(ref)
    assert float(t) == float(ref) and type(float(t)) is float
    assert int(t) == int(ref) and type(int(t)) is int


def test_int_truncates_toward_zero():
    assert int(tl.tensor(-2.7)) == -2 and int(tl.tensor(2.7)) == 2


@pytest.mark.parametrize("convert", [bool, float, int], ids=["bool", "float", "int"])
@pytest.mark.parametrize("data", [[1.0, 2.0], []], ids=["two", "empty"])
def test_scalar_dunders_on_many_elements_raise_like_pytorch(torch, convert, data):
    t, ref = pair(torch, data)
    with pytest.raises(Exception) as expected:
        convert(ref)
    with pytest.raises(expected.type):
        convert(t)


def test_index_dunder():
    lst = [10, 20, 30, 40]
    i, j = tl.tensor(1), tl.tensor(3, dtype=tl.int32)
    assert lst[i] == 20 and lst[i:j] == [20, 30]
    assert operator.index(tl.tensor(2, dtype=tl.uint8)) == 2
    assert list(range(tl.tensor(3))) == [0, 1, 2]


@pytest.mark.parametrize("data", [1.0, [1, 2]], ids=["float", "two_ints"])
def test_index_dunder_rejects_like_pytorch(torch, data):
    t, ref = pair(torch, data)
    with pytest.raises(TypeError):
        operator.index(ref)
    with pytest.raises(TypeError, match="integer"):
        operator.index(t)


def test_len_and_iteration_match_pytorch(torch):
    t, ref = pair(torch, [[1, 2], [3, 4], [5, 6]])
    assert len(t) == len(ref) == 3
    rows = list(t)
    assert len(rows) == 3
    for row, rrow in zip(rows, ref):
        assert_like_torch(row, rrow)
    a, b = tl.tensor([7.0, 8.0])
    assert a.shape == () and a.item() == 7.0 and b.item() == 8.0


@pytest.mark.parametrize("use", [len, iter], ids=["len", "iter"])
def test_len_and_iter_of_0d_are_type_errors(torch, use):
    with pytest.raises(TypeError):
        use(torch.tensor(1.0))
    with pytest.raises(TypeError, match="0-d"):
        use(tl.tensor(1.0))


def test_tensors_are_hashable_by_identity():
    a, b = tl.tensor([1.0]), tl.tensor([1.0])
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b"
    assert len({a, b, a}) == 2
    h = hash(a)
    a.add_(1.0)
    assert hash(a) == h and d[a] == "a"


# ================================================================ NumPy interop

def test_np_asarray_shares_memory():
    t = tl.tensor([1.0, 2.0])
    arr = np.asarray(t)
    assert arr.dtype == np.float32 and np.shares_memory(arr, t.numpy())
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), [1.0, 2.0])
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


NDARRAY_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
               "<": operator.lt, "==": operator.eq, "**": operator.pow}


@pytest.mark.parametrize("op", NDARRAY_OPS.values(), ids=NDARRAY_OPS.keys())
@pytest.mark.parametrize("arr", [np.array([2.0, 0.5]), np.array([3, 1], np.int32)], ids=["float64", "int32"])
def test_ndarray_with_tensor_gives_a_tensor(torch, op, arr):
    t, ref = pair(torch, [1.5, 2.0])
    # NumPy defers to the Tensor; PyTorch's answer for the same operands as tensors is the oracle
    assert_like_torch(op(arr, t), op(torch.from_numpy(arr), ref), rtol=1e-6)
    assert_like_torch(op(t, arr), op(ref, torch.from_numpy(arr)), rtol=1e-6)


def test_ndarray_times_tensor_requiring_grad_records_the_graph():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = np.array([3.0, 4.0], np.float32) * x
    assert isinstance(y, tl.Tensor) and y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


NUMPY_SCALARS = {"float64": np.float64(2.0), "float32": np.float32(2.0), "int64": np.int64(2), "int32": np.int32(2)}


@pytest.mark.parametrize("scalar", NUMPY_SCALARS.values(), ids=NUMPY_SCALARS.keys())
@pytest.mark.parametrize("name", ["float16", "float32", "int32"])
def test_numpy_scalars_promote_like_python_scalars(torch, name, scalar):
    # PyTorch treats a NumPy scalar like the Python number: float32 tensor * np.float64(2) stays float32
    t, ref = pair(torch, [1, 2], name)
    assert_like_torch(t * scalar, ref * scalar)
    assert_like_torch(scalar * t, scalar * ref)
    assert_like_torch(t + scalar, ref + scalar)


def test_numpy_bool_scalar_acts_like_python_bool():
    # Not compared with PyTorch: torch 2.13 reads np.bool_ as a float (int32 tensor * np.bool_(True) -> float32)
    t = tl.tensor([1, 2], dtype=tl.int32)
    for out in (t * np.bool_(True), np.bool_(True) * t):
        assert out.dtype is tl.int32 and out.tolist() == [1, 2]
    assert (tl.tensor([True, False]) * np.bool_(True)).dtype is tl.bool


# ================================================================ Python scalars on either side of every operator

BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "==": operator.eq,
          "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
SCALAR_OPERANDS = {"float32": [1.5, -2.0, 3.0], "int64": [7, 4, 5], "float64": [0.5, 2.0, -1.5], "uint8": [7, 4, 5]}


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # (-2.0) ** 2.5 is nan in both
@pytest.mark.parametrize("side", ["tensor_op_scalar", "scalar_op_tensor"])
@pytest.mark.parametrize("scalar", [3, 2.5], ids=["int", "float"])
@pytest.mark.parametrize("op", BINARY.values(), ids=BINARY.keys())
@pytest.mark.parametrize("name", SCALAR_OPERANDS)
def test_python_scalar_on_either_side(torch, name, op, scalar, side):
    t, ref = pair(torch, SCALAR_OPERANDS[name], name)
    f = (lambda a: op(a, scalar)) if side == "tensor_op_scalar" else (lambda a: op(scalar, a))
    assert_like_torch(f(t), f(ref), rtol=1e-6)


def test_python_scalars_by_hand():
    t = tl.tensor([1.0, 2.0])
    assert (1 - t).tolist() == [0.0, -1.0]
    assert (t - 1).tolist() == [0.0, 1.0]
    assert (2 / t).tolist() == [2.0, 1.0]
    assert (2 ** t).tolist() == [2.0, 4.0]
    assert (7 // tl.tensor([2, -2])).tolist() == [3, -4]
    assert (7 % tl.tensor([2, -2])).tolist() == [1, -1]
    assert (1 < t).tolist() == [False, True]


BITWISE = {"&": operator.and_, "|": operator.or_, "^": operator.xor}
BITWISE_CASES = [("bool", [True, False, True], True), ("bool", [True, False, True], False),
                 ("int64", [3, -4, 5], 6), ("int32", [3, -4, 5], 6), ("uint8", [3, 4, 5], 6),
                 ("int64", [3, -4, 5], True)]


@pytest.mark.parametrize("side", ["tensor_op_scalar", "scalar_op_tensor"])
@pytest.mark.parametrize("op", BITWISE.values(), ids=BITWISE.keys())
@pytest.mark.parametrize("name,data,scalar", BITWISE_CASES, ids=[f"{n}-{s}" for n, _, s in BITWISE_CASES])
def test_bitwise_operators_with_scalars_match_pytorch(torch, name, data, scalar, op, side):
    t, ref = pair(torch, data, name)
    f = (lambda a: op(a, scalar)) if side == "tensor_op_scalar" else (lambda a: op(scalar, a))
    assert_like_torch(f(t), f(ref))


@pytest.mark.parametrize("op", BITWISE.values(), ids=BITWISE.keys())
@pytest.mark.parametrize("name", ["bool", "int64"])
def test_bitwise_operators_between_tensors_match_pytorch(torch, name, op):
    a, ra = pair(torch, [1, 0, 6, 3], name)
    b, rb = pair(torch, [1, 1, 3, 0], name)
    assert_like_torch(op(a, b), op(ra, rb))


UNARY = {"neg": operator.neg, "pos": operator.pos, "abs": abs}


@pytest.mark.parametrize("op", UNARY.values(), ids=UNARY.keys())
@pytest.mark.parametrize("name,data", [("float32", [1.5, -2.0, 0.0]), ("int64", [3, -4, 0])], ids=["float32", "int64"])
def test_unary_operators_match_pytorch(torch, name, data, op):
    t, ref = pair(torch, data, name)
    assert_like_torch(op(t), op(ref))


@pytest.mark.parametrize("name,data", [("bool", [True, False]), ("int64", [3, -4, 0]), ("uint8", [3, 0, 255])])
def test_invert_matches_pytorch(torch, name, data):
    # ~ is logical not on bool tensors and bitwise not on integer tensors
    t, ref = pair(torch, data, name)
    assert_like_torch(~t, ~ref)


# ================================================================ augmented assignment

AUGMENTED = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
             "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow}


@pytest.mark.parametrize("op", AUGMENTED.values(), ids=AUGMENTED.keys())
def test_augmented_assignment_is_in_place(torch, op):
    t, ref = pair(torch, [5.0, 7.0, -3.0])
    before_id, before_version, memory = id(t), t._version, t.numpy()
    result = op(t, 2)
    assert result is t and id(result) == before_id
    assert np.shares_memory(result.numpy(), memory)
    assert result._version == before_version + 1
    assert_like_torch(result, op(ref, 2))


INT_AUGMENTED = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "//=": operator.ifloordiv,
                 "%=": operator.imod, "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor}


@pytest.mark.parametrize("op", INT_AUGMENTED.values(), ids=INT_AUGMENTED.keys())
def test_int_augmented_assignment_is_in_place_and_keeps_dtype(torch, op):
    t, ref = pair(torch, [5, 6, -3])
    before_id = id(t)
    result = op(t, 3)
    assert id(result) == before_id
    assert_like_torch(result, op(ref, 3))


@pytest.mark.parametrize("op,operand", [(operator.itruediv, 2), (operator.iadd, 1.5)], ids=["/=", "+=float"])
def test_int_augmented_assignment_that_needs_float_is_a_runtime_error(torch, op, operand):
    with pytest.raises(RuntimeError, match="can't be cast"):
        op(torch.tensor([1, 2]), operand)
    t = tl.tensor([1, 2])
    with pytest.raises(RuntimeError, match=r"float32 can't be cast .*int64"):
        op(t, operand)
    assert t.tolist() == [1, 2]


def test_augmented_assignment_on_a_view_writes_into_the_base(torch):
    m, rm = pair(torch, [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    row, rrow = m[0], rm[0]
    row += 1
    rrow += 1
    assert_like_torch(m, rm)


def test_augmented_assignment_on_a_non_leaf_keeps_gradients(torch):
    results = []
    for mod in (torch, tl):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y += 1
        y *= 3
        assert grad_fn_name(y) == "MulBackward"
        y.sum().backward()
        results.append(x.grad)
    assert_like_torch(results[1], results[0])
    assert results[1].tolist() == [6.0, 6.0]
