"""Loss modules: hold the options (reduction, weight, ...) and call tinygrad_lab.nn.functional.

`weight` and `pos_weight` are registered buffers, as in PyTorch, so they appear in state_dict()
and follow `to()`.
"""
from __future__ import annotations

import warnings

from ...autograd.tensor_base import TensorBase
from .. import functional as F
from .module import Module


def _legacy_reduction(size_average, reduce) -> str:
    """The reduction string for the deprecated size_average/reduce arguments (PyTorch's rule)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if (size_average and reduce) else ("sum" if reduce else "none")
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=3)
    return ret


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: TensorBase | None = None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """mean/sum of |input - target|."""

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """mean/sum of (input - target)²."""

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """0.5·d²/beta where |d| < beta, |d| - 0.5·beta elsewhere (d = input - target)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class NLLLoss(_WeightedLoss):
    """-input[n, target[n]] (input holds log-probabilities), optionally class-weighted."""

    def __init__(self, weight: TensorBase | None = None, size_average=None, ignore_index: int = -100,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + NLL on class indices, or against class probabilities; label_smoothing as PyTorch."""

    def __init__(self, weight: TensorBase | None = None, size_average=None, ignore_index: int = -100,
                 reduce=None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """-(t·log(p) + (1-t)·log(1-p)) on probabilities p."""

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """sigmoid + BCE in one numerically stable step; pos_weight scales the positive term per class."""

    def __init__(self, weight: TensorBase | None = None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight: TensorBase | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: TensorBase, target: TensorBase) -> TensorBase:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)
