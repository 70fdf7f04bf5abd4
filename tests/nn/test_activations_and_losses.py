"""The activation functions and losses built from existing ops (nn/functional.py) and their modules,
against torch.nn.functional / torch.nn: forward values and gradients on random inputs and on edge
values (0, the kinks and bounds, large ±), float64 and float32, every reduction; PyTorch's errors."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tinygrad_lab as tl
import tinygrad_lab.nn.functional as F
from tinygrad_lab import nn

from .test_functional import RTOL, Case, I, P, R, check_case

# every kink and bound of the functions below, zero, and values large enough to overflow a naive exp
EDGES = np.array([-1e4, -100.0, -30.0, -20.0, -6.0, -3.0, -1.0, -0.5, -1e-8, 0.0, 1e-8, 0.5, 1.0, 3.0, 6.0, 20.0,
                  21.0, 30.0, 100.0, 1e4])


def _activation_cases(x) -> list:
    return [
        Case("hardtanh", lambda F, m, x: F.hardtanh(x), [x]),
        Case("hardtanh -2, 3", lambda F, m, x: F.hardtanh(x, -2.0, 3.0), [x]),
        Case("relu6", lambda F, m, x: F.relu6(x), [x]),
        Case("hardsigmoid", lambda F, m, x: F.hardsigmoid(x), [x]),
        Case("hardswish", lambda F, m, x: F.hardswish(x), [x]),
        Case("selu", lambda F, m, x: F.selu(x), [x]),
        Case("celu", lambda F, m, x: F.celu(x), [x]),
        Case("celu alpha 2", lambda F, m, x: F.celu(x, alpha=2.0), [x]),
        Case("elu", lambda F, m, x: F.elu(x), [x]),
        Case("silu", lambda F, m, x: F.silu(x), [x]),
        Case("mish", lambda F, m, x: F.mish(x), [x]),
        Case("softsign", lambda F, m, x: F.softsign(x), [x]),
        Case("logsigmoid", lambda F, m, x: F.logsigmoid(x), [x]),
        Case("tanhshrink", lambda F, m, x: F.tanhshrink(x), [x]),
        Case("softshrink", lambda F, m, x: F.softshrink(x), [x]),
        Case("softshrink 1", lambda F, m, x: F.softshrink(x, 1.0), [x]),
        Case("hardshrink", lambda F, m, x: F.hardshrink(x), [x]),
        Case("hardshrink 3", lambda F, m, x: F.hardshrink(x, 3.0), [x]),
        Case("threshold", lambda F, m, x: F.threshold(x, 0.5, -2.0), [x]),
        Case("softplus", lambda F, m, x: F.softplus(x), [x]),
        Case("softplus beta 2, threshold 6", lambda F, m, x: F.softplus(x, beta=2.0, threshold=6.0), [x]),
        Case("softplus beta 0.5", lambda F, m, x: F.softplus(x, beta=0.5), [x]),
        Case("hardtanh inplace", lambda F, m, x: F.hardtanh(x * 1.0, inplace=True), [x]),
        Case("relu6 inplace", lambda F, m, x: F.relu6(x * 1.0, inplace=True), [x]),
        Case("hardswish inplace", lambda F, m, x: F.hardswish(x * 1.0, inplace=True), [x]),
        Case("selu inplace", lambda F, m, x: F.selu(x * 1.0, inplace=True), [x]),
        Case("threshold inplace", lambda F, m, x: F.threshold(x * 1.0, 0.0, 7.0, inplace=True), [x]),
    ]


def _shaped_cases() -> list:
    return [
        Case("prelu one slope", lambda F, m, x, w: F.prelu(x, w), [R(3, 4), np.array([0.25])], (0, 1)),
        Case("prelu per channel", lambda F, m, x, w: F.prelu(x, w), [R(2, 3, 4), P(3)], (0, 1)),
        Case("prelu edges", lambda F, m, x, w: F.prelu(x, w), [EDGES.reshape(4, 5), R(5)], (0, 1)),
        Case("prelu 0-d slope, 1-D input", lambda F, m, x, w: F.prelu(x, w), [R(5), np.array(0.1)], (0, 1)),
        Case("glu", lambda F, m, x: F.glu(x), [R(3, 4)]),
        Case("glu dim 0", lambda F, m, x: F.glu(x, 0), [R(4, 3, 2)]),
        Case("softmin", lambda F, m, x: F.softmin(x, 1), [R(3, 5)]),
    ]


ACTIVATIONS = ([(c, "random") for c in _activation_cases(R(4, 5, scale=4))] +
               [(c, "edges") for c in _activation_cases(EDGES)] + [(c, "shaped") for c in _shaped_cases()])


# PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32 (a float literal in its kernel)
_LOOSER = {"hardsigmoid": 1e-7}


@pytest.mark.parametrize("case, kind", ACTIVATIONS, ids=[f"{c.name} [{k}]" for c, k in ACTIVATIONS])
def test_activations_match_torch(case, kind, torch):
    check_case(torch, case, rtol=_LOOSER.get(case.name, RTOL))


@pytest.mark.parametrize("case", _activation_cases(R(4, 5, scale=4).astype(np.float32)) +
                         _activation_cases(EDGES.astype(np.float32)), ids=lambda c: c.name)
def test_activations_match_torch_in_float32(case, torch):
    check_case(torch, case, rtol=1e-5, atol=1e-6)


def test_integer_inputs_stay_integer(torch):
    for name in ("relu6", "hardtanh"):
        ours = getattr(F, name)(tl.tensor([-3, 1, 7]))
        theirs = getattr(torch.nn.functional, name)(torch.tensor([-3, 1, 7]))
        assert ours.dtype == tl.int64 and ours.tolist() == theirs.tolist()
    assert F.threshold(tl.tensor([1, 7]), 2, 0).tolist() == [0, 7]


def test_softplus_in_float16_does_not_overflow(torch):
    # issue 16: exp(11) is inf in float16, so log1p(exp(x)) gave inf and a nan gradient
    data = np.array([-30.0, -11.0, 0.0, 11.0, 15.0, 19.0, 25.0], np.float16)
    x = tl.tensor(data, requires_grad=True)
    F.softplus(x).sum().backward()
    tx = torch.tensor(data, requires_grad=True)
    torch.nn.functional.softplus(tx).sum().backward()
    np.testing.assert_allclose(F.softplus(x).detach().numpy(), torch.nn.functional.softplus(tx).detach().numpy(),
                               rtol=1e-3)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-4)
    assert np.isfinite(x.grad.numpy()).all()


# ---------------------------------------------------------------- losses

_REDS = ("mean", "sum", "none")
_Y = np.array([1.0, -1.0, 1.0, -1.0, -1.0])            # ±1 targets of 5 samples
_C = I(4, 5)                                             # class indices of 5 samples, 4 classes


def _loss_cases(red: str) -> list:
    return [
        Case("kl_div", lambda F, m, x, t: F.kl_div(x, t, reduction=red), [R(3, 4), P(3, 4)], (0, 1)),
        Case("kl_div log_target", lambda F, m, x, t: F.kl_div(x, t, reduction=red, log_target=True),
             [R(3, 4), R(3, 4)], (0, 1)),
        Case("kl_div zero targets", lambda F, m, x, t: F.kl_div(x, t, reduction=red),
             [R(2, 3), np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])]),
        Case("huber_loss", lambda F, m, x, t: F.huber_loss(x, t, reduction=red), [R(4, 5), R(4, 5)], (0, 1)),
        Case("huber_loss at delta", lambda F, m, x, t: F.huber_loss(x, t, reduction=red, delta=0.5),
             [np.array([0.0, 0.5, -0.5, 2.0, 1e4]), np.zeros(5)], (0, 1)),
        Case("smooth_l1_loss at beta", lambda F, m, x, t: F.smooth_l1_loss(x, t, reduction=red, beta=0.5),
             [np.array([0.0, 0.5, -0.5, 2.0, 1e4]), np.zeros(5)], (0, 1)),
        Case("cosine_embedding_loss", lambda F, m, a, b, y: F.cosine_embedding_loss(a, b, y, reduction=red),
             [R(5, 3), R(5, 3), _Y], (0, 1)),
        Case("cosine_embedding_loss margin", lambda F, m, a, b, y: F.cosine_embedding_loss(a, b, y, 0.2,
                                                                                            reduction=red),
             [R(5, 3), R(5, 3), _Y], (0, 1)),
        Case("cosine_embedding_loss unbatched", lambda F, m, a, b, y: F.cosine_embedding_loss(a, b, y, reduction=red),
             [R(3), R(3), np.array(-1.0)], (0, 1)),
        # PyTorch's 1e-12 added to the squared norms is a float32 constant: 2e-9 relative at a zero vector
        Case("cosine_embedding_loss zero vector", lambda F, m, a, b, y: F.cosine_embedding_loss(a, b, y,
                                                                                                 reduction=red),
             [np.array([[0.0, 0.0], [1.0, 2.0]]), np.array([[1.0, 1.0], [2.0, 4.0]]), np.array([1.0, -1.0])],
             (0, 1)),
        Case("margin_ranking_loss", lambda F, m, a, b, y: F.margin_ranking_loss(a, b, y, reduction=red),
             [R(5), R(5), _Y], (0, 1)),
        Case("margin_ranking_loss margin, ties", lambda F, m, a, b, y: F.margin_ranking_loss(a, b, y, 0.5,
                                                                                              reduction=red),
             [np.array([1.0, 0.0, 2.0, 0.5, 3.0]), np.array([1.0, 0.0, 1.5, 0.0, 3.5]), _Y], (0, 1)),
        Case("hinge_embedding_loss", lambda F, m, x, y: F.hinge_embedding_loss(x, y, reduction=red),
             [R(5, scale=2), _Y]),
        Case("hinge_embedding_loss other targets", lambda F, m, x, y: F.hinge_embedding_loss(x, y, 0.7,
                                                                                              reduction=red),
             [np.array([0.5, 0.7, 2.0, -1.0]), np.array([0.0, -1.0, 2.0, 1.0])]),
        Case("triplet_margin_loss", lambda F, m, a, p, n: F.triplet_margin_loss(a, p, n, reduction=red),
             [R(5, 3), R(5, 3), R(5, 3)], (0, 1, 2)),
        Case("triplet_margin_loss p=1, swap", lambda F, m, a, p, n: F.triplet_margin_loss(
            a, p, n, margin=0.5, p=1, swap=True, reduction=red), [R(5, 3), R(5, 3), R(5, 3)], (0, 1, 2)),
        Case("triplet_margin_loss p=3", lambda F, m, a, p, n: F.triplet_margin_loss(a, p, n, p=3, reduction=red),
             [R(5, 3), R(5, 3), R(5, 3)], (0, 1, 2)),
        Case("triplet_margin_loss unbatched, equal", lambda F, m, a, p, n: F.triplet_margin_loss(a, p, n,
                                                                                                  reduction=red),
             [np.ones(3), np.ones(3), R(3)], (0, 1, 2)),
        Case("soft_margin_loss", lambda F, m, x, y: F.soft_margin_loss(x, y, reduction=red),
             [R(5, scale=3), _Y], (0,)),
        Case("multi_margin_loss", lambda F, m, x, y: F.multi_margin_loss(x, y, reduction=red), [R(5, 4), _C]),
        Case("multi_margin_loss p=2, margin, weight", lambda F, m, x, y, w: F.multi_margin_loss(
            x, y, p=2, margin=0.7, weight=w, reduction=red), [R(5, 4), _C, P(4)]),
        Case("multi_margin_loss exact margins", lambda F, m, x, y: F.multi_margin_loss(x, y, reduction=red),
             [np.array([[1.0, 0.0, 0.5], [0.0, 0.0, 0.0]]), np.array([0, 2])]),
        Case("multi_margin_loss unbatched", lambda F, m, x, y: F.multi_margin_loss(x, y, reduction=red),
             [R(4), np.array(2)]),
        Case("multilabel_soft_margin_loss", lambda F, m, x, y: F.multilabel_soft_margin_loss(x, y, reduction=red),
             [R(5, 4, scale=3), I(2, 5, 4).astype(np.float64)], (0, 1)),
        Case("multilabel_soft_margin_loss weight", lambda F, m, x, y, w: F.multilabel_soft_margin_loss(
            x, y, w, reduction=red), [R(5, 4), I(2, 5, 4).astype(np.float64), P(4)], (0,)),
        Case("poisson_nll_loss", lambda F, m, x, t: F.poisson_nll_loss(x, t, reduction=red),
             [R(3, 4), I(6, 3, 4).astype(np.float64)], (0, 1)),
        Case("poisson_nll_loss rates, full", lambda F, m, x, t: F.poisson_nll_loss(x, t, log_input=False, full=True,
                                                                                    reduction=red),
             [P(3, 4) * 5, np.array([[0.5, 1.0, 2.0, 7.0]] * 3)], (0, 1)),
        Case("poisson_nll_loss full with zero targets", lambda F, m, x, t: F.poisson_nll_loss(x, t, full=True,
                                                                                               reduction=red),
             [R(2, 3), np.array([[0.0, 1.0, 3.0], [0.0, 0.0, 9.0]])]),
        Case("gaussian_nll_loss", lambda F, m, x, t, v: F.gaussian_nll_loss(x, t, v, reduction=red),
             [R(4, 3), R(4, 3), P(4, 3)], (0, 1, 2)),
        Case("gaussian_nll_loss one var per row, full", lambda F, m, x, t, v: F.gaussian_nll_loss(
            x, t, v, full=True, reduction=red), [R(4, 3), R(4, 3), P(4, 1)], (0, 1, 2)),
        Case("gaussian_nll_loss var without last dim", lambda F, m, x, t, v: F.gaussian_nll_loss(x, t, v,
                                                                                                  reduction=red),
             [R(4, 3), R(4, 3), P(4)], (0, 1, 2)),
        Case("gaussian_nll_loss var below eps", lambda F, m, x, t, v: F.gaussian_nll_loss(x, t, v, eps=1e-3,
                                                                                           reduction=red),
             [R(4), R(4), np.array([0.0, 1e-5, 0.5, 2.0])], (0, 1, 2)),
    ]


LOSSES = [(red, c) for red in _REDS for c in _loss_cases(red)]


@pytest.mark.parametrize("red, case", LOSSES, ids=[f"{c.name} [{red}]" for red, c in LOSSES])
def test_losses_match_torch(red, case, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's 'mean' warning, in both libraries
        check_case(torch, case, rtol=1e-8 if "zero vector" in case.name else RTOL)


def test_kl_div_batchmean_and_its_mean_warning(torch):
    case = Case("kl_div batchmean", lambda F, m, x, t: F.kl_div(x, t, reduction="batchmean"), [R(3, 4), P(3, 4)],
                (0, 1))
    check_case(torch, case)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(tl.zeros(2, 2), tl.ones(2, 2))


MIXED_DTYPE_LOSSES = ["huber_loss", "smooth_l1_loss", "mse_loss", "l1_loss", "soft_margin_loss", "poisson_nll_loss",
                      "kl_div", "hinge_embedding_loss"]


@pytest.mark.parametrize("name", MIXED_DTYPE_LOSSES)
def test_a_loss_of_float32_input_and_float64_target_has_pytorch_s_dtypes(name, torch):
    """Some losses compute in the promoted dtype and return it (mse_loss: float64), others return the
    input's (huber_loss, soft_margin_loss: float32); the input's gradient keeps its dtype. (PyTorch's own
    backward of huber_loss fails here, 'Found dtype Double but expected Float': ours is compared by hand.)"""
    x, t = np.random.default_rng(0).random((2, 3)).astype(np.float32), np.full((2, 3), 0.25)
    results = []
    for m in (torch, tl):
        xi = m.tensor(x, requires_grad=True)
        loss = getattr(m.nn.functional, name)(xi, m.tensor(t))
        if m is torch and name == "huber_loss":
            xi.grad = m.tensor((x - t) / x.size, dtype=m.float32)  # |x - t| < 1: the mean of (x - t)**2 / 2
        else:
            loss.backward()
        grads = [xi.grad]
        results.append((str(loss.dtype).split(".")[-1], [str(g.dtype).split(".")[-1] for g in grads],
                        loss.item(), [g.numpy() for g in grads]))
    (want_dtype, want_grad_dtypes, want, want_grads), (dtype, grad_dtypes, got, got_grads) = results
    assert (dtype, grad_dtypes) == (want_dtype, want_grad_dtypes)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)


def test_soft_margin_loss_is_exact_where_pytorch_overflows():
    # deviation on purpose: log1p(exp(1000)) overflows in PyTorch; the value is 1000 (+ log1p(e^-1000))
    x = tl.tensor([-1000.0, 0.0, 1000.0], requires_grad=True)
    loss = F.soft_margin_loss(x, tl.tensor([1.0, 1.0, -1.0]), reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [1000.0, math.log(2), 1000.0], rtol=1e-6)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, -0.5, 1.0])


def test_distance_helpers_match_torch(torch):
    import torch.nn.functional as TF
    cases = [
        Case("pairwise_distance", lambda F, m, a, b: F.pairwise_distance(a, b), [R(4, 3), R(4, 3)], (0, 1)),
        Case("pairwise_distance p=1 keepdim", lambda F, m, a, b: F.pairwise_distance(a, b, 1, keepdim=True),
             [R(4, 3), R(4, 3)], (0, 1)),
        Case("pairwise_distance inf", lambda F, m, a, b: F.pairwise_distance(a, b, math.inf), [R(4, 3), R(4, 3)],
             (0, 1)),
        Case("cosine_similarity", lambda F, m, a, b: F.cosine_similarity(a, b), [R(4, 3), R(4, 3)], (0, 1)),
        Case("cosine_similarity tiny vectors", lambda F, m, a, b: F.cosine_similarity(a, b, dim=0),
             [np.array([1e-9, 0.0]), np.array([1e-9, 3.0])], (0, 1)),
        Case("normalize", lambda F, m, x: F.normalize(x), [R(4, 3)]),
        Case("normalize p=1 dim 0", lambda F, m, x: F.normalize(x, p=1, dim=0), [R(4, 3)]),
    ]
    for case in cases:
        check_case(torch, case)
    assert TF is not None


# ---------------------------------------------------------------- errors: PyTorch's types and words

ERRORS = {
    "glu odd": (lambda F, m: F.glu(m.randn(3, 3)), RuntimeError, r"Halving dimension must be even, but dimension 1 "
                                                                r"is size 3"),
    "glu 0-d": (lambda F, m: F.glu(m.tensor(1.0)), RuntimeError, r"glu does not support scalars"),
    "prelu channels": (lambda F, m: F.prelu(m.randn(3, 4), m.ones(3)), RuntimeError,
                       r"Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and "
                       r"channel size = 4\."),
    "prelu 2-D weight": (lambda F, m: F.prelu(m.randn(3, 2), m.ones(2, 1)), RuntimeError,
                         r"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"),
    "hardtanh bounds": (lambda F, m: F.hardtanh(m.randn(3), 2.0, 1.0), ValueError,
                        r"min_val cannot be greater than max_val"),
    "hardtanh uint8": (lambda F, m: F.hardtanh(m.tensor([1, 9], dtype=m.uint8)), RuntimeError,  # -1 would wrap
                       r"cannot do hardtanh on an unsigned type with negative limits"),
    "celu alpha 0": (lambda F, m: F.celu(m.randn(3), alpha=0.0), RuntimeError, r"alpha cannot be 0 for CELU"),
    "softshrink negative": (lambda F, m: F.softshrink(m.randn(3), -1.0), RuntimeError, r"lambda must be"),
    "triplet dims": (lambda F, m: F.triplet_margin_loss(m.zeros(2, 3), m.zeros(3), m.zeros(2, 3)), RuntimeError,
                     r"expected to have the same number of dimensions, but got: anchor 2D, positive 1D, and "
                     r"negative 2D inputs"),
    "cosine embedding dims": (lambda F, m: F.cosine_embedding_loss(m.zeros(2, 3, 4), m.zeros(2, 3, 4), m.ones(2)),
                              RuntimeError, r"1D target tensor expects 2D input tensors, but found inputs with sizes "
                                            r"\[2, 3, 4\] and \[2, 3, 4\]\."),
    "margin ranking dims": (lambda F, m: F.margin_ranking_loss(m.zeros(3), m.zeros(3), m.ones(1, 3)), RuntimeError,
                            r"All input tensors should have same dimension"),
    "multi margin p": (lambda F, m: F.multi_margin_loss(m.zeros(2, 3), m.tensor([0, 1]), p=3), ValueError,
                       r"only p == 1 and p == 2 supported"),
    "multi margin target range": (lambda F, m: F.multi_margin_loss(m.zeros(2, 3), m.tensor([0, 3])), RuntimeError,
                                  r"target out of range"),
    "multi margin float target": (lambda F, m: F.multi_margin_loss(m.zeros(2, 3), m.tensor([0.0, 1.0])),
                                  RuntimeError, r"expected scalar type Long but found Float"),
    "gaussian var size": (lambda F, m: F.gaussian_nll_loss(m.zeros(2, 3), m.zeros(2, 3), m.ones(4)), ValueError,
                          r"var is of incorrect size"),
    "gaussian negative var": (lambda F, m: F.gaussian_nll_loss(m.zeros(2, 3), m.zeros(2, 3), -m.ones(2, 3)),
                              ValueError, r"var has negative entry/entries"),
    "gaussian reduction": (lambda F, m: F.gaussian_nll_loss(m.zeros(2), m.zeros(2), m.ones(2), reduction="x"),
                           ValueError, r"x is not valid"),
    "kl_div reduction": (lambda F, m: F.kl_div(m.zeros(2), m.zeros(2), reduction="x"), ValueError,
                         r"x is not a valid value for reduction"),
    "poisson reduction": (lambda F, m: F.poisson_nll_loss(m.zeros(2), m.zeros(2), reduction="x"), ValueError,
                          r"x is not a valid value for reduction"),
}


@pytest.mark.parametrize("library", ["tinygrad_lab", "torch"])
@pytest.mark.parametrize("name", ERRORS)
def test_errors_are_pytorchs(name, library):
    """The same misuse raises the same exception type with PyTorch's words, here and in PyTorch."""
    lib = tl if library == "tinygrad_lab" else pytest.importorskip("torch", exc_type=ImportError)
    fn, exc, pattern = ERRORS[name]
    with pytest.raises(exc, match=pattern):
        fn(lib.nn.functional, lib)



# ---------------------------------------------------------------- the modules

ACTIVATION_MODULES = [
    ("ReLU6", (), {}), ("ReLU6", (True,), {}), ("Hardtanh", (), {}), ("Hardtanh", (-2.0, 3.0), {"inplace": True}),
    ("Hardswish", (), {}), ("Hardswish", (True,), {}), ("Hardsigmoid", (), {}), ("Softplus", (), {}),
    ("Softplus", (2, 10), {}), ("SELU", (), {}), ("SELU", (True,), {}), ("CELU", (), {}), ("CELU", (2.0, True), {}),
    ("Mish", (), {}), ("PReLU", (), {}), ("PReLU", (3, 0.1), {}), ("GLU", (), {}), ("GLU", (2,), {}),
    ("Softsign", (), {}), ("LogSigmoid", (), {}), ("Tanhshrink", (), {}), ("Softshrink", (), {}),
    ("Softshrink", (1.5,), {}), ("Hardshrink", (), {}), ("Threshold", (0.1, 20), {}),
    ("Threshold", (0.1, 20.0, True), {}), ("Softmin", (1,), {}), ("Softmax2d", (), {}),
]


@pytest.mark.parametrize("name, args, kwargs", ACTIVATION_MODULES,
                         ids=[f"{n}{a}{k}" for n, a, k in ACTIVATION_MODULES])
def test_activation_modules_match_torch(name, args, kwargs, torch):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = R(2, 3, 4, 2, scale=4)
    ours_out = ours(tl.tensor(x, dtype=tl.float32) * 1.0)
    theirs_out = theirs(torch.tensor(x, dtype=torch.float32) * 1.0)
    np.testing.assert_allclose(ours_out.detach().numpy(), theirs_out.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_prelu_learns_its_slopes_like_torch(torch):
    ours, theirs = nn.PReLU(3), torch.nn.PReLU(3)
    assert ours.weight.dtype == tl.float32 and ours.weight.tolist() == [0.25] * 3
    x = R(4, 3, 2)
    for m, lib in ((ours, tl), (theirs, torch)):
        m(lib.tensor(x, dtype=lib.float32)).pow(2).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5)
    assert [n for n, _ in ours.named_parameters()] == ["weight"]


def test_module_errors_match_torch(torch):
    for lib in (nn, torch.nn):
        with pytest.raises(AssertionError, match=r"max_val \(1\) must be greater than min_val \(2\)"):
            lib.Hardtanh(2, 1)
        with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 1D instead"):
            lib.Softmax2d()(tl.zeros(3) if lib is nn else torch.zeros(3))
        with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
            lib.MultiMarginLoss(p=3)


LOSS_MODULES = [
    ("HuberLoss", {"delta": 0.5}, 2), ("KLDivLoss", {"reduction": "batchmean"}, 2),
    ("KLDivLoss", {"log_target": True, "reduction": "sum"}, 2), ("CosineEmbeddingLoss", {"margin": 0.1}, 3),
    ("MarginRankingLoss", {"margin": 0.3}, 3), ("HingeEmbeddingLoss", {"margin": 2.0}, 2),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1, "swap": True}, 3), ("SoftMarginLoss", {"reduction": "none"}, 2),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5}, 2), ("MultiLabelSoftMarginLoss", {}, 2),
    ("PoissonNLLLoss", {"log_input": False, "full": True}, 2), ("GaussianNLLLoss", {"full": True}, 3),
]


def _loss_inputs(name: str, lib) -> list:
    t = lambda a: lib.tensor(a)  # noqa: E731
    y = np.array([1.0, -1.0, 1.0, -1.0])
    table = {
        "CosineEmbeddingLoss": [R(4, 3), R(4, 3), y], "MarginRankingLoss": [R(4), R(4), y],
        "HingeEmbeddingLoss": [R(4), y], "TripletMarginLoss": [R(4, 3), R(4, 3), R(4, 3)], "SoftMarginLoss": [R(4), y],
        "MultiMarginLoss": [R(4, 3), np.array([0, 2, 1, 1])], "MultiLabelSoftMarginLoss": [R(4, 3), I(2, 4, 3) * 1.0],
        "PoissonNLLLoss": [P(4, 3), I(5, 4, 3) * 1.0], "GaussianNLLLoss": [R(4, 3), R(4, 3), P(4, 1)],
        "KLDivLoss": [R(4, 3), P(4, 3)],
    }
    return [t(a) for a in table.get(name, [R(4, 3), R(4, 3)])]


@pytest.mark.parametrize("name, kwargs, n", LOSS_MODULES, ids=[f"{n}{k}" for n, k, _ in LOSS_MODULES])
def test_loss_modules_match_torch(name, kwargs, n, torch):
    ours, theirs = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    for key in set(vars(theirs)) & {"margin", "p", "eps", "swap", "full", "log_input", "log_target", "delta",
                                    "reduction"}:
        assert getattr(ours, key) == getattr(theirs, key), key
    inputs = _loss_inputs(name, tl)
    out = ours(*inputs)
    expected = theirs(*[torch.tensor(a.numpy()) for a in inputs])
    assert len(inputs) == n
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10)


def test_weighted_loss_modules_keep_weight_as_a_buffer(torch):
    w = P(3)
    for name in ("MultiMarginLoss", "MultiLabelSoftMarginLoss"):
        ours, theirs = getattr(nn, name)(weight=tl.tensor(w)), getattr(torch.nn, name)(weight=torch.tensor(w))
        assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
        x, y = R(4, 3), (np.array([0, 2, 1, 1]) if name == "MultiMarginLoss" else I(2, 4, 3) * 1.0)
        np.testing.assert_allclose(ours(tl.tensor(x), tl.tensor(y)).item(),
                                   theirs(torch.tensor(x), torch.tensor(y)).item(), rtol=1e-10)
