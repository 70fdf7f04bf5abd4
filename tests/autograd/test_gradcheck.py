"""gradcheck / gradgradcheck: they pass on correct Functions and catch wrong ones."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import GradcheckError, gradcheck, gradgradcheck

from ._helpers import CubeConstBackward, LinearFunction, MyExp, SinCos, WrongSquare, leaf, to_np

X = [0.5, -1.2, 2.0]


def _matrix_after(label: str, message: str) -> np.ndarray:
    """Parse the matrix printed after 'label:' in a GradcheckError message."""
    m = re.search(label + r":\s*\n(\[\[.*?\]\])", message, re.S)
    assert m, f"no {label} matrix in:\n{message}"
    rows = re.findall(r"\[([^\[\]]*)\]", m.group(1))
    return np.array([[float(v) for v in row.split()] for row in rows])


# ---------------------------------------------------------------- gradcheck passes on correct functions

@pytest.mark.parametrize("fn, n_inputs", [
    (lambda x: (x * x).sin(), 1),
    (lambda x, y: (x * y + y.exp()) / (x * x + 1.0), 2),
    (lambda x, y: (x.reshape(3, 1) @ y.reshape(1, 3)).tanh().sum(0), 2),
    (MyExp.apply, 1),
    (SinCos.apply, 1),
    (lambda x: x[1:] * x[:2], 1),
], ids=["sin_square", "rational", "outer_tanh", "custom_exp", "custom_two_outputs", "slices"])
def test_gradcheck_passes_on_correct_functions(fn, n_inputs):
    rng = np.random.default_rng(5)
    inputs = [leaf(rng.standard_normal(3)) for _ in range(n_inputs)]
    assert gradcheck(fn, inputs) is True


def test_gradcheck_with_non_tensor_and_no_grad_inputs():
    rng = np.random.default_rng(6)
    x, w, b = leaf(rng.standard_normal((2, 3))), leaf(rng.standard_normal((4, 3))), leaf(rng.standard_normal(4))
    assert gradcheck(LinearFunction.apply, (x, w, b))
    const = leaf(rng.standard_normal((2, 3)), requires_grad=False)
    assert gradcheck(lambda a, k, c: a * k + c, (x, 3.0, const))


def test_gradcheck_accepts_a_single_tensor():
    assert gradcheck(lambda t: t.exp(), leaf(X))


# ---------------------------------------------------------------- gradcheck catches wrong ones

def test_gradcheck_raises_on_wrong_backward_and_shows_both_jacobians():
    x = leaf([1.0, 2.0])
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongSquare.apply, (x,))
    msg = str(info.value)
    numerical, analytical = _matrix_after("numerical", msg), _matrix_after("analytical", msg)
    np.testing.assert_allclose(numerical, [[2.0, 0.0], [0.0, 4.0]], atol=1e-4)  # d(x^2)/dx = 2x
    np.testing.assert_allclose(analytical, [[1.0, 0.0], [0.0, 2.0]], atol=1e-4)  # the wrong backward's x


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)
    with pytest.raises(RuntimeError):
        gradcheck(WrongSquare.apply, (leaf(X),))


def test_gradcheck_raise_exception_false_returns_false():
    assert gradcheck(WrongSquare.apply, (leaf(X),), raise_exception=False) is False
    assert gradcheck(MyExp.apply, (leaf(X),), raise_exception=False) is True


def test_gradcheck_names_the_wrong_input():
    def fn(a, b):
        return WrongSquare.apply(a) + b * 2.0

    with pytest.raises(GradcheckError, match="input 0"):
        gradcheck(fn, (leaf(X), leaf(X)))
    with pytest.raises(GradcheckError, match="input 1"):
        gradcheck(lambda a, b: a * 2.0 + WrongSquare.apply(b), (leaf(X), leaf(X)))


def test_gradcheck_catches_a_wrong_second_output():
    class HalfWrong(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2.0, x * x

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return g1 * 2.0 + g2 * x  # the second term should be 2x

    assert gradcheck(HalfWrong.apply, (leaf(X),), raise_exception=False) is False


class ColumnGrad(tl.autograd.Function):
    """Computes on arrays, as the built-in ops do, so the engine trusts its gradient's shape;
    its gradient has the right values in a column (n, 1) instead of a vector (n,)."""

    array_forward = True

    @staticmethod
    def forward(ctx, x):
        return x._data * 2.0

    @staticmethod
    def backward(ctx, g):
        return (g * 2.0).reshape(-1, 1)


def test_gradcheck_catches_a_gradient_of_the_wrong_shape():
    # the values alone would pass: a flattened (3, 1) column is the right Jacobian row
    with pytest.raises(GradcheckError, match=r"gradient of differentiable input 0 has shape \[3, 1\], "
                                             r"but the input has shape \[3\]"):
        gradcheck(ColumnGrad.apply, (leaf(X),))
    assert gradcheck(ColumnGrad.apply, (leaf(X),), raise_exception=False) is False


def test_gradcheck_leaves_inputs_unchanged():
    x = leaf(X)
    before = to_np(x)
    gradcheck(lambda t: t.sin() * t, (x,))
    assert np.array_equal(to_np(x), before)
    assert x.grad is None


def test_gradcheck_warns_on_float32():
    x = leaf(X, dtype=np.float32)
    with pytest.warns(UserWarning, match="float64|double"):
        assert gradcheck(lambda t: t * 2.0, (x,), eps=1e-2, atol=1e-3, rtol=1e-3)


# ---------------------------------------------------------------- gradgradcheck

@pytest.mark.parametrize("fn", [lambda x: x.sin() * x, lambda x: (x * x * x).sum(), MyExp.apply,
                                lambda x: x.tanh().exp()], ids=["sin_x", "cube_sum", "custom_exp", "tanh_exp"])
def test_gradgradcheck_passes_on_correct_functions(fn):
    assert gradgradcheck(fn, (leaf(X),)) is True


def test_gradgradcheck_with_two_inputs_and_grad_outputs():
    x, y = leaf(X), leaf([0.3, 0.7, -0.1])
    go = leaf([1.0, -2.0, 0.5])
    assert gradgradcheck(lambda a, b: a * a * b + b.exp(), (x, y), (go,)) is True


def test_gradgradcheck_catches_wrong_second_derivative():
    x = leaf(X)
    assert gradcheck(CubeConstBackward.apply, (x,)) is True  # first order is right
    with pytest.raises(GradcheckError):
        gradgradcheck(CubeConstBackward.apply, (x,))
    assert gradgradcheck(CubeConstBackward.apply, (x,), raise_exception=False) is False
