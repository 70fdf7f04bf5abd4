"""nn.Parameter: a tensor that a Module registers as one of its learnable weights; nn.Buffer: one it
registers as state that is not learned (a buffer)."""
from __future__ import annotations

from .. import creation
from ..autograd.tensor_base import TensorBase
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad and is registered by `Module.__setattr__`.
    `Parameter(t)` shares t's memory, as in PyTorch."""

    def __new__(cls, data: TensorBase | None = None, requires_grad: bool = True):
        if data is None:
            data = creation.empty(0)
        if not isinstance(data, TensorBase):
            raise TypeError(f"Parameter expects a Tensor, got {type(data).__name__}")
        p = object.__new__(cls)
        TensorBase.__init__(p, data._data, data._device)
        p.requires_grad = requires_grad  # validates: only floating point tensors can require grad
        return p

    def __init__(self, data=None, requires_grad: bool = True):
        pass  # everything happens in __new__ (Tensor.__init__ refuses direct construction)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        """Refused on purpose: a pickle runs code when it is loaded, so a checkpoint that needs one
        is a risk; tinygrad_lab.save stores parameters (and whole modules) without pickle.
        copy.deepcopy does not need pickling (Tensor.__deepcopy__)."""
        raise TypeError("Parameters are saved through state_dict() and tinygrad_lab.save, not pickle "
                        "(copy.deepcopy works)")


class _BufferMeta(type):
    """isinstance(t, Buffer) asks whether t was marked by Buffer(...): a buffer stays an ordinary Tensor."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, TensorBase) and obj.__dict__.get("_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a buffer: `module.name = Buffer(t)` registers it as register_buffer would (in
    buffers() and, when persistent, in state_dict()). As in PyTorch, Buffer(t) gives back an ordinary
    Tensor (t detached, sharing its memory, with t's requires_grad) carrying the mark and `persistent`."""

    def __new__(cls, data: TensorBase | None = None, *, persistent: bool = True):
        if data is None:
            data = creation.empty(0)
        if not isinstance(data, TensorBase):
            raise TypeError(f"Buffer expects a Tensor, got {type(data).__name__}")
        t = data.detach()
        t.requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
