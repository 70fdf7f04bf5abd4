"""One table of differentiable ops, shared by the op tests, plus the converters
between NumPy, tinygrad_lab and PyTorch that every test in tests/ops uses.

An `OpSpec` says
- how to call the op: `fn(m, *tensors, **kwargs)`, where `m` is a `Lib` (tinygrad_lab,
  or torch, under the same names); the same body runs on both libraries because the
  API mirrors PyTorch's. `torch_fn` overrides it where PyTorch spells the op differently;
- how many tensor inputs it takes (`n_inputs`);
- where it is differentiable (`domain`: positive for log/sqrt, away from 0 for a
  divisor, away from kinks and ties for abs/relu/clamp/max, ...);
- which shapes and extra arguments to try (`cases`: a hypothesis strategy of `Case`).

PyTorch is imported lazily (`torch_lib`), so this module imports without it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_lab as tl
from tinygrad_lab.ops import movement as _tl_movement


# ---------------------------------------------------------------- the two libraries, and conversions

class Lib:
    """A library module seen under the names the table uses; `overrides` fill the gaps
    (e.g. pad lives in torch.nn.functional)."""

    def __init__(self, module, **overrides):
        self._module = module
        self.__dict__.update(overrides)

    def __getattr__(self, name):
        return getattr(self._module, name)


TL = Lib(tl, pad=_tl_movement.pad)


def torch_lib() -> Lib:
    import torch
    import torch.nn.functional as F
    return Lib(torch, pad=F.pad)


def to_tl(arr, requires_grad: bool = False):
    """A tinygrad_lab tensor with a copy of `arr` (its NumPy dtype kept)."""
    return tl.tensor(np.asarray(arr), requires_grad=requires_grad)


def to_torch(arr, requires_grad: bool = False):
    """A torch tensor with a copy of `arr` (its NumPy dtype kept)."""
    import torch
    return torch.tensor(np.asarray(arr), requires_grad=requires_grad)


def to_numpy(t) -> np.ndarray:
    """The values of a tinygrad_lab or torch tensor as a NumPy array."""
    return np.asarray(t.detach().numpy())


def dtype_name(t) -> str:
    """'float32' for tinygrad_lab.float32 and torch.float32 alike."""
    return str(t.dtype).rsplit(".", 1)[-1]


def as_tuple(out) -> tuple:
    """An op's output(s) as a tuple (split/chunk/max-with-dim return several)."""
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


# ---------------------------------------------------------------- checking against PyTorch

def assert_matches(out, ref, rtol: float = 1e-10, atol: float = 1e-12, what: str = "output") -> None:
    """tinygrad_lab tensor `out` equals torch tensor `ref`: dtype name, shape and values
    (exactly for bool and integer dtypes)."""
    assert dtype_name(out) == dtype_name(ref), f"{what}: dtype {dtype_name(out)}, PyTorch gives {dtype_name(ref)}"
    assert tuple(out.shape) == tuple(ref.shape), f"{what}: shape {tuple(out.shape)}, PyTorch {tuple(ref.shape)}"
    got, want = to_numpy(out), to_numpy(ref)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def check_against_torch(fn, rtol: float = 1e-10, atol: float = 1e-12):
    """Run `fn(m)` with m = TL and m = torch; assert that the tensors returned (one or a
    tuple; None where there is no gradient) match. Returns tinygrad_lab's result."""
    got, want = as_tuple(fn(TL)), as_tuple(fn(torch_lib()))
    assert len(got) == len(want), f"{len(got)} results, PyTorch gives {len(want)}"
    for i, (o, r) in enumerate(zip(got, want)):
        if r is None or o is None:
            assert o is None and r is None, f"result {i}: {o!r}, PyTorch gives {r!r}"
        else:
            assert_matches(o, r, rtol, atol, what=f"result {i}")
    return got if len(got) != 1 else got[0]


def value_and_grads(m, fn, *arrays, weights=None):
    """(out, *grads): out = fn(m, *leaves) for float64 leaves holding `arrays`, and the
    leaves' gradients of sum(out * weights) (weights default to ones)."""
    leaves = [m.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = fn(m, *leaves)
    (out if weights is None else out * m.tensor(np.asarray(weights, dtype=np.float64))).sum().backward()
    return (out, *(leaf.grad for leaf in leaves))


def error_of(fn):
    """The exception `fn()` raises (None if it returns)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any error is the answer
        return e
    return None


# ---------------------------------------------------------------- input domains

class Domain:
    """Which values an op's inputs may take (where it is differentiable)."""

    def draw_arrays(self, draw, shapes) -> list:
        raise NotImplementedError


@dataclass(frozen=True)
class Interval(Domain):
    """Independent float64 elements in [lo, hi] (or in ±[lo, hi] with `either_sign`)."""

    lo: float
    hi: float
    either_sign: bool = False

    def draw_arrays(self, draw, shapes) -> list:
        elements = st.floats(self.lo, self.hi, allow_subnormal=False)
        if self.either_sign:
            elements = st.tuples(st.booleans(), elements).map(lambda t: -t[1] if t[0] else t[1])
        return [draw(hnp.arrays(np.float64, s, elements=elements)) for s in shapes]


@dataclass(frozen=True)
class PerInput(Domain):
    """A domain for each input (e.g. positive base, any exponent)."""

    domains: tuple

    def draw_arrays(self, draw, shapes) -> list:
        return [d.draw_arrays(draw, [s])[0] for d, s in zip(self.domains, shapes)]


CLAMP_LO, CLAMP_HI = -0.575, 0.825  # midway between the magnitudes Distinct produces


class Distinct(Domain):
    """All elements of all inputs together, pairwise >= 0.15 apart in value and in |value|,
    >= 0.15 from 0 and >= 0.075 from CLAMP_LO/CLAMP_HI: abs, relu, clamp, max/min,
    maximum/minimum and the inf-norm are smooth there (no kinks, no ties)."""

    def draw_arrays(self, draw, shapes) -> list:
        sizes = [math.prod(s) for s in shapes]
        n = sum(sizes)
        order = draw(st.permutations(range(n)))
        signs = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        jitter = draw(st.lists(st.floats(-0.05, 0.05), min_size=n, max_size=n))
        flat = np.array([(0.2 + 0.25 * k + j) * (-1 if s else 1) for k, s, j in zip(order, signs, jitter)],
                        dtype=np.float64)
        bounds = np.cumsum([0] + sizes)
        return [flat[bounds[i]:bounds[i + 1]].reshape(s) for i, s in enumerate(shapes)]


REAL = Interval(-2.0, 2.0)
POSITIVE = Interval(0.5, 2.0)
NONZERO = Interval(0.5, 2.0, either_sign=True)
ABOVE_MINUS_ONE = Interval(-0.5, 2.0)  # log1p
# a ** b: at b == 0, d/da is 0 by convention (as PyTorch), which puts a kink in d2/(da db) there
EXPONENT = Interval(0.1, 2.0, either_sign=True)
SMALL_NONZERO = Interval(0.5, 1.5, either_sign=True)  # prod: keeps products of many factors moderate
DISTINCT = Distinct()


# ---------------------------------------------------------------- shapes and arguments

@dataclass(frozen=True)
class Case:
    """Input shapes, one per tensor input, and the op's extra keyword arguments."""

    shapes: tuple
    kwargs: dict = field(default_factory=dict)


MAX_SIDE = 4
sides = st.integers(1, MAX_SIDE)


def shape_st(min_dims: int = 0, max_dims: int = 3, max_side: int = MAX_SIDE):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)


def same(n: int = 1, min_dims: int = 0, max_dims: int = 3):
    """n inputs of one shape (0-d to 3-d, sizes 1..4)."""
    return shape_st(min_dims, max_dims).map(lambda s: Case((s,) * n))


def broadcasting(n: int = 2):
    """n mutually broadcastable shapes (leading dims missing, size-1 dims stretched)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3, min_side=1,
                                             max_side=MAX_SIDE).map(lambda b: Case(tuple(b.input_shapes)))


def _dim(draw, ndim: int, extra: int = 0) -> int:
    """A valid dim for a tensor of `ndim` dims (+`extra` for unsqueeze/stack), maybe negative."""
    n = max(ndim + extra, 1)
    return draw(st.integers(-n, n - 1))


def _dims(draw, ndim: int) -> tuple:
    """One or more distinct dims in a random order, some written negative."""
    axes = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(a - ndim if draw(st.booleans()) else a for a in axes)


@st.composite
def reduction(draw, dims=("all", "none", "int", "tuple"), min_reduced: int = 1, **extra):
    """One shape, a dim ("all": no dim argument; "none": dim=None; an int; a tuple),
    keepdim (whenever a dim argument is passed) and `extra` kwargs drawn from strategies."""
    shape = draw(shape_st())
    nd = len(shape)
    kind = draw(st.sampled_from([k for k in dims if not (k == "tuple" and nd == 0)]))
    kw = {}
    if kind == "int":
        kw["dim"] = _dim(draw, nd)
        axes = {kw["dim"] % nd} if nd else set()
    elif kind == "tuple":
        kw["dim"] = _dims(draw, nd)
        axes = {d % nd for d in kw["dim"]}
    else:
        if kind == "none":
            kw["dim"] = None
        axes = set(range(nd))
    if kind != "all":
        kw["keepdim"] = draw(st.booleans())
    assume(math.prod(shape[a] for a in axes) >= min_reduced)
    kw.update({k: draw(s) for k, s in extra.items()})
    return Case((shape,), kw)


def _prime_factors(n: int) -> list:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def reshape_case(draw):
    """A shape and a target shape with as many elements (maybe with one -1)."""
    shape = draw(shape_st())
    factors = _prime_factors(math.prod(shape))
    target = [1] * draw(st.integers(1 if factors else 0, 3))
    for f in factors:
        target[draw(st.integers(0, len(target) - 1))] *= f
    if target and draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return Case((shape,), {"shape": tuple(target)})


@st.composite
def flatten_case(draw):
    shape = draw(shape_st())
    n = max(len(shape), 1)
    start, end = sorted(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2)))
    neg = draw(st.booleans())
    return Case((shape,), {"start_dim": start - n if neg else start, "end_dim": end - n if neg else end})


@st.composite
def squeeze_case(draw):
    shape = draw(shape_st())
    kind = draw(st.sampled_from(["all", "int", "tuple"] if shape else ["all", "int"]))
    if kind == "all":
        return Case((shape,))
    return Case((shape,), {"dim": _dim(draw, len(shape)) if kind == "int" else _dims(draw, len(shape))})


@st.composite
def unsqueeze_case(draw):
    shape = draw(shape_st())
    return Case((shape,), {"dim": _dim(draw, len(shape), extra=1)})


@st.composite
def transpose_case(draw):
    shape = draw(shape_st(min_dims=1))
    return Case((shape,), {"dim0": _dim(draw, len(shape)), "dim1": _dim(draw, len(shape))})


@st.composite
def permute_case(draw):
    shape = draw(shape_st())
    return Case((shape,), {"dims": tuple(draw(st.permutations(range(len(shape)))))})


@st.composite
def expand_case(draw, allow_minus_one: bool = True):
    """A shape and a target it broadcasts to: new leading dims, size-1 dims stretched, -1 = keep."""
    shape = draw(shape_st())
    lead = draw(st.lists(st.integers(1, 3), max_size=1))
    keep = st.sampled_from([-1, None]) if allow_minus_one else st.just(None)
    tail = []
    for s in shape:
        k = draw(keep)
        tail.append(k if k == -1 else (draw(st.integers(1, 3)) if s == 1 else s))
    return Case((shape,), {"shape": tuple(lead + tail)})


@st.composite
def cat_case(draw, n: int = 3):
    base = list(draw(shape_st(min_dims=1)))
    dim = _dim(draw, len(base))
    shapes = []
    for _ in range(n):
        base[dim] = draw(st.integers(1, 3))
        shapes.append(tuple(base))
    return Case(tuple(shapes), {"dim": dim})


@st.composite
def stack_case(draw, n: int = 3):
    shape = draw(shape_st())
    return Case((shape,) * n, {"dim": _dim(draw, len(shape), extra=1)})


@st.composite
def split_case(draw, sections: bool):
    """split(size, dim) or split([sizes...], dim) (sections may be 0), as PyTorch."""
    shape = draw(shape_st(min_dims=1))
    dim = _dim(draw, len(shape))
    n = shape[dim]
    if sections:
        cuts = sorted(draw(st.lists(st.integers(0, n), min_size=1, max_size=3)))
        size = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    else:
        size = draw(st.integers(1, MAX_SIDE + 1))
    return Case((shape,), {"split_size": size, "dim": dim})  # Tensor.split(split_size, dim)


@st.composite
def unbind_case(draw):
    shape = draw(shape_st(min_dims=1))
    return Case((shape,), {"dim": _dim(draw, len(shape))})


@st.composite
def chunk_case(draw):
    shape = draw(shape_st(min_dims=1))
    return Case((shape,), {"chunks": draw(st.integers(1, 5)), "dim": _dim(draw, len(shape))})


@st.composite
def flip_case(draw):
    shape = draw(shape_st(min_dims=1))
    return Case((shape,), {"dims": list(_dims(draw, len(shape)))})


@st.composite
def pad_case(draw):
    shape = draw(shape_st(min_dims=1))
    k = draw(st.integers(1, len(shape)))
    pad = tuple(draw(st.lists(st.integers(0, 2), min_size=2 * k, max_size=2 * k)))
    return Case((shape,), {"pad": pad, "value": draw(st.sampled_from([0.0, 0.5]))})


# -- indexing

def _basic_part(draw, size: int):
    """An int, or a slice with start/stop anywhere (also out of range) and a positive step."""
    if draw(st.booleans()):
        return draw(st.integers(-size, size - 1))
    bound = st.one_of(st.none(), st.integers(-size - 1, size + 1))
    return slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3])))


@st.composite
def basic_key(draw, shape):
    """ints and slices for some leading and (after an Ellipsis) some trailing dims of
    `shape`, with None inserted anywhere."""
    nd = len(shape)
    lead = draw(st.integers(0, nd))
    trail = draw(st.integers(0, nd - lead))
    parts = [_basic_part(draw, s) for s in shape[:lead]]
    if trail or draw(st.booleans()):
        parts += [Ellipsis] + [_basic_part(draw, s) for s in shape[nd - trail:]]
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), None)
    return tuple(parts)


@st.composite
def basic_index_case(draw):
    shape = draw(shape_st())
    return Case((shape,), {"key": draw(basic_key(shape))})


@st.composite
def negative_step_case(draw):
    """Full slices with negative steps (NumPy semantics) mixed with ints and plain slices."""
    shape = draw(shape_st(min_dims=1))
    key = [draw(st.sampled_from([slice(None), slice(None, None, -1), slice(None, None, -2), 0])) for _ in shape]
    if not any(isinstance(p, slice) and p.step for p in key):
        key[0] = slice(None, None, -1)
    return Case((shape,), {"key": tuple(key)})


def flip_then_slice(m, a, key):
    """x[::-k] spelled with flip (PyTorch has no negative steps): flip, then step by k."""
    neg = [d for d, p in enumerate(key) if isinstance(p, slice) and p.step and p.step < 0]
    pos = tuple(slice(None, None, -p.step) if d in neg else p for d, p in enumerate(key))
    return a.flip(neg)[pos]


def _index_array(draw, shape, size: int, repeat: bool = False):
    """Integer indices in [-size, size), of `shape`; with `repeat`, the first position appears twice."""
    n = math.prod(shape)
    flat = draw(st.lists(st.integers(-size, size - 1), min_size=n, max_size=n))
    if repeat and n >= 2:
        # the same position again, maybe spelled negative
        flat[1] = flat[0] if flat[0] < 0 or draw(st.booleans()) else flat[0] - size
    return np.array(flat, dtype=np.int64).reshape(shape)


@st.composite
def repeated_index_case(draw):
    """x[idx] with an integer index array that repeats a position: a tensor, or (1-D only:
    PyTorch reads a list of lists as a tuple of indices) a list."""
    shape = draw(shape_st(min_dims=1))
    idx_shape = draw(shape_st(min_dims=1, max_dims=2).filter(lambda s: math.prod(s) >= 2))
    return Case((shape,), {"index": _index_array(draw, idx_shape, shape[0], repeat=True),
                           "as_list": len(idx_shape) == 1 and draw(st.booleans())})


@st.composite
def mixed_index_case(draw):
    """Full slices and integer index arrays (broadcast together) per dim, at least one array."""
    shape = draw(shape_st(min_dims=2))
    is_array = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)).filter(any))
    n_arrays = sum(is_array)
    idx_shapes = iter(draw(hnp.mutually_broadcastable_shapes(num_shapes=n_arrays, min_dims=1, max_dims=2,
                                                             max_side=3)).input_shapes)
    key = tuple(_index_array(draw, next(idx_shapes), s) if arr else slice(None) for s, arr in zip(shape, is_array))
    return Case((shape,), {"key": key})


def tensor_key(m, key):
    """A key with its NumPy arrays turned into `m` tensors."""
    return tuple(m.tensor(k) if isinstance(k, np.ndarray) else k for k in key)


@st.composite
def mask_case(draw):
    """x[mask] with a boolean mask over the leading 1..ndim dims."""
    shape = draw(shape_st(min_dims=1))
    k = draw(st.integers(1, len(shape)))
    return Case((shape,), {"mask": draw(hnp.arrays(np.bool_, shape[:k]))})


@st.composite
def gather_case(draw, partial: bool):
    """gather(dim, index): index has x's ndim; along dim any length; elsewhere the same
    sizes, or (partial) any sizes up to x's, which PyTorch allows."""
    shape = draw(shape_st(min_dims=1))
    dim = _dim(draw, len(shape))
    idx_shape = tuple(draw(st.integers(1, MAX_SIDE)) if d == dim % len(shape) else
                      (draw(st.integers(1, s)) if partial else s) for d, s in enumerate(shape))
    index = draw(hnp.arrays(np.int64, idx_shape, elements=st.integers(0, shape[dim] - 1)))
    return Case((shape,), {"dim": dim, "index": index})


def _value_shape(draw, target: tuple) -> tuple:
    """A shape that broadcasts to `target`: a suffix of it with some sizes set to 1."""
    suffix = target[draw(st.integers(0, len(target))):]
    return tuple(1 if draw(st.booleans()) else s for s in suffix)


@st.composite
def setitem_case(draw, kind: str):
    """x[key] = v with v broadcast to x[key]'s shape; key basic, advanced (no repeats) or a mask."""
    shape = draw(shape_st(min_dims=1))
    if kind == "basic":
        key = draw(basic_key(shape))
    elif kind == "advanced":
        key = (np.array(draw(st.lists(st.integers(0, shape[0] - 1), min_size=1, unique=True)), dtype=np.int64),)
    else:
        key = (draw(hnp.arrays(np.bool_, shape)),)
    target = np.empty(shape)[key].shape
    return Case((shape, _value_shape(draw, target)), {"key": key})


def setitem(m, a, v, key):
    """x[key] = v on a non-leaf x (a * 1), so gradients reach both a and v."""
    x = a * 1.0
    x[tensor_key(m, key)] = v
    return x


# -- matmul

@st.composite
def matmul_case(draw, kind: str):
    n, k, p = draw(sides), draw(sides), draw(sides)
    if kind == "1d@1d":
        return Case(((k,), (k,)))
    if kind == "2d@1d":
        return Case(((n, k), (k,)))
    if kind == "1d@2d":
        return Case(((k,), (k, p)))
    if kind == "2d@2d":
        return Case(((n, k), (k, p)))
    # batched: batch dims broadcast against each other; either side may be 1-D or 2-D
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=2))
    ba, bb = batch.input_shapes
    if not (ba or bb):
        ba = (2,)
    a = (k,) if not ba and draw(st.booleans()) else ba + (n, k)
    b = (k,) if not bb and draw(st.booleans()) else bb + (k, p)
    return Case((a, b))


# ---------------------------------------------------------------- the table

@dataclass(frozen=True)
class OpSpec:
    name: str
    fn: Callable  # fn(m, *tensors, **kwargs)
    n_inputs: int
    cases: st.SearchStrategy
    domain: Domain = REAL
    torch_fn: Callable | None = None  # where PyTorch spells the op differently

    def call(self, m, tensors, kwargs, torch: bool = False):
        return as_tuple(((self.torch_fn or self.fn) if torch else self.fn)(m, *tensors, **kwargs))

    def examples(self):
        """A strategy of (Case, list of float64 input arrays)."""
        @st.composite
        def example(draw):
            case = draw(self.cases)
            assert len(case.shapes) == self.n_inputs, f"{self.name}: case has {len(case.shapes)} inputs"
            return case, self.domain.draw_arrays(draw, case.shapes)
        return example()

    def __repr__(self) -> str:
        return self.name


def _op(name, fn, n_inputs, cases, domain=REAL, torch_fn=None) -> OpSpec:
    return OpSpec(name, fn, n_inputs, cases, domain, torch_fn)


def _unary(name, fn, domain=REAL) -> OpSpec:
    return OpSpec(name, fn, 1, same(1), domain)


def _binary(name, fn, domain=REAL) -> OpSpec:
    return OpSpec(name, fn, 2, broadcasting(2), domain)


_correction = st.sampled_from([0, 1])

OPS = [
    # -- arithmetic (broadcasting pairs) and Python scalars on either side
    _binary("add", lambda m, a, b: a + b),
    _binary("sub", lambda m, a, b: a - b),
    _binary("mul", lambda m, a, b: a * b),
    _binary("div", lambda m, a, b: a / b, PerInput((REAL, NONZERO))),
    _binary("pow_tensor_tensor", lambda m, a, b: a ** b, PerInput((POSITIVE, EXPONENT))),
    _unary("pow_tensor_int", lambda m, a: a ** 3),
    _unary("pow_tensor_float", lambda m, a: a ** 2.5, POSITIVE),
    _unary("pow_tensor_negative", lambda m, a: a ** -1.5, POSITIVE),
    _unary("pow_scalar_tensor", lambda m, a: 2.5 ** a),
    _unary("add_scalar", lambda m, a: a + 1.5),
    _unary("radd_scalar", lambda m, a: 1.5 + a),
    _unary("sub_scalar", lambda m, a: a - 2),
    _unary("rsub_scalar", lambda m, a: 2 - a),
    _unary("mul_scalar", lambda m, a: a * 3),
    _unary("rmul_scalar", lambda m, a: 3 * a),
    _unary("div_scalar", lambda m, a: a / 4),
    _unary("rdiv_scalar", lambda m, a: 2 / a, NONZERO),
    _binary("maximum", lambda m, a, b: m.maximum(a, b), DISTINCT),
    _binary("minimum", lambda m, a, b: m.minimum(a, b), DISTINCT),
    _op("where", lambda m, a, b, mask: m.where(m.tensor(mask), a, b), 2,
        hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=MAX_SIDE).flatmap(
            lambda bs: hnp.arrays(np.bool_, bs.input_shapes[0]).map(
                lambda mask: Case(tuple(bs.input_shapes[1:]), {"mask": mask})))),
    _op("where_scalar", lambda m, a, mask: m.where(m.tensor(mask), a, 0.5), 1,
        shape_st().flatmap(lambda s: hnp.arrays(np.bool_, s).map(lambda mask: Case((s,), {"mask": mask})))),
    # -- unary math
    _unary("neg", lambda m, a: -a),
    _unary("abs", lambda m, a: a.abs(), DISTINCT),
    _unary("exp", lambda m, a: a.exp()),
    _unary("log", lambda m, a: a.log(), POSITIVE),
    _unary("log1p", lambda m, a: a.log1p(), ABOVE_MINUS_ONE),
    _unary("sqrt", lambda m, a: a.sqrt(), POSITIVE),
    _unary("rsqrt", lambda m, a: a.rsqrt(), POSITIVE),
    _unary("sin", lambda m, a: a.sin()),
    _unary("cos", lambda m, a: a.cos()),
    _unary("tanh", lambda m, a: a.tanh()),
    _unary("sigmoid", lambda m, a: a.sigmoid()),
    _unary("relu", lambda m, a: a.relu(), DISTINCT),
    _unary("clamp", lambda m, a: a.clamp(CLAMP_LO, CLAMP_HI), DISTINCT),
    _unary("clamp_min", lambda m, a: a.clamp(min=CLAMP_LO), DISTINCT),
    _unary("clamp_max", lambda m, a: a.clamp(max=CLAMP_HI), DISTINCT),
    _binary("clamp_tensor_min", lambda m, a, b: a.clamp(min=b), DISTINCT),
    _binary("clamp_tensor_max", lambda m, a, b: a.clamp(max=b), DISTINCT),
    # -- reductions
    _op("sum", lambda m, a, **kw: a.sum(**kw), 1, reduction()),
    _op("mean", lambda m, a, **kw: a.mean(**kw), 1, reduction()),
    _op("prod", lambda m, a, **kw: a.prod(**kw), 1, reduction(dims=("all", "int")), SMALL_NONZERO),
    _op("max_all", lambda m, a: a.max(), 1, same(1), DISTINCT),
    _op("min_all", lambda m, a: a.min(), 1, same(1), DISTINCT),
    _op("max_dim", lambda m, a, **kw: (lambda r: (r.values, r.indices))(a.max(**kw)), 1,
        reduction(dims=("int",)), DISTINCT),
    _op("min_dim", lambda m, a, **kw: (lambda r: (r.values, r.indices))(a.min(**kw)), 1,
        reduction(dims=("int",)), DISTINCT),
    _op("amax", lambda m, a, **kw: a.amax(**kw), 1, reduction(dims=("all", "int", "tuple")), DISTINCT),
    _op("amin", lambda m, a, **kw: a.amin(**kw), 1, reduction(dims=("all", "int", "tuple")), DISTINCT),
    _op("var", lambda m, a, **kw: a.var(**kw), 1, reduction(correction=_correction)),
    _op("std", lambda m, a, **kw: a.std(**kw), 1, reduction(min_reduced=2, correction=_correction), DISTINCT),
    _op("logsumexp", lambda m, a, **kw: a.logsumexp(**kw), 1, reduction(dims=("int", "tuple"))),
    _op("norm", lambda m, a, **kw: a.norm(**kw), 1,
        reduction(p=st.sampled_from([2, 1, 3, float("inf")])), DISTINCT),
    # -- movement
    _op("reshape", lambda m, a, shape: a.reshape(shape), 1, reshape_case()),
    _op("view", lambda m, a, shape: a.view(shape), 1, reshape_case()),
    _op("flatten", lambda m, a, **kw: a.flatten(**kw), 1, flatten_case()),
    _op("squeeze", lambda m, a, **kw: a.squeeze(**kw), 1, squeeze_case()),
    _op("unsqueeze", lambda m, a, dim: a.unsqueeze(dim), 1, unsqueeze_case()),
    _op("transpose", lambda m, a, dim0, dim1: a.transpose(dim0, dim1), 1, transpose_case()),
    _op("t", lambda m, a: a.t(), 1, same(1, max_dims=2)),
    _op("permute", lambda m, a, dims: a.permute(dims), 1, permute_case()),
    _op("expand", lambda m, a, shape: a.expand(shape), 1, expand_case()),
    _op("broadcast_to", lambda m, a, shape: a.broadcast_to(shape), 1, expand_case(allow_minus_one=False)),
    _op("contiguous", lambda m, a: a.transpose(0, -1).contiguous(), 1, same(1, min_dims=1)),
    _op("cat", lambda m, a, b, c, dim: m.cat([a, b, c], dim=dim), 3, cat_case()),
    _op("stack", lambda m, a, b, c, dim: m.stack([a, b, c], dim=dim), 3, stack_case()),
    _op("split_size", lambda m, a, split_size, dim: a.split(split_size, dim), 1, split_case(sections=False)),
    _op("split_sections", lambda m, a, split_size, dim: a.split(split_size, dim), 1, split_case(sections=True)),
    _op("chunk", lambda m, a, **kw: a.chunk(**kw), 1, chunk_case()),
    _op("unbind", lambda m, a, dim: a.unbind(dim), 1, unbind_case()),
    _op("flip", lambda m, a, dims: a.flip(dims), 1, flip_case()),
    _op("pad", lambda m, a, pad, value: m.pad(a, pad, value=value), 1, pad_case()),
    # -- indexing
    _op("index_basic", lambda m, a, key: a[key], 1, basic_index_case()),
    _op("index_negative_step", lambda m, a, key: a[key], 1, negative_step_case(), torch_fn=flip_then_slice),
    _op("index_repeated", lambda m, a, index, as_list: a[index.tolist() if as_list else m.tensor(index)], 1,
        repeated_index_case()),
    _op("index_mixed", lambda m, a, key: a[tensor_key(m, key)], 1, mixed_index_case()),
    _op("index_mask", lambda m, a, mask: a[m.tensor(mask)], 1, mask_case()),
    _op("gather", lambda m, a, dim, index: a.gather(dim, m.tensor(index)), 1, gather_case(partial=False)),
    _op("gather_partial_index", lambda m, a, dim, index: a.gather(dim, m.tensor(index)), 1, gather_case(partial=True)),
    _op("setitem_basic", setitem, 2, setitem_case("basic")),
    _op("setitem_advanced", setitem, 2, setitem_case("advanced")),
    _op("setitem_mask", setitem, 2, setitem_case("mask")),
    # -- matmul
    _op("matmul_1d_1d", lambda m, a, b: a @ b, 2, matmul_case("1d@1d")),
    _op("matmul_2d_1d", lambda m, a, b: a @ b, 2, matmul_case("2d@1d")),
    _op("matmul_1d_2d", lambda m, a, b: a @ b, 2, matmul_case("1d@2d")),
    _op("matmul_2d_2d", lambda m, a, b: m.matmul(a, b), 2, matmul_case("2d@2d")),
    _op("matmul_batched", lambda m, a, b: a @ b, 2, matmul_case("batched")),
]

OPS_BY_NAME = {spec.name: spec for spec in OPS}
assert len(OPS_BY_NAME) == len(OPS), "duplicate op names in the table"

# second derivatives are checked for this representative subset
GRADGRAD = ["mul", "div", "pow_tensor_tensor", "pow_tensor_float", "exp", "log", "tanh", "sigmoid", "matmul_2d_2d",
            "matmul_batched", "sum", "mean", "reshape", "permute", "index_basic", "index_repeated", "max_all",
            "max_dim"]
