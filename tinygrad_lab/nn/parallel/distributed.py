"""nn.parallel.DistributedDataParallel: one model per process, its gradients averaged over the
processes of a `tinygrad_lab.distributed` job (torch's DDP, on MPI).

Design: construction broadcasts rank 0's parameters and buffers, so every rank starts from the
same weights; then a hook on each parameter all-reduces (averages) its gradient as backward
produces it, before it is added to `.grad`. So after `loss.backward()` every rank holds the
same, averaged gradient, and the same optimizer step keeps the copies equal. One all-reduce
per parameter, in the order backward reaches them (the same on every rank: the same program);
PyTorch packs gradients into buckets and overlaps the all-reduces with backward instead.
As in PyTorch (find_unused_parameters=False), every parameter must take part in each forward.
"""
from __future__ import annotations

import contextlib

from ...autograd.grad_mode import no_grad
from ..modules.module import Module


class DistributedDataParallel(Module):
    """Wraps `module` so that backward averages its gradients over the process group's ranks.
    `no_sync()` skips the averaging (gradient accumulation over several batches)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters: bool = False, **kwargs) -> None:
        from ... import distributed as dist
        super().__init__()
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.require_backward_grad_sync = True
        self._dist = dist
        dist.get_world_size(process_group)  # a clear error when no process group exists
        with no_grad():
            for t in module.state_dict().values():  # detached tensors sharing memory with the module's
                dist.broadcast(t, 0, process_group)
        self._hooks = [p.register_hook(self._average) for p in module.parameters() if p.requires_grad]

    def _average(self, grad):
        if not self.require_backward_grad_sync:
            return None
        avg = grad.detach().clone()
        self._dist.all_reduce(avg, self._dist.ReduceOp.AVG, self.process_group)
        return avg

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers:
            with no_grad():
                for b in self.module.buffers():
                    self._dist.broadcast(b, 0, self.process_group)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients computed inside the block stay local to this rank (accumulate, sync later)."""
        prev, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = prev
