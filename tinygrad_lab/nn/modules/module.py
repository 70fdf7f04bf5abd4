"""nn.Module: the base class of every layer and model.

Assigning a Parameter, a Module, an nn.Buffer or a registered buffer to an attribute records
it, so `parameters()`, `state_dict()`, `to()` and `train()` reach the whole tree.
`__call__` runs hooks around `forward` and keeps the stack of modules being
called, which the recorded graph reads to group ops by module.
"""
from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Callable, Iterator, NamedTuple

from ... import dtypes
from ..._warn import warn
from ...autograd.function import Function, RemovableHandle, scope_stack
from ...autograd.grad_mode import no_grad
from ...autograd.tensor_base import TensorBase
from ...tensor import parse_to
from ..parameter import Buffer, Parameter, is_lazy

# the modules whose __call__ is running, outermost first: recorded graph nodes keep a snapshot (Node.scope)
call_stack = scope_stack


class IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list


def _load_into(target: TensorBase, value: TensorBase) -> None:
    """Copy a checkpoint's value into a parameter or buffer. An uninitialized one (a lazy module's) first
    takes the value's shape; while the value is uninitialized too, both stay as they are."""
    if is_lazy(target):
        if is_lazy(value):
            return
        target.materialize(value.shape)
    target.copy_(value)


class Module:
    """Base class for all neural-network modules (PyTorch's torch.nn.Module)."""

    training: bool
    _backward_hooks = None  # (full backward hooks, full backward pre-hooks), once one is registered

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())

    # ------------------------------------------------------------ registration
    def _check_init(self, name: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {name!r} before Module.__init__() call "
                                 f"(call super().__init__() first in {type(self).__name__}.__init__)")

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Parameter):
            self._check_init(name)
            self._remove_from(name, "_buffers", "_modules")
            self.__dict__.pop(name, None)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._check_init(name)
            self._remove_from(name, "_parameters", "_buffers")
            self.__dict__.pop(name, None)
            self._modules[name] = value
        elif "_parameters" in self.__dict__ and name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                f"(tinygrad_lab.nn.Parameter or None expected)")
            self._parameters[name] = None
        elif "_modules" in self.__dict__ and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                f"(tinygrad_lab.nn.Module or None expected)")
            self._modules[name] = None
        elif isinstance(value, Buffer):
            self.register_buffer(name, value, value.persistent)
        elif "_buffers" in self.__dict__ and name in self._buffers:
            if value is not None and not isinstance(value, TensorBase):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                f"(tinygrad_lab.nn.Buffer, tinygrad_lab.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _remove_from(self, name: str, *dicts: str) -> None:
        for d in dicts:
            self.__dict__[d].pop(name, None)
            if d == "_buffers":
                self._non_persistent.discard(name)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: look in the registries
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, {}):
                del self.__dict__[registry][name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            f"(tinygrad_lab.nn.Parameter or None required)")
        self._check_init(name)
        self._validate_name(name, "_parameters")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: TensorBase | None, persistent: bool = True) -> None:
        """A tensor that is state but not a parameter (e.g. BatchNorm's running mean): it moves with
        `to()` and is saved in `state_dict()` unless persistent=False."""
        if tensor is not None and not isinstance(tensor, TensorBase):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            f"(tinygrad_lab.Tensor or None required)")
        self._check_init(name)
        self._validate_name(name, "_buffers")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_init(name)
        self._validate_name(name, "_modules")
        self._modules[name] = module

    register_module = add_module

    def _validate_name(self, name: str, registry: str) -> None:
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"module, parameter and buffer names must be non-empty strings without '.', got {name!r}")
        if hasattr(self, name) and name not in self.__dict__[registry]:
            raise KeyError(f"attribute '{name}' already exists")

    # ------------------------------------------------------------ calling
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        pre_hooks, hooks, backward_hooks = self._forward_pre_hooks, self._forward_hooks, self._backward_hooks
        if pre_hooks:
            for hook in list(pre_hooks.values()):
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        if backward_hooks is not None:
            call = BackwardHookCall(self, backward_hooks)
            args = call.wrap_inputs(args)
        outer = call_stack.items  # this thread's scopes (a tuple): pushed and restored without method calls
        call_stack.items = outer + (self,)
        try:
            out = self.forward(*args, **kwargs)
        finally:
            call_stack.items = outer
        if hooks:
            for hook in list(hooks.values()):
                result = hook(self, args, out)
                if result is not None:
                    out = result
        return out if backward_hooks is None else call.wrap_outputs(out)

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, args, output) after forward; a returned value replaces the output."""
        return RemovableHandle(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, args) before forward; a returned value replaces the arguments."""
        return RemovableHandle(self._forward_pre_hooks, hook)

    def register_full_backward_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, grad_input, grad_output) once the gradients of this call's tensor inputs are computed
        (grad_output: those of its outputs); a returned tuple replaces grad_input."""
        return RemovableHandle(self._backward_hook_dicts()[0], hook)

    def register_full_backward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, grad_output) when the gradients of this call's outputs arrive, before they go into the
        module; a returned tuple replaces grad_output."""
        return RemovableHandle(self._backward_hook_dicts()[1], hook)

    def _backward_hook_dicts(self) -> tuple:
        if self._backward_hooks is None:
            object.__setattr__(self, "_backward_hooks", (OrderedDict(), OrderedDict()))
        return self._backward_hooks

    # ------------------------------------------------------------ traversal
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def get_submodule(self, target: str) -> "Module":
        """The module at dotted path `target` ("" is this one), as PyTorch's; an AttributeError names what is missing."""
        module = self
        for item in target.split(".") if target else []:
            if not hasattr(module, item):
                raise AttributeError(f"{type(module).__name__} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: "Module") -> None:
        """Put `module` at dotted path `target`, whose parent must exist."""
        parent, _, name = target.rpartition(".")
        if not name:
            raise ValueError("Cannot set the submodule without a target name!")
        self.get_submodule(parent).add_module(name, module)

    def get_parameter(self, target: str) -> Parameter:
        return self._get_member(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target: str) -> TensorBase:
        return self._get_member(target, "_buffers", "a buffer")

    def _get_member(self, target: str, registry: str, kind: str):
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        if name not in getattr(module, registry):
            raise AttributeError(f"`{name}` is not {kind}")
        return getattr(module, name)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, module in modules:
            for name, value in module.__dict__[registry].items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[TensorBase]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """fn(module) on every submodule (children first), then on self, as in PyTorch."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------ modes
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    with no_grad():
                        p.grad.zero_()

    # ------------------------------------------------------------ devices and dtypes
    def _apply_to_tensors(self, fn: Callable[[TensorBase], TensorBase]) -> "Module":
        """Convert every parameter and buffer in place (the Parameter objects stay the same,
        so optimizers holding them keep working); gradients follow their parameter."""
        with no_grad():
            for m in self.modules():
                for p in m._parameters.values():
                    if p is not None:
                        new = fn(p)
                        p._data, p._device = new._data, new._device
                        if p.grad is not None:
                            p._grad = fn(p.grad)
                for name, b in m._buffers.items():
                    if b is not None:
                        m._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """to(device), to(dtype), to(device, dtype), to(tensor): floating-point parameters and
        buffers change dtype; all of them move device (as PyTorch)."""
        device, dtype, _ = parse_to(*args, **kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")

        def convert(t: TensorBase) -> TensorBase:
            out = t
            if device is not None:
                out = out.to(device)
            if dtype is not None and out.is_floating_point():
                out = out.to(dtype)
            return out

        return self._apply_to_tensors(convert)

    def cpu(self) -> "Module":
        return self.to("cpu")

    def share_memory(self) -> "Module":
        """Move every parameter (and its gradient) and buffer into shared memory, in place, so that
        processes started afterwards train the same weights (Hogwild; see tinygrad_lab.multiprocessing)."""
        for m in self.modules():
            for t in [*m._parameters.values(), *m._buffers.values()]:
                if t is not None:
                    t.share_memory_()
                    if t.grad is not None:
                        t.grad.share_memory_()
        return self

    def cuda(self, device=None) -> "Module":
        return self.to("cuda" if device is None else device)

    def float(self) -> "Module":
        return self.to(dtypes.float32)

    def double(self) -> "Module":
        return self.to(dtypes.float64)

    def half(self) -> "Module":
        return self.to(dtypes.float16)

    # ------------------------------------------------------------ state
    def state_dict(self, destination: dict | None = None, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Parameters and persistent buffers by dotted name (detached tensors sharing memory)."""
        out = OrderedDict() if destination is None else destination
        # a module registered under two names appears under both (as in PyTorch)
        for mod_prefix, m in self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False):
            dot = f"{mod_prefix}." if mod_prefix else ""
            for name, p in m._parameters.items():
                if p is not None:
                    out[dot + name] = p if keep_vars else p.detach()
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent:
                    out[dot + name] = b if keep_vars else b.detach()
        return out

    def load_state_dict(self, state_dict: dict, strict: bool = True) -> IncompatibleKeys:
        """Copy values into this module's parameters and buffers (in place). With strict=True,
        missing or unexpected keys are an error; a shape mismatch always is. An uninitialized parameter
        or buffer (a lazy module's) takes the checkpoint's shape, unless that is uninitialized too."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, TensorBase):
                errors.append(f'While copying the parameter named "{key}", expected a Tensor from checkpoint '
                              f"but received {type(value).__name__}")
            elif not is_lazy(target) and tuple(value.shape) != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                              f"the shape in current model is {target.shape}.")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    _load_into(target, state_dict[key])
        return IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        """The text between the parentheses of this module's repr (layers override it)."""
        return ""

    def __repr__(self) -> str:
        lines = [f"({name}): {child}" for name, child in self._child_reprs()]
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        body = ([extra] if extra else []) + lines
        return f"{type(self).__name__}(\n  " + "\n  ".join(body) + "\n)"

    def _child_reprs(self) -> list:
        """(name, repr) of each child, indented to sit inside this module's repr."""
        return [(name, repr(m).replace("\n", "\n  ")) for name, m in self._modules.items()]

    def __dir__(self):
        keys = itertools.chain(super().__dir__(), self._parameters, self._buffers, self._modules)
        return sorted(set(keys))


# ---------------------------------------------------------------- full backward hooks

class BackwardHookCall:
    """One call of a module with full backward hooks. Its tensor inputs and outputs pass through identity
    Functions (_GradsOfInputs, _GradsOfOutputs), whose backwards see the gradients: the outputs' first (kept,
    after the pre-hooks), then the inputs', with which the hooks run. If no input needs a gradient, the hooks run
    when the outputs' gradients arrive, with grad_input all None (as PyTorch)."""

    def __init__(self, module: Module, hook_dicts: tuple):
        self.module, (self.hooks, self.pre_hooks) = module, hook_dicts
        self.n_inputs, self.inputs_wired, self.grad_output = 0, False, None

    def wrap_inputs(self, args: tuple) -> tuple:
        positions = [i for i, a in enumerate(args) if isinstance(a, TensorBase)]
        self.n_inputs = len(positions)
        if not any(args[i].requires_grad for i in positions):
            return args
        self.inputs_wired = True
        wired = _GradsOfInputs.apply(self, *(args[i] for i in positions))
        args = list(args)
        for i, t in zip(positions, wired if isinstance(wired, tuple) else (wired,)):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, out):
        single = isinstance(out, TensorBase)
        outs = (out,) if single else out
        if not (isinstance(outs, tuple) and all(isinstance(o, TensorBase) for o in outs)
                and any(o.requires_grad for o in outs)):
            return out  # (outputs that are not tensors, or need no gradient: no hook can run)
        wired = _GradsOfOutputs.apply(self, *outs)
        return wired[0] if single and isinstance(wired, tuple) else wired

    def outputs_done(self, grads: tuple) -> tuple:
        for hook in list(self.pre_hooks.values()):
            result = hook(self.module, grads)
            if result is not None:
                grads = tuple(result)
        self.grad_output = grads
        if not self.inputs_wired and self.hooks:
            warn(f"Full backward hook is firing when gradients are computed with respect to module outputs since no "
                 f"inputs require gradients ({type(self.module).__name__}: grad_input is all None)")
            self.inputs_done((None,) * self.n_inputs)
        return grads

    def inputs_done(self, grads: tuple) -> tuple:
        for hook in list(self.hooks.values()):
            result = hook(self.module, grads, self.grad_output)
            if result is not None:
                if len(result) != len(grads):
                    raise RuntimeError(f"backward hook {getattr(hook, '__name__', hook)!r} returned {len(result)} "
                                       f"gradients for {len(grads)} inputs of {type(self.module).__name__}")
                grads = tuple(result)
        return grads


class _Wire(Function):
    """The identity on a call's tensors, whose backward hands their gradients to the BackwardHookCall."""

    materialize = True  # a tensor no gradient reached gets zeros (an input that needs none, as PyTorch's)

    @classmethod
    def forward(cls, ctx, call, *tensors):
        ctx.call = call
        ctx.set_materialize_grads(cls.materialize)
        ctx.mark_non_differentiable(*(t for t in tensors if not t.requires_grad))
        return tensors if len(tensors) > 1 else tensors[0]


class _GradsOfInputs(_Wire):
    @staticmethod
    def backward(ctx, *grads):
        return (None,) + ctx.call.inputs_done(grads)


class _GradsOfOutputs(_Wire):
    materialize = False  # an output no gradient reached is None in grad_output

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + ctx.call.outputs_done(grads)
