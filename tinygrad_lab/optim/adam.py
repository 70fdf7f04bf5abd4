"""Adam and AdamW: per-coordinate step sizes from running averages of g and g²."""
from __future__ import annotations

from .. import creation
from ..autograd.grad_mode import no_grad
from ..ops.elementwise import maximum
from .optimizer import Optimizer, lr_of


class Adam(Optimizer):
    r"""Adam (Kingma & Ba, 2014), with PyTorch's options; AdamW is Adam with decoupled weight decay.

    For each parameter θ with gradient g, at step t = 1, 2, ...:

        g  = g + λθ        (weight_decay λ, L2 style)   or   θ = θ(1 - lr·λ)   (decoupled: AdamW)
        m  = β1·m + (1 - β1)·g                    first moment (running mean of g)
        v  = β2·v + (1 - β2)·g²                   second moment (running mean of g²)
        v̂  = max(v̂, v)  with amsgrad, else v̂ = v
        θ  = θ - lr/(1 - β1^t) · m / (√v̂ / √(1 - β2^t) + eps)

    Dividing by 1 - β^t undoes the bias of m and v towards their zero start.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, maximize: bool = False,
                 decoupled_weight_decay: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns the closure's loss if given."""
        loss = self._evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = lr_of(group), group["betas"], group["eps"]
                weight_decay, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
                decoupled = group["decoupled_weight_decay"]
                for p in group["params"]:
                    grad = p.grad
                    if grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = creation.tensor(0.0)  # a tensor, as in PyTorch's state_dict
                        state["exp_avg"] = creation.zeros_like(p)
                        state["exp_avg_sq"] = creation.zeros_like(p)
                        if amsgrad:
                            state["max_exp_avg_sq"] = creation.zeros_like(p)
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    state["step"] += 1
                    t = state["step"].item()

                    if maximize:
                        grad = -grad
                    if weight_decay != 0:
                        if decoupled:
                            p.mul_(1 - lr * weight_decay)                  # θ = θ(1 - lr·λ)
                        else:
                            grad = grad + weight_decay * p                 # g = g + λθ

                    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)              # m = β1·m + (1-β1)·g
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)  # v = β2·v + (1-β2)·g²
                    if amsgrad:
                        max_exp_avg_sq = state["max_exp_avg_sq"]
                        max_exp_avg_sq.copy_(maximum(max_exp_avg_sq, exp_avg_sq))  # v̂ = max(v̂, v)
                    else:
                        max_exp_avg_sq = exp_avg_sq

                    bias_correction1 = 1 - beta1 ** t
                    bias_correction2 = 1 - beta2 ** t
                    step_size = lr / bias_correction1
                    denom = max_exp_avg_sq.sqrt().div_(bias_correction2 ** 0.5).add_(eps)  # √v̂/√(1-β2^t) + eps
                    p.addcdiv_(exp_avg, denom, value=-step_size)   # θ = θ - lr/(1-β1^t) · m/denom
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): θ shrinks by lr·λ·θ directly,
    instead of λθ being added to the gradient (where Adam's scaling would weaken it)."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True)

    def load_state_dict(self, state_dict) -> None:
        super().load_state_dict(state_dict)
        for group in self.param_groups:  # AdamW always decouples, whatever the dict says (as PyTorch)
            group["decoupled_weight_decay"] = True
