"""Weight averaging, as torch.optim.swa_utils: stochastic weight averaging (SWA, Izmailov et al., 2018)
and exponential moving averages (EMA) of a model's parameters.

    swa_model = AveragedModel(model)               # a copy whose parameters are averages
    scheduler = SWALR(optimizer, swa_lr=0.05)      # anneal to a constant lr for the averaging phase
    ...each epoch: train; swa_model.update_parameters(model); scheduler.step()
    update_bn(loader, swa_model)                   # BatchNorm statistics for the averaged weights

Averages of weights are not weights that were trained, so BatchNorm's running statistics must be
computed again for them (`update_bn`: one pass over the data, a cumulative average).
"""
from __future__ import annotations

import copy
import math

from .. import creation
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..nn.modules.batchnorm import _BatchNorm
from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
           "get_swa_multi_avg_fn", "update_bn"]


def get_swa_avg_fn():
    """The running mean: after n models, averaged + (model - averaged) / (n + 1)."""
    def swa(averaged, model, n):
        return averaged + (model - averaged) / (int(n) + 1)
    return swa


def get_ema_avg_fn(decay: float = 0.999):
    """The exponential moving average: decay · averaged + (1 - decay) · model."""
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema(averaged, model, n):
        return decay * averaged + (1 - decay) * model
    return ema


def _per_list(avg_fn):
    def update(averaged: list, models: list, n) -> None:
        for a, m in zip(averaged, models):
            a.copy_(avg_fn(a, m, n))
    return update


def get_swa_multi_avg_fn():
    return _per_list(get_swa_avg_fn())


def get_ema_multi_avg_fn(decay: float = 0.999):
    return _per_list(get_ema_avg_fn(decay))


class AveragedModel(Module):
    """A deep copy of `model` whose parameters (and, with use_buffers, buffers) are the average of the
    model's at each update_parameters() call (the running mean, or avg_fn/multi_avg_fn's average).
    Calling it runs the copy."""

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None, use_buffers: bool = False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", creation.tensor(0, dtype="int64", device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold model's current parameters into the average (the first call copies them)."""
        mine, theirs = self._tensors(self.module), self._tensors(model)
        n = int(self.n_averaged.item())
        with no_grad():
            theirs = [t.detach().to(a.device) for a, t in zip(mine, theirs)]
            if n == 0:
                for a, t in zip(mine, theirs):
                    a.copy_(t)
            elif self.avg_fn is not None:
                _per_list(self.avg_fn)(mine, theirs, self.n_averaged)
            else:
                (self.multi_avg_fn or get_swa_multi_avg_fn())(mine, theirs, self.n_averaged)
            if not self.use_buffers:  # buffers (BatchNorm's statistics) follow the model's
                for a, t in zip(self.module.buffers(), model.buffers()):
                    a.copy_(t.detach().to(a.device))
            self.n_averaged.add_(1)

    def _tensors(self, module: Module) -> list:
        return list(module.parameters()) + (list(module.buffers()) if self.use_buffers else [])


class SWALR(LRScheduler):
    """Anneal each group's lr to its swa_lr over anneal_epochs steps (cosine or linear), then hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos", last_epoch: int = -1):
        swa_lrs = swa_lr if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(optimizer.param_groups)
        if len(swa_lrs) != len(optimizer.param_groups):
            raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: swa_lr has {len(swa_lrs)}, "
                             f"optimizer.param_groups has {len(optimizer.param_groups)}")
        for group, lr in zip(optimizer.param_groups, swa_lrs):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_strategy, self.anneal_epochs = anneal_strategy, anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _alpha(self, t: float) -> float:
        """How far along the annealing is (0: the starting lr, 1: swa_lr) at fraction t of it."""
        t = max(0.0, min(1.0, t))
        return (1 - math.cos(math.pi * t)) / 2 if self.anneal_strategy == "cos" else t

    def get_lr(self) -> list[float]:
        # The lr set at the previous step was swa·α_prev + start·(1 - α_prev): solve it for the starting
        # lr (so that a change made to group["lr"] by other code carries on), then step to α's value.
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        before = self._alpha((step - 1) / max(1, self.anneal_epochs))
        now = self._alpha(step / max(1, self.anneal_epochs))
        out = []
        for group in self.optimizer.param_groups:
            swa = group["swa_lr"]
            start = swa if before == 1 else (group["lr"] - before * swa) / (1 - before)
            out.append(swa * now + start * (1 - now))
        return out


def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the running statistics of model's BatchNorm layers with one pass over loader (batches, or
    (input, ...) tuples of which the first is the input), as a cumulative average."""
    layers = [m for m in model.modules() if isinstance(m, _BatchNorm)]
    if not layers:
        return
    momenta = {}
    for layer in layers:
        layer.reset_running_stats()
        momenta[layer], layer.momentum = layer.momentum, None  # momentum None: the cumulative average
    was_training = model.training
    model.train()
    with no_grad():
        for batch in loader:
            x = batch[0] if isinstance(batch, (list, tuple)) else batch
            model(x if device is None else x.to(device))
    for layer in layers:
        layer.momentum = momenta[layer]
    model.train(was_training)
