"""autograd.functional: jacobian, hessian, vjp, jvp, vhp, hvp. Checked by hand (linear and quadratic
functions, whose derivatives are known exactly), by finite differences, and against PyTorch's
torch.autograd.functional when it is installed (values and the structure of the results)."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

from .._helpers import assert_tree_like_torch

F = tl.autograd.functional
RNG = np.random.default_rng(0)
A, B = RNG.standard_normal((3, 2)), RNG.standard_normal((2, 2))
X, Y, V2, V3 = RNG.standard_normal(2), RNG.standard_normal(3), RNG.standard_normal(2), RNG.standard_normal(3)


def t(a, **kw):
    return tl.tensor(np.asarray(a, dtype=np.float64), **kw)


# ---------------------------------------------------------------- by hand

def test_the_jacobian_of_a_linear_map_is_its_matrix_in_both_modes():
    for strategy in ("reverse-mode", "forward-mode"):
        J = F.jacobian(lambda x: t(A) @ x, t(X), strategy=strategy)
        np.testing.assert_allclose(J.numpy(), A, rtol=0, atol=1e-15)


def test_the_hessian_of_a_quadratic_form_is_b_plus_its_transpose():
    H = F.hessian(lambda x: x @ t(B) @ x, t(X))
    np.testing.assert_allclose(H.numpy(), B + B.T, atol=1e-14)


def test_products_with_vectors_by_hand():
    _, vJ = F.vjp(lambda x: t(A) @ x, t(X), t(V3))
    _, Jv = F.jvp(lambda x: t(A) @ x, t(X), t(V2))
    _, vH = F.vhp(lambda x: x @ t(B) @ x, t(X), t(V2))
    out, Hv = F.hvp(lambda x: x @ t(B) @ x, t(X), t(V2))
    np.testing.assert_allclose(vJ.numpy(), V3 @ A, atol=1e-14)
    np.testing.assert_allclose(Jv.numpy(), A @ V2, atol=1e-14)
    np.testing.assert_allclose(vH.numpy(), V2 @ (B + B.T), atol=1e-14)
    np.testing.assert_allclose(Hv.numpy(), (B + B.T) @ V2, atol=1e-14)
    assert out.item() == pytest.approx(X @ B @ X)


def test_several_inputs_and_outputs_give_blocks_of_out_shape_plus_input_shape():
    J = F.jacobian(lambda x, y: (x * 2, (x.sum() * y).reshape(3, 1)), (t(X), t(Y)))
    assert [[tuple(b.shape) for b in row] for row in J] == [[(2, 2), (2, 3)], [(3, 1, 2), (3, 1, 3)]]
    np.testing.assert_allclose(J[0][0].numpy(), 2 * np.eye(2))
    assert not J[0][1].numpy().any()  # x * 2 does not depend on y: zeros
    np.testing.assert_allclose(J[1][1].numpy().reshape(3, 3), X.sum() * np.eye(3))


def test_the_jacobian_matches_finite_differences():
    def f(x):
        return (x.sin() * x.roll(1)).cumsum(0)

    x0, eps = RNG.standard_normal(4), 1e-6
    J = F.jacobian(f, t(x0)).numpy()
    numeric = np.stack([(f(t(x0 + eps * e)).numpy() - f(t(x0 - eps * e)).numpy()) / (2 * eps) for e in np.eye(4)], 1)
    np.testing.assert_allclose(J, numeric, atol=1e-8)


def test_inputs_are_used_detached_and_create_graph_keeps_the_graph():
    x = t(X, requires_grad=True)
    J = F.jacobian(lambda x: x ** 3, x)
    assert x.grad is None and not J.requires_grad
    J = F.jacobian(lambda x: x ** 3, x, create_graph=True)  # d/dx of the trace of diag(3x²) is 6x
    (g,) = tl.autograd.grad(J.diagonal().sum(), x)
    np.testing.assert_allclose(g.numpy(), 6 * X)


def test_works_under_no_grad():
    with tl.no_grad():
        _, Jv = F.jvp(lambda x: x * x, t(X), t(V2))
    np.testing.assert_allclose(Jv.numpy(), 2 * X * V2)


def test_errors_say_what_is_wrong():
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.jacobian(lambda x, y: x * 2, (t(X), t(Y)), strict=True)
    with pytest.raises(RuntimeError, match="can only be None"):
        F.vjp(lambda x: x * 2, t(X))
    with pytest.raises(RuntimeError, match=r"v has shapes \[\[3\]\].*\[\[2\]\]"):
        F.jvp(lambda x: x * 2, t(X), t(Y))
    with pytest.raises(RuntimeError, match="single element"):
        F.hessian(lambda x: x * 2, t(X))
    with pytest.raises(ValueError, match="strategy"):
        F.jacobian(lambda x: x, t(X), strategy="sideways")
    with pytest.raises(TypeError, match="Tensor or a tuple of Tensors, got float"):
        F.jacobian(lambda x: 3.0, t(X))


# ---------------------------------------------------------------- against PyTorch

def _cases(m):
    Am = m.tensor(A)
    return {
        "jacobian, one in, one out": lambda Fm: Fm.jacobian(lambda x: (x ** 3).sin() * 2, m.tensor(X)),
        "jacobian, tuple in and out": lambda Fm: Fm.jacobian(
            lambda x, y: (Am @ x.tanh() * y.exp(), (x * x).sum() + y.prod()), (m.tensor(X), m.tensor(Y))),
        "jacobian forward-mode": lambda Fm: Fm.jacobian(
            lambda x, y: (Am @ x.tanh()) * y, (m.tensor(X), m.tensor(Y)), vectorize=True, strategy="forward-mode"),
        "hessian, two inputs": lambda Fm: Fm.hessian(
            lambda x, y: (x.sin() ** 2).sum() * y.pow(2).sum() + (x[0] * y).sum(), (m.tensor(X), m.tensor(Y))),
        "hessian, one input": lambda Fm: Fm.hessian(lambda x: (x ** 4).sum() + x.prod(), m.tensor(X)),
        "vjp": lambda Fm: Fm.vjp(lambda x: Am @ x.exp(), m.tensor(X), m.tensor(Y)),
        "jvp, tuple in": lambda Fm: Fm.jvp(lambda x, y: (x.exp().sum() * y, x * 2), (m.tensor(X), m.tensor(Y)),
                                           (m.tensor(V2), m.tensor(V3))),
        "vhp": lambda Fm: Fm.vhp(lambda x, y: (x.exp() ** 2).sum() * y.sum(), (m.tensor(X), m.tensor(Y)),
                                 (m.tensor(V2), m.tensor(V3))),
        "hvp": lambda Fm: Fm.hvp(lambda x: (x.cos() * x).sum(), m.tensor(X), m.tensor(V2)),
        "hessian of a linear function": lambda Fm: Fm.hessian(lambda x: (x * 3).sum(), m.tensor(X)),
    }


@pytest.mark.parametrize("name", list(_cases(tl)))
def test_matches_pytorch(name, torch):
    import torch.autograd.functional as torch_functional
    torch.set_default_dtype(torch.float64)
    try:
        want = _cases(torch)[name](torch_functional)
    finally:
        torch.set_default_dtype(torch.float32)
    assert_tree_like_torch(_cases(tl)[name](F), want)
