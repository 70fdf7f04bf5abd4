"""`trace()` and the callable it returns."""
from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence

import numpy as np

from ..autograd.grad_mode import no_grad
from ..autograd.tensor_base import TensorBase
from ..nn.modules.module import Module
from .codegen import compile_trace
from .ir import Trace, Value
from .tracer import TracerWarning, record


class TracedFunction:
    """A function traced once, replayed on every call (see `tinygrad_lab.jit`).

    trace          the recorded static graph (`print(traced)` lists it, like torch.jit's .graph)
    code           the generated Python source of the replay
    kernels        per fused group: (its ops, the CUDA source when it runs as one generated kernel)
    fn             the traced function or module
    example_inputs the inputs it was traced with (kept: `graph()` replays them)
    """

    def __init__(self, fn: Callable, trace: Trace, example_inputs: tuple, fuse: bool):
        self.fn, self.trace, self.example_inputs, self.fused = fn, trace, example_inputs, fuse
        compiled = compile_trace(trace, fuse, self._mismatch, self._stale)
        self._forward = compiled.forward
        self.code, self.kernels = compiled.source, compiled.kernels

    def __call__(self, *inputs: TensorBase) -> Any:
        try:
            return self._forward(*inputs)
        except TypeError:
            if len(inputs) != len(self.trace.inputs):
                raise TypeError(f"{self.trace.name} was traced with {len(self.trace.inputs)} input(s), "
                                f"got {len(inputs)}") from None
            raise

    # ------------------------------------------------------------ the guard's errors
    def _mismatch(self, k: int, t: Any) -> None:
        """Input k failed the quick guard: raise, naming what differs (unless only the dtype object did)."""
        v = self.trace.inputs[k]
        if not isinstance(t, TensorBase):
            raise TypeError(f"{self.trace.name} was traced for input {k} of {_spec(v)}, got a {type(t).__name__}")
        got = _differences(v, t)
        if got:
            raise RuntimeError(f"{self.trace.name} was traced for input {k} of {_spec(v)}, got {got}. A trace is "
                               f"specialised to the shapes, dtypes and devices it was traced with: trace again "
                               f"with inputs like these (jit.trace(fn, new_inputs)).")

    def _stale(self, k: int) -> None:
        v = self.trace.captured[k]
        got = _differences(v, v.tensor)
        if got:
            raise RuntimeError(f"{self.trace.name}: captured tensor {v.name} was traced as {_spec(v)} and is now {got} "
                               f"(moved or converted after tracing?). Trace again after changing the model.")

    # ------------------------------------------------------------ views for the lessons
    def graph(self, *inputs: TensorBase):
        """The traced forward as a `tinygrad_lab.graph` Graph (for `render` and the GraphView widget):
        the trace replayed through the engine on `inputs` (default: the example inputs) while
        `graph.record()` listens, so it shows exactly the ops the trace runs."""
        # imported here: tracing does not need the graph package
        from .. import graph as graph_module
        with graph_module.record({v.name: v.tensor for v in self.trace.captured}) as rec:
            self(*(inputs or self.example_inputs))  # a subscriber listens: the replay goes through the engine
        return rec.graph

    def __str__(self) -> str:
        return self.trace.listing()

    def __repr__(self) -> str:
        fused = f", {len(self.kernels)} fused kernel(s)" if self.fused else ""
        return f"<TracedFunction of {self.trace.name}: {len(self.trace.steps)} steps{fused}>"

    def _check(self, k: int, inputs: Sequence[TensorBase]) -> None:
        """Run the function and the trace on `inputs`; warn where their outputs differ."""
        with no_grad():
            expected, got = self.fn(*inputs), self(*inputs)
        pairs = zip(_tensors(expected), _tensors(got))
        for i, (e, g) in enumerate(pairs):
            a, b = (t._device.backend.to_host(t._data) for t in (e, g))
            if a.shape != b.shape or not np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True):
                warnings.warn(f"jit.trace: on check inputs {k}, output {i} of the trace differs from what "
                              f"{self.trace.name} computes eagerly. The trace froze something that depends on the "
                              f"input values (a Python branch, a value turned into a Python number): see the "
                              f"TracerWarnings above, and use the function eagerly for such inputs.",
                              TracerWarning, stacklevel=3)


def _spec(v: Value) -> str:
    return f"shape {list(v.shape)} {v.dtype.name} on {v.device}"


def _differences(v: Value, t: TensorBase) -> str:
    """What differs between traced value v and tensor t: 'shape [5]', 'float64', 'on standin'."""
    got = []
    if tuple(t._data.shape) != v.shape:
        got.append(f"shape {list(t._data.shape)}")
    if t._data.dtype != v.dtype:
        got.append(t._data.dtype.name)
    if t._device is not v.device:
        got.append(f"on {t._device}")
    return " ".join(got)


def _tensors(out: Any):
    """The tensors of a result, in order (through nested tuples and lists)."""
    if isinstance(out, TensorBase):
        yield out
    else:
        for o in out:
            yield from _tensors(o)


def trace(fn: Callable, example_inputs: TensorBase | Sequence[TensorBase], *, fuse: bool = True,
          check_inputs: Sequence[Sequence[TensorBase]] | None = None) -> TracedFunction:
    """Run `fn(*example_inputs)` once, record its ops, and return a callable that replays them.

    fn              a function of tensors, or an nn.Module (its parameters and buffers are
                    captured by reference: training the module changes what the trace computes)
    example_inputs  a tensor or a sequence of tensors, passed positionally; calls must match
                    their shapes, dtypes and devices
    fuse            run chains of elementwise ops as one kernel when no gradient is needed
    check_inputs    more input tuples to compare the replay with `fn` on (as torch.jit.trace's
                    check_inputs): a TracerWarning where they differ
    """
    inputs = (example_inputs,) if isinstance(example_inputs, TensorBase) else tuple(example_inputs)
    name = type(fn).__name__ if isinstance(fn, Module) else getattr(fn, "__qualname__", type(fn).__name__)
    traced = TracedFunction(fn, record(fn, inputs, name).eliminate_dead_code(), inputs, fuse)
    for k, check in enumerate(check_inputs or ()):
        traced._check(k, (check,) if isinstance(check, TensorBase) else tuple(check))
    return traced
