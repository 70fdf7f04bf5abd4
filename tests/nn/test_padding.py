"""The padding layers (ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad; 1d/2d/3d) and
Conv1d/Conv2d with padding_mode 'reflect', 'replicate' and 'circular', against PyTorch: outputs,
gradients (of the input and of every parameter, float32 and float64), reprs and errors."""
from __future__ import annotations

import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn

from ._pairs import build_pair, compare, randn

KINDS = ["Zero", "Constant", "Reflection", "Replication", "Circular"]
DTYPES = ["float64", "float32"]


def _layer(kind: str, dims: int, padding):
    args = (padding, 1.5) if kind == "Constant" else (padding,)
    return lambda m: getattr(m, f"{kind}Pad{dims}d")(*args)


def _paddings(dims: int) -> list:
    """An int, and a tuple with different widths on each side (a negative one too)."""
    return [2, tuple([1, 2, 0, 3, 2, -1][:2 * dims])]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_padding_layers_match_torch(torch, kind, dims, batched, dtype):
    shape = ((2, 3) if batched else (3,)) + (4, 5, 3)[:dims]  # (N, C, *spatial) or (C, *spatial)
    for padding in _paddings(dims):
        ours, theirs = build_pair(torch, _layer(kind, dims, padding), dtype)
        assert repr(ours) == repr(theirs)
        compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [randn(*shape)], dtype)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_padding_layers_keep_their_arguments_as_torch(torch, kind, dims):
    for padding in (1, (1, 2) * dims, [3, 0] * dims):
        ours, theirs = _layer(kind, dims, padding)(nn), _layer(kind, dims, padding)(torch.nn)
        assert ours.padding == theirs.padding and isinstance(ours.padding, tuple)
        assert repr(ours) == repr(theirs)
        assert getattr(ours, "value", None) == getattr(theirs, "value", None)
        assert not list(ours.parameters())


def test_zero_pad_is_a_constant_pad_and_layers_are_exported(torch):
    for dims in (1, 2, 3):
        assert isinstance(nn.ZeroPad2d(1), nn.ConstantPad2d)
        for kind in KINDS:
            name = f"{kind}Pad{dims}d"
            assert name in nn.__all__ and name in tl.nn.modules.__all__
    assert repr(nn.ZeroPad2d((1, 2, 3, 4))) == "ZeroPad2d((1, 2, 3, 4))"
    assert repr(nn.ConstantPad1d(2, -1.0)) == "ConstantPad1d(padding=(2, 2), value=-1.0)"


def test_padding_layers_in_a_sequential_with_a_conv(torch):
    """A style-transfer block: reflection padding, conv, instance norm, ReLU (gradients of every parameter)."""
    def make(m):
        return m.Sequential(m.ReflectionPad2d(2), m.Conv2d(3, 4, 5), m.InstanceNorm2d(4, affine=True), m.ReLU(),
                            m.ReplicationPad2d((1, 0, 0, 1)), m.Conv2d(4, 2, 2))
    ours, theirs = build_pair(torch, make)
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [randn(2, 3, 6, 7)], modules=(ours, theirs))


@pytest.mark.parametrize("layer, shape", [
    (lambda m: m.CircularPad2d(1), (3, 3)),
    (lambda m: m.CircularPad1d(1), (2, 2, 2, 2)),
    (lambda m: m.ReflectionPad2d(3), (1, 3, 3)),
    (lambda m: m.ReflectionPad1d(1), (4,)),
    (lambda m: m.ReplicationPad3d(1), (2, 2, 2)),
    (lambda m: m.ZeroPad2d(-3), (1, 4, 4)),
], ids=["circular rank", "circular rank 4d", "reflect too wide", "reflect rank", "replicate rank", "zero crops all"])
def test_padding_layer_errors_are_pytorchs(torch, layer, shape):
    with pytest.raises(Exception) as want:
        layer(torch.nn)(torch.ones(shape))
    with pytest.raises(type(want.value)) as got:
        layer(nn)(tl.ones(shape))
    assert str(list(shape)) in str(got.value) or "D input" in str(got.value)


# ---------------------------------------------------------------- convs with padding_mode

CONVS = [  # (spatial, in, out, kernel, kwargs, input shape)
    (2, 3, 4, 3, dict(padding=1), (2, 3, 5, 6)),
    (2, 3, 4, (3, 2), dict(padding=(2, 1), stride=2, bias=False), (2, 3, 5, 6)),
    (2, 4, 6, 3, dict(padding=2, dilation=2, groups=2), (1, 4, 5, 5)),
    (2, 3, 2, (3, 4), dict(padding="same"), (2, 3, 5, 6)),  # even kernel: the odd width on the right
    (2, 3, 2, 3, dict(padding="valid"), (3, 5, 6)),  # unbatched
    (2, 3, 2, 3, dict(padding=(0, 2)), (3, 4, 5)),  # unbatched
    (1, 3, 4, 3, dict(padding=2), (2, 3, 7)),
    (1, 3, 4, 4, dict(padding="same", dilation=2), (2, 3, 9)),
    (1, 2, 3, 3, dict(padding=1, stride=2), (2, 6)),  # unbatched
]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")  # PyTorch's, about its speed
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "zeros"])
@pytest.mark.parametrize("spatial, cin, cout, k, kwargs, shape", CONVS)
def test_conv_padding_modes_match_torch(torch, mode, dtype, spatial, cin, cout, k, kwargs, shape):
    make = lambda m: getattr(m, f"Conv{spatial}d")(cin, cout, k, padding_mode=mode, **kwargs)  # noqa: E731
    ours, theirs = build_pair(torch, make, dtype)
    assert repr(ours) == repr(theirs)
    assert ours._reversed_padding_repeated_twice == tuple(theirs._reversed_padding_repeated_twice)
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [randn(*shape)], dtype, (ours, theirs))


def test_conv_padding_mode_errors_are_pytorchs(torch):
    for m in (nn, torch.nn):
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose1d'):
            m.ConvTranspose1d(1, 1, 3, padding_mode="circular")
        with pytest.raises(ValueError, match="padding_mode must be one of"):
            m.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(RuntimeError) as want:
        torch.nn.Conv2d(1, 1, 3, padding=3, padding_mode="reflect")(torch.ones(1, 1, 3, 3))
    with pytest.raises(type(want.value), match=r"reflect.*\(3, 3\) at dimension 3 of input \[1, 1, 3, 3\]"):
        nn.Conv2d(1, 1, 3, padding=3, padding_mode="reflect")(tl.ones(1, 1, 3, 3))
