"""GroupNorm, InstanceNorm1d/2d, RMSNorm against PyTorch (outputs and gradients, float32 and float64)
and finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn

from ._pairs import build_pair, compare, randn

DTYPES = ["float64", "float32"]

NORMS = [  # (make(nn), input shape)
    (lambda m: m.GroupNorm(2, 6), (3, 6, 4, 5)),
    (lambda m: m.GroupNorm(3, 6, affine=False), (2, 6, 7)),
    (lambda m: m.GroupNorm(1, 4, eps=1e-3), (2, 4)),
    (lambda m: m.InstanceNorm1d(3), (2, 3, 7)),
    (lambda m: m.InstanceNorm1d(3, affine=True), (3, 9)),  # unbatched
    (lambda m: m.InstanceNorm2d(4, affine=True), (2, 4, 5, 6)),
    (lambda m: m.RMSNorm(6), (2, 3, 6)),
    (lambda m: m.RMSNorm((3, 4), eps=1e-6), (2, 3, 4)),
    (lambda m: m.RMSNorm(5, elementwise_affine=False), (4, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make,shape", NORMS)
def test_norm_layers_match_torch(torch, dtype, make, shape):
    ours, theirs = build_pair(torch, make, dtype)
    for m in (ours, theirs):  # weights away from 1 and 0, so the affine part is tested
        for p in m.parameters():
            p.data.mul_(1.5).add_(0.25)
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [randn(*shape)], dtype, (ours, theirs))


def test_instance_norm_running_stats_match_torch(torch):
    ours, theirs = build_pair(torch, lambda m: m.InstanceNorm2d(3, track_running_stats=True, momentum=0.3))
    for step in range(3):
        x = randn(2, 3, 4, 5, seed=step)
        ours(tl.tensor(x))
        theirs(torch.tensor(x))
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(ours, name).numpy(), getattr(theirs, name).numpy(), rtol=1e-12)
    ours.eval()
    theirs.eval()
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [randn(2, 3, 4, 5, seed=9)])


def test_norm_reprs_follow_torch(torch):
    for make in (lambda m: m.GroupNorm(2, 4), lambda m: m.InstanceNorm1d(3, affine=True),
                 lambda m: m.InstanceNorm2d(3), lambda m: m.RMSNorm([2, 3], eps=1e-5)):
        assert repr(make(nn)) == repr(make(torch.nn))


@pytest.mark.parametrize("fn,shapes", [
    (lambda x, w, b: nn.functional.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    (lambda x, w, b: nn.functional.instance_norm(x, weight=w, bias=b), [(2, 3, 5), (3,), (3,)]),
    (lambda x, w: nn.functional.rms_norm(x, (4,), w), [(3, 4), (4,)]),
])
def test_norm_functions_pass_gradcheck(fn, shapes):
    inputs = [tl.tensor(randn(*s, seed=i), requires_grad=True) for i, s in enumerate(shapes)]
    assert tl.autograd.gradcheck(fn, inputs)


def test_norm_errors_name_the_problem():
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError, match=r"divisible by num_groups, but got input of shape \[2, 6, 3\]"):
        nn.functional.group_norm(tl.randn(2, 6, 3), 4)
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 4\], but got input of size\[2, 3\]"):
        nn.functional.rms_norm(tl.randn(2, 3), (4,))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.InstanceNorm1d(3)(tl.randn(2, 3, 4, 5))
