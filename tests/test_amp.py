"""amp: GradScaler's scaling, skipping and scale schedule (against torch.amp.GradScaler('cpu') when PyTorch
is installed, and by hand), autocast as a region that casts nothing, and the CUDA-only forms disabling
themselves on a machine without CUDA, as PyTorch's do."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_lab as tl

BAD_STEPS = {2, 5}  # steps whose loss is made infinite: the scaler must skip them


def _train(lib, scaler_args: dict, steps: int = 8):
    """(scale before each step, whether the parameters changed, final weight) of a scaled SGD loop."""
    lib.manual_seed(0)
    w = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", **scaler_args)
    scales, moved = [], []
    for step in range(steps):
        opt.zero_grad()
        loss = (w * w).sum() * (math.inf if step in BAD_STEPS else 1.0)
        before = w.detach().clone()
        scales.append(scaler.get_scale())
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        moved.append(not bool((w.detach() == before).all()))
    return scales, moved, w.detach().numpy()


ARGS = [dict(init_scale=8.0, growth_interval=2), dict(init_scale=2.0 ** 16), dict(init_scale=4.0, growth_factor=4.0,
                                                                                  backoff_factor=0.25, growth_interval=1)]


@pytest.mark.parametrize("args", ARGS)
def test_the_scale_schedule_and_skipped_steps_match_pytorch(args, torch):
    ours, theirs = _train(tl, args), _train(torch, args)
    assert ours[0] == theirs[0] and ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


def test_by_hand():
    scales, moved, w = _train(tl, dict(init_scale=8.0, growth_interval=2))
    assert scales == [8.0, 8.0, 16.0, 8.0, 8.0, 16.0, 8.0, 8.0]  # grows after 2 good steps, halves after a bad one
    assert moved == [step not in BAD_STEPS for step in range(8)]
    np.testing.assert_allclose(w, np.array([1.0, -2.0, 0.5]) * 0.8 ** 6, rtol=1e-6)  # six SGD steps on w²


def test_unscale_once_per_step_and_state_dict():
    w = tl.tensor([1.0], requires_grad=True)
    opt = tl.optim.SGD([w], lr=0.1)
    scaler = tl.amp.GradScaler("cpu", init_scale=4.0)
    scaler.scale(w.sum()).backward()
    scaler.unscale_(opt)
    assert w.grad.item() == 1.0
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    other = tl.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.get_scale() == 4.0


@pytest.mark.skipif(tl.cuda.is_available(), reason="a machine with CUDA keeps them enabled")
def test_cuda_forms_disable_themselves_without_cuda():
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
        scaler = tl.cuda.amp.GradScaler()
    loss = tl.tensor(3.0, requires_grad=True)
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.scale(loss) is loss
    with pytest.warns(UserWarning, match="Disabling"):
        with tl.autocast("cuda"):
            assert not tl.is_autocast_enabled("cuda")


def test_autocast_marks_a_region_and_casts_nothing():
    x = tl.randn(2, 3)

    @tl.autocast("cpu")
    def inside():
        assert tl.is_autocast_enabled("cpu")
        return x @ x.t()

    assert inside().dtype == tl.float32 and not tl.is_autocast_enabled("cpu")
