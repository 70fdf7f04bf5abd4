"""LazyModuleMixin: layers that read one of their sizes (in_features, in_channels, num_features) from their
first input instead of the constructor, as PyTorch's lazy modules (nn.LazyLinear, nn.LazyConv2d, ...).

A lazy layer is its eager layer with this mixin in front: `class LazyConv2d(_LazyConvXdMixin, Conv2d)`.
Its constructor runs the eager one with the unknown size at 0 and then swaps every tensor whose shape
depends on that size (the eager class lists them in `_tensor_shapes()`) for an UninitializedParameter or
UninitializedBuffer. The first call reads the size from the input (`_infer_size`, one per layer family),
gives those tensors their shapes in place, initialises them exactly as the eager class does (same random
draws in the same order), and turns the module into the eager class (`cls_to_become`).
"""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .module import Module


class LazyModuleMixin:
    """Mixed in before a Module class to infer parameter shapes from the first input (see the module
    docstring). A layer family sets `_lazy_size` (the attribute inferred) and `_infer_size(input)`; each
    layer sets `cls_to_become`. A module of your own can instead override `initialize_parameters(*args,
    **kwargs)` and create UninitializedParameters itself, as in PyTorch.

    Deviation: once the first call has run, the inferred size is always set from the input, also when a
    loaded state_dict gave the tensors their shapes or nothing was lazy (e.g. BatchNorm with affine=False
    and track_running_stats=False); PyTorch leaves it at 0 there except for LazyLinear."""

    cls_to_become: type | None = None
    _lazy_size: str = ""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        shapes = getattr(self, "_tensor_shapes", dict)()
        stores = ((self._parameters, UninitializedParameter), (self._buffers, UninitializedBuffer))
        for name in shapes:
            for store, placeholder in stores:
                t = store.get(name)
                if t is not None:
                    store[name] = placeholder(t.requires_grad, t.device, t.dtype)
        object.__setattr__(self, "_lazy_pending", True)  # removed by the first call

    def __call__(self, *args, **kwargs):
        if "_lazy_pending" in self.__dict__:
            self._infer_parameters(args, kwargs)
        return Module.__call__(self, *args, **kwargs)  # not super(): the class may have just changed

    def _infer_parameters(self, args: tuple, kwargs: dict) -> None:
        self.initialize_parameters(*args, **kwargs)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {type(self).__name__} has not been fully initialized")
        del self.__dict__["_lazy_pending"]
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def has_uninitialized_params(self) -> bool:
        """Whether any of this module's own parameters or buffers still waits for its shape."""
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        """Read the size from `input`, give the uninitialized tensors their shapes and initialise them
        as the eager class does. Tensors that a loaded state_dict shaped already must agree with it."""
        size = self._infer_size(input)
        before = getattr(self, self._lazy_size)
        setattr(self, self._lazy_size, size)
        shapes = self._tensor_shapes()
        tensors = {name: getattr(self, name) for name in shapes if getattr(self, name, None) is not None}
        clashes = [f"{name} has shape {list(t.shape)}, not {list(shapes[name])}"
                   for name, t in tensors.items() if not is_lazy(t) and tuple(t.shape) != tuple(shapes[name])]
        if clashes:
            setattr(self, self._lazy_size, before)
            raise RuntimeError(f"{type(self).__name__}: the input gives {self._lazy_size}={size}, but "
                               + "; ".join(clashes) + " (from a loaded state_dict?)")
        lazy = [name for name, t in tensors.items() if is_lazy(t)]
        with no_grad():
            for name in lazy:
                tensors[name].materialize(shapes[name])
            if lazy:
                self.reset_parameters()

    def _infer_size(self, input) -> int:
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def reset_parameters(self) -> None:
        """The eager initialisation, skipped while the shapes are unknown (the eager constructor calls
        this with the size still 0)."""
        if not self.has_uninitialized_params() and getattr(self, self._lazy_size) != 0:
            super().reset_parameters()
