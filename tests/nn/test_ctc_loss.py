"""F.ctc_loss, tinygrad_lab.ctc_loss and nn.CTCLoss: losses and gradients against PyTorch (float32 and
float64; padded and concatenated targets; every reduction; zero_infinity with an impossible alignment;
unbatched input; blank != 0; repeated labels), against a brute-force sum over every alignment, finite
differences through log_softmax, PyTorch's errors, the devices, and the refused double backward."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn

from .._devices import host, sync

F = nn.functional
TOL = {"float64": (1e-10, 1e-12), "float32": (1e-4, 1e-5)}

# A batch of 4 over T = 7 frames and C = 5 classes, blank 0:
#   sample 0: 3 labels in all 7 frames; sample 1: a repeated label (1, 1 needs a blank between) in 5 frames;
#   sample 2: an empty target in 3 frames; sample 3: 3 labels in 2 frames, impossible (loss inf).
LABELS = [[1, 2, 3], [4, 1, 1], [], [2, 3, 4]]
INPUT_LENGTHS = [7, 5, 3, 2]


def _log_probs(shape, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _targets(labels, layout: str, pad: int = -1) -> np.ndarray:
    """Padded (N, longest + 1: one column more than needed, filled with `pad`) or concatenated."""
    if layout == "concatenated":
        return np.array([c for lab in labels for c in lab], dtype=np.int64)
    out = np.full((len(labels), max(map(len, labels)) + 1), pad, dtype=np.int64)
    for i, lab in enumerate(labels):
        out[i, :len(lab)] = lab
    return out


def _run(lib, fn, lp: np.ndarray, dtype: str, weights=None):
    """(loss, gradient of log_probs) of fn(log_probs), the gradient of sum(loss * weights)."""
    x = lib.tensor(lp.astype(dtype), requires_grad=True)
    loss = fn(lib, x)
    w = np.ones(tuple(loss.shape)) if weights is None else weights
    (loss * lib.tensor(w.astype(dtype))).sum().backward()
    return loss.detach().numpy(), x.grad.numpy()


def _compare(torch, fn, lp: np.ndarray, dtype: str = "float64", seed: int = 1):
    """Loss and gradient of fn with both libraries, equal within the dtype's tolerance (inf and nan alike)."""
    ours_loss = fn(tl, tl.tensor(lp.astype(dtype)))
    weights = np.random.default_rng(seed).standard_normal(tuple(ours_loss.shape))
    (lo, go), (lt, gt) = (_run(lib, fn, lp, dtype, weights) for lib in (tl, torch))
    rtol, atol = TOL[dtype]
    assert lo.dtype == lt.dtype and lo.shape == lt.shape, (lo.dtype, lt.dtype, lo.shape, lt.shape)
    np.testing.assert_allclose(lo, lt, rtol=rtol, atol=atol, err_msg="loss")
    np.testing.assert_allclose(go, gt, rtol=rtol, atol=atol, err_msg="gradient")
    return lo, go


def _functional(lib):
    return lib.nn.functional


# ---------------------------------------------------------------- against PyTorch

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_matches_torch(torch, dtype, layout, reduction, zero_infinity):
    lp, targets = _log_probs((7, 4, 5)), _targets(LABELS, layout)
    lengths = [len(lab) for lab in LABELS]

    def fn(lib, x):
        return _functional(lib).ctc_loss(x, lib.tensor(targets), INPUT_LENGTHS, lengths, reduction=reduction,
                                         zero_infinity=zero_infinity)

    loss, grad = _compare(torch, fn, lp, dtype)
    if reduction == "none":  # the impossible sample: inf (0 with zero_infinity); its gradient nan (0)
        assert loss[3] == (0.0 if zero_infinity else np.inf)
        assert (grad[:, 3] == 0).all() if zero_infinity else np.isnan(grad[:2, 3]).all()
    assert (grad[2:, 3] == 0).all() and (grad[3:, 2] == 0).all()  # frames past a sample's length: 0


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lengths_as_tensors_and_long_sequences_match_torch(torch, dtype):
    """int32 and int64 length tensors; 40 frames of 20 classes, targets of 5 to 15 labels."""
    rng = np.random.default_rng(4)
    lengths = [15, 5, 12, 9, 1, 0]
    labels = [list(rng.integers(1, 20, n)) for n in lengths]
    lp, targets = _log_probs((40, 6, 20), seed=5), _targets(labels, "padded", pad=0)
    ins = np.array([40, 33, 40, 20, 3, 1], dtype=np.int32)
    for reduction in ("none", "mean"):
        def fn(lib, x):
            return _functional(lib).ctc_loss(x, lib.tensor(targets), lib.tensor(ins), lib.tensor(np.array(lengths)),
                                             reduction=reduction)

        _compare(torch, fn, lp, dtype)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("as_tensors", [False, True])
def test_unbatched_matches_torch(torch, reduction, as_tensors):
    lp = _log_probs((6, 5), seed=2)
    for targets in (np.array([3, 1, 3]), np.array([[3, 1, 3, 0]])):  # concatenated (S,), padded (1, S')
        def fn(lib, x):
            ins, tls = (lib.tensor(6), lib.tensor(3)) if as_tensors else ((6,), [3])
            return _functional(lib).ctc_loss(x, lib.tensor(targets), ins, tls, reduction=reduction)

        loss, _ = _compare(torch, fn, lp)
        assert loss.shape == ()


@pytest.mark.parametrize("blank", [4, 2])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_another_blank_matches_torch(torch, blank, dtype):
    labels = [[c if c != blank else 0 for c in lab] for lab in LABELS[:3]]
    lp, targets = _log_probs((7, 3, 5), seed=3), _targets(labels, "padded", pad=blank)
    lengths = [len(lab) for lab in labels]
    for reduction in ("none", "mean"):
        _compare(torch, lambda lib, x: _functional(lib).ctc_loss(x, lib.tensor(targets), INPUT_LENGTHS[:3], lengths,
                                                                blank=blank, reduction=reduction), lp, dtype)


def test_a_repeated_label_needs_a_blank_between(torch):
    """(1, 1) in 2 frames is impossible (the frames would read as one 1); (1, 2) is not; 3 frames fit (1, _, 1)."""
    lp = _log_probs((3, 3, 4), seed=6)
    targets = np.array([[1, 1], [1, 2], [1, 1]])
    loss, _ = _compare(torch, lambda lib, x: _functional(lib).ctc_loss(x, lib.tensor(targets), [2, 2, 3], [2, 2, 2],
                                                                       reduction="none"), lp)
    assert loss[0] == np.inf and np.isfinite(loss[1:]).all()
    assert loss[2] == pytest.approx(-(lp[0, 2, 1] + lp[1, 2, 0] + lp[2, 2, 1]))  # the one alignment: 1, blank, 1


def test_top_level_ctc_loss_takes_aten_reduction_numbers(torch):
    """torch.ctc_loss: reduction 0/1/2, and without one the per-sample losses (what PyTorch returns)."""
    lp, targets = _log_probs((7, 4, 5)), _targets(LABELS, "padded")
    lengths = [len(lab) for lab in LABELS]
    for extra in ({}, {"reduction": 0}, {"reduction": 1}, {"reduction": 2, "zero_infinity": True}):
        _compare(torch, lambda lib, x: lib.ctc_loss(x, lib.tensor(targets), INPUT_LENGTHS, lengths, **extra), lp)
    for lib in (tl, torch):
        with pytest.raises(TypeError, match="reduction"):
            lib.ctc_loss(lib.tensor(lp), lib.tensor(targets), INPUT_LENGTHS, lengths, 0, "mean")


# ---------------------------------------------------------------- without PyTorch

def _brute_force(lp: np.ndarray, labels: list, blank: int) -> float:
    """-log of the summed probability of every path over the frames that collapses to `labels`."""
    total = 0.0
    for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
        collapsed = [c for k, c in enumerate(path) if c != blank and (k == 0 or c != path[k - 1])]
        if collapsed == labels:
            total += np.exp(sum(lp[t, c] for t, c in enumerate(path)))
    return -np.log(total) if total else np.inf


@pytest.mark.parametrize("labels, blank", [([1, 2], 0), ([1, 1], 0), ([2], 1), ([], 0), ([0, 2, 0], 1),
                                           ([1, 1, 1], 0)])
def test_loss_is_the_sum_over_every_alignment(labels, blank):
    lp = _log_probs((5, 3), seed=len(labels) + blank)
    got = F.ctc_loss(tl.tensor(lp), tl.tensor(np.array(labels, dtype=np.int64)), (5,), (len(labels),),
                     blank=blank, reduction="none")
    want = _brute_force(lp, labels, blank)
    assert float(got) == (np.inf if want == np.inf else pytest.approx(want, rel=1e-12))


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_gradcheck_through_log_softmax(reduction):
    """Finite differences agree with the gradient with respect to the logits, the usual input."""
    targets, ins, tls = tl.tensor(np.array([[1, 2, 2], [3, 1, 0]])), (4, 3), (3, 2)
    x = tl.tensor(np.random.default_rng(7).standard_normal((4, 2, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda x: F.ctc_loss(x.log_softmax(2), targets, ins, tls, reduction=reduction), [x])


def test_the_gradient_is_exp_log_probs_minus_the_posterior():
    """The rule in CtcLoss's docstring: finite differences with respect to log_probs themselves give
    -gamma; the gradient is exp(log_probs) - gamma, 0 past a sample's frames."""
    lp = _log_probs((4, 2, 4), seed=8)
    targets, ins, tls = tl.tensor(np.array([[1, 2], [3, 0]])), (4, 3), (2, 1)

    def loss(a):
        return F.ctc_loss(tl.tensor(a), targets, ins, tls, reduction="sum").item()

    eps, minus_gamma = 1e-6, np.zeros_like(lp)
    for k in np.ndindex(lp.shape):
        step = np.zeros_like(lp)
        step[k] = eps
        minus_gamma[k] = (loss(lp + step) - loss(lp - step)) / (2 * eps)
    x = tl.tensor(lp, requires_grad=True)
    F.ctc_loss(x, targets, ins, tls, reduction="sum").backward()
    inside = (np.arange(4)[:, None] < np.array(ins))[:, :, None]
    np.testing.assert_allclose(x.grad.numpy(), np.where(inside, np.exp(lp) + minus_gamma, 0), atol=1e-8)
    np.testing.assert_allclose(minus_gamma.sum(-1), np.where(inside[..., 0], -1.0, 0.0), atol=1e-8)


def test_one_recorded_op():
    x = tl.tensor(_log_probs((7, 4, 5)), requires_grad=True)
    lengths = [len(lab) for lab in LABELS]
    for reduction in ("none", "sum", "mean"):
        loss = F.ctc_loss(x, tl.tensor(_targets(LABELS, "padded")), INPUT_LENGTHS, lengths, reduction=reduction)
        assert loss.grad_fn.name() == "CtcLossBackward"
        assert [type(f).__name__ for f, _ in loss.grad_fn.next_functions if f is not None] == ["AccumulateGrad"]


def test_double_backward_is_refused(torch):
    """As PyTorch: the gradient exists with create_graph, differentiating it again raises."""
    targets = _targets(LABELS[:2], "padded")
    for lib in (tl, torch):
        x = lib.tensor(_log_probs((7, 2, 5)), requires_grad=True)
        loss = _functional(lib).ctc_loss(x, lib.tensor(targets), [7, 5], [3, 3])
        (g,) = lib.autograd.grad(loss, [x], create_graph=True)
        assert g.requires_grad
        with pytest.raises(RuntimeError, match="not implemented"):
            g.sum().backward()


# ---------------------------------------------------------------- the module

@pytest.mark.parametrize("kwargs", [{}, {"blank": 4, "reduction": "sum"}, {"reduction": "none", "zero_infinity": True}])
def test_module_matches_torch(torch, kwargs):
    labels = [[c if c != kwargs.get("blank", 0) else 0 for c in lab] for lab in LABELS]
    lp, targets = _log_probs((7, 4, 5)), _targets(labels, "concatenated")
    lengths = [len(lab) for lab in labels]
    if kwargs.get("blank", 0) == 0 and not kwargs.get("zero_infinity"):
        lengths[3] = 1  # keep the loss finite where it is reduced
        targets = _targets([lab[:n] for lab, n in zip(labels, lengths)], "concatenated")
    ours, theirs = nn.CTCLoss(**kwargs), torch.nn.CTCLoss(**kwargs)
    assert repr(ours) == repr(theirs)
    assert (ours.blank, ours.reduction, ours.zero_infinity) == (theirs.blank, theirs.reduction, theirs.zero_infinity)
    _compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x, lib.tensor(targets), lib.tensor(INPUT_LENGTHS),
                                                                    lib.tensor(lengths)), lp)


# ---------------------------------------------------------------- bad input

def _case(lp_shape=(5, 2, 4), targets=((1, 2, 0), (1, 1, 3)), ins=(5, 5), tls=(2, 3), **kwargs):
    def call(lib):
        lp = lib.tensor(_log_probs(lp_shape)) if isinstance(lp_shape, tuple) else lp_shape(lib)
        tg = lib.tensor(np.array(targets)) if not callable(targets) else targets(lib)
        return _functional(lib).ctc_loss(lp, tg, ins(lib) if callable(ins) else ins,
                                         tls(lib) if callable(tls) else tls, **kwargs)
    return call


BAD = {  # name: (call, our error's type, what our message says); PyTorch raises the same type
    "log_probs 4-d": (_case(lp_shape=(5, 2, 4, 1)), RuntimeError, r"\(T, N, C\).*\[5, 2, 4, 1\]"),
    "log_probs 1-d": (_case(lp_shape=(5,)), RuntimeError, r"1-d tensor of shape \[5\]"),
    "log_probs empty": (_case(lp_shape=(0, 2, 4), ins=(0, 0)), RuntimeError, "must not be empty"),
    "integer log_probs": (_case(lp_shape=lambda lib: lib.zeros(5, 2, 4, dtype=lib.int64)), NotImplementedError,
                          "not implemented for 'Long'"),
    "half log_probs": (_case(lp_shape=lambda lib: lib.zeros(5, 2, 4, dtype=lib.float16)), NotImplementedError,
                       "not implemented for 'Half'"),
    "input_lengths size": (_case(ins=(5, 5, 5)), RuntimeError, r"input_lengths must be of size batch_size \(2\)"),
    "target_lengths size": (_case(tls=(2,)), RuntimeError, r"target_lengths must be of size batch_size \(2\)"),
    "targets rows": (_case(targets=((1, 2, 0),)), RuntimeError, r"\(2, >= 3\), got shape \[1, 3\]"),
    "targets too narrow": (_case(tls=(2, 4)), RuntimeError, r"\(2, >= 4\), got shape \[2, 3\]"),
    "concatenated size": (_case(targets=(1, 2, 1)), RuntimeError, r"sum\(target_lengths\) = 5 labels, got shape \[3\]"),
    "targets 3-d": (_case(targets=(((1, 2, 0), (1, 1, 3)),)), RuntimeError, "3-d tensor of shape"),
    "float lengths": (_case(ins=lambda lib: lib.tensor([5.0, 5.0]), tls=lambda lib: lib.tensor([2, 3])), RuntimeError,
                      "input_lengths must be integral"),
    "int lengths": (_case(ins=5), TypeError, "'input_lengths' must be a tuple of ints or a Tensor, not int"),
    "float list lengths": (_case(tls=[2.0, 3.0]), TypeError, "'target_lengths' must be a tuple of ints"),
    "blank too large": (_case(blank=4), RuntimeError, r"blank must be in label range \[0, 4\), got 4"),
    "blank negative": (_case(blank=-1), RuntimeError, "blank must be in label range"),
    "input length > T": (_case(ins=(6, 5)), RuntimeError, r"input_lengths\[0\] is 6, outside \[0, 5\]"),
    "input length < 0": (_case(ins=(-1, 5)), RuntimeError, r"input_lengths\[0\] is -1"),
    "target length < 0": (_case(tls=(-1, 3)), RuntimeError, r"target_lengths\[0\] is -1"),
    "reduction": (_case(reduction="batchmean"), ValueError, "batchmean is not a valid value for reduction"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_torchs_error_type(torch, name):
    call, kind, message = BAD[name]
    with pytest.raises(kind, match=message):
        call(tl)
    with pytest.raises(kind):
        call(torch)


def test_what_pytorch_lets_through_is_refused_here():
    """Deviations: float targets (PyTorch truncates them) and targets out of [0, C) (PyTorch reads past the
    array) are errors; padding past a target's length may hold anything, and a target may equal blank."""
    with pytest.raises(RuntimeError, match="targets must hold integer class indices, got a Double tensor"):
        _case(targets=((1.0, 2.0, 0.0), (1.0, 1.0, 3.0)))(tl)
    for bad in (7, -1):
        with pytest.raises(IndexError, match=f"target {bad} is out of bounds for 4 classes"):
            _case(targets=((1, bad, 0), (1, 1, 3)))(tl)
    assert np.isfinite(_case(targets=((1, 2, -9), (1, 1, 3)), reduction="none")(tl).numpy()).all()
    assert np.isfinite(_case(targets=((1, 0, 0), (1, 1, 3)), reduction="none")(tl).numpy()).all()


def test_a_target_equal_to_blank(torch):
    """Meaningless but accepted, as PyTorch: the same loss; our gradient passes gradcheck, PyTorch's does not
    (at a sample's last frame its backward sets the blank's term where it should add to it)."""
    targets = np.array([[1, 0, 0], [1, 1, 3]])
    losses = [_functional(lib).ctc_loss(lib.tensor(_log_probs((5, 2, 4))), lib.tensor(targets), [5, 5], [2, 3],
                                        reduction="none").numpy() for lib in (tl, torch)]
    np.testing.assert_allclose(*losses, rtol=1e-12)
    x = tl.tensor(np.random.default_rng(9).standard_normal((5, 2, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda x: F.ctc_loss(x.log_softmax(2), tl.tensor(targets), (5, 5), (2, 3), reduction="none"), [x])
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    assert not torch.autograd.gradcheck(lambda x: torch.nn.functional.ctc_loss(
        x.log_softmax(2), torch.tensor(targets), (5, 5), (2, 3), reduction="none"), [xt], raise_exception=False)


# ---------------------------------------------------------------- devices

def test_devices_agree_with_the_cpu(device):
    lp, targets = _log_probs((7, 4, 5)), _targets(LABELS, "concatenated")
    lengths = [len(lab) for lab in LABELS]
    results = []
    for dev in ("cpu", device):
        x = tl.tensor(lp, device=dev, requires_grad=True)
        loss = F.ctc_loss(x, tl.tensor(targets, device=dev), tl.tensor(INPUT_LENGTHS, device=dev), lengths,
                          reduction="mean", zero_infinity=True)
        loss.backward()
        results.append((host(loss), host(x.grad)))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-10, atol=1e-14)
    with pytest.raises(IndexError, match="target 9 is out of bounds"):
        F.ctc_loss(tl.tensor(lp, device=device), tl.tensor(np.array([[1, 9], [1, 1], [2, 2], [3, 3]]), device=device),
                   INPUT_LENGTHS, [2, 2, 2, 2])
        sync(device)
