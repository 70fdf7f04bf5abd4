"""Issue 16's silent wrong answers and unclear errors in the ops, each against PyTorch's answer
(hand-copied here, and checked against PyTorch itself when it is installed)."""
import re
import warnings

import numpy as np
import pytest

import tinygrad_lab as tl
import tinygrad_lab.nn.functional as F

try:
    import torch
except ImportError:  # the oracle is optional
    torch = None


def both(program):
    """program(tl), and program(torch) beside it when PyTorch is installed."""
    return [tl] + ([torch] if torch is not None else [])


# ---------------------------------------------------------------- integer division by zero

@pytest.mark.parametrize("program", [
    lambda m: m.tensor([3, 4]) // m.tensor([0, 1]),
    lambda m: m.tensor([3, 4]) // 0,
    lambda m: m.tensor([3, 4]) % 0,
    lambda m: m.tensor([3, 4]) % m.tensor([2, 0]),
    lambda m: 7 // m.tensor([2, 0]),
    lambda m: m.tensor([3, 4]).div(m.tensor([1, 0]), rounding_mode="trunc"),
    lambda m: m.tensor([3, 4], dtype=m.int32).remainder(m.tensor([0, 0], dtype=m.int32)),
], ids=["floordiv", "floordiv_scalar", "mod_scalar", "mod", "rfloordiv", "trunc", "int32_remainder"])
def test_integer_division_by_zero_raises(program):
    for m in both(program):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            program(m)


def test_division_without_zero_and_in_floats_is_unchanged():
    assert (tl.tensor([-7, 7]) // tl.tensor([2, 2])).tolist() == [-4, 3]
    assert (tl.tensor([-7, 7]) % tl.tensor([3, 3])).tolist() == [2, 1]
    assert (tl.tensor([-7, 7]).div(2, rounding_mode="trunc")).tolist() == [-3, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (tl.tensor([3.0, -3.0]) // 0).tolist()
    assert out == [float("inf"), float("-inf")]


# ---------------------------------------------------------------- cat

def test_cat_of_a_tensor_is_a_type_error():
    for m in both(None):
        with pytest.raises(TypeError, match=r"cat\(\): argument 'tensors' \(position 1\) must be tuple of Tensors"):
            m.cat(m.zeros(2, 3))
    with pytest.raises(TypeError, match=r"stack\(\): argument 'tensors'.*\[2, 3\]"):
        tl.stack(tl.zeros(2, 3))


def test_cat_of_0d_tensors_names_the_position():
    for m in both(None):
        with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 1\) cannot be concatenated"):
            m.cat([m.zeros(1), m.tensor(2.0)])
    assert tl.stack([tl.tensor(1.0), tl.tensor(2.0)]).tolist() == [1.0, 2.0]


# ---------------------------------------------------------------- extremes over nothing

@pytest.mark.parametrize("program, says", [
    (lambda m: m.zeros(0, 3).min(dim=0), r"min\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda m: m.zeros(0, 3).max(dim=0), r"max\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda m: m.zeros(3, 0).argmax(1), r"argmax\(\): Expected reduction dim 1 to have non-zero size"),
    (lambda m: m.zeros(0).argmax(), r"argmax\(\): Expected reduction dim to be specified for input.numel\(\) == 0"),
    (lambda m: m.zeros(0).argmin(), r"argmin\(\): Expected reduction dim to be specified for input.numel\(\) == 0"),
    (lambda m: m.zeros(0, 3).amax(0), r"amax\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda m: m.zeros(0, 3).amin((1, 0)), r"amin\(\): Expected reduction dim 0 to have non-zero size"),
], ids=["min_dim", "max_dim", "argmax_dim", "argmax_all", "argmin_all", "amax_dim", "amin_dims"])
def test_extremes_over_an_empty_dim_raise_index_error(program, says):
    for m in both(program):
        with pytest.raises(IndexError, match=says):
            program(m)


def test_extremes_along_a_non_empty_dim_of_an_empty_tensor_are_empty():
    values, indices = tl.zeros(0, 3).min(dim=1)
    assert values.shape == (0,) and indices.shape == (0,)
    assert tl.zeros(0, 3).argmax(1).shape == (0,)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        tl.zeros(0).max()


# ---------------------------------------------------------------- std and var

def test_std_of_constant_values_has_gradient_zero():
    x = tl.tensor([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], requires_grad=True)
    x.std(1).sum().backward()
    # hand-derived: d std / d x_i = (x_i - mean) / ((n - 1) std); row 2 is constant: 0, as PyTorch
    s = np.std([1.0, 2.0, 4.0], ddof=1)
    expected = [[(v - 7 / 3) / (2 * s) for v in (1.0, 2.0, 4.0)], [0.0, 0.0, 0.0]]
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-7)
    c = tl.full((4,), 2.5, dtype=tl.float64, requires_grad=True)
    c.std().backward()
    assert c.grad.tolist() == [0.0] * 4


def test_std_of_one_element_warns_and_is_nan():
    with pytest.warns(UserWarning, match=r"std\(\): degrees of freedom is <= 0.*shape \[1\]"):
        out = tl.tensor([1.0]).std()
    assert np.isnan(out.item())
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        tl.zeros(3, 1).var(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl.zeros(3, 2).var(1)


def test_float16_var_and_std_accumulate_in_float32():
    rng = np.random.default_rng(0)
    for n in (4096, 100_000):
        a = rng.normal(0.0, 5.0, n).astype(np.float16)
        exact = np.var(a.astype(np.float64), ddof=1)
        out = tl.from_numpy(a).var()
        assert out.dtype == tl.float16
        assert abs(out.item() - exact) / exact < 2e-3, (n, out.item(), exact)
        assert abs(tl.from_numpy(a).std().item() - np.sqrt(exact)) / np.sqrt(exact) < 2e-3
    x = tl.tensor([1.0, 2.0, 4.0], dtype=tl.float16, requires_grad=True)
    x.var().backward()
    assert x.grad.dtype == tl.float16
    np.testing.assert_allclose(x.grad.numpy(), [(v - 7 / 3) for v in (1.0, 2.0, 4.0)], rtol=2e-3)


# ---------------------------------------------------------------- non-tensor arguments

@pytest.mark.parametrize("program, says", [
    (lambda: tl.nn.Linear(3, 2)(np.zeros((1, 3))), r"linear\(\): argument 'input' \(position 1\) must be Tensor, "
                                                   r"not numpy.ndarray"),
    (lambda: tl.nn.Linear(3, 2)([[0.0, 0.0, 0.0]]), r"linear\(\): argument 'input' .* not list"),
    (lambda: F.mse_loss(tl.zeros(2), np.zeros(2)), r"mse_loss\(\): argument 'target' \(position 2\)"),
    (lambda: F.relu([1.0]), r"relu\(\): argument 'input' .* not list"),
    (lambda: tl.matmul(tl.zeros(2, 2), np.eye(2)), r"matmul\(\): argument 'b' \(position 2\)"),
    (lambda: tl.sum(np.zeros(3)), r"sum\(\): argument 'x' .* not numpy.ndarray"),
    (lambda: F.conv2d(np.zeros((1, 1, 3, 3)), tl.zeros(1, 1, 2, 2)), r"conv2d\(\): argument 'input'"),
    (lambda: F.cross_entropy(tl.zeros(2, 3), [0, 1]), r"cross_entropy\(\): argument 'target' \(position 2\)"),
    (lambda: tl.cat([tl.zeros(2), np.zeros(2)]), r"cat\(\): expected Tensor as element 1"),
], ids=["linear_ndarray", "linear_list", "mse_target", "relu_list", "matmul", "sum", "conv2d", "cross_entropy", "cat"])
def test_a_non_tensor_argument_is_a_type_error_naming_it(program, says):
    with pytest.raises(TypeError, match=says):
        program()


def test_a_tensor_argument_check_leaves_other_errors_alone():
    with pytest.raises(RuntimeError, match=re.escape("mat1 and mat2 shapes cannot be multiplied (1x4 and 3x2)")):
        tl.nn.Linear(3, 2)(tl.zeros(1, 4))
    assert F.linear(tl.ones(1, 2), tl.ones(3, 2), None).tolist() == [[2.0, 2.0, 2.0]]


# ---------------------------------------------------------------- read-only memory

def test_writing_through_from_numpy_of_a_read_only_array_says_read_only():
    a = np.zeros(3)
    a.flags.writeable = False
    t = tl.from_numpy(a)
    for write, op in ((lambda: t.add_(1), "add_"), (lambda: t.__setitem__(0, 1.0), "__setitem__")):
        with pytest.raises(RuntimeError, match=rf"memory is read-only, in {op}\..*from_numpy.*clone\(\)"):
            write()
    assert a.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        tl.zeros(1).expand(3).add_(1)  # an expanded view keeps PyTorch's words


# ---------------------------------------------------------------- prod when out / x is wrong

def _prod_grads(values):
    x = tl.tensor(values, dtype=tl.float64, requires_grad=True)
    with np.errstate(over="ignore"):
        (g,) = tl.autograd.grad(x.prod(), [x], create_graph=True)
        (gg,) = tl.autograd.grad(g.sum(), [x])
    return g.detach().tolist(), gg.tolist()


def test_prod_gradients_when_the_product_underflows_or_overflows():
    # hand-derived: g_k = prod_{j != k} x_j; d(sum g)/dx_k = sum_{i != k} prod_{j != i, k} x_j.
    # PyTorch divides its underflowed product (0) by x: 0 for all of these, and inf where it overflows.
    g, gg = _prod_grads([1e-200, 1e-200, 2.0])
    assert g == [2e-200, 2e-200, 0.0]             # 1e-400 is below float64's range
    assert gg == [2.0 + 1e-200, 2.0 + 1e-200, 2e-200]
    g, _ = _prod_grads([1e200, 1e200, 1e-200])   # the product, 1e200, is fine; out overflowed to inf
    assert g == [1.0, 1.0, float("inf")]
    g, gg = _prod_grads([1.5, -2.0, 3.0])          # the fast path (out / x) is unchanged
    np.testing.assert_allclose(g, [-6.0, 4.5, -3.0])
    np.testing.assert_allclose(gg, [1.0, 4.5, -0.5])


def test_float16_batch_norm_in_training_accumulates_in_float32():
    rng = np.random.default_rng(0)
    a = rng.normal(3.0, 5.0, (4096, 3)).astype(np.float16)  # its float16 sums overflow at 65504
    running_mean, running_var = tl.zeros(3, dtype=tl.float16), tl.ones(3, dtype=tl.float16)
    x = tl.from_numpy(a).requires_grad_()
    out = F.batch_norm(x, running_mean, running_var, training=True)
    wide = a.astype(np.float64)
    expected = (wide - wide.mean(0)) / np.sqrt(wide.var(0) + 1e-5)
    assert out.dtype == tl.float16
    np.testing.assert_allclose(out.detach().numpy().astype(np.float64), expected, atol=4e-3)
    np.testing.assert_allclose(running_mean.numpy(), 0.1 * wide.mean(0), rtol=2e-3)
    np.testing.assert_allclose(running_var.numpy(), 0.9 + 0.1 * wide.var(0, ddof=1), rtol=2e-3)
    out.float().pow(2).sum().backward()
    assert x.grad.dtype == tl.float16 and np.isfinite(x.grad.numpy()).all()
