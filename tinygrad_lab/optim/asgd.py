"""ASGD: SGD that also keeps a running average of the iterates (Polyak-Ruppert averaging)."""
from __future__ import annotations

from .. import creation
from ._per_parameter import PerParameterOptimizer, check
from .optimizer import lr_of


class ASGD(PerParameterOptimizer):
    r"""Averaged SGD (Polyak & Juditsky, 1992), with PyTorch's options and step-size schedule.

    For each parameter θ with gradient g, at step t = 1, 2, ... (η starts at lr, μ at 1):

        g = g + λθ                                   (weight_decay λ)
        θ = θ(1 - lambd·η) - η·g
        ax = θ  if μ == 1,  else  ax + μ(θ - ax)     the average of the iterates since step t0
        η = lr / (1 + lambd·lr·t)^alpha
        μ = 1 / max(1, t - t0)

    The averaged parameters are `optimizer.state[p]["ax"]` (evaluate a copy of the model with them);
    η and μ are float32 tensors in the state, as in PyTorch.
    """

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, *, maximize: bool = False) -> None:
        check(0.0 <= lr, "learning rate", lr)
        check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                                  "maximize": maximize})

    def _update(self, p, grad, state: dict, group: dict) -> None:
        lr, lambd, weight_decay = lr_of(group), group["lambd"], group["weight_decay"]
        if len(state) == 0:
            state["step"] = creation.tensor(0.0)
            state["eta"] = creation.tensor(float(lr))
            state["mu"] = creation.tensor(1.0)
            state["ax"] = creation.zeros_like(p)
        state["step"] += 1
        t = state["step"].item()
        eta, mu, ax = state["eta"].item(), state["mu"].item(), state["ax"]
        if weight_decay != 0:
            grad = grad + weight_decay * p                                  # g = g + λθ
        p.mul_(1 - lambd * eta)                                             # θ = θ(1 - lambd·η)
        p.add_(grad, alpha=-eta)                                            #     - η·g
        if mu != 1:
            ax.add_((p - ax) * mu)                                          # ax = ax + μ(θ - ax)
        else:
            ax.copy_(p)                                                     # ax = θ
        # the new values go through a default-dtype (float32) tensor, as PyTorch's do
        state["eta"].copy_(creation.tensor(lr / (1 + lambd * lr * t) ** group["alpha"]))
        state["mu"].copy_(creation.tensor(1 / max(1, t - group["t0"])))
