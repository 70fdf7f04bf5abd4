"""Recording a trace: run the function once and listen to the engine's event stream.

`Function.apply` publishes an `OpEvent` for every op (autograd.events, the engine's one
instrumentation point). The recorder identifies each tensor argument of each op:

1. an earlier op's output or an input of the traced function: by object identity;
2. a tensor sharing the array of one of those (`t.detach()`, `t.data`): the same values,
   recorded as a `Detach` step so that a replay with gradients cuts the graph there too;
3. anything else is *captured by reference*: parameters and buffers (named by their path in
   the module), tensors from the enclosing scope, and tensors the function made itself
   (`torch.zeros(...)` for a hidden state). A replay reads the captured tensor's current
   array, so training a traced model updates what the trace computes; a tensor the function
   created during the trace keeps the values it had then.

While the function runs, the recorder also watches for what a trace cannot represent:

- a traced tensor turned into a Python value (`bool(t)`, `if t > 0:`, `t.item()`, `float(t)`,
  `t.tolist()`, `t.numpy()`): the Python code that used the value ran once and is frozen
  into the trace, so a `TracerWarning` says so;
- random numbers drawn (dropout in training mode, `randn`): frozen as constants (a warning);
- a tensor changed in place and then used again: the change itself is no op the stream
  shows, so replaying would read stale values: a `TracingError`; in-place updates of inputs
  or captured tensors that nothing reads afterwards (BatchNorm's running statistics in
  training mode) only warn, since replays will not repeat them;
- `backward()` inside the traced function: the backward engine's ops are not published, so
  the trace would miss them: a `TracingError`.
"""
from __future__ import annotations

import functools
import itertools
import sys
import warnings
from typing import Any, Callable, Sequence

from .. import random as _random
from ..autograd import events
from ..autograd.engine import BackwardStep
from ..autograd.events import OpEvent
from ..autograd.function import Function, scope_stack
from ..autograd.tensor_base import TensorBase
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..tensor import Tensor
from .ir import CAPTURED, COMPUTED, INPUT, ArrayOf, Step, Trace, Value, values_in


class TracerWarning(UserWarning):
    """The trace may not generalise to other inputs (as torch.jit.TracerWarning): a Python branch
    used a tensor's value, random numbers were frozen, or an in-place update will not be replayed."""


class TracingError(RuntimeError):
    """The function did something a trace cannot record faithfully (in-place changes of traced
    tensors, backward, outputs that are not tensors)."""


class Detach(Function):
    """The same values cut from the graph: what `t.detach()` and `t.data` do, as a trace step."""

    is_view = True
    differentiable = False
    array_forward = True

    @staticmethod
    def forward(ctx, x):
        return x._data


# The ways a tensor's value can leave the graph for Python code, wrapped while tracing.
_CONVERSIONS = ("__bool__", "__float__", "__int__", "__index__", "item", "tolist", "numpy")


class _Recorder:
    """The event subscriber that builds the trace."""

    def __init__(self, root: Module | None):
        self.steps: list[Step] = []
        self.captured: list[Value] = []
        self.by_tensor: dict = {}  # id(tensor) -> (Value, its version when seen)
        self.by_array: dict = {}   # id(array) -> Value
        self.tensors: list = []    # by value id: the tensor it was traced from (alive, so ids stay unique)
        self.dynamic: set = set()  # ids of values that depend on the inputs or on parameters/buffers
        self.names: dict = {}      # id(tensor) -> parameter/buffer path, per root module seen
        self.module_paths: dict = {}
        self.roots: set = set()
        self.converting = False    # inside a wrapped conversion (bool calls item: warn once)
        self.warned: set = set()   # (file, line) of the conversions already warned about: a loop warns once
        self.depth = len(scope_stack)  # modules already running when the trace began are not part of it
        self._constants = itertools.count()
        if root is not None:
            self._learn_names(root)

    # ------------------------------------------------------------ naming
    def _learn_names(self, root: Module) -> None:
        """Parameter/buffer and module paths of `root` (the traced module, or the outermost module
        an op ran in when a plain function is traced)."""
        if id(root) in self.roots:
            return
        self.roots.add(id(root))
        for name, t in itertools.chain(root.named_parameters(), root.named_buffers()):
            self.names.setdefault(id(t), name)
        for path, m in root.named_modules():
            self.module_paths.setdefault(id(m), path or type(m).__name__)

    def _new_value(self, t: TensorBase, kind: str, name: str, dynamic: bool) -> Value:
        v = Value(len(self.tensors), name, kind, t)
        self.by_tensor[id(t)] = (v, t._version)
        self.by_array[id(t._data)] = v
        self.tensors.append(t)
        if dynamic:
            self.dynamic.add(v.id)
        return v

    # ------------------------------------------------------------ identifying tensors
    def add_input(self, t: TensorBase, i: int) -> Value:
        if not isinstance(t, TensorBase):
            raise TypeError(f"jit.trace: example input {i} is a {type(t).__name__}; traced functions take tensors")
        twin = self.by_tensor.get(id(t), (None,))[0] or self.by_array.get(id(t._data))
        if twin is not None:
            raise ValueError(f"jit.trace: example inputs {twin.name[1:]} and {i} share one array; the trace could not "
                             f"tell them apart. Pass distinct tensors (e.g. x.clone()).")
        return self._new_value(t, INPUT, f"x{i}", True)

    def value_of(self, t: TensorBase, where: str) -> Value:
        """The Value of tensor argument `t` of an op (or of the function's result)."""
        hit = self.by_tensor.get(id(t))
        if hit is not None:
            v, version = hit
            if t._version != version:
                raise TracingError(
                    f"jit.trace: {v.name} ({v.describe()}) was modified in place and then used by {where}. "
                    f"In-place changes are not ops the tracer can record: use the out-of-place form "
                    f"(x = x + 1 rather than x += 1, x.relu() rather than x.relu_()).")
            return v
        v = self.by_array.get(id(t._data))
        if v is not None:  # t.detach() or t.data: same array, no graph
            return self._record(Detach, (v,), (t,))[0]
        if len(scope_stack) > self.depth:
            self._learn_names(scope_stack[self.depth])
        name = self.names.get(id(t))
        dynamic = name is not None or isinstance(t, Parameter)
        v = self._new_value(t, CAPTURED, name or f"c{next(self._constants)}", dynamic)
        self.captured.append(v)
        return v

    def _argument(self, a: Any, where: str) -> Any:
        """An op argument as the trace keeps it: a Value, a constant, or a container with ArrayOf."""
        if isinstance(a, TensorBase):
            return self.value_of(a, where)
        if isinstance(a, (tuple, list)):
            return _rebuilt(a, [self._argument(x, where) for x in a])
        v = self.by_array.get(id(a))
        return ArrayOf(v) if v is not None else a

    def is_dynamic(self, t: TensorBase) -> bool:
        hit = self.by_tensor.get(id(t))
        v = hit[0] if hit is not None else self.by_array.get(id(t._data))
        return v is not None and v.id in self.dynamic

    # ------------------------------------------------------------ events
    def __call__(self, event) -> None:
        if event.__class__ is OpEvent:
            where = f"op {event.fn.__name__}"
            args = tuple(self._argument(a, where) for a in event.args)
            self._record(event.fn, args, event.outputs)
        elif isinstance(event, BackwardStep):
            raise TracingError("jit.trace: the traced function ran backward(); the tracer records forward ops only. "
                               "Trace the forward computation (e.g. the model, or model + loss) and call "
                               "backward() on the traced function's output.")

    def _record(self, fn: type, args: tuple, outputs: tuple) -> tuple:
        dynamic = any(v.id in self.dynamic for a in args for v in values_in(a))
        scope = tuple(scope_stack[self.depth:])
        scope_name = self.module_paths.get(id(scope[-1]), type(scope[-1]).__name__) if scope else ""
        outs = tuple(self._new_value(t, COMPUTED, f"v{len(self.steps)}" + (f"_{nr}" if len(outputs) > 1 else ""),
                                     dynamic) for nr, t in enumerate(outputs))
        self.steps.append(Step(fn, args, outs, scope, scope_name))
        return outs

    # ------------------------------------------------------------ the end of the run
    def _result(self, obj: Any) -> Any:
        """The function's result with Values for its tensors (tuples, named tuples and lists kept)."""
        if isinstance(obj, TensorBase):
            return self.value_of(obj, "the function's result")
        if isinstance(obj, (tuple, list)) and obj:
            return _rebuilt(obj, [self._result(o) for o in obj])
        raise TracingError(f"jit.trace: the traced function must return tensors (a tensor, or tuples/lists of "
                           f"tensors), got {type(obj).__name__} {obj!r:.40}")

    def finish(self, result: Any, inputs: Sequence[Value], name: str) -> Trace:
        result = self._result(result)
        changed = [v for v in itertools.chain(inputs, self.captured)
                   if self.tensors[v.id]._version != self.by_tensor[id(self.tensors[v.id])][1]]
        if changed:
            warnings.warn(f"jit.trace: {name} modified {', '.join(f'{v.name} ({v.describe()})' for v in changed)} in "
                          f"place while being traced (e.g. BatchNorm's running statistics in training mode). In-place "
                          f"updates are not part of the trace: replays will not repeat them.", TracerWarning,
                          stacklevel=4)
        return Trace(tuple(inputs), tuple(self.captured), self.steps, result, name)


def _rebuilt(container: tuple | list, items: list) -> tuple | list:
    """A tuple or list (or named tuple, or Size) of the same type holding `items`."""
    kind = type(container)
    return kind._make(items) if hasattr(kind, "_make") else kind(items)


# ------------------------------------------------------------ watching Python use tensor values

def _warn_conversion(recorder: _Recorder, method: str, original: Callable) -> Callable:
    """`method` of Tensor, warning when a traced (input- or parameter-dependent) tensor's value
    flows into Python: once per source line per trace (a loop warns once), and a conversion made
    inside another one (bool calls item) does not warn again."""
    shown = {"__bool__": "bool(tensor) (an `if`/`while` on a tensor, or `and`/`or`/`not`)",
             "__float__": "float(tensor)", "__int__": "int(tensor)", "__index__": "a tensor used as a Python index",
             "item": "tensor.item()", "tolist": "tensor.tolist()", "numpy": "tensor.numpy()"}[method]

    @functools.wraps(original)
    def wrapper(self, *args, **kwargs):
        if recorder.converting or not recorder.is_dynamic(self):
            return original(self, *args, **kwargs)
        caller = sys._getframe(1)
        site = (caller.f_code.co_filename, caller.f_lineno)
        recorder.converting = True
        try:
            if site not in recorder.warned:
                recorder.warned.add(site)
                warnings.warn(
                    f"jit.trace: {shown} turned a traced tensor of shape {list(self._data.shape)} into a Python "
                    f"value. The Python code that used it ran once, with the example inputs, and is frozen into "
                    f"the trace: a branch taken here is taken on every replay, whatever the new values are.",
                    TracerWarning, stacklevel=2)
            return original(self, *args, **kwargs)
        finally:
            recorder.converting = False

    return wrapper


def _warn_random(original: Callable) -> Callable:
    @functools.wraps(original)
    def drawing(*args):
        warnings.warn("jit.trace: random numbers were drawn while tracing (dropout in training mode, rand/randn): "
                      "they are frozen into the trace as constants and every replay reuses them. Trace the model in "
                      "eval() mode, or pass random tensors as inputs.", TracerWarning, stacklevel=3)
        return original(*args)

    return drawing


def record(fn: Callable, example_inputs: tuple, name: str) -> Trace:
    """Run `fn(*example_inputs)` once and return its trace (see the module docstring)."""
    if events.state.muted:
        raise TracingError("jit.trace cannot run inside an op's forward or an event subscriber: "
                           "the engine publishes no events there")
    owner = fn if isinstance(fn, Module) else getattr(fn, "__self__", None)  # a module, or model.forward's
    recorder = _Recorder(owner if isinstance(owner, Module) else None)
    inputs = [recorder.add_input(t, i) for i, t in enumerate(example_inputs)]
    patched = {m: getattr(Tensor, m) for m in _CONVERSIONS}
    streams = {attr: getattr(_random, attr) for attr in ("generator", "numpy_generator")}  # global, and generator=
    try:
        for m, original in patched.items():
            setattr(Tensor, m, _warn_conversion(recorder, m, original))
        for attr, original in streams.items():
            setattr(_random, attr, _warn_random(original))
        with events.subscribe(recorder):
            result = fn(*example_inputs)
    finally:  # the class and the module are shared: always restore them
        for m, original in patched.items():
            setattr(Tensor, m, original)
        for attr, original in streams.items():
            setattr(_random, attr, original)
    return recorder.finish(result, inputs, name)
