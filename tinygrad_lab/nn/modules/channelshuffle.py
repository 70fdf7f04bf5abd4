"""ChannelShuffle: F.channel_shuffle as a layer (ShuffleNet's mixing of grouped convolutions' channels)."""
from __future__ import annotations

from ...autograd.tensor_base import TensorBase
from .. import functional as F
from .module import Module


class ChannelShuffle(Module):
    """Interleaves the channels of (N, C, *) input across `groups` groups; no parameters."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: TensorBase) -> TensorBase:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
