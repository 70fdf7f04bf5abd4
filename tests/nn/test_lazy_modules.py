"""Lazy modules (nn.LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d, LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d,
LazyLinear) and the uninitialized tensors behind them: against PyTorch (reprs, state_dict entries, the class
after the first call, shapes, error types, outputs and gradients from the same weights, which optimizers
accept lazy parameters) and against our own eager classes (the same seed gives the same initial values).
The PyTorch comparisons use the `torch` fixture, which skips without torch."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn
from tinygrad_lab.nn.modules.lazy import LazyModuleMixin
from tinygrad_lab.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

from ._pairs import compare, randn

# (lazy class, its arguments, the eager class's extra keywords, a batched input shape); in_channels or
# num_features is 3 in every input
CASES = [
    ("LazyLinear", (4,), {}, (2, 5, 3)),
    ("LazyConv1d", (4, 3), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("LazyConv2d", (6, 3), {"groups": 3, "dilation": 2, "bias": False}, (2, 3, 8, 8)),
    ("LazyConv3d", (4, 2), {"padding": "same", "padding_mode": "reflect"}, (1, 3, 4, 5, 4)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 6)),
    ("LazyConvTranspose2d", (4, 3), {"stride": 2, "padding": 1, "dilation": 2}, (2, 3, 4, 5)),
    ("LazyConvTranspose3d", (2, 2), {"groups": 1, "bias": False}, (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {"momentum": None}, (4, 3, 5)),
    ("LazyBatchNorm2d", (), {"eps": 1e-3, "bias": False}, (4, 3, 3, 3)),
    ("LazyBatchNorm3d", (), {"affine": False}, (2, 3, 2, 3, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 7)),
    ("LazyInstanceNorm2d", (), {"track_running_stats": False}, (2, 3, 4, 5)),
    ("LazyInstanceNorm3d", (), {"affine": False, "momentum": 0.3}, (2, 3, 2, 3, 3)),
]
IDS = [c[0] for c in CASES]


def _lazy(lib, case, **extra):
    name, args, kwargs, _ = case
    return getattr(lib.nn, name)(*args, **kwargs, **extra)


def _eager(case, size: int):
    """The eager module that the lazy one becomes, built directly with the inferred size."""
    name, args, kwargs, _ = case
    if "Norm" in name:  # the lazy norms default to affine=True, track_running_stats=True (InstanceNorm's do not)
        kwargs = {"affine": True, "track_running_stats": True, **kwargs}
    return getattr(nn, name[len("Lazy"):])(size, *args, **kwargs)


def _input(case, seed: int = 0) -> np.ndarray:
    return randn(*case[3], seed=seed)


# ------------------------------------------------------------------ against PyTorch

@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_before_and_after_the_first_call_like_pytorch(torch, case):
    ours, theirs = _lazy(tl, case), _lazy(torch, case)
    assert repr(ours) == repr(theirs)
    assert ours.has_uninitialized_params() == theirs.has_uninitialized_params()
    # the state_dict holds the uninitialized tensors themselves, in the same order with the same kinds
    assert [(k, repr(v)) for k, v in ours.state_dict().items()] == \
        [(k, repr(v)) for k, v in theirs.state_dict().items()]
    assert [type(p).__name__ for p in ours.parameters()] == [type(p).__name__ for p in theirs.parameters()]
    assert [type(b).__name__ for b in ours.buffers()] == [type(b).__name__ for b in theirs.buffers()]
    params = list(ours.parameters())
    x = _input(case).astype(np.float32)
    y, ty = ours(tl.tensor(x)), theirs(torch.tensor(x))
    assert tuple(y.shape) == tuple(ty.shape)
    assert type(ours).__name__ == type(theirs).__name__ == case[0][len("Lazy"):]  # cls_to_become
    assert type(ours) is getattr(nn, case[0][len("Lazy"):]) and not isinstance(ours, LazyModuleMixin)
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert all(type(p) is nn.Parameter for p in ours.parameters())
    assert all(type(b) is tl.Tensor for b in ours.buffers())
    now = list(ours.parameters())  # the same objects, materialised in place
    assert len(now) == len(params) and all(a is b for a, b in zip(now, params))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_outputs_and_gradients_match_pytorch_from_the_same_weights(torch, case):
    theirs = _lazy(torch, case).double()
    theirs(torch.tensor(_input(case, seed=1)))  # PyTorch's dry run shapes (and, in training, updates) its tensors
    ours = _lazy(tl, case).double()
    # loading into the uninitialized module gives its tensors the checkpoint's shapes (as PyTorch's hook)
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    assert not ours.has_uninitialized_params() and type(ours).__name__ == case[0]
    compare(torch, lambda lib, x: (ours if lib is tl else theirs)(x), [_input(case, seed=2)],
            modules=(ours, theirs))
    assert type(ours).__name__ == type(theirs).__name__
    for (k, v), (_, tv) in zip(ours.state_dict().items(), theirs.state_dict().items()):  # running stats too
        np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-10, atol=1e-12, err_msg=k)


def test_uninitialized_tensors_refuse_use_with_pytorchs_error_types(torch):
    for lib in (tl, torch):
        p = lib.nn.LazyLinear(3).weight
        b = lib.nn.LazyBatchNorm1d().running_mean
        for t in (p, b):
            with pytest.raises(RuntimeError, match="uninitialized"):
                t.shape
            for use in (lambda t: t + 1, lambda t: t.dim(), lambda t: t.numel(), lambda t: t.exp(),
                        lambda t: lib.nn.functional.linear(lib.ones(2, 3), t)):
                with pytest.raises(ValueError, match="uninitialized"):
                    use(t)
        assert p.dtype == lib.float32 and p.requires_grad and p.is_leaf and p.grad is None
        assert repr(p) == "<UninitializedParameter>" and repr(b) == "<UninitializedBuffer>"


def test_the_messages_say_what_to_do():
    p = nn.LazyLinear(3).weight
    with pytest.raises(RuntimeError, match="Can't read the shape of an uninitialized parameter.*Call the module "
                                           "once on a sample batch"):
        p.size()
    with pytest.raises(ValueError, match=r"Attempted to use an uninitialized parameter \(.*\).*call the module once"):
        p * 2
    with pytest.raises(ValueError, match="uninitialized buffer"):
        nn.LazyBatchNorm2d().running_var.sum()


@pytest.mark.parametrize("make, x, error, match", [
    (lambda lib: lib.nn.LazyConv2d(4, 3), (5, 5), RuntimeError, "Expected 3D \\(unbatched\\) or 4D \\(batched\\)"),
    (lambda lib: lib.nn.LazyConv2d(4, 3, groups=2), (1, 3, 5, 5), ValueError, "in_channels must be divisible"),
    (lambda lib: lib.nn.LazyConvTranspose1d(4, 3), (1, 2, 3, 4), RuntimeError, "Expected 2D \\(unbatched\\)"),
    (lambda lib: lib.nn.LazyBatchNorm2d(), (3, 4), ValueError, "expected 4D input"),
    (lambda lib: lib.nn.LazyInstanceNorm2d(), (3, 4), ValueError, "expected 3D or 4D input"),
])
def test_first_call_errors_like_pytorch(torch, make, x, error, match):
    for lib in (tl, torch):
        m = make(lib)
        with pytest.raises(error, match=match):
            m(lib.zeros(*x))
    # ours stays lazy, so the next input is read afresh (PyTorch's norms have taken a size from the bad one)
    m = make(tl)
    with pytest.raises(error):
        m(tl.zeros(*x))
    assert type(m).__name__.startswith("Lazy") and m.has_uninitialized_params()


def test_constructor_errors_like_pytorch(torch):
    for lib in (tl, torch):
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for LazyConvTranspose2d'):
            lib.nn.LazyConvTranspose2d(4, 3, padding_mode="reflect")
        with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
            lib.nn.LazyConv1d(4, 3, padding="same", stride=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):  # PyTorch: at the first call
        nn.LazyConv2d(5, 3, groups=2)


def test_loading_uninitialized_into_initialized_fails_like_pytorch(torch):
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match="shape of an uninitialized parameter"):
            lib.nn.Linear(4, 3).load_state_dict(lib.nn.LazyLinear(3).state_dict())
        target = lib.nn.LazyLinear(3)  # uninitialized into uninitialized: both stay as they are
        target.load_state_dict(lib.nn.LazyLinear(3).state_dict())
        assert type(target.weight).__name__ == "UninitializedParameter"


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "LBFGS", "Rprop", "NAdam"])
def test_optimizers_made_before_the_first_call_like_pytorch(torch, name):
    """PyTorch's optimizers accept uninitialized parameters when their state is made at the first step (the
    parameters are the same objects once materialised); Adagrad's is made at construction, and refuses."""
    outcomes = []
    for lib in (tl, torch):
        model = lib.nn.Sequential(lib.nn.LazyConv1d(4, 3), lib.nn.LazyBatchNorm1d(), lib.nn.Flatten(),
                                  lib.nn.LazyLinear(1))
        try:
            opt = getattr(lib.optim, name)(model.parameters(), lr=0.01)
        except ValueError as e:
            assert "uninitialized" in str(e)
            outcomes.append("refused")
            continue
        x = lib.tensor(randn(8, 2, 6, seed=3), dtype=lib.float32)

        def closure():
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            return loss

        first = closure().item()
        for _ in range(5):
            opt.step(closure)
        assert closure().item() < first
        outcomes.append("trains")
    assert outcomes[0] == outcomes[1]


# ------------------------------------------------------------------ against our eager classes

@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_same_seed_same_values_as_the_eager_class(case):
    x = tl.tensor(_input(case).astype(np.float32))
    tl.manual_seed(11)
    eager = _eager(case, 3)
    tl.manual_seed(11)
    lazy = _lazy(tl, case)
    y = lazy(x)
    np.testing.assert_array_equal(y.detach().numpy(), eager(x).detach().numpy())  # (training: stats update alike)
    assert repr(lazy) == repr(eager)
    assert list(lazy.state_dict()) == list(eager.state_dict())
    for k, v in eager.state_dict().items():
        np.testing.assert_array_equal(lazy.state_dict()[k].numpy(), v.numpy(), err_msg=k)
    after_lazy = tl.rand(3).tolist()  # and the random stream goes on from the same place
    tl.manual_seed(11)
    _eager(case, 3)
    assert tl.rand(3).tolist() == after_lazy


def test_a_state_dict_can_be_loaded_into_a_nested_lazy_module():
    src = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.Flatten(), nn.Linear(16, 5))
    src(tl.randn(3, 2, 4, 4))
    dst = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.Flatten(), nn.LazyLinear(5))
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    for k, v in src.state_dict().items():
        np.testing.assert_array_equal(dst.state_dict()[k].numpy(), v.numpy(), err_msg=k)
    x = tl.randn(2, 2, 4, 4)
    src.eval(), dst.eval()
    np.testing.assert_array_equal(dst(x).detach().numpy(), src(x).detach().numpy())
    assert [type(m) for m in dst] == [type(m) for m in src]
    assert repr(dst) == repr(src)  # the inferred sizes are set too (PyTorch leaves them at 0 here, but Linear's)


def test_an_input_that_disagrees_with_loaded_shapes_is_refused():
    m = nn.LazyLinear(3)
    m.load_state_dict(nn.Linear(4, 3).state_dict())
    with pytest.raises(RuntimeError, match=r"in_features=5, but weight has shape \[3, 4\], not \[3, 5\]"):
        m(tl.randn(2, 5))
    assert type(m) is nn.LazyLinear and m.in_features == 0
    assert m(tl.randn(2, 4)).shape == (2, 3) and type(m) is nn.Linear and m.in_features == 4


def test_initialize_parameters_directly_then_the_call_switches_the_class():
    m = nn.LazyConvTranspose2d(5, 2)
    weight = m.weight
    m.initialize_parameters(tl.randn(3, 4, 4))  # unbatched: the channels are dim 0
    assert not m.has_uninitialized_params() and type(m) is nn.LazyConvTranspose2d
    assert m.weight is weight and m.weight.shape == (3, 5, 2, 2) and m.in_channels == 3
    before = m.weight.detach().numpy().copy()
    assert m(tl.randn(3, 4, 4), output_size=[5, 5]).shape == (5, 5, 5)
    assert type(m) is nn.ConvTranspose2d
    np.testing.assert_array_equal(m.weight.detach().numpy(), before)  # not initialised a second time


def test_unbatched_first_inputs():
    assert nn.LazyConv1d(2, 3)(tl.randn(4, 9)).shape == (2, 7)
    norm = nn.LazyInstanceNorm1d()  # PyTorch reads dim 1 of an unbatched input here (and then fails)
    assert norm(tl.randn(3, 7)).shape == (3, 7) and norm.num_features == 3 and norm.weight.shape == (3,)


def test_nothing_lazy_still_infers_the_size():
    m = nn.LazyBatchNorm1d(affine=False, track_running_stats=False)
    assert not m.has_uninitialized_params()
    m(tl.randn(4, 3))
    assert type(m) is nn.BatchNorm1d and m.num_features == 3  # PyTorch leaves 0 here


def test_to_and_double_before_the_first_call(device):
    m = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.LazyLinear(2)).to(device).double()
    for t in [*m.parameters(), *m.buffers()]:
        assert t.device == tl.device(device) and (t.dtype == tl.float64 or t.dtype == tl.int64)
    assert all(is_lazy(t) for t in m.parameters())
    y = m(tl.randn(2, 3, 5, 5, dtype=tl.float64, device=device))
    assert y.shape == (2, 4, 3, 2) and y.device == tl.device(device) and y.dtype == tl.float64
    for t in [*m.parameters(), *m.buffers()]:
        assert not is_lazy(t) and t.device == tl.device(device)
    assert m[1].running_mean.dtype == tl.float64 and m[1].num_batches_tracked.item() == 1


def test_deepcopy_of_a_lazy_module():
    m = nn.Sequential(nn.LazyConv1d(4, 3), nn.LazyInstanceNorm1d())
    c = copy.deepcopy(m)
    lazy_keys = [k for k, v in m.state_dict().items() if is_lazy(v)]
    assert repr(c) == repr(m) and len(lazy_keys) == 6
    assert [k for k, v in c.state_dict().items() if is_lazy(v)] == lazy_keys
    assert all(a is not b for a, b in zip(c.parameters(), m.parameters()))
    c(tl.randn(2, 5, 8))
    assert type(c[0]) is nn.Conv1d and c[0].weight.shape == (4, 5, 3)
    assert type(m[0]) is nn.LazyConv1d and m[0].has_uninitialized_params() and m[1].has_uninitialized_params()
    m(tl.randn(2, 2, 8))  # the original still infers from its own first input
    assert m[0].in_channels == 2 and c[0].in_channels == 5


def test_materialize_and_the_uninitialized_classes():
    p = UninitializedParameter(requires_grad=False, dtype=tl.float64)
    assert isinstance(p, nn.Parameter) and not p.requires_grad and p.dtype == tl.float64
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype == tl.float64
    b = UninitializedBuffer(persistent=False)
    assert isinstance(b, nn.Buffer) and type(b.to(tl.float64)) is UninitializedBuffer
    b.materialize(4, dtype=tl.float64)
    assert type(b) is tl.Tensor and b.shape == (4,) and b.dtype == tl.float64
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        UninitializedParameter(dtype=tl.int64)


def test_a_module_of_ones_own_on_the_mixin():
    class Scale(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = UninitializedParameter()
            self.calls = 0

        def initialize_parameters(self, x):
            self.calls += 1
            if self.has_uninitialized_params():
                self.scale.materialize(x.shape[-1:])
                with tl.no_grad():
                    self.scale.fill_(2.0)

        def forward(self, x):
            return x * self.scale

    m = Scale()
    assert m(tl.ones(2, 3)).tolist() == [[2.0] * 3] * 2 and type(m) is Scale
    m(tl.ones(2, 3))
    assert m.calls == 1  # inferred once, as PyTorch's hook, which removes itself


def test_names_where_pytorch_has_them(torch):
    lazy_names = [n for n in dir(torch.nn) if n.startswith(("Lazy", "Uninitialized"))]
    assert lazy_names and all(hasattr(tl.nn, n) for n in lazy_names)
    assert set(lazy_names) <= set(tl.nn.__all__)
    assert tl.nn.parameter.UninitializedParameter is tl.nn.UninitializedParameter
    assert tl.nn.parameter.UninitializedBuffer is tl.nn.UninitializedBuffer
    assert tl.nn.parameter.is_lazy(nn.LazyLinear(2).weight) and torch.nn.parameter.is_lazy
    assert issubclass(nn.LazyConv2d, LazyModuleMixin) and issubclass(nn.LazyConv2d, nn.Conv2d)
    assert issubclass(torch.nn.LazyConv2d, torch.nn.modules.lazy.LazyModuleMixin)
