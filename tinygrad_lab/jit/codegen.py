"""Compiling a trace to Python source: the replay is generated code, as torch.fx generates it.

A trace becomes two functions, whose source is `TracedFunction.code`:

    forward(x0, ...)         checks each input's shape, dtype and device (and that captured
                             tensors were not changed under the trace); then, when a gradient
                             is needed or someone subscribes to the engine's events (a graph
                             recorder, a profiler, an enclosing trace), hands over to
                             forward_engine; otherwise it runs each op's forward directly on
                             the arrays, with no dispatch (no argument checks, no grad mode,
                             no events, no graph nodes), elementwise chains fused (fusion.py)
                             unless disabled;
    forward_engine(x0, ...)  every op through Function.apply, so autograd records the graph
                             exactly as in eager mode, backward() works unchanged and every op
                             is published (the module scopes are restored too, so a recorded
                             graph groups nodes by layer as in eager mode).

Straight-line generated code has no interpreter loop over steps: the only Python work per op
is the call itself.
"""
from __future__ import annotations

import itertools
import linecache
import math
import re
from typing import Any, Callable, NamedTuple

import numpy as np

from ..autograd import events
from ..autograd.function import NullContext, scope_stack
from ..autograd.grad_mode import state as grad_state
from ..autograd.tensor_base import make, tensor_types
from ..ops.elementwise import sigmoid_into
from ..ops.transfer import ToDevice
from . import fusion
from .ir import ArrayOf, Trace, Value, short_repr

_LITERALS = (type(None), bool, int, str)
_compiled = itertools.count()


class Compiled(NamedTuple):
    """The generated replay and its source."""

    forward: Callable
    source: str
    kernels: tuple  # per fused group: (its ops, the CUDA source or None when it runs as ufuncs)


def _runs_through_apply(fn: type) -> bool:
    """User Functions compute with ops (their forward wants grad mode handled) and ToDevice returns
    a tensor: the array path runs these through Function.apply."""
    return not fn.array_forward or fn is ToDevice


class _Writer:
    """Builds the source and the namespace it runs in."""

    def __init__(self, trace: Trace, fuse: bool):
        self.trace = trace
        self.ns: dict = {"_grad": grad_state, "_subscribers": events.subscribers, "_make": make, "_scope": scope_stack,
                         "_tensor_types": tensor_types, "_sigmoid": sigmoid_into,
                         "forward": None, "forward_engine": None}  # reserved: the generated functions
        self.names: dict = {}  # id(object) -> its name in ns
        self.constants: list = []  # names of the constants bound by reference
        self.tensor: dict = {}  # value id -> expression of the value as a tensor (engine path: every value)
        for v in trace.inputs:
            self.tensor[v.id] = v.name
        for v in trace.captured:
            self.tensor[v.id] = self.bind(v.tensor, "p_" + re.sub(r"\W", "_", v.name))
        self.groups = fusion.plan(trace) if fuse else {}

    def bind(self, obj: Any, stem: str) -> str:
        """The name of `obj` in the namespace (the same object always gets the same name)."""
        name = self.names.get(id(obj))
        if name is None:
            name = stem if stem not in self.ns else next(f"{stem}{k}" for k in itertools.count(1)
                                                          if f"{stem}{k}" not in self.ns)
            self.ns[name] = obj
            self.names[id(obj)] = name
        return name

    def device(self, v: Value) -> str:
        return self.bind(v.device, "_dev")

    def ctx(self, v: Value) -> str:
        key = ("ctx", v.device._str)
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = self.bind(NullContext(v.device), "_ctx")
        return name

    def fn(self, fn: type) -> str:
        return self.bind(fn, fn.__name__)

    def constant(self, obj: Any, array: Callable[[Value], str]) -> str:
        """Source for a constant argument: a literal where Python has one, else a name bound to it."""
        if isinstance(obj, ArrayOf):
            return array(obj.value)
        if isinstance(obj, (tuple, list)):
            items = ", ".join(self.constant(o, array) for o in obj)
            return f"({items},)" if isinstance(obj, tuple) and len(obj) == 1 else \
                f"({items})" if isinstance(obj, tuple) else f"[{items}]"
        if type(obj) in _LITERALS or (type(obj) is float and math.isfinite(obj)):
            return repr(obj)
        if obj is Ellipsis:
            return "..."
        if type(obj) is slice:
            return f"slice({self.constant(obj.start, array)}, {self.constant(obj.stop, array)}, " \
                   f"{self.constant(obj.step, array)})"
        name = self.names.get(id(obj))
        if name is None:
            name = self.bind(obj, f"const{len(self.constants)}")
            self.constants.append(name)
        return name

    def number(self, x: float, like: Value) -> str:
        """A number operand of a fused kernel as a 0-d array of the kernel's dtype: the value NumPy
        would convert the Python number to on every call (NEP 50), converted once."""
        key = ("number", repr(x), like.dtype.name, like.device._str)
        name = self.names.get(key)
        if name is None:
            arr = like.device.backend.asarray(np.asarray(x, dtype=like.dtype), index=like.device.index or 0)
            name = self.names[key] = self.bind(arr, re.sub(r"\W", "_", f"_{like.dtype.name}_{x!r}"))
        return name

    # ------------------------------------------------------------ forward: the guard
    def guard(self, mismatch: Callable, stale: Callable) -> list:
        self.ns["_mismatch"], self.ns["_stale"] = mismatch, stale
        lines = []
        for k, v in enumerate(self.trace.inputs):
            lines.append(f"    if {v.name}.__class__ not in _tensor_types or {self._differs(v.name, v)}:")
            lines.append(f"        _mismatch({k}, {v.name})")
        for k, v in enumerate(self.trace.captured):
            name = self.tensor[v.id]
            lines.append(f"    if {self._differs(name, v)}:")
            lines.append(f"        _stale({k})")
        return lines

    def _differs(self, name: str, v: Value) -> str:
        dtype = self.bind(v.dtype, "_dtype")
        return (f"{name}._data.shape != {v.shape!r} or {name}._data.dtype is not {dtype} "
                f"or {name}._device is not {self.device(v)}")

    # ------------------------------------------------------------ the engine path
    def engine(self, signature: str) -> list:
        lines = [f"def forward_engine({signature}):",
                 "    # through the engine: each op runs through Function.apply (autograd records it, events go out)"]
        body, scope = [], ()
        scopes: list = []
        for step in self.trace.steps:
            if step.scope != scope:
                scope = step.scope
                scopes.append(scope)
                body.append(f"_scope[depth:] = _scopes[{len(scopes) - 1}]  # {step.scope_name or 'top'}")
            for v in step.outputs:
                self.tensor[v.id] = v.name
            args = ", ".join(self.tensor[a.id] if isinstance(a, Value) else
                             self.constant(a, lambda v: f"{self.tensor[v.id]}._data") for a in step.args)
            outs = ", ".join(self.tensor[v.id] for v in step.outputs)
            body.append(f"{outs} = {self.fn(step.fn)}.apply({args})")
        body.append(f"return {self._result(lambda v: self.tensor[v.id])}")
        if not scopes:
            return lines + ["    " + b for b in body]
        self.ns["_scopes"] = scopes
        return lines + ["    depth = len(_scope)", "    try:"] + ["        " + b for b in body] + \
            ["    finally:", "        del _scope[depth:]"]

    # ------------------------------------------------------------ the array path
    def arrays(self) -> tuple[list, list]:
        """The body of the path without gradient, and the fused kernels it runs."""
        self.array: dict = {v.id: f"{self.tensor[v.id]}._data" for v in self.trace.inputs + self.trace.captured}
        self.shell: dict = {v.id: self.tensor[v.id] for v in self.trace.inputs + self.trace.captured}
        self.body: list = ["# no gradient: the ops' forwards on arrays, without dispatch"]
        kernels = []
        for step in self.trace.steps:
            group = self.groups.get(step)
            if group is None:
                self._call(step)
            elif step is group.root:
                kernels.append(self._group(group, len(kernels)))
        self.body.append(f"return {self._result(self._as_tensor)}")
        return ["    " + b for b in self.body], kernels

    def _as_tensor(self, v: Value) -> str:
        """The value as a tensor: a computed array gets a tensor shell (once)."""
        name = self.shell.get(v.id)
        if name is None:
            name = self.shell[v.id] = f"{v.name}_t"
            self.body.append(f"{name} = _make({self.array[v.id]}, {self.device(v)})")
        return name

    def _call(self, step) -> None:
        args = [self._as_tensor(a) if isinstance(a, Value) else self.constant(a, lambda v: self.array[v.id])
                for a in step.args]
        first = next(a for a in step.args if isinstance(a, Value))
        for v in step.outputs:
            self.array[v.id] = v.name
        outs = ", ".join(v.name for v in step.outputs)
        if _runs_through_apply(step.fn):
            call = f"{self.fn(step.fn)}.apply({', '.join(args)})"
            if len(step.outputs) == 1:
                self.body.append(f"{outs} = {call}._data")
            else:
                self.body.append(f"{outs} = (t._data for t in {call})")
        else:
            self.body.append(f"{outs} = {self.fn(step.fn)}.forward({', '.join([self.ctx(first)] + args)})")

    def _group(self, group: fusion.Group, k: int) -> tuple:
        """One fused kernel: a generated CUDA kernel on a CuPy device, else ufuncs into buffers."""
        root = group.root.outputs[0]
        kernel = fusion.cuda_kernel(group, f"tinygrad_lab_fused_{k}")
        if kernel is not None:
            name = self.bind(kernel, f"_kernel{k}")
            self.body.append(f"# fused kernel {k}: {group.names()} (one CUDA kernel)")
            self.array[root.id] = root.name
            self.body.append(f"{root.name} = {name}({', '.join(self.array[v.id] for v in group.inputs)})")
            return group.names(), fusion.cuda_source(group)[2]
        backend = root.device.backend
        xp = self.bind(backend.xp, "_xp")
        buffers = [self.bind(backend.asarray(np.empty(shape, dtype), index=root.device.index or 0), f"_buf{k}_{b}")
                   for b, (shape, dtype) in enumerate(group.buffers)]
        reuse = f"{len(buffers)} buffer{'s' * (len(buffers) != 1)} reused between calls" if buffers else "no buffers"
        self.body.append(f"# fused kernel {k}: {group.names()} ({reuse})")
        if group.buffer_of[root.id] is None:  # the root's array leaves the trace: a new one per call
            self.body.append(f"{root.name} = {xp}.empty({root.shape!r}, {self.bind(root.dtype, '_dtype')})")
        for s in group.steps:
            out = s.outputs[0]
            b = group.buffer_of[out.id]
            target = out.name if b is None else buffers[b]
            call = fusion.cpu_call(s, xp, target, lambda v: self.array[v.id], self.number)
            self.array[out.id] = out.name
            self.body.append(f"{out.name} = {call}")
        return group.names(), None

    def _result(self, expr: Callable[[Value], str], obj: Any = None) -> str:
        """The return expression: the result's structure with `expr(v)` for each value."""
        obj = self.trace.result if obj is None else obj
        if isinstance(obj, Value):
            return expr(obj)
        items = ", ".join(self._result(expr, o) for o in obj)
        if isinstance(obj, list):
            return f"[{items}]"
        if hasattr(type(obj), "_make"):  # a named tuple (max(dim)'s values/indices)
            return f"{self.bind(type(obj), type(obj).__name__)}({items})"
        return f"({items},)"


def compile_trace(trace: Trace, fuse: bool, mismatch: Callable, stale: Callable) -> Compiled:
    """Generate and compile the replay of `trace` (see the module docstring). `mismatch(k, t)`
    is called when input k fails the guard and `stale(k)` when captured tensor k changed."""
    w = _Writer(trace, fuse)
    signature = ", ".join(v.name for v in trace.inputs)
    float_tensors = [w.tensor[v.id] for v in trace.inputs + trace.captured if v.dtype.kind == "f"]
    lines = [f"def forward({signature}):", *w.guard(mismatch, stale)]
    needs_grad = f" or _grad.enabled and ({' or '.join(t + '._requires_grad' for t in float_tensors)})" \
        if float_tensors else ""
    lines.append(f"    if _subscribers{needs_grad}:  # someone listens to the op events, or a gradient is needed")
    lines.append(f"        return forward_engine({signature})")
    engine = w.engine(signature)
    arrays, kernels = w.arrays()
    constants = [f"#   {name} = {short_repr(w.ns[name], 60)}" for name in w.constants]
    source = "\n".join(([f"# constants of the trace of {trace.name} (kept by reference):"] + constants + [""]
                        if constants else []) + lines + arrays + [""] + engine) + "\n"
    filename = f"<jit trace of {trace.name} #{next(_compiled)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show the code
    exec(compile(source, filename, "exec"), w.ns)
    return Compiled(w.ns["forward"], source, tuple(kernels))

