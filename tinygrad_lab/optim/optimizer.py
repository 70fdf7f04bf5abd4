"""The optimizer base class: parameter groups, per-parameter state, zero_grad, state_dict.

An optimizer holds *references* to the parameter tensors and changes them in
place (under `no_grad`), so a model, its views of the weights and the optimizer
always see the same numbers. What it needs to remember between steps (momentum
buffers, running averages, the step count) lives in `self.state[param]`.

Same API and `state_dict()` format as `torch.optim.Optimizer`; a state_dict saved
by torch.optim (CPU tensors) loads too, so a run can move between the libraries.
Deviations:
- `load_state_dict` copies the state tensors it is given (PyTorch keeps the very
  same tensor objects when dtype and device already match, so two optimizers
  loaded from one dict in one process would silently share their buffers).
- No `foreach` / `fused` / `capturable` / `differentiable` options: there is one (single-tensor)
  implementation of each update. Step hooks exist (per optimizer and global); state_dict hooks do not.
"""
from __future__ import annotations

import copy
import functools
import numbers
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import creation, seams
from ..autograd.function import RemovableHandle
from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor


class _RequiredParameter:
    """Marks a hyperparameter every group must give (e.g. an lr with no default)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


_global_step_hooks: tuple = (OrderedDict(), OrderedDict())  # every optimizer's (pre, post) step hooks


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """hook(optimizer, args, kwargs) before every optimizer's step; it may return (args, kwargs) to use instead."""
    return RemovableHandle(_global_step_hooks[0], hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """hook(optimizer, args, kwargs) after every optimizer's step."""
    return RemovableHandle(_global_step_hooks[1], hook)


def _marking(step: Callable) -> Callable:
    """`step`, also noting that it was called (the lr schedulers' order check reads it) and running the step
    hooks around it (every optimizer's, then this one's)."""
    @functools.wraps(step)
    def step_and_mark(self, *args, **kw):
        self._opt_called = True
        own = self._step_hooks
        if own is None and not (_global_step_hooks[0] or _global_step_hooks[1]):
            return step(self, *args, **kw)
        pre, post = (list(_global_step_hooks[i].values()) + (list(own[i].values()) if own else []) for i in (0, 1))
        args = (self,) + args  # as PyTorch's hooks see them: the optimizer is the first of step's arguments
        for hook in pre:
            result = hook(self, args, kw)
            if result is not None:
                args, kw = result
        out = step(*args, **kw)
        for hook in post:
            hook(self, args, kw)
        return out

    return step_and_mark


class Optimizer:
    """Base class of all optimizers.

    `params` is an iterable of tensors, or of dicts ("parameter groups") that each hold
    `"params"` plus options overriding `defaults` for those tensors only, e.g.
    `SGD([{"params": body}, {"params": head, "lr": 1e-2}], lr=1e-3)`.
    """

    _step_hooks = None  # (pre, post) hooks of this optimizer's step, once one is registered

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__} (wrap a single tensor in a list: [t])")
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs) -> None:
        # Each optimizer's step() also records that it was called: an lr scheduler
        # uses this to warn when scheduler.step() comes before optimizer.step().
        # The step is a seam (tinygrad_lab.seams, "SGD.step"): a learner's may run in its place.
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _marking(cls.__dict__["step"])
        seams.register(f"{cls.__name__}.step", cls, "step", adapt=_marking, doc=(
            f"{cls.__name__}'s step: step(optimizer, closure=None) updates every parameter that has a gradient "
            f"(under no_grad), with optimizer.param_groups' options and optimizer.state[p] for what it keeps."))

    # ------------------------------------------------------------ parameter groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (with its own options) to optimize, e.g. layers unfrozen mid-training."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError("param_group must have a 'params' entry")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        params = list(params)
        group = param_group  # kept (not copied), as in PyTorch: the caller's dict is the live group

        # named parameters, as model.named_parameters() gives them: (name, tensor) pairs
        names = [p[0] for p in params if isinstance(p, tuple)]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            group["param_names"] = names
            params = [p[1] for p in params]
        group["params"] = params

        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__} (params[{i}])")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError(f"can't optimize a non-leaf Tensor (params[{i}] of shape {list(p.shape)} has "
                                 f"grad_fn={p.grad_fn!r}); optimize the leaf it was computed from, or "
                                 f"use .detach().requires_grad_()")

        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        lr = group.get("lr", 0.0)
        if isinstance(lr, Tensor):  # PyTorch takes a one-element tensor too (read at each step: lr_of)
            if lr.numel() != 1:
                raise ValueError(f"Tensor lr must be 1-element, got a tensor of shape {list(lr.shape)}")
            lr = lr.item()
        if not isinstance(lr, numbers.Real) or lr < 0:
            raise ValueError(f"Invalid learning rate: {lr!r} (must be a number >= 0)")

        ids = [id(p) for p in params]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; they will be "
                          "updated more than once per step", stacklevel=3)
        if self.param_groups and (("param_names" in group) != ("param_names" in self.param_groups[0])):
            raise ValueError("all optimizer param groups should be with/without names. Cannot add a param group "
                             f"{'with' if 'param_names' in group else 'without'} names to this optimizer")
        seen = {id(p): i for i, g in enumerate(self.param_groups) for p in g["params"]}
        for p in params:
            if id(p) in seen:
                raise ValueError(f"some parameters appear in more than one parameter group (a tensor of shape "
                                 f"{list(p.shape)} is already in group {seen[id(p)]})")
        self.param_groups.append(group)

    # ------------------------------------------------------------ the training loop
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of the last backward: `.grad = None` (default), or fill them with zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if grad.grad_fn is not None:  # a grad with history (backward(create_graph=True))
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None):
        """Update every parameter that has a `.grad`; each optimizer defines its own rule."""
        raise NotImplementedError

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(optimizer, args, kwargs) before each step; it may return (args, kwargs) to use instead."""
        return RemovableHandle(self._step_hook_dicts()[0], hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(optimizer, args, kwargs) after each step."""
        return RemovableHandle(self._step_hook_dicts()[1], hook)

    def _step_hook_dicts(self) -> tuple:
        if self._step_hooks is None:
            self._step_hooks = (OrderedDict(), OrderedDict())
        return self._step_hooks

    @staticmethod
    def _evaluate(closure: Callable[[], Any] | None):
        """Run the closure (it recomputes the loss and calls backward) with grad enabled."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # ------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: {...}}, "param_groups": [{options..., "params": [index, ...]}]}.

        Parameters are named by their position across all groups (0, 1, 2, ...), since
        the tensors themselves belong to the model's checkpoint. The state tensors are
        the live ones (not copies), as in PyTorch.
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore options and state saved by `state_dict()`, matching parameters by position."""
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups "
                             f"({len(saved_groups)}, the optimizer has {len(groups)})")
        for i, (g, s) in enumerate(zip(groups, saved_groups)):
            if len(g["params"]) != len(s["params"]):
                raise ValueError(f"loaded state dict contains a parameter group that doesn't match the size of "
                                 f"optimizer's group (group {i}: {len(s['params'])} saved, "
                                 f"{len(g['params'])} in the optimizer)")
        id_map = {saved_id: p for g, s in zip(groups, saved_groups) for saved_id, p in zip(s["params"], g["params"])}

        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: _cast_state(param, key, value) for key, value in v.items()}
            else:
                state[k] = v
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
        self.state = state
        self.param_groups = saved_groups
        for group in self.param_groups:  # a dict saved by an older version may lack newer options
            for name, default in self.defaults.items():
                group.setdefault(name, default)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k not in ("params", "param_names")]
        return "\n".join(lines) + "\n)"


def _cast_state(param: Tensor, key: str, value):
    """A copy of a saved state value, moved to the parameter's device (and dtype, for
    floating-point tensors other than the step counter), as PyTorch casts it.
    Arrays of other libraries (a torch.optim state_dict's CPU tensors) become Tensors."""
    if not isinstance(value, (Tensor, dict, list, tuple, str, bytes)) and hasattr(value, "__array__"):
        value = creation.tensor(np.asarray(value))
    if isinstance(value, Tensor):
        if key == "step":
            return value.clone()
        if param.is_floating_point() and value.is_floating_point():
            out = value.to(device=param.device, dtype=param.dtype)
        else:
            out = value.to(device=param.device)
        return out.clone() if out is value else out
    if isinstance(value, dict):
        return {k: _cast_state(param, k, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, key, v) for v in value)
    return value


def lr_of(group: dict) -> float:
    """A group's learning rate as a number: a tensor lr (PyTorch allows one, e.g. for compiled steps) is
    read afresh at every step, so changing it in place changes the next step."""
    lr = group["lr"]
    return lr.item() if isinstance(lr, Tensor) else lr
