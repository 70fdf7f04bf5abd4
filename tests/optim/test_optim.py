"""tinygrad_lab.optim against torch.optim: same float64 start, same loss, 20 steps, same trajectory.

Also: parameter groups, zero_grad, state_dict round trips, lr schedules, errors,
and convergence on a quadratic (no PyTorch needed for those).
"""
from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import optim

RTOL, ATOL = 1e-10, 1e-12
STEPS = 20

_rng = np.random.default_rng(1234)
W0 = _rng.standard_normal((4, 3)) * 0.5
B0 = _rng.standard_normal(3) * 0.1
U0 = _rng.standard_normal(2)          # a parameter that never gets a gradient
X = _rng.standard_normal((6, 4))
Y = _rng.standard_normal((6, 3)) * 0.5


def loss_fn(W, b, X, Y):
    """A small non-quadratic loss written with methods both libraries share."""
    return ((X @ W + b).tanh() - Y).pow(2).sum() + 0.05 * (W ** 4).sum()


def run(lib, opt_cls, param_groups=None, steps=STEPS, **kwargs):
    """Optimize W, b (and an unused tensor) for `steps` steps; the parameters after each step."""
    W = lib.tensor(W0.copy(), requires_grad=True)
    b = lib.tensor(B0.copy(), requires_grad=True)
    unused = lib.tensor(U0.copy(), requires_grad=True)
    X_, Y_ = lib.tensor(X), lib.tensor(Y)
    params = [W, b, unused] if param_groups is None else param_groups(W, b, unused)
    opt = opt_cls(params, **kwargs)
    trajectory = []
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(W, b, X_, Y_).backward()
        opt.step()
        trajectory.append([W.detach().numpy().copy(), b.detach().numpy().copy()])
    np.testing.assert_array_equal(unused.detach().numpy(), U0)  # no grad: untouched
    return trajectory, opt, (W, b, unused)


def assert_same_trajectory(ours, theirs, rtol=RTOL, atol=ATOL):
    for step, (a, e) in enumerate(zip(ours, theirs)):
        for name, x, y in zip("Wb", a, e):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=f"{name} after step {step + 1}")


CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.05, weight_decay=0.1)),
    ("SGD", dict(lr=0.01, maximize=True)),
    ("SGD", dict(lr=0.005, momentum=0.8, weight_decay=0.1, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.05, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6, maximize=True)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.05, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, maximize=True, eps=1e-4)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, eps=1e-5, maximize=True)),
]


@pytest.mark.parametrize("name, kwargs", CASES, ids=[f"{n}-{'-'.join(map(str, k.items()))}" for n, k in CASES])
def test_trajectory_matches_torch(torch, name, kwargs):
    ours, opt, _ = run(tl, getattr(optim, name), **kwargs)
    theirs, topt, _ = run(torch, getattr(torch.optim, name), **kwargs)
    assert_same_trajectory(ours, theirs)
    # the state holds the same entries, with the same values
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["state"].keys() == tsd["state"].keys()  # {0, 1}, {} for plain SGD, {0, 1, 2} for Adagrad
    for i, entries in tsd["state"].items():
        assert sd["state"][i].keys() == entries.keys()
        for key, value in entries.items():
            np.testing.assert_allclose(sd["state"][i][key].numpy(), value.numpy(), rtol=1e-9, atol=ATOL, err_msg=key)
    torch_only = {"foreach", "fused", "differentiable", "capturable"}
    assert set(sd["param_groups"][0]) == set(tsd["param_groups"][0]) - torch_only


def two_groups(W, b, unused):
    return [{"params": [W, unused], "lr": 0.03, "momentum": 0.5}, {"params": [b]}]


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_param_groups_with_their_own_options(torch, name):
    kwargs = dict(lr=0.01, momentum=0.9) if name != "Adam" else dict(lr=0.01)
    groups = two_groups if name != "Adam" else (
        lambda W, b, u: [{"params": [W, u], "lr": 0.03, "betas": (0.5, 0.9)}, {"params": b}])
    ours, opt, _ = run(tl, getattr(optim, name), groups, **kwargs)
    theirs, _, _ = run(torch, getattr(torch.optim, name), groups, **kwargs)
    assert_same_trajectory(ours, theirs)
    assert opt.param_groups[0]["lr"] == 0.03 and opt.param_groups[1]["lr"] == 0.01


def test_add_param_group(torch):
    def grouped(lib, opt_cls):
        W = lib.tensor(W0.copy(), requires_grad=True)
        b = lib.tensor(B0.copy(), requires_grad=True)
        X_, Y_ = lib.tensor(X), lib.tensor(Y)
        opt = opt_cls([W], lr=0.05, momentum=0.9)
        out = []
        for step in range(10):
            if step == 4:  # b is "unfrozen" mid-training
                opt.add_param_group({"params": [b], "lr": 0.2})
            opt.zero_grad()
            loss_fn(W, b, X_, Y_).backward()
            opt.step()
            out.append([W.detach().numpy().copy(), b.detach().numpy().copy()])
        return out
    assert_same_trajectory(grouped(tl, optim.SGD), grouped(torch, torch.optim.SGD))


# ---------------------------------------------------------------- in-place updates, no graph

@pytest.mark.parametrize("opt_cls", [optim.SGD, optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad])
def test_updates_in_place_without_recording(opt_cls, device):
    p = tl.tensor([[1.0, -2.0], [3.0, 0.5]], device=device, requires_grad=True)
    alias = p.detach()        # shares p's memory
    row = p.detach()[0]       # a view into it
    opt = opt_cls([p], lr=0.1)
    (p * p).sum().backward()
    version = p._version
    opt.step()
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert p._version > version
    host = p.detach().cpu().numpy()
    np.testing.assert_array_equal(alias.cpu().numpy(), host)
    np.testing.assert_array_equal(row.cpu().numpy(), host[0])
    assert not np.array_equal(host, [[1.0, -2.0], [3.0, 0.5]])
    for value in opt.state[p].values():
        if value.shape == p.shape:
            assert value.device == p.device and value.dtype == p.dtype and not value.requires_grad


def test_step_after_use_in_graph_is_caught_by_backward():
    # the update bumps the parameter's version, so a graph that saved the old value refuses to run
    p = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    y = (p * p).sum()
    p.grad = tl.ones_like(p)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_closure_runs_with_grad_and_returns_the_loss():
    p = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with tl.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 5.0
    np.testing.assert_allclose(p.detach().numpy(), [0.5, 1.0])


# ---------------------------------------------------------------- zero_grad

def test_zero_grad_sets_to_none_by_default():
    p, q = tl.ones(3, requires_grad=True), tl.ones(2, requires_grad=True)
    opt = optim.SGD([p, q], lr=0.1)
    (p.sum() * 2).backward()
    assert q.grad is None
    opt.zero_grad()
    assert p.grad is None and q.grad is None


def test_zero_grad_keeps_zeroed_tensors_when_asked():
    p = tl.ones(3, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    (p * 3).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 0.0])
    (p * 2).sum().backward()                       # accumulates into the zeros
    np.testing.assert_array_equal(p.grad.numpy(), [2.0, 2.0, 2.0])


def test_zero_grad_detaches_a_grad_with_history():
    p = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    (p * p * p).sum().backward(create_graph=True)
    assert p.grad.grad_fn is not None
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and g.grad_fn is None and not g.requires_grad
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


def test_zero_grad_and_step_match_torch_when_some_grads_are_zero_or_none(torch):
    # a zero grad still moves momentum SGD and Adam (state is updated), a None grad skips the step
    def go(lib, opt_cls):
        p = lib.tensor([1.0, -1.0], dtype=lib.float64, requires_grad=True)
        q = lib.tensor([0.5], dtype=lib.float64, requires_grad=True)
        opt = opt_cls([p, q], lr=0.1)
        out = []
        for step in range(6):
            opt.zero_grad(set_to_none=step % 2 == 0)
            loss = (p * p).sum() * 3 if step < 3 else (p * p).sum() + (q * q).sum()
            loss.backward()
            opt.step()
            out.append([p.detach().numpy().copy(), q.detach().numpy().copy()])
        return out
    assert_same_trajectory(go(tl, optim.Adam), go(torch, torch.optim.Adam))
    assert_same_trajectory(go(tl, lambda ps, lr: optim.SGD(ps, lr, momentum=0.9)),
                           go(torch, lambda ps, lr: torch.optim.SGD(ps, lr, momentum=0.9)))


# ---------------------------------------------------------------- state_dict

OPTIMIZERS = [
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("AdamW", dict(lr=0.05)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
]


@pytest.mark.parametrize("name, kwargs", OPTIMIZERS, ids=[n for n, _ in OPTIMIZERS])
def test_state_dict_round_trip_continues_the_same_trajectory(name, kwargs):
    opt_cls = getattr(optim, name)
    straight, _, _ = run(tl, opt_cls, two_groups if name == "SGD" else None, steps=20, **kwargs)

    first, opt, (W, b, _) = run(tl, opt_cls, two_groups if name == "SGD" else None, steps=10, **kwargs)
    saved = copy.deepcopy({"state": {k: {n: v.numpy().copy() for n, v in s.items()} for k, s in
                                     opt.state_dict()["state"].items()},
                           "param_groups": opt.state_dict()["param_groups"]})
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"]
    assert all(isinstance(k, int) for k in sd["state"])
    assert [g["params"] for g in sd["param_groups"]] == ([[0, 1], [2]] if name == "SGD" else [[0, 1, 2]])

    # a fresh model and optimizer (different lr: the loaded one wins) resume from the checkpoint
    W2 = tl.tensor(W.detach().numpy().copy(), requires_grad=True)
    b2 = tl.tensor(b.detach().numpy().copy(), requires_grad=True)
    u2 = tl.tensor(U0.copy(), requires_grad=True)
    params = two_groups(W2, b2, u2) if name == "SGD" else [W2, b2, u2]
    fresh = opt_cls(params, **{**kwargs, "lr": 123.0})
    fresh.load_state_dict(sd)
    assert fresh.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    assert fresh.param_groups[0]["params"][0] is W2
    for p_new, p_old in zip([W2, b2], [W, b]):
        for key, value in opt.state[p_old].items():
            assert fresh.state[p_new][key] is not value  # copies: the two optimizers don't share buffers
    X_, Y_ = tl.tensor(X), tl.tensor(Y)
    second = []
    for _ in range(10):
        fresh.zero_grad()
        loss_fn(W2, b2, X_, Y_).backward()
        fresh.step()
        second.append([W2.detach().numpy().copy(), b2.detach().numpy().copy()])
    assert_same_trajectory(first + second, straight, rtol=0, atol=0)
    # stepping the restored optimizer did not touch the original's state
    for k, s in opt.state_dict()["state"].items():
        for n, v in s.items():
            np.testing.assert_array_equal(v.numpy(), saved["state"][k][n])


@pytest.mark.parametrize("name, kwargs", OPTIMIZERS, ids=[n for n, _ in OPTIMIZERS])
def test_a_torch_state_dict_loads_and_training_continues_identically(torch, name, kwargs):
    # same format: 10 steps in PyTorch, then 10 more in tinygrad_lab == 20 steps in PyTorch
    straight, _, _ = run(torch, getattr(torch.optim, name), steps=20, **kwargs)
    first, topt, (W, b, _) = run(torch, getattr(torch.optim, name), steps=10, **kwargs)
    W2 = tl.tensor(W.detach().numpy().copy(), requires_grad=True)
    b2 = tl.tensor(b.detach().numpy().copy(), requires_grad=True)
    opt = getattr(optim, name)([W2, b2, tl.tensor(U0.copy(), requires_grad=True)], **kwargs)
    opt.load_state_dict(topt.state_dict())
    assert all(isinstance(v, tl.Tensor) for s in opt.state.values() for v in s.values())
    X_, Y_ = tl.tensor(X), tl.tensor(Y)
    second = []
    for _ in range(10):
        opt.zero_grad()
        loss_fn(W2, b2, X_, Y_).backward()
        opt.step()
        second.append([W2.detach().numpy().copy(), b2.detach().numpy().copy()])
    assert_same_trajectory(first + second, straight)


def test_load_state_dict_casts_to_the_parameter_dtype():
    p = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    opt = optim.Adam([p], lr=0.1)
    p.grad = tl.ones_like(p)
    opt.step()
    sd = opt.state_dict()
    q = tl.tensor([1.0, 2.0], dtype=tl.float32, requires_grad=True)
    opt2 = optim.Adam([q], lr=0.1)
    opt2.load_state_dict(sd)
    assert opt2.state[q]["exp_avg"].dtype == tl.float32
    assert opt2.state[q]["step"].dtype == sd["state"][0]["step"].dtype  # the step counter keeps its dtype


def test_load_state_dict_errors():
    p, q = tl.ones(2, requires_grad=True), tl.ones(3, requires_grad=True)
    sd = optim.SGD([p, q], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [p]}, {"params": [q]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([p], lr=0.1).load_state_dict(sd)


def test_adamw_stays_decoupled_after_loading_an_adam_state_dict():
    p = tl.ones(2, requires_grad=True)
    sd = optim.Adam([p], weight_decay=0.1).state_dict()
    opt = optim.AdamW([tl.ones(2, requires_grad=True)])
    opt.load_state_dict(sd)
    assert opt.param_groups[0]["decoupled_weight_decay"] is True


def test_repr_lists_the_group_options():
    opt = optim.SGD([tl.ones(2, requires_grad=True)], lr=0.1, momentum=0.9)
    assert repr(opt) == ("SGD (\nParameter Group 0\n    dampening: 0\n    lr: 0.1\n    maximize: False\n"
                         "    momentum: 0.9\n    nesterov: False\n    weight_decay: 0\n)")


# ---------------------------------------------------------------- errors

def test_invalid_hyperparameters():
    p = [tl.ones(2, requires_grad=True)]
    for cls in (optim.SGD, optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad):
        with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
            cls(p, lr=-0.1)
        with pytest.raises(ValueError, match="Invalid weight_decay value"):
            cls(p, weight_decay=-1)
    with pytest.raises(ValueError, match="Invalid momentum value"):
        optim.SGD(p, lr=0.1, momentum=-0.5)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.Adam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value"):
        optim.Adam(p, eps=-1e-8)
    with pytest.raises(ValueError, match="Invalid alpha value"):
        optim.RMSprop(p, alpha=-0.1)
    with pytest.raises(ValueError, match="Invalid lr_decay value"):
        optim.Adagrad(p, lr_decay=-0.1)
    with pytest.raises(ValueError, match="Invalid initial_accumulator_value"):
        optim.Adagrad(p, initial_accumulator_value=-1)
    with pytest.raises(ValueError, match="Invalid learning rate"):  # a group's own lr is checked too
        optim.SGD([{"params": p, "lr": -1.0}], lr=0.1)


def test_invalid_params():
    p = tl.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors.*ndarray"):
        optim.SGD([p, np.ones(2)], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([p * 2], lr=0.1)
    q = tl.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [p, q]}, {"params": [q]}], lr=0.1)
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match=r"more than one parameter group \(a tensor of shape \[2\]"):
        opt.add_param_group({"params": p})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([q])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([q, q], lr=0.1)


def test_named_parameters_are_accepted():
    p, q = tl.ones(2, requires_grad=True), tl.ones(3, requires_grad=True)
    opt = optim.Adam([("w", p), ("b", q)])
    assert opt.param_groups[0]["params"] == [p, q] and opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    with pytest.raises(ValueError, match="names"):
        optim.Adam([("w", p), q])


# ---------------------------------------------------------------- convergence (no PyTorch)

@pytest.mark.parametrize("make_opt, steps", [
    (lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9), 300),
    (lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True), 300),
    (lambda ps: optim.Adam(ps, lr=0.05), 600),
    (lambda ps: optim.AdamW(ps, lr=0.05, weight_decay=0.0), 600),
    (lambda ps: optim.RMSprop(ps, lr=0.001, momentum=0.9), 600),
    (lambda ps: optim.Adagrad(ps, lr=0.5), 600),
], ids=["sgd-momentum", "sgd-nesterov", "adam", "adamw", "rmsprop", "adagrad"])
def test_minimises_a_quadratic(make_opt, steps):
    rng = np.random.default_rng(0)
    M = rng.standard_normal((5, 5))
    A = M @ M.T / 5 + np.eye(5)                      # symmetric positive definite
    c = rng.standard_normal(5)
    x_star = np.linalg.solve(A, c)
    A_, c_ = tl.tensor(A), tl.tensor(c)
    x = tl.zeros(5, dtype=tl.float64, requires_grad=True)
    opt = make_opt([x])
    for _ in range(steps):
        opt.zero_grad()
        (0.5 * (x @ (A_ @ x)) - c_ @ x).backward()   # minimum at A x = c
        opt.step()
    np.testing.assert_allclose(x.detach().numpy(), x_star, atol=1e-3)


# ---------------------------------------------------------------- learning-rate schedules

SCHEDULERS = [
    ("StepLR", dict(step_size=7, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[3, 10, 10, 25], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001)),   # 30 steps: down, back up, down again
    ("CosineAnnealingLR", dict(T_max=30)),
    ("LambdaLR", dict(lr_lambda=lambda epoch: 1.0 / (1 + epoch) ** 0.5)),
    ("LambdaLR", dict(lr_lambda=[lambda e: 0.95 ** e, lambda e: e // 4 + 1])),
]


def lr_sequence(lib, name, kwargs, steps=30, resume=None):
    p, q = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.02}], lr=0.1, momentum=0.9)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    lrs = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        assert lrs[-1] == [g["lr"] for g in opt.param_groups]
    return np.array(lrs), sched


@pytest.mark.parametrize("name, kwargs", SCHEDULERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)])
def test_scheduler_matches_torch(torch, name, kwargs):
    ours, _ = lr_sequence(tl, name, kwargs)
    theirs, _ = lr_sequence(torch, name, kwargs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)


def test_cosine_annealing_follows_the_closed_form():
    T, eta_min, base = 10, 0.001, 0.1
    lrs, _ = lr_sequence(tl, "CosineAnnealingLR", dict(T_max=T, eta_min=eta_min))
    closed = [eta_min + (base - eta_min) * (1 + math.cos(math.pi * t / T)) / 2 for t in range(31)]
    np.testing.assert_allclose(lrs[:, 0], closed, rtol=1e-12)


def test_chained_schedulers_match_torch(torch):
    def go(lib):
        opt = lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=0.1)
        s1 = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=12)
        s2 = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95)
        s3 = lib.optim.lr_scheduler.MultiStepLR(opt, milestones=[5, 15])
        out = []
        for _ in range(30):
            opt.step()
            for s in (s1, s2, s3):
                s.step()
            out.append(opt.param_groups[0]["lr"])
        return out
    np.testing.assert_allclose(go(tl), go(torch), rtol=1e-12)


@pytest.mark.parametrize("name, kwargs", SCHEDULERS[:5], ids=[n for n, _ in SCHEDULERS[:5]])
def test_step_with_an_epoch_uses_the_closed_form(torch, name, kwargs):
    def go(lib):
        opt = lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=0.1)
        sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
        opt.step()
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (4, 12, 7, 21):
                sched.step(epoch)
                out.append(sched.get_last_lr()[0])
        return out
    opt = optim.SGD([tl.ones(1, requires_grad=True)], lr=0.1)
    s = optim.lr_scheduler.StepLR(opt, 2)
    opt.step()
    with pytest.warns(UserWarning, match="epoch parameter"):
        s.step(3)
    np.testing.assert_allclose(go(tl), go(torch), rtol=1e-13)


@pytest.mark.parametrize("name, kwargs", SCHEDULERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)])
def test_scheduler_state_dict_round_trip(name, kwargs):
    straight, _ = lr_sequence(tl, name, kwargs, steps=30)
    _, sched = lr_sequence(tl, name, kwargs, steps=12)
    opt_sd, sched_sd = sched.optimizer.state_dict(), copy.deepcopy(sched.state_dict())
    assert "optimizer" not in sched_sd and sched_sd["last_epoch"] == 12
    p, q = tl.ones(2, requires_grad=True), tl.ones(2, requires_grad=True)
    opt = optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.02}], lr=0.1, momentum=0.9)
    fresh = getattr(optim.lr_scheduler, name)(opt, **kwargs)
    fresh.load_state_dict(sched_sd)
    opt.load_state_dict(opt_sd)
    rest = []
    for _ in range(18):
        opt.step()
        fresh.step()
        rest.append(fresh.get_last_lr())
    np.testing.assert_array_equal(np.array(rest), straight[13:])


def test_scheduler_resumes_from_last_epoch(torch):
    def go(lib):
        opt = lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=0.1)
        opt.param_groups[0]["initial_lr"] = 0.1
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, last_epoch=4)
        out = [sched.get_last_lr()[0]]
        for _ in range(5):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr()[0])
        return out
    np.testing.assert_allclose(go(tl), go(torch), rtol=1e-13)
    with pytest.raises(KeyError, match="initial_lr"):
        optim.lr_scheduler.StepLR(optim.SGD([tl.ones(1, requires_grad=True)], lr=0.1), 3, last_epoch=5)


def test_scheduler_warnings():
    opt = optim.SGD([tl.ones(1, requires_grad=True)], lr=0.1)
    sched = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    with pytest.warns(UserWarning, match=r"before `optimizer.step\(\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()
    opt2 = optim.SGD([tl.ones(1, requires_grad=True)], lr=0.1)
    sched2 = optim.lr_scheduler.ExponentialLR(opt2, gamma=0.5)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()                                  # the right order: no warning
    assert sched2.get_last_lr() == [0.05]
    with pytest.raises(TypeError, match="is not an Optimizer"):
        optim.lr_scheduler.StepLR([1, 2], 3)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        optim.lr_scheduler.LambdaLR(optim.SGD([{"params": [tl.ones(1, requires_grad=True)]},
                                                {"params": [tl.ones(1, requires_grad=True)]}], lr=0.1),
                                    [lambda e: 1.0])


def test_lambda_lr_state_dict_saves_callable_objects_not_functions():
    class Warmup:
        def __init__(self, n):
            self.n = n

        def __call__(self, epoch):
            return min(1.0, (epoch + 1) / self.n)

    opt = optim.SGD([{"params": [tl.ones(1, requires_grad=True)]}, {"params": [tl.ones(1, requires_grad=True)]}],
                    lr=0.1)
    sched = optim.lr_scheduler.LambdaLR(opt, [Warmup(5), lambda e: 1.0])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"n": 5}, None]
    other = Warmup(99)
    optim.lr_scheduler.LambdaLR(opt, [other, lambda e: 1.0]).load_state_dict(sd)
    assert other.n == 5


def _step_hook_trace(lib, register_global):
    """What step hooks see and do, as PyTorch: per-optimizer pre and post hooks (given the optimizer as the first
    of step's arguments), a global pre-hook, removal, and a pre-hook that replaces the arguments (a closure)."""
    w = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([w], lr=0.1)
    seen = []
    pre = opt.register_step_pre_hook(lambda o, args, kw: seen.append(("pre", args[0] is o, len(args), sorted(kw))))
    post = opt.register_step_post_hook(lambda o, args, kw: seen.append(("post", len(args))))
    everyone = register_global(lambda o, args, kw: seen.append(("global", type(o).__name__)))
    w.grad = lib.ones(2)
    opt.step()
    pre.remove()
    everyone.remove()
    opt.step()
    post.remove()
    swap = opt.register_step_pre_hook(lambda o, args, kw: ((o,), {"closure": lambda: seen.append("closure")}))
    opt.step()
    swap.remove()
    return seen, w.tolist()


def test_step_hooks_as_pytorch(torch):
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    from tinygrad_lab.optim.optimizer import register_optimizer_step_pre_hook as ours
    assert _step_hook_trace(tl, ours) == _step_hook_trace(torch, register_optimizer_step_pre_hook)
