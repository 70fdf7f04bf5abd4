"""interpolate/Upsample (1-d to 3-d, every mode), AdaptiveAvgPool3d, PixelShuffle/PixelUnshuffle
against PyTorch (outputs and gradients, float32 and float64) and finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn

from ._pairs import compare, randn

DTYPES = ["float64", "float32"]

RESIZES = [  # (kwargs of interpolate, input shape)
    (dict(scale_factor=2), (2, 3, 4, 5)),
    (dict(size=(7, 3)), (1, 2, 4, 5)),
    (dict(scale_factor=1.7, mode="nearest-exact"), (1, 2, 5, 4)),
    (dict(size=9, mode="linear"), (2, 3, 4)),
    (dict(size=(6, 7), mode="bilinear"), (1, 2, 4, 5)),
    (dict(scale_factor=(2, 1.5), mode="bilinear", align_corners=True), (1, 2, 3, 4)),
    (dict(size=(2, 3), mode="bilinear"), (1, 1, 5, 7)),  # downsampling
    (dict(size=(3, 2), mode="area"), (2, 2, 7, 5)),
    (dict(scale_factor=0.5, mode="area"), (1, 3, 8)),
    (dict(scale_factor=2.5, mode="linear", recompute_scale_factor=True), (1, 2, 5)),
    (dict(size=(7, 4), mode="bicubic"), (2, 2, 4, 5)),  # bicubic: source positions below 0 are not clamped
    (dict(scale_factor=1.6, mode="bicubic", align_corners=True), (1, 2, 3, 4)),
    (dict(size=(2, 3), mode="bicubic"), (1, 1, 5, 7)),  # downsampling: the 4-tap window reaches past the edges
    (dict(size=(4, 3, 5), mode="trilinear"), (1, 2, 3, 4, 3)),
    (dict(scale_factor=2, mode="trilinear", align_corners=True), (1, 1, 2, 3, 2)),
    (dict(size=(5, 2, 4)), (2, 1, 3, 4, 3)),  # nearest in 3-d
    (dict(size=(2, 3, 2), mode="area"), (1, 2, 5, 4, 3)),  # uneven windows along every dim
    # antialias: the filter stretched by the scale when shrinking, windows cut and renormalised at the edges
    (dict(size=(3, 5), mode="bilinear", antialias=True), (2, 2, 10, 7)),
    (dict(size=(9, 4), mode="bilinear", antialias=True, align_corners=True), (1, 2, 5, 11)),  # up and down
    (dict(scale_factor=0.3, mode="bicubic", antialias=True), (1, 2, 13, 11)),
    (dict(size=(6, 6), mode="bicubic", antialias=True, align_corners=True), (1, 1, 16, 3)),
    (dict(size=(4, 2), mode="lanczos", antialias=True), (1, 2, 9, 8)),
    (dict(scale_factor=(0.6, 1.7), mode="lanczos", antialias=True), (2, 1, 8, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs,shape", RESIZES)
def test_interpolate_matches_torch(torch, dtype, kwargs, shape):
    compare(torch, lambda lib, x: lib.nn.functional.interpolate(x, **kwargs), [randn(*shape)], dtype)


@pytest.mark.parametrize("make,shape", [
    (lambda m: m.Upsample(scale_factor=2, mode="bilinear"), (1, 2, 3, 3)),
    (lambda m: m.UpsamplingNearest2d(size=(5, 4)), (1, 2, 3, 3)),
    (lambda m: m.UpsamplingBilinear2d(scale_factor=2), (1, 2, 3, 3)),
    (lambda m: m.Upsample(scale_factor=2, mode="trilinear"), (1, 2, 2, 3, 2)),
    (lambda m: m.Upsample(size=(5, 6), mode="bicubic", align_corners=True), (1, 2, 3, 3)),
    (lambda m: m.AdaptiveAvgPool3d((2, None, 3)), (2, 3, 5, 2, 7)),
    (lambda m: m.PixelShuffle(2), (2, 8, 3, 4)),
    (lambda m: m.PixelShuffle(3), (9, 2, 2)),
    (lambda m: m.PixelUnshuffle(2), (2, 3, 4, 6)),
])
def test_resampling_modules_match_torch(torch, make, shape):
    compare(torch, lambda lib, x: make(lib.nn)(x), [randn(*shape)])
    assert repr(make(nn)) == repr(make(torch.nn))


@pytest.mark.parametrize("fn,shape", [
    (lambda x: nn.functional.interpolate(x, size=(5, 4), mode="bilinear"), (1, 2, 3, 3)),
    (lambda x: nn.functional.interpolate(x, scale_factor=3, mode="nearest"), (1, 2, 3)),
    (lambda x: nn.functional.interpolate(x, size=(4, 5), mode="bicubic"), (1, 1, 3, 3)),
    (lambda x: nn.functional.interpolate(x, scale_factor=2, mode="trilinear"), (1, 1, 2, 2, 3)),
    (lambda x: nn.functional.pixel_shuffle(x, 2), (1, 4, 2, 3)),
    (lambda x: nn.functional.interpolate(x, size=(2, 4), mode="bicubic", antialias=True), (1, 1, 5, 3)),
])
def test_resampling_passes_gradcheck(fn, shape):
    assert tl.autograd.gradcheck(fn, [tl.tensor(randn(*shape), requires_grad=True)])


def test_resampling_errors_name_the_problem():
    F = nn.functional
    with pytest.raises(NotImplementedError, match="mode 'box' is not implemented"):
        F.interpolate(tl.randn(1, 1, 3, 3), scale_factor=2, mode="box")
    with pytest.raises(NotImplementedError, match="bicubic mode needs 4D input"):
        F.interpolate(tl.randn(1, 1, 3, 3, 3), scale_factor=2, mode="bicubic")
    with pytest.raises(NotImplementedError, match="mode 'bilinear' on a Long tensor"):  # not silently wrong numbers
        F.interpolate(tl.ones(1, 1, 3, 3, dtype=tl.int64), size=2, mode="bilinear")
    assert F.interpolate(tl.arange(4, dtype=tl.uint8).reshape(1, 1, 4), size=2).tolist() == [[[0, 2]]]  # nearest: fine


@pytest.mark.parametrize("call", [
    lambda F, x: F.interpolate(x, size=2, mode="area", antialias=True),
    lambda F, x: F.interpolate(x[0], size=2, mode="bilinear", antialias=True),
    lambda F, x: F.interpolate(x, size=2, mode="lanczos"),
    lambda F, x: F.interpolate(x, size=2, mode="lanczos", antialias=True, align_corners=True),
])
def test_antialias_misuses_raise_as_torch(torch, call):
    for lib in (tl, torch):
        with pytest.raises(ValueError) as info:
            call(lib.nn.functional, lib.ones(1, 1, 4, 4))
        if lib is tl:
            message = str(info.value)
    assert message == str(info.value)


def test_antialias_keeps_what_plain_resizing_drops():
    """Shrinking 8 columns to 2, plain bilinear reads columns 1-2 and 5-6 only: a one-pixel line in column
    3 vanishes. Antialiased, each output averages its whole quarter of the image: the line is there."""
    x = tl.zeros(1, 1, 4, 8)
    x[..., 3] = 1.0
    plain = nn.functional.interpolate(x, size=(4, 2), mode="bilinear")
    kept = nn.functional.interpolate(x, size=(4, 2), mode="bilinear", antialias=True)
    assert plain.abs().max().item() == 0.0
    assert kept[..., 0].min().item() > 0.1 and kept[..., 1].max().item() < kept[..., 0].min().item()


def test_antialias_to_one_column_resizes_every_row(torch):
    """Deviation: PyTorch 2.13 gives every output row the first one's value when an antialiased resize
    makes an image one pixel wide (with 9 rows of 0..8 it returns 0.83 four times). The truth is the
    same resize of a two-column copy, which PyTorch gets right."""
    x = np.arange(9.0).reshape(1, 1, 9, 1)
    ours = nn.functional.interpolate(tl.tensor(x), size=(4, 1), mode="bilinear", antialias=True)
    two = torch.nn.functional.interpolate(torch.tensor(np.repeat(x, 2, 3)), size=(4, 2), mode="bilinear",
                                          antialias=True)
    np.testing.assert_allclose(ours.numpy(), two[..., :1].numpy(), rtol=1e-12)
    assert len(set(ours.flatten().tolist())) == 4


def test_pixel_shuffle_errors_name_the_problem():
    F = nn.functional
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(tl.randn(1, 6, 2, 2), 2)
    with pytest.raises(RuntimeError, match="height and width to be divisible by downscale_factor"):
        F.pixel_unshuffle(tl.randn(1, 1, 3, 4), 2)
