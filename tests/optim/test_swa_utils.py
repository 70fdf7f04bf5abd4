"""optim.swa_utils: a training run with SWA, an EMA, SWALR and update_bn prints exactly what it prints with
PyTorch (tests/optim/swa_program.py), and the averages, schedules and statistics by hand."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import tinygrad_lab as tl

from .._helpers import assert_prints_as_torch

swa_utils = tl.optim.swa_utils
PROGRAM = Path(__file__).with_name("swa_program.py")


def test_the_program_prints_what_pytorch_prints(torch):
    assert_prints_as_torch(PROGRAM)


def test_averages_by_hand():
    model = tl.nn.Linear(2, 1, bias=False)
    swa, ema = swa_utils.AveragedModel(model), swa_utils.AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.5))
    seen = []
    for k in range(4):
        with tl.no_grad():
            model.weight.fill_(float(k))
        seen.append(float(k))
        swa.update_parameters(model)
        ema.update_parameters(model)
    np.testing.assert_allclose(swa.module.weight.detach().numpy(), np.mean(seen))  # the running mean
    np.testing.assert_allclose(ema.module.weight.detach().numpy(), ((0 * .5 + 1 * .5) * .5 + 2 * .5) * .5 + 3 * .5)
    assert int(swa.n_averaged) == 4 and swa(tl.ones(1, 2)).item() == pytest.approx(2 * np.mean(seen))


def test_swalr_anneals_to_swa_lr_and_holds_it():
    opt = tl.optim.SGD([tl.zeros(1, requires_grad=True)], lr=1.0)
    sched = swa_utils.SWALR(opt, swa_lr=0.2, anneal_epochs=2)
    lrs = []
    for _ in range(4):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    cos_half = (1 - math.cos(math.pi / 2)) / 2
    np.testing.assert_allclose(lrs, [0.2 * cos_half + 1.0 * (1 - cos_half), 0.2, 0.2, 0.2])
    with pytest.raises(ValueError, match="anneal_strategy"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="step")


def test_update_bn_sets_the_statistics_of_the_whole_data():
    model = tl.nn.Sequential(tl.nn.Linear(2, 3), tl.nn.BatchNorm1d(3)).double().eval()
    batches = [tl.tensor(np.random.default_rng(k).standard_normal((5, 2))) for k in range(3)]
    swa_utils.update_bn(batches, model)
    bn = model[1]
    hidden = [model[0](b).detach().numpy() for b in batches]
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([h.mean(0) for h in hidden], 0), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), np.mean([h.var(0, ddof=1) for h in hidden], 0), rtol=1e-12)
    assert bn.momentum == 0.1 and not model.training
