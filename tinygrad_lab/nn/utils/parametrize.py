"""Parametrizations, as torch.nn.utils.parametrize: a module's tensor (say `weight`) computed, each time
it is read, by a small module from the parameter that is really trained.

    register_parametrization(layer, "weight", Symmetric())
    layer.weight        # Symmetric()(layer.parametrizations.weight.original): recorded, so gradients
                        # reach `original` through the parametrization

The optimizer trains `parametrizations.weight.original`; whatever it does to it, `weight` stays in the
set the parametrization maps onto (symmetric matrices, unit-norm rows, ...). How it works: the module's
class is replaced by a subclass (`ParametrizedLinear`) with a property for `weight`, whose getter runs
the parametrizations and whose setter runs their `right_inverse`.
"""
from __future__ import annotations

import contextlib

from ...autograd.grad_mode import no_grad
from ...autograd.tensor_base import TensorBase
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization", "remove_parametrizations",
           "type_before_parametrizations"]

_cache: dict | None = None  # inside cached(): (id(module), name) -> the tensor computed once


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and what the first one reads: `original`,
    or `original0`, `original1`, ... when its right_inverse splits a tensor in several (weight_norm's g, v)."""

    def __init__(self, modules, original: TensorBase, unsafe: bool = False):
        super().__init__(modules)
        self.unsafe = unsafe
        self.is_tensor = True
        with no_grad():
            values = self._inverse(original)
        if isinstance(values, TensorBase):
            self._keep("original", original, values)
        else:
            self.is_tensor, self.ntensors = False, len(values)
            for i, value in enumerate(values):
                self._keep(f"original{i}", original, value)

    def _keep(self, name: str, original: TensorBase, value: TensorBase) -> None:
        """Register value under name as the kind of tensor original was: the same Parameter when it already
        holds value, else a new Parameter, or a buffer for a buffer's parametrization."""
        if isinstance(original, Parameter):
            self.register_parameter(name, original if value is original else
                                    Parameter(value.detach().clone(), original.requires_grad))
        else:
            self.register_buffer(name, value)

    def _inverse(self, value):
        """What the originals must hold for the parametrizations to give `value` (each one's right_inverse,
        last first; one without right_inverse passes value on)."""
        for module in reversed(list(self)):
            value = module.right_inverse(value) if hasattr(module, "right_inverse") else value
        return value

    def right_inverse(self, value) -> None:
        """Assigning to the parametrized tensor: the originals are set (in place) so that it reads back value."""
        with no_grad():
            values = self._inverse(value)
            for original, new in zip(self._originals(), (values,) if self.is_tensor else values):
                original.copy_(new)

    def _originals(self) -> tuple:
        return (self.original,) if self.is_tensor else tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def forward(self):
        modules = list(self)
        out = modules[0](*self._originals())
        for module in modules[1:]:
            out = module(out)
        return out


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False):
    """Make module.<tensor_name> the output of parametrization (run on the parameter it replaces); a second
    registration on the same name is applied after the first."""
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    original = getattr(module, tensor_name, None)
    if not isinstance(original, TensorBase) or (tensor_name not in module._parameters
                                                and tensor_name not in module._buffers):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{tensor_name}'")
    chain = ParametrizationList([parametrization], original, unsafe)
    if not unsafe:
        _check(chain, original, tensor_name)
    (module._parameters if tensor_name in module._parameters else module._buffers).pop(tensor_name)
    if not is_parametrized(module):
        module.parametrizations = ModuleDict()
        module.__class__ = type(f"Parametrized{type(module).__name__}", (type(module),), {})
    module.parametrizations[tensor_name] = chain
    setattr(type(module), tensor_name, property(_getter(tensor_name), _setter(tensor_name)))
    return module


def _check(chain: ParametrizationList, original: TensorBase, name: str) -> None:
    """A parametrization must keep the tensor's shape and dtype (unless unsafe=True)."""
    with no_grad():
        out = chain()
    if not isinstance(out, TensorBase) or out.shape != original.shape or out.dtype != original.dtype:
        got = f"{type(out).__name__}" if not isinstance(out, TensorBase) else f"shape {list(out.shape)}, {out.dtype}"
        raise ValueError(f"Registering a parametrization may not change the shape or dtype of the tensor, unless "
                         f"`unsafe` flag is enabled: '{name}' is {list(original.shape)}, {original.dtype}; the "
                         f"parametrization gives {got}")


def _getter(name: str):
    def get(self):
        if _cache is None:
            return self.parametrizations[name]()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = self.parametrizations[name]()
        return _cache[key]
    return get


def _setter(name: str):
    def set_(self, value):
        self.parametrizations[name].right_inverse(value)
    return set_


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    parametrizations = module._modules.get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return tensor_name is None or tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo register_parametrization: tensor_name becomes a plain parameter again, holding its current
    (parametrized) value, or with leave_parametrized=False the original's."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    with no_grad():
        value = chain() if leave_parametrized else chain.original
    original = chain.original if chain.is_tensor else None
    if isinstance(original, Parameter) and original.shape == value.shape and original.dtype == value.dtype:
        with no_grad():
            param = original.copy_(value) if value is not original else original
    else:
        param = Parameter(value.detach().clone())
    del module.parametrizations[tensor_name]
    delattr(type(module), tensor_name)
    module.register_parameter(tensor_name, param)
    if not len(module.parametrizations):
        module.__class__ = type_before_parametrizations(module)
        del module.parametrizations
    return module


@contextlib.contextmanager
def cached():
    """Within the block, each parametrized tensor is computed once and reused (one graph for all its uses)."""
    global _cache
    outer, _cache = _cache, {} if _cache is None else _cache
    try:
        yield
    finally:
        _cache = outer
