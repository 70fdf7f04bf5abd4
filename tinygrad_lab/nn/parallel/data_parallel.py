"""nn.DataParallel: one process, several devices, the batch split between them.

Each forward (PyTorch's algorithm, step for step):
  1. scatter   the inputs' tensors are cut into one chunk per device along `dim`, each moved to its device;
  2. replicate the module is copied onto each device; a replica's parameters are differentiable
               copies of the module's, so the gradients flow back to the module's own parameters;
  3. parallel_apply  the replicas run at once, one thread each;
  4. gather    the outputs come back to `output_device`, joined along `dim`.
Every step is an op the engine records, so `backward()` reverses all four.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence

from ...autograd.grad_mode import is_grad_enabled, set_grad_enabled
from ...autograd.tensor_base import TensorBase
from ...backends import Device
from ...ops.movement import cat
from ..modules.module import Module
from ..parameter import is_lazy


def _as_device(d) -> Device:
    return Device("cuda", d) if isinstance(d, int) else Device(d)


def _default_devices() -> list:
    from ... import cuda
    return [Device("cuda", i) for i in range(cuda.device_count())]


def scatter(obj, devices: Sequence, dim: int = 0) -> list:
    """One piece of `obj` per device: tensors chunked along `dim` (fewer pieces when a batch has fewer
    rows than devices), tuples, lists and dicts walked, anything else repeated."""
    if isinstance(obj, TensorBase):
        return [chunk.to(d) for chunk, d in zip(obj.chunk(len(devices), dim), devices)]
    if isinstance(obj, tuple) and obj:
        return [type(obj)(p) if not hasattr(obj, "_fields") else type(obj)(*p)
                for p in zip(*(scatter(o, devices, dim) for o in obj))]
    if isinstance(obj, list) and obj:
        return [list(p) for p in zip(*(scatter(o, devices, dim) for o in obj))]
    if isinstance(obj, Mapping) and obj:
        return [type(obj)(p) for p in scatter(list(obj.items()), devices, dim)]
    return [obj] * len(devices)


def scatter_kwargs(inputs: tuple, kwargs: dict, devices: Sequence, dim: int = 0) -> tuple:
    """The positional and keyword arguments of each replica, as many of each."""
    ins = scatter(inputs, devices, dim) if inputs else []
    kws = scatter(kwargs, devices, dim) if kwargs else []
    n = max(len(ins), len(kws))
    ins += [()] * (n - len(ins))
    kws += [{}] * (n - len(kws))
    return tuple(ins), tuple(kws)


def replicate(network: Module, devices: Sequence) -> list:
    """A copy of `network` per device whose parameters are differentiable copies of the originals
    (the original itself on its own device) and whose buffers are plain copies. A lazy module's
    uninitialised tensors are refused: each replica would set up its own, and the original none."""
    if any(is_lazy(t) for t in [*network.parameters(), *network.buffers()]):
        raise RuntimeError("Modules with uninitialized parameters can't be replicated (DataParallel): run the module "
                           "once on a sample batch first, which gives its lazy layers their shapes")
    return [_copy_module(network, _as_device(d), {}) for d in devices]


def _copy_module(m: Module, device: Device, memo: dict) -> Module:
    if id(m) in memo:  # a submodule used twice stays one module
        return memo[id(m)]
    replica = object.__new__(type(m))
    replica.__dict__.update(m.__dict__)
    memo[id(m)] = replica
    replica.__dict__["_parameters"] = OrderedDict(
        (k, None if p is None else p.to(device)) for k, p in m._parameters.items())
    replica.__dict__["_buffers"] = OrderedDict(
        (k, None if b is None else b.detach().to(device)) for k, b in m._buffers.items())
    replica.__dict__["_modules"] = OrderedDict(
        (k, None if c is None else _copy_module(c, device, memo)) for k, c in m._modules.items())
    return replica


def _run_on(device: Device):
    """A context in which ops run on `device` (the current GPU, for CUDA)."""
    from ... import cuda
    return cuda.device(device if device.type == "cuda" else None)


def parallel_apply(modules: Sequence, inputs: Sequence, kwargs_tup: Sequence | None = None,
                   devices: Sequence | None = None) -> list:
    """modules[i](*inputs[i], **kwargs_tup[i]), each in its own thread under the caller's grad mode;
    an exception in a thread is raised here, with its traceback."""
    kwargs_tup = kwargs_tup or ({},) * len(modules)
    devices = [_as_device(d) for d in devices] if devices is not None else [Device("cpu")] * len(modules)
    results: list = [None] * len(modules)
    grad_enabled = is_grad_enabled()

    def work(i: int) -> None:
        try:
            with set_grad_enabled(grad_enabled), _run_on(devices[i]):
                results[i] = (True, modules[i](*inputs[i], **kwargs_tup[i]))
        except Exception as e:  # raised in the calling thread below
            results[i] = (False, e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(1, len(modules))]
    for t in threads:
        t.start()
    work(0)  # the calling thread runs the first replica
    for t in threads:
        t.join()
    for ok, value in results:
        if not ok:
            raise value
    return [value for _, value in results]


def gather(outputs: Sequence, target_device, dim: int = 0):
    """The replicas' outputs joined along `dim` on `target_device` (tuples, lists and dicts walked)."""
    first = outputs[0]
    if isinstance(first, TensorBase):
        device = _as_device(target_device)
        return cat([o.to(device) for o in outputs], dim)
    if first is None:
        return None
    if isinstance(first, Mapping):
        return type(first)((k, gather([o[k] for o in outputs], target_device, dim)) for k in first)
    if isinstance(first, (tuple, list)):
        parts = [gather(list(p), target_device, dim) for p in zip(*outputs)]
        return type(first)(*parts) if hasattr(first, "_fields") else type(first)(parts)
    return first


class DataParallel(Module):
    """Runs `module` on several devices at once, each on a slice of the batch (torch.nn.DataParallel).

    device_ids     the devices (ints mean CUDA GPUs; strings or devices name any device type);
                   default: every GPU. With none (a machine without a GPU) the module simply runs.
    output_device  where the outputs are gathered (default: device_ids[0])
    dim            the batch dimension to split

    The module's parameters and buffers must be on device_ids[0]; the gradients land there, on
    the module's own parameters. Deviation: the replicas' threads share the engine's record of
    which module is running, so graphs recorded during a parallel forward may name modules loosely.
    """

    def __init__(self, module: Module, device_ids: Sequence | None = None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        devices = _default_devices() if device_ids is None else [_as_device(d) for d in device_ids]
        self.device_ids = devices
        self.dim = dim
        self.output_device = _as_device(output_device) if output_device is not None else (
            devices[0] if devices else None)
        self.src_device_obj = devices[0] if devices else None

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        self._check_placement()
        inputs, kwargs = scatter_kwargs(inputs, kwargs, self.device_ids, self.dim)
        if not inputs:
            inputs, kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, kwargs)
        return self.gather(outputs, self.output_device)

    def _check_placement(self) -> None:
        for t in [*self.module.parameters(), *self.module.buffers()]:
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device {self.src_device_obj} "
                                   f"(device_ids[0]) but found one of them on device: {t.device}")

    def replicate(self, module: Module, device_ids: Sequence) -> list:
        return replicate(module, device_ids)

    def scatter(self, inputs: tuple, kwargs: dict, device_ids: Sequence) -> tuple:
        return scatter_kwargs(inputs, kwargs, device_ids, self.dim)

    def parallel_apply(self, replicas: Sequence, inputs: Sequence, kwargs: Sequence) -> list:
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs: Sequence, output_device):
        return gather(outputs, output_device, self.dim)

    def extra_repr(self) -> str:
        return f"device_ids={[str(d) for d in self.device_ids]}" if self.device_ids else ""


def data_parallel(module: Module, inputs, device_ids: Sequence | None = None, output_device=None, dim: int = 0,
                  module_kwargs: dict | None = None):
    """The functional form: DataParallel(module, device_ids, output_device, dim)(*inputs, **module_kwargs)."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
