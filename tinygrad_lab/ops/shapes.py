"""Shape arguments as PyTorch takes them: dims that may be negative, sizes given as f(2, 3) or
f((2, 3)), sizes and counts that must be whole numbers. Plain functions on ints and tuples, used
by every op family, the factories and the layers' constructors (no ops here)."""
from __future__ import annotations

import operator

PLAIN_INTS = frozenset((int,))  # set(map(type, t)) <= PLAIN_INTS: t holds plain ints only (no bools), in C


def normalize_dim(dim: int, ndim: int, op: str = "op") -> int:
    """A dim in [0, ndim), or PyTorch's IndexError naming the allowed range."""
    n = ndim if ndim else 1
    if dim.__class__ is not int and (not isinstance(dim, int) or isinstance(dim, bool)):  # a plain int: 1 test
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
    elif not isinstance(dim, (tuple, list)):
        raise TypeError(f"{op}(): argument 'dim' must be int or tuple of ints, not {type(dim).__name__} ({dim!r})")
    axes = tuple(sorted(normalize_dim(d, ndim, op) for d in dim))
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"{op}: dim {tuple(dim)} appears multiple times in the list of dims")
    return axes if ndim else ()


def whole(value, name: str, op: str) -> int:
    """An int argument as PyTorch takes it: an int, a NumPy integer or a one-element integer tensor.
    A float (even 2.0), a bool or anything else is PyTorch's TypeError: it is never rounded."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__} ({value!r})")
    try:
        return operator.index(value)
    except TypeError:  # a float tensor, or a tensor of several elements
        raise TypeError(f"{op}(): argument '{name}' must be int, not {value!r}") from None


def size(value, name: str, op: str) -> int:
    """A size or a count (a layer's number of features, randperm's n): a whole number >= 0."""
    n = whole(value, name, op)
    if n < 0:
        raise RuntimeError(f"{op}(): argument '{name}' must be non-negative, but got {n}")
    return n


def ints(shape: tuple, op: str, name: str = "size") -> tuple:
    """Whole numbers given as f(2, 3), f((2, 3)) or f([2, 3]), as a tuple (a float among them is
    PyTorch's TypeError, naming its position)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    if set(map(type, shape)) <= PLAIN_INTS:  # fast path, plain ints (every view/expand/reshape call), checked
        return tuple(shape)            # in C: bilstm_crf's ints 110 -> 14 bytecodes a call
    for i, s in enumerate(shape):
        if isinstance(s, bool) or not hasattr(type(s), "__index__"):
            raise TypeError(f"{op}(): argument '{name}' must be a tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos {i} (got {tuple(shape)!r})")
    return tuple(whole(s, name, op) for s in shape)


def sizes(shape: tuple, op: str, name: str = "size") -> tuple:
    """A tensor's shape given as f(2, 3), f((2, 3)) or f([2, 3]): whole numbers, each >= 0. Every
    factory and every layer constructor takes its sizes through here (or `size`), so zeros(2.5, 3)
    is a TypeError, not a [2, 3] tensor."""
    out = ints(shape, op, name)
    if out and min(out) < 0:
        raise RuntimeError(f"{op}(): Trying to create tensor with negative dimension {min(out)}: {list(out)}")
    return out


def shape_arg(shape, op: str = "reshape") -> tuple:
    """Accept reshape(2, 3), reshape((2, 3)) and reshape([2, 3]); the op checks the values (-1 ...)."""
    return ints(shape, op, "shape")


def counts(op: str, **named) -> tuple:
    """Several sizes by name, each a whole number >= 0: a layer's constructor checks its arguments
    with `in_features, out_features = counts("Linear", in_features=..., out_features=...)`."""
    return tuple(size(value, name, op) for name, value in named.items())


def reshapes_in_place(shape: tuple, strides: tuple, new_shape: tuple) -> bool:
    """Whether an array of `shape` and `strides` can take `new_shape` as a view, without a copy: every run of
    dims that the new shape merges or splits must lie in memory as one evenly strided run (each dim's stride
    its size times the next one's). Dims of size 1 are free; an empty array is always a view."""
    if 0 in shape:
        return True
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new = [n for n in new_shape if n != 1]
    i = j = 0
    while i < len(old):
        first, have, want = i, old[i][0], new[j]
        while have != want:  # grow the old run or the new one until they hold as many elements
            if have < want:
                i += 1
                have *= old[i][0]
            else:
                j += 1
                want *= new[j]
        if any(old[k][1] != old[k + 1][0] * old[k + 1][1] for k in range(first, i)):
            return False
        i, j = i + 1, j + 1
    return True


def broadcast_shape(shapes, op: str) -> tuple:
    """The shape that all `shapes` broadcast to (aligned on the right, a size 1 stretches to the other
    size, a missing dim counts as 1), or PyTorch's RuntimeError naming the two sizes that clash, the dim
    and, with the op, every shape."""
    out: list = []
    for shape in shapes:
        lead = len(shape) - len(out)
        out = list(shape[:lead]) + out if lead > 0 else out
        for j in range(1, len(shape) + 1):
            have, want = out[-j], shape[-j]
            if want != have and 1 not in (want, have):
                listed = [str(list(s)) for s in shapes]
                raise RuntimeError(f"The size of tensor a ({have}) must match the size of tensor b ({want}) at "
                                   f"non-singleton dimension {len(out) - j} (in {op} of shapes "
                                   f"{', '.join(listed[:-1])} and {listed[-1]})")
            out[-j] = have if want == 1 else want
    return tuple(out)
