"""Batch norm in training mode as one recorded op (ops/normalization.py): the same values and
gradients as its composition of ops (and as PyTorch, when installed), finite differences, gradients
of gradients through the composed form, and one node in the graph instead of a dozen."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
import tinygrad_lab.nn.functional as F
from tinygrad_lab.autograd import gradcheck, gradgradcheck
from tinygrad_lab.ops.normalization import BatchNorm, batch_norm_composed

SHAPES = [(6, 3), (4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 3, 2)]


def _inputs(shape, dtype=np.float64, affine=(True, True), seed=0):
    rng = np.random.default_rng(seed)
    x = tl.tensor((rng.standard_normal(shape) * 3 + 1).astype(dtype), requires_grad=True)
    c = shape[1]
    w = tl.tensor(rng.standard_normal(c).astype(dtype), requires_grad=True) if affine[0] else None
    b = tl.tensor(rng.standard_normal(c).astype(dtype), requires_grad=True) if affine[1] else None
    return x, w, b


def _axes(shape):
    return (0,) + tuple(range(2, len(shape)))


def _fused(x, w, b, eps=1e-5):
    return BatchNorm.apply(x, w, b, _axes(x.shape), eps)[0]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", [(True, True), (True, False), (False, True), (False, False)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_one_op_equals_the_composition_in_values_and_gradients(shape, affine, dtype):
    tol = 1e-12 if dtype == np.float64 else 2e-5
    results = []
    for fn in (_fused, lambda x, w, b: batch_norm_composed(x, w, b, _axes(shape), 1e-5)):
        x, w, b = _inputs(shape, dtype, affine)
        out = fn(x, w, b)
        g = np.random.default_rng(1).standard_normal(shape).astype(dtype)
        out.backward(tl.tensor(g))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in (x, w, b) if t is not None])
    for ours, ref in zip(*results):
        np.testing.assert_allclose(ours, ref, rtol=tol, atol=tol)


def test_float16_is_normalised_in_float32_and_returned_as_float16():
    x, w, b = _inputs((8, 3, 4), np.float16)
    out = _fused(x, w, b)
    out.sum().backward()
    assert out.dtype == tl.float16 and x.grad.dtype == tl.float16 and w.grad.dtype == tl.float16
    x32, w32, b32 = (tl.tensor(t.detach().numpy().astype(np.float32), requires_grad=True) for t in (x, w, b))
    ref = _fused(x32, w32, b32)
    np.testing.assert_allclose(out.detach().numpy().astype(np.float32), ref.detach().numpy(), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("affine", [(True, True), (False, False)])
def test_gradients_match_finite_differences(affine):
    x, w, b = _inputs((5, 2, 3), affine=affine)
    args = [t for t in (x, w, b) if t is not None]
    fn = (lambda x, w, b: _fused(x, w, b)) if affine[0] else (lambda x: _fused(x, None, None))
    assert gradcheck(fn, args, eps=1e-6, atol=1e-6)


def test_gradients_of_gradients_go_through_the_composed_form():
    x, w, b = _inputs((4, 2, 3))
    assert gradgradcheck(lambda x, w, b: _fused(x, w, b), [x, w, b], eps=1e-6, atol=1e-5)


def test_training_batch_norm_records_one_node_and_matches_pytorch():
    x, w, b = _inputs((4, 3, 5, 5))
    rm, rv = tl.zeros(3, dtype=tl.float64), tl.ones(3, dtype=tl.float64)
    out = F.batch_norm(x, rm, rv, w, b, training=True)
    assert out.grad_fn.name == "BatchNormBackward"
    assert {e[0].name for e in out.grad_fn.next_functions if e[0] is not None} == {"AccumulateGrad"}
    torch = pytest.importorskip("torch")
    tx, tw, tb = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (x, w, b))
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    ref = torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, training=True)
    g = np.random.default_rng(2).standard_normal(out.shape)
    out.backward(tl.tensor(g))
    ref.backward(torch.tensor(g))
    for ours, theirs in ((out, ref), (x.grad, tx.grad), (w.grad, tw.grad), (b.grad, tb.grad), (rm, trm), (rv, trv)):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_changing_the_output_of_a_weightless_batch_norm_in_place_is_caught():
    x, _, _ = _inputs((4, 3))
    out = _fused(x, None, None)  # x̂ is both the output and what backward needs
    out.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
