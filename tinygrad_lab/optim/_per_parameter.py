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
