"""Elementwise semantics the op table does not cover: dtype promotion, integer and
floor division, comparisons, zero-gradient ops, gradients at kinks and ties, errors.
Checked against PyTorch (skipped without it) or hand-derived values."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

from .op_table import TL, check_against_torch, error_of, torch_lib, value_and_grads

# ---------------------------------------------------------------- dtype promotion

PROMOTION = {
    "int64 + float scalar -> default float": lambda m: m.tensor([1, 2]) + 2.5,
    "int32 + float scalar": lambda m: m.tensor([1, 2], dtype=m.int32) + 2.5,
    "float scalar - int64": lambda m: 2.5 - m.tensor([1, 2]),
    "float16 * float scalar stays float16": lambda m: m.tensor([1.5, -2.0], dtype=m.float16) * 2.5,
    "float16 * int scalar": lambda m: m.tensor([1.5, -2.0], dtype=m.float16) * 3,
    "int32 + int64 tensor -> int64": lambda m: m.tensor([1, 2], dtype=m.int32) + m.tensor([3, 4]),
    "int32 * int scalar stays int32": lambda m: m.tensor([1, 2], dtype=m.int32) * 7,
    "int32 * True stays int32": lambda m: m.tensor([1, 2], dtype=m.int32) * True,
    "uint8 + int scalar stays uint8 (wraps)": lambda m: m.tensor([250, 3], dtype=m.uint8) + 10,
    "0-d float64 + float32 tensor -> float32": lambda m: m.tensor(2.5, dtype=m.float64) + m.tensor([1.0, 2.0]),
    "0-d float32 + int64 tensor -> float32": lambda m: m.tensor(2.5) + m.tensor([1, 2]),
    "0-d int64 + int32 tensor -> int32": lambda m: m.tensor(5) + m.tensor([1, 2], dtype=m.int32),
    "float16 tensor + 0-d float32 -> float16": lambda m: m.tensor([1.0], dtype=m.float16) + m.tensor(2.0),
    "float32 + float64 tensors -> float64": lambda m: m.tensor([1.0]) + m.tensor([2.0], dtype=m.float64),
    "two 0-d: float32 + float64 -> float64": lambda m: m.tensor(1.0) + m.tensor(2.0, dtype=m.float64),
    "bool + bool stays bool": lambda m: m.tensor([True, True, False]) + m.tensor([True, False, False]),
    "bool * bool stays bool": lambda m: m.tensor([True, True, False]) * m.tensor([True, False, False]),
    "bool + int scalar -> int64": lambda m: m.tensor([True, False]) + 1,
    "bool + float scalar -> float32": lambda m: m.tensor([True, False]) + 0.5,
    "int / int -> float32": lambda m: m.tensor([1, 2, -7]) / m.tensor([2, 3, 2]),
    "int / int scalar -> float32": lambda m: m.tensor([1, 2, -7]) / 2,
    "int scalar / int -> float32": lambda m: 3 / m.tensor([1, 2, -4]),
    "int32 / int32 -> float32": lambda m: m.tensor([1, 2], dtype=m.int32) / m.tensor([4, 8], dtype=m.int32),
    "int ** int scalar stays int64": lambda m: m.tensor([1, 2, 3]) ** 2,
    "int ** float scalar -> float32": lambda m: m.tensor([1, 4, 9]) ** 0.5,
    "float scalar ** int tensor -> float32": lambda m: 2.0 ** m.tensor([1, 2, 3]),
    "int - float16 tensor -> float16": lambda m: m.tensor([1, 2]) - m.tensor([0.5, 0.25], dtype=m.float16),
    "maximum(int32, float16) -> float16": lambda m: m.maximum(m.tensor([1, 5], dtype=m.int32),
                                                               m.tensor([2.5, 0.5], dtype=m.float16)),
    "where(cond, int64, float32) -> float32": lambda m: m.where(m.tensor([True, False]), m.tensor([1, 2]),
                                                                 m.tensor([0.5, 0.25])),
    "where(cond, int scalar, float scalar) -> float32": lambda m: m.where(m.tensor([True, False]), 1, 0.5),
    "where(cond, float64 tensor, float scalar) stays float64": lambda m: m.where(
        m.tensor([True, False]), m.tensor([1.0, 2.0], dtype=m.float64), 0.5),
}


@pytest.mark.parametrize("case", PROMOTION.values(), ids=PROMOTION.keys())
def test_result_dtype_and_values_match_pytorch(case, torch):
    check_against_torch(case, rtol=1e-6, atol=0)


def test_promotion_by_hand():
    """The same rules without PyTorch, for the cases students meet first."""
    assert (tl.tensor([1, 2]) + 2.5).dtype is tl.float32
    assert (tl.tensor([1.0], dtype=tl.float16) * 2.5).dtype is tl.float16
    assert (tl.tensor([1, 2], dtype=tl.int32) + tl.tensor([3, 4])).dtype is tl.int64
    assert (tl.tensor(2.5, dtype=tl.float64) + tl.tensor([1.0, 2.0])).dtype is tl.float32
    assert (tl.tensor([1, 3]) / tl.tensor([2, 2])).tolist() == [0.5, 1.5]
    both = tl.tensor([True, True, False]) + tl.tensor([True, False, False])
    assert both.dtype is tl.bool and both.tolist() == [True, True, False]


# ---------------------------------------------------------------- floor division, remainder, rounding modes

_INT_A = [-7, -6, -1, 0, 1, 5, 7, 8]
_INT_B = [2, -2, 3, -3, 4, -4, 5, -8]
_FLOAT_A = [-7.5, -3.0, -0.5, 0.0, 2.5, 7.25, 1.0, -4.0]
_FLOAT_B = [2.0, -2.0, 0.75, -1.5, -2.5, 3.0, -0.3, 4.0]

DIVISION = {
    "int // int": lambda m: m.tensor(_INT_A) // m.tensor(_INT_B),
    "int % int": lambda m: m.tensor(_INT_A) % m.tensor(_INT_B),
    "int // 3": lambda m: m.tensor(_INT_A) // 3,
    "int % 3": lambda m: m.tensor(_INT_A) % 3,
    "int // -3": lambda m: m.tensor(_INT_A) // -3,
    "int % -3": lambda m: m.tensor(_INT_A) % -3,
    "7 // int": lambda m: 7 // m.tensor(_INT_B),
    "-7 % int": lambda m: -7 % m.tensor(_INT_B),
    "int32 // int32 stays int32": lambda m: m.tensor(_INT_A, dtype=m.int32) // m.tensor(_INT_B, dtype=m.int32),
    "int // 2.5 -> float32": lambda m: m.tensor(_INT_A) // 2.5,
    "int % 2.5 -> float32": lambda m: m.tensor(_INT_A) % 2.5,
    "float // float": lambda m: m.tensor(_FLOAT_A) // m.tensor(_FLOAT_B),
    "float % float": lambda m: m.tensor(_FLOAT_A) % m.tensor(_FLOAT_B),
    "float // -2": lambda m: m.tensor(_FLOAT_A) // -2,
    "float % -2": lambda m: m.tensor(_FLOAT_A) % -2,
    "float64 % 0.75": lambda m: m.tensor(_FLOAT_A, dtype=m.float64) % 0.75,
    "5.5 // float": lambda m: 5.5 // m.tensor(_FLOAT_B),
    "div int trunc": lambda m: m.div(m.tensor(_INT_A), m.tensor(_INT_B), rounding_mode="trunc"),
    "div int floor": lambda m: m.div(m.tensor(_INT_A), m.tensor(_INT_B), rounding_mode="floor"),
    "div float trunc": lambda m: m.div(m.tensor(_FLOAT_A), m.tensor(_FLOAT_B), rounding_mode="trunc"),
    "div int trunc by scalar": lambda m: m.div(m.tensor(_INT_A), -3, rounding_mode="trunc"),
    "remainder function": lambda m: m.remainder(m.tensor(_INT_A), m.tensor(_INT_B)),
}


@pytest.mark.parametrize("case", DIVISION.values(), ids=DIVISION.keys())
def test_floor_division_and_remainder_match_pytorch(case, torch):
    check_against_torch(case, rtol=1e-6, atol=1e-6)


def test_floor_division_by_hand():
    """Python's rules: // rounds toward -inf, % takes the divisor's sign."""
    a, b = tl.tensor([-7, 7, -7, 7]), tl.tensor([2, -2, -2, 2])
    assert (a // b).tolist() == [-4, -4, 3, 3]
    assert (a % b).tolist() == [1, -1, -1, 1]
    assert (a // b).dtype is tl.int64
    assert tl.div(a, b, rounding_mode="trunc").tolist() == [-3, -3, 3, 3]


def test_remainder_gradient_matches_pytorch(torch):
    """d(a % b)/da = 1, d(a % b)/db = -floor(a / b), away from the jumps."""
    a, b = [-7.5, -3.2, 0.4, 2.5, 7.25], [2.0, -2.0, 0.75, -1.5, 3.0]
    check_against_torch(lambda m: value_and_grads(m, lambda m, x, y: x % y, a, b))


# ---------------------------------------------------------------- comparisons and logic

COMPARISONS = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "< scalar": lambda a, b: a < 0.5,
    "scalar < (reflected)": lambda a, b: 0.5 < a,
    "== int scalar": lambda a, b: a == 1,
    "eq": lambda a, b: a.eq(b),
    "ge": lambda a, b: a.ge(b),
    "maximum(a, b) == a": lambda a, b: a.maximum(b) == a,
}


@pytest.mark.parametrize("op", COMPARISONS.values(), ids=COMPARISONS.keys())
def test_comparisons_return_bool_without_grad_fn(op, torch):
    a_data, b_data = [[1.0, 0.5, -2.0], [3.0, 1.0, 0.0]], [0.5, 1.0, -2.0]

    def run(m):
        a = m.tensor(a_data, requires_grad=True)
        out = op(a, m.tensor(b_data))
        assert out.grad_fn is None
        assert not out.requires_grad
        return out

    out = check_against_torch(run)
    assert out.dtype is tl.bool


LOGIC = {
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "~": lambda a, b: ~a,
    "logical_and": lambda a, b: a.logical_and(b),
    "logical_or of comparisons": lambda a, b: (a.float() > 0.5) | b,
}


@pytest.mark.parametrize("op", LOGIC.values(), ids=LOGIC.keys())
def test_logical_ops_match_pytorch(op, torch):
    check_against_torch(lambda m: op(m.tensor([True, True, False, False]), m.tensor([True, False, True, False])))


# ---------------------------------------------------------------- piecewise-constant ops: zero gradients

_ROUNDING_VALUES = [-2.5, -1.5, -0.7, -0.5, 0.0, 0.3, 0.5, 1.5, 2.5, 3.7]
ZERO_GRAD = {
    "sign": lambda m, x: x.sign(),
    "floor": lambda m, x: x.floor(),
    "ceil": lambda m, x: x.ceil(),
    "round (half to even)": lambda m, x: x.round(),
    "trunc": lambda m, x: x.trunc(),
}


@pytest.mark.parametrize("op", ZERO_GRAD.values(), ids=ZERO_GRAD.keys())
def test_piecewise_constant_ops_have_zero_gradient(op):
    x = tl.tensor(_ROUNDING_VALUES, dtype=tl.float64, requires_grad=True)
    y = op(TL, x)
    assert y.grad_fn is not None  # part of the graph, like PyTorch: the gradient is zero, not missing
    (y * tl.tensor(np.arange(1.0, 11.0))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(10))


@pytest.mark.parametrize("op", ZERO_GRAD.values(), ids=ZERO_GRAD.keys())
def test_piecewise_constant_ops_match_pytorch(op, torch):
    check_against_torch(lambda m: value_and_grads(m, op, _ROUNDING_VALUES), rtol=0, atol=0)


def test_round_is_half_to_even():
    assert tl.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]).round().tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0]


# ---------------------------------------------------------------- gradients at kinks and ties (PyTorch's conventions)

KINKS = {
    "relu at 0 -> 0": (lambda m, x: x.relu(), [[-1.0, 0.0, 2.0]]),
    "abs at 0 -> 0": (lambda m, x: x.abs(), [[-1.0, 0.0, 2.0]]),
    "clamp at both bounds -> 1": (lambda m, x: x.clamp(-1.0, 1.0), [[-2.0, -1.0, 0.0, 1.0, 2.0]]),
    "clamp(min) at the bound": (lambda m, x: x.clamp(min=0.0), [[-1.0, 0.0, 1.0]]),
    "maximum tie splits evenly": (lambda m, x, y: m.maximum(x, y), [[1.0, 2.0, 3.0], [1.0, 5.0, 3.0]]),
    "minimum tie splits evenly": (lambda m, x, y: m.minimum(x, y), [[1.0, 2.0, 3.0], [1.0, 5.0, 0.0]]),
    "maximum broadcast tie": (lambda m, x, y: m.maximum(x, y), [[[2.0], [1.0]], [1.0, 2.0, 3.0]]),
    "clamp(min=tensor) tie": (lambda m, x, y: x.clamp(min=y), [[1.0, 2.0, 3.0], [1.0, 5.0, 0.0]]),
    "pow: zero base, zero exponent": (lambda m, x, y: x ** y, [[0.0, 0.0, 0.0, 2.0], [0.0, 2.0, 0.5, 0.0]]),
    "pow: zero base ** scalar": (lambda m, x: x ** 2.0, [[0.0, -1.0, 3.0]]),
    "pow: scalar ** tensor at 0": (lambda m, x: 0.0 ** x, [[0.0, 1.0, 2.0]]),
    "pow: ** 0": (lambda m, x: x ** 0, [[0.0, -1.0, 3.0]]),
    "sqrt at 0 -> inf": (lambda m, x: x.sqrt(), [[0.0, 4.0]]),
    "where picks a side": (lambda m, x, y: m.where(x > y, x, y), [[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]),
}


@pytest.mark.parametrize("fn, arrays", KINKS.values(), ids=KINKS.keys())
def test_gradients_at_kinks_match_pytorch(fn, arrays, torch):
    check_against_torch(lambda m: value_and_grads(m, fn, *arrays))


def test_maximum_tie_gradient_by_hand():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = tl.tensor([1.0, 0.0], requires_grad=True)
    tl.maximum(x, y).sum().backward()
    assert x.grad.tolist() == [0.5, 1.0]
    assert y.grad.tolist() == [0.5, 0.0]


def test_relu_and_abs_gradient_at_zero_by_hand():
    x = tl.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    (x.relu() + x.abs()).sum().backward()
    assert x.grad.tolist() == [-1.0, 0.0, 2.0]


# ---------------------------------------------------------------- unary math on other dtypes

UNARY_DTYPES = {
    "exp(int64) -> float32": lambda m: m.tensor([0, 1, 2]).exp(),
    "sqrt(int32) -> float32": lambda m: m.tensor([1, 4, 9], dtype=m.int32).sqrt(),
    "log(bool) -> float32": lambda m: m.tensor([True, True]).log(),
    "sin(int64) -> float32": lambda m: m.tensor([0, 1, 2]).sin(),
    "sigmoid(int64) -> float32": lambda m: m.tensor([-1, 0, 1]).sigmoid(),
    "tanh(float16) stays float16": lambda m: m.tensor([-1.0, 0.5], dtype=m.float16).tanh(),
    "exp(float16) stays float16": lambda m: m.tensor([-1.0, 0.5], dtype=m.float16).exp(),
    "neg(int32) stays int32": lambda m: -m.tensor([1, -2], dtype=m.int32),
    "abs(int64) stays int64": lambda m: m.tensor([1, -2]).abs(),
    "relu(int64) stays int64": lambda m: m.tensor([1, -2]).relu(),
    "clamp(int64, float bound) -> float32": lambda m: m.tensor([1, 2, 3]).clamp(min=1.5),
    "clamp(int64, int bounds) stays int64": lambda m: m.tensor([1, 2, 3]).clamp(2, 2),
    "floor(int64) stays int64": lambda m: m.tensor([1, -2]).floor(),
    "sigmoid does not overflow": lambda m: m.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0]).sigmoid(),
    "sigmoid float64 extremes": lambda m: m.tensor([-800.0, 800.0], dtype=m.float64).sigmoid(),
}


@pytest.mark.parametrize("case", UNARY_DTYPES.values(), ids=UNARY_DTYPES.keys())
def test_unary_dtypes_and_values_match_pytorch(case, torch):
    check_against_torch(case, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- errors

def test_broadcast_error_names_sizes_like_pytorch(torch):
    fn = lambda m: m.ones(2, 3) + m.ones(4)  # noqa: E731
    ref = error_of(lambda: fn(torch_lib()))
    with pytest.raises(type(ref), match=r"size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                        r"non-singleton dimension 1"):
        fn(TL)


def test_where_rejects_non_bool_condition_like_pytorch(torch):
    fn = lambda m: m.where(m.tensor([1.0, 0.0]), m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0]))  # noqa: E731
    ref = error_of(lambda: fn(torch_lib()))
    assert ref is not None
    with pytest.raises(type(ref), match="bool"):
        fn(TL)


def test_clamp_without_bounds_raises_like_pytorch(torch):
    ref = error_of(lambda: torch.ones(2).clamp())
    with pytest.raises(type(ref)):
        tl.ones(2).clamp()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_masked_backward_on_large_arrays_is_where_bit_for_bit(dtype):
    """Large masked backwards (relu, clamp, where) take a branch-free path: it must give exactly
    np.where's bits, with infinities, NaNs and negative zeros in the gradient, on both sides."""
    from tinygrad_lab.backends.cpu import _BRANCHY  # the CPU backend's masked (was ops.elementwise)
    rng = np.random.default_rng(3)
    n = 2 * _BRANCHY + 1
    x = rng.standard_normal(n).astype(dtype)
    g = rng.standard_normal(n).astype(dtype)
    g[:8] = [np.inf, -np.inf, np.nan, -0.0, np.inf, -np.inf, np.nan, -0.0]
    x[:8] = [1, 1, 1, 1, -1, -1, -1, -1]
    t = tl.tensor(x, requires_grad=True)
    t.relu().backward(tl.tensor(g))
    expected = np.where(x > 0, g, dtype(0))
    np.testing.assert_array_equal(t.grad.numpy().view(np.uint8), expected.view(np.uint8))
    t.grad = None
    t.clamp(-0.5, 0.5).backward(tl.tensor(g))
    expected = np.where((x >= -0.5) & (x <= 0.5), g, dtype(0))
    np.testing.assert_array_equal(t.grad.numpy().view(np.uint8), expected.view(np.uint8))


def test_isclose_allclose_equal_match_torch(torch):
    a = [1.0, 2.0, float("nan"), float("inf"), -float("inf"), 1e-9, 100.0]
    b = [1.0 + 1e-6, 2.1, float("nan"), float("inf"), float("inf"), 0.0, 100.001]
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.1}, {"atol": 1e-3, "rtol": 0.0}):
        got = tl.isclose(tl.tensor(a), tl.tensor(b), **kw)
        want = torch.isclose(torch.tensor(a), torch.tensor(b), **kw)
        assert got.dtype is tl.bool and got.tolist() == want.tolist(), kw
        assert tl.allclose(tl.tensor(a[:2]), tl.tensor(b[:2]), **kw) == torch.allclose(
            torch.tensor(a[:2]), torch.tensor(b[:2]), **kw)
    x = tl.tensor([[1, 2], [3, 4]])
    assert x.equal(tl.tensor([[1, 2], [3, 4]])) and not tl.equal(x, tl.tensor([1, 2, 3, 4]))
    assert not tl.equal(x, tl.tensor([[1, 2], [3, 5]]))
    with pytest.raises(RuntimeError, match="same dtype"):
        tl.isclose(tl.tensor([1.0]), tl.tensor([1.0], dtype=tl.float64))
    assert tl.tensor([1.0]).isclose(tl.tensor([1.0 + 1e-9])).tolist() == [True]


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round"])
def test_rounding_an_integer_tensor_gives_a_copy(name):
    """Nothing to round, but a new tensor, as PyTorch's: writing into it leaves x as it was."""
    x = tl.tensor([1, -2, 3])
    out = getattr(tl, name)(x)
    out.add_(10)
    assert x.tolist() == [1, -2, 3] and out.tolist() == [11, 8, 13]


def test_the_sign_of_a_bool_tensor_is_itself(torch):
    x = [True, False, True]
    assert tl.sign(tl.tensor(x)).tolist() == torch.sign(torch.tensor(x)).tolist() == x
