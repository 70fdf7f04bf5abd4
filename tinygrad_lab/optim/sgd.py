"""Stochastic gradient descent, with optional momentum, Nesterov momentum and weight decay."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, lr_of


class SGD(Optimizer):
    r"""θ ← θ - lr · g, where g is the gradient, or a running sum of gradients with momentum.

    For each parameter θ with gradient ∇ (PyTorch's rule, step for step):

        g = ∇ + weight_decay · θ                 (L2 penalty folded into the gradient)
        b = g                      on the first step,
        b = momentum · b + (1 - dampening) · g   afterwards        (if momentum != 0)
        g = g + momentum · b  if nesterov  else  b
        θ = θ - lr · g                           (θ + lr · g with maximize=True)
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns the closure's loss if given."""
        loss = self._evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                lr, momentum, dampening = lr_of(group), group["momentum"], group["dampening"]
                weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
                for p in group["params"]:
                    grad = p.grad
                    if grad is None:
                        continue
                    if maximize:
                        grad = -grad
                    if weight_decay != 0:
                        grad = grad + weight_decay * p                    # g = ∇ + λθ
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = state["momentum_buffer"] = grad.clone()   # b = g
                        else:
                            buf.mul_(momentum).add_(grad, alpha=1 - dampening)  # b = μb + (1-τ)g
                        grad = grad.add(buf, alpha=momentum) if nesterov else buf  # g = g + μb  |  g = b
                    p.add_(grad, alpha=-lr)                                # θ = θ - lr·g
        return loss
