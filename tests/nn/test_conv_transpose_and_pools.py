"""ConvTranspose1d/2d (and F.conv_transpose*), MaxPool1d/AvgPool1d/LPPool, the adaptive pools against
PyTorch: outputs and gradients from the same weights, float32 and float64, several shapes."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn

from ._pairs import build_pair, compare, randn

DTYPES = ["float64", "float32"]

CONV_T = [  # (spatial, in, out, kernel, kwargs, input shape)
    (2, 4, 6, 3, {}, (2, 4, 5, 6)),
    (2, 4, 6, 3, dict(stride=2, padding=1, output_padding=1), (2, 4, 5, 5)),
    (2, 4, 6, (3, 2), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), bias=False), (1, 4, 4, 3)),
    (2, 4, 6, 3, dict(groups=2, dilation=2, stride=2), (2, 4, 3, 4)),
    (2, 3, 2, 3, dict(stride=3, dilation=2, output_padding=1), (3, 4, 4)),  # unbatched; output_padding < dilation
    (1, 4, 6, 3, {}, (2, 4, 7)),
    (1, 4, 6, 4, dict(stride=3, padding=2, output_padding=2, groups=2), (2, 4, 5)),
    (1, 2, 3, 2, dict(dilation=3), (2, 6)),  # unbatched
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spatial,cin,cout,k,kwargs,shape", CONV_T)
def test_conv_transpose_module_matches_torch(torch, dtype, spatial, cin, cout, k, kwargs, shape):
    name = f"ConvTranspose{spatial}d"
    ours, theirs = build_pair(torch, lambda m: getattr(m, name)(cin, cout, k, **kwargs), dtype)
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [randn(*shape)], dtype, (ours, theirs))


@pytest.mark.parametrize("dtype", DTYPES)
def test_functional_conv_transpose_matches_torch(torch, dtype):
    x, w, b = randn(2, 4, 5, 5), randn(4, 3, 3, 3, seed=1), randn(6, seed=2)

    def run(lib, x, w, b):
        F = lib.nn.functional
        return F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=(0, 1), groups=2)
    compare(torch, run, [x, w, b], dtype)
    compare(torch, lambda lib, x, w: lib.nn.functional.conv_transpose1d(x, w, stride=2), [randn(2, 4, 6),
                                                                                           randn(4, 5, 3)], dtype)


def test_conv_transpose_is_the_adjoint_of_conv():
    """<conv(x, w), y> == <x, conv_transpose(y, w)> for every x, y: the definition of the transpose."""
    rng = np.random.default_rng(0)
    w = tl.tensor(rng.standard_normal((6, 4, 3, 3)))
    x = tl.tensor(rng.standard_normal((2, 4, 9, 8)))
    y = tl.tensor(rng.standard_normal((2, 6, 5, 4)))
    F = nn.functional
    lhs = (F.conv2d(x, w, stride=2, padding=1) * y).sum().item()
    rhs = (x * F.conv_transpose2d(y, w, stride=2, padding=1, output_padding=(0, 1))).sum().item()
    assert math.isclose(lhs, rhs, rel_tol=1e-12)


def test_conv_transpose_output_size_picks_output_padding(torch):
    ours, theirs = build_pair(torch, lambda m: m.ConvTranspose2d(3, 2, 3, stride=3))
    x = randn(1, 3, 4, 4)
    for size in [(12, 12), (13, 14), [1, 2, 14, 12]]:
        got = ours(tl.tensor(x), output_size=size)
        want = theirs(torch.tensor(x), output_size=size)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="requested an output size of \\[15, 12\\], but valid sizes range from 12 to 14"):
        ours(tl.tensor(x), output_size=(15, 12))


def test_conv_transpose_init_and_repr_follow_torch(torch):
    m = nn.ConvTranspose2d(4, 6, (3, 2), stride=2, output_padding=1, groups=2, bias=True)
    t = torch.nn.ConvTranspose2d(4, 6, (3, 2), stride=2, output_padding=1, groups=2, bias=True)
    assert repr(m) == repr(t)
    assert tuple(m.weight.shape) == tuple(t.weight.shape) == (4, 3, 3, 2)
    bound = 1 / math.sqrt(3 * 3 * 2)  # fan_in = weight.size(1) * prod(kernel), as PyTorch computes it
    assert float(m.weight.abs().max()) <= bound and float(m.weight.abs().max()) > 0.8 * bound
    assert float(m.bias.abs().max()) <= bound
    assert repr(nn.ConvTranspose1d(2, 3, 4)) == repr(torch.nn.ConvTranspose1d(2, 3, 4))


@pytest.mark.parametrize("call,message", [
    (lambda F: F.conv_transpose2d(tl.randn(1, 4, 3, 3), tl.randn(4, 2, 3, 3), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation"),
    (lambda F: F.conv_transpose2d(tl.randn(1, 3, 3, 3), tl.randn(4, 2, 3, 3)),
     r"weight of size \[4, 2, 3, 3\], expected input\[1, 3, 3, 3\] to have 4 channels"),
    (lambda F: F.conv_transpose1d(tl.randn(1, 4, 3), tl.randn(4, 2, 3), tl.randn(3)),
     "expected bias to be 1-dimensional with 2 elements"),
    (lambda F: F.conv_transpose1d(tl.randn(1, 4, 1), tl.randn(4, 2, 3), padding=3),
     "the output size \\[-3\\] is too small"),
])
def test_conv_transpose_errors_name_the_problem(call, message):
    with pytest.raises(RuntimeError, match=message):
        call(nn.functional)


# ---------------------------------------------------------------- 1-d pools and adaptive pools

POOLS = [
    ("MaxPool1d", (3,), {}, (2, 3, 10)),
    ("MaxPool1d", (3,), dict(stride=2, padding=1, dilation=2, ceil_mode=True), (2, 3, 11)),
    ("MaxPool1d", (2,), {}, (3, 9)),
    ("AvgPool1d", (3,), {}, (2, 3, 10)),
    ("AvgPool1d", (4,), dict(stride=3, padding=2, ceil_mode=True, count_include_pad=False), (2, 3, 11)),
    ("AvgPool1d", (2,), {}, (3, 9)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveAvgPool1d", (3,), {}, (3, 9)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveMaxPool1d", (7,), {}, (2, 3, 5)),  # more outputs than inputs: windows repeat
    ("AdaptiveMaxPool2d", ((3, 4),), {}, (2, 3, 7, 9)),
    ("AdaptiveMaxPool2d", ((None, 2),), {}, (3, 5, 6)),
    ("AdaptiveMaxPool2d", (2,), {}, (2, 2, 8, 8)),
    ("LPPool1d", (2, 3), {}, (2, 3, 10)),
    ("LPPool1d", (1, 2), dict(stride=1, ceil_mode=True), (3, 9)),  # p = 1: the window sums
    ("LPPool2d", (2, 3), {}, (2, 2, 7, 8)),
    ("LPPool2d", (4, (2, 3)), dict(stride=(1, 2), ceil_mode=True), (1, 2, 6, 7)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,args,kwargs,shape", POOLS)
def test_pool_modules_match_torch(torch, dtype, name, args, kwargs, shape):
    def run(lib, x):
        return getattr(lib.nn, name)(*args, **kwargs)(x)
    compare(torch, run, [randn(*shape)], dtype)


@pytest.mark.parametrize("name,args,shape", [
    ("MaxPool1d", (3, 2, 1), (2, 3, 10)), ("AdaptiveMaxPool1d", (4,), (2, 3, 10)),
    ("AdaptiveMaxPool2d", ((3, 4),), (2, 3, 7, 9)), ("AdaptiveMaxPool2d", (3,), (2, 5, 5))])
def test_max_pools_return_pytorchs_indices(torch, name, args, shape):
    def run(lib, x):
        return getattr(lib.nn, name)(*args, return_indices=True)(x)
    outs, _ = compare(torch, run, [randn(*shape)])
    assert outs[1].dtype == tl.int64


def test_adaptive_max_pool_gradient_goes_to_the_first_max_of_overlapping_windows(torch):
    x = np.zeros((1, 1, 5))  # every window's max is a tie: the first element of each window wins
    compare(torch, lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, 3), [x])


def test_pool_reprs_follow_torch(torch):
    for make in (lambda m: m.MaxPool1d(3, 2), lambda m: m.AvgPool1d(3), lambda m: m.AdaptiveAvgPool1d(5),
                 lambda m: m.AdaptiveMaxPool1d(2), lambda m: m.AdaptiveMaxPool2d((2, None)),
                 lambda m: m.LPPool1d(1.5, 2, stride=1), lambda m: m.LPPool2d(2, (2, 3), ceil_mode=True)):
        assert repr(make(nn)) == repr(make(torch.nn))


def test_adaptive_max_pool_errors(torch):
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool2d\(\): Expected 3D or 4D tensor, but got \[4, 5\]"):
        nn.functional.adaptive_max_pool2d(tl.randn(4, 5), 2)
    with pytest.raises(RuntimeError, match="elements of output_size must be greater than zero"):
        nn.functional.adaptive_max_pool1d(tl.randn(1, 2, 4), 0)


@pytest.mark.parametrize("fn,shapes", [
    (lambda x, w, b: nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2),
     [(1, 4, 3, 3), (4, 2, 3, 3), (4,)]),
    (lambda x, w, b: nn.functional.conv_transpose1d(x, w, b, stride=3, dilation=2), [(2, 2, 4), (2, 3, 2), (3,)]),
    (lambda x: nn.functional.adaptive_max_pool2d(x, (2, 3)), [(1, 2, 5, 7)]),
    (lambda x: nn.functional.max_pool1d(x, 3, 2, 1), [(2, 2, 9)]),
    (lambda x: nn.functional.avg_pool1d(x, 3, 2, 1, count_include_pad=False), [(2, 2, 9)]),
    (lambda x: nn.functional.adaptive_avg_pool1d(x, 4), [(2, 2, 9)]),
])
def test_conv_transpose_and_pools_pass_gradcheck(fn, shapes):
    """Finite differences, independent of PyTorch (distinct values, so no max is tied)."""
    inputs = [tl.tensor(randn(*s, seed=i), requires_grad=True) for i, s in enumerate(shapes)]
    assert tl.autograd.gradcheck(fn, inputs)


# ---------------------------------------------------------------- unfold and fold (im2col and col2im)

FOLDS = [
    (lambda F, x: F.unfold(x, 2), (2, 3, 5, 5)),
    (lambda F, x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(2, 1)), (1, 2, 6, 7)),
    (lambda F, x: F.unfold(x, 3, padding=2), (3, 4, 4)),  # unbatched
    (lambda F, x: F.fold(x, (4, 4), 2), (2, 12, 9)),  # overlapping windows add up
    (lambda F, x: F.fold(x, (5, 6), (2, 3), padding=1, stride=(2, 1)), (1, 12, 18)),
    (lambda F, x: F.fold(x, 4, 2, stride=2), (8, 4)),  # unbatched, no overlap
    (lambda F, x: F.fold(F.unfold(x, 3, padding=1), (5, 5), 3, padding=1), (1, 2, 5, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("call,shape", FOLDS)
def test_unfold_and_fold_match_torch(torch, dtype, call, shape):
    compare(torch, lambda lib, x: call(lib.nn.functional, x), [randn(*shape)], dtype)


def test_unfold_is_the_convolution_as_a_matrix_product():
    """conv2d(x, w) = w (O, C*kh*kw) @ unfold(x), each column a window: the picture the lesson draws."""
    x, w = tl.tensor(randn(2, 3, 5, 6)), tl.tensor(randn(4, 3, 2, 3))
    cols = nn.functional.unfold(x, (2, 3))
    by_matmul = (w.reshape(4, -1) @ cols).reshape(2, 4, 4, 4)
    assert tl.allclose(by_matmul, nn.functional.conv2d(x, w), atol=1e-12)


def test_unfold_and_fold_pass_gradgradcheck():
    x = tl.tensor(randn(1, 2, 4, 3), requires_grad=True)
    assert tl.autograd.gradgradcheck(lambda t: nn.functional.unfold(t, 2, padding=1, stride=(2, 1)), [x])
    cols = tl.tensor(randn(1, 8, 6), requires_grad=True)
    assert tl.autograd.gradgradcheck(lambda t: nn.functional.fold(t, (3, 4), 2), [cols])


def test_fold_modules_and_errors_follow_torch(torch):
    for make in (lambda m: m.Unfold(2), lambda m: m.Unfold((2, 3), dilation=2, padding=1, stride=2),
                 lambda m: m.Fold((4, 5), 2), lambda m: m.Fold(4, (2, 2), stride=2)):
        assert repr(make(nn)) == repr(make(torch.nn))
    bad = [lambda m: m.nn.functional.unfold(m.zeros(1, 2, 3, 5, 5), 2),      # 5-d
           lambda m: m.nn.functional.unfold(m.zeros(2, 3, 5, 5), 6),         # no window fits
           lambda m: m.nn.functional.unfold(m.zeros(2, 3, 5, 5), 2, stride=0),
           lambda m: m.nn.functional.unfold(m.zeros(2, 3, 5, 5), 2, padding=-1),
           lambda m: m.nn.functional.unfold(m.zeros(2, 3, 5, 5), 2, dilation=(1, 0)),
           lambda m: m.nn.functional.fold(m.zeros(1, 4, 8), (4, 4), 2),      # 8 columns, 9 windows
           lambda m: m.nn.functional.fold(m.zeros(1, 5, 9), (4, 4), 2)]      # 5 rows: not C * 2 * 2
    for call in bad:
        with pytest.raises(RuntimeError) as ours:
            call(tl)
        with pytest.raises(RuntimeError) as theirs:
            call(torch)
        assert str(ours.value) == str(theirs.value)
