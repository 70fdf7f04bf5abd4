"""Every learning-rate scheduler against torch.optim.lr_scheduler: the lr (and, for the cyclic ones,
the momentum) of two parameter groups over many epochs, step(epoch) where PyTorch has a closed
form, state_dict round trips that resume the same sequence, and PyTorch's errors."""
from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import optim

EPOCHS = 120


def _optimizer(lib, kind: str = "SGD"):
    p, q = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    groups = [{"params": [p]}, {"params": [q], "lr": 0.02}]
    if kind == "Adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def _make(lib, name: str, kwargs: dict, kind: str = "SGD"):
    opt = _optimizer(lib, kind)
    sched = getattr(lib.optim.lr_scheduler, name)
    return opt, sched(opt, **kwargs)


def _momenta(opt) -> list:
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


def sequence(lib, name, kwargs, kind="SGD", epochs=EPOCHS, metrics=None):
    """[lrs..., momenta...] after construction and after each of `epochs` steps."""
    opt, sched = _make(lib, name, kwargs, kind)
    rows = [sched.get_last_lr() + _momenta(opt)]
    for epoch in range(epochs):
        opt.step()
        if metrics is not None:
            sched.step(metrics[epoch])
        else:
            sched.step()
        rows.append(sched.get_last_lr() + _momenta(opt))
        assert rows[-1][:2] == [g["lr"] for g in opt.param_groups]
    return np.array(rows), opt, sched


CASES = [
    ("MultiplicativeLR", {"lr_lambda": lambda epoch: 0.97}),
    ("MultiplicativeLR", {"lr_lambda": [lambda e: 0.95, lambda e: 1.0 if e % 3 else 0.5]}),
    ("ConstantLR", {}),
    ("ConstantLR", {"factor": 0.5, "total_iters": 40}),
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 0.1, "end_factor": 0.7, "total_iters": 50}),
    ("PolynomialLR", {}),
    ("PolynomialLR", {"total_iters": 80, "power": 2.5}),
    ("CosineAnnealingWarmRestarts", {"T_0": 10}),
    ("CosineAnnealingWarmRestarts", {"T_0": 7, "T_mult": 2, "eta_min": 0.001}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 7}),
    ("CyclicLR", {"base_lr": [0.01, 0.001], "max_lr": 0.2, "step_size_up": 5, "step_size_down": 11,
                  "mode": "triangular2", "base_momentum": 0.7, "max_momentum": [0.9, 0.95]}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 6, "mode": "exp_range", "gamma": 0.98,
                  "cycle_momentum": False}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 4, "scale_fn": lambda x: 1 / (1 + x),
                  "scale_mode": "iterations"}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": EPOCHS}),
    ("OneCycleLR", {"max_lr": [0.5, 0.1], "epochs": 10, "steps_per_epoch": 12, "pct_start": 0.25,
                    "anneal_strategy": "linear", "div_factor": 10.0, "final_div_factor": 100.0}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": EPOCHS, "three_phase": True, "base_momentum": 0.8}),
    ("StepLR", {"step_size": 7, "gamma": 0.5}),
    ("CosineAnnealingLR", {"T_max": 25, "eta_min": 0.001}),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


@pytest.mark.parametrize("name, kwargs", CASES, ids=IDS)
@pytest.mark.parametrize("kind", ["SGD", "Adam"])
def test_sequence_matches_torch(torch, name, kwargs, kind):
    ours, opt, _ = sequence(tl, name, kwargs, kind)
    theirs, topt, _ = sequence(torch, name, kwargs, kind)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-16)
    assert sorted(k for k in opt.param_groups[0] if k != "params") == \
        sorted(k for k in topt.param_groups[0] if k not in ("params", "foreach", "fused", "differentiable",
                                                              "capturable"))


PLATEAUS = [
    {},
    {"mode": "max", "factor": 0.5, "patience": 2, "threshold": 0.05, "cooldown": 3, "min_lr": [0.004, 0.0]},
    {"patience": 0, "threshold": 0.1, "threshold_mode": "abs", "min_lr": 0.001, "eps": 1e-3},
]


@pytest.mark.parametrize("kwargs", PLATEAUS, ids=range(len(PLATEAUS)))
def test_reduce_lr_on_plateau_matches_torch(torch, kwargs):
    rng = np.random.default_rng(2)
    metrics = list(1.0 / (1 + np.arange(EPOCHS)) ** 0.3 + rng.uniform(0, 0.1, EPOCHS))  # noisy, flattening out
    ours, _, sched = sequence(tl, "ReduceLROnPlateau", kwargs, metrics=metrics)
    theirs, _, tsched = sequence(torch, "ReduceLROnPlateau", kwargs, metrics=metrics)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13)
    assert len(set(ours[:, 0])) > 2  # the lr did drop, more than once
    assert sched.best == tsched.best and sched.num_bad_epochs == tsched.num_bad_epochs
    assert sched.state_dict().keys() == tsched.state_dict().keys()


def _composite(lib, which: str):
    opt = _optimizer(lib)
    s = lib.optim.lr_scheduler
    if which == "warmup then cosine":
        sched = s.SequentialLR(opt, [s.LinearLR(opt, 0.1, total_iters=10), s.CosineAnnealingLR(opt, T_max=50)], [10])
    elif which == "three in sequence":
        sched = s.SequentialLR(opt, [s.ConstantLR(opt, 0.5, total_iters=5), s.ExponentialLR(opt, 0.9),
                                     s.StepLR(opt, 10, 0.5)], milestones=[20, 45])
    elif which == "chained":
        sched = s.ChainedScheduler([s.ConstantLR(opt, 0.1, total_iters=4), s.ExponentialLR(opt, 0.95),
                                    s.CosineAnnealingWarmRestarts(opt, 15)])
    else:  # a SequentialLR inside a ChainedScheduler
        sched = s.ChainedScheduler([s.SequentialLR(opt, [s.LinearLR(opt, 0.2, total_iters=5),
                                                         s.PolynomialLR(opt, 60, 2.0)], [5]),
                                    s.MultiplicativeLR(opt, lambda e: 0.99)], optimizer=opt)
    return opt, sched


COMPOSITES = ["warmup then cosine", "three in sequence", "chained", "nested"]


@pytest.mark.parametrize("which", COMPOSITES)
def test_sequential_and_chained_match_torch(torch, which):
    def go(lib):
        opt, sched = _composite(lib, which)
        out = [sched.get_last_lr()]
        for _ in range(EPOCHS):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
        return np.array(out)
    np.testing.assert_allclose(go(tl), go(torch), rtol=1e-13)


def _resume(lib, make, epochs: int, first: int, metrics=None):
    """Step `first` times, save both state_dicts (through tl.save/load for ours), rebuild, load, step on."""
    opt, sched = make(lib)

    def advance(o, s, epoch):
        o.step()
        s.step(metrics[epoch]) if metrics is not None else s.step()
        return s.get_last_lr()

    straight_opt, straight = make(lib)
    expected = [advance(straight_opt, straight, e) for e in range(epochs)]
    for e in range(first):
        advance(opt, sched, e)
    opt_sd, sched_sd = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
    opt2, sched2 = make(lib)
    sched2.load_state_dict(sched_sd)
    opt2.load_state_dict(opt_sd)
    resumed = [advance(opt2, sched2, e) for e in range(first, epochs)]
    return expected[first:], resumed


@pytest.mark.parametrize("name, kwargs", [c for c in CASES if not any(callable(v) or isinstance(v, list) and
                                                                        callable(v[0]) for v in c[1].values())],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_state_dict_round_trip_resumes_the_sequence(name, kwargs, tmp_path):
    expected, resumed = _resume(tl, lambda lib: _make(lib, name, kwargs), EPOCHS, 37)
    np.testing.assert_array_equal(np.array(resumed), np.array(expected))
    _, sched = _make(tl, name, kwargs)
    tl.save(sched.state_dict(), tmp_path / "sched.tl")  # a scheduler's state is plain data: it saves
    assert tl.load(tmp_path / "sched.tl").keys() == sched.state_dict().keys()


@pytest.mark.parametrize("which", COMPOSITES[:3])
def test_composite_state_dict_round_trip(which):
    expected, resumed = _resume(tl, lambda lib: _composite(lib, which), EPOCHS, 23)
    np.testing.assert_array_equal(np.array(resumed), np.array(expected))


def test_reduce_lr_on_plateau_state_dict_round_trip():
    metrics = list(np.linspace(1, 0.9, EPOCHS) ** 3)
    make = lambda lib: _make(lib, "ReduceLROnPlateau", {"patience": 3, "cooldown": 2, "threshold": 0.01})  # noqa
    expected, resumed = _resume(tl, make, EPOCHS, 30, metrics)
    np.testing.assert_array_equal(np.array(resumed), np.array(expected))


def test_callable_objects_keep_their_state_functions_do_not():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate

    opt = _optimizer(tl)
    sched = optim.lr_scheduler.MultiplicativeLR(opt, [Decay(0.5), lambda e: 1.0])
    assert sched.state_dict()["lr_lambdas"] == [{"rate": 0.5}, None]
    other = Decay(0.9)
    optim.lr_scheduler.MultiplicativeLR(opt, [other, lambda e: 1.0]).load_state_dict(sched.state_dict())
    assert other.rate == 0.5
    scale = Decay(0.3)
    cyc = optim.lr_scheduler.CyclicLR(_optimizer(tl), 0.01, 0.1, scale_fn=scale)
    assert cyc.state_dict()["_scale_fn_custom"] == {"rate": 0.3}


CLOSED_FORMS = [("ConstantLR", {"factor": 0.5, "total_iters": 8}), ("LinearLR", {"total_iters": 12}),
                ("PolynomialLR", {"total_iters": 15, "power": 2.0})]


@pytest.mark.parametrize("name, kwargs", CLOSED_FORMS, ids=[n for n, _ in CLOSED_FORMS])
def test_step_with_an_epoch_uses_the_closed_form(torch, name, kwargs):
    def go(lib):
        opt, sched = _make(lib, name, kwargs)
        opt.step()
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (4, 12, 7, 21, 0):
                sched.step(epoch)
                out.append(sched.get_last_lr())
        return out
    np.testing.assert_allclose(go(tl), go(torch), rtol=1e-13)


def test_warm_restarts_with_fractional_epochs_match_torch(torch):
    def go(lib, T_mult):
        opt, sched = _make(lib, "CosineAnnealingWarmRestarts", {"T_0": 5, "T_mult": T_mult, "eta_min": 0.01})
        out = []
        for epoch in range(40):
            for batch in range(4):
                opt.step()
                sched.step(epoch + batch / 4)   # the per-batch idiom from PyTorch's documentation
                out.append(sched.get_last_lr() + [sched.T_i, sched.T_cur])
        return out
    for T_mult in (1, 2, 3):
        np.testing.assert_allclose(go(tl, T_mult), go(torch, T_mult), rtol=1e-12)


def test_warm_restarts_follow_the_formula():
    # periods 4, 8, 16: restarts at epochs 4 and 12, lr = eta_min + (base - eta_min)(1 + cos(pi T_cur / T_i)) / 2
    lrs, _, _ = sequence(tl, "CosineAnnealingWarmRestarts", {"T_0": 4, "T_mult": 2, "eta_min": 0.0}, epochs=27)
    expected = []
    for epoch in range(28):
        T_i, T_cur = (4, epoch) if epoch < 4 else (8, epoch - 4) if epoch < 12 else (16, epoch - 12)
        expected.append(0.1 * (1 + math.cos(math.pi * T_cur / T_i)) / 2)
    np.testing.assert_allclose(lrs[:, 0], expected, rtol=1e-12)


def test_one_cycle_reaches_its_targets_and_stops():
    lrs, opt, sched = sequence(tl, "OneCycleLR", {"max_lr": 1.0, "total_steps": 100, "div_factor": 20.0,
                                                  "final_div_factor": 50.0}, epochs=99)
    assert lrs[0, 0] == pytest.approx(0.05) and lrs[:, 0].max() == pytest.approx(1.0)
    assert lrs[-1, 0] == pytest.approx(0.05 / 50)
    assert int(np.argmax(lrs[:, 0])) == 29 and lrs[29, 2] == pytest.approx(0.85)  # momentum lowest at the peak
    opt.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 101 times. The specified number of total steps is 100"):
        sched.step()


ERRORS = [
    ("ConstantLR", {"factor": 1.5}, ValueError, "Constant multiplicative factor expected to be between 0 and 1."),
    ("LinearLR", {"start_factor": 0}, ValueError, "Starting multiplicative factor expected to be greater than 0"),
    ("LinearLR", {"end_factor": 2}, ValueError, "Ending multiplicative factor expected to be between 0 and 1."),
    ("CosineAnnealingWarmRestarts", {"T_0": 0}, ValueError, "Expected positive integer T_0, but got 0"),
    ("CosineAnnealingWarmRestarts", {"T_0": 5, "T_mult": 1.5}, ValueError, "Expected integer T_mult >= 1"),
    ("CyclicLR", {"base_lr": 0.1, "max_lr": 1, "mode": "saw"}, ValueError, "mode is invalid and scale_fn is None"),
    ("CyclicLR", {"base_lr": [0.1], "max_lr": 1}, ValueError, "base_lr must have the same length as optimizer"),
    ("OneCycleLR", {"max_lr": 1}, ValueError, "You must define either total_steps OR"),
    ("OneCycleLR", {"max_lr": 1, "total_steps": 10, "pct_start": 1}, ValueError, "Expected float between 0 and 1"),
    ("OneCycleLR", {"max_lr": 1, "total_steps": 10, "anneal_strategy": "exp"}, ValueError,
     "anneal_strategy must be one of 'cos' or 'linear'"),
    ("ReduceLROnPlateau", {"factor": 1.0}, ValueError, "Factor should be < 1.0."),
    ("ReduceLROnPlateau", {"mode": "up"}, ValueError, "mode up is unknown!"),
    ("ReduceLROnPlateau", {"min_lr": [0.1]}, ValueError, "expected 2 min_lrs, got 1"),
    ("MultiplicativeLR", {"lr_lambda": 3}, TypeError, "lr_lambda should be a function, but got int"),
]


@pytest.mark.parametrize("name, kwargs, exc, message", ERRORS, ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors_match_torch(torch, name, kwargs, exc, message):
    for lib in (tl, torch):
        with pytest.raises(exc, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
            _make(lib, name, kwargs)


def test_composite_errors_match_torch(torch):
    for lib in (tl, torch):
        s = lib.optim.lr_scheduler
        opt, other = _optimizer(lib), _optimizer(lib)
        with pytest.raises(ValueError, match="expects number of schedulers provided to be one more"):
            s.SequentialLR(opt, [s.StepLR(opt, 2), s.StepLR(opt, 3)], milestones=[])
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
            s.SequentialLR(opt, [s.StepLR(opt, 2), s.StepLR(other, 3)], milestones=[4])
        with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
            s.ChainedScheduler([s.StepLR(opt, 2), s.ReduceLROnPlateau(opt)])
        with pytest.raises(ValueError, match="expects at least one scheduler"):
            s.ChainedScheduler([])
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            s.CyclicLR(lib.optim.Adagrad([lib.ones(1, requires_grad=True)]), 0.1, 1.0)
