"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Iterable, Iterator, Mapping

from ...autograd.tensor_base import TensorBase
from ..parameter import Parameter
from .module import Module


def _index(i: int, n: int, what: str) -> int:
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for {what} of length {n}")
    return i % n


class Sequential(Module):
    """Modules called in order, each on the previous one's output:
    Sequential(a, b, c) or Sequential(OrderedDict(name=module, ...))."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, idx):
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(items[idx]))
        return items[_index(idx, len(items), "Sequential")][1]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self._modules), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys), "Sequential")]]):
            del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self._modules)), module)
        return self

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleList(Module):
    """A list of modules whose parameters the parent module sees (a plain list would hide them)."""

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _child_reprs(self) -> list:
        """Runs of children that print alike shown once, as PyTorch's: (0-5): 6 x Block(...)."""
        out = []
        for text, run in itertools.groupby(super()._child_reprs(), key=lambda item: item[1]):
            names = [name for name, _ in run]
            out.append((names[0], text) if len(names) == 1 else (f"{names[0]}-{names[-1]}", f"{len(names)} x {text}"))
        return out

    def __getitem__(self, idx):
        items = list(self._modules.values())
        if isinstance(idx, slice):
            return ModuleList(items[idx])
        return items[_index(idx, len(items), "ModuleList")]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self._modules), "ModuleList")), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)


class ModuleDict(Module):
    """A dict of modules (insertion-ordered) whose parameters the parent module sees."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def update(self, modules) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, m in pairs:
            self[key] = m


def _as_parameter(value):
    """What ParameterList/ParameterDict store: a Parameter for a plain tensor (as PyTorch), anything else as is."""
    if isinstance(value, TensorBase) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(value) -> str:
    if not isinstance(value, TensorBase):
        return f"Object of type: {type(value).__name__}"
    kind = "Parameter containing" if isinstance(value, Parameter) else "Tensor"
    size = "x".join(str(s) for s in value.shape)
    where = "" if value.device.type == "cpu" else f" ({value.device})"
    return f"{kind}: [{value.dtype!r} of size {size}{where}]"


def _listing(name: str, items) -> str:
    lines = [f"    ({key}): {_describe(value)}" for key, value in items]
    return f"{name}(\n" + "\n".join(lines) + "\n)" if lines else f"{name}()"


class ParameterList(Module):
    """A list of parameters the parent module sees (plain tensors become Parameters on the way in)."""

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(self._size)[idx]])
        return getattr(self, str(_index(idx, self._size, "ParameterList")))

    def __setitem__(self, idx: int, value) -> None:
        setattr(self, str(_index(idx, self._size, "ParameterList")), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator:
        return (self[i] for i in range(self._size))

    def __iadd__(self, values: Iterable) -> "ParameterList":
        return self.extend(values)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value) -> "ParameterList":
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable) -> "ParameterList":
        if isinstance(values, TensorBase) or not isinstance(values, Iterable):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")

    def __repr__(self) -> str:
        return _listing("ParameterList", enumerate(self))


class ParameterDict(Module):
    """A dict of parameters (insertion-ordered, string keys) the parent module sees."""

    def __init__(self, parameters: Mapping | Iterable | None = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def keys(self):
        return list(self._keys)

    def values(self):
        return [self[k] for k in self._keys]

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple:
        key = list(self._keys)[-1]
        return key, self.pop(key)

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def copy(self) -> "ParameterDict":
        return ParameterDict(self.items())

    def update(self, parameters) -> None:
        if isinstance(parameters, (Mapping, ParameterDict)):
            parameters = parameters.items()
        elif isinstance(parameters, (str, TensorBase)) or not isinstance(parameters, Iterable):
            raise TypeError(f"ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            f"{type(parameters).__name__}")
        for j, pair in enumerate(parameters):
            pair = tuple(pair) if isinstance(pair, Iterable) else ()
            if len(pair) != 2:
                raise ValueError(f"ParameterDict update sequence element #{j} should be a pair (key, value)")
            self[pair[0]] = pair[1]

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")

    def __repr__(self) -> str:
        return _listing("ParameterDict", self.items())
