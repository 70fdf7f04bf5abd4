"""Adagrad: each coordinate's step shrinks with the sum of its squared gradients so far."""
from __future__ import annotations

from .. import creation
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, lr_of


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al., 2011), with PyTorch's options.

    For each parameter θ with gradient g, at step t = 1, 2, ...:

        g   = g + λθ                              (weight_decay λ)
        clr = lr / (1 + (t - 1)·lr_decay)
        s   = s + g²                              (s starts at initial_accumulator_value)
        θ   = θ - clr · g / (√s + eps)
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, *, maximize: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "maximize": maximize}
        super().__init__(params, defaults)
        # Adagrad's state exists from the start (PyTorch does the same), so a state_dict
        # taken before the first step already holds the accumulators.
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group) -> None:
        state = self.state[p]
        state["step"] = creation.tensor(0.0)
        state["sum"] = creation.full_like(p, group["initial_accumulator_value"])

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns the closure's loss if given."""
        loss = self._evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                lr, lr_decay, eps = lr_of(group), group["lr_decay"], group["eps"]
                weight_decay, maximize = group["weight_decay"], group["maximize"]
                for p in group["params"]:
                    grad = p.grad
                    if grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:  # a group added after construction
                        self._init_state(p, group)
                    state["step"] += 1
                    t = state["step"].item()

                    if maximize:
                        grad = -grad
                    if weight_decay != 0:
                        grad = grad + weight_decay * p                 # g = g + λθ
                    clr = lr / (1 + (t - 1) * lr_decay)                # decayed learning rate
                    state_sum = state["sum"]
                    state_sum.addcmul_(grad, grad)                     # s = s + g²
                    std = state_sum.sqrt().add_(eps)                   # √s + eps
                    p.addcdiv_(grad, std, value=-clr)                  # θ = θ - clr · g/(√s + eps)
        return loss
