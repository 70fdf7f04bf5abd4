"""Autograd: Function + ctx, the backward engine (a generator of steps), grad mode, gradcheck."""
from . import events, functional
from .api import backward, grad
from .engine import BackwardStep, backward_steps
from .function import AccumulateGrad, Function, Node, RemovableHandle
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["events", "functional", "backward", "grad", "BackwardStep", "backward_steps", "AccumulateGrad", "Function", "Node",
           "RemovableHandle", "enable_grad", "inference_mode", "is_grad_enabled", "no_grad", "set_grad_enabled",
           "GradcheckError", "gradcheck", "gradgradcheck"]
