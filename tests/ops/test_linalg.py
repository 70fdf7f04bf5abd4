"""matmul semantics the op table does not cover: result shapes and dtypes, the errors for
mismatched shapes (naming both) and dtypes, and the gradient's dtype. Checked against
PyTorch (skipped without it) or by hand."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tinygrad_lab as tl

from .op_table import TL, check_against_torch, error_of, torch_lib, value_and_grads

# ---------------------------------------------------------------- shapes and dtypes

def _arange(m, *shape, dtype=None):
    n = int(np.prod(shape))
    return (m.arange(n, dtype=dtype) - n // 2).reshape(shape)


MATMUL = {
    "1-d @ 1-d -> 0-d": ((3,), (3,)),
    "2-d @ 1-d": ((2, 3), (3,)),
    "1-d @ 2-d": ((3,), (3, 4)),
    "2-d @ 2-d": ((2, 3), (3, 4)),
    "3-d @ 2-d": ((5, 2, 3), (3, 4)),
    "2-d @ 3-d": ((2, 3), (5, 3, 4)),
    "1-d @ 3-d": ((3,), (5, 3, 4)),
    "3-d @ 1-d": ((5, 2, 3), (3,)),
    "broadcast batch (2, 1) x (3,)": ((2, 1, 2, 3), (3, 3, 4)),
    "empty inner dim": ((2, 0), (0, 3)),
    "empty batch": ((0, 2, 3), (3, 4)),
}


@pytest.mark.parametrize("shapes", MATMUL.values(), ids=MATMUL.keys())
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matmul_shapes_and_dtypes_match_pytorch(shapes, dtype, torch):
    sa, sb = shapes
    check_against_torch(lambda m: _arange(m, *sa, dtype=getattr(m, dtype)) @ _arange(m, *sb, dtype=getattr(m, dtype)),
                        rtol=1e-6, atol=0)


def test_matmul_by_hand():
    a = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert (a @ tl.tensor([1.0, 1.0])).tolist() == [3.0, 7.0]
    assert (tl.tensor([1.0, 1.0]) @ a).tolist() == [4.0, 6.0]
    assert (tl.tensor([1.0, 2.0]) @ tl.tensor([3.0, 4.0])).shape == ()
    assert tl.matmul(a, a).tolist() == [[7.0, 10.0], [15.0, 22.0]]


def test_matmul_float32_gradients_stay_float32(torch):
    def run(m):
        a = m.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=m.float32, requires_grad=True)
        b = m.tensor(np.linspace(0, 2, 12).reshape(3, 4), dtype=m.float32, requires_grad=True)
        (a @ b).sum().backward()
        return a.grad, b.grad

    check_against_torch(run, rtol=1e-6, atol=1e-6)


def test_matmul_gradient_with_broadcast_batch_matches_pytorch(torch):
    """b is shared by every batch: its gradient sums over the batch dims."""
    rng = np.random.default_rng(0)
    a, b, w = rng.standard_normal((2, 1, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal((2, 3, 2, 4))
    check_against_torch(lambda m: value_and_grads(m, lambda m, x, y: x @ y, a, b, weights=w))


# ---------------------------------------------------------------- errors

SHAPE_ERRORS = {
    "2-d @ 2-d": ((2, 3), (4, 5), [r"2x3", r"4x5"]),
    "2-d @ 1-d": ((2, 3), (4,), [r"2x3", r"\b4\b"]),
    "1-d @ 2-d": ((3,), (4, 5), [r"\b3\b", r"4x5"]),
    "1-d @ 1-d": ((3,), (4,), [r"\[3\]", r"\[4\]"]),
    "3-d @ 2-d": ((5, 2, 3), (4, 2), [r"\[5, 2, 3\]", r"\[4, 2\]"]),
    "batch dims that do not broadcast": ((2, 3, 4), (3, 4, 5), [r"\[2, 3, 4\]", r"\[3, 4, 5\]"]),
}


@pytest.mark.parametrize("sa, sb, patterns", SHAPE_ERRORS.values(), ids=SHAPE_ERRORS.keys())
def test_matmul_shape_errors_are_runtime_errors_naming_both_shapes(sa, sb, patterns, torch):
    assert isinstance(error_of(lambda: torch.ones(sa) @ torch.ones(sb)), RuntimeError)
    with pytest.raises(RuntimeError) as info:
        tl.ones(sa) @ tl.ones(sb)
    for pattern in patterns:
        assert re.search(pattern, str(info.value)), f"{pattern!r} not in {info.value}"


def test_matmul_of_0d_raises_like_pytorch(torch):
    ref = error_of(lambda: torch.tensor(2.0) @ torch.ones(2))
    assert isinstance(ref, RuntimeError)
    with pytest.raises(RuntimeError, match="1D"):
        tl.tensor(2.0) @ tl.ones(2)


DTYPE_ERRORS = {
    "float32 @ float64": (("float32", "float64"), (2, 3), (3, 2)),
    "float64 @ float32, 1-d": (("float64", "float32"), (3,), (3,)),
    "int64 @ float32": (("int64", "float32"), (2, 3), (3,)),
    "float16 @ float32": (("float16", "float32"), (2, 3), (3, 2)),
    "int32 @ int64": (("int32", "int64"), (2, 2), (2, 2)),
}


@pytest.mark.parametrize("dtypes, sa, sb", DTYPE_ERRORS.values(), ids=DTYPE_ERRORS.keys())
def test_matmul_of_mismatched_dtypes_errors_like_pytorch(dtypes, sa, sb, torch):
    """PyTorch does not promote in matmul: mismatched dtypes are a RuntimeError."""
    def fn(m):
        return m.ones(sa, dtype=getattr(m, dtypes[0])) @ m.ones(sb, dtype=getattr(m, dtypes[1]))

    ref = error_of(lambda: fn(torch_lib()))
    assert isinstance(ref, RuntimeError)
    with pytest.raises(RuntimeError, match="dtype"):
        fn(TL)


REPEATED_VALUES = {
    "svdvals of the identity": lambda m, a: m.linalg.svdvals(a),
    "svd's S only, of the identity": lambda m, a: m.linalg.svd(a)[1],
    "eigvalsh of the identity": lambda m, a: m.linalg.eigvalsh(a),
    "nuclear norm of zeros": lambda m, a: m.linalg.matrix_norm(a * 0, "nuc"),
}


@pytest.mark.parametrize("op", REPEATED_VALUES.values(), ids=REPEATED_VALUES.keys())
def test_values_only_gradients_are_finite_at_repeated_values_like_pytorch(op, torch):
    """The singular vectors (eigenvectors) are not unique where values repeat, and their gradient divides by
    the gaps between values; when only the values are used, that term is absent (not 0 / 0 = nan)."""
    check_against_torch(lambda m: value_and_grads(m, op, np.eye(3)))


def test_eigh_second_derivatives_as_pytorch(torch):
    """The gradient of a function of eigh is symmetric, as PyTorch's, at every order: Hessian-vector products
    through eigenvalues and eigenvectors agree with PyTorch's (they split the symmetric gradient between a and
    a.T differently before)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 4))
    a, w, v, u = a + a.T, rng.standard_normal(4), rng.standard_normal((4, 4)), rng.standard_normal((4, 4))

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        values, vectors = lib.linalg.eigh(x)
        f = (values * lib.tensor(w)).sum() + (vectors.abs() * lib.tensor(u)).sum()
        (g,) = lib.autograd.grad(f, [x], create_graph=True)
        (h,) = lib.autograd.grad((g * lib.tensor(v)).sum(), [x])
        return g.detach().numpy(), h.detach().numpy()

    for ours, theirs in zip(run(tl), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)
