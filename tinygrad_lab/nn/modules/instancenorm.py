"""InstanceNorm1d, InstanceNorm2d and InstanceNorm3d: normalise each channel of each sample over its positions
(style transfer's normalisation). Unlike batch norm, no statistics are shared across the batch; by
default there are neither parameters (affine=False) nor running statistics
(track_running_stats=False), as in PyTorch. LazyInstanceNorm1d/2d/3d read num_features from the first input
(dim 1 of a batched input, dim 0 of an unbatched one) and default to affine=True, track_running_stats=True,
as PyTorch's. Deviation: PyTorch's lazy ones read dim 1 of an unbatched input too (then fail)."""
from __future__ import annotations

import warnings

from ...autograd.tensor_base import TensorBase
from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase


class _InstanceNorm(_NormBase):
    _spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input: TensorBase) -> None:
        batched_dims = self._spatial + 2
        if input.dim() not in (batched_dims - 1, batched_dims):
            raise ValueError(f"expected {batched_dims - 1}D or {batched_dims}D input (got {input.dim()}D input)")

    def _feature_dim(self, input: TensorBase) -> int:
        """The channel dim: 1 for a batched input, 0 for an unbatched one."""
        return input.dim() - self._spatial - 1

    def forward(self, input: TensorBase) -> TensorBase:
        self._check_input_dim(input)
        batched_dims = self._spatial + 2
        feature_dim = self._feature_dim(input)
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          f"warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        unbatched = input.dim() == batched_dims - 1
        x = input.unsqueeze(0) if unbatched else input
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) input, per sample and channel."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) input, per sample and channel."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) input, per sample and channel."""

    _spatial = 3


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """An InstanceNorm1d whose num_features is read from its first input (see nn.modules.lazy)."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    """An InstanceNorm2d whose num_features is read from its first input (see nn.modules.lazy)."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    """An InstanceNorm3d whose num_features is read from its first input (see nn.modules.lazy)."""

    cls_to_become = InstanceNorm3d
