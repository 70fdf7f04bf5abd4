"""RMSprop: divide each coordinate's step by a running root-mean-square of its gradients."""
from __future__ import annotations

from .. import creation
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, lr_of


class RMSprop(Optimizer):
    r"""RMSprop (Hinton's lecture 6e), with PyTorch's options.

    For each parameter θ with gradient g:

        g = g + λθ                                (weight_decay λ)
        v = α·v + (1 - α)·g²                      running mean of g²
        d = √v + eps
        with centered=True, also ḡ = α·ḡ + (1 - α)·g and d = √(v - ḡ²) + eps
        (an estimate of the variance of g instead of its raw second moment)
        b = μ·b + g/d,  θ = θ - lr·b              with momentum μ > 0
        θ = θ - lr · g/d                          otherwise
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, *, maximize: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns the closure's loss if given."""
        loss = self._evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                lr, alpha, eps, momentum = lr_of(group), group["alpha"], group["eps"], group["momentum"]
                weight_decay, centered, maximize = group["weight_decay"], group["centered"], group["maximize"]
                for p in group["params"]:
                    grad = p.grad
                    if grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = creation.tensor(0.0)
                        state["square_avg"] = creation.zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = creation.zeros_like(p)
                        if centered:
                            state["grad_avg"] = creation.zeros_like(p)
                    state["step"] += 1
                    square_avg = state["square_avg"]

                    if maximize:
                        grad = -grad
                    if weight_decay != 0:
                        grad = grad + weight_decay * p                           # g = g + λθ

                    square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)  # v = α·v + (1-α)·g²
                    if centered:
                        grad_avg = state["grad_avg"]
                        grad_avg.mul_(alpha).add_(grad, alpha=1 - alpha)           # ḡ = α·ḡ + (1-α)·g
                        avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()  # √(v - ḡ²)
                    else:
                        avg = square_avg.sqrt()                                    # √v
                    avg.add_(eps)                                                  # d = ... + eps

                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).addcdiv_(grad, avg)                     # b = μ·b + g/d
                        p.add_(buf, alpha=-lr)                                     # θ = θ - lr·b
                    else:
                        p.addcdiv_(grad, avg, value=-lr)                           # θ = θ - lr·g/d
        return loss
