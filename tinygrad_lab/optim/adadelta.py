"""Adadelta: step sizes from running averages of squared gradients *and* squared updates (no lr needed)."""
from __future__ import annotations

from .. import creation
from ._per_parameter import PerParameterOptimizer, check
from .optimizer import lr_of


class Adadelta(PerParameterOptimizer):
    r"""Adadelta (Zeiler, 2012), with PyTorch's options.

    For each parameter θ with gradient g:

        g = g + λθ                                   (weight_decay λ)
        v = ρ·v + (1 - ρ)·g²                         running mean of g²
        Δ = √(u + eps) / √(v + eps) · g              the update, in θ's own units
        u = ρ·u + (1 - ρ)·Δ²                         running mean of Δ²
        θ = θ - lr·Δ
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0, *,
                 maximize: bool = False) -> None:
        check(0.0 <= lr, "learning rate", lr)
        check(0.0 <= rho <= 1.0, "rho value", rho)
        check(0.0 <= eps, "epsilon value", eps)
        check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                                  "maximize": maximize})

    def _update(self, p, grad, state: dict, group: dict) -> None:
        rho, eps, weight_decay = group["rho"], group["eps"], group["weight_decay"]
        if len(state) == 0:
            state["step"] = creation.tensor(0.0)
            state["square_avg"] = creation.zeros_like(p)
            state["acc_delta"] = creation.zeros_like(p)
        state["step"] += 1
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        if weight_decay != 0:
            grad = grad + weight_decay * p                                   # g = g + λθ
        # in place where it can be: a parameter's update makes two new arrays (std, delta) and two products
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)             # v = ρv + (1-ρ)g²
        std = square_avg.add(eps).sqrt_()                                    # √(v+eps)
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)              # Δ = √(u+eps)/√(v+eps)·g
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)            # u = ρu + (1-ρ)Δ²
        p.add_(delta, alpha=-lr_of(group))                                    # θ = θ - lr·Δ
