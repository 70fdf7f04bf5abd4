"""tinygrad_lab.nn.functional against torch.nn.functional: forward values and the gradients of
every differentiable argument on the same float64 inputs (rtol 1e-10), for every function and
reduction; gradcheck of the dedicated Functions in ops/activation.py; dropout statistics and
seeding; batch_norm's running statistics; PyTorch's error messages."""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import tinygrad_lab as tl
import tinygrad_lab.nn.functional as F
from tinygrad_lab.autograd import gradcheck, gradgradcheck
from tinygrad_lab.ops import activation as act

RTOL, ATOL = 1e-10, 1e-12
_rng = np.random.default_rng(1234)


def R(*shape, scale: float = 1.0) -> np.ndarray:
    """Standard normal float64 samples (no exact zeros, so no kinks or ties)."""
    return _rng.standard_normal(shape) * scale


def P(*shape) -> np.ndarray:
    """Float64 samples in (0.05, 0.95): probabilities away from 0 and 1."""
    return _rng.uniform(0.05, 0.95, shape)


def I(high: int, *shape) -> np.ndarray:
    """Integer samples in [0, high) (class indices)."""
    return _rng.integers(0, high, shape)


def probs(*shape, dim: int = 1) -> np.ndarray:
    e = np.exp(R(*shape))
    return e / e.sum(axis=dim, keepdims=True)


@dataclass
class Case:
    """fn(F, m, *tensors): the same body runs with (tinygrad_lab.nn.functional, tinygrad_lab)
    and (torch.nn.functional, torch). Inputs listed in `grad` require grad."""

    name: str
    fn: Callable
    arrays: list
    grad: tuple = (0,)


def _build(lib, arrays, grad):
    ts = []
    for i, a in enumerate(arrays):
        t = lib.tensor(np.asarray(a))
        if i in grad:
            t.requires_grad_(True)
        ts.append(t)
    return ts


def _run(lib, Fn, case: Case):
    ts = _build(lib, case.arrays, case.grad)
    out = case.fn(Fn, lib, *ts)
    upstream = np.asarray(np.random.default_rng(7).standard_normal(tuple(out.shape)), dtype=np.float64)
    out.backward(lib.tensor(upstream))
    return out, [ts[i].grad for i in case.grad]


def _np(t):
    return None if t is None else t.detach().numpy()


def assert_close(ours, theirs, what: str = "", rtol: float = RTOL, atol: float = ATOL) -> None:
    if theirs is None:
        assert ours is None or not np.any(_np(ours)), f"{what}: PyTorch gives no gradient"
        return
    assert ours is not None, f"{what}: no gradient, PyTorch has one"
    assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
    assert str(ours.dtype).rpartition(".")[2] == str(theirs.dtype).rpartition(".")[2], what
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def check_case(torch, case: Case, rtol: float = RTOL, atol: float = ATOL) -> None:
    import torch.nn.functional as TF
    ours, our_grads = _run(tl, F, case)
    theirs, their_grads = _run(torch, TF, case)
    assert_close(ours, theirs, f"{case.name}: forward", rtol, atol)
    for i, g, h in zip(case.grad, our_grads, their_grads):
        assert_close(g, h, f"{case.name}: gradient of input {i}", rtol, atol)


# ---------------------------------------------------------------- linear layers and activations

LAYERS = [
    Case("linear", lambda F, m, x, w, b: F.linear(x, w, b), [R(4, 3), R(5, 3), R(5)], (0, 1, 2)),
    Case("linear no bias", lambda F, m, x, w: F.linear(x, w), [R(4, 3), R(5, 3)], (0, 1)),
    Case("linear 3-D input, no bias", lambda F, m, x, w: F.linear(x, w), [R(2, 4, 3), R(5, 3)], (0, 1)),
    Case("linear 1-D input", lambda F, m, x, w, b: F.linear(x, w, b), [R(3), R(5, 3), R(5)], (0, 1, 2)),
    Case("bilinear", lambda F, m, a, b, w, bias: F.bilinear(a, b, w, bias), [R(4, 3), R(4, 2), R(5, 3, 2), R(5)],
         (0, 1, 2, 3)),
    Case("bilinear 3-D, no bias", lambda F, m, a, b, w: F.bilinear(a, b, w), [R(2, 3, 3), R(2, 3, 2), R(4, 3, 2)],
         (0, 1, 2)),
    Case("relu", lambda F, m, x: F.relu(x), [R(3, 4)]),
    Case("leaky_relu", lambda F, m, x: F.leaky_relu(x), [R(3, 4)]),
    Case("leaky_relu slope 0.2", lambda F, m, x: F.leaky_relu(x, 0.2), [R(3, 4)]),
    Case("elu", lambda F, m, x: F.elu(x), [R(3, 4)]),
    Case("elu alpha 1.7, small inputs", lambda F, m, x: F.elu(x, alpha=1.7), [R(3, 4, scale=1e-4)]),
    Case("gelu", lambda F, m, x: F.gelu(x), [R(3, 4, scale=2)]),
    Case("gelu tanh", lambda F, m, x: F.gelu(x, approximate="tanh"), [R(3, 4, scale=2)]),
    Case("silu", lambda F, m, x: F.silu(x), [R(3, 4, scale=3)]),
    Case("tanh", lambda F, m, x: F.tanh(x), [R(3, 4)]),
    Case("sigmoid", lambda F, m, x: F.sigmoid(x), [R(3, 4, scale=5)]),
    Case("relu inplace", lambda F, m, x: F.relu(x * 1.0, inplace=True), [R(3, 4)]),
    Case("leaky_relu inplace", lambda F, m, x: F.leaky_relu(x * 1.0, 0.1, inplace=True), [R(3, 4)]),
    Case("elu inplace", lambda F, m, x: F.elu(x * 1.0, inplace=True), [R(3, 4)]),
    Case("silu inplace", lambda F, m, x: F.silu(x * 1.0, inplace=True), [R(3, 4)]),
    Case("softplus", lambda F, m, x: F.softplus(x), [R(3, 4, scale=10)]),
    Case("softplus beta 2, threshold 3", lambda F, m, x: F.softplus(x, beta=2.0, threshold=3.0), [R(4, 5, scale=3)]),
    Case("logsigmoid", lambda F, m, x: F.logsigmoid(x), [R(3, 4, scale=30)]),
    Case("softmax dim 1", lambda F, m, x: F.softmax(x, dim=1), [R(3, 5)]),
    Case("softmax dim 0", lambda F, m, x: F.softmax(x, 0), [R(3, 5)]),
    Case("softmax 3-D dim -1", lambda F, m, x: F.softmax(x, dim=-1), [R(2, 3, 4)]),
    Case("softmax large logits", lambda F, m, x: F.softmax(x, dim=1), [R(3, 5, scale=1000)]),
    Case("softmax 0-d", lambda F, m, x: F.softmax(x, dim=0), [np.array(1.5)]),
    Case("softmin", lambda F, m, x: F.softmin(x, dim=1), [R(3, 5)]),
    Case("log_softmax dim 1", lambda F, m, x: F.log_softmax(x, dim=1), [R(3, 5)]),
    Case("log_softmax 4-D dim 1", lambda F, m, x: F.log_softmax(x, 1), [R(2, 3, 2, 2)]),
    Case("log_softmax large logits", lambda F, m, x: F.log_softmax(x, dim=-1), [R(3, 5, scale=1000)]),
    Case("pad", lambda F, m, x: F.pad(x, (1, 2, 0, 1), value=0.5), [R(2, 3, 4)]),
    Case("embedding (repeated indices)", lambda F, m, w, i: F.embedding(i, w), [R(6, 3), I(6, 2, 5)]),
    Case("embedding padding_idx", lambda F, m, w, i: F.embedding(i, w, padding_idx=2),
         [R(6, 3), np.array([[2, 0, 2], [5, 2, 1]])]),
    Case("embedding padding_idx -1", lambda F, m, w, i: F.embedding(i, w, padding_idx=-1),
         [R(6, 3), np.array([5, 0, 5, 3])]),
    Case("layer_norm", lambda F, m, x, w, b: F.layer_norm(x, (4,), w, b), [R(3, 4), R(4), R(4)], (0, 1, 2)),
    Case("layer_norm over 2 dims, no affine", lambda F, m, x: F.layer_norm(x, [3, 4], eps=1e-3), [R(2, 3, 4)]),
    Case("batch_norm training 2-D", lambda F, m, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
         [R(6, 3), R(3), R(3)], (0, 1, 2)),
    Case("batch_norm training 4-D", lambda F, m, x, w, b: F.batch_norm(x, None, None, w, b, True, 0.1, 1e-3),
         [R(2, 3, 2, 2), R(3), R(3)], (0, 1, 2)),
    Case("batch_norm training 3-D, no affine", lambda F, m, x: F.batch_norm(x, None, None, training=True),
         [R(2, 3, 4)]),
    Case("batch_norm eval", lambda F, m, x, rm, rv, w, b: F.batch_norm(x, rm, rv, w, b),
         [R(4, 3), R(3), P(3), R(3), R(3)], (0, 3, 4)),
]


@pytest.mark.parametrize("case", LAYERS, ids=[c.name for c in LAYERS])
def test_layers_and_activations_match_torch(case, torch):
    check_case(torch, case)


# ---------------------------------------------------------------- losses

_T6 = np.array([0, 4, 2, -100, 1, 2])  # class indices for 6 samples of 5 classes, one ignored
_W5 = np.array([0.5, 1.0, 2.0, 0.25, 1.5])
_T4D = I(5, 2, 3, 3)
_T4D[0, 1, 2] = -100
_REDS = ("mean", "sum", "none")


def _loss_cases(red: str) -> list:
    return [
        Case("mse_loss", lambda F, m, x, t: F.mse_loss(x, t, reduction=red), [R(3, 4), R(3, 4)], (0, 1)),
        Case("mse_loss weight", lambda F, m, x, t, w: F.mse_loss(x, t, reduction=red, weight=w),
             [R(3, 4), R(3, 4), P(3, 4)], (0, 1)),
        Case("l1_loss", lambda F, m, x, t: F.l1_loss(x, t, reduction=red), [R(3, 4), R(3, 4)], (0, 1)),
        Case("l1_loss weight", lambda F, m, x, t, w: F.l1_loss(x, t, reduction=red, weight=w),
             [R(3, 4), R(3, 4), P(3, 4)], (0, 1)),
        Case("smooth_l1_loss beta 0.5", lambda F, m, x, t: F.smooth_l1_loss(x, t, reduction=red, beta=0.5),
             [R(4, 5), R(4, 5)], (0, 1)),
        Case("smooth_l1_loss beta 0", lambda F, m, x, t: F.smooth_l1_loss(x, t, reduction=red, beta=0.0),
             [R(4, 5), R(4, 5)], (0, 1)),
        Case("huber_loss delta 0.7", lambda F, m, x, t: F.huber_loss(x, t, reduction=red, delta=0.7),
             [R(4, 5), R(4, 5)], (0, 1)),
        Case("huber_loss weight", lambda F, m, x, t, w: F.huber_loss(x, t, reduction=red, weight=w),
             [R(4, 5), R(4, 5), P(4, 5)], (0, 1)),
        Case("cross_entropy", lambda F, m, x, t: F.cross_entropy(x, t, reduction=red), [R(6, 5), _T6]),
        Case("cross_entropy weight", lambda F, m, x, t, w: F.cross_entropy(x, t, w, reduction=red),
             [R(6, 5), _T6, _W5]),
        Case("cross_entropy ignore_index 2", lambda F, m, x, t: F.cross_entropy(x, t, ignore_index=2, reduction=red),
             [R(6, 5), np.array([0, 4, 2, 3, 1, 2])]),
        Case("cross_entropy label_smoothing", lambda F, m, x, t: F.cross_entropy(x, t, reduction=red,
                                                                                 label_smoothing=0.1),
             [R(6, 5), _T6]),
        Case("cross_entropy weight + label_smoothing",
             lambda F, m, x, t, w: F.cross_entropy(x, t, weight=w, reduction=red, label_smoothing=0.3),
             [R(6, 5), _T6, _W5]),
        Case("cross_entropy 4-D", lambda F, m, x, t: F.cross_entropy(x, t, reduction=red), [R(2, 5, 3, 3), _T4D]),
        Case("cross_entropy 4-D weight + label_smoothing",
             lambda F, m, x, t, w: F.cross_entropy(x, t, w, reduction=red, label_smoothing=0.2),
             [R(2, 5, 3, 3), _T4D, _W5]),
        Case("cross_entropy 3-D", lambda F, m, x, t: F.cross_entropy(x, t, reduction=red), [R(3, 5, 4), I(5, 3, 4)]),
        Case("cross_entropy unbatched", lambda F, m, x, t: F.cross_entropy(x, t, reduction=red, label_smoothing=0.1),
             [R(5), np.array(3)]),
        Case("cross_entropy probabilities", lambda F, m, x, t: F.cross_entropy(x, t, reduction=red),
             [R(4, 5), probs(4, 5)], (0, 1)),
        Case("cross_entropy probabilities weight + label_smoothing",
             lambda F, m, x, t, w: F.cross_entropy(x, t, w, reduction=red, label_smoothing=0.25),
             [R(4, 5), probs(4, 5), _W5], (0, 1)),
        Case("cross_entropy probabilities 3-D", lambda F, m, x, t: F.cross_entropy(x, t, reduction=red),
             [R(2, 5, 3), probs(2, 5, 3)], (0, 1)),
        Case("cross_entropy uint8 target", lambda F, m, x, t: F.cross_entropy(x, t.to(m.uint8), reduction=red,
                                                                              label_smoothing=0.1),
             [R(4, 5), np.array([0, 4, 2, 1])]),
        Case("nll_loss", lambda F, m, x, t: F.nll_loss(x, t, reduction=red), [R(6, 5), _T6]),
        Case("nll_loss weight, ignore_index 1",
             lambda F, m, x, t, w: F.nll_loss(x, t, w, ignore_index=1, reduction=red), [R(6, 5), _T6.clip(0), _W5]),
        Case("nll_loss 4-D weight", lambda F, m, x, t, w: F.nll_loss(x, t, weight=w, reduction=red),
             [R(2, 5, 3, 3), _T4D, _W5]),
        Case("nll_loss unbatched", lambda F, m, x, t: F.nll_loss(x, t, reduction=red), [R(5), np.array(1)]),
        Case("binary_cross_entropy", lambda F, m, x, t: F.binary_cross_entropy(x, t, reduction=red),
             [P(3, 4), P(3, 4)], (0, 1)),
        Case("binary_cross_entropy weight", lambda F, m, x, t, w: F.binary_cross_entropy(x, t, w, reduction=red),
             [P(3, 4), P(3, 4), P(4)], (0, 1)),
        Case("binary_cross_entropy_with_logits",
             lambda F, m, x, t: F.binary_cross_entropy_with_logits(x, t, reduction=red),
             [R(3, 4, scale=4), P(3, 4)], (0, 1)),
        Case("binary_cross_entropy_with_logits weight + pos_weight",
             lambda F, m, x, t, w, pw: F.binary_cross_entropy_with_logits(x, t, w, reduction=red, pos_weight=pw),
             [R(3, 4, scale=4), P(3, 4), P(3, 4), P(4) + 0.5], (0, 1)),
    ]


LOSSES = [(red, c) for red in _REDS for c in _loss_cases(red)]


@pytest.mark.parametrize("red,case", LOSSES, ids=[f"{c.name} [{red}]" for red, c in LOSSES])
def test_losses_match_torch(red, case, torch):
    check_case(torch, case)


def test_cross_entropy_with_every_target_ignored_is_nan_with_zero_gradient(torch):
    """As PyTorch: the mean over no targets is 0/0 = nan, and the gradient is all zeros."""
    check_case(torch, Case("all ignored", lambda F, m, x, t: F.cross_entropy(x, t), [R(3, 5), np.full(3, -100)]))
    x = tl.tensor(R(3, 5), requires_grad=True)
    loss = F.cross_entropy(x, tl.tensor([-100, -100, -100]))
    loss.backward()
    assert math.isnan(loss.item()) and not x.grad.numpy().any()


def test_cross_entropy_ignored_row_of_minus_inf_stays_finite(torch):
    """An ignored row may hold anything (even -inf logits): it must not turn the loss into nan."""
    x = R(3, 5)
    x[1] = -np.inf
    check_case(torch, Case("ignored -inf row", lambda F, m, x, t: F.nll_loss(x, t), [x, np.array([0, -100, 2])]))


def test_bce_at_0_and_1_uses_pytorchs_clamped_log(torch):
    """log(0) is clamped to -100 (and the gradient's denominator to 1e-12), as PyTorch."""
    check_case(torch, Case("bce at 0/1", lambda F, m, x, t: F.binary_cross_entropy(x, t, reduction="none"),
                           [np.array([0.0, 1.0, 0.0, 1.0, 0.3]), np.array([1.0, 0.0, 0.0, 1.0, 0.5])]))


def test_legacy_size_average_and_reduce_map_to_reduction(torch):
    import torch.nn.functional as TF
    for size_average, reduce in ((False, None), (None, False), (True, True)):
        x, t = R(3, 4), R(3, 4)
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            ours = F.mse_loss(tl.tensor(x), tl.tensor(t), size_average=size_average, reduce=reduce)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = TF.mse_loss(torch.tensor(x), torch.tensor(t), size_average=size_average, reduce=reduce)
        assert_close(ours, theirs, f"size_average={size_average}, reduce={reduce}")


def test_mse_loss_warns_when_target_size_differs():
    with pytest.warns(UserWarning, match=r"Using a target size .* different to the input size"):
        out = F.mse_loss(tl.tensor(R(3, 1)), tl.tensor(R(3)))
    assert out.shape == ()


# ---------------------------------------------------------------- second derivatives (backward written with ops)

SECOND = [
    Case("gelu", lambda F, m, x: F.gelu(x), [R(3, 4)]),
    Case("gelu tanh", lambda F, m, x: F.gelu(x, approximate="tanh"), [R(3, 4)]),
    Case("elu", lambda F, m, x: F.elu(x, 0.8), [R(3, 4)]),
    Case("logsigmoid", lambda F, m, x: F.logsigmoid(x), [R(3, 4, scale=3)]),
    Case("softmax", lambda F, m, x: F.softmax(x, dim=1), [R(3, 4)]),
    Case("log_softmax", lambda F, m, x: F.log_softmax(x, dim=0), [R(3, 4)]),
    Case("cross_entropy", lambda F, m, x, t: F.cross_entropy(x, t, label_smoothing=0.1), [R(4, 5), I(5, 4)]),
    Case("layer_norm", lambda F, m, x: F.layer_norm(x, (4,)), [R(3, 4)]),
    Case("MLP: linear, gelu, linear, cross_entropy",
         lambda F, m, x, w1, b1, w2, b2, t: F.cross_entropy(F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2), t),
         [R(4, 3), R(5, 3), R(5), R(2, 5), R(2), I(2, 4)], (0, 1, 2, 3, 4)),
    Case("binary_cross_entropy", lambda F, m, x, t: F.binary_cross_entropy(x, t), [P(3, 4), P(3, 4)], (0, 1)),
]


def _hessian_vector(lib, case: Case):
    ts = _build(lib, case.arrays, case.grad)
    out = case.fn(F if lib is tl else __import__("torch").nn.functional, lib, *ts)
    u = lib.tensor(np.asarray(np.random.default_rng(3).standard_normal(tuple(out.shape)), dtype=np.float64))
    inputs = [ts[i] for i in case.grad]
    grads = lib.autograd.grad((out * u).sum(), inputs, create_graph=True)
    v = [lib.tensor(np.random.default_rng(4 + k).standard_normal(tuple(g.shape))) for k, g in enumerate(grads)]
    total = sum((g * w).sum() for g, w in zip(grads, v))
    total.backward()
    return [t.grad for t in inputs]


@pytest.mark.parametrize("case", SECOND, ids=[c.name for c in SECOND])
def test_second_derivatives_match_torch(case, torch):
    for ours, theirs in zip(_hessian_vector(tl, case), _hessian_vector(torch, case)):
        assert_close(ours, theirs, f"{case.name}: Hessian-vector product", rtol=1e-9, atol=1e-11)


# ---------------------------------------------------------------- the dedicated Functions: gradcheck

def _leaf(arr):
    return tl.tensor(np.asarray(arr, dtype=np.float64), requires_grad=True)


GRADCHECKS = {
    "Linear": (lambda x, w, b: act.Linear.apply(x, w, b), lambda: [_leaf(R(3, 2)), _leaf(R(4, 2)), _leaf(R(4))]),
    "Erf": (lambda x: act.erf(x), lambda: [_leaf(R(2, 3))]),
    "Softmax": (lambda x: act.softmax(x, 1), lambda: [_leaf(R(2, 3))]),
    "LogSoftmax": (lambda x: act.log_softmax(x, 0), lambda: [_leaf(R(3, 2))]),
    "Elu": (lambda x: act.elu(x, 1.3), lambda: [_leaf(R(2, 3))]),
    "LogSigmoid": (lambda x: act.logsigmoid(x), lambda: [_leaf(R(2, 3, scale=3))]),
    "BinaryCrossEntropy": (lambda x, t: act.BinaryCrossEntropy.apply(x, t), lambda: [_leaf(P(2, 3)), _leaf(P(2, 3))]),
    "NllLoss mean, weighted, ignore": (
        lambda x: act.NllLoss.apply(x, tl.tensor([1, -100, 0]), tl.tensor([0.5, 2.0, 1.5], dtype=tl.float64),
                                    -100, "mean"), lambda: [_leaf(R(3, 3))]),
    "NllLoss none 3-D": (lambda x: act.NllLoss.apply(x, tl.tensor([[1, 0], [2, 2]]), None, -100, "none"),
                         lambda: [_leaf(R(2, 3, 2))]),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_dedicated_functions_pass_gradcheck(name):
    fn, inputs = GRADCHECKS[name]
    assert gradcheck(fn, inputs(), atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("name", GRADCHECKS)
def test_dedicated_functions_pass_gradgradcheck(name):
    fn, inputs = GRADCHECKS[name]
    assert gradgradcheck(fn, inputs(), atol=1e-6, rtol=1e-5)


def test_linear_of_a_matrix_is_one_node():
    x, w, b = tl.randn(4, 3), tl.randn(5, 3, requires_grad=True), tl.randn(5, requires_grad=True)
    out = F.linear(x, w, b)
    assert out.grad_fn.name == "LinearBackward"
    assert [e[0].name for e in out.grad_fn.next_functions if e[0] is not None] == ["AccumulateGrad"] * 2


def test_cross_entropy_is_two_nodes_named_like_pytorchs():
    """The hot path of a classifier: LogSoftmax then NllLoss, one node each (PyTorch's names)."""
    x = tl.tensor(R(4, 3), requires_grad=True)
    loss = F.cross_entropy(x, tl.tensor([0, 2, 1, 2]))
    assert loss.grad_fn.name == "NllLossBackward"
    (node, _), = [e for e in loss.grad_fn.next_functions if e[0] is not None]
    assert node.name == "LogSoftmaxBackward"
    assert node.next_functions[0][0].name == "AccumulateGrad"


@pytest.mark.parametrize("fn", [
    lambda x: F.relu(x), lambda x: F.gelu(x), lambda x: F.gelu(x, approximate="tanh"), lambda x: F.elu(x),
    lambda x: F.silu(x), lambda x: F.leaky_relu(x), lambda x: F.softplus(x), lambda x: F.logsigmoid(x),
    lambda x: F.softmax(x, 1), lambda x: F.log_softmax(x, 1), lambda x: F.layer_norm(x, (3,)),
    lambda x: F.batch_norm(x, None, None, training=True), lambda x: F.dropout(x, 0.3),
    lambda x: F.cross_entropy(x, tl.tensor([0, 2])), lambda x: F.mse_loss(x, tl.zeros(2, 3)),
    lambda x: F.binary_cross_entropy_with_logits(x, tl.zeros(2, 3)),
    lambda x: F.binary_cross_entropy(F.sigmoid(x), tl.zeros(2, 3)),
], ids=["relu", "gelu", "gelu tanh", "elu", "silu", "leaky_relu", "softplus", "logsigmoid", "softmax",
        "log_softmax", "layer_norm", "batch_norm", "dropout", "cross_entropy", "mse_loss", "bce_with_logits", "bce"])
def test_float32_in_float32_out(fn):
    x = tl.randn(2, 3, requires_grad=True)
    out = fn(x)
    assert out.dtype is tl.float32
    out.sum().backward()
    assert x.grad.dtype is tl.float32


# ---------------------------------------------------------------- dropout

def test_dropout_statistics_and_scaling():
    tl.manual_seed(0)
    x = tl.ones(200_000, dtype=tl.float64)
    p = 0.3
    out = F.dropout(x, p).numpy()
    zero = out == 0
    sigma = math.sqrt(p * (1 - p) / out.size)
    assert abs(zero.mean() - p) < 5 * sigma
    np.testing.assert_allclose(out[~zero], 1 / (1 - p))
    assert abs(out.mean() - 1.0) < 0.02


def test_dropout_is_seeded_by_manual_seed():
    x = tl.randn(50, 40)
    tl.manual_seed(123)
    a = F.dropout(x, 0.5).numpy()
    b = F.dropout(x, 0.5).numpy()
    tl.manual_seed(123)
    c = F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a == 0, b == 0)


def test_dropout_gradient_is_the_scaled_mask():
    tl.manual_seed(1)
    x = tl.tensor(R(30, 20), requires_grad=True)
    out = F.dropout(x, 0.25)
    out.sum().backward()
    mask = out.detach().numpy() / x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), mask)
    assert set(np.round(np.unique(mask), 12)) == {0.0, round(1 / 0.75, 12)}


def test_dropout_eval_mode_and_p0_return_the_input():
    x = tl.randn(3, 4, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x


def test_dropout_p1_zeroes_everything_and_keeps_dtype():
    x = tl.randn(3, 4, requires_grad=True)
    out = F.dropout(x, 1.0)
    out.sum().backward()
    assert out.dtype is tl.float32 and not out.detach().numpy().any() and not x.grad.numpy().any()


def test_dropout_inplace_writes_into_the_input():
    tl.manual_seed(5)
    x = tl.ones(1000)
    out = F.dropout(x, 0.5, inplace=True)
    assert out is x and (x.numpy() == 0).any() and x._version == 1


# ---------------------------------------------------------------- batch_norm running statistics

@pytest.mark.parametrize("shape,momentum", [((8, 3), 0.1), ((4, 3, 2, 5), 0.3), ((5, 3, 4), 1.0)])
def test_batch_norm_updates_running_stats_like_torch(shape, momentum, torch):
    import torch.nn.functional as TF
    c = shape[1]
    rm0, rv0, w, b = R(c), P(c) + 0.5, R(c), R(c)
    ours = [tl.tensor(a) for a in (rm0, rv0)]
    theirs = [torch.tensor(a) for a in (rm0, rv0)]
    for step in range(3):
        x = R(*shape, scale=2) + step
        xo = tl.tensor(x, requires_grad=True)
        out = F.batch_norm(xo, *ours, tl.tensor(w), tl.tensor(b), training=True, momentum=momentum)
        ref = TF.batch_norm(torch.tensor(x), *theirs, torch.tensor(w), torch.tensor(b), training=True,
                            momentum=momentum)
        assert_close(out, ref, f"step {step} output")
        for o, t, name in zip(ours, theirs, ("running_mean", "running_var")):
            assert_close(o, t, f"step {step} {name}", rtol=1e-12)
            assert o.grad_fn is None and not o.requires_grad
    assert ours[0]._version == 3
    x = R(*shape)
    assert_close(F.batch_norm(tl.tensor(x), *ours, tl.tensor(w), tl.tensor(b)),
                 TF.batch_norm(torch.tensor(x), *theirs, torch.tensor(w), torch.tensor(b)), "eval with running stats")


# ---------------------------------------------------------------- one_hot, embedding extras, re-exports

def test_one_hot_matches_torch(torch):
    import torch.nn.functional as TF
    idx = np.array([[0, 3], [2, 1]])
    for k in (-1, 6):
        ours = F.one_hot(tl.tensor(idx), k)
        theirs = TF.one_hot(torch.tensor(idx), k)
        assert ours.dtype is tl.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert F.one_hot(tl.tensor(2), 4).tolist() == [0, 0, 1, 0]
    assert tuple(F.one_hot(tl.tensor(np.zeros(0, dtype=np.int64)), 3).shape) == (0, 3)


def test_embedding_max_norm_renormalises_rows_in_place_like_torch(torch):
    import torch.nn.functional as TF
    w = R(5, 3, scale=2)
    idx = np.array([0, 2, 2, 4])
    ow, tw = tl.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ours = F.embedding(tl.tensor(idx), ow, max_norm=1.5)
    theirs = TF.embedding(torch.tensor(idx), tw, max_norm=1.5)
    assert_close(ours, theirs, "output")
    assert_close(ow, tw, "renormalised weight")


def test_pad_and_pointwise_functions_are_the_ops():
    from tinygrad_lab.ops import elementwise, movement
    assert F.pad is movement.pad and F.tanh is elementwise.tanh and F.sigmoid is elementwise.sigmoid


def test_conv_and_pool_functions_are_reexported():
    from tinygrad_lab.ops import conv
    for name in ("conv1d", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"):
        assert getattr(F, name) is getattr(conv, name)


def test_softmax_without_dim_warns_and_uses_pytorchs_legacy_dim(torch):
    import torch.nn.functional as TF
    for shape in ((4,), (2, 3), (2, 3, 4), (2, 2, 3, 2)):
        x = R(*shape)
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            ours = F.softmax(tl.tensor(x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = TF.softmax(torch.tensor(x))
        assert_close(ours, theirs, f"softmax of shape {shape}")


# ---------------------------------------------------------------- errors (PyTorch's types and words)

ERRORS = {
    "target out of bounds": (lambda F, m: F.cross_entropy(m.tensor(R(3, 5)), m.tensor([0, 5, 1])),
                             IndexError, r"^Target 5 is out of bounds\.$"),
    "negative target": (lambda F, m: F.cross_entropy(m.tensor(R(3, 5)), m.tensor([0, -1, 1])),
                        IndexError, r"^Target -1 is out of bounds\.$"),
    "4-D target out of bounds": (lambda F, m: F.nll_loss(m.tensor(R(1, 3, 2, 2)), m.tensor([[[0, 1], [7, 2]]])),
                                 IndexError, r"^Target 7 is out of bounds\.$"),
    "batch size mismatch": (lambda F, m: F.cross_entropy(m.tensor(R(3, 5)), m.tensor([0, 1])),
                            ValueError, r"Expected input batch_size \(3\) to match target batch_size \(2\)\."),
    "3-D target size": (lambda F, m: F.cross_entropy(m.tensor(R(2, 5, 3)), m.tensor(np.zeros((2, 4), np.int64))),
                        RuntimeError, r"Expected target size \[2, 3\], got \[2, 4\]"),
    "2-D target for 2-D input": (lambda F, m: F.nll_loss(m.tensor(R(2, 5)), m.tensor([[0], [1]])),
                                 RuntimeError, r"0D or 1D target tensor expected, multi-target not supported"),
    "float class target": (lambda F, m: F.cross_entropy(m.tensor(R(3, 5)), m.tensor([0.0, 1.0, 1.0])),
                           RuntimeError, r"expected target dtype to be Long or Byte, but got Float"),
    "int32 class target": (lambda F, m: F.nll_loss(m.tensor(R(3, 5)), m.tensor([0, 1, 1], dtype=m.int32)),
                           RuntimeError, r"expected target dtype to be Long or Byte, but got Int"),
    "weight size": (lambda F, m: F.cross_entropy(m.tensor(R(3, 5)), m.tensor([0, 1, 1]), m.ones(4, dtype=m.float64)),
                    RuntimeError, (r"weight tensor should be defined either for all 5 classes or no classes but got "
                                  r"weight tensor of shape: \[4\]")),
    "weight requires grad": (
        lambda F, m: F.cross_entropy(m.tensor(R(3, 5)), m.tensor([0, 1, 1]),
                                     m.ones(5, dtype=m.float64, requires_grad=True)),
        RuntimeError, r"not differentiable with respect to argument 'weight'"),
    "weight dtype": (lambda F, m: F.cross_entropy(m.randn(3, 5), m.tensor([0, 1, 1]), m.ones(5, dtype=m.float64)),
                     RuntimeError, r"expected scalar type Float but found Double"),
    "probabilities with ignore_index": (
        lambda F, m: F.cross_entropy(m.tensor(R(3, 5)), m.tensor(probs(3, 5)), ignore_index=1),
        RuntimeError, r"ignore_index is not supported for floating point target"),
    "integer probabilities": (lambda F, m: F.cross_entropy(m.tensor(R(3, 5)), m.ones(3, 5, dtype=m.long)),
                              RuntimeError, r"Expected floating point type for target with class probabilities, got Long"),
    "label_smoothing range": (lambda F, m: F.cross_entropy(m.tensor(R(3, 5)), m.tensor([0, 1, 1]), label_smoothing=1.5),
                              RuntimeError, r"label_smoothing must be between 0\.0 and 1\.0\. Got: 1\.5"),
    "bad reduction": (lambda F, m: F.cross_entropy(m.tensor(R(3, 5)), m.tensor([0, 1, 1]), reduction="avg"),
                      ValueError, r"avg is not a valid value for reduction"),
    "bad reduction mse": (lambda F, m: F.mse_loss(m.tensor(R(3)), m.tensor(R(3)), reduction="max"),
                          ValueError, r"max is not a valid value for reduction"),
    "one_hot float": (lambda F, m: F.one_hot(m.tensor([1.0])), RuntimeError,
                      r"one_hot is only applicable to index tensor of type LongTensor\."),
    "one_hot negative": (lambda F, m: F.one_hot(m.tensor([-1])), RuntimeError, r"Class values must be non-negative\."),
    "one_hot too large": (lambda F, m: F.one_hot(m.tensor([3]), 3), RuntimeError,
                          r"Class values must be smaller than num_classes\."),
    "one_hot empty": (lambda F, m: F.one_hot(m.tensor(np.zeros(0, np.int64))), RuntimeError,
                      r"Can not infer total number of classes from empty tensor\."),
    "dropout p": (lambda F, m: F.dropout(m.randn(3), 1.5), ValueError,
                  r"dropout probability has to be between 0 and 1, but got 1\.5"),
    "embedding float indices": (lambda F, m: F.embedding(m.tensor([1.0]), m.randn(3, 2)), RuntimeError,
                                (r"Expected tensor for argument #1 'indices' to have one of the following scalar "
                                r"types: Long, Int")),
    "embedding index out of range": (lambda F, m: F.embedding(m.tensor([3]), m.randn(3, 2)), IndexError,
                                     r"index out of range in self"),
    "embedding padding_idx": (lambda F, m: F.embedding(m.tensor([1]), m.randn(3, 2), padding_idx=3), AssertionError,
                              r"Padding_idx must be within num_embeddings"),
    "embedding 1-D weight": (lambda F, m: F.embedding(m.tensor([1]), m.randn(3)), RuntimeError,
                             r"'weight' must be 2-D"),
    "layer_norm shape": (lambda F, m: F.layer_norm(m.randn(2, 3), [4]), RuntimeError,
                         (r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but got input of "
                         r"size\[2, 3\]")),
    "layer_norm weight shape": (lambda F, m: F.layer_norm(m.randn(2, 3), [3], weight=m.ones(4)), RuntimeError,
                                (r"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                                r"\[4\] and normalized_shape = \[3\]")),
    "batch_norm one value per channel": (
        lambda F, m: F.batch_norm(m.randn(1, 3), m.zeros(3), m.ones(3), training=True), ValueError,
        r"Expected more than 1 value per channel when training, got input size .*\[1, 3\]"),
    "batch_norm eval without stats": (lambda F, m: F.batch_norm(m.randn(2, 3), None, None), RuntimeError,
                                      r"running_mean must be defined in evaluation mode"),
    "batch_norm weight size": (
        lambda F, m: F.batch_norm(m.randn(4, 3), m.zeros(3), m.ones(3), weight=m.ones(4)), RuntimeError,
        r"weight should contain 3 elements not 4"),
    "bce input range": (lambda F, m: F.binary_cross_entropy(m.tensor([1.5]), m.tensor([1.0])), RuntimeError,
                        r"all elements of input should be between 0 and 1"),
    "bce target range": (lambda F, m: F.binary_cross_entropy(m.tensor([0.5]), m.tensor([1.5])), RuntimeError,
                         r"all elements of target should be between 0 and 1"),
    "bce target size": (lambda F, m: F.binary_cross_entropy(m.tensor([0.5, 0.2]), m.tensor([1.0])), ValueError,
                        (r"Using a target size \(.*\[1\]\)\) that is different to the input size \(.*\[2\]\)\) is "
                        r"deprecated")),
    "bce with logits target size": (
        lambda F, m: F.binary_cross_entropy_with_logits(m.tensor([0.5, 0.2]), m.tensor([1.0])), ValueError,
        r"Target size \(.*\[1\]\)\) must be the same as input size \(.*\[2\]\)\)"),
    "gelu approximate": (lambda F, m: F.gelu(m.randn(3), approximate="foo"), RuntimeError,
                         r"approximate argument must be either none or tanh\."),
    "smooth_l1 negative beta": (lambda F, m: F.smooth_l1_loss(m.randn(3), m.randn(3), beta=-1.0), RuntimeError,
                                r"smooth_l1_loss does not support negative values for beta\."),
    "huber non-positive delta": (lambda F, m: F.huber_loss(m.randn(3), m.randn(3), delta=0.0), RuntimeError,
                                 r"huber_loss does not support non-positive values for delta"),
    "smooth_l1 of integers": (lambda F, m: F.smooth_l1_loss(m.tensor([1, 2]), m.tensor([0, 0])), NotImplementedError,
                              r"not implemented for 'Long'"),
    "huber of integers": (lambda F, m: F.huber_loss(m.tensor([1, 2]), m.tensor([0, 0])), NotImplementedError,
                          r"not implemented for 'Long'"),
    "softmax of integers": (lambda F, m: F.softmax(m.tensor([1, 2]), 0), NotImplementedError,
                            r"not implemented for 'Long'"),
    "linear shapes": (lambda F, m: F.linear(m.randn(64, 32), m.randn(128, 64)), RuntimeError,
                      r"mat1 and mat2 shapes cannot be multiplied \(64x32 and 64x128\)"),
    "bilinear input2 size": (lambda F, m: F.bilinear(m.randn(4, 3), m.randn(4, 2), m.randn(5, 3, 3)), RuntimeError,
                             r"bilinear\(\): input2 size does not match weight size: got 2 but expected 3"),
    "bilinear bias size": (lambda F, m: F.bilinear(m.randn(4, 3), m.randn(4, 3), m.randn(5, 3, 3), m.randn(4)),
                           RuntimeError, r"bilinear\(\): bias size does not match weight size: got 4 but expected 5"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_speak_like_pytorch(name):
    fn, exc, pattern = ERRORS[name]
    with pytest.raises(exc, match=pattern):
        fn(F, tl)


@pytest.mark.parametrize("name", ERRORS)
def test_error_table_matches_pytorchs_own_errors(name, torch):
    """The table above holds PyTorch's words: PyTorch raises the same type with the same message."""
    import torch.nn.functional as TF
    fn, exc, pattern = ERRORS[name]
    with pytest.raises(exc, match=pattern):
        fn(TF, torch)


@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss"])
def test_smooth_l1_and_huber_at_the_kink_broadcast_and_second_order(name, torch):
    """One op each (SmoothL1): values at |d| = beta exactly and at d = 0, an input and a target that
    broadcast ((1, 5) against (3, 1)), their gradients, and the gradient of a gradient, against PyTorch."""
    x = np.array([[-1.5, -0.5, 0.0, 0.5, 1.5]])
    t = np.array([[0.0], [1.0], [-0.5]])
    v = np.linspace(-1.0, 1.0, 5).reshape(1, 5)
    results = []
    for m in (tl, torch):
        xt, tt = m.tensor(x, requires_grad=True), m.tensor(t, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the size warning, which both give
            loss = getattr(m.nn.functional, name)(xt * 1.5, tt, reduction="sum", **{"beta" if name[0] == "s" else
                                                                                    "delta": 0.75})
        gx, gt = m.autograd.grad(loss, (xt, tt), create_graph=True)
        (ggx,) = m.autograd.grad((gx * m.tensor(v)).sum() + gt.sum(), (xt,))
        results.append([a.detach().numpy() for a in (loss, gx, gt, ggx)])
    for ours, theirs, what in zip(*results, ("loss", "d/dx", "d/dt", "second order")):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14, err_msg=what)
    loss = tl.nn.functional.smooth_l1_loss(tl.randn(3, requires_grad=True), tl.randn(3))
    assert loss.grad_fn.name() == "MeanBackward"
    assert [f.name() for f, _ in loss.grad_fn.next_functions] == ["SmoothL1Backward"]  # one op, not nine
