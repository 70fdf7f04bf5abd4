"""The tensor record the engine works on: data plus autograd bookkeeping.

`TensorBase` holds what autograd needs (the array, its device, `requires_grad`,
`grad`, `grad_fn`, the version counter). The user API (methods, dunders) lives in
`tinygrad_lab/tensor.py`, which subclasses it and registers itself with
`set_tensor_class`, so that ops create user-facing `Tensor`s without importing
the façade.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .._warn import warn
from ..backends import Device

# NumPy returns scalars, not 0-d arrays, from ufuncs and full reductions on 0-d data; a scalar is
# immutable, so in-place ops and gradient accumulation need it as a 0-d array
_NP_SCALARS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, np.generic))


class TensorBase:
    """A tensor's record: its array and device, and what autograd keeps about it."""

    def __init__(self, data, device=None, requires_grad: bool = False, grad_fn=None, output_nr: int = 0):
        if device.__class__ is not Device:  # Tensor(...) is the engine's: users call the factories
            raise TypeError("create tensors with tinygrad_lab.tensor(data), zeros(...), from_numpy(...) and friends")
        if data.__class__ in _NP_SCALARS:  # NumPy gives scalars for 0-d results: a tensor holds a 0-d array
            data = np.array(data)
        self._data = data                    # the backend array (NumPy or CuPy)
        self._device = device                # a tinygrad_lab.device
        self._requires_grad = requires_grad
        self._grad_fn = grad_fn              # the Node that produced this tensor (None for leaves)
        self._output_nr = output_nr          # which output of _grad_fn this is
        self._grad = None                    # the gradient backward accumulated (leaves, retain_grad)
        self._vc = None                      # version counter [n], shared by views; created on first need
        self._base = None                    # the tensor this one is a view of
        self._meta = None                    # _TensorMeta: hooks, retain_grad (rarely used)
        self._accum = None                   # this leaf's AccumulateGrad node (which refers back weakly)

    # PyTorch semantics for NumPy interop: ndarray <op> Tensor defers to Tensor
    __array_ufunc__ = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        tensor_types.add(cls)  # Tensor, nn.Parameter: the ops' fast paths test membership here

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.from_numpy_dtype(self._data.dtype)

    @property
    def shape(self):
        return Size(self._data.shape)

    @property
    def device(self):
        return self._device

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        flag = bool(flag)
        if self._grad_fn is not None:
            if not flag:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to "
                                   "use a computed variable in a subgraph that doesn't require differentiation "
                                   "use var_no_grad = var.detach().")
            return
        if flag and self._data.dtype.kind != "f":
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients, got {self.dtype}")
        self._requires_grad = flag

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def _version(self) -> int:
        return self._vc[0] if self._vc is not None else 0

    @property
    def grad(self):
        g = self._grad
        if g is None and self._grad_fn is not None and not (self._meta is not None and self._meta.retains_grad):
            warn(_NON_LEAF_GRAD)  # PyTorch's warning: backward leaves it None
        return g

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(f"assigned grad must be a Tensor or None, got {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"assigned grad has data of shape {tuple(value._data.shape)} but the tensor "
                                   f"has shape {tuple(self._data.shape)}")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(f"assigned grad has dtype {value.dtype} but the tensor has dtype {self.dtype}")
            if value._device is not self._device:
                raise RuntimeError(f"assigned grad is on {value._device} but the tensor is on {self._device}")
        self._grad = value

    def _bump_version(self) -> None:
        vc = self._vc  # version_counter(self)[0] += 1, without the call: every in-place op comes here
        if vc is None:
            self._vc = [1]
        else:
            vc[0] += 1


tensor_types = {TensorBase}

_NON_LEAF_GRAD = (
    "reading .grad of a tensor that is not a leaf: backward() fills .grad only on leaves (tensors you made, "
    "not results of ops), so this stays None. Call .retain_grad() on it before backward() to keep its "
    "gradient, or read .grad of the leaf you meant.")


class Size(tuple):
    """A tensor's shape: a tuple that prints like PyTorch's `torch.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class _TensorMeta:
    """Rarely used per-tensor state, allocated on first use: leaf hooks, retain_grad."""

    __slots__ = ("hooks", "retains_grad")

    def __init__(self):
        self.hooks = {}
        self.retains_grad = False


def meta(t: TensorBase) -> _TensorMeta:
    m = t._meta
    if m is None:
        m = t._meta = _TensorMeta()
    return m


def version_counter(t: TensorBase) -> list:
    """t's version counter, created on first need (in-place op, save for backward, view)."""
    vc = t._vc
    if vc is None:
        vc = t._vc = [0]
    return vc


Tensor = TensorBase  # the class tensors are made of: tinygrad_lab.Tensor, once tensor.py has registered it


def set_tensor_class(cls: type) -> None:
    """Register the user-facing Tensor class (tensor.py's), which ops create without importing it."""
    global Tensor
    Tensor = cls


def make(data, device):
    """Tensor(data, device): a tensor holding backend array `data` (no copy), outside the graph.

    A fast path, as the engine makes a tensor for every op's output and every gradient: only the
    array and the device are stored; every other field reads the value `TensorBase.__init__`
    gives it from the class, where the loop below puts it (a field is stored in the tensor once it
    differs). Two stores instead of ten: 17 bytecodes instead of 41 a tensor, a third less time
    (0.20 instead of 0.30 us with the call, on a loaded machine). tests/autograd/test_function.py
    checks that every field reads as __init__ sets it."""
    if data.__class__ in _NP_SCALARS:  # NumPy gives scalars for 0-d results: a tensor holds a 0-d array
        data = np.array(data)
    t = _new(Tensor)
    t._data = data
    t._device = device
    return t


_new = object.__new__
for _field, _value in vars(TensorBase(np.zeros(0), Device("cpu"))).items():  # make's defaults, from __init__
    if _field not in ("_data", "_device"):
        setattr(TensorBase, _field, _value)


def make_view(data, device, base: TensorBase):
    """A tensor sharing memory (and so the version counter) with `base`."""
    t = make(data, device)
    t._vc = version_counter(base)
    t._base = base._base if base._base is not None else base
    return t
