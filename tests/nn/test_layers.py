"""The layer modules of tinygrad_lab.nn against PyTorch's: outputs and gradients from the same
weights (float64), train/eval behaviour, default initialisation, repr and state_dict keys, and a
short training run. Every PyTorch comparison uses the `torch` fixture (skips without torch)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn

RTOL, ATOL = 1e-10, 1e-12


# ------------------------------------------------------------------ helpers
def _tl(t):
    """A torch tensor's values as a tinygrad_lab tensor (same dtype)."""
    return tl.tensor(t.detach().numpy())


def copy_weights(tl_model, torch_model) -> None:
    """Load torch_model's state_dict into tl_model (the interchange the layers promise)."""
    tl_model.load_state_dict({k: _tl(v) for k, v in torch_model.state_dict().items()})


def build_pair(torch, make, double: bool = True):
    """make(nn) -> module, built with both libraries; tinygrad_lab gets PyTorch's weights."""
    ours, theirs = make(nn), make(torch.nn)
    if double:
        ours.double()
        theirs.double()
    copy_weights(ours, theirs)
    return ours, theirs


def close(actual, expected, rtol: float = RTOL, atol: float = ATOL) -> None:
    a = actual.detach().numpy() if hasattr(actual, "detach") else np.asarray(actual)
    e = expected.detach().numpy() if hasattr(expected, "detach") else np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def run_both(torch, ours, theirs, *arrays, grad_inputs: bool = True, seed: int = 1):
    """Call both modules on the same inputs, backprop the same random upstream gradient, and check
    outputs, input gradients and parameter gradients agree. Float arrays become inputs that require
    grad (when grad_inputs); integer arrays (indices, class targets) are passed as they are."""
    xs_ours, xs_theirs = [], []
    for a in arrays:
        req = grad_inputs and a.dtype.kind == "f"
        xs_ours.append(tl.tensor(a, requires_grad=req))
        xs_theirs.append(torch.tensor(a, requires_grad=req))
    out_ours, out_theirs = ours(*xs_ours), theirs(*xs_theirs)
    close(out_ours, out_theirs)
    g = np.random.default_rng(seed).standard_normal(tuple(out_theirs.shape))
    (out_ours * tl.tensor(g)).sum().backward()
    (out_theirs * torch.tensor(g)).sum().backward()
    for xo, xt in zip(xs_ours, xs_theirs):
        if xt.requires_grad:
            close(xo.grad, xt.grad)
    p_ours, p_theirs = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(p_ours) == list(p_theirs)
    for name, pt in p_theirs.items():
        if pt.grad is None:
            assert p_ours[name].grad is None, name
        else:
            close(p_ours[name].grad, pt.grad)
    return out_ours, out_theirs


def randn(*shape, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# ------------------------------------------------------------------ forward + backward vs PyTorch
LAYER_CASES = [
    ("identity", lambda m: m.Identity(54, unused="x"), [(3, 4)]),
    ("linear", lambda m: m.Linear(4, 3), [(5, 4)]),
    ("linear-batched", lambda m: m.Linear(4, 3), [(2, 5, 4)]),
    ("linear-unbatched", lambda m: m.Linear(4, 3), [(4,)]),
    ("linear-nobias", lambda m: m.Linear(4, 3, bias=False), [(5, 4)]),
    ("bilinear", lambda m: m.Bilinear(3, 4, 2), [(5, 3), (5, 4)]),
    ("conv1d", lambda m: m.Conv1d(2, 4, 3), [(2, 2, 9)]),
    ("conv1d-args", lambda m: m.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2), [(2, 4, 11)]),
    ("conv2d", lambda m: m.Conv2d(2, 4, 3), [(2, 2, 6, 7)]),
    ("conv2d-args", lambda m: m.Conv2d(4, 6, (3, 2), stride=2, padding=1, dilation=(2, 1), groups=2, bias=False),
     [(2, 4, 9, 8)]),
    ("conv2d-stride-tuple", lambda m: m.Conv2d(3, 2, 2, stride=(1, 2), padding=(0, 1)), [(1, 3, 5, 6)]),
    ("conv2d-same", lambda m: m.Conv2d(2, 3, (4, 3), padding="same", dilation=(1, 2)), [(2, 2, 6, 7)]),
    ("conv2d-valid", lambda m: m.Conv2d(2, 3, 3, padding="valid"), [(2, 2, 6, 7)]),
    ("conv1d-same", lambda m: m.Conv1d(2, 3, 4, padding="same"), [(2, 2, 9)]),
    ("conv2d-unbatched", lambda m: m.Conv2d(2, 3, 3, padding=1), [(2, 5, 5)]),
    ("maxpool2d", lambda m: m.MaxPool2d(2), [(2, 3, 6, 6)]),
    ("maxpool2d-ceil-dilation", lambda m: m.MaxPool2d(3, stride=2, dilation=2, ceil_mode=True), [(1, 2, 9, 10)]),
    ("maxpool2d-args", lambda m: m.MaxPool2d(3, stride=2, padding=1), [(2, 3, 7, 8)]),
    ("avgpool2d", lambda m: m.AvgPool2d(2), [(2, 3, 6, 6)]),
    ("avgpool2d-args", lambda m: m.AvgPool2d((3, 2), stride=(2, 1), padding=1), [(2, 3, 7, 8)]),
    ("avgpool2d-exclude-pad", lambda m: m.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), [(2, 3, 8, 7)]),
    ("avgpool2d-divisor", lambda m: m.AvgPool2d(2, divisor_override=3), [(2, 3, 6, 6)]),
    ("adaptiveavgpool2d-1", lambda m: m.AdaptiveAvgPool2d((1, 1)), [(2, 3, 5, 6)]),
    ("adaptiveavgpool2d-uneven", lambda m: m.AdaptiveAvgPool2d(3), [(2, 3, 7, 5)]),
    ("flatten", lambda m: m.Flatten(), [(2, 3, 4, 5)]),
    ("flatten-range", lambda m: m.Flatten(0, 2), [(2, 3, 4, 5)]),
    ("unflatten", lambda m: m.Unflatten(1, (3, -1)), [(2, 12, 5)]),
    ("layernorm", lambda m: m.LayerNorm(4), [(3, 5, 4)]),
    ("layernorm-2d", lambda m: m.LayerNorm([5, 4]), [(3, 5, 4)]),
    ("layernorm-noaffine", lambda m: m.LayerNorm(4, elementwise_affine=False), [(3, 4)]),
    ("layernorm-nobias", lambda m: m.LayerNorm(4, bias=False), [(3, 4)]),
    ("relu", lambda m: m.ReLU(), [(4, 5)]),
    ("leakyrelu", lambda m: m.LeakyReLU(0.2), [(4, 5)]),
    ("elu", lambda m: m.ELU(alpha=0.7), [(4, 5)]),
    ("gelu", lambda m: m.GELU(), [(4, 5)]),
    ("gelu-tanh", lambda m: m.GELU(approximate="tanh"), [(4, 5)]),
    ("silu", lambda m: m.SiLU(), [(4, 5)]),
    ("tanh", lambda m: m.Tanh(), [(4, 5)]),
    ("sigmoid", lambda m: m.Sigmoid(), [(4, 5)]),
    ("softmax", lambda m: m.Softmax(dim=1), [(4, 5)]),
    ("softmax-last", lambda m: m.Softmax(dim=-1), [(2, 4, 5)]),
    ("logsoftmax", lambda m: m.LogSoftmax(dim=1), [(4, 5)]),
    ("dropout-eval-like-p0", lambda m: m.Dropout(0.0), [(4, 5)]),
    ("relu-inplace", lambda m: m.Sequential(m.Linear(4, 5), m.ReLU(inplace=True)), [(3, 4)]),
    ("leakyrelu-inplace", lambda m: m.Sequential(m.Linear(4, 5), m.LeakyReLU(0.1, inplace=True)), [(3, 4)]),
    ("elu-inplace", lambda m: m.Sequential(m.Linear(4, 5), m.ELU(inplace=True)), [(3, 4)]),
    ("silu-inplace", lambda m: m.Sequential(m.Linear(4, 5), m.SiLU(inplace=True)), [(3, 4)]),
    ("softmax-legacy-dim", lambda m: m.Softmax(), [(2, 3, 4)]),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'", "ignore:Implicit dimension choice")
@pytest.mark.parametrize("name,make,shapes", LAYER_CASES, ids=[c[0] for c in LAYER_CASES])
def test_layer_matches_pytorch(torch, name, make, shapes):
    ours, theirs = build_pair(torch, make)
    arrays = [randn(*s, seed=i) for i, s in enumerate(shapes)]
    run_both(torch, ours, theirs, *arrays)


def test_maxpool2d_return_indices_matches_pytorch(torch):
    x = randn(2, 3, 6, 5)
    (vo, io), (vt, it) = (nn.MaxPool2d(2, return_indices=True)(tl.tensor(x)),
                          torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x)))
    close(vo, vt)
    np.testing.assert_array_equal(io.numpy(), it.numpy())


def test_layers_keep_float32_by_default(torch):
    ours, theirs = build_pair(torch, lambda m: m.Sequential(m.Linear(4, 3), m.LayerNorm(3), m.GELU()), double=False)
    x = randn(5, 4).astype(np.float32)
    out_ours, out_theirs = ours(tl.tensor(x)), theirs(torch.tensor(x))
    close(out_ours, out_theirs, rtol=1e-5, atol=1e-6)


def test_embedding_matches_pytorch(torch):
    for kwargs in ({}, {"padding_idx": 1}, {"padding_idx": -2}):
        ours, theirs = build_pair(torch, lambda m, kw=kwargs: m.Embedding(7, 3, **kw))
        idx = np.array([[0, 1, 5], [1, 1, 6]], dtype=np.int64)
        run_both(torch, ours, theirs, idx)
        if kwargs:
            row = ours.padding_idx
            assert row == theirs.padding_idx
            np.testing.assert_array_equal(ours.weight.grad.numpy()[row], 0.0)


def test_embedding_max_norm_renormalises_weight_like_pytorch(torch):
    ours, theirs = build_pair(torch, lambda m: m.Embedding(6, 4, max_norm=1.0))
    idx = np.array([[0, 2], [2, 5]], dtype=np.int64)
    run_both(torch, ours, theirs, idx)
    close(ours.weight, theirs.weight)  # the looked-up rows were scaled down in place


def test_embedding_from_pretrained(torch):
    w = randn(4, 2)
    ours = nn.Embedding.from_pretrained(tl.tensor(w))
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(w))
    assert ours.weight.requires_grad is False and repr(ours) == repr(theirs)
    idx = [3, 0]
    close(ours(tl.tensor(idx)), theirs(torch.tensor(idx)))


# ------------------------------------------------------------------ losses
def _loss_inputs(kind: str):
    rng = np.random.default_rng(3)
    if kind == "regression":
        return rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    if kind == "classes":
        return rng.standard_normal((5, 4)), np.array([0, 3, 1, 1, 2], dtype=np.int64)
    if kind == "classes-ignore":
        return rng.standard_normal((5, 4)), np.array([0, 3, -100, 1, 2], dtype=np.int64)
    if kind == "classes-2d":
        return rng.standard_normal((2, 4, 3, 2)), rng.integers(0, 4, (2, 3, 2))
    if kind == "probs":
        p = rng.random((5, 4))
        return rng.standard_normal((5, 4)), p / p.sum(1, keepdims=True)
    if kind == "logprobs":
        x = rng.standard_normal((5, 4))
        return x - np.log(np.exp(x).sum(1, keepdims=True)), np.array([0, 3, 1, 1, 2], dtype=np.int64)
    if kind == "binary":
        return rng.uniform(0.05, 0.95, (4, 3)), rng.integers(0, 2, (4, 3)).astype(np.float64)
    if kind == "logits":
        return rng.standard_normal((4, 3)) * 2, rng.uniform(0, 1, (4, 3))
    raise AssertionError(kind)


W4 = [0.5, 1.0, 2.0, 0.25]
LOSS_CASES = [
    ("mse", lambda m, lib: m.MSELoss(), "regression"),
    ("mse-sum", lambda m, lib: m.MSELoss(reduction="sum"), "regression"),
    ("mse-none", lambda m, lib: m.MSELoss(reduction="none"), "regression"),
    ("l1", lambda m, lib: m.L1Loss(), "regression"),
    ("l1-none", lambda m, lib: m.L1Loss(reduction="none"), "regression"),
    ("smoothl1", lambda m, lib: m.SmoothL1Loss(), "regression"),
    ("smoothl1-beta", lambda m, lib: m.SmoothL1Loss(reduction="sum", beta=0.5), "regression"),
    ("ce", lambda m, lib: m.CrossEntropyLoss(), "classes"),
    ("ce-weight", lambda m, lib: m.CrossEntropyLoss(weight=lib.tensor(W4, dtype=lib.float64)), "classes"),
    ("ce-ignore", lambda m, lib: m.CrossEntropyLoss(ignore_index=-100), "classes-ignore"),
    ("ce-ignore-weight-smooth", lambda m, lib: m.CrossEntropyLoss(weight=lib.tensor(W4, dtype=lib.float64),
                                                                   label_smoothing=0.1), "classes-ignore"),
    ("ce-smoothing", lambda m, lib: m.CrossEntropyLoss(label_smoothing=0.2), "classes"),
    ("ce-sum", lambda m, lib: m.CrossEntropyLoss(reduction="sum"), "classes"),
    ("ce-none", lambda m, lib: m.CrossEntropyLoss(reduction="none"), "classes"),
    ("ce-2d", lambda m, lib: m.CrossEntropyLoss(), "classes-2d"),
    ("ce-probs", lambda m, lib: m.CrossEntropyLoss(), "probs"),
    ("nll", lambda m, lib: m.NLLLoss(), "logprobs"),
    ("nll-weight", lambda m, lib: m.NLLLoss(weight=lib.tensor(W4, dtype=lib.float64)), "logprobs"),
    ("nll-ignore", lambda m, lib: m.NLLLoss(ignore_index=3, reduction="sum"), "logprobs"),
    ("bce", lambda m, lib: m.BCELoss(), "binary"),
    ("bce-weight", lambda m, lib: m.BCELoss(weight=lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64)), "binary"),
    ("bce-none", lambda m, lib: m.BCELoss(reduction="none"), "binary"),
    ("bcelogits", lambda m, lib: m.BCEWithLogitsLoss(), "logits"),
    ("bcelogits-posweight", lambda m, lib: m.BCEWithLogitsLoss(pos_weight=lib.tensor([1.0, 3.0, 0.5],
                                                                                       dtype=lib.float64)), "logits"),
    ("bcelogits-both", lambda m, lib: m.BCEWithLogitsLoss(weight=lib.tensor([2.0, 1.0, 0.5], dtype=lib.float64),
                                                          pos_weight=lib.tensor([1.0, 3.0, 0.5], dtype=lib.float64),
                                                          reduction="sum"), "logits"),
]


@pytest.mark.parametrize("name,make,kind", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_loss_matches_pytorch(torch, name, make, kind):
    ours, theirs = make(nn, tl), make(torch.nn, torch)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    inp, target = _loss_inputs(kind)
    xo, xt = tl.tensor(inp, requires_grad=True), torch.tensor(inp, requires_grad=True)
    lo, lt = ours(xo, tl.tensor(target)), theirs(xt, torch.tensor(target))
    close(lo, lt)
    g = np.random.default_rng(9).standard_normal(tuple(lt.shape))
    (lo * tl.tensor(g)).sum().backward()
    (lt * torch.tensor(g)).sum().backward()
    close(xo.grad, xt.grad)


def test_loss_legacy_reduction_arguments(torch):
    with pytest.warns(UserWarning):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning):
        assert nn.L1Loss(reduce=False).reduction == "none"


# ------------------------------------------------------------------ dropout: train vs eval
def test_dropout_train_and_eval():
    tl.manual_seed(0)
    d = nn.Dropout(p=0.3)
    x = tl.ones(200, 100, requires_grad=True)
    y = d(x)
    arr = y.detach().numpy()
    kept = arr != 0
    assert abs(kept.mean() - 0.7) < 0.02                     # about 1-p survive
    np.testing.assert_allclose(arr[kept], 1 / 0.7)          # survivors scaled by 1/(1-p)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 1 / 0.7, 0.0))  # same mask in backward
    d.eval()
    assert d.training is False
    x2 = tl.tensor(randn(4, 5))
    np.testing.assert_array_equal(d(x2).numpy(), x2.numpy())  # identity in eval
    d.train()
    assert not np.array_equal(d(tl.ones(50, 50)).numpy(), np.ones((50, 50)))
    assert (nn.Dropout(1.0)(tl.ones(3, 3)).numpy() == 0).all()


def test_dropout_rejects_bad_p():
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_dropout_in_model_follows_model_mode(torch):
    def make(m):
        return m.Sequential(m.Linear(4, 8), m.ReLU(), m.Dropout(0.5), m.Linear(8, 2))
    ours, theirs = build_pair(torch, make)
    ours.eval()
    theirs.eval()
    assert all(not m.training for m in ours.modules())
    run_both(torch, ours, theirs, randn(6, 4))


# ------------------------------------------------------------------ batch norm: train vs eval
BN_CASES = [
    ("bn1d", lambda m: m.BatchNorm1d(3), (8, 3)),
    ("bn1d-3d", lambda m: m.BatchNorm1d(3, momentum=0.3), (4, 3, 5)),
    ("bn2d", lambda m: m.BatchNorm2d(3), (4, 3, 5, 6)),
    ("bn2d-cumulative", lambda m: m.BatchNorm2d(3, momentum=None), (4, 3, 2, 3)),
    ("bn2d-noaffine", lambda m: m.BatchNorm2d(3, affine=False, eps=1e-3), (4, 3, 2, 3)),
    ("bn1d-nostats", lambda m: m.BatchNorm1d(3, track_running_stats=False), (8, 3)),
    ("bn1d-nobias", lambda m: m.BatchNorm1d(3, bias=False), (8, 3)),
]


@pytest.mark.parametrize("name,make,shape", BN_CASES, ids=[c[0] for c in BN_CASES])
def test_batchnorm_train_then_eval_matches_pytorch(torch, name, make, shape):
    ours, theirs = build_pair(torch, make)
    # non-trivial affine parameters, the same in both
    if theirs.weight is not None:
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(1 + 0.3 * randn(3, seed=7)))
            if theirs.bias is not None:
                theirs.bias.copy_(torch.tensor(randn(3, seed=8)))
        copy_weights(ours, theirs)
    for step in range(4):  # training steps update the running statistics
        x = 2.0 + 3.0 * randn(*shape, seed=10 + step)
        run_both(torch, ours, theirs, x, seed=step)
    for key, value in theirs.state_dict().items():
        close(ours.state_dict()[key], value)
    if theirs.track_running_stats:
        assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked) == 4
        assert ours.num_batches_tracked.dtype == tl.int64
    ours.eval()
    theirs.eval()
    before = {k: v.numpy().copy() for k, v in ours.state_dict().items()}
    run_both(torch, ours, theirs, randn(*shape, seed=99))  # eval: running statistics
    for key, value in ours.state_dict().items():  # ...which eval does not change
        np.testing.assert_array_equal(value.numpy(), before[key])


def test_batchnorm_rejects_wrong_rank():
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(tl.ones(2, 3, 4))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.BatchNorm1d(3)(tl.ones(2, 3, 4, 5))


def test_batchnorm_reset_running_stats():
    bn = nn.BatchNorm1d(2)
    bn(tl.tensor(randn(5, 2)))
    bn.reset_running_stats()
    np.testing.assert_array_equal(bn.running_mean.numpy(), 0)
    np.testing.assert_array_equal(bn.running_var.numpy(), 1)
    assert int(bn.num_batches_tracked) == 0


# ------------------------------------------------------------------ default initialisation
def _values(t) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


def test_linear_and_conv_default_init_within_pytorch_bounds():
    tl.manual_seed(0)
    for layer, fan_in in ((nn.Linear(200, 300), 200), (nn.Conv2d(6, 40, 5, groups=2), 3 * 25),
                          (nn.Conv1d(4, 50, 3), 12)):
        bound = 1 / math.sqrt(fan_in)  # kaiming_uniform_(a=√5) gives exactly this bound
        w, b = _values(layer.weight), _values(layer.bias)
        assert layer.weight.dtype == tl.float32 and layer.weight.requires_grad
        assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
        assert np.abs(w).max() > 0.95 * bound                       # uses the whole range...
        assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound    # ...uniformly
        assert abs(w.mean()) < 0.05 * bound
    shapes = {"linear": (nn.Linear(5, 3), (3, 5), (3,)), "conv1d": (nn.Conv1d(4, 6, 3, groups=2), (6, 2, 3), (6,)),
              "conv2d": (nn.Conv2d(2, 4, (3, 5)), (4, 2, 3, 5), (4,))}
    for layer, ws, bs in shapes.values():
        assert tuple(layer.weight.shape) == ws and tuple(layer.bias.shape) == bs


def test_bilinear_default_init():
    tl.manual_seed(0)
    layer = nn.Bilinear(30, 20, 40)
    bound = 1 / math.sqrt(30)
    assert tuple(layer.weight.shape) == (40, 30, 20) and tuple(layer.bias.shape) == (40,)
    w = _values(layer.weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(_values(layer.bias)).max() <= bound


def test_embedding_default_init_is_standard_normal():
    tl.manual_seed(0)
    emb = nn.Embedding(1000, 20, padding_idx=3)
    w = _values(emb.weight)
    assert w.shape == (1000, 20)
    np.testing.assert_array_equal(w[3], 0.0)
    assert abs(w.mean()) < 0.03 and abs(w.std() - 1.0) < 0.03


def test_norm_layers_default_init(torch):
    for make in (lambda m: m.BatchNorm1d(4), lambda m: m.BatchNorm2d(4), lambda m: m.LayerNorm((2, 4))):
        ours, theirs = make(nn), make(torch.nn)
        sd_ours, sd_theirs = ours.state_dict(), theirs.state_dict()
        assert list(sd_ours) == list(sd_theirs)
        for k, v in sd_theirs.items():
            assert tuple(sd_ours[k].shape) == tuple(v.shape), k
            assert repr(sd_ours[k].dtype).rpartition(".")[2] == repr(v.dtype).rpartition(".")[2], k
            np.testing.assert_array_equal(sd_ours[k].numpy(), v.numpy())


def test_factory_dtype_argument():
    assert nn.Linear(2, 3, dtype=tl.float64).weight.dtype == tl.float64
    assert nn.Conv2d(1, 2, 3, dtype=tl.float64).bias.dtype == tl.float64
    bn = nn.BatchNorm1d(3, dtype=tl.float64)
    assert bn.running_var.dtype == tl.float64 and bn.num_batches_tracked.dtype == tl.int64


# ------------------------------------------------------------------ repr and state_dict keys
REPR_CASES = [
    "nn.Identity()",
    "nn.Linear(2, 3)",
    "nn.Linear(2, 3, bias=False)",
    "nn.Bilinear(2, 3, 4)",
    "nn.Conv1d(1, 2, 3)",
    "nn.Conv1d(2, 4, 3, stride=2, padding=1, dilation=2, groups=2, bias=False)",
    "nn.Conv2d(1, 8, 3)",
    "nn.Conv2d(2, 4, (3, 5), stride=2, padding=1, dilation=2, groups=2, bias=False)",
    "nn.Conv2d(2, 4, 3, padding='same')",
    "nn.Conv2d(2, 4, 3, padding='valid')",
    "nn.MaxPool2d(2)",
    "nn.MaxPool2d((2, 3), stride=1, padding=1)",
    "nn.MaxPool2d(3, 2, 1, ceil_mode=True)",
    "nn.AvgPool2d(2)",
    "nn.AvgPool2d(3, stride=2, padding=1)",
    "nn.AdaptiveAvgPool2d((1, 1))",
    "nn.AdaptiveAvgPool2d(2)",
    "nn.Flatten()",
    "nn.Flatten(0, 2)",
    "nn.Unflatten(1, (2, 3))",
    "nn.Dropout()",
    "nn.Dropout(0.1, inplace=True)",
    "nn.BatchNorm1d(3)",
    "nn.BatchNorm2d(3, momentum=None, affine=False, track_running_stats=False)",
    "nn.BatchNorm2d(3, eps=1e-3, bias=False)",
    "nn.LayerNorm(4)",
    "nn.LayerNorm([2, 3], eps=1e-6, elementwise_affine=False)",
    "nn.LayerNorm(4, bias=False)",
    "nn.Embedding(10, 3)",
    "nn.Embedding(10, 3, padding_idx=0)",
    "nn.Embedding(10, 3, padding_idx=-1, max_norm=1.0)",
    "nn.ReLU()",
    "nn.ReLU(inplace=True)",
    "nn.LeakyReLU()",
    "nn.LeakyReLU(0.2, inplace=True)",
    "nn.ELU()",
    "nn.ELU(0.5)",
    "nn.GELU()",
    "nn.GELU('tanh')",
    "nn.SiLU()",
    "nn.Tanh()",
    "nn.Sigmoid()",
    "nn.Softmax(dim=1)",
    "nn.Softmax()",
    "nn.LogSoftmax(1)",
    "nn.MSELoss()",
    "nn.L1Loss()",
    "nn.SmoothL1Loss()",
    "nn.CrossEntropyLoss()",
    "nn.NLLLoss()",
    "nn.BCELoss()",
    "nn.BCEWithLogitsLoss()",
    ("nn.Sequential(nn.Conv2d(1, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), "
     "nn.Dropout(0.25), nn.Linear(8 * 13 * 13, 10), nn.LogSoftmax(dim=1))"),
]


@pytest.mark.parametrize("expr", REPR_CASES)
def test_repr_and_state_dict_keys_match_pytorch(torch, expr):
    ours, theirs = eval(expr, {"nn": nn}), eval(expr, {"nn": torch.nn})
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for (k, v), (_, w) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert tuple(v.shape) == tuple(w.shape), k


def test_state_dict_round_trip_back_to_pytorch(torch):
    def make(m):
        return m.Sequential(m.Conv2d(1, 2, 3), m.BatchNorm2d(2), m.Flatten(), m.Linear(8, 3))
    ours, theirs = make(nn), make(torch.nn)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = randn(2, 1, 4, 4).astype(np.float32)
    ours.eval()
    theirs.eval()
    close(ours(tl.tensor(x)), theirs(torch.tensor(x)), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ constructor errors as PyTorch
def test_conv_argument_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="Invalid padding string"):
        nn.Conv2d(1, 1, 3, padding="full")
    with pytest.raises(ValueError, match="strided convolutions"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv1d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


def test_embedding_padding_idx_out_of_range():
    with pytest.raises(AssertionError):
        nn.Embedding(5, 2, padding_idx=5)


# ------------------------------------------------------------------ end to end
def _sgd_run(lib, model, data, target, loss_fn, steps: int, lr: float):
    losses = []
    for _ in range(steps):
        model.zero_grad()
        loss = loss_fn(model(data), target)
        loss.backward()
        with lib.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        losses.append(loss.item())
    return losses


def test_mlp_sgd_training_matches_pytorch(torch):
    def make(m):
        return m.Sequential(m.Linear(4, 16), m.ReLU(), m.Linear(16, 16), m.Tanh(), m.Linear(16, 3))
    ours, theirs = build_pair(torch, make)
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((32, 4)), rng.integers(0, 3, 32)
    l_ours = _sgd_run(tl, ours, tl.tensor(x), tl.tensor(y), nn.CrossEntropyLoss(), 20, 0.1)
    l_theirs = _sgd_run(torch, theirs, torch.tensor(x), torch.tensor(y), torch.nn.CrossEntropyLoss(), 20, 0.1)
    np.testing.assert_allclose(l_ours, l_theirs, rtol=1e-10)
    assert l_ours[-1] < l_ours[0]
    for (k, v), (_, w) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        close(v, w, rtol=1e-9, atol=1e-12)


def test_small_cnn_training_matches_pytorch(torch):
    def make(m):
        return m.Sequential(m.Conv2d(1, 4, 3, padding=1), m.BatchNorm2d(4), m.ReLU(), m.MaxPool2d(2),
                            m.Conv2d(4, 4, 3, groups=2), m.GELU(), m.AdaptiveAvgPool2d(1), m.Flatten(),
                            m.Linear(4, 3))
    ours, theirs = build_pair(torch, make)
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((6, 1, 8, 8)), rng.integers(0, 3, 6)
    l_ours = _sgd_run(tl, ours, tl.tensor(x), tl.tensor(y), nn.CrossEntropyLoss(), 5, 0.1)
    l_theirs = _sgd_run(torch, theirs, torch.tensor(x), torch.tensor(y), torch.nn.CrossEntropyLoss(), 5, 0.1)
    np.testing.assert_allclose(l_ours, l_theirs, rtol=1e-9)
    ours.eval()
    theirs.eval()
    close(ours(tl.tensor(x)), theirs(torch.tensor(x)), rtol=1e-9, atol=1e-12)
