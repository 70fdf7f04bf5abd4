"""The loop the single-tensor optimizers share: every parameter with a gradient, one at a time."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer


class PerParameterOptimizer(Optimizer):
    """An optimizer whose step() updates each parameter on its own: `_update(p, grad, state, group)`
    says how (grad is already negated when the group maximizes)."""

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns the closure's loss if given."""
        loss = self._evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        grad = -p.grad if group["maximize"] else p.grad
                        self._update(p, grad, self.state[p], group)
        return loss

    def _update(self, p, grad, state: dict, group: dict) -> None:
        raise NotImplementedError


def check(ok: bool, what: str, value) -> None:
    """PyTorch's ValueError for a hyperparameter out of range: 'Invalid <what>: <value>'."""
    if not ok:
        raise ValueError(f"Invalid {what}: {value}")


def check_adam_family(lr: float, betas: tuple, eps: float, weight_decay: float) -> None:
    """The hyperparameter checks Adam's relatives share (PyTorch's messages)."""
    check(0.0 <= lr, "learning rate", lr)
    check(0.0 <= eps, "epsilon value", eps)
    check(0.0 <= betas[0] < 1.0, "beta parameter at index 0", betas[0])
    check(0.0 <= betas[1] < 1.0, "beta parameter at index 1", betas[1])
    check(0.0 <= weight_decay, "weight_decay value", weight_decay)


def weight_decayed(p, grad, lr: float, weight_decay: float, decoupled: bool):
    """The gradient after weight decay: g + λθ (L2), or g unchanged with θ shrunk to θ(1 - lr·λ) in
    place (decoupled, as AdamW)."""
    if weight_decay == 0:
        return grad
    if decoupled:
        p.mul_(1 - lr * weight_decay)                                         # θ = θ(1 - lr·λ)
        return grad
    return grad + weight_decay * p                                            # g = g + λθ
