"""The Tensor façade: PyTorch's Tensor API, each method bound to an op.

Everything a method does happens in `ops/` (the maths), `autograd/` (the graph)
or `creation.py` (new tensors); this file only maps names, argument forms and
dunders onto them.
"""
from __future__ import annotations

import copy

import numpy as np

from . import creation, dtypes
from ._format import format_tensor
from .autograd import api as _api
from .autograd.function import RemovableHandle
from .autograd.tensor_base import Size, TensorBase, make, make_view, meta, set_tensor_class
from .backends import shared_memory
from .ops import activation as act
from .ops import elementwise as ew
from .ops import indexing as ix
from .ops import inplace as ip
from .ops import linalg as la
from .ops import movement as mv
from .ops import transfer
from .ops import reduce as rd
from .ops import shapes
from .ops import decompositions as dc
from .ops import factorizations as fz
from .ops import diagonal as dg
from .ops import pointwise as pw
from .ops import scan
from .ops import scatter as sct
from .ops import sorting as so
from .ops import special as sp
from .ops import rearrange as ra
from .ops import statistics as st


def parse_to(*args, **kwargs) -> tuple:
    """The (device, dtype, copy) that `.to(...)` was asked for, in any of PyTorch's forms:
    to(dtype), to(device), to(device, dtype), to(tensor), and keyword arguments (shared by
    Tensor.to and Module.to). Absent parts are None."""
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, TensorBase):
            dtype, device = a.dtype, a._device
        elif isinstance(a, (dtypes.DType, type)) or (isinstance(a, str) and a in dtypes._BY_NAME):
            dtype = a
        else:
            device = a
    return (None if device is None else creation.resolve_device(device),
            None if dtype is None else dtypes.as_dtype(dtype), copy)


# a tensor's own state (TensorBase's fields): deepcopy makes these afresh, any other attribute is the user's
_ENGINE_FIELDS = frozenset({"_data", "_device", "_requires_grad", "_grad_fn", "_output_nr", "_grad", "_vc", "_base",
                            "_meta", "_accum"})


# the legacy tensor type names (x.type(), x.type('torch.LongTensor')): FloatTensor for float32, ...
_TYPES_BY_NAME = {d.scalar_name: d for d in dtypes.ALL}


def _address(arr) -> int:
    """The address of arr's first element, from the array interface (CuPy's: the device pointer)."""
    interface = getattr(arr, "__cuda_array_interface__", None) or arr.__array_interface__
    return interface["data"][0]


def _tensor_type_name(t) -> str:
    cuda = "cuda." if t._device.type == "cuda" else ""
    return f"tinygrad_lab.{cuda}{t.dtype.scalar_name}Tensor"


def _parse_tensor_type(name: str) -> tuple:
    """('torch.cuda.LongTensor' ->) (int64, True): the dtype and whether the name says cuda."""
    parts = name.split(".")
    base = parts[-1][:-len("Tensor")]
    if base not in _TYPES_BY_NAME or parts[0] not in ("torch", "tinygrad_lab"):
        raise ValueError(f"invalid type: {name!r}")
    return _TYPES_BY_NAME[base], "cuda" in parts[1:-1]


def _inplace(name: str, fn):
    """The in-place method `name` (sin_, lerp_, ...) of out-of-place op fn, through ops/inplace.py."""
    def method(self, *args, **kwargs):
        return ip.inplace(self, name, lambda x, *a: fn(x, *a, **kwargs), *args)

    method.__name__ = name
    return method


def _inplace_ufunc(name: str, fn, ufunc: str):
    """The in-place method `name` (sqrt_, exp_, ...) of out-of-place op fn, which on floats is NumPy's
    (CuPy's) `ufunc`: through ops/inplace.py's unary_, which writes into the tensor without a copy."""
    def method(self):
        return ip.unary_(self, name, ufunc, fn)

    method.__name__ = name
    return method


def _r(fn):
    """The reflected form of a binary op: other <op> self."""
    return lambda self, other: fn(other, self)


class Tensor(TensorBase):
    """A multi-dimensional array on a device that records the ops applied to it
    (when it requires grad) so that `backward()` can compute gradients."""

    # ------------------------------------------------------------ attributes
    ndim = property(lambda self: self._data.ndim)
    T = property(mv.T)
    mT = property(mv.mT)
    itemsize = property(lambda self: self._data.itemsize)
    nbytes = property(lambda self: int(self._data.nbytes))
    is_cuda = property(lambda self: self._device.type == "cuda")

    def size(self, dim: int | None = None):
        return Size(self._data.shape) if dim is None else self._data.shape[shapes.normalize_dim(dim, self._data.ndim, "size")]

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def element_size(self) -> int:
        return self._data.itemsize

    # ---- the memory layout (what .view() and .contiguous() are about), counted in elements
    def stride(self, dim: int | None = None):
        """Elements to step over to move by one along each dim (of dim `dim`): (3, 1) for a (2, 3)
        tensor, (1, 3) for its transpose, 0 along a broadcast dim."""
        steps = tuple(s // self._data.itemsize for s in self._data.strides)
        return steps if dim is None else steps[shapes.normalize_dim(dim, self._data.ndim, "stride")]

    def storage_offset(self) -> int:
        """Where this tensor's first element sits in the memory it shares with its base, in elements."""
        base = self._base._data if self._base is not None else self._data
        return (self.data_ptr() - _address(base)) // self._data.itemsize

    def data_ptr(self) -> int:
        """The address of the first element (two views of one tensor compare by it)."""
        return _address(self._data)

    @property
    def data(self) -> "Tensor":
        """The same memory as a tensor outside the graph (prefer detach())."""
        return make(self._data, self._device)

    @data.setter
    def data(self, value: TensorBase) -> None:
        if not isinstance(value, TensorBase):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data, self._device = value._data, value._device

    @property
    def retains_grad(self) -> bool:
        return self._meta is not None and self._meta.retains_grad

    # ------------------------------------------------------------ conversion
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._device.backend.to_host(self._data).item()

    def tolist(self):
        return self._device.backend.to_host(self._data).tolist()

    def numpy(self, force: bool = False) -> np.ndarray:
        """The tensor's memory as a NumPy array (no copy; CPU tensors only)."""
        if self._device.type != "cpu":
            if not force:
                raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() to copy "
                                f"the tensor to host memory first.")
            return self._device.backend.to_host(self._data)
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars "
                             f"(got shape {list(self._data.shape)})")
        return self.item()

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous "
                               f"(shape {list(self._data.shape)}); use .any() or .all()")
        return bool(self.item())

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if not self._data.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        suffixes = []
        if self._device.type != "cpu":
            suffixes.append(f"device='{self._device}'")
        d = self.dtype
        if d not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_) or (
                self._data.size == 0 and d is not dtypes.get_default_dtype()):
            suffixes.append(f"dtype={d!r}")
        if self._grad_fn is not None:
            suffixes.append(f"grad_fn={self._grad_fn!r}")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        return format_tensor(self._device.backend.to_host(self._data), suffixes)

    # ------------------------------------------------------------ autograd
    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
        """Accumulate the gradient of this tensor into the leaves' `.grad`."""
        _api.backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self) -> "Tensor":
        """The same memory, cut from the graph (shares the version counter)."""
        return make_view(self._data, self._device, self)

    def detach_(self) -> "Tensor":
        self._grad_fn, self._requires_grad = None, False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        """Keep `.grad` for this non-leaf tensor after backward."""
        if not self._requires_grad and self._grad_fn is None:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self.retains_grad:
            return
        meta(self).retains_grad = True
        self._grad_fn.retain_output(self._output_nr, self)

    def register_hook(self, hook) -> RemovableHandle:
        """Call hook(grad) when this tensor's gradient is computed; a returned tensor replaces it."""
        if not self._requires_grad and self._grad_fn is None:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn.register_prehook(self._output_nr, hook)
        return RemovableHandle(meta(self).hooks, hook)

    # ------------------------------------------------------------ dtype and device
    def to(self, *args, **kwargs) -> "Tensor":
        """to(dtype), to(device), to(device, dtype), to(other_tensor); copy=, non_blocking= accepted."""
        device, dtype, copy = parse_to(*args, **kwargs)
        out = self
        if device is not None:
            out = transfer.to_device(out, device)
        if dtype is not None:
            out = ew.cast(out, dtype.np)
        return out.clone() if copy and out is self else out

    def float(self): return self.to(dtypes.float32)  # noqa: E704
    def double(self): return self.to(dtypes.float64)  # noqa: E704
    def half(self): return self.to(dtypes.float16)  # noqa: E704
    def long(self): return self.to(dtypes.int64)  # noqa: E704
    def int(self): return self.to(dtypes.int32)  # noqa: E704
    def bool(self): return self.to(dtypes.bool_)  # noqa: E704
    def type_as(self, other): return self.to(other.dtype)  # noqa: E704
    def cpu(self): return self.to("cpu")  # noqa: E704
    def cuda(self, device=None): return self.to("cuda" if device is None else device)  # noqa: E704

    def clone(self) -> "Tensor":
        return ew.Clone.apply(self)

    def __deepcopy__(self, memo: dict) -> "Tensor":
        """copy.deepcopy: a new leaf (of the same class, e.g. Parameter) with a copy of the data,
        requires_grad, a deep copy of .grad, and the attributes a user set; graph bookkeeping
        (version counter, hooks, view base) starts afresh. Only leaves, as in PyTorch: a computed
        tensor's copy could not keep its history. Deviation: tensors that share memory (views)
        are copied independently, where PyTorch's copies share memory again."""
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment. Copy t.detach() to get the values of a computed tensor.")
        if id(self) in memo:
            return memo[id(self)]
        new = object.__new__(type(self))
        new._data, new._device = self._data.copy(), self._device
        memo[id(self)] = new
        new._requires_grad = self._requires_grad
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        for key, value in self.__dict__.items():
            if key not in _ENGINE_FIELDS:
                new.__dict__[key] = copy.deepcopy(value, memo)
        return new

    # ------------------------------------------------------------ sharing between processes
    def share_memory_(self) -> "Tensor":
        """Move this tensor's data into memory other processes can map (a no-op when it is already
        there, and on CUDA). Deviation: PyTorch moves the whole storage, with every view of it; here
        only this tensor's array moves, and a view stops sharing memory with its base."""
        if self._device.type == "cuda" or shared_memory.is_shared(self._data):
            return self
        if self._device.type != "cpu":
            raise RuntimeError(f"share_memory_(): tensors on {self._device} cannot be shared between processes "
                               f"(cpu and cuda tensors can)")
        self._data = shared_memory.copy_to_shared(self._data)
        if self._base is not None:
            self._base, self._vc = None, [self._version]
        return self

    def is_shared(self) -> bool:
        """Whether this tensor's data lies in memory other processes can map (CUDA tensors always do)."""
        return self._device.type == "cuda" or shared_memory.is_shared(self._data)

    # ------------------------------------------------------------ arithmetic
    # number + t and number * t are t + number and t * number (as in PyTorch): the same values, and the
    # path of a tensor and a number, without promotion's general case (lr * p.grad: 4.9 -> 2.3 us)
    __add__ = __radd__ = add = ew.add
    __sub__ = sub = ew.sub
    __rsub__ = _r(ew.sub)
    __mul__ = __rmul__ = mul = ew.mul
    __truediv__ = div = divide = ew.div
    __rtruediv__ = _r(ew.div)
    __floordiv__ = lambda self, other: ew.div(self, other, rounding_mode="floor")  # noqa: E731
    __rfloordiv__ = lambda self, other: ew.div(other, self, rounding_mode="floor")  # noqa: E731
    __mod__ = remainder = ew.remainder
    __rmod__ = _r(ew.remainder)
    __pow__ = pow = ew.pow
    __rpow__ = _r(ew.pow)
    __matmul__ = matmul = la.matmul
    __rmatmul__ = _r(la.matmul)
    __neg__ = neg = negative = ew.neg
    __pos__ = lambda self: self  # noqa: E731
    __abs__ = abs = ew.abs
    __eq__ = eq = ew.eq
    isclose, allclose, equal = ew.isclose, ew.allclose, ew.equal
    __ne__ = ne = ew.ne
    __lt__ = lt = ew.lt
    __le__ = le = ew.le
    __gt__ = gt = ew.gt
    __ge__ = ge = ew.ge
    logical_and = ew.logical_and
    logical_or = ew.logical_or
    logical_xor = ew.logical_xor
    logical_not = ew.logical_not
    __and__ = bitwise_and = ew.bitwise_and  # logical on bool tensors
    __or__ = bitwise_or = ew.bitwise_or
    __xor__ = bitwise_xor = ew.bitwise_xor
    __invert__ = bitwise_not = ew.bitwise_not
    __rand__ = _r(ew.bitwise_and)
    __ror__ = _r(ew.bitwise_or)
    __rxor__ = _r(ew.bitwise_xor)
    __lshift__, __rshift__ = pw.bitwise_left_shift, pw.bitwise_right_shift
    __rlshift__, __rrshift__ = _r(pw.bitwise_left_shift), _r(pw.bitwise_right_shift)
    maximum = ew.maximum
    minimum = ew.minimum

    exp = ew.exp
    log = ew.log
    log1p = ew.log1p
    sqrt = ew.sqrt
    rsqrt = ew.rsqrt
    sin = ew.sin
    cos = ew.cos
    tanh = ew.tanh
    sigmoid = ew.sigmoid
    relu = ew.relu
    sign = ew.sign
    floor = ew.floor
    ceil = ew.ceil
    trunc = ew.trunc
    round = ew.round
    clamp = clip = ew.clamp

    def softmax(self, dim: int, dtype=None): return act.softmax(self, dim, dtype)  # noqa: E704
    def log_softmax(self, dim: int, dtype=None): return act.log_softmax(self, dim, dtype)  # noqa: E704
    erf = act.erf

    def where(self, condition, other): return ew.where(condition, self, other)  # noqa: E704
    masked_fill = sct.masked_fill

    # ------------------------------------------------------------ reductions
    sum = rd.sum
    mean = rd.mean
    prod = rd.prod
    max = rd.max
    min = rd.min
    amax = rd.amax
    amin = rd.amin
    argmax = rd.argmax
    argmin = rd.argmin
    var = rd.var
    std = rd.std
    logsumexp = rd.logsumexp
    norm = fz.norm  # torch.norm: rd.norm, and p='nuc'
    all = rd.all
    any = rd.any

    # ------------------------------------------------------------ movement
    reshape = mv.reshape
    view = mv.view
    flatten = mv.flatten
    squeeze = mv.squeeze
    unsqueeze = mv.unsqueeze
    transpose = swapaxes = mv.transpose
    t = mv.t
    permute = mv.permute
    expand = mv.expand
    broadcast_to = mv.broadcast_to
    contiguous = mv.contiguous

    def split(self, split_size, dim: int = 0): return mv.split(self, split_size, dim)  # noqa: E704
    chunk = mv.chunk
    unbind = mv.unbind
    flip = mv.flip
    gather = ix.gather

    def view_as(self, other): return mv.view(self, other._data.shape)  # noqa: E704
    def reshape_as(self, other): return mv.reshape(self, other._data.shape)  # noqa: E704
    def expand_as(self, other): return mv.expand(self, other._data.shape)  # noqa: E704
    def is_contiguous(self) -> bool: return bool(self._data.flags.c_contiguous)  # noqa: E704

    __getitem__ = ix.getitem

    def __setitem__(self, key, value) -> None:
        ip.inplace(self, "__setitem__", ix.index_put, key, value)

    # ------------------------------------------------------------ in place
    def add_(self, other, alpha=1):
        return ip.arithmetic_(self, "add_", "add", ew.add, other, alpha)

    def sub_(self, other, alpha=1):
        return ip.arithmetic_(self, "sub_", "subtract", ew.sub, other, alpha)

    def mul_(self, other):
        return ip.arithmetic_(self, "mul_", "multiply", ew.mul, other)

    def div_(self, other):
        return ip.arithmetic_(self, "div_", "divide", ew.div, other)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_
    subtract_, multiply_, divide_, true_divide_ = sub_, mul_, div_, div_

    def __ifloordiv__(self, other): return ip.inplace(self, "floor_divide_", Tensor.__floordiv__, other)  # noqa: E704
    def __imod__(self, other): return ip.inplace(self, "remainder_", ew.remainder, other)  # noqa: E704
    def __iand__(self, other): return ip.inplace(self, "bitwise_and_", ew.bitwise_and, other)  # noqa: E704
    def __ior__(self, other): return ip.inplace(self, "bitwise_or_", ew.bitwise_or, other)  # noqa: E704
    def __ixor__(self, other): return ip.inplace(self, "bitwise_xor_", ew.bitwise_xor, other)  # noqa: E704

    def pow_(self, exponent): return ip.inplace(self, "pow_", ew.pow, exponent)  # noqa: E704
    __ipow__ = pow_
    def clamp_(self, min=None, max=None): return ip.inplace(self, "clamp_", ew.clamp, min, max)  # noqa: E704
    def relu_(self): return ip.inplace(self, "relu_", ew.relu)  # noqa: E704
    def masked_fill_(self, mask, value): return ip.inplace(self, "masked_fill_", sct.masked_fill, mask, value)  # noqa: E704
    def fill_(self, value): return ip.inplace(self, "fill_", transfer.fill, value)  # noqa: E704
    def zero_(self): return ip.inplace(self, "zero_", transfer.fill, 0)  # noqa: E704
    def copy_(self, src): return ip.inplace(self, "copy_", transfer.copy_from, src)  # noqa: E704
    normal_ = creation.normal_
    uniform_ = creation.uniform_
    bernoulli, multinomial = creation.bernoulli, creation.multinomial
    # the other samplers, NaN-ignoring max/min, the integer and bit ops, fill_diagonal_, byte/char/short
    exponential_, geometric_, cauchy_, log_normal_, random_ = (creation.exponential_, creation.geometric_,
                                                               creation.cauchy_, creation.log_normal_, creation.random_)
    fmax, fmin, heaviside, nextafter, gcd, lcm = pw.fmax, pw.fmin, pw.heaviside, pw.nextafter, pw.gcd, pw.lcm
    bitwise_left_shift, bitwise_right_shift = pw.bitwise_left_shift, pw.bitwise_right_shift
    (heaviside_, nextafter_, gcd_, lcm_, logical_not_, logical_and_, logical_or_, logical_xor_, bitwise_not_,
     bitwise_and_, bitwise_or_, bitwise_xor_, bitwise_left_shift_, bitwise_right_shift_, fill_diagonal_) = (
        _inplace(f"{n}_", f) for n, f in (
            ("heaviside", pw.heaviside), ("nextafter", pw.nextafter), ("gcd", pw.gcd), ("lcm", pw.lcm),
            ("logical_not", ew.logical_not), ("logical_and", ew.logical_and), ("logical_or", ew.logical_or),
            ("logical_xor", ew.logical_xor), ("bitwise_not", ew.bitwise_not), ("bitwise_and", ew.bitwise_and),
            ("bitwise_or", ew.bitwise_or), ("bitwise_xor", ew.bitwise_xor),
            ("bitwise_left_shift", pw.bitwise_left_shift), ("bitwise_right_shift", pw.bitwise_right_shift),
            ("fill_diagonal", pw.fill_diagonal)))
    __ilshift__, __irshift__ = bitwise_left_shift_, bitwise_right_shift_

    def byte(self): return self.to(dtypes.uint8)  # noqa: E704

    def char(self): return self.to(dtypes.int8)  # noqa: E704
    def short(self): return self.to(dtypes.int16)  # noqa: E704

    def bernoulli_(self, p=0.5, *, generator=None):
        """Fill in place with 0 or 1, 1 with probability p (a number, or probabilities that broadcast)."""
        probs = p._data if isinstance(p, TensorBase) else p
        return ip.inplace(self, "bernoulli_", lambda t: creation.bernoulli(t, probs, generator=generator))

    # ------------------------------------------------------------ the ops of a first course (ops/pointwise, special,
    # scan, sorting, scatter, diagonal, decompositions, linalg's products), and the names real programs use
    tan, sinh, cosh = pw.tan, pw.sinh, pw.cosh
    asin = arcsin = pw.asin
    acos = arccos = pw.acos
    atan = arctan = pw.atan
    asinh = arcsinh = pw.asinh
    acosh = arccosh = pw.acosh
    atanh = arctanh = pw.atanh
    log2, log10, expm1, exp2, frac = pw.log2, pw.log10, pw.expm1, pw.exp2, pw.frac
    deg2rad, rad2deg, square, reciprocal = pw.deg2rad, pw.rad2deg, pw.square, pw.reciprocal
    atan2 = arctan2 = pw.atan2
    hypot, copysign, fmod, logaddexp, logaddexp2, float_power = (pw.hypot, pw.copysign, pw.fmod, pw.logaddexp,
                                                                 pw.logaddexp2, pw.float_power)
    isnan, isinf, isposinf, isneginf, isfinite, signbit = (pw.isnan, pw.isinf, pw.isposinf, pw.isneginf,
                                                           pw.isfinite, pw.signbit)
    nan_to_num, clamp_min, clamp_max, lerp, addcmul, addcdiv = (pw.nan_to_num, pw.clamp_min, pw.clamp_max, pw.lerp,
                                                                pw.addcmul, pw.addcdiv)
    erfc, erfinv, lgamma, digamma, logit, xlogy, sinc = sp.erfc, sp.erfinv, sp.lgamma, sp.digamma, sp.logit, sp.xlogy, sp.sinc
    sgn, fix = ew.sign, ew.trunc
    positive = __pos__

    def polygamma(self, n: int): return sp.polygamma(n, self)  # noqa: E704

    cumsum, cumprod, logcumsumexp, cummax, cummin = scan.cumsum, scan.cumprod, scan.logcumsumexp, scan.cummax, scan.cummin
    sort, argsort, msort, topk, kthvalue = so.sort, so.argsort, so.msort, so.topk, so.kthvalue
    median, nanmedian, mode, unique, unique_consecutive = so.median, so.nanmedian, so.mode, so.unique, so.unique_consecutive
    bincount, histc = so.bincount, so.histc
    aminmax, corrcoef, cov, diff, histogram = st.aminmax, st.corrcoef, st.cov, st.diff, st.histogram
    nanmean, nansum, quantile, nanquantile = st.nanmean, st.nansum, st.quantile, st.nanquantile
    tril, triu, diag, diagonal, diag_embed, diagflat, trace = dg.tril, dg.triu, dg.diag, dg.diagonal, dg.diag_embed, \
        dg.diagflat, dg.trace
    roll, narrow, repeat, tile, movedim, unflatten, ravel, select = mv.roll, mv.narrow, mv.repeat, mv.tile, mv.movedim, \
        mv.unflatten, mv.ravel, mv.select
    moveaxis = movedim
    swapdims = transpose
    narrow_copy = mv.narrow_copy
    index_select, index_add, index_copy, index_fill = sct.index_select, sct.index_add, sct.index_copy, sct.index_fill
    index_put = sct.index_put
    scatter, scatter_add, scatter_reduce = sct.scatter, sct.scatter_add, sct.scatter_reduce
    masked_select, masked_scatter, take, take_along_dim = sct.masked_select, sct.masked_scatter, sct.take, \
        sct.take_along_dim
    nonzero, argwhere, count_nonzero = sct.nonzero, sct.argwhere, sct.count_nonzero
    tensor_split, hsplit, vsplit, dsplit = ra.tensor_split, ra.hsplit, ra.vsplit, ra.dsplit
    rot90, fliplr, flipud, kron = ra.rot90, ra.fliplr, ra.flipud, ra.kron
    unfold, sum_to_size = ra.unfold, ra.sum_to_size
    mm, bmm, mv, dot, vdot, inner, outer, ger = la.mm, la.bmm, la.matvec, la.dot, la.vdot, la.inner, la.outer, la.ger
    addmm, addmv, addbmm, baddbmm, addr = la.addmm, la.addmv, la.addbmm, la.baddbmm, la.addr
    det, logdet, slogdet, inverse, pinverse, matrix_power = dc.det, dc.logdet, dc.slogdet, dc.inv, dc.pinv, \
        dc.matrix_power
    svd, qr, dist, matrix_exp, cholesky_solve, cholesky_inverse = fz.svd, fz.qr, fz.dist, fz.matrix_exp, \
        fz.cholesky_solve, fz.cholesky_inverse
    mH = mT  # the conjugate transpose: for real tensors, the transpose

    def adjoint(self): return self.mT  # noqa: E704  (conjugate transpose of the last two dims)

    @property
    def H(self):
        """A matrix's conjugate transpose (for real tensors, the transpose), as Tensor.H: 2-D only."""
        if self._data.ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self._data.ndim}-D tensor. "
                               f"For batches of matrices, use .mH")
        return self.mT

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):  # noqa: E704
        return sct.repeat_interleave(self, repeats, dim, output_size=output_size)

    def type(self, dtype=None, non_blocking: bool = False):
        """The type's name ('tinygrad_lab.FloatTensor') without an argument; else this tensor converted to
        `dtype` (a dtype or a name such as 'torch.FloatTensor' or 'torch.cuda.LongTensor'), as Tensor.type."""
        if dtype is None:
            return _tensor_type_name(self)
        if isinstance(dtype, str) and dtype.endswith("Tensor"):
            dt, cuda = _parse_tensor_type(dtype)
            return self.to("cuda", dt) if cuda else self.to(dt)
        return self.to(dtype)

    is_cpu = property(lambda self: self._device.type == "cpu")
    is_xpu = is_mps = is_meta = is_sparse = is_quantized = is_mkldnn = is_nested = property(lambda self: False)

    def __format__(self, spec: str) -> str:
        """format(t, '+.2f') and f'{t:.3f}' format a 0-d tensor's number, as PyTorch does. Where we differ:
        without a spec (f'{t}') it is str(t), 'tensor(1.)', where PyTorch gives the bare number."""
        if self._data.ndim == 0 and spec:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    # in place
    sin_, cos_, tan_, sqrt_, log_, log1p_, tanh_, exp_, abs_, neg_, floor_, ceil_, trunc_, sign_, square_ = (
        _inplace_ufunc(f"{n}_", f, {"neg": "negative"}.get(n, n)) for n, f in (  # the ufunc of the op's name
            ("sin", ew.sin), ("cos", ew.cos), ("tan", pw.tan), ("sqrt", ew.sqrt), ("log", ew.log), ("log1p", ew.log1p),
            ("tanh", ew.tanh), ("exp", ew.exp), ("abs", ew.abs), ("neg", ew.neg), ("floor", ew.floor),
            ("ceil", ew.ceil), ("trunc", ew.trunc), ("sign", ew.sign), ("square", pw.square)))
    sigmoid_, round_ = _inplace("sigmoid_", ew.sigmoid), _inplace("round_", ew.round)  # round_(decimals=...)
    clamp_min_, clamp_max_, lerp_, nan_to_num_, fmod_, remainder_ = (_inplace(f"{n}_", f) for n, f in (
        ("clamp_min", pw.clamp_min), ("clamp_max", pw.clamp_max), ("lerp", pw.lerp), ("nan_to_num", pw.nan_to_num),
        ("fmod", pw.fmod), ("remainder", ew.remainder)))

    def addcmul_(self, tensor1, tensor2, *, value=1):
        return ip.addc_(self, "addcmul_", pw.addcmul, ew.mul, tensor1, tensor2, value)

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        return ip.addc_(self, "addcdiv_", pw.addcdiv, pw.quotient, tensor1, tensor2, value)

    tril_, triu_, index_add_, index_copy_, index_fill_, scatter_, scatter_add_, scatter_reduce_ = (
        _inplace(f"{n}_", f) for n, f in (
            ("tril", dg.tril), ("triu", dg.triu), ("index_add", sct.index_add), ("index_copy", sct.index_copy),
            ("index_fill", sct.index_fill), ("scatter", sct.scatter), ("scatter_add", sct.scatter_add),
            ("scatter_reduce", sct.scatter_reduce)))
    masked_scatter_, addmm_, baddbmm_, index_put_ = (_inplace(f"{n}_", f) for n, f in (
        ("masked_scatter", sct.masked_scatter), ("addmm", la.addmm), ("baddbmm", la.baddbmm),
        ("index_put", sct.index_put)))

    # ---- more of PyTorch's names: aliases, frexp/ldexp, Bessel and incomplete gamma functions, the scatters of one
    # slice, index_reduce, renorm, the deprecated linalg names, and the complex-number API answered for real tensors
    absolute, absolute_ = ew.abs, abs_
    greater, greater_equal, less, less_equal, not_equal = ew.gt, ew.ge, ew.lt, ew.le, ew.ne
    frexp, ldexp, i0, igamma, igammac, renorm = pw.frexp, pw.ldexp, sp.i0, sp.igamma, sp.igammac, dc.renorm
    select_scatter, slice_scatter, diagonal_scatter = sct.select_scatter, sct.slice_scatter, dg.diagonal_scatter
    index_reduce = sct.index_reduce
    cholesky, lu, lu_solve, triangular_solve = fz.cholesky, fz.legacy_lu, fz.legacy_lu_solve, fz.triangular_solve
    (eq_, ne_, lt_, le_, gt_, ge_, greater_, greater_equal_, less_, less_equal_, not_equal_, ldexp_, i0_, igamma_,
     igammac_, renorm_, index_reduce_) = (_inplace(f"{n}_", f) for n, f in (
        ("eq", ew.eq), ("ne", ew.ne), ("lt", ew.lt), ("le", ew.le), ("gt", ew.gt), ("ge", ew.ge), ("greater", ew.gt),
        ("greater_equal", ew.ge), ("less", ew.lt), ("less_equal", ew.le), ("not_equal", ew.ne), ("ldexp", pw.ldexp),
        ("i0", sp.i0), ("igamma", sp.igamma), ("igammac", sp.igammac), ("renorm", dc.renorm),
        ("index_reduce", sct.index_reduce)))
    multiply, subtract, true_divide, cross, mvlgamma = ew.mul, ew.sub, ew.div, dc.cross, sp.mvlgamma
    floor_divide, floor_divide_, clip_, fix_, negative_, sgn_ = __floordiv__, __ifloordiv__, clamp_, trunc_, neg_, sign_
    ndimension = dim
    output_nr = property(lambda self: self._output_nr)
    is_signed = lambda self: self._data.dtype.kind in "if"  # noqa: E731
    is_same_size = lambda self, other: self._data.shape == other._data.shape  # noqa: E731
    get_device = lambda self: self._device.index if self._device.type != "cpu" else -1  # noqa: E731
    is_inference = is_pinned = lambda self: False  # noqa: E731 (no inference mode tensors, no pinned host memory)
    pin_memory = lambda self, device=None: self  # noqa: E731 (CuPy copies from any host memory)
    split_with_sizes = lambda self, split_sizes, dim=0: mv.split(self, list(split_sizes), dim)  # noqa: E731
    is_nonzero, isreal, is_complex, is_conj, is_neg = pw.is_nonzero, pw.isreal, pw.is_complex, pw.is_conj, pw.is_neg
    conj, resolve_conj, resolve_neg = pw.conj, pw.resolve_conj, pw.resolve_neg
    real, imag = property(pw.real), property(pw.imag)  # attributes in PyTorch, as here

    # ------------------------------------------------------------ new tensors like this one
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        return creation.tensor(data, dtype or self.dtype, device or self._device, requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return creation.zeros(*size, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return creation.ones(*size, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        return creation.full(size, fill_value, dtype=dtype or self.dtype, device=device or self._device,
                             requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return creation.empty(*size, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)


# the in-place form of more ops, each computed out of place and written back by ops/inplace.py, which
# refuses what PyTorch refuses (an integer tensor's sqrt_, an in-place op on a leaf that requires grad)
for _name in ("acos", "acosh", "arccos", "arccosh", "asin", "asinh", "arcsin", "arcsinh", "atan", "atanh", "arctan",
              "arctanh", "cosh", "sinh", "erf", "erfc", "erfinv", "exp2", "expm1", "frac", "digamma", "lgamma", "log10",
              "log2", "logit", "rsqrt", "sinc", "reciprocal", "deg2rad", "rad2deg", "xlogy", "atan2", "arctan2",
              "copysign", "hypot", "float_power", "polygamma", "mvlgamma", "cumsum", "cumprod"):
    setattr(Tensor, f"{_name}_", _inplace(f"{_name}_", getattr(Tensor, _name)))

set_tensor_class(Tensor)
