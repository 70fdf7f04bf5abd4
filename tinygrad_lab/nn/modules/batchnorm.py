"""BatchNorm1d, BatchNorm2d and BatchNorm3d: normalise each channel over the batch (and spatial) dimensions;
LazyBatchNorm1d/2d/3d: the same with num_features read from the first input.

Training mode normalises with the batch statistics and, with track_running_stats, updates the
running_mean / running_var buffers (running_var from the unbiased batch variance, as PyTorch);
eval mode normalises with the running statistics.
"""
from __future__ import annotations

from ... import creation, dtypes
from ...autograd.tensor_base import TensorBase
from ...ops.shapes import counts
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import LazyModuleMixin
from .module import Module


class _NormBase(Module):
    """Parameters weight/bias (when affine) and buffers running_mean/running_var/num_batches_tracked
    (when track_running_stats), under PyTorch's names so state_dicts are interchangeable."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        (num_features,) = counts(type(self).__name__, num_features=num_features)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        shapes = self._tensor_shapes()
        if self.affine:
            self.weight = Parameter(creation.empty(shapes["weight"], dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(creation.empty(shapes["bias"], dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", creation.zeros(shapes["running_mean"], dtype=dtype, device=device))
            self.register_buffer("running_var", creation.ones(shapes["running_var"], dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", creation.tensor(0, dtype=dtypes.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def _tensor_shapes(self) -> dict:
        """The shapes of the tensors that have one value per channel (a lazy norm reads them again at its
        first call); num_batches_tracked is a count and has none."""
        return {name: (self.num_features,) for name in ("weight", "bias", "running_mean", "running_var")}

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """PyTorch's default: weight = 1, bias = 0, running stats reset."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: TensorBase) -> None:
        raise NotImplementedError

    def _feature_dim(self, input: TensorBase) -> int:
        """The dim of input that holds the channels (num_features of them)."""
        return 1

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input: TensorBase) -> TensorBase:
        self._check_input_dim(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                exponential_average_factor = 1.0 / float(self.num_batches_tracked)
            else:  # exponential moving average
                exponential_average_factor = self.momentum
        # batch statistics in training, and in eval when there are no running statistics
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(input,
                            self.running_mean if use_buffers else None,
                            self.running_var if use_buffers else None,
                            self.weight, self.bias, bn_training, exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) inputs, per channel C."""

    def _check_input_dim(self, input: TensorBase) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W) inputs, per channel C."""

    def _check_input_dim(self, input: TensorBase) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W) inputs, per channel C."""

    def _check_input_dim(self, input: TensorBase) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """What the lazy batch and instance norms share: num_features is the channel dim of the first input;
    weight, bias, running_mean and running_var wait for it (num_batches_tracked does not). Both kinds
    default to affine=True and track_running_stats=True, as PyTorch's (the eager InstanceNorms do not).
    Deviation: the input's number of dims is checked before the size is read, so a wrong first input
    leaves the module lazy (PyTorch's takes a size from it, becomes the eager class, then raises)."""

    _lazy_size = "num_features"

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _infer_size(self, input: TensorBase) -> int:
        self._check_input_dim(input)
        return input.shape[self._feature_dim(input)]


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A BatchNorm1d whose num_features is read from its first input (see nn.modules.lazy)."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A BatchNorm2d whose num_features is read from its first input (see nn.modules.lazy)."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A BatchNorm3d whose num_features is read from its first input (see nn.modules.lazy)."""

    cls_to_become = BatchNorm3d
