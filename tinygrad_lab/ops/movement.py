"""Movement ops: reshape/view, squeeze/unsqueeze/flatten, permute/transpose,
expand, contiguous, cat/stack, split/chunk, flip, pad.

Most are views (they share memory and the version counter with their input);
their backward moves the gradient the opposite way.
"""
from __future__ import annotations

import functools
import math

from .._warn import warn
from ..autograd.tensor_base import TensorBase
from .broadcast import Expand, broadcast_to, expand, sum_to  # noqa: F401 (expand and broadcast_to are movement ops too)
from .elementwise import Clone
from .indexing import as_view_key, getitem
from .op import Op, tensor_args, tensor_list
from .promotion import promote
from .shapes import normalize_dim, normalize_dims, reshapes_in_place, shape_arg


# ---------------------------------------------------------------- reshape family

class Reshape(Op):
    """Same elements, new shape (a view where the layout allows). Backward: reshape the gradient to the input shape."""

    is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        return x._data.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        # the op itself, not reshape(): the input's shape needs no checking (a CRF's backward: -115 bytecodes a view)
        return Reshape.apply(g, ctx.input_shapes[0]), None


class ReshapeCopy(Reshape):
    """Reshape where the input's strides allow no view (a transposed matrix flattened): the elements in a
    new array, as PyTorch's reshape copies there. Backward: reshape the gradient to the input shape."""

    is_view = False


class View(Reshape):
    """Reshape recorded under view()'s name (a view). Backward: reshape the gradient to the input shape."""


class Squeeze(Reshape):
    """Drop size-1 dims (a view). Backward: reshape the gradient to the input shape."""


class Unsqueeze(Reshape):
    """Insert a size-1 dim (a view). Backward: reshape the gradient to the input shape."""


class Flatten(Reshape):
    """Merge a range of dims into one (a view). Backward: reshape the gradient to the input shape."""


@functools.lru_cache(maxsize=1024)
def _infer_shape(shape: tuple, numel: int, op: str) -> tuple:
    """shape with its -1 (if any) worked out from numel, or PyTorch's error. Every view and reshape
    runs it, and a program reshapes to the same few shapes again and again: the answers are cached
    (0.7 -> 0.1 us a view; an error is raised anew each time, never cached)."""
    inferred = shape.count(-1)
    if inferred > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred, got shape {list(shape)}")
    if min(shape, default=0) < -inferred:  # a negative size other than the one -1
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    if inferred:
        known = -math.prod(shape)  # the product of the other sizes
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                               f"unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        i = shape.index(-1)
        return shape[:i] + (numel // known,) + shape[i + 1:]
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


@tensor_args("x")
def reshape(x, *shape):
    """x in a new shape, as torch.reshape (one dim may be -1); x itself when the shape is unchanged."""
    return _reshape(x, shape, Reshape)


def _reshape(x, shape: tuple, fn: type):
    """reshape's work, recorded as op `fn` (Reshape, View, Flatten): a view of x, or, where x's strides allow
    none (a transposed matrix flattened), a copy (ReshapeCopy), as PyTorch's reshape (view refuses)."""
    shape = _infer_shape(shape_arg(shape), x._data.size, "reshape")
    if shape == x._data.shape:
        return x
    if not x._data.flags.c_contiguous and not reshapes_in_place(x._data.shape, x._data.strides, shape):
        if fn is View:
            raise RuntimeError(f"view size is not compatible with input tensor's size and stride (at least one "
                               f"dimension spans across two contiguous subspaces): a tensor of shape "
                               f"{list(x._data.shape)} viewed as {list(shape)}. Use .reshape(...) instead.")
        fn = ReshapeCopy
    return fn.apply(x, shape)


@tensor_args("x")
def view(x, *shape):
    """Reshape without copying, as PyTorch: a non-contiguous tensor only where its strides allow the new
    shape (x[:, ::2].view(-1) does; x.t().view(-1) is refused: use reshape)."""
    return _reshape(x, shape, View)


@tensor_args("x")
def squeeze(x, dim=None):
    """Remove size-1 dims (all, or those in `dim`), as torch.squeeze; other dims are left alone."""
    shape = x._data.shape
    axes = normalize_dims(dim, len(shape), "squeeze")
    new = tuple(s for i, s in enumerate(shape) if not (s == 1 and (axes is None or i in axes)))
    return x if new == shape else Squeeze.apply(x, new)  # a valid shape by construction: not checked again


@tensor_args("x")
def unsqueeze(x, dim: int):
    """Insert a size-1 dim at `dim` (which may be -1 for last), as torch.unsqueeze."""
    shape = list(x._data.shape)
    dim = normalize_dim(dim, len(shape) + 1, "unsqueeze")
    shape.insert(dim, 1)
    return Unsqueeze.apply(x, tuple(shape))


@tensor_args("x")
def flatten(x, start_dim: int = 0, end_dim: int = -1):
    """Merge dims start_dim..end_dim into one, as torch.flatten; a 0-d tensor gives shape (1,)."""
    shape = x._data.shape
    if not shape:
        return _reshape(x, (1,), Flatten)
    s = normalize_dim(start_dim, len(shape), "flatten")
    e = normalize_dim(end_dim, len(shape), "flatten")
    if s > e:
        raise RuntimeError(f"flatten() has invalid args: start_dim ({start_dim}) cannot come after end_dim ({end_dim})")
    return _reshape(x, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:], Flatten)


# ---------------------------------------------------------------- permutations

class Permute(Op):
    """Reorder dims (a view). Backward: permute the gradient by the inverse order."""

    is_view = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return x._data.transpose(dims)

    @staticmethod
    def backward(ctx, g):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return permute(g, tuple(inverse)), None


class Transpose(Permute):
    """Swap two dims (a view). Backward: permute the gradient by the inverse order (the same swap)."""


@tensor_args("x")
def permute(x, *dims):
    """Reorder dims, as torch.permute (a view); x itself for the identity order."""
    dims = _permutation(shape_arg(dims, "permute") if dims else (), x._data.ndim)
    return x if dims == tuple(range(len(dims))) else Permute.apply(x, dims)


@functools.lru_cache(maxsize=1024)
def _permutation(dims: tuple, n: int) -> tuple:
    """dims as an order of n dims (negative ones counted from the end), or PyTorch's error. A program
    permutes the same few ways again and again: the answers are cached (1.5 -> 0.1 us a permute)."""
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(normalize_dim(d, n, "permute") for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError(f"permute(): duplicate dims are not allowed, got {list(dims)}")
    return dims


@tensor_args("x")
def transpose(x, dim0: int, dim1: int):
    """Swap dims dim0 and dim1, as torch.transpose (a view); a 0-d x is returned as is."""
    n = x._data.ndim
    if n == 0:
        return x
    d0, d1 = normalize_dim(dim0, n, "transpose"), normalize_dim(dim1, n, "transpose")
    if d0 == d1:
        return x
    dims = list(range(n))
    dims[d0], dims[d1] = d1, d0
    return Transpose.apply(x, tuple(dims))  # a valid order by construction: not checked again as permute's


@tensor_args("x")
def t(x):
    """Transpose of a tensor with at most 2 dims."""
    if x._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x._data.ndim}D")
    return Transpose.apply(x, (1, 0)) if x._data.ndim == 2 else x


def mT(x):
    """Transpose of the last two dims (batched matrices)."""
    n = x._data.ndim
    if n < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    return Transpose.apply(x, (*range(n - 2), n - 1, n - 2))  # always a valid order: no checks (backwards use it)


def T(x):
    """All dims reversed (PyTorch's Tensor.T)."""
    return permute(x, tuple(reversed(range(x._data.ndim))))


# ---------------------------------------------------------------- broadcasting

class Contiguous(Op):
    """A C-contiguous copy of x. Backward: the gradient passes through unchanged."""

    @staticmethod
    def forward(ctx, x):
        return ctx.xp.ascontiguousarray(x._data)

    @staticmethod
    def backward(ctx, g):
        return g


@tensor_args("x")
def contiguous(x):
    """x itself when already C-contiguous, else a contiguous copy (as Tensor.contiguous)."""
    return x if x._data.flags.c_contiguous else Contiguous.apply(x)


# ---------------------------------------------------------------- joining and splitting

class Cat(Op):
    """Join tensors along `dim` (its first argument). Backward: split the gradient back into
    the inputs' sizes along dim."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        ctx.sizes = [t._data.shape[dim] for t in tensors]
        return ctx.xp.concatenate([t._data for t in tensors], axis=dim)

    @staticmethod
    def backward(ctx, g):
        return (None,) + tuple(split(g, ctx.sizes, ctx.dim))


def cat(tensors, dim: int = 0):
    """Join tensors along an existing dim (dtypes promoted, as PyTorch)."""
    tensors = tensor_list(tensors, "cat", zero_dim=False)
    if not tensors:
        raise ValueError("cat(): expected a non-empty list of Tensors")
    # PyTorch skips legacy empty 1-D tensors of shape (0,)
    nonempty = [t for t in tensors if t._data.shape != (0,)] or tensors[:1]
    d = normalize_dim(dim, nonempty[0]._data.ndim, "cat")
    if len({t._data.dtype for t in nonempty}) > 1:  # (one dtype, the common case, needs no promotion)
        nonempty = promote(*nonempty, op="cat")
    try:  # one tensor too: the result is always a new tensor, never x itself (cat([x]).add_(1) leaves x)
        return Cat.apply(d, *nonempty)
    except ValueError:  # the shapes are looked at only once the backend refused them
        _refuse_cat([t._data.shape for t in nonempty], d)
        raise


def _refuse_cat(shapes: list, d: int):
    """PyTorch's error for the first of shapes that cannot join the first one along d."""
    ref = shapes[0]
    for i, s in enumerate(shapes):
        if len(s) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and {len(s)}")
        k = next((k for k, (a, b) in enumerate(zip(ref, s)) if k != d and a != b), None)
        if k is not None:
            raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {ref[k]} but got "
                               f"size {s[k]} for tensor number {i} in the list.")


class Stack(Op):
    """Equal-shaped tensors joined along a new dim. Backward: the gradient's slices along that dim
    (unbind), one per tensor."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        new_dim = (slice(None),) * dim + (None,)  # each tensor with a size-1 dim at `dim`, joined there
        return ctx.xp.concatenate([t._data[new_dim] for t in tensors], axis=dim)  # (xp.stack: +3 us in Python)

    @staticmethod
    def backward(ctx, g):
        return (None,) + Unbind.apply(g, ctx.dim)


def stack(tensors, dim: int = 0):
    """Join equal-shaped tensors along a new dim (dtypes promoted, as PyTorch)."""
    tensors = tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                               f"{list(t._data.shape)} at entry {i}")
    if len({t._data.dtype for t in tensors}) > 1:  # (one dtype, the common case, needs no promotion)
        tensors = promote(*tensors, op="stack")
    return Stack.apply(normalize_dim(dim, len(first) + 1, "stack"), *tensors)


class Unbind(Op):
    """The slices of x along dim, each without that dim (views). Backward: stack the slices'
    gradients along dim."""

    is_view = True

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        before = (slice(None),) * dim
        return tuple(x._data[as_view_key(before + (i,))] for i in range(x._data.shape[dim]))  # 0-d pieces too

    @staticmethod
    def backward(ctx, *grads):
        return Stack.apply(ctx.dim, *grads), None


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from n 1-d tensors (or one list of them), as torch.meshgrid: each output has
    shape (len(t0), ..., len(tn-1)) and output k holds tensor k's values along dim k ('ij', the
    default). With indexing='xy' the first two dims are swapped, NumPy's and plotting's order: shape
    (len(t1), len(t0), ...). Each grid is a broadcast view (gradients add up along the copies)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = tensor_list(tensors, "meshgrid")
    if indexing is None:
        warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.")
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               f"{list(t._data.shape)}")
    swap = indexing == "xy" and len(tensors) > 1
    order = [1, 0] + list(range(2, len(tensors))) if swap else list(range(len(tensors)))
    sizes = tuple(tensors[k]._data.size for k in order)
    grids = []
    for dim, k in enumerate(order):
        shape = [1] * len(order)
        shape[dim] = -1
        grids.append(expand(reshape(tensors[k], *shape), sizes))
    return tuple(grids[order.index(k)] for k in range(len(tensors)))


class Split(Op):
    """Pieces of x of the given sizes along dim (views). Backward: cat the pieces' gradients
    along dim."""

    is_view = True

    @staticmethod
    def forward(ctx, x, sizes, dim):
        ctx.dim = dim
        before, pieces, start = (slice(None),) * dim, [], 0
        for size in sizes:  # slices of x (xp.split is Python too, and 3 us slower for two pieces)
            pieces.append(x._data[before + (slice(start, start + size),)])
            start += size
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, ctx.dim), None, None


@tensor_args("x")
def split(x, split_size_or_sections, dim: int = 0):
    """Pieces of x along dim: of equal size `split_size` (the last may be smaller) or of the listed sizes."""
    d = normalize_dim(dim, x._data.ndim, "split")
    n = x._data.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0:
            raise RuntimeError(f"split expects split_size be positive, but got split_size={size}")
        sizes = [min(size, n - i) for i in range(0, n, size)] or [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
    return tuple(Split.apply(x, sizes, d)) if len(sizes) > 1 else (x,)


@tensor_args("x")
def chunk(x, chunks: int, dim: int = 0):
    """Split into `chunks` pieces of size ceil(n / chunks) (fewer if n is small)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x._data.shape[normalize_dim(dim, x._data.ndim, "chunk")]
    if n == 0:  # PyTorch: `chunks` empty pieces
        return split(x, [0] * chunks, dim)
    return split(x, -(-n // chunks), dim)


# ---------------------------------------------------------------- flip and pad

class Flip(Op):
    """Reverse the order along dims: a new tensor, as PyTorch's (NumPy's flip is a view, which writing
    into would write into x). Backward: flip the gradient along the same dims."""

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return ctx.xp.flip(x._data, axis=dims).copy()

    @staticmethod
    def backward(ctx, g):
        return flip(g, ctx.dims), None


@tensor_args("x")
def flip(x, dims):
    """Reverse the order of elements along `dims` (required), as torch.flip."""
    if dims is None:
        raise TypeError("flip() missing required argument 'dims'")
    return Flip.apply(x, normalize_dims(dims, x._data.ndim, "flip"))


class Pad(Op):
    """Constant padding with `value` on each side of each dim (widths >= 0; pad() crops negative
    widths first). Backward: slice the gradient back to the unpadded region."""

    @staticmethod
    def forward(ctx, x, widths, value):
        ctx.widths = widths
        return ctx.xp.pad(x._data, widths, mode="constant", constant_values=value)

    @staticmethod
    def backward(ctx, g):
        key = tuple(slice(lo, g._data.shape[i] - hi) for i, (lo, hi) in enumerate(ctx.widths))
        return getitem(g, key), None, None


@tensor_args("x")
def pad(x, pad, mode: str = "constant", value: float | None = None):
    """x padded on its last len(pad)//2 dims, as torch.nn.functional.pad: pad = (left, right) for the
    last dim, then (top, bottom) for the one before, and so on. A negative width crops instead.

    mode 'constant' fills with `value` (default 0) and works on any dims. The other modes take the
    new elements from x itself and, as in PyTorch, pad the last 1, 2 or 3 dims of a tensor with one or
    two more dims (batch and channels, or channels only): 'reflect' mirrors x about its edge elements
    (width < size), 'replicate' repeats the edge elements, 'circular' wraps around (width <= size).
    Each of these is an index along every padded dim (_pad_source says which input element each
    output element reads), so an element read twice gets both gradients added.

    Deviations: circular padding always wraps around the elements left after cropping. PyTorch's
    agrees while each width is at most what the crop leaves; beyond that its values (a left width, as
    in (3, -4) on 5 elements: it reads cropped-off elements or uninitialised memory) or its gradient
    (a right width, as in (-3, 3)) are wrong. With nothing left to wrap around ((2, -5) on 5 elements)
    this raises. Reflect and replicate also pad bool tensors (PyTorch refuses them)."""
    widths = _pad_widths(x, pad, mode)
    if mode == "constant":
        return _pad_constant(x, widths, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'pad: padding mode "{mode}" doesn\'t take in value argument (got value={value})')
    _check_padded_rank(x, len(widths), mode)
    shape = x._data.shape
    for d, lo, hi in widths:
        _check_pad_width(shape[d], lo, hi, mode, f"padding ({lo}, {hi}) at dimension {d} of input {list(shape)}")
    for d, lo, hi in widths:
        if lo or hi:
            x = getitem(x, (slice(None),) * d + (_pad_source(shape[d], lo, hi, mode),))
    return x


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_widths(x, pad, mode) -> list:
    """[(dim, left, right), ...] from F.pad's flat `pad`, the last dim first; PyTorch's errors for
    a bad `pad` or `mode`."""
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    if not isinstance(mode, str):
        raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not {type(mode).__name__}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"pad: unrecognised padding mode {mode!r} (expected one of {_PAD_MODES})")
    for i, p in enumerate(pad):
        if isinstance(p, bool) or not hasattr(type(p), "__index__"):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos {i} (got {tuple(pad)!r})")
    pad, n = tuple(int(p) for p in pad), x._data.ndim
    if len(pad) % 2:
        raise RuntimeError(f"pad: padding length must be divisible by 2, got pad={list(pad)}")
    if len(pad) // 2 > n:
        raise RuntimeError(f"pad: padding length should be less than or equal to two times the input dimension "
                           f"but got padding length {len(pad)} and input of dimension {n} (shape "
                           f"{list(x._data.shape)})")
    return [(n - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


def _pad_constant(x, widths: list, value):
    """Constant padding: crop the negative widths (a view), then pad the rest with `value`."""
    shape = x._data.shape
    for d, lo, hi in widths:
        if shape[d] + min(lo, 0) + min(hi, 0) < 0 or shape[d] + lo + hi < 0:
            raise RuntimeError(f"pad: negative padding ({lo}, {hi}) at dimension {d} of input {list(shape)} "
                               f"removes more than the dimension's {shape[d]} elements")
    if any(lo < 0 or hi < 0 for _, lo, hi in widths):
        key = [slice(None)] * len(shape)
        for d, lo, hi in widths:
            key[d] = slice(max(-lo, 0), shape[d] - max(-hi, 0))
        x = getitem(x, tuple(key))
    full = [(0, 0)] * len(shape)
    for d, lo, hi in widths:
        full[d] = (max(lo, 0), max(hi, 0))
    return Pad.apply(x, tuple(full), value)


def _check_padded_rank(x, k: int, mode: str) -> None:
    """PyTorch's non-constant modes pad k = 1, 2 or 3 dims of a (k+1)- or (k+2)-dim tensor; reflect and
    replicate also refuse empty dims other than the batch dim."""
    shape, n = list(x._data.shape), x._data.ndim
    if k not in (1, 2, 3) or n not in (k + 1, k + 2):
        raise NotImplementedError(
            f"pad(mode={mode!r}): padding size {2 * k} is not supported for {n}D input tensor (shape {shape}). "
            f"Supported combinations for non-constant padding: 2D or 3D input with padding size 2 (pads the last "
            f"dim), 3D or 4D input with padding size 4 (the last 2 dims), 4D or 5D input with padding size 6 "
            f"(the last 3 dims)")
    if mode != "circular" and 0 in shape[n - k - 1:]:
        raise RuntimeError(f"pad(mode={mode!r}): expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: {shape}")


def _pad_source(n: int, lo: int, hi: int, mode: str) -> list:
    """For each position j of a dim of size n padded by (lo, hi), the position of the input it reads.
    With i = j - lo the position in the input's coordinates (outside [0, n) in the padding): reflect
    mirrors i about the first and last elements; replicate clamps i into [0, n); circular crops the
    negative widths, then wraps i around the elements that are left."""
    positions = range(-lo, n + hi)
    if mode == "reflect":
        return [(n - 1) - abs((n - 1) - abs(i)) for i in positions]
    if mode == "replicate":
        return [min(max(i, 0), n - 1) for i in positions]
    kept = n + min(lo, 0) + min(hi, 0)
    return [max(-lo, 0) + (i + min(lo, 0)) % kept for i in positions]


def _check_pad_width(n: int, lo: int, hi: int, mode: str, where: str) -> None:
    """PyTorch's limits on one dim's widths (lo, hi) in the non-constant modes, for a dim of size n."""
    if mode == "reflect" and (lo >= n or hi >= n):
        raise RuntimeError(f"pad(mode='reflect'): padding size should be less than the corresponding input "
                           f"dimension, but got: {where}")
    if mode != "circular" and n + lo + hi < 1:
        raise RuntimeError(f"pad(mode={mode!r}): input is too small: {where} gives an output size of {n + lo + hi}")
    if mode != "circular":
        return
    if lo > n or hi > n:
        raise RuntimeError(f"pad(mode='circular'): padding value causes wrapping around more than once: {where}")
    if n + lo + hi < 0:
        raise RuntimeError(f"pad(mode='circular'): negative padding results in a negative size: {where}")
    if n + lo + hi > 0 and n + min(lo, 0) + min(hi, 0) <= 0:
        raise RuntimeError(f"pad(mode='circular'): the negative width crops all {n} elements, leaving nothing to "
                           f"wrap around: {where}")


# ---------------------------------------------------------------- rearranging: roll, repeat, movedim, narrow, ...

class Roll(Op):
    """Shift elements along dims, wrapping around (no dims: along the flattened tensor).
    Backward: roll the gradient back by the opposite shifts."""

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return ctx.xp.roll(x._data, shifts, axis=dims)

    @staticmethod
    def backward(ctx, g):
        back = tuple(-s for s in ctx.shifts) if isinstance(ctx.shifts, tuple) else -ctx.shifts
        return Roll.apply(g, back, ctx.dims), None, None


def roll(x, shifts, dims=None):
    """Shift elements by `shifts` along `dims`, wrapping around, as torch.roll."""
    if dims is None:
        if not isinstance(shifts, int) and len(shifts) != 1:
            raise RuntimeError(f"roll: without dims, shifts must be one number, got {shifts}")
        shift = shifts if isinstance(shifts, int) else int(shifts[0])
        return reshape(Roll.apply(reshape(x, (-1,)), shift, None), x._data.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    dims = tuple(normalize_dim(d, x._data.ndim, "roll") for d in dims)
    return Roll.apply(x, shifts, dims)


class Repeat(Op):
    """x tiled `reps` times along each dim (reps may have more dims than x: leading ones are new).
    Backward: the gradient viewed as (r0, s0, r1, s1, ...) summed over the repeat axes r."""

    @staticmethod
    def forward(ctx, x, reps):
        ctx.reps = reps
        return ctx.xp.tile(x._data, reps)

    @staticmethod
    def backward(ctx, g):
        reps, shape = ctx.reps, ctx.input_shapes[0]
        full = (1,) * (len(reps) - len(shape)) + tuple(shape)
        split = tuple(n for pair in zip(reps, full) for n in pair)  # (r0, s0, r1, s1, ...)
        kept = tuple(n for s in full for n in (1, s))  # (1, s0, 1, s1, ...): the r axes summed away
        return reshape(sum_to(reshape(g, split), kept), shape), None


def repeat(x, *sizes):
    """x repeated `sizes` times along each dim, as Tensor.repeat (len(sizes) >= x.dim())."""
    reps = shape_arg(sizes)
    if len(reps) < x._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           f"tensor (repeat dims {list(reps)} for a tensor of shape {list(x._data.shape)})")
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension: repeat dims {list(reps)}")
    return Repeat.apply(x, reps)


def tile(x, dims):
    """x repeated along each dim, as torch.tile: `dims` is padded with leading 1s to x's dims."""
    reps = tuple(int(d) for d in ((dims,) if isinstance(dims, int) else dims))
    reps = (1,) * (x._data.ndim - len(reps)) + reps
    return repeat(x, reps)


def movedim(x, source, destination):
    """Move dims `source` to positions `destination` (the others keep their order), as torch.movedim."""
    n = x._data.ndim
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    src = tuple(normalize_dim(d, n, "movedim") for d in src)
    dst = tuple(normalize_dim(d, n, "movedim") for d in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in source ({list(src)}) or destination ({list(dst)})")
    rest = iter(d for d in range(n) if d not in src)
    moved = dict(zip(dst, src))
    return permute(x, tuple(moved[i] if i in moved else next(rest) for i in range(n)))


def narrow(x, dim: int, start, length: int):
    """The slice start:start+length of dim (a view), as torch.narrow; start may be negative or a 0-d tensor."""
    d = normalize_dim(dim, x._data.ndim, "narrow")
    n = x._data.shape[d]
    start = int(start)
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start %= n if n else 1
    if length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return getitem(x, (slice(None),) * d + (slice(start, start + length),))


def narrow_copy(x, dim: int, start, length: int):
    """narrow's slice as a new tensor with memory of its own (not a view), as torch.narrow_copy."""
    return Clone.apply(narrow(x, dim, start, length))


def select(x, dim: int, index: int):
    """x indexed by `index` along dim (a view with that dim removed), as torch.select."""
    d = normalize_dim(dim, x._data.ndim, "select")
    n = x._data.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(x._data.shape)} at "
                         f"dimension {d}")
    return getitem(x, (slice(None),) * d + (int(index),))


def unbind(x, dim: int = 0) -> tuple:
    """The slices of x along dim, as torch.unbind."""
    d = normalize_dim(dim, x._data.ndim, "unbind")
    return Unbind.apply(x, d) if x._data.shape[d] else ()


def unflatten(x, dim: int, sizes):
    """Dim `dim` split into `sizes` (one may be -1), as torch.unflatten."""
    shape = x._data.shape
    d = normalize_dim(dim, len(shape), "unflatten")
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    inner = _infer_shape(sizes, shape[d], "unflatten")
    return reshape(x, shape[:d] + inner + shape[d + 1:])


def ravel(x):
    """x flattened to one dim, as torch.ravel."""
    return reshape(x, (-1,))


def atleast_1d(*tensors):
    """Each tensor with at least one dim, as torch.atleast_1d: one tensor gives a tensor; several, or one
    list/tuple of them, give a tuple."""
    return _each_tensor(tensors, lambda x: reshape(x, (1,)) if not x._data.ndim else x)


def atleast_2d(*tensors):
    """Each tensor with at least two dims (a vector becomes a row), as torch.atleast_2d (tensor or tuple, as
    atleast_1d)."""
    return _each_tensor(tensors, lambda x: reshape(x, (1,) * (2 - x._data.ndim) + x._data.shape)
                        if x._data.ndim < 2 else x)


def atleast_3d(*tensors):
    """Each tensor with at least three dims (as torch.atleast_3d: (n,) -> (1, n, 1), (m, n) -> (m, n, 1));
    tensor or tuple, as atleast_1d."""
    return _each_tensor(tensors, _atleast_3d)


def _atleast_3d(x):
    nd, shape = x._data.ndim, x._data.shape
    if nd >= 3:
        return x
    return reshape(x, (1, 1, 1) if nd == 0 else (1,) + shape + (1,) if nd == 1 else shape + (1,))


def _each_tensor(tensors: tuple, fn):
    """fn of the one tensor given, or a tuple of fn of each (given separately or as one list/tuple)."""
    if len(tensors) == 1 and isinstance(tensors[0], TensorBase):
        return fn(tensors[0])
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return tuple(fn(t) for t in tensors)


def hstack(tensors):
    """Join along dim 1 (dim 0 for vectors), as torch.hstack."""
    tensors = [atleast_1d(t) for t in tensors]
    return cat(tensors, 0 if tensors and tensors[0]._data.ndim == 1 else 1)


def vstack(tensors):
    """Join along dim 0 after making each at least 2-D, as torch.vstack."""
    return cat([atleast_2d(t) for t in tensors], 0)


def dstack(tensors):
    """Join along dim 2 after making each at least 3-D, as torch.dstack."""
    return cat([atleast_3d(t) for t in tensors], 2)


def column_stack(tensors):
    """Vectors as columns, matrices as they are, joined along dim 1, as torch.column_stack."""
    return cat([reshape(t, (-1, 1)) if t._data.ndim <= 1 else t for t in tensors], 1)
