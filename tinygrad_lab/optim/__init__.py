"""Optimizers and learning-rate schedules with PyTorch's API (`torch.optim`).

    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in data:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

Each optimizer's `step()` updates the parameters in place, under `no_grad`, and
reads like the formula in its docstring (the same rules as PyTorch's, step for step).
"""
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "ASGD", "LBFGS", "NAdam", "Optimizer", "RAdam",
           "RMSprop", "Rprop", "lr_scheduler", "swa_utils"]
