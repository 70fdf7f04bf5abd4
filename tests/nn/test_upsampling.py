"""interpolate/Upsample (1-d to 3-d, every mode), AdaptiveAvgPool3d, PixelShuffle/PixelUnshuffle
against PyTorch (outputs and gradients, float32 and float64) and finite differences."""
from __future__ import annotations

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
])
def test_resampling_passes_gradcheck(fn, shape):
    assert tl.autograd.gradcheck(fn, [tl.tensor(randn(*shape), requires_grad=True)])


def test_resampling_errors_name_the_problem():
    F = nn.functional
    with pytest.raises(NotImplementedError, match="mode 'lanczos' is not implemented"):
        F.interpolate(tl.randn(1, 1, 3, 3), scale_factor=2, mode="lanczos")
    with pytest.raises(NotImplementedError, match="bicubic mode needs 4D input"):
        F.interpolate(tl.randn(1, 1, 3, 3, 3), scale_factor=2, mode="bicubic")
    with pytest.raises(NotImplementedError, match="antialias"):
        F.interpolate(tl.randn(1, 1, 3, 3), scale_factor=0.5, mode="bilinear", antialias=True)
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(tl.randn(1, 6, 2, 2), 2)
    with pytest.raises(RuntimeError, match="height and width to be divisible by downscale_factor"):
        F.pixel_unshuffle(tl.randn(1, 1, 3, 4), 2)
