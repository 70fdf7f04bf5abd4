"""Flatten and Unflatten: reshape a range of dimensions, for use inside Sequential."""
from __future__ import annotations

from ...autograd.tensor_base import TensorBase
from .module import Module


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one (default: all but the batch dimension)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: TensorBase) -> TensorBase:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dimension `dim` into `unflattened_size` (one entry may be -1)."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if isinstance(dim, str):
            raise NotImplementedError("named tensors (a str dim) are not supported by tinygrad_lab")
        if not isinstance(dim, int):
            raise TypeError(f"invalid argument 'dim': expected int, got {type(dim).__name__}")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"unflattened_size must be tuple of ints, but found type {type(unflattened_size).__name__}")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                f"{type(elem).__name__} at pos {idx}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: TensorBase) -> TensorBase:
        shape = tuple(input.shape)
        dim = self.dim + len(shape) if self.dim < 0 else self.dim
        if not 0 <= dim < len(shape):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, {len(shape) - 1}], "
                             f"but got {self.dim})")
        sizes = list(self.unflattened_size)
        if sizes.count(-1) > 1:
            raise RuntimeError("unflatten: only one dimension can be inferred")
        known = 1
        for s in sizes:
            if s != -1:
                known *= s
        if -1 in sizes:
            if known == 0 or shape[dim] % known:
                raise RuntimeError(f"unflatten: Provided sizes {tuple(sizes)} don't multiply up to the size of "
                                   f"dim {self.dim} ({shape[dim]}) in the input tensor")
            sizes[sizes.index(-1)] = shape[dim] // known
        elif known != shape[dim]:
            raise RuntimeError(f"unflatten: Provided sizes {tuple(sizes)} don't multiply up to the size of "
                               f"dim {self.dim} ({shape[dim]}) in the input tensor")
        return input.reshape(shape[:dim] + tuple(sizes) + shape[dim + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
