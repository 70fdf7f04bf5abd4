"""How tensors cross process boundaries (PyTorch's torch.multiprocessing.reductions).

Registered with multiprocessing's pickler, so every Queue, Pipe, Pool and spawned
Process argument of the standard library sends tensors this way:

- a CPU tensor travels as a handle to shared memory (`backends.shared_memory`), never as a
  copy of its values: what the receiver writes in place, the sender sees. A tensor that is
  not shared yet is moved into shared memory first (`Tensor.share_memory_()`), as PyTorch does;
- a tensor on another device travels by value (deviation: PyTorch shares CUDA memory with
  CUDA IPC);
- `requires_grad` and the Parameter type survive; the graph does not: a non-leaf tensor that
  requires grad is refused, as in PyTorch.
"""
from __future__ import annotations

from multiprocessing.reduction import DupFd, ForkingPickler

from ..autograd.tensor_base import TensorBase
from ..backends import Device, shared_memory
from ..creation import from_numpy, tensor
from ..nn.parameter import Parameter
from ..tensor import Tensor


def reduce_tensor(t: TensorBase):
    if t._grad_fn is not None and t._requires_grad:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
                           "not support crossing process boundaries. If you just want to transfer the data, call "
                           "detach() on the tensor before serializing (e.g., putting it on the queue).")
    kind = Parameter if isinstance(t, Parameter) else Tensor
    if t._device.type != "cpu":
        return rebuild_copy, (kind, t._device.backend.to_host(t._data), str(t._device), t._requires_grad)
    t.share_memory_()
    return rebuild_shared, (kind, shared_memory.describe(t._data, DupFd), t._requires_grad)


def _finish(kind: type, t: TensorBase, requires_grad: bool) -> TensorBase:
    if kind is Parameter:
        return Parameter(t, requires_grad)
    return t.requires_grad_(requires_grad)


def rebuild_shared(kind: type, handle: tuple, requires_grad: bool) -> TensorBase:
    dupfd, *layout = handle
    return _finish(kind, from_numpy(shared_memory.rebuild(dupfd.detach(), *layout)), requires_grad)


def rebuild_copy(kind: type, host, device: str, requires_grad: bool) -> TensorBase:
    return _finish(kind, tensor(host, device=Device(device)), requires_grad)


def init_reductions() -> None:
    """Send tensors through multiprocessing as described above (done on import of tinygrad_lab.multiprocessing)."""
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
