"""RAdam: Adam whose adaptive step is switched on gradually, once the variance estimate is reliable."""
from __future__ import annotations

import math

from .. import creation
from ._per_parameter import PerParameterOptimizer, check_adam_family, weight_decayed
from .optimizer import lr_of


class RAdam(PerParameterOptimizer):
    r"""RAdam (Liu et al., 2019), with PyTorch's options.

    For each parameter θ with gradient g, at step t = 1, 2, ...:

        g   = g + λθ     (weight_decay λ)    or   θ = θ(1 - lr·λ)   (decoupled_weight_decay)
        m   = β1·m + (1 - β1)·g,   v = β2·v + (1 - β2)·g²
        ρ∞  = 2/(1 - β2) - 1,      ρ_t = ρ∞ - 2t·β2^t/(1 - β2^t)   (length of the approximated SMA)
        m̂   = m/(1 - β1^t)
        if ρ_t > 5:  r = √((ρ_t - 4)(ρ_t - 2)ρ∞ / ((ρ∞ - 4)(ρ∞ - 2)ρ_t))     variance rectification
                     θ = θ - lr · m̂ · r · √(1 - β2^t)/(√v + eps)
        else:        θ = θ - lr · m̂                                   (plain momentum at first)
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, maximize: bool = False) -> None:
        check_adam_family(lr, betas, eps, weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize})

    def _update(self, p, grad, state: dict, group: dict) -> None:
        lr, (beta1, beta2), eps, weight_decay = lr_of(group), group["betas"], group["eps"], group["weight_decay"]
        if len(state) == 0:
            state["step"] = creation.tensor(0.0)
            state["exp_avg"] = creation.zeros_like(p)
            state["exp_avg_sq"] = creation.zeros_like(p)
        state["step"] += 1
        t = state["step"].item()
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        grad = weight_decayed(p, grad, lr, weight_decay, group["decoupled_weight_decay"])
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)                       # m
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)         # v
        bias_correction2 = 1 - beta2 ** t
        corrected = exp_avg / (1 - beta1 ** t)                                # m̂
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2 ** t / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = bias_correction2 ** 0.5 / (exp_avg_sq.sqrt() + eps)
            p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
        else:
            p.add_(corrected * lr, alpha=-1.0)
