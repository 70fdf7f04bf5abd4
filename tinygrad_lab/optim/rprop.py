"""Rprop: each coordinate has its own step size, grown while its gradient keeps its sign."""
from __future__ import annotations

from .. import creation
from ..ops.elementwise import where
from ._per_parameter import PerParameterOptimizer, check
from .optimizer import lr_of


class Rprop(PerParameterOptimizer):
    r"""Resilient backpropagation (Riedmiller & Braun, 1993), with PyTorch's options. Only the sign
    of the gradient is used, never its size.

    For each coordinate, with gradient g and the previous step's (kept) gradient g':

        g·g' > 0:  s = min(s·η+, step_size_max)      same sign: accelerate
        g·g' < 0:  s = max(s·η-, step_size_min)      sign flip: we jumped over a minimum; slow down,
                   and take no step now (g is set to 0, so the next step counts as fresh)
        g·g' = 0:  s unchanged
        θ = θ - sign(g)·s,   g' = g                  (s starts at lr)
    """

    def __init__(self, params, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, maximize: bool = False) -> None:
        check(0.0 <= lr, "learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, {"lr": lr, "etas": tuple(etas), "step_sizes": tuple(step_sizes),
                                  "maximize": maximize})

    def _update(self, p, grad, state: dict, group: dict) -> None:
        (eta_minus, eta_plus), (step_min, step_max) = group["etas"], group["step_sizes"]
        if len(state) == 0:
            state["step"] = creation.tensor(0.0)
            state["prev"] = creation.zeros_like(p)
            state["step_size"] = creation.full_like(grad, lr_of(group))
        state["step"] += 1
        prev, step_size = state["prev"], state["step_size"]
        agreement = grad * prev
        factor = where(agreement > 0, eta_plus, where(agreement < 0, eta_minus, creation.ones_like(agreement)))
        step_size.mul_(factor).clamp_(step_min, step_max)                    # s = clamp(s·η, min, max)
        grad = where(agreement < 0, 0.0, grad)                               # no step after a sign flip
        p.add_(grad.sign() * step_size, alpha=-1)                            # θ = θ - sign(g)·s
        prev.copy_(grad)                                                     # g' = g
