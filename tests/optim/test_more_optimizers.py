"""Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop and LBFGS against torch.optim: the same start, the
same loss, step by step in float64 (rtol 1e-10) and float32, with weight decay and each
optimizer's flags; the same state entries; state_dict round trips and PyTorch state_dicts that
continue a run; LBFGS with and without the strong-Wolfe line search on Rosenbrock's function."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import optim

from .test_optim import B0, U0, W0, X, Y, loss_fn

STEPS = 25

CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.95), "weight_decay": 0.1, "eps": 1e-6}),
    ("Adamax", {"lr": 0.01, "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "betas": (0.8, 0.9), "maximize": True}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.005, "betas": (0.5, 0.6), "eps": 1e-5, "maximize": True}),  # rho_t > 5 from step 2
    ("ASGD", {"lr": 0.05}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 10, "weight_decay": 0.1}),  # averaging from step 11
    ("ASGD", {"lr": 0.01, "t0": 0, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"lr": 0.01, "maximize": True}),
]


def run(lib, name, kwargs, dtype="float64", steps=STEPS):
    """Optimize W, b (and an unused tensor) for `steps` steps; the parameters after each step."""
    dt = getattr(lib, dtype)
    W = lib.tensor(W0.copy(), dtype=dt, requires_grad=True)
    b = lib.tensor(B0.copy(), dtype=dt, requires_grad=True)
    unused = lib.tensor(U0.copy(), dtype=dt, requires_grad=True)
    X_, Y_ = lib.tensor(X, dtype=dt), lib.tensor(Y, dtype=dt)
    opt = getattr(lib.optim, name)([W, b, unused], **kwargs)
    trajectory = []
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(W, b, X_, Y_).backward()
        opt.step()
        trajectory.append([W.detach().numpy().copy(), b.detach().numpy().copy()])
    np.testing.assert_array_equal(unused.detach().numpy(), U0.astype(unused.detach().numpy().dtype))
    return trajectory, opt, (W, b)


def assert_same_trajectory(ours, theirs, rtol, atol):
    for step, (a, e) in enumerate(zip(ours, theirs)):
        for name, x, y in zip("Wb", a, e):
            assert x.dtype == y.dtype
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=f"{name} after step {step + 1}")


IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in CASES]


@pytest.mark.parametrize("name, kwargs", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_trajectory_and_state_match_torch(torch, name, kwargs, dtype):
    ours, opt, _ = run(tl, name, kwargs, dtype)
    theirs, topt, _ = run(torch, name, kwargs, dtype)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (2e-5, 1e-6)
    assert_same_trajectory(ours, theirs, rtol, atol)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["state"].keys() == tsd["state"].keys() == {0, 1}
    for i, entries in tsd["state"].items():
        assert sd["state"][i].keys() == entries.keys()
        for key, value in entries.items():
            ours_value = sd["state"][i][key]
            assert str(ours_value.dtype).rpartition(".")[2] == str(value.dtype).rpartition(".")[2], key
            np.testing.assert_allclose(ours_value.numpy(), value.numpy(), rtol=rtol * 10, atol=atol, err_msg=key)
    torch_only = {"foreach", "fused", "differentiable", "capturable"}
    assert set(sd["param_groups"][0]) == set(tsd["param_groups"][0]) - torch_only


ROUND_TRIPS = [CASES[1], CASES[4], CASES[8], CASES[13], CASES[15], CASES[18]]
# NAdam's mu_product is a float32 tensor; loading a state_dict casts it to the parameters' dtype (as
# PyTorch does), so a resumed float64 run differs from a straight one in the last bits
_FLOAT32_SCALARS = {"NAdam"}


def resume(lib, name, kwargs, state_dict, W, b, steps=10):
    """A fresh optimizer over copies of W, b loaded with state_dict, then `steps` more steps."""
    W2 = lib.tensor(W.detach().numpy().copy(), requires_grad=True)
    b2 = lib.tensor(b.detach().numpy().copy(), requires_grad=True)
    opt = getattr(lib.optim, name)([W2, b2, lib.tensor(U0.copy(), requires_grad=True)], **kwargs)
    opt.load_state_dict(state_dict)
    X_, Y_ = lib.tensor(X), lib.tensor(Y)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(W2, b2, X_, Y_).backward()
        opt.step()
        out.append([W2.detach().numpy().copy(), b2.detach().numpy().copy()])
    return out


@pytest.mark.parametrize("name, kwargs", ROUND_TRIPS, ids=[n for n, _ in ROUND_TRIPS])
def test_state_dict_round_trip_continues_the_same_trajectory(name, kwargs, tmp_path):
    straight, _, _ = run(tl, name, kwargs, steps=20)
    first, opt, (W, b) = run(tl, name, kwargs, steps=10)
    tl.save(opt.state_dict(), tmp_path / "opt.tl")             # through a file, as a checkpoint would
    second = resume(tl, name, kwargs, tl.load(tmp_path / "opt.tl"), W, b)
    exact = name not in _FLOAT32_SCALARS
    assert_same_trajectory(first + second, straight, 0 if exact else 1e-7, 0 if exact else 1e-12)


@pytest.mark.parametrize("name, kwargs", ROUND_TRIPS, ids=[n for n, _ in ROUND_TRIPS])
def test_a_torch_state_dict_continues_the_run(torch, name, kwargs):
    # 10 steps in PyTorch, then 10 in tinygrad_lab == 10 in PyTorch, then 10 in a freshly loaded PyTorch one
    _, topt, (W, b) = run(torch, name, kwargs, steps=10)
    ours = resume(tl, name, kwargs, topt.state_dict(), W, b)
    theirs = resume(torch, name, kwargs, topt.state_dict(), W, b)
    assert_same_trajectory(ours, theirs, 1e-10, 1e-12)


def test_invalid_hyperparameters_match_torch(torch):
    bad = [
        ("Adadelta", {"rho": 1.5}, "Invalid rho value: 1.5"), ("Adadelta", {"lr": -1}, "Invalid learning rate: -1"),
        ("Adamax", {"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1: 1.0"),
        ("Adamax", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
        ("NAdam", {"momentum_decay": -0.1}, "Invalid momentum_decay value: -0.1"),
        ("RAdam", {"weight_decay": -0.1}, "Invalid weight_decay value: -0.1"),
        ("ASGD", {"lr": -0.1}, "Invalid learning rate: -0.1"),
        ("Rprop", {"etas": (1.5, 1.2)}, "Invalid eta values: 1.5, 1.2"),
        ("LBFGS", {"lr": -1.0}, "Invalid learning rate: -1.0"),
    ]
    for name, kwargs, message in bad:
        for lib in (tl, torch):
            with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
                getattr(lib.optim, name)([lib.ones(2, requires_grad=True)], **kwargs)


def test_optimizers_minimise_a_quadratic():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((5, 5))
    A = M @ M.T / 5 + np.eye(5)
    c = rng.standard_normal(5)
    x_star = np.linalg.solve(A, c)
    for make, steps in [(lambda ps: optim.Adadelta(ps, eps=1e-3), 1000), (lambda ps: optim.Adamax(ps, lr=0.05), 1000),
                        (lambda ps: optim.NAdam(ps, lr=0.01), 1500), (lambda ps: optim.RAdam(ps, lr=0.05), 1000),
                        (lambda ps: optim.ASGD(ps, lr=0.05, t0=500), 1000), (lambda ps: optim.Rprop(ps), 300)]:
        x = tl.zeros(5, dtype=tl.float64, requires_grad=True)
        opt = make([x])
        for _ in range(steps):
            opt.zero_grad()
            (0.5 * (x @ (tl.tensor(A) @ x)) - tl.tensor(c) @ x).backward()
            opt.step()
        np.testing.assert_allclose(x.detach().numpy(), x_star, atol=2e-3, err_msg=type(opt).__name__)


# ---------------------------------------------------------------- LBFGS

def rosenbrock(lib, x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def lbfgs_run(lib, kwargs, steps=4, dtype="float64", start=(-1.5, 2.0, 0.5, -0.8)):
    x = lib.tensor(np.array(start), dtype=getattr(lib, dtype), requires_grad=True)
    opt = lib.optim.LBFGS([x], **kwargs)
    calls = [0]

    def closure():
        calls[0] += 1
        opt.zero_grad()
        loss = rosenbrock(lib, x)
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        out.append((float(loss), x.detach().numpy().copy(), calls[0]))
    return out, opt, x


LBFGS_CASES = [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"lr": 0.1, "max_iter": 7, "history_size": 3},
    {"line_search_fn": "strong_wolfe", "max_iter": 30, "history_size": 5, "tolerance_change": 1e-12},
    {"line_search_fn": "strong_wolfe", "max_eval": 9, "tolerance_grad": 1e-3},
    # steps far too long at first: the line search brackets, then zooms (every branch of the zoom runs)
    {"line_search_fn": "strong_wolfe", "lr": 5, "max_iter": 15},
    {"line_search_fn": "strong_wolfe", "lr": 100, "max_iter": 15, "start": (-1.2, 1.0)},
    # (one step only: PyTorch's scalar / tensor is a reciprocal times the scalar, one ulp away from a
    # division, and with steps this extreme the line search's decisions amplify that within a few steps)
    {"line_search_fn": "strong_wolfe", "lr": 1e4, "max_iter": 15, "start": (3.0, -2.0, 1.0), "steps": 1},
]


@pytest.mark.parametrize("kwargs", LBFGS_CASES, ids=[str(k) for k in LBFGS_CASES])
def test_lbfgs_matches_torch_on_rosenbrock(torch, kwargs):
    kwargs = dict(kwargs)
    start, steps = kwargs.pop("start", (-1.5, 2.0, 0.5, -0.8)), kwargs.pop("steps", 4)
    ours, opt, x = lbfgs_run(tl, kwargs, steps, start=start)
    theirs, topt, tx = lbfgs_run(torch, kwargs, steps, start=start)
    for step, ((loss, value, calls), (tloss, tvalue, tcalls)) in enumerate(zip(ours, theirs)):
        assert calls == tcalls, f"closure calls by step {step + 1}"
        np.testing.assert_allclose(loss, tloss, rtol=1e-9, err_msg=f"loss at step {step + 1}")
        np.testing.assert_allclose(value, tvalue, rtol=1e-8, atol=1e-10, err_msg=f"x after step {step + 1}")
    state, tstate = opt.state[x], topt.state[tx]
    assert state.keys() == tstate.keys()
    assert state["func_evals"] == tstate["func_evals"] and state["n_iter"] == tstate["n_iter"]
    for key in ("d", "prev_flat_grad"):
        np.testing.assert_allclose(state[key].numpy(), tstate[key].numpy(), rtol=1e-7, atol=1e-10, err_msg=key)
    np.testing.assert_allclose([float(r) for r in state["ro"]], [float(r) for r in tstate["ro"]], rtol=1e-7)
    np.testing.assert_allclose(float(state["t"]), float(tstate["t"]), rtol=1e-9)


def test_lbfgs_converges():
    # Rosenbrock's banana valley from the classic start (-1.2, 1): the minimum is (1, 1)
    for kwargs in ({"line_search_fn": "strong_wolfe", "max_iter": 100, "tolerance_change": 1e-14}, {"max_iter": 500}):
        out, _, x = lbfgs_run(tl, kwargs, steps=3, start=(-1.2, 1.0))
        np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-5)
        assert out[-1][0] < 1e-10


def test_lbfgs_in_float32_matches_torch(torch):
    # one step of a few iterations: later, the stopping tests (in float64 here, float32 in PyTorch) may differ
    ours, _, _ = lbfgs_run(tl, {"line_search_fn": "strong_wolfe", "max_iter": 6}, steps=1, dtype="float32")
    theirs, _, _ = lbfgs_run(torch, {"line_search_fn": "strong_wolfe", "max_iter": 6}, steps=1, dtype="float32")
    for (loss, value, _), (tloss, tvalue, _) in zip(ours, theirs):
        np.testing.assert_allclose(value, tvalue, rtol=1e-3, atol=1e-4)
        assert value.dtype == np.float32


def test_lbfgs_state_dict_round_trip(tmp_path):
    kwargs = {"line_search_fn": "strong_wolfe", "max_iter": 3, "history_size": 4}
    straight, _, _ = lbfgs_run(tl, kwargs, steps=4)
    first, opt, x = lbfgs_run(tl, kwargs, steps=2)
    tl.save(opt.state_dict(), tmp_path / "lbfgs.tl")
    x2 = tl.tensor(x.detach().numpy().copy(), requires_grad=True)
    fresh = optim.LBFGS([x2], **kwargs)
    fresh.load_state_dict(tl.load(tmp_path / "lbfgs.tl"))

    def closure():
        fresh.zero_grad()
        loss = rosenbrock(tl, x2)
        loss.backward()
        return loss

    for step in range(2, 4):
        fresh.step(closure)
        np.testing.assert_array_equal(x2.detach().numpy(), straight[step][1])


def test_lbfgs_loads_a_torch_state_dict(torch):
    kwargs = {"line_search_fn": "strong_wolfe", "max_iter": 3}
    straight, _, _ = lbfgs_run(torch, kwargs, steps=3)
    _, topt, tx = lbfgs_run(torch, kwargs, steps=2)
    x = tl.tensor(tx.detach().numpy().copy(), requires_grad=True)
    opt = optim.LBFGS([x], **kwargs)
    opt.load_state_dict(copy.deepcopy(topt.state_dict()))

    def closure():
        opt.zero_grad()
        loss = rosenbrock(tl, x)
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), straight[2][1], rtol=1e-8)


def test_lbfgs_errors(torch):
    p, q = tl.ones(2, requires_grad=True), tl.ones(2, requires_grad=True)
    for lib, a, b in ((tl, p, q), (torch, torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True))):
        with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
            lib.optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = optim.LBFGS([p], line_search_fn="backtracking")
    p.grad = tl.ones(2)
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(lambda: (p * p).sum())
    with pytest.raises(TypeError, match="needs a closure"):
        opt.step(None)


# the line search on its own, against PyTorch's, over functions and first steps chosen to reach every
# branch: widening, the zoom, trial steps stuck near the bracket's ends, overflow to inf and nan, and
# running out of evaluations (a function that decreases for ever)
LINE_SEARCH_FUNCTIONS = {
    "quartic": lambda x: (x ** 4 - 3 * x ** 2 + x).sum(),
    "wavy": lambda x: (x ** 2 + 3 * (2 * x).sin()).sum(),
    "rosenbrock": lambda x: (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum(),
    "kink": lambda x: ((x * x + 1e-4).sqrt() + 0.1 * x).sum(),
    "exp": lambda x: ((3 * x).exp() + (-3 * x).exp()).sum(),
    "steep": lambda x: (x ** 8 + x).sum(),
    "unbounded": lambda x: (-x).sum(),
}


def _strong_wolfe(lib, fn, x0, t):
    from tinygrad_lab.optim import lbfgs

    def value_and_grad(x):
        x = x.detach().clone().requires_grad_(True)
        f = fn(x)
        f.backward()
        return float(f.detach()), x.grad

    x = lib.tensor(x0)
    f, g = value_and_grad(x)
    d = -g
    gtd = (g * d).sum()
    if lib is tl:
        out = lbfgs._strong_wolfe(lambda step: value_and_grad(x + step * d), t, d, f, g, gtd.item())
    else:
        from torch.optim import lbfgs as torch_lbfgs
        out = torch_lbfgs._strong_wolfe(lambda x_, step, d_: value_and_grad(x_ + step * d_), x, t, d, f, g, gtd)
    return float(out[0]), float(out[2]), int(out[3]), out[1].detach().numpy()


@pytest.mark.parametrize("name", LINE_SEARCH_FUNCTIONS)
def test_strong_wolfe_line_search_matches_torch(torch, name):
    fn, rng = LINE_SEARCH_FUNCTIONS[name], np.random.default_rng(5)
    for x0 in rng.uniform(-2, 2, (6, 3)):
        for t in np.logspace(-3, 3, 13):
            loss, step, evals, grad = _strong_wolfe(tl, fn, x0, float(t))
            tloss, tstep, tevals, tgrad = _strong_wolfe(torch, fn, x0, float(t))
            where = f"{name} from {x0} with first step {t}"
            assert evals == tevals, where
            np.testing.assert_allclose([loss, step], [tloss, tstep], rtol=1e-9, equal_nan=True, err_msg=where)
            np.testing.assert_allclose(grad, tgrad, rtol=1e-8, atol=1e-12, equal_nan=True, err_msg=where)
