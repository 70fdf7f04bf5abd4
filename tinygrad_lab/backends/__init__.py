"""Devices and the registry of backends.

`device("cpu")`, `device("cuda:1")`: a Device names a backend and an index.
Devices are interned, so `a.device is b.device` is the fast same-device test.
Adding a backend is `register_backend(...)`: no op changes. A backend that
cannot run here (CUDA without CuPy or a GPU) stays registered: naming its device
works, as in PyTorch, and putting a tensor there raises a RuntimeError that says why.
"""
from __future__ import annotations

from .base import Backend
from .cpu import CPUBackend
from .cuda import CUDABackend

_BACKENDS: dict[str, Backend] = {}
_DEVICES: dict[tuple[str, int | None], "Device"] = {}


class Device:
    """A place where tensors live: a backend type plus an index (PyTorch's torch.device)."""

    # _null_ctx: the ctx autograd hands to every no-grad forward on this device (made on first use)
    __slots__ = ("type", "index", "backend", "_str", "_checked", "_null_ctx")

    def __new__(cls, spec, index: int | None = None):
        if isinstance(spec, Device):
            return spec
        if not isinstance(spec, str):
            raise TypeError(f"device must be a string like 'cpu' or 'cuda:0', got {spec!r}")
        kind, _, idx = spec.partition(":")
        if idx:
            if index is not None:
                raise RuntimeError(f"device {spec!r} already has an index; got index={index} too")
            if not idx.isdigit():
                raise RuntimeError(f"invalid device string {spec!r}: the index after ':' must be a number")
            index = int(idx)
        key = (kind, index)
        dev = _DEVICES.get(key)
        if dev is not None:
            return dev
        backend = _BACKENDS.get(kind)
        if backend is None:
            known = ", ".join(sorted(_BACKENDS))
            raise RuntimeError(f"unknown device type {kind!r} in {spec!r}; known device types: {known}")
        dev = object.__new__(cls)
        dev.type, dev.index, dev.backend, dev._checked, dev._null_ctx = kind, index, backend, False, None
        dev._str = kind if index is None else f"{kind}:{index}"
        _DEVICES[key] = dev
        return dev

    def check(self) -> "Device":
        """This device, once its backend says it can be used here (a RuntimeError saying why not).
        As in PyTorch, naming a device never fails; putting a tensor on it does."""
        if not self._checked:
            self.backend.check(self.index)
            self._checked = True
        return self

    def __repr__(self) -> str:
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self._str

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except RuntimeError:
                return False
        if not isinstance(other, Device):
            return NotImplemented
        return self.type == other.type and (self.index or 0) == (other.index or 0)

    def __hash__(self) -> int:
        return hash((self.type, self.index or 0))

    def __reduce__(self):
        return (Device, (self._str,))


def register_backend(backend: Backend) -> None:
    """Make `backend.name` usable as a device type."""
    _BACKENDS[backend.name] = backend


def backend(name: str) -> Backend:
    """The registered backend of device type `name` (KeyError if none)."""
    return _BACKENDS[name]


register_backend(CPUBackend())
register_backend(CUDABackend())  # always known; whether CUDA is usable is found out when it is first named
CPU = Device("cpu")
