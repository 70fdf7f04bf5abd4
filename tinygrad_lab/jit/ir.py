"""The static graph a trace records: values, steps, and the passes that only a static graph allows.

A `Trace` is a straight-line program. Each `Step` is one op (its `Function` class) applied to
arguments that are either `Value`s (tensors: an input, a captured tensor, or an earlier step's
output) or constants (everything else: dims, shapes, dtypes, a convolution's geometry), kept by
reference. A constant container (an index key) may hold `ArrayOf(value)`: the array of a traced
value, substituted afresh on every replay (so `weight[indices]` follows new indices).

    x0 = input                     v0 = Mul(x0, x1)
    x1 = input          ->         v1 = Add(v0, x2)
    x2 = input                     v2 = Relu(v1)
                                   v3 = Sum(v2, None, False)
                                   return v3
"""
from __future__ import annotations

from typing import Any, Iterator

INPUT, CAPTURED, COMPUTED = "input", "captured", "computed"


class Value:
    """A tensor of the trace: what it is (`kind`), and its shape, dtype and device when traced.

    kind     'input' (an argument of the traced function), 'captured' (a tensor the function
             read that it did not compute: a parameter, a buffer, a tensor from the enclosing
             scope; `tensor` is that tensor, read afresh on every replay) or 'computed'
             (the output of a step)
    name     how listings and generated code call it: x0, fc1.weight, v3
    """

    __slots__ = ("id", "name", "kind", "shape", "dtype", "device", "tensor")

    def __init__(self, id: int, name: str, kind: str, tensor) -> None:
        self.id, self.name, self.kind = id, name, kind
        self.shape, self.dtype, self.device = tuple(tensor._data.shape), tensor._data.dtype, tensor._device
        self.tensor = tensor if kind == CAPTURED else None

    def describe(self) -> str:
        """'[64, 10] float32 on cpu'"""
        return f"{list(self.shape)} {self.dtype.name} on {self.device}"

    def __repr__(self) -> str:
        return f"<Value {self.name}: {self.describe()}>"


class ArrayOf:
    """Inside a constant argument (an index key): the array of traced value `value`."""

    __slots__ = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"{self.value.name}.array"


class Step:
    """One op of the trace: outputs = fn(*args). `scope` is the stack of nn.Modules it ran in
    (outermost first) and `scope_name` the innermost one's path ('fc1'; '' at the top)."""

    __slots__ = ("fn", "args", "outputs", "scope", "scope_name")

    def __init__(self, fn: type, args: tuple, outputs: tuple, scope: tuple, scope_name: str) -> None:
        self.fn, self.args, self.outputs, self.scope, self.scope_name = fn, args, outputs, scope, scope_name

    def values(self) -> Iterator[Value]:
        """The values this step reads, in argument order (also those inside constant containers)."""
        for a in self.args:
            yield from values_in(a)

    def __repr__(self) -> str:
        outs = ", ".join(v.name for v in self.outputs)
        return f"{outs} = {self.fn.__name__}({', '.join(render_arg(a) for a in self.args)})"


def values_in(obj: Any) -> Iterator[Value]:
    """The values an argument refers to: itself, or the ArrayOf values inside a tuple/list constant."""
    if isinstance(obj, Value):
        yield obj
    elif isinstance(obj, ArrayOf):
        yield obj.value
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            yield from values_in(item)


def render_arg(obj: Any) -> str:
    """An argument as a listing shows it."""
    if isinstance(obj, Value):
        return obj.name
    if isinstance(obj, tuple):
        return "(" + ", ".join(render_arg(o) for o in obj) + ("," if len(obj) == 1 else "") + ")"
    if isinstance(obj, list):
        return "[" + ", ".join(render_arg(o) for o in obj) + "]"
    return short_repr(obj, 40)


def short_repr(obj: Any, limit: int) -> str:
    """repr(obj) when it is short and stable; else `<TypeName>` (never a memory address, so
    listings are the same on every run)."""
    text = repr(obj)
    stable = type(obj).__repr__ is not object.__repr__
    return text if stable and len(text) <= limit and "\n" not in text else f"<{type(obj).__name__}>"


class Trace:
    """The recorded program: `inputs`, the `captured` tensors, the `steps` in the order they ran,
    and the `result`: a Value, or the tuples and lists of Values the function returned (nested
    as it nested them). `outputs` are the result's Values in order."""

    def __init__(self, inputs: tuple, captured: tuple, steps: list, result: Any, name: str) -> None:
        self.inputs, self.captured, self.steps, self.result, self.name = inputs, captured, steps, result, name
        self.outputs = tuple(values_in(result))

    def eliminate_dead_code(self) -> Trace:
        """The trace without steps whose outputs nothing uses (an op whose result the function
        ignored, or a check whose value was thrown away), and without captured tensors no
        remaining step reads. Only built-in ops are removed: their forward has no side effects."""
        live = {v.id for v in self.outputs}
        kept = []
        for step in reversed(self.steps):
            if step.fn.array_forward and not any(v.id in live for v in step.outputs):
                continue
            kept.append(step)
            live.update(v.id for v in step.values())
        captured = tuple(v for v in self.captured if v.id in live)
        return Trace(self.inputs, captured, kept[::-1], self.result, self.name)

    def consumers(self) -> dict:
        """value id -> the steps that read it, in order (a value used twice by one step is listed once)."""
        users: dict = {}
        for step in self.steps:
            for vid in dict.fromkeys(v.id for v in step.values()):
                users.setdefault(vid, []).append(step)
        return users

    def listing(self) -> str:
        """The trace as text, like torch.jit's `.graph`: inputs, captured tensors, one line per step."""
        lines = [f"trace of {self.name}:"]
        lines += [f"  input {v.name}: {v.describe()}" for v in self.inputs]
        lines += [f"  captured {v.name}: {v.describe()}" for v in self.captured]
        width = max((len(repr(s)) for s in self.steps), default=0)
        for s in self.steps:
            shapes = ", ".join(f"{list(v.shape)} {v.dtype.name}" for v in s.outputs)
            where = f"  # {s.scope_name}" if s.scope_name else ""
            lines.append(f"  {repr(s).ljust(width)}   -> {shapes}{where}")
        lines.append(f"  return {render_arg(self.result)}")
        return "\n".join(lines)
