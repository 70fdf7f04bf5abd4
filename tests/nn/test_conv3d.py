"""The 3-d members of the convolution, pooling and normalisation families (F.conv3d, conv_transpose3d,
max/avg/adaptive-max/LP pooling, max_unpool3d; Conv3d, ConvTranspose3d, MaxPool3d, AvgPool3d,
AdaptiveMaxPool3d, MaxUnpool3d, LPPool3d, BatchNorm3d, InstanceNorm3d) against PyTorch: values and
gradients (float32 and float64, batched and unbatched), module parity from the same weights, reprs,
and PyTorch's exception types for bad input. Finite differences check the gradients independently."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn, seams
from tinygrad_lab.autograd import gradcheck, gradgradcheck
from tinygrad_lab.ops import conv as C

from ._pairs import build_pair, compare, randn

DTYPES = ["float64", "float32"]

# PyTorch warns that it pads a copy for padding='same' with an even kernel; we pad silently
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")


# ---------------------------------------------------------------- convolution

CONV3D = {  # (input shape, weight shape, bias, keyword arguments)
    "plain": ((2, 3, 4, 5, 6), (4, 3, 2, 3, 2), True, {}),
    "stride padding": ((2, 2, 5, 6, 7), (3, 2, 3, 3, 3), True, {"stride": (2, 1, 3), "padding": (1, 2, 0)}),
    "dilation": ((1, 2, 7, 6, 5), (2, 2, 2, 3, 2), False, {"dilation": (3, 1, 2), "padding": 1}),
    "groups": ((2, 4, 4, 5, 4), (6, 2, 3, 2, 3), True, {"groups": 2, "stride": 2, "padding": 1}),
    "depthwise": ((1, 3, 5, 4, 4), (3, 1, 3, 3, 3), True, {"groups": 3, "padding": 1}),
    "same even kernel": ((2, 2, 5, 4, 6), (3, 2, 4, 2, 3), True, {"padding": "same", "dilation": (1, 3, 1)}),
    "valid": ((1, 2, 4, 4, 4), (2, 2, 3, 2, 1), True, {"padding": "valid"}),
    "kernel as large as input": ((2, 2, 3, 2, 4), (3, 2, 3, 2, 4), True, {}),
    "unbatched": ((3, 4, 5, 6), (2, 3, 2, 2, 3), True, {"stride": (1, 2, 2), "padding": (0, 1, 1)}),
    "unbatched groups no bias": ((4, 3, 4, 5), (4, 2, 2, 3, 2), False, {"groups": 2, "dilation": (2, 1, 2)}),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONV3D.values(), ids=CONV3D.keys())
def test_conv3d_matches_torch(torch, dtype, case):
    xs, ws, bias, kw = case
    arrays = [randn(*xs), randn(*ws, seed=1)] + ([randn(ws[0], seed=2)] if bias else [])
    outs, _ = compare(torch, lambda lib, *t: lib.nn.functional.conv3d(*t, **kw), arrays, dtype)
    assert outs[0].dim() == len(xs)


CONV_T3D = {  # (input shape, weight shape, bias, keyword arguments)
    "plain": ((2, 3, 3, 4, 2), (3, 4, 2, 3, 2), True, {}),
    "stride padding output_padding": ((2, 2, 3, 3, 4), (2, 3, 3, 2, 3), True,
                                      {"stride": (2, 3, 2), "padding": (1, 0, 1), "output_padding": (1, 2, 0)}),
    "groups dilation": ((1, 4, 3, 2, 3), (4, 2, 2, 3, 2), True, {"groups": 2, "dilation": (2, 1, 3), "stride": 2}),
    "output_padding below dilation": ((2, 2, 2, 3, 2), (2, 2, 2, 2, 2), False,
                                      {"stride": 1, "dilation": 3, "output_padding": 2}),
    "unbatched": ((3, 3, 2, 4), (3, 2, 3, 2, 2), True, {"stride": 2, "padding": 1, "output_padding": 1}),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONV_T3D.values(), ids=CONV_T3D.keys())
def test_conv_transpose3d_matches_torch(torch, dtype, case):
    xs, ws, bias, kw = case
    arrays = [randn(*xs), randn(*ws, seed=1)] + ([randn(ws[1] * kw.get("groups", 1), seed=2)] if bias else [])
    compare(torch, lambda lib, *t: lib.nn.functional.conv_transpose3d(*t, **kw), arrays, dtype)


def test_conv_transpose3d_is_the_adjoint_of_conv3d():
    """<conv3d(x, w), y> == <x, conv_transpose3d(y, w)> for every x and y."""
    rng = np.random.default_rng(0)
    w = tl.tensor(rng.standard_normal((4, 3, 3, 2, 3)))
    x = tl.tensor(rng.standard_normal((2, 3, 7, 6, 8)))
    y = tl.tensor(rng.standard_normal((2, 4, 4, 4, 4)))
    F = nn.functional
    lhs = (F.conv3d(x, w, stride=2, padding=1) * y).sum().item()
    rhs = (x * F.conv_transpose3d(y, w, stride=2, padding=1, output_padding=(0, 0, 1))).sum().item()
    assert math.isclose(lhs, rhs, rel_tol=1e-12)


def test_conv3d_in_chunks_of_images_matches_torch(torch, monkeypatch):
    """A batch whose columns exceed the workspace's cap is convolved a few images at a time, in 3-d too."""
    x, w = randn(5, 2, 4, 5, 3), randn(3, 2, 2, 3, 2, seed=1)
    per_image = 2 * 12 * (3 * 5 * 4) * 8  # C * K * output positions (3, 5, 4) * itemsize
    monkeypatch.setattr(C, "_WORKSPACE_MAX", 2 * per_image)
    calls, real = [], C.im2col
    monkeypatch.setattr(C, "im2col", lambda x, geo: calls.append(geo.N) or real(x, geo))
    compare(torch, lambda lib, x, w: lib.nn.functional.conv3d(x, w, padding=(0, 1, 1)), [x, w])
    assert calls == [2, 2, 1] * 2  # the forward, and the weight gradient's columns again


def test_im2col_seam_takes_a_learners_3d_columns():
    """conv3d's columns are (C, kd, kh, kw, OD, OH, OW, N); a learner's im2col that returns another shape is
    told the layout it must have."""
    x, w = tl.tensor(randn(2, 2, 4, 3, 5)), tl.tensor(randn(3, 2, 2, 2, 3, seed=1))
    want = nn.functional.conv3d(x, w, padding=1).numpy()
    with seams.replace("im2col", lambda x, geo: C.im2col(x, geo).copy()):
        np.testing.assert_array_equal(nn.functional.conv3d(x, w, padding=1).numpy(), want)
    with seams.replace("im2col", lambda x, geo: C.im2col(x, geo)[:, 0].copy()):
        with pytest.raises(RuntimeError, match=re.escape("(C, kd, kh, kw, OD, OH, OW, N) = [2, 2, 2, 3, 5, 4, 5, 2]")):
            nn.functional.conv3d(x, w, padding=1)


# ---------------------------------------------------------------- pooling

MAX_POOL3D = {  # (input shape, keyword arguments)
    "kernel 2": ((2, 3, 4, 6, 5), {"kernel_size": 2}),
    "stride padding": ((2, 2, 5, 6, 7), {"kernel_size": (3, 2, 3), "stride": (2, 1, 2), "padding": (1, 1, 0)}),
    "dilation ceil_mode": ((1, 2, 7, 8, 6), {"kernel_size": 2, "stride": 2, "dilation": (2, 1, 3), "ceil_mode": True}),
    "overlapping ceil_mode padding": ((2, 1, 6, 5, 7), {"kernel_size": 3, "stride": 2, "padding": 1,
                                                        "ceil_mode": True}),
    "unbatched": ((3, 5, 4, 6), {"kernel_size": (2, 3, 2), "stride": 1}),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", MAX_POOL3D.values(), ids=MAX_POOL3D.keys())
def test_max_pool3d_values_indices_and_gradient_match_torch(torch, dtype, case):
    shape, kw = case
    outs, _ = compare(torch, lambda lib, x: lib.nn.functional.max_pool3d(x, return_indices=True, **kw),
                      [randn(*shape)], dtype)
    assert outs[1].dtype == tl.int64
    compare(torch, lambda lib, x: lib.nn.functional.max_pool3d(x, **kw), [randn(*shape)], dtype)


def test_max_pool3d_ties_minus_inf_and_nan_follow_torch(torch):
    """Ties go to the first element of a window; a window of -inf that reaches into the padding points at
    its first input element; NaN wins."""
    ties = np.zeros((1, 2, 4, 4, 4))
    compare(torch, lambda lib, x: lib.nn.functional.max_pool3d(x, 2, stride=1, return_indices=True), [ties])
    x = randn(1, 1, 4, 5, 4)
    x[..., :3, :3, :3] = -np.inf
    compare(torch, lambda lib, x: lib.nn.functional.max_pool3d(x, 3, stride=2, padding=1, return_indices=True), [x])
    x = randn(2, 4, 4, 4)
    x[0, 1, 2, 3], x[1, 0, 0, 0] = np.nan, np.nan
    ours = nn.functional.max_pool3d(tl.tensor(x), 2, return_indices=True)
    theirs = torch.nn.functional.max_pool3d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())


AVG_POOL3D = {  # (input shape, keyword arguments)
    "kernel 2": ((2, 3, 4, 6, 5), {"kernel_size": 2}),
    "padding counted": ((2, 2, 5, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    "padding not counted ceil_mode": ((1, 2, 5, 7, 6), {"kernel_size": (2, 3, 3), "stride": (2, 2, 1), "padding": 1,
                                                       "ceil_mode": True, "count_include_pad": False}),
    "ceil_mode clipped windows": ((2, 1, 5, 5, 5), {"kernel_size": 2, "ceil_mode": True}),
    "divisor_override": ((2, 2, 4, 5, 6), {"kernel_size": (2, 3, 2), "stride": 1, "divisor_override": 5}),
    "unbatched": ((3, 5, 4, 6), {"kernel_size": (3, 2, 2), "stride": (1, 2, 2), "padding": (1, 0, 1)}),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", AVG_POOL3D.values(), ids=AVG_POOL3D.keys())
def test_avg_pool3d_matches_torch(torch, dtype, case):
    shape, kw = case
    compare(torch, lambda lib, x: lib.nn.functional.avg_pool3d(x, **kw), [randn(*shape)], dtype)


ADAPTIVE = {  # (input shape, output_size)
    "even windows": ((2, 3, 4, 6, 8), 2),
    "uneven overlapping windows": ((2, 2, 7, 5, 9), (3, 4, 2)),
    "None keeps a size": ((1, 2, 5, 6, 7), (None, 4, 3)),
    "more outputs than inputs": ((3, 3, 2, 5), (5, 2, 7)),  # unbatched; windows repeat
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ADAPTIVE.values(), ids=ADAPTIVE.keys())
def test_adaptive_max_pool3d_matches_torch(torch, dtype, case):
    shape, size = case
    outs, _ = compare(torch, lambda lib, x: lib.nn.functional.adaptive_max_pool3d(x, size, return_indices=True),
                      [randn(*shape)], dtype)
    assert outs[1].dtype == tl.int64
    compare(torch, lambda lib, x: lib.nn.functional.adaptive_max_pool3d(x, size), [np.zeros(shape)], dtype)  # ties


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_pool3d_with_indices_and_max_unpool3d_match_torch(torch, dtype):
    def pool_unpool(lib, x, *args, **kw):
        F = lib.nn.functional
        y, idx = F.max_pool3d_with_indices(x, *args, **kw)
        return y, idx, F.max_unpool3d(y, idx, *args, **kw, output_size=x.shape[-3:])

    compare(torch, lambda lib, x: pool_unpool(lib, x, 2), [randn(2, 3, 4, 6, 4)], dtype)
    compare(torch, lambda lib, x: pool_unpool(lib, x, (2, 3, 2), stride=(2, 2, 1), padding=(1, 1, 0)),
            [randn(2, 3, 5, 6, 4)], dtype)
    compare(torch, lambda lib, x: pool_unpool(lib, x, 3, stride=2, padding=1), [randn(3, 5, 6, 7)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args,kw,shape", [
    ((2, 2), {}, (2, 3, 4, 6, 5)),
    ((3, (2, 3, 2)), {"stride": (1, 2, 2), "ceil_mode": True}, (1, 2, 5, 6, 5)),
    ((1, 2), {}, (3, 4, 4, 4)),  # p = 1: the window sums; unbatched
])
def test_lp_pool3d_matches_torch(torch, dtype, args, kw, shape):
    x = np.abs(randn(*shape)) + 0.1  # positive, so that odd powers have real roots
    compare(torch, lambda lib, x: lib.nn.functional.lp_pool3d(x, *args, **kw), [x], dtype)


# ---------------------------------------------------------------- finite differences (no PyTorch)

@pytest.mark.parametrize("fn,shapes", [
    (lambda x, w, b: C.conv3d(x, w, b, stride=(2, 1, 1), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2),
     [(1, 4, 4, 5, 3), (2, 2, 2, 2, 2), (2,)]),
    (lambda x, w, b: C.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=(1, 0, 1)),
     [(1, 2, 2, 3, 2), (2, 2, 3, 2, 2), (2,)]),
    (lambda x: C.max_pool3d(x, (2, 3, 2), stride=(1, 2, 2), padding=1, ceil_mode=True), [(1, 2, 3, 5, 4)]),
    (lambda x: C.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), [(1, 2, 4, 5, 4)]),
    (lambda x: C.adaptive_max_pool3d(x, (2, 3, 2)), [(2, 3, 5, 4)]),
])
def test_3d_ops_pass_gradcheck_and_gradgradcheck(fn, shapes):
    """Distinct values, so that no max is tied; the double backward too (the backward is made of ops)."""
    inputs = [tl.tensor(randn(*s, seed=i), requires_grad=True) for i, s in enumerate(shapes)]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_3d_ops_on_each_device_agree_with_the_cpu(device):
    x, w, b = randn(2, 2, 5, 4, 6), randn(4, 2, 3, 2, 3, seed=1), randn(4, seed=2)
    g = randn(2, 2, 4, 3, 5, seed=3)

    def run(dev):
        X, W, B = (tl.tensor(a, device=dev, requires_grad=True) for a in (x, w, b))
        h = C.conv3d(X, W, B, padding=1)  # (2, 4, 5, 4, 6)
        h = C.max_pool3d(h, 2, stride=2, padding=1) + C.avg_pool3d(h, 2, 2, 1, count_include_pad=False)
        h = C.conv_transpose3d(C.adaptive_max_pool3d(h, (2, 2, 3)), W)  # (2, 2, 4, 3, 5)
        h.backward(tl.tensor(g, device=dev))
        return [t.detach().cpu().numpy() for t in (h, X.grad, W.grad, B.grad)]

    for ours, ref in zip(run(device), run("cpu")):
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- modules

MODULES = [  # (make(nn), input shape)
    (lambda m: m.Conv3d(3, 4, 2), (2, 3, 4, 5, 4)),
    (lambda m: m.Conv3d(4, 6, (3, 2, 3), stride=(2, 1, 1), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2,
                        bias=False), (2, 4, 5, 6, 5)),
    (lambda m: m.Conv3d(2, 3, 3, padding="same"), (2, 3, 4, 5)),  # unbatched
    (lambda m: m.Conv3d(2, 2, (2, 3, 2), padding=(1, 1, 2), padding_mode="reflect"), (1, 2, 4, 5, 5)),
    (lambda m: m.Conv3d(2, 2, 3, padding=1, padding_mode="replicate"), (2, 3, 3, 4)),
    (lambda m: m.Conv3d(2, 4, 2, stride=2, padding=(2, 1, 1), padding_mode="circular", groups=2), (1, 2, 4, 5, 3)),
    (lambda m: m.ConvTranspose3d(3, 4, 2), (2, 3, 3, 2, 4)),
    (lambda m: m.ConvTranspose3d(4, 2, (2, 3, 2), stride=(2, 1, 3), padding=(0, 1, 1), output_padding=(1, 0, 2),
                                 groups=2, dilation=(1, 2, 1)), (1, 4, 3, 3, 2)),
    (lambda m: m.ConvTranspose3d(2, 3, 3, stride=2, bias=False), (2, 2, 3, 2)),  # unbatched
    (lambda m: m.MaxPool3d(2), (2, 3, 4, 5, 6)),
    (lambda m: m.MaxPool3d((3, 2, 2), stride=(2, 1, 2), padding=1, dilation=(1, 2, 1), ceil_mode=True),
     (1, 2, 5, 6, 7)),
    (lambda m: m.MaxPool3d(2, return_indices=True), (3, 4, 4, 5)),
    (lambda m: m.AvgPool3d(2), (2, 3, 4, 5, 6)),
    (lambda m: m.AvgPool3d(3, 2, 1, True, False), (1, 2, 5, 6, 7)),
    (lambda m: m.AvgPool3d((2, 3, 2), stride=1, divisor_override=7), (3, 4, 4, 5)),
    (lambda m: m.AdaptiveMaxPool3d((2, None, 3)), (2, 3, 5, 4, 7)),
    (lambda m: m.AdaptiveMaxPool3d(3, return_indices=True), (2, 5, 4, 7)),
    (lambda m: m.LPPool3d(2, 2), (2, 3, 4, 4, 6)),
    (lambda m: m.LPPool3d(1.5, (2, 3, 2), stride=1, ceil_mode=True), (2, 4, 5, 4)),
    (lambda m: m.BatchNorm3d(3), (4, 3, 2, 3, 4)),
    (lambda m: m.BatchNorm3d(3, momentum=None, affine=False), (2, 3, 3, 2, 2)),
    (lambda m: m.InstanceNorm3d(3), (2, 3, 3, 4, 2)),
    (lambda m: m.InstanceNorm3d(3, affine=True, track_running_stats=True), (3, 4, 3, 2)),  # unbatched
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make,shape", MODULES, ids=lambda v: repr(v(nn)) if callable(v) else str(v))
def test_modules_match_torch(torch, dtype, make, shape):
    """From the same weights (and buffers), the same outputs and gradients of inputs and parameters, and
    the same repr; batch norm's running statistics move the same way."""
    ours, theirs = build_pair(torch, make, dtype)
    assert repr(ours) == repr(theirs)
    x = np.abs(randn(*shape)) + 0.1 if isinstance(ours, nn.LPPool3d) else randn(*shape)  # real roots
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [x], dtype, (ours, theirs))
    for name, buf in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[name].numpy(), buf.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_norms_in_eval_use_the_running_statistics(torch):
    for make, shape in [(lambda m: m.BatchNorm3d(3), (2, 3, 2, 3, 4)),
                        (lambda m: m.InstanceNorm3d(3, affine=True, track_running_stats=True), (2, 3, 3, 2, 2))]:
        ours, theirs = build_pair(torch, make)
        for _ in range(2):  # train a little: the running statistics move off their start
            ours(tl.tensor(randn(*shape, seed=5) * 3 + 1))
            theirs(torch.tensor(randn(*shape, seed=5) * 3 + 1))
        ours.eval(), theirs.eval()
        compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [randn(*shape)], modules=(ours, theirs))


def test_conv_transpose3d_output_size_picks_output_padding(torch):
    ours, theirs = build_pair(torch, lambda m: m.ConvTranspose3d(2, 3, 2, stride=(2, 3, 2)))
    x = randn(1, 2, 3, 2, 3)
    for size in [(6, 5, 6), (7, 7, 7), [1, 3, 7, 6, 6]]:
        got = ours(tl.tensor(x), output_size=size)
        want = theirs(torch.tensor(x), output_size=size)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=re.escape("requested an output size of [6, 8, 6], but valid sizes range")):
        ours(tl.tensor(x), output_size=(6, 8, 6))


def test_conv3d_init_follows_torch(torch):
    """kaiming_uniform_(a=√5): weight and bias in U(-1/√fan_in, 1/√fan_in), fan_in = in/groups × prod(kernel)."""
    tl.manual_seed(0)
    for m, fan_in in [(nn.Conv3d(4, 6, (3, 2, 2), groups=2), 2 * 12), (nn.ConvTranspose3d(4, 6, 2, groups=2), 3 * 8)]:
        bound = 1 / math.sqrt(fan_in)
        assert 0.8 * bound < float(m.weight.abs().max()) <= bound
        assert float(m.bias.abs().max()) <= bound
    assert tuple(nn.Conv3d(4, 6, (3, 2, 2), groups=2).weight.shape) == (6, 2, 3, 2, 2)
    assert tuple(nn.ConvTranspose3d(4, 6, 2, groups=2).weight.shape) == (4, 3, 2, 2, 2)


def test_top_level_names_are_torchs():
    """tinygrad_lab.conv3d etc. where torch has them at the top level (torch has no avg_pool3d there)."""
    F = nn.functional
    for name in ("conv3d", "conv_transpose3d", "max_pool3d"):
        assert getattr(tl, name) is getattr(F, name)
    assert not hasattr(tl, "avg_pool3d")


# ---------------------------------------------------------------- bad input

ERRORS = {  # call(lib) -> what PyTorch raises too, and our message (a regex)
    "conv3d 3-d input": (lambda lib: lib.nn.functional.conv3d(lib.ones(2, 3, 4), lib.ones(2, 3, 1, 1, 1)),
                         r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv3d, but got input of size: "
                         r"\[2, 3, 4\]"),
    "conv3d 4-d weight": (lambda lib: lib.nn.functional.conv3d(lib.ones(1, 3, 4, 4, 4), lib.ones(2, 3, 1, 1)),
                          r"Expected 5-dimensional weight for conv3d, but got 4-dimensional weight of size "
                          r"\[2, 3, 1, 1\]"),
    "conv3d kernel too large": (lambda lib: lib.nn.functional.conv3d(lib.ones(1, 3, 4, 4, 4), lib.ones(2, 3, 5, 1, 1)),
                                r"Calculated padded input size per channel: \(4 x 4 x 4\)\. Kernel size: "
                                r"\(5 x 1 x 1\).*conv3d of input\[1, 3, 4, 4, 4\]"),
    "conv3d channels": (lambda lib: lib.nn.functional.conv3d(lib.ones(1, 4, 4, 4, 4), lib.ones(2, 3, 1, 1, 1)),
                        r"expected input\[1, 4, 4, 4, 4\] to have 3 channels, but got 4 channels"),
    "conv3d stride pair": (lambda lib: lib.nn.functional.conv3d(lib.ones(1, 3, 4, 4, 4), lib.ones(2, 3, 1, 1, 1),
                                                                stride=(1, 2)),
                           r"expected stride to be a single integer value or a list of 3 values"),
    "conv_transpose3d 3-d input": (lambda lib: lib.nn.functional.conv_transpose3d(lib.ones(2, 3, 4),
                                                                                  lib.ones(3, 2, 1, 1, 1)),
                                   r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv_transpose3d"),
    "max_pool3d 2-d input": (lambda lib: lib.nn.functional.max_pool3d(lib.ones(2, 3), 2),
                             r"max_pool3d: expected a non-empty 4D \(unbatched\) or 5D \(batched\) input, but got "
                             r"input of size \[2, 3\]"),
    "max_pool3d kernel pair": (lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 3, 4, 4, 4), (2, 2)),
                               r"max_pool3d: kernel_size must either be a single int, or a tuple of 3 ints"),
    "max_pool3d padding": (lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 3, 4, 4, 4), 2, padding=2),
                           r"pad should be at most half of effective kernel size.*max_pool3d"),
    "max_pool3d output too small": (lambda lib: lib.nn.functional.max_pool3d(lib.ones(2, 3, 4, 4, 4), 5),
                                    r"Given input size: \(3x4x4x4\)\. Calculated output size: \(3x0x0x0\)\. "
                                    r"Output size is too small \(in max_pool3d"),
    "avg_pool3d 2-d input": (lambda lib: lib.nn.functional.avg_pool3d(lib.ones(2, 3), 2),
                             r"avg_pool3d: expected a non-empty 4D \(unbatched\) or 5D \(batched\) input"),
    "avg_pool3d output too small": (lambda lib: lib.nn.functional.avg_pool3d(lib.ones(2, 3, 4, 4, 4), 5),
                                    r"Output size is too small \(in avg_pool3d"),
    "avg_pool3d divisor 0": (lambda lib: lib.nn.functional.avg_pool3d(lib.ones(1, 2, 4, 4, 4), 2, divisor_override=0),
                             r"avg_pool3d: divisor must be not zero"),
    "adaptive_max_pool3d 2-d input": (lambda lib: lib.nn.functional.adaptive_max_pool3d(lib.ones(2, 3), 2),
                                      r"adaptive_max_pool3d\(\): Expected 4D or 5D tensor, but got \[2, 3\]"),
    "Conv3d on a 3-d input": (lambda lib: lib.nn.Conv3d(3, 2, 2)(lib.ones(3, 4, 4)),
                              r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv3d, but got input of size: "
                              r"\[3, 4, 4\]"),
    "Conv3d groups": (lambda lib: lib.nn.Conv3d(3, 4, 2, groups=2), r"in_channels must be divisible by groups"),
    "Conv3d same strided": (lambda lib: lib.nn.Conv3d(3, 3, 2, stride=2, padding="same"),
                            r"padding='same' is not supported for strided convolutions"),
    "ConvTranspose3d padding_mode": (lambda lib: lib.nn.ConvTranspose3d(3, 3, 2, padding_mode="reflect"),
                                     r'Only "zeros" padding mode is supported for ConvTranspose3d'),
    "MaxPool3d on a 2-d input": (lambda lib: lib.nn.MaxPool3d(2)(lib.ones(3, 4)), r"max_pool3d: expected a non-empty"),
    "BatchNorm3d on a 4-d input": (lambda lib: lib.nn.BatchNorm3d(3)(lib.ones(2, 3, 4, 4)),
                                   r"expected 5D input \(got 4D input\)"),
    "InstanceNorm3d on a 3-d input": (lambda lib: lib.nn.InstanceNorm3d(3)(lib.ones(2, 3, 4)),
                                      r"expected 4D or 5D input \(got 3D input\)"),
    "InstanceNorm3d affine features": (lambda lib: lib.nn.InstanceNorm3d(3, affine=True)(lib.ones(2, 4, 2, 2, 2)),
                                       r"expected input's size at dim=1 to match num_features \(3\), but got: 4"),
}


@pytest.mark.parametrize("call,message", ERRORS.values(), ids=ERRORS.keys())
def test_bad_input_raises_torchs_exception_type(torch, call, message):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value), match=message):
        call(tl)


def test_max_unpool3d_errors_name_the_op_and_shapes():
    F = nn.functional
    with pytest.raises(RuntimeError, match=r"max_unpool3d: expected a 4d or 5d input .* shape \[2, 3\]"):
        F.max_unpool3d(tl.ones(2, 3), tl.zeros(2, 3, dtype=tl.int64), 2)
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 64 \(output volumes are of size 4x4x4\)"):
        F.max_unpool3d(tl.ones(1, 1, 2, 2, 2), tl.full((1, 1, 2, 2, 2), 64, dtype=tl.int64), 2)
