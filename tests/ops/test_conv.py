"""Convolution and pooling (tinygrad_lab.ops.conv): gradients by finite differences (gradcheck,
and gradgradcheck for the double backward), values and gradients against torch.nn.functional
(skipped without PyTorch), PyTorch's tie and NaN rules for max pooling, and the errors for bad
shapes and arguments."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.autograd import gradcheck, gradgradcheck
from tinygrad_lab.ops import conv as C

# PyTorch warns that it pads a copy for padding='same' with an even kernel; so do we, silently
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")


def _t(arr, requires_grad: bool = True):
    return tl.tensor(np.asarray(arr), requires_grad=requires_grad)


def _np(t) -> np.ndarray:
    return t.detach().numpy()


# ---------------------------------------------------------------- configurations
# (input shape, weight shape, keyword arguments); every one is checked by gradcheck and against PyTorch

CONV2D = {
    "plain": ((2, 3, 5, 4), (4, 3, 2, 2), {}),
    "padding 1": ((2, 3, 4, 4), (2, 3, 3, 3), {"padding": 1}),
    "stride 2 padding (1, 2)": ((2, 2, 5, 6), (3, 2, 3, 2), {"stride": 2, "padding": (1, 2)}),
    "stride (2, 1) dilation (1, 2)": ((1, 2, 6, 7), (3, 2, 2, 3), {"stride": (2, 1), "dilation": (1, 2)}),
    "dilation 2 padding 2": ((2, 2, 5, 5), (2, 2, 3, 3), {"dilation": 2, "padding": 2}),
    "groups 2": ((2, 4, 4, 5), (6, 2, 2, 3), {"groups": 2, "padding": 1}),
    "depthwise": ((2, 3, 5, 4), (3, 1, 3, 3), {"groups": 3, "padding": 1}),
    "groups stride dilation": ((1, 4, 7, 6), (4, 2, 2, 2),
                               {"groups": 2, "stride": (2, 3), "dilation": 2, "padding": 1}),
    "same odd kernel": ((2, 2, 4, 5), (3, 2, 3, 3), {"padding": "same"}),
    "same even kernel (uneven padding)": ((1, 2, 5, 4), (2, 2, 4, 2), {"padding": "same", "dilation": (1, 3)}),
    "valid": ((1, 2, 5, 5), (2, 2, 3, 2), {"padding": "valid"}),
    "1x1 kernel": ((2, 3, 3, 4), (5, 3, 1, 1), {}),
    "kernel as large as input": ((2, 2, 3, 4), (3, 2, 3, 4), {}),
    "stride larger than kernel": ((1, 2, 7, 7), (2, 2, 2, 2), {"stride": 3}),
}

CONV1D = {
    "plain": ((2, 3, 7), (4, 3, 3), {}),
    "stride padding dilation": ((2, 2, 9), (3, 2, 2), {"stride": 2, "padding": 2, "dilation": 3}),
    "groups": ((1, 4, 6), (6, 2, 3), {"groups": 2, "padding": 1}),
    "same": ((2, 2, 6), (2, 2, 4), {"padding": "same"}),
}


def _conv_inputs(xs, ws, bias: bool, seed: int = 0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype) if bias else None
    return x, w, b


# ---------------------------------------------------------------- gradcheck

@pytest.mark.parametrize("case", CONV2D.values(), ids=CONV2D.keys())
def test_conv2d_gradcheck(case):
    xs, ws, kw = case
    x, w, b = _conv_inputs(xs, ws, bias=True)
    assert gradcheck(lambda x, w, b: C.conv2d(x, w, b, **kw), (_t(x), _t(w), _t(b)))


@pytest.mark.parametrize("case", CONV1D.values(), ids=CONV1D.keys())
def test_conv1d_gradcheck(case):
    xs, ws, kw = case
    x, w, b = _conv_inputs(xs, ws, bias=True)
    assert gradcheck(lambda x, w, b: C.conv1d(x, w, b, **kw), (_t(x), _t(w), _t(b)))


@pytest.mark.parametrize("name", ["padding 1", "groups stride dilation", "same even kernel (uneven padding)"])
def test_conv2d_double_backward_gradgradcheck(name):
    """The backward is built from ops (ConvInputGrad, ConvWeightGrad, ConvBiasGrad), so the gradient
    of the gradient is right too."""
    xs, ws, kw = CONV2D[name]
    x, w, b = _conv_inputs(xs, ws, bias=True)
    assert gradgradcheck(lambda x, w, b: C.conv2d(x, w, b, **kw), (_t(x), _t(w), _t(b)))


def test_conv_gradcheck_unbatched_and_without_bias():
    x, w, _ = _conv_inputs((2, 4, 5), (3, 2, 2, 3), bias=False)
    assert gradcheck(lambda x, w: C.conv2d(x, w, stride=(1, 2)), (_t(x), _t(w)))
    x, w, _ = _conv_inputs((3, 6), (2, 3, 2), bias=False)
    assert gradcheck(lambda x, w: C.conv1d(x, w, padding=1), (_t(x), _t(w)))


POOLS = {
    "max 2": (C.max_pool2d, (2, 2, 4, 6), {"kernel_size": 2}),
    "max 3 stride 2 padding 1": (C.max_pool2d, (1, 2, 5, 6), {"kernel_size": 3, "stride": 2, "padding": 1}),
    "max overlapping ceil_mode": (C.max_pool2d, (1, 2, 6, 5),
                                  {"kernel_size": (3, 2), "stride": (2, 1), "ceil_mode": True}),
    "max dilation": (C.max_pool2d, (2, 1, 6, 6), {"kernel_size": 2, "stride": 1, "dilation": 2, "padding": 1}),
    "max unbatched": (C.max_pool2d, (2, 4, 4), {"kernel_size": 2}),
    "max1d": (C.max_pool1d, (2, 2, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    "avg 2": (C.avg_pool2d, (2, 2, 4, 6), {"kernel_size": 2}),
    "avg padding ceil_mode": (C.avg_pool2d, (1, 2, 5, 6),
                              {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    "avg exclude pad": (C.avg_pool2d, (1, 2, 5, 5),
                        {"kernel_size": 3, "stride": 1, "padding": 1, "count_include_pad": False}),
    "avg1d": (C.avg_pool1d, (2, 2, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    "adaptive even": (C.adaptive_avg_pool2d, (2, 2, 4, 6), {"output_size": (2, 3)}),
    "adaptive uneven": (C.adaptive_avg_pool2d, (1, 2, 5, 7), {"output_size": (3, 4)}),
    "adaptive1d": (C.adaptive_avg_pool1d, (2, 2, 7), {"output_size": 3}),
}


@pytest.mark.parametrize("case", POOLS.values(), ids=POOLS.keys())
def test_pool_gradcheck(case):
    fn, shape, kw = case
    x = np.random.default_rng(1).permutation(np.prod(shape)).reshape(shape) / 7.0  # distinct: no ties
    assert gradcheck(lambda x: fn(x, **kw), (_t(x),))


@pytest.mark.parametrize("name", ["max 3 stride 2 padding 1", "max overlapping ceil_mode", "avg padding ceil_mode",
                                  "adaptive uneven"])
def test_pool_double_backward_gradgradcheck(name):
    fn, shape, kw = POOLS[name]
    x = np.random.default_rng(2).permutation(np.prod(shape)).reshape(shape) / 7.0
    assert gradgradcheck(lambda x: fn(x, **kw) ** 2, (_t(x),))


# ---------------------------------------------------------------- against PyTorch

def _check_conv_against_torch(torch, fn, torch_fn, x, w, b, kw, rtol=1e-10, atol=1e-12):
    X, W = _t(x), _t(w)
    B = _t(b) if b is not None else None
    Xt, Wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    Bt = torch.tensor(b, requires_grad=True) if b is not None else None
    y, yt = fn(X, W, B, **kw), torch_fn(Xt, Wt, Bt, **kw)
    assert y.shape == tuple(yt.shape) and y.dtype == getattr(tl, str(yt.dtype).split(".")[1])
    np.testing.assert_allclose(_np(y), yt.detach().numpy(), rtol=rtol, atol=atol)
    g = np.random.default_rng(3).standard_normal(y.shape).astype(x.dtype)
    y.backward(tl.tensor(g))
    yt.backward(torch.tensor(g))
    for ours, theirs in [(X, Xt), (W, Wt)] + ([(B, Bt)] if b is not None else []):
        assert ours.grad.dtype == ours.dtype
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no bias"])
@pytest.mark.parametrize("case", CONV2D.values(), ids=CONV2D.keys())
def test_conv2d_matches_pytorch(case, bias, torch):
    xs, ws, kw = case
    x, w, b = _conv_inputs(xs, ws, bias)
    _check_conv_against_torch(torch, C.conv2d, torch.nn.functional.conv2d, x, w, b, kw)


@pytest.mark.parametrize("case", CONV1D.values(), ids=CONV1D.keys())
def test_conv1d_matches_pytorch(case, torch):
    xs, ws, kw = case
    x, w, b = _conv_inputs(xs, ws, True)
    _check_conv_against_torch(torch, C.conv1d, torch.nn.functional.conv1d, x, w, b, kw)


CONV_LARGER = {
    # a batch > 16 whose rows are 2 KiB apart: the backend's cache-friendly transpose takes over
    "batch 20, 512 floats per image": ((20, 8, 8, 8), (16, 8, 3, 3), {"padding": 1}),
    "digits-sized CNN layer": ((64, 8, 8, 8), (16, 8, 3, 3), {"padding": 1}),
    "strided 28x28": ((4, 3, 28, 28), (6, 3, 5, 5), {"stride": 2, "padding": 2}),
    "unbatched 2-d": ((3, 9, 8), (4, 3, 3, 3), {"padding": 1}),
    "unbatched 1-d": ((3, 9), (4, 3, 3), {"padding": 1}),
    "3-d volume": ((3, 4, 6, 7, 5), (6, 2, 3, 2, 3), {"padding": (1, 0, 2), "stride": (2, 1, 1), "groups": 2}),
    "unbatched 3-d": ((2, 5, 4, 6), (3, 2, 2, 3, 2), {"padding": "same", "dilation": (2, 1, 1)}),
}


def _conv_fns(torch, ws) -> tuple:
    """Our convolution and PyTorch's for a weight of shape ws (its rank says how many spatial dims)."""
    name = f"conv{len(ws) - 2}d"
    return getattr(C, name), getattr(torch.nn.functional, name)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CONV_LARGER.values(), ids=CONV_LARGER.keys())
def test_conv_larger_shapes_and_float32_match_pytorch(case, dtype, torch):
    xs, ws, kw = case
    x, w, b = _conv_inputs(xs, ws, True, dtype=np.dtype(dtype))
    fn, tfn = _conv_fns(torch, ws)
    tol = {"rtol": 1e-10, "atol": 1e-11} if dtype == "float64" else {"rtol": 1e-4, "atol": 1e-4}
    _check_conv_against_torch(torch, fn, tfn, x, w, b, kw, **tol)


CHUNKED = {  # a batch of 5 whose columns exceed the workspace's cap: convolved 2, 2 and 1 images at a time
    "padding 1": ((5, 3, 4, 4), (2, 3, 3, 3), {"padding": 1}),
    "groups stride dilation": ((5, 4, 7, 6), (4, 2, 2, 2), {"groups": 2, "stride": (2, 3), "dilation": 2, "padding": 1}),
    "conv1d": ((5, 2, 9), (3, 2, 2), {"stride": 2, "padding": 2, "dilation": 3}),
    "conv3d": ((5, 2, 4, 5, 3), (3, 2, 2, 3, 2), {"stride": (1, 2, 1), "padding": 1, "dilation": (2, 1, 1)}),
}


def _chunks_of_two_images(monkeypatch, torch, tfn, x, w, kw) -> list:
    """Lower the workspace's cap to the columns of two images of this convolution; returns the list that
    records the batch size of each im2col call."""
    y = tfn(torch.tensor(x), torch.tensor(w), **kw)
    per_image = x.shape[1] * math.prod(w.shape[2:]) * math.prod(y.shape[2:]) * x.itemsize
    monkeypatch.setattr(C, "_WORKSPACE_MAX", 2 * per_image)
    calls, real = [], C.im2col
    monkeypatch.setattr(C, "im2col", lambda x, geo: calls.append(geo.N) or real(x, geo))
    return calls


@pytest.mark.parametrize("case", CHUNKED.values(), ids=CHUNKED.keys())
def test_conv_in_chunks_of_images_matches_pytorch(case, torch, monkeypatch):
    """Values and gradients are those of the whole batch at once; the columns are built for 2, 2 and 1
    images in the forward and again in the weight gradient."""
    xs, ws, kw = case
    x, w, b = _conv_inputs(xs, ws, True)
    fn, tfn = _conv_fns(torch, ws)
    calls = _chunks_of_two_images(monkeypatch, torch, tfn, x, w, kw)
    _check_conv_against_torch(torch, fn, tfn, x, w, b, kw)
    assert calls == [2, 2, 1] * 2


def test_conv_in_chunks_of_images_double_backward_gradgradcheck(torch, monkeypatch):
    xs, ws, kw = CHUNKED["groups stride dilation"]
    x, w, b = _conv_inputs((3,) + xs[1:], ws, bias=True)
    calls = _chunks_of_two_images(monkeypatch, torch, torch.nn.functional.conv2d, x, w, kw)
    assert gradgradcheck(lambda x, w, b: C.conv2d(x, w, b, **kw), (_t(x), _t(w), _t(b)))
    assert set(calls) == {2, 1}


def test_conv_double_backward_matches_pytorch(torch):
    """create_graph through conv: the gradient of |dL/dx|^2 + |dL/dw|^2 with respect to x, w and b."""
    x, w, b = _conv_inputs((2, 4, 5, 6), (6, 2, 3, 2), True)
    kw = {"stride": (1, 2), "padding": 1, "dilation": (2, 1), "groups": 2}

    def run(m, F):
        X = m.tensor(x, requires_grad=True)
        W = m.tensor(w, requires_grad=True)
        B = m.tensor(b, requires_grad=True)
        y = F.conv2d(X, W, B, **kw)
        loss = (y * y * y).sum()
        gx, gw = (tl.autograd.grad if m is tl else torch.autograd.grad)(loss, [X, W], create_graph=True)
        ((gx * gx).sum() + (gw * gw).sum()).backward()
        return [t.grad.detach().numpy() for t in (X, W, B)]

    for ours, theirs in zip(run(tl, C), run(torch, torch.nn.functional)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


def test_conv_gradient_only_for_weight_like_a_first_layer(torch):
    """The input needs no gradient (a network's first layer): only the weight's and bias' are computed."""
    x, w, b = _conv_inputs((8, 1, 8, 8), (4, 1, 3, 3), True)
    X, W, B = _t(x, requires_grad=False), _t(w), _t(b)
    y = C.conv2d(X, W, B, padding=1)
    y.sum().backward()
    Wt, Bt = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    torch.nn.functional.conv2d(torch.tensor(x), Wt, Bt, padding=1).sum().backward()
    assert X.grad is None
    np.testing.assert_allclose(W.grad.numpy(), Wt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(B.grad.numpy(), Bt.grad.numpy(), rtol=1e-10)


def _check_pool_against_torch(torch, name, x, rtol=1e-12, atol=1e-15, **kw):
    X, Xt = _t(x), torch.tensor(x, requires_grad=True)
    out, out_t = getattr(C, name)(X, **kw), getattr(torch.nn.functional, name)(Xt, **kw)
    if kw.get("return_indices"):
        (out, idx), (out_t, idx_t) = out, out_t
        assert idx.dtype == tl.int64 and idx.shape == tuple(idx_t.shape)
        np.testing.assert_array_equal(idx.numpy(), idx_t.numpy())
    assert out.shape == tuple(out_t.shape)
    np.testing.assert_allclose(_np(out), out_t.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True)
    g = np.random.default_rng(4).standard_normal(out.shape).astype(x.dtype)
    out.backward(tl.tensor(g))
    out_t.backward(torch.tensor(g))
    np.testing.assert_allclose(X.grad.numpy(), Xt.grad.numpy(), rtol=rtol, atol=atol)


MAX_POOL = {
    "k2": {"kernel_size": 2},
    "k3 s2 p1": {"kernel_size": 3, "stride": 2, "padding": 1},
    "k3 s1 p1 overlapping": {"kernel_size": 3, "stride": 1, "padding": 1},
    "k(3,2) s(2,1) dilation (1,2) p1": {"kernel_size": (3, 2), "stride": (2, 1), "dilation": (1, 2), "padding": 1},
    "k2 ceil_mode": {"kernel_size": 2, "ceil_mode": True},
    "k3 s2 p1 ceil_mode": {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    "k(1,3) s(1,2)": {"kernel_size": (1, 3), "stride": (1, 2)},
}


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("kw", MAX_POOL.values(), ids=MAX_POOL.keys())
def test_max_pool2d_values_indices_and_gradient_match_pytorch(kw, ties, torch):
    """The gradient goes to the argmax; on ties (e.g. zeros after a ReLU) to the first element of the
    window in row-major order, as PyTorch's returned indices say."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, (2, 3, 7, 8)).astype(float) if ties else rng.standard_normal((2, 3, 7, 8))
    _check_pool_against_torch(torch, "max_pool2d", x, return_indices=True, **kw)


def test_max_pool_nan_and_all_minus_inf_windows_follow_pytorch(torch):
    """NaN propagates (the last NaN of a window is its index); a window of -inf values and -inf
    padding points at its first input element."""
    x = np.array([[[[1.0, np.nan, 3.0, np.nan], [np.nan, 2.0, 0.0, 1.0],
                    [-np.inf, -np.inf, 5.0, 5.0], [-np.inf, -np.inf, 5.0, 5.0]]]])
    for kw in [{"kernel_size": 2}, {"kernel_size": 3, "stride": 1, "padding": 1}, {"kernel_size": 2, "padding": 1}]:
        _check_pool_against_torch(torch, "max_pool2d", x, return_indices=True, **kw)


def test_max_pool1d_matches_pytorch(torch):
    x = np.random.default_rng(6).integers(0, 4, (2, 3, 11)).astype(float)
    for kw in [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
               {"kernel_size": 2, "stride": 1, "dilation": 3}]:
        _check_pool_against_torch(torch, "max_pool1d", x, return_indices=True, **kw)
    _check_pool_against_torch(torch, "max_pool1d", x[0], kernel_size=3)  # unbatched


AVG_POOL = {
    "k2": {"kernel_size": 2},
    "k3 s2 p1": {"kernel_size": 3, "stride": 2, "padding": 1},
    "k3 s2 p1 exclude pad": {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
    "k3 s2 p1 ceil_mode": {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    "k3 s2 p1 ceil_mode exclude pad": {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                                       "count_include_pad": False},
    "k(3,2) s(1,3) p(1,0) overlapping": {"kernel_size": (3, 2), "stride": (1, 3), "padding": (1, 0)},
    "divisor_override": {"kernel_size": 2, "stride": 1, "divisor_override": 3},
}


@pytest.mark.parametrize("kw", AVG_POOL.values(), ids=AVG_POOL.keys())
def test_avg_pool2d_matches_pytorch(kw, torch):
    x = np.random.default_rng(7).standard_normal((2, 3, 7, 8))
    _check_pool_against_torch(torch, "avg_pool2d", x, **kw)
    _check_pool_against_torch(torch, "avg_pool2d", x[0], **kw)  # unbatched


def test_avg_pool1d_matches_pytorch(torch):
    x = np.random.default_rng(8).standard_normal((2, 3, 11))
    for kw in [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
               {"kernel_size": 4, "stride": 3, "padding": 2, "count_include_pad": False}]:
        _check_pool_against_torch(torch, "avg_pool1d", x, **kw)


@pytest.mark.parametrize("shape, size", [((2, 3, 8, 8), 1), ((2, 3, 8, 8), (2, 4)), ((2, 3, 7, 9), (3, 4)),
                                         ((3, 7, 9), (None, 4)), ((1, 2, 5, 5), (7, 6)), ((2, 3, 6, 5), (6, 5))])
def test_adaptive_avg_pool2d_matches_pytorch(shape, size, torch):
    x = np.random.default_rng(9).standard_normal(shape)
    _check_pool_against_torch(torch, "adaptive_avg_pool2d", x, output_size=size)


def test_adaptive_avg_pool1d_matches_pytorch(torch):
    x = np.random.default_rng(10).standard_normal((2, 3, 10))
    for size in (1, 3, 5, 10, 13):
        _check_pool_against_torch(torch, "adaptive_avg_pool1d", x, output_size=size)


def test_pool_float32_matches_pytorch(torch):
    x = np.random.default_rng(11).standard_normal((4, 3, 8, 8)).astype(np.float32)
    for name, kw in [("max_pool2d", {"kernel_size": 2}), ("avg_pool2d", {"kernel_size": 3, "padding": 1}),
                     ("adaptive_avg_pool2d", {"output_size": 3})]:
        out = getattr(C, name)(_t(x), **kw)
        assert out.dtype == tl.float32
        _check_pool_against_torch(torch, name, x, rtol=1e-5, atol=1e-6, **kw)


def test_small_cnn_step_matches_pytorch(torch):
    """conv -> relu -> max pool -> conv -> relu -> max pool -> linear, float32, as in the digits lesson:
    the loss and every parameter's gradient agree with PyTorch."""
    rng = np.random.default_rng(12)
    x = rng.random((16, 1, 8, 8)).astype(np.float32)
    params = [rng.standard_normal(s).astype(np.float32) * 0.5
              for s in [(8, 1, 3, 3), (8,), (16, 8, 3, 3), (16,), (10, 64), (10,)]]

    def run(m, F):
        P = [m.tensor(p, requires_grad=True) for p in params]
        h = F.max_pool2d(m.relu(F.conv2d(m.tensor(x), P[0], P[1], padding=1)), 2)
        h = F.max_pool2d(m.relu(F.conv2d(h, P[2], P[3], padding=1)), 2)
        out = h.reshape(16, -1) @ P[4].t() + P[5]
        loss = (out * out).mean()
        loss.backward()
        return [loss.detach().numpy()] + [p.grad.numpy() for p in P]

    for ours, theirs in zip(run(tl, C), run(torch, torch.nn.functional)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_conv_and_pools_on_each_device_agree_with_the_cpu(device):
    """The ops use only the backend's array module and helpers: every device gives the CPU's numbers."""
    rng = np.random.default_rng(15)
    x, w, b = _conv_inputs((4, 2, 7, 6), (4, 2, 3, 3), True)
    g = rng.standard_normal((4, 4, 2, 2))

    def run(dev):
        X, W, B = (tl.tensor(a, device=dev, requires_grad=True) for a in (x, w, b))
        h = C.conv2d(X, W, B, padding=1, stride=(1, 2))
        h = C.max_pool2d(h, 3, stride=2, padding=1) + C.avg_pool2d(h, 2, ceil_mode=True)[..., :2]
        h = C.adaptive_avg_pool2d(h, (2, 2))
        h.backward(tl.tensor(g, device=dev))
        return [t.detach().cpu().numpy() for t in (h, X.grad, W.grad, B.grad)]

    for ours, ref in zip(run(device), run("cpu")):
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


def test_max_pool_nan_and_minus_inf_windows_on_each_device_agree_with_the_cpu(device):
    """A GPU does not ask whether a NaN or an all -inf window is there (a sync): it takes the general path."""
    x = np.array([[[[1.0, np.nan, 3.0, np.nan], [np.nan, 2.0, 0.0, 1.0],
                    [-np.inf, -np.inf, 5.0, 5.0], [-np.inf, -np.inf, 5.0, 5.0]]]])

    def run(dev, **kw):
        X = tl.tensor(x, device=dev, requires_grad=True)
        y, idx = C.max_pool2d(X, return_indices=True, **kw)
        y.backward(tl.ones_like(y))
        return [t.detach().cpu().numpy() for t in (y, idx, X.grad)]

    for kw in [{"kernel_size": 2}, {"kernel_size": 3, "stride": 1, "padding": 1}, {"kernel_size": 2, "padding": 1}]:
        for ours, ref in zip(run(device, **kw), run("cpu", **kw)):
            np.testing.assert_array_equal(ours, ref)


# ---------------------------------------------------------------- semantics by hand

def test_conv2d_by_hand():
    x = tl.arange(16.0).reshape(1, 1, 4, 4)
    w = tl.tensor([[[[1.0, 0.0], [0.0, -1.0]]]])
    assert C.conv2d(x, w).tolist() == [[[[-5.0] * 3] * 3]]  # x[i, j] - x[i + 1, j + 1] = -5
    assert C.conv2d(x, w, tl.tensor([5.0]), stride=2).tolist() == [[[[0.0, 0.0], [0.0, 0.0]]]]


@pytest.mark.parametrize("batch", [2, 1])  # one image: a layout change of one row was the workspace itself
def test_outputs_are_contiguous_and_not_shared_between_calls(batch):
    """Outputs can be .view()-ed like PyTorch's, and temporaries reused between calls never leak into them."""
    rng = np.random.default_rng(13)
    x1, x2 = _t(rng.standard_normal((batch, 3, 6, 6))), _t(rng.standard_normal((4, 3, 5, 5)))
    w = _t(rng.standard_normal((4, 3, 3, 3)))
    y1 = C.conv2d(x1, w, padding=1)
    before = _np(y1).copy()
    y2 = C.conv2d(x2, w, padding=1)
    C.conv2d(x1 * 2, w, padding=1).sum().backward()
    np.testing.assert_array_equal(_np(y1), before)
    assert y2.shape == (4, 4, 5, 5)
    for t in (y1, C.max_pool2d(y1, 2), C.avg_pool2d(y1, 2, padding=1), x1.grad, w.grad):
        assert t.detach().numpy().flags.c_contiguous
    assert y1.view(batch, -1).shape == (batch, 144)


TWO_BRANCHES = {  # an op whose input gradient came from the workspace when its array was one contiguous slice
    "conv2d, one image": (lambda x: C.conv2d(x, tl.ones(3, 2, 3, 3, dtype=x.dtype), padding=1), (1, 2, 6, 6)),
    "avg_pool2d, one plane, rows padded": (lambda x: C.avg_pool2d(x, (3, 1), stride=1, padding=(1, 0)), (1, 1, 4, 4)),
    "unfold, one image": (lambda x: C.unfold(x, 2, padding=1), (1, 2, 3, 3)),
}


@pytest.mark.parametrize("case", TWO_BRANCHES.values(), ids=TWO_BRANCHES.keys())
def test_an_input_feeding_two_ops_gets_both_gradients(case):
    """The input gradient of one op must survive the other's backward until the two are added (it was
    the workspace that the second backward overwrote). The truth: each branch's gradient computed
    alone, then added."""
    op, shape = case
    x = _t(np.random.default_rng(15).standard_normal(shape))
    branches = [lambda: op(x).sum() * 1.5, lambda: (op(x) ** 2).sum()]
    alone = []
    for branch in branches:
        x.grad = None
        branch().backward()
        alone.append(_np(x.grad))
    x.grad = None
    (branches[0]() + branches[1]()).backward()
    np.testing.assert_allclose(_np(x.grad), alone[0] + alone[1], rtol=1e-12)


def test_no_grad_records_nothing_and_empty_batch_works():
    x, w, b = (_t(a) for a in _conv_inputs((2, 3, 5, 5), (4, 3, 3, 3), True))
    with tl.no_grad():
        y = C.conv2d(x, w, b)
    assert y.grad_fn is None and not y.requires_grad
    y = C.conv2d(_t(np.zeros((0, 3, 5, 5))), w, b, padding=1)
    assert y.shape == (0, 4, 5, 5)
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), 0.0)


def test_max_pool_return_indices_are_not_differentiable():
    out, idx = C.max_pool2d(_t(np.arange(16.0).reshape(1, 1, 4, 4)), 2, return_indices=True)
    assert out.requires_grad and not idx.requires_grad
    assert idx.tolist() == [[[[5, 7], [13, 15]]]]


def test_backend_matrix_transpose():
    be = tl.device("cpu").backend
    for shape in [(3, 5), (20, 512), (40, 256), (1, 6), (6, 1)]:  # (20, 512) float32 rows are 2 KiB apart: the
        a = np.random.default_rng(14).standard_normal(shape).astype(np.float32)  # padded path; (1, 6): a copy
        t = be.matrix_transpose(a)                                                # although a.T is contiguous
        assert t.flags.c_contiguous and not np.shares_memory(t, a)
        np.testing.assert_array_equal(t, a.T)
        out = np.empty(shape[::-1], np.float32)
        assert be.matrix_transpose(a, out=out) is out
        np.testing.assert_array_equal(out, a.T)


# ---------------------------------------------------------------- errors, named like PyTorch's

CONV_ERRORS = {
    "channels": ((2, 4, 8, 8), (8, 3, 3, 3), {}, (
        "Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 4, 8, 8] to have 3 channels, "
        "but got 4 channels instead")),
    "input dims": ((4, 8), (8, 3, 3, 3), {}, (
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [4, 8]")),
    "weight dims": ((2, 3, 8, 8), (8, 3, 3), {}, (
        "Expected 4-dimensional weight for conv2d, but got 3-dimensional weight of size [8, 3, 3]")),
    "kernel too large": ((2, 3, 2, 2), (8, 3, 3, 3), {}, (
        "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). "
        "Kernel size can't be greater than actual input size")),
    "dilated kernel too large": ((2, 3, 4, 4), (8, 3, 3, 3), {"dilation": 2}, (
        "Calculated padded input size per channel: (4 x 4). Kernel size: (5 x 5)")),
    "channels with groups": ((2, 6, 8, 8), (8, 3, 3, 3), {"groups": 4}, (
        "Given groups=4, weight of size [8, 3, 3, 3], expected input[2, 6, 8, 8] to have 12 channels, "
        "but got 6 channels instead")),
    "out channels not divisible": ((2, 4, 8, 8), (9, 2, 3, 3), {"groups": 2}, (
        "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size "
        "[9, 2, 3, 3] instead")),
    "stride 0": ((2, 3, 8, 8), (8, 3, 3, 3), {"stride": 0}, "non-positive stride is not supported"),
    "negative padding": ((2, 3, 8, 8), (8, 3, 3, 3), {"padding": -1}, "negative padding is not supported"),
    "dilation 0": ((2, 3, 8, 8), (8, 3, 3, 3), {"dilation": (1, 0)}, "non-positive dilation is not supported"),
    "groups 0": ((2, 3, 8, 8), (8, 3, 3, 3), {"groups": 0}, "non-positive groups is not supported"),
    "stride of 3 values": ((2, 3, 8, 8), (8, 3, 3, 3), {"stride": (1, 2, 3)}, (
        "expected stride to be a single integer value or a list of 2 values to match the convolution "
        "dimensions, but got stride=[1, 2, 3]")),
    "same with stride": ((2, 3, 8, 8), (8, 3, 3, 3), {"padding": "same", "stride": 2}, (
        "padding='same' is not supported for strided convolutions")),
    "unknown padding string": ((2, 3, 8, 8), (8, 3, 3, 3), {"padding": "full"}, "Invalid padding string: 'full'"),
}


@pytest.mark.parametrize("case", CONV_ERRORS.values(), ids=CONV_ERRORS.keys())
def test_conv2d_errors_name_the_shapes(case):
    xs, ws, kw, message = case
    with pytest.raises(RuntimeError, match=re.escape(message)):
        C.conv2d(tl.zeros(*xs), tl.zeros(*ws), **kw)


def test_conv_bias_dtype_and_1d_errors():
    message = ("Given weight of size [8, 3, 3, 3], expected bias to be 1-dimensional with 8 elements, "
               "but got bias of size [7] instead")
    with pytest.raises(RuntimeError, match=re.escape(message)):
        C.conv2d(tl.zeros(2, 3, 8, 8), tl.zeros(8, 3, 3, 3), tl.zeros(7))
    message = ("conv2d: expected weight to have the same dtype as input, but got input of dtype "
               "tinygrad_lab.float64 and weight of dtype tinygrad_lab.float32")
    with pytest.raises(RuntimeError, match=re.escape(message)):
        C.conv2d(tl.zeros(2, 3, 8, 8, dtype=tl.float64), tl.zeros(8, 3, 3, 3))
    with pytest.raises(RuntimeError, match="conv2d: expected a floating point input"):
        C.conv2d(tl.zeros(2, 3, 8, 8, dtype=tl.int64), tl.zeros(8, 3, 3, 3))
    message = ("Given groups=1, weight of size [8, 4, 3], expected input[2, 3, 8] to have 4 channels, "
               "but got 3 channels instead")
    with pytest.raises(RuntimeError, match=re.escape(message)):
        C.conv1d(tl.zeros(2, 3, 8), tl.zeros(8, 4, 3))
    with pytest.raises(RuntimeError, match=re.escape("padded input size per channel: (2). Kernel size: (3)")):
        C.conv1d(tl.zeros(2, 3, 2), tl.zeros(8, 3, 3))
    with pytest.raises(TypeError, match=r"conv2d\(\): argument 'input' \(position 1\) must be Tensor, not numpy.ndarray"):
        C.conv2d(np.zeros((2, 3, 8, 8)), tl.zeros(8, 3, 3, 3))


POOL_ERRORS = {
    "max pad too large": (C.max_pool2d, (2, 3, 8, 8), (3,), {"padding": 2}, (
        "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1")),
    "avg pad too large": (C.avg_pool2d, (2, 3, 8, 8), (3,), {"padding": 2}, (
        "pad should be at most half of effective kernel size")),
    "max output empty": (C.max_pool2d, (2, 3, 2, 2), (3,), {}, (
        "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small")),
    "avg output empty": (C.avg_pool2d, (2, 3, 2, 2), (3,), {}, (
        "Given input size: (3x2x2). Calculated output size: (3x0x0).")),
    "max1d output empty": (C.max_pool1d, (2, 3, 1), (2,), {}, "Given input size: (3x1). Calculated output size: (3x0)"),
    "max input dims": (C.max_pool2d, (8, 8), (2,), {}, (
        "max_pool2d: expected a non-empty 3D (unbatched) or 4D (batched) input, but got input of size [8, 8]")),
    "avg1d input dims": (C.avg_pool1d, (3, 8, 8, 8), (2,), {}, (
        "avg_pool1d: expected a non-empty 2D (unbatched) or 3D (batched) input, but got input of size "
        "[3, 8, 8, 8]")),
    "kernel 0": (C.max_pool2d, (2, 3, 8, 8), (0,), {}, (
        "max_pool2d: kernel_size must be greater than zero, but got kernel_size=[0, 0]")),
    "stride 0": (C.max_pool2d, (2, 3, 8, 8), (2,), {"stride": (0, 1)}, (
        "max_pool2d: stride must be greater than zero, but got stride=[0, 1]")),
    "kernel of 3 values": (C.max_pool2d, (2, 3, 8, 8), ((2, 2, 2),), {}, (
        "max_pool2d: kernel_size must either be a single int, or a tuple of 2 ints, but got "
        "kernel_size=[2, 2, 2]")),
    "divisor 0": (C.avg_pool2d, (2, 3, 8, 8), (2,), {"divisor_override": 0}, "avg_pool2d: divisor must be not zero"),
    "adaptive input dims": (C.adaptive_avg_pool2d, (8, 8), (2,), {}, (
        "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [8, 8]")),
    "adaptive output of 3 values": (C.adaptive_avg_pool2d, (2, 3, 8, 8), ((2, 2, 2),), {}, (
        "adaptive_avg_pool2d: output_size must be 2")),
    "adaptive empty plane": (C.adaptive_avg_pool2d, (2, 3, 0, 8), (2,), {}, (
        "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has "
        "sizes [2, 3, 0, 8] with dimension 2 being empty")),
}


@pytest.mark.parametrize("case", POOL_ERRORS.values(), ids=POOL_ERRORS.keys())
def test_pool_errors_name_the_shapes(case):
    fn, shape, args, kw, message = case
    with pytest.raises(RuntimeError, match=re.escape(message)):
        fn(tl.zeros(*shape), *args, **kw)
