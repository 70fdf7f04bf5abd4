"""Shape arguments as PyTorch takes them: dims that may be negative, sizes given as f(2, 3) or
f((2, 3)). Plain functions on ints and tuples, used by every op family (no ops here)."""
from __future__ import annotations


def normalize_dim(dim: int, ndim: int, op: str = "op") -> int:
    """A dim in [0, ndim), or PyTorch's IndexError naming the allowed range."""
    n = ndim if ndim else 1
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim}) in {op}")
    return dim % n


def normalize_dims(dim, ndim: int, op: str = "op"):
    """dim (int or sequence) as a sorted tuple of non-negative axes; None (all dims) stays None."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    axes = tuple(sorted(normalize_dim(d, ndim, op) for d in dim))
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"{op}: dim {tuple(dim)} appears multiple times in the list of dims")
    return axes if ndim else ()


def shape_arg(shape) -> tuple:
    """Accept reshape(2, 3), reshape((2, 3)) and reshape([2, 3])."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return tuple(int(s) for s in shape)
