"""Conformance of the optimizers against PyTorch's own optimizer tests.

PyTorch tests each optimizer on the settings of its OptimizerInfo database
(`torch.testing._internal.common_optimizers.optim_db`): momentum, nesterov, weight decay (coupled and
decoupled), amsgrad, maximize, centered, lr decay, a tensor lr, strong-Wolfe line search, ... Here every
optimizer tinygrad_lab provides runs on each of those settings beside PyTorch's, from the same float64
parameters (a weight matrix and a bias, in two parameter groups when the optimizer takes groups) on the
same smooth, non-quadratic loss, for several steps: after every step the parameters must match.
Settings of PyTorch's implementation switches (foreach, fused, capturable, differentiable) are
left out: they choose how PyTorch computes the step, not what it computes. Without PyTorch (or its
test helper `expecttest`) the module is skipped.
"""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

torch = pytest.importorskip("torch", exc_type=ImportError)
_co = pytest.importorskip("torch.testing._internal.common_optimizers", exc_type=ImportError)

STEPS = 6
IMPLEMENTATION_SWITCHES = {"foreach", "fused", "capturable", "differentiable"}


def _ours(info):
    return getattr(tl.optim, info.optim_cls.__name__, None)


def _cases():
    cases = []
    for info in _co.optim_db:
        if _ours(info) is None:
            continue
        for setting in info.optim_inputs_func(device="cpu"):
            if IMPLEMENTATION_SWITCHES & set(setting.kwargs):
                continue
            cases.append(pytest.param(info, setting.kwargs, id=f"{info.optim_cls.__name__}-{setting.desc}"))
    return cases


def _start():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((5, 3)), rng.standard_normal((5, 4))


def _loss(lib, w, b, x, y):
    """Smooth and not quadratic, so every optimizer's path depends on all of its state."""
    err = lib.matmul(x, w) + b - y
    return (err * err).sum() + lib.sin(w).sum() + 0.1 * (b ** 4).sum()


def _convert(value):
    return tl.tensor(value.numpy()) if isinstance(value, torch.Tensor) else value


def _run(lib, info, kwargs: dict) -> list:
    """The parameters after each of STEPS steps, as NumPy arrays."""
    w0, b0, x0, y0 = _start()
    w, b = (lib.tensor(a, requires_grad=True) for a in (w0, b0))
    x, y = lib.tensor(x0), lib.tensor(y0)
    groups = [{"params": [w]}, {"params": [b]}] if info.supports_param_groups else [w, b]
    opt = getattr(lib.optim, info.optim_cls.__name__)(groups, **kwargs)

    def closure():
        opt.zero_grad()
        loss = _loss(lib, w, b, x, y)
        loss.backward()
        return loss

    seen = []
    for _ in range(STEPS):
        if info.step_requires_closure:
            opt.step(closure)
        else:
            closure()
            opt.step()
        seen.append([p.detach().numpy().copy() for p in (w, b)])
    return seen


@pytest.mark.parametrize("info, kwargs", _cases())
def test_optimizer_matches_pytorch_on_its_settings(info, kwargs):
    want = _run(torch, info, kwargs)
    got = _run(tl, info, {k: _convert(v) for k, v in kwargs.items()})
    for step, (g, w) in enumerate(zip(got, want)):
        for name, a, e in zip(("weight", "bias"), g, w):
            np.testing.assert_allclose(a, e, rtol=1e-7, atol=1e-9, err_msg=f"{name} after step {step + 1}")


def test_coverage(capsys):
    names = sorted(info.optim_cls.__name__ for info in _co.optim_db)
    ours = [n for n in names if hasattr(tl.optim, n)]
    with capsys.disabled():
        print(f"\nOptimizerInfo conformance: tinygrad_lab provides {len(ours)} of optim_db's {len(names)} optimizers; "
              f"missing: {', '.join(sorted(set(names) - set(ours)))}")
    assert len(ours) >= 12


def test_a_tensor_lr_is_read_afresh_at_each_step():
    w = tl.tensor([1.0], requires_grad=True)
    lr = tl.tensor(0.5)
    opt = tl.optim.SGD([w], lr=lr)
    for step_lr in (0.5, 0.25):
        lr.fill_(step_lr)
        w.grad = tl.ones(1)
        opt.step()
    assert w.item() == pytest.approx(1.0 - 0.5 - 0.25)
    with pytest.raises(ValueError, match="1-element"):
        opt.add_param_group({"params": [tl.zeros(1, requires_grad=True)], "lr": tl.tensor([0.1, 0.2])})
