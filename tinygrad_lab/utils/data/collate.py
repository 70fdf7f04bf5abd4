"""Turning a list of samples into a batch, with PyTorch's `default_collate` rules:

- tensors are stacked along a new first dimension;
- NumPy arrays become tensors (their dtype kept), then are stacked;
- NumPy scalars become a 1-d tensor of their dtype;
- Python floats -> float64, ints -> int64, bools -> bool (as ``torch.tensor(batch)``
  for ints, ``dtype=float64`` for floats: not the default float32);
- strings are returned as the list;
- dicts collate per key, namedtuples per field, and other sequences per position;
  a batch of *tuples* gives a *list* (PyTorch keeps that for backward compatibility).
"""
from __future__ import annotations

import collections.abc

import numpy as np

from ... import dtypes
from ...autograd.tensor_base import TensorBase
from ...creation import as_tensor, from_numpy, tensor
from ...ops.movement import stack

_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _numpy_ok(arr: np.ndarray) -> bool:
    return arr.dtype.kind not in "SaUO"  # strings and objects have no tensor form


def default_collate(batch):
    """Stack a list of samples into a batch (see the module docstring for the rules)."""
    if not isinstance(batch, collections.abc.Sequence) or isinstance(batch, (str, bytes)):
        raise TypeError(f"default_collate expects a list of samples, got {type(batch).__name__}")
    if len(batch) == 0:
        raise ValueError("default_collate: cannot collate an empty batch")
    elem = batch[0]
    if isinstance(elem, TensorBase):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if not _numpy_ok(elem):
            raise TypeError(_ERR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number)):
        return from_numpy(np.array(batch))  # keeps the NumPy dtype, as torch.as_tensor
    if isinstance(elem, float):
        return tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):  # bools too: torch.tensor([True, False]) is a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        out = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(out)
        except TypeError:  # a mapping type that cannot be built from a dict
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [default_collate(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return transposed
        try:
            return type(elem)(transposed)
        except TypeError:
            return transposed
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data):
    """Without batching (`batch_size=None`): NumPy arrays and scalars become tensors
    (dtype kept), containers are walked, everything else passes through unchanged."""
    if isinstance(data, TensorBase):
        return data
    if isinstance(data, np.ndarray):
        return as_tensor(data) if _numpy_ok(data) else data
    if isinstance(data, (np.bool_, np.number)):
        return from_numpy(np.asarray(data))
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        out = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(out)
        except TypeError:
            return out
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
