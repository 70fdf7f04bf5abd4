"""Mixed precision's API, as torch.amp: `autocast` and `GradScaler`, so that training loops written
for it run unchanged.

`GradScaler` is the real thing: float16 gradients of small losses underflow to 0, so the loss is
multiplied by a large scale before backward, the gradients are divided by it before the step, a step
whose gradients hold an inf or nan is skipped, and the scale shrinks after such a step and grows after
`growth_interval` good ones. As in PyTorch, a scaler for "cuda" on a machine without CUDA disables
itself (with a warning) and passes everything through.

`autocast` marks a region (and `is_autocast_enabled` says so) but casts nothing: every op computes in
its inputs' dtype, float32 where PyTorch's CPU autocast would use bfloat16, which tinygrad_lab does not
have. Results are then closer to exact than PyTorch's, not equal to them. "cuda" without CUDA disables
itself with a warning, as in PyTorch.
"""
from __future__ import annotations

import functools
import threading

from . import cuda
from ._warn import warn
from .autograd.grad_mode import no_grad
from .autograd.tensor_base import TensorBase

__all__ = ["GradScaler", "autocast", "is_autocast_enabled"]

class _Regions(threading.local):
    """Per thread: device type -> whether an autocast region is open."""

    def __init__(self):
        self.open: dict = {}


_regions = _Regions()


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    return _regions.open.get(device_type, False)


def _usable(device_type: str, what: str) -> bool:
    if device_type == "cuda" and not cuda.is_available():
        warn(f"{what}: CUDA is not available. Disabling.")
        return False
    return True


class autocast:  # noqa: N801 (PyTorch's name)
    """A region (with-block or decorator) where PyTorch would run some ops in lower precision; here ops
    keep their dtypes (see the module's docstring)."""

    def __init__(self, device_type: str = "cuda", dtype=None, enabled: bool = True, cache_enabled=None):
        self.device_type, self.dtype = device_type, dtype
        self.enabled = enabled and _usable(device_type, "autocast")

    def __enter__(self):
        self.outer = _regions.open.get(self.device_type, False)
        _regions.open[self.device_type] = self.enabled
        return self

    def __exit__(self, *exc):
        _regions.open[self.device_type] = self.outer

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.dtype, self.enabled):
                return fn(*args, **kwargs)
        return wrapper


class GradScaler:
    """Loss scaling for float16 training: scale(loss).backward(), step(optimizer), update()."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._enabled = enabled and _usable(device, "GradScaler")
        self._scale, self._growth_tracker = float(init_scale), 0
        self._growth_factor, self._backoff_factor, self._growth_interval = growth_factor, backoff_factor, growth_interval
        self._found_inf = False
        self._unscaled: set = set()  # ids of the optimizers unscaled since the last update

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """outputs (a tensor, or lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, TensorBase):
            return outputs * self._scale
        return type(outputs)(self.scale(o) for o in outputs)

    def unscale_(self, optimizer) -> None:
        """Divide optimizer's gradients by the scale (in place), noting any inf or nan; once per step."""
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        self._unscaled.add(id(optimizer))
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(1.0 / self._scale)
                        self._found_inf |= not bool(p.grad.isfinite().all())

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(), unless the (unscaled) gradients hold an inf or nan."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        return None if self._found_inf else optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        """Back off after a skipped step, grow after growth_interval good ones (or set new_scale)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, TensorBase) else new_scale)
        elif self._found_inf:
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._found_inf, self._unscaled = False, set()

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state: dict) -> None:
        if not state:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale, self._growth_factor = float(state["scale"]), state["growth_factor"]
        self._backoff_factor, self._growth_interval = state["backoff_factor"], state["growth_interval"]
        self._growth_tracker = state["_growth_tracker"]


class DeviceAmp:
    """torch.cuda.amp's (deprecated) names: autocast and GradScaler with the device filled in."""

    def __init__(self, device_type: str):
        self.device_type = device_type

    def autocast(self, enabled: bool = True, dtype=None, cache_enabled=None) -> autocast:
        return autocast(self.device_type, dtype, enabled, cache_enabled)

    def GradScaler(self, *args, **kwargs) -> GradScaler:  # noqa: N802 (PyTorch's name)
        return GradScaler(self.device_type, *args, **kwargs)
