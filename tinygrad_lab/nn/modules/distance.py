"""CosineSimilarity and PairwiseDistance: F.cosine_similarity and F.pairwise_distance as layers."""
from __future__ import annotations

from ...autograd.tensor_base import TensorBase
from .. import functional as F
from .module import Module


class PairwiseDistance(Module):
    """The p-norm of x1 - x2 + eps over the last dim (x1 and x2 broadcast); keepdim keeps that dim as size 1."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p  # PyTorch's attribute name
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: TensorBase, x2: TensorBase) -> TensorBase:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine of the angle between x1 and x2 along dim (x1 and x2 broadcast), each norm at least eps."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: TensorBase, x2: TensorBase) -> TensorBase:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
