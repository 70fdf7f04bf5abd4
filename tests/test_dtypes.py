"""dtype objects, their PyTorch aliases, the default float dtype, and PyTorch's
type-promotion rules checked exhaustively against PyTorch itself.
"""
from __future__ import annotations

import operator
import pickle
import sys

import numpy as np
import pytest

import tinygrad_lab as tl

from ._helpers import DTYPE_NAMES, FLOAT_NAMES, assert_like_torch, dtype_name, pair  # noqa: F401

# ================================================================ dtype objects

ALIASES = [("float", "float32"), ("double", "float64"), ("long", "int64"), ("half", "float16"),
           ("int", "int32"), ("short", "int16"), ("bool", "bool")]


@pytest.mark.parametrize("alias,canonical", ALIASES)
def test_alias_is_the_same_object(alias, canonical):
    assert getattr(tl, alias) is getattr(tl, canonical)


@pytest.mark.parametrize("alias,canonical", ALIASES)
def test_aliases_match_pytorch(torch, alias, canonical):
    assert getattr(torch, alias) is getattr(torch, canonical)  # the oracle agrees on what each alias means
    assert dtype_name(getattr(tl, alias)) == dtype_name(getattr(torch, alias))


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_repr(name):
    assert repr(getattr(tl, name)) == f"tinygrad_lab.{name}"


@pytest.mark.parametrize("name", DTYPE_NAMES + tuple(a for a, _ in ALIASES))
def test_repr_matches_pytorch(torch, name):
    assert repr(getattr(tl, name)) == repr(getattr(torch, name)).replace("torch.", "tinygrad_lab.")


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_is_an_instance_of_tl_dtype(name):
    assert isinstance(getattr(tl, name), tl.dtype)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_is_floating_point(name):
    assert getattr(tl, name).is_floating_point is (name in FLOAT_NAMES)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_is_floating_point_and_itemsize_match_pytorch(torch, name):
    assert getattr(tl, name).is_floating_point is getattr(torch, name).is_floating_point
    assert getattr(tl, name).itemsize == getattr(torch, name).itemsize


def test_tensor_is_floating_point_matches_pytorch(torch):
    for name in DTYPE_NAMES:
        t, ref = pair(torch, [1, 0], name)
        assert t.is_floating_point() is ref.is_floating_point(), name
        assert tl.is_floating_point(t) is torch.is_floating_point(ref), name


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_tensor_dtype_is_the_singleton(name):
    d = getattr(tl, name)
    assert tl.zeros(2, dtype=d).dtype is d


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtypes_compare_hash_and_pickle(name):
    d = getattr(tl, name)
    assert {d: 1}[getattr(tl, name)] == 1
    assert all((d == getattr(tl, other)) is (other == name) for other in DTYPE_NAMES)
    assert pickle.loads(pickle.dumps(d)) is d


@pytest.mark.parametrize("pytype", [float, int, bool], ids=["float", "int", "bool"])
def test_python_type_as_dtype_matches_pytorch(torch, pytype):
    # PyTorch maps dtype=float to float64 (not to the default dtype), int to int64, bool to bool
    assert dtype_name(tl.zeros(2, dtype=pytype).dtype) == dtype_name(torch.zeros(2, dtype=pytype).dtype)
    assert dtype_name(tl.tensor([1], dtype=pytype).dtype) == dtype_name(torch.tensor([1], dtype=pytype).dtype)


# ================================================================ the default float dtype

@pytest.fixture
def restore_default_dtype():
    """Put back tinygrad_lab's (and, if loaded, PyTorch's) default dtype after the test."""
    before = tl.get_default_dtype()
    torch = sys.modules.get("torch")
    torch_before = torch.get_default_dtype() if torch is not None else None
    yield
    tl.set_default_dtype(before)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_default_dtype(torch_before if torch_before is not None else torch.float32)


def test_default_dtype_is_float32():
    assert tl.get_default_dtype() is tl.float32


def test_set_default_dtype_round_trips(restore_default_dtype):
    tl.set_default_dtype(tl.float64)
    assert tl.get_default_dtype() is tl.float64
    tl.set_default_dtype(tl.float32)
    assert tl.get_default_dtype() is tl.float32


DEFAULT_DTYPE_PROGRAMS = {
    "python_float": lambda m: m.tensor([1.5]),
    "python_int": lambda m: m.tensor([1]),
    "zeros": lambda m: m.zeros(2),
    "full_float": lambda m: m.full((2,), 2.5),
    "arange_float": lambda m: m.arange(0.0, 2.0, 0.5),
    "linspace": lambda m: m.linspace(0, 1, 3),
    "eye": lambda m: m.eye(2),
    "int_plus_float_scalar": lambda m: m.tensor([1, 2]) + 2.5,
    "int_true_division": lambda m: m.tensor([1, 2]) / m.tensor([2, 4]),
    "float32_plus_float_scalar": lambda m: m.tensor([1.5], dtype=m.float32) + 2.5,
    "numpy_float32_kept": lambda m: m.tensor(np.array([1.5], np.float32)),
}


@pytest.mark.parametrize("program", DEFAULT_DTYPE_PROGRAMS.values(), ids=DEFAULT_DTYPE_PROGRAMS.keys())
def test_float64_default_matches_pytorch(torch, restore_default_dtype, program):
    tl.set_default_dtype(tl.float64)
    torch.set_default_dtype(torch.float64)
    assert_like_torch(program(tl), program(torch), rtol=1e-12)


def test_float64_default_applies_to_factories_and_python_floats(restore_default_dtype):
    tl.set_default_dtype(tl.float64)
    assert tl.tensor([1.5]).dtype is tl.float64
    assert tl.rand(3).dtype is tl.float64
    assert tl.randn(3).dtype is tl.float64
    assert (tl.tensor([1, 2]) + 0.5).dtype is tl.float64
    assert tl.tensor([1]).dtype is tl.int64  # ints are not affected
    assert (tl.ones(2, dtype=tl.float32) * 0.5).dtype is tl.float32  # a Python float does not upcast a tensor


@pytest.mark.parametrize("name", ["bool", "uint8", "int32", "int64"])
def test_set_default_dtype_rejects_non_float(torch, restore_default_dtype, name):
    with pytest.raises(TypeError):
        torch.set_default_dtype(getattr(torch, name))
    with pytest.raises(TypeError, match="floating"):
        tl.set_default_dtype(getattr(tl, name))
    assert tl.get_default_dtype() is tl.float32


# ================================================================ promotion vs PyTorch

SCALAR_VALUES = {"bool": True, "int": 2, "float": 2.5}
TENSOR_TIERS = ("dim", "0d")
OPS = {"+": operator.add, "/": operator.truediv, "*": operator.mul, "<": operator.lt}


def operand(mod, tier: str, kind: str):
    """A Python scalar (tier 'scalar', kind bool/int/float), a 0-d tensor or a 2-element tensor of dtype `kind`."""
    if tier == "scalar":
        return SCALAR_VALUES[kind]
    return mod.tensor(1 if tier == "0d" else [1, 1], dtype=getattr(mod, kind))


def _cases():
    cases = []
    for ta in TENSOR_TIERS:
        for tb in TENSOR_TIERS:
            cases += [((ta, a), (tb, b)) for a in DTYPE_NAMES for b in DTYPE_NAMES]
    for t in TENSOR_TIERS:
        for d in DTYPE_NAMES:
            for s in SCALAR_VALUES:
                cases += [((t, d), ("scalar", s)), (("scalar", s), (t, d))]
    return cases


PROMOTION_CASES = _cases()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("a,b", PROMOTION_CASES, ids=[f"{a[0]}-{a[1]}|{b[0]}-{b[1]}" for a, b in PROMOTION_CASES])
def test_promotion_matches_pytorch(torch, op, a, b):
    fn = OPS[op]
    expected = fn(operand(torch, *a), operand(torch, *b))
    actual = fn(operand(tl, *a), operand(tl, *b))
    if op == "+":
        assert dtype_name(actual.dtype) == dtype_name(torch.result_type(operand(torch, *a), operand(torch, *b)))
    assert_like_torch(actual, expected, rtol=1e-3)


# Hand-derived rules (they run without PyTorch): (left, right, op, expected dtype)
HAND_RULES = [
    (("dim", "int64"), ("scalar", "float"), "+", "float32"),    # int tensor + Python float -> default float
    (("dim", "float16"), ("scalar", "float"), "+", "float16"),  # a Python float never upcasts a float tensor
    (("dim", "uint8"), ("scalar", "int"), "+", "uint8"),        # nor does a Python int an int tensor
    (("dim", "bool"), ("scalar", "int"), "+", "int64"),         # ... but it lifts a bool tensor to int64
    (("dim", "bool"), ("scalar", "bool"), "+", "bool"),
    (("dim", "int32"), ("dim", "int64"), "+", "int64"),         # two dimensioned tensors: the larger type
    (("dim", "uint8"), ("dim", "int32"), "+", "int32"),
    (("dim", "uint8"), ("dim", "int8"), "+", "int16"),          # neither holds the other's values
    (("dim", "uint8"), ("0d", "int8"), "+", "uint8"),           # ... but a 0-d int8 ranks below
    (("dim", "float16"), ("dim", "int64"), "+", "float16"),     # a float category beats any int
    (("dim", "int32"), ("0d", "int64"), "+", "int32"),          # a 0-d tensor ranks below a dimensioned one ...
    (("dim", "float16"), ("0d", "float64"), "+", "float16"),
    (("dim", "uint8"), ("0d", "float64"), "+", "float64"),      # ... unless its category is higher: then its dtype
    (("0d", "int32"), ("0d", "int64"), "+", "int64"),           # 0-d with 0-d: ordinary promotion
    (("0d", "int32"), ("scalar", "float"), "+", "float32"),
    (("dim", "int64"), ("dim", "int64"), "/", "float32"),       # true division of ints gives the default float
    (("dim", "bool"), ("dim", "bool"), "/", "float32"),
    (("dim", "float16"), ("scalar", "int"), "/", "float16"),
    (("dim", "uint8"), ("0d", "float64"), "/", "float64"),
]


@pytest.mark.parametrize("a,b,op,expected", HAND_RULES,
                         ids=[f"{a[1]}-{a[0]}{op}{b[1]}-{b[0]}" for a, b, op, _ in HAND_RULES])
def test_promotion_hand_rules(a, b, op, expected):
    assert OPS[op](operand(tl, *a), operand(tl, *b)).dtype is getattr(tl, expected)
    assert OPS[op](operand(tl, *b), operand(tl, *a)).dtype is getattr(tl, expected)  # symmetric


# ================================================================ int8 and int16 in ops

SMALL_INT_OPS = {
    "+ a number that wraps": lambda m, x: x + 200, "* itself (wraps)": lambda m, x: x * x, "neg": lambda m, x: -x,
    "abs": lambda m, x: x.abs(), "sum -> int64": lambda m, x: x.sum(), "cumsum -> int64": lambda m, x: x.cumsum(0),
    "prod": lambda m, x: x.prod(), "/ -> float": lambda m, x: x / 3, "//": lambda m, x: x // 3,
    "%": lambda m, x: x % 3, "**": lambda m, x: x ** 2, "argmax": lambda m, x: x.argmax(),
    "max": lambda m, x: x.max(), "==": lambda m, x: x == 3, "<<": lambda m, x: x << 2, "&": lambda m, x: x & 7,
    "float()": lambda m, x: x.float(), "clamp": lambda m, x: x.clamp(-5, 5), "sort": lambda m, x: x.sort().values,
    "+ uint8 -> int16": lambda m, x: x + m.tensor([1, 2, 3, 4, 5, 6], dtype=m.uint8),
    "sign": lambda m, x: x.sign(), "where": lambda m, x: m.where(x > 0, x, 0), "sub_": lambda m, x: x.clone().sub_(100),
    "mean refused": lambda m, x: x.mean(), "div_ refused": lambda m, x: x.clone().div_(2),
}


@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("op", SMALL_INT_OPS.values(), ids=SMALL_INT_OPS.keys())
def test_int8_and_int16_compute_like_pytorch(op, dtype, torch):
    """Values at the type's edges: overflow wraps (two's complement), reductions widen to int64, promotion
    with uint8 gives int16, and what PyTorch refuses for integers is refused here too."""
    low = np.iinfo(dtype).min
    values = np.array([low, 3, 127, 0, -1, 100], dtype=dtype)
    try:
        want = op(torch, torch.tensor(values))
    except RuntimeError:
        with pytest.raises(RuntimeError):
            op(tl, tl.tensor(values))
        return
    got = op(tl, tl.tensor(values))
    assert dtype_name(got.dtype) == dtype_name(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ================================================================ unsupported dtypes

UNSUPPORTED = ["complex64", "complex128", "uint16", "uint32", "uint64"]
FROM_ARRAY = {"tensor": tl.tensor, "as_tensor": tl.as_tensor, "from_numpy": tl.from_numpy}


@pytest.mark.parametrize("factory", FROM_ARRAY.values(), ids=FROM_ARRAY.keys())
@pytest.mark.parametrize("np_dtype", UNSUPPORTED)
def test_unsupported_numpy_dtype_is_a_type_error_naming_it(factory, np_dtype):
    with pytest.raises(TypeError, match=np_dtype):
        factory(np.zeros(3, dtype=np_dtype))


@pytest.mark.parametrize("np_dtype", ["complex64", "uint16", "uint64"])
def test_unsupported_dtype_argument_is_a_type_error_naming_it(np_dtype):
    with pytest.raises(TypeError, match=np_dtype):
        tl.zeros(2, dtype=np.dtype(np_dtype))


def test_python_complex_data_is_a_type_error():
    with pytest.raises(TypeError, match="complex"):
        tl.tensor([1 + 2j])


def test_unconvertible_numpy_dtype_type_matches_pytorch(torch):
    arr = np.array(["a", "b"])
    with pytest.raises(TypeError):
        torch.from_numpy(arr)
    for factory in FROM_ARRAY.values():
        with pytest.raises(TypeError, match="unsupported dtype"):
            factory(arr)
