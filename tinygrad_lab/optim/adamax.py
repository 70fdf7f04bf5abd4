"""Adamax: Adam with the second moment replaced by a running maximum of |g| (the infinity norm)."""
from __future__ import annotations

from .. import creation
from ..ops.elementwise import maximum
from ._per_parameter import PerParameterOptimizer, check_adam_family
from .optimizer import lr_of


class Adamax(PerParameterOptimizer):
    r"""Adamax (Kingma & Ba, 2014, section 7), with PyTorch's options.

    For each parameter θ with gradient g, at step t = 1, 2, ...:

        g = g + λθ                                   (weight_decay λ)
        m = β1·m + (1 - β1)·g                        first moment
        u = max(β2·u, |g| + eps)                     exponentially weighted infinity norm
        θ = θ - lr/(1 - β1^t) · m/u
    """

    def __init__(self, params, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, *, maximize: bool = False) -> None:
        check_adam_family(lr, betas, eps, weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "maximize": maximize})

    def _update(self, p, grad, state: dict, group: dict) -> None:
        (beta1, beta2), eps, weight_decay = group["betas"], group["eps"], group["weight_decay"]
        if len(state) == 0:
            state["step"] = creation.tensor(0.0)
            state["exp_avg"] = creation.zeros_like(p)
            state["exp_inf"] = creation.zeros_like(p)
        state["step"] += 1
        t = state["step"].item()
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        if weight_decay != 0:
            grad = grad + weight_decay * p                                  # g = g + λθ
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)                     # m = β1·m + (1-β1)·g
        exp_inf.copy_(maximum(exp_inf * beta2, grad.abs() + eps))           # u = max(β2·u, |g| + eps)
        p.add_(exp_avg / exp_inf, alpha=-lr_of(group) / (1 - beta1 ** t))    # θ = θ - lr/(1-β1^t)·m/u
