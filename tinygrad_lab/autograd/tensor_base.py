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


class TensorBase:
    # Per-tensor state. Defaults live on the class, so creating a tensor (the
    # hottest path of the engine) stores only its array and device.
    _requires_grad = False
    _grad_fn = None      # the Node that produced this tensor (None for leaves)
    _output_nr = 0       # which output of _grad_fn this is
    _grad = None
    _vc = None           # version counter [n], shared by views; created on first need
    _base = None         # the tensor this one is a view of
    _meta = None         # _TensorMeta: hooks, retain_grad
    _accum = None        # this leaf's AccumulateGrad node (which refers back weakly)

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
        return self._grad

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


_cls = [TensorBase]
_new = object.__new__


def set_tensor_class(cls: type) -> None:
    """Register the user-facing Tensor class that ops create."""
    _cls[0] = cls


# NumPy returns scalars, not 0-d arrays, from ufuncs and full reductions on 0-d data; a scalar is
# immutable, so in-place ops and gradient accumulation need it as a 0-d array
_NP_SCALARS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, np.generic))


def make(data, device):
    """Wrap a backend array into a Tensor (no copy); callers set graph fields after."""
    t = _new(_cls[0])
    if data.__class__ in _NP_SCALARS:
        data = np.array(data)
    t._data = data
    t._device = device
    return t


def make_view(data, device, base: TensorBase):
    """A tensor sharing memory (and so the version counter) with `base`."""
    t = _new(_cls[0])
    if data.__class__ in _NP_SCALARS:
        data = np.array(data)
    t._data = data
    t._device = device
    t._vc = version_counter(base)
    t._base = base._base if base._base is not None else base
    return t
