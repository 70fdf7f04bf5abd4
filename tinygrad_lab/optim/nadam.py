"""NAdam: Adam with Nesterov momentum (the step looks ahead along the momentum)."""
from __future__ import annotations

from .. import creation
from ._per_parameter import PerParameterOptimizer, check, check_adam_family, weight_decayed
from .optimizer import lr_of


class NAdam(PerParameterOptimizer):
    r"""NAdam (Dozat, 2016), with PyTorch's options and its momentum schedule.

    For each parameter θ with gradient g, at step t = 1, 2, ...:

        g    = g + λθ     (weight_decay λ)    or   θ = θ(1 - lr·λ)   (decoupled_weight_decay)
        μ_t  = β1·(1 - 0.96^(t·ψ) / 2)          momentum schedule (momentum_decay ψ)
        Π_t  = μ_1·μ_2···μ_t
        m    = β1·m + (1 - β1)·g
        v    = β2·v + (1 - β2)·g²
        d    = √(v / (1 - β2^t)) + eps
        θ    = θ - lr·(1 - μ_t)/(1 - Π_t) · g/d - lr·μ_{t+1}/(1 - Π_t·μ_{t+1}) · m/d

    Π_t is kept in the state as a float32 tensor `mu_product`, as PyTorch keeps it.
    """

    def __init__(self, params, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 maximize: bool = False) -> None:
        check_adam_family(lr, betas, eps, weight_decay)
        check(0.0 <= momentum_decay, "momentum_decay value", momentum_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize})

    def _update(self, p, grad, state: dict, group: dict) -> None:
        lr, (beta1, beta2), eps, weight_decay = lr_of(group), group["betas"], group["eps"], group["weight_decay"]
        if len(state) == 0:
            state["step"] = creation.tensor(0.0)
            state["mu_product"] = creation.tensor(1.0)
            state["exp_avg"] = creation.zeros_like(p)
            state["exp_avg_sq"] = creation.zeros_like(p)
        state["step"] += 1
        t = state["step"].item()
        exp_avg, exp_avg_sq, mu_product = state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
        grad = weight_decayed(p, grad, lr, weight_decay, group["decoupled_weight_decay"])
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * group["momentum_decay"]))       # μ_t
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * group["momentum_decay"]))
        mu_product.mul_(mu)                                                   # Π_t = Π_{t-1}·μ_t
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)                       # m
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)         # v
        denom = (exp_avg_sq / (1 - beta2 ** t)).sqrt().add_(eps)              # d
        product = mu_product.item()
        p.addcdiv_(grad, denom, value=-lr * (1 - mu) / (1 - product))
        p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1 - product * mu_next))
