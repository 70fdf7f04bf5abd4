"""Learning-rate schedules: change each parameter group's `lr` once per `scheduler.step()`.

Usage, as in PyTorch (the scheduler steps *after* the optimizer):

    opt = optim.SGD(model.parameters(), lr=0.1)
    sched = optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train_one_epoch(...)   # calls opt.step()
        sched.step()

Like PyTorch's, the schedulers are *chainable*: most compute the next lr from the
group's current lr (lr ← lr·γ), so two schedulers on one optimizer compose. Each
also has a closed form in terms of the epoch (`_get_closed_form_lr`), used by the
deprecated `step(epoch)`. Deviation: learning rates are Python numbers only (no
tensor lrs).
"""
from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from .optimizer import Optimizer

_EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available.")


class LRScheduler:
    """Base class: subclasses say how to compute the next lrs in `get_lr()`.

    `last_epoch` counts the scheduler's steps; constructing a scheduler performs
    step 0 (which keeps the optimizer's lrs) and records them as `base_lrs`.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        self.optimizer = _checked(optimizer)
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a "
                                   f"scheduler with last_epoch={last_epoch}: load the optimizer's state_dict "
                                   f"first, or use last_epoch=-1 for a fresh run")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The lr of each group for epoch `last_epoch` (called by `step()`; read `get_last_lr()` instead)."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last `step()`, one per parameter group."""
        return self._last_lr

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=3)

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and write the new lrs into the optimizer's param groups."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. You should call them "
                          "in the opposite order: `optimizer.step()` before `lr_scheduler.step()`. Failure to do "
                          "this will result in skipping the first value of the learning rate schedule.",
                          UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        """The next epoch's lrs (get_lr), or epoch's from the closed form where there is one."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        self._set_lrs(values)

    def _set_lrs(self, values: list[float]) -> None:
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = _current_lrs(self.optimizer)

    def state_dict(self) -> dict[str, Any]:
        """Everything in the scheduler except the optimizer (checkpoint that separately)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    _get_lr_called_within_step = False
    _is_initial = False


def _current_lrs(optimizer: Optimizer) -> list[float]:
    return [group["lr"] for group in optimizer.param_groups]


def _checked(optimizer) -> Optimizer:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
    return optimizer


def _per_group(name: str, optimizer: Optimizer, value) -> list:
    """One value per param group: a list of them as given, or one value repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(value)} "
                             f"values, param_groups has {len(optimizer.param_groups)}.")
        return list(value)
    return [value] * len(optimizer.param_groups)


class _Lambdas(LRScheduler):
    """A scheduler driven by user functions of the epoch, one per param group; functions and lambdas
    are not saved in state_dict (only the attributes of callable objects), as in PyTorch."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        _checked(optimizer)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """As the base's, but functions and lambdas are not saved (only the attributes of callable objects)."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_Lambdas):
    """lr = base_lr · lr_lambda(epoch); one function for all groups, or a list with one per group."""

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_Lambdas):
    """lr ← lr · lr_lambda(epoch) at every step (the factor, not the lr, is the function's value)."""

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        if self._is_initial:
            return _current_lrs(self.optimizer)
        return [lr * lmbda(self.last_epoch) for lmbda, lr in zip(self.lr_lambdas, _current_lrs(self.optimizer))]


class StepLR(LRScheduler):
    """lr ← lr·gamma every `step_size` epochs: base_lr · gamma^(epoch // step_size)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _current_lrs(self.optimizer)
        return [lr * self.gamma for lr in _current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr ← lr·gamma at each milestone epoch (a milestone listed twice decays twice)."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return _current_lrs(self.optimizer)
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in _current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr ← lr·gamma every epoch: base_lr · gamma^epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        if self._is_initial:  # construction (also when resuming at last_epoch > 0) keeps the current lrs
            return _current_lrs(self.optimizer)
        return [lr * self.gamma for lr in _current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Cosine annealing from base_lr down to eta_min over T_max epochs (SGDR without restarts):

        lr_t = eta_min + (base_lr - eta_min) · (1 + cos(π·t/T_max)) / 2

    Computed, as in PyTorch, by the equivalent recursion from the current lr

        lr_t = eta_min + (lr_{t-1} - eta_min) · (1 + cos(π·t/T_max)) / (1 + cos(π·(t-1)/T_max))

    so that it chains with other schedulers. Past T_max the lr climbs back up along the
    same cosine (period 2·T_max).
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _current_lrs(self.optimizer)
        if self._step_count == 1 and t > 0:  # resumed at epoch t: start from the closed form
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(t * math.pi / T)) / 2
                    for base_lr in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:  # leaving the minimum, where the ratio below would be 0/0
            return [lr + (base_lr - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base_lr, lr in zip(self.base_lrs, _current_lrs(self.optimizer))]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (lr - eta_min) + eta_min
                for lr in _current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]



class ConstantLR(LRScheduler):
    """lr = base_lr · factor for the first total_iters epochs, base_lr afterwards (a warm-up at a lower rate)."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [lr * self.factor for lr in _current_lrs(self.optimizer)]
        if self.last_epoch != self.total_iters:
            return _current_lrs(self.optimizer)
        return [lr * (1.0 / self.factor) for lr in _current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        factor = 1.0 if self.last_epoch >= self.total_iters else self.factor
        return [base_lr * factor for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """lr goes from base_lr · start_factor to base_lr · end_factor in a straight line over total_iters epochs."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """Chainable: each step multiplies the lr by the ratio of this epoch's factor to the last one's."""
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in _current_lrs(self.optimizer)]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _current_lrs(self.optimizer)
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [lr * ratio for lr in _current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor) * done)
                for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = base_lr · (1 - epoch/total_iters)^power, reaching 0 at total_iters and staying there."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _current_lrs(self.optimizer)
        t, T = self.last_epoch, self.total_iters
        decay = ((1.0 - t / T) / (1.0 - (t - 1) / T)) ** self.power
        return [lr * decay for lr in _current_lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing from base_lr to eta_min, restarted every T_i epochs (SGDR, Loshchilov & Hutter):

        lr = eta_min + (base_lr - eta_min) · (1 + cos(π·T_cur/T_i)) / 2

    T_cur counts the epochs since the last restart; the first period is T_0 and each next one is
    T_mult times longer. `step(epoch)` takes a fractional epoch too (e.g. epoch + batch / batches),
    as PyTorch's does, without a deprecation warning.
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch (T_cur + 1, restarting at T_i), or jump to `epoch` (which may be fractional)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:  # a restart
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            self._jump_to(epoch)
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        self._set_lrs(values)

    def _jump_to(self, epoch: float) -> None:
        """T_cur and T_i at `epoch`: which period it falls in (periods T_0, T_0·T_mult, ...) and how far in."""
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))  # full periods before epoch
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n


def _check_members(kind: str, optimizer: Optimizer, schedulers) -> None:
    """The schedulers a SequentialLR or ChainedScheduler drives: all of one optimizer, none on a metric."""
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{kind} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{kind} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                             f"kwargs to be specified when calling `step`, but got one at index {i} in the given "
                             f"schedulers sequence.")
        if scheduler.optimizer is not optimizer:
            raise ValueError(f"{kind} expects all schedulers to belong to the same optimizer, but got scheduler "
                             f"{type(scheduler).__name__} at index {i} has {scheduler.optimizer}, which is "
                             f"different from {type(optimizer).__name__}.")


class _Composite(LRScheduler):
    """A scheduler made of other schedulers: its state_dict holds theirs."""

    def state_dict(self) -> dict[str, Any]:
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, saved in zip(self._schedulers, schedulers):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite):
    """One scheduler after another: schedulers[i] runs from milestones[i - 1] on, starting at its
    epoch 0 there (e.g. a LinearLR warm-up, then CosineAnnealingLR)."""

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list[int], last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler, but got no scheduler.")
        _check_members("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:  # undo what constructing the schedulers did to the lrs...
            group["lr"] = group["initial_lr"]
        _undo_initial_steps(self)             # ...and to their epoch counters, then start the first one again
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)  # a milestone: the next scheduler starts at its epoch 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


def _undo_initial_steps(scheduler) -> None:
    """Take back the step every (nested) scheduler made when it was constructed."""
    for inner in scheduler._schedulers:
        if hasattr(inner, "_schedulers"):
            _undo_initial_steps(inner)
        elif hasattr(inner, "last_epoch"):
            inner.last_epoch -= 1


class ChainedScheduler(_Composite):
    """Several schedulers stepped together on one optimizer: their changes multiply (each chains
    on the lr the previous one set)."""

    def __init__(self, schedulers, optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_members("ChainedScheduler", optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _current_lrs(optimizer)

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _current_lrs(self.optimizer)


class ReduceLROnPlateau(LRScheduler):
    """lr ← max(lr · factor, min_lr) once the metric passed to step(metric) has not improved for more
    than `patience` epochs (then wait `cooldown` epochs before counting again). 'Improved' means
    below best · (1 - threshold) in mode 'min' with threshold_mode 'rel' (above, in mode 'max';
    best ∓ threshold with 'abs'). Changes smaller than eps are skipped."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr=0,
                 eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        self.optimizer = _checked(optimizer)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _current_lrs(optimizer)
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            return a < (best * (1.0 - self.threshold) if self.threshold_mode == "rel" else best - self.threshold)
        return a > (best * (self.threshold + 1.0) if self.threshold_mode == "rel" else best + self.threshold)

    def step(self, metrics, epoch: int | None = None) -> None:
        """Record this epoch's metric (e.g. the validation loss) and reduce the lrs on a plateau."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _current_lrs(self.optimizer)

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                                   f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new "
                                   f"param group being added to the optimizer. Please modify the `min_lrs` field to "
                                   f"match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr


def _set_momentum(group: dict, momentum: float, use_beta1: bool) -> None:
    """The group's momentum: `momentum` for SGD/RMSprop, the first of `betas` for the Adam family."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _momentum_kind(optimizer: Optimizer) -> bool:
    """Whether the optimizer's momentum is beta1 (Adam family) rather than `momentum` (SGD, RMSprop)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    return "betas" in optimizer.defaults


class CyclicLR(LRScheduler):
    r"""The lr cycles between base_lr and max_lr (Smith, 2017), one step per *batch*: up over
    step_size_up steps, down over step_size_down. The amplitude is scaled per cycle ('triangular':
    1; 'triangular2': halved each cycle; 'exp_range': gamma^step) or by scale_fn. With
    cycle_momentum the momentum moves the opposite way, between max_momentum and base_momentum.
    """

    def __init__(self, optimizer: Optimizer, base_lr, max_lr, step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular", gamma: float = 1.0,
                 scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1) -> None:
        _checked(optimizer)
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self.scale_mode = mode, gamma, scale_mode
        self._scale_fn_custom = scale_fn
        if scale_fn is None:  # the built-in modes fix their scale mode
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_kind(optimizer)
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for max_m, base_m, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    _set_momentum(group, max_m, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = max_m, base_m
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        """How much of the cycle's amplitude is used at cycle (or step) x."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # how far into the cycle, 0..1
        height = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * height * scale for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, base, top in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, top - (top - base) * height * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """As the base's; a scale_fn function is not saved, a callable object's attributes are."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        saved = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if saved is not None:
            self._scale_fn_custom.__dict__.update(saved)


class OneCycleLR(LRScheduler):
    r"""The 1cycle policy (Smith & Topin, 2018), one step per *batch*: the lr warms up from
    max_lr/div_factor to max_lr over the first pct_start of total_steps, then anneals to
    initial_lr/final_div_factor ('cos' or 'linear'); momentum moves the opposite way.
    three_phase adds a phase back down to the initial lr before the final annealing.
    Stepping more than total_steps times is an error.
    """

    def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False, last_epoch: int = -1) -> None:
        _checked(optimizer)
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        self._schedule_phases = _one_cycle_phases(self.total_steps, pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_kind(optimizer)
            max_ms = _per_group("max_momentum", optimizer, max_momentum)
            base_ms = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for max_m, base_m, group in zip(max_ms, base_ms, optimizer.param_groups):
                    _set_momentum(group, max_m, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = max_m, base_m
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        """From start (pct = 0) to end (pct = 1): along half a cosine, or a straight line."""
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal(group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = end_step
        return lrs


def _total_steps(total_steps, epochs, steps_per_epoch) -> int:
    if total_steps is not None:
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is not None and steps_per_epoch is not None:
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
        return epochs * steps_per_epoch
    raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")


def _one_cycle_phases(total_steps: int, pct_start: float, three_phase: bool) -> list[dict]:
    """The phases of OneCycleLR: the step each ends at, and the group keys its lr and momentum go between."""
    def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
        return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr, "start_momentum": start_momentum,
                "end_momentum": end_momentum}

    warm_up = phase(float(pct_start * total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum")
    if not three_phase:
        return [warm_up, phase(total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
    return [warm_up,
            phase(float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
            phase(total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]


_LRScheduler = LRScheduler  # PyTorch's old name
